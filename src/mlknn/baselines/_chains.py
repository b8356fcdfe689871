"""Classifier chains and their ensemble (Zhang and Zhou 2014, section on classifier chains).

Base estimator and constant labels as in :mod:`._binary_relevance`.
"""


from typing import Any

import numpy as np
from joblib import Parallel, delayed
from sklearn.multioutput import ClassifierChain as _SkClassifierChain
from sklearn.utils import check_random_state

from ..utils._docstrings import fill_doc
from ..utils._param_validation import Integral, Interval, Real, StrOptions
from ..utils._typing import MatrixLike, NDArray
from ._base import (
    MEMBER_CONSTRAINTS,
    POSITIVE_INT,
    VOTING_CONSTRAINTS,
    BaselineClassifier,
    LabelClassifier,
    cite,
    is_int,
    member_estimator,
    member_seeds,
    resolve_estimator,
)


def _check_order(order: Any, n_labels: int) -> Any:
    if order is None or isinstance(order, str):
        return order
    arr = np.asarray(order)
    if arr.ndim != 1 or sorted(arr.tolist()) != list(range(n_labels)):
        raise ValueError(
            "The 'order' parameter of ClassifierChain must be None, 'random' or a "
            f"permutation of range(n_labels) = range({n_labels}); got {order!r}."
        )
    return arr


@cite
@fill_doc
class ClassifierChain(BaselineClassifier):
    """Classifier chain (Zhang and Zhou 2014): label tau(j) is learnt from ``[x, y_tau(1..j-1)]``.

    Training appends the true preceding labels; prediction appends the chain's
    own 0/1 predictions. Fitted by scikit-learn's
    :class:`~sklearn.multioutput.ClassifierChain` (``chain_method="predict"``)
    over constant-safe label classifiers, with ``predict_proba`` returned as one
    (n, q) array in the original label order.

    Parameters
    ----------
    estimator : classifier, default=None
        None: ``DecisionTreeClassifier(random_state=random_state)``.
    order : None, 'random' or array-like of shape (n_labels,), default=None
        tau. None: ``0, 1, ..., q - 1``; 'random': a permutation drawn from
        ``random_state``.
    {random_state}
        Seeds the chain order (order='random'), the samples of the ensemble and the
        default decision trees.

    Attributes
    ----------
    order_ : ndarray of shape (n_labels,)
    estimators_ : list of LabelClassifier
        In chain order.
    n_labels_ : int
    n_features_in_ : int
        Number of features seen in ``fit``.
    classes_ : list of ndarray
        ``[0, 1]`` for every label (scikit-learn's multi-label form).
    chain_ : sklearn.multioutput.ClassifierChain
        The fitted chain (``estimators_`` are its estimators).

    See Also
    --------
    EnsembleClassifierChains : an ensemble of chains with random orders.
    BinaryRelevance : the same without the chain.

    References
    ----------
    %(read2011)s

    %(review)s, section on classifier chains.

    Examples
    --------
    >>> from mlknn.baselines import ClassifierChain
    >>> from mlknn.datasets import make_multilabel
    >>> data = make_multilabel(n_samples=100, random_state=0)
    >>> clf = ClassifierChain(order="random", random_state=0).fit(data.X, data.Y)
    >>> sorted(clf.order_.tolist())
    [0, 1, 2, 3, 4]
    """

    _parameter_constraints = {
        **MEMBER_CONSTRAINTS,
        "order": ["array-like", StrOptions({"random"}), None],
    }

    def __init__(self, estimator: Any = None, *, order: Any = None, random_state: Any = None) -> None:
        self.estimator = estimator
        self.order = order
        self.random_state = random_state

    def _fit(self, X: MatrixLike, Y: NDArray[Any]) -> None:
        order = _check_order(self.order, Y.shape[1])
        base = resolve_estimator(self.estimator, self.random_state)
        rs = check_random_state(self.random_state)
        self.chain_ = _SkClassifierChain(LabelClassifier(base), order=order, random_state=rs).fit(X, Y)
        self.order_ = np.asarray(self.chain_.order_)
        self.estimators_ = self.chain_.estimators_

    def _predict_proba(self, X: MatrixLike) -> NDArray[np.float64]:
        return np.asarray(self.chain_.predict_proba(X))

    def _predict(self, X: MatrixLike) -> NDArray[Any]:
        return np.asarray(self.chain_.predict(X))


@cite
@fill_doc
class EnsembleClassifierChains(BaselineClassifier):
    """Ensemble of classifier chains (Zhang and Zhou 2014, section on classifier chains).

    ``n_estimators`` chains, each with a random label order, trained on a bootstrap
    replica (``bootstrap=True``: ``|D^(r)| = |D|`` with replacement) or a
    subsample without replacement (``bootstrap=False``: 67% of D by default);
    predictions are aggregated by thresholded voting.

    Parameters
    ----------
    estimator : classifier, default=None
        None: a decision tree (seeded per chain).
    n_estimators : int, default=10
        Number of chains (MULAN's default, used by Teng et al. (2025)).
    bootstrap : bool, default=True
        Sample with replacement (Teng et al. (2025): "sampling with replacement ... 100% of
        the instances").
    max_samples : int, float or None, default=None
        Sample size: a float in (0, 1] is a fraction of n, an int a count. None:
        1.0 with bootstrap, 0.67 without (Zhang and Zhou 2014, section on classifier chains).
    voting : {'hard', 'soft'}, default='hard'
        'hard': the score of a label is the fraction of chains that predict it;
        'soft': the mean of the chains' P(label = 1).
    threshold : float, default=0.5
        A label is predicted when its score is strictly greater.
    n_jobs : int, default=None
        Chains fitted in parallel (joblib); None: one.
    {random_state}
        Seeds the chain order (order='random'), the samples of the ensemble and the
        default decision trees.

    Attributes
    ----------
    estimators_ : list of ClassifierChain
    samples_ : list of ndarray
        Training row indices of each chain.
    n_features_in_ : int
        Number of features seen in ``fit``.
    n_labels_ : int
        Number of labels q.
    classes_ : list of ndarray
        ``[0, 1]`` for every label (scikit-learn's multi-label form).

    See Also
    --------
    ClassifierChain : one chain.
    RAkEL : an ensemble of label-powerset models.

    References
    ----------
    %(read2011)s

    %(review)s, section on classifier chains.

    Examples
    --------
    >>> from mlknn.baselines import EnsembleClassifierChains
    >>> from mlknn.datasets import make_multilabel
    >>> data = make_multilabel(n_samples=100, random_state=0)
    >>> clf = EnsembleClassifierChains(n_estimators=3, random_state=0).fit(data.X, data.Y)
    >>> len(clf.estimators_), clf.predict(data.X[:2]).shape
    (3, (2, 5))
    """

    _parameter_constraints = {
        **MEMBER_CONSTRAINTS,
        "n_estimators": POSITIVE_INT,
        "bootstrap": ["boolean"],
        "max_samples": [Interval(Real, 0, 1, closed="right"), Interval(Integral, 1, None, closed="left"), None],
        **VOTING_CONSTRAINTS,
        "n_jobs": [Integral, None],
    }

    def __init__(
        self,
        estimator: Any = None,
        *,
        n_estimators: int = 10,
        bootstrap: bool = True,
        max_samples: float | int | None = None,
        voting: str = "hard",
        threshold: float = 0.5,
        n_jobs: int | None = None,
        random_state: Any = None,
    ) -> None:
        self.estimator = estimator
        self.n_estimators = n_estimators
        self.bootstrap = bootstrap
        self.max_samples = max_samples
        self.voting = voting
        self.threshold = threshold
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _sample_size(self, m: int) -> int:
        ms = self.max_samples
        if ms is None:
            ms = 1.0 if self.bootstrap else 0.67
        if is_int(ms):
            if ms > m and not self.bootstrap:
                raise ValueError(
                    f"The 'max_samples' parameter of EnsembleClassifierChains must be <= "
                    f"n_samples = {m} when bootstrap=False; got {ms}."
                )
            return int(ms)
        return max(1, int(round(float(ms) * m)))

    def _fit(self, X: MatrixLike, Y: NDArray[Any]) -> None:
        m = X.shape[0]
        rng = check_random_state(self.random_state)
        size = self._sample_size(m)
        seeds = member_seeds(rng, self.n_estimators)
        self.samples_ = [np.sort(rng.choice(m, size=size, replace=self.bootstrap)) for _ in range(self.n_estimators)]

        def fit_one(seed: int, rows: Any) -> Any:
            chain = ClassifierChain(member_estimator(self.estimator, seed), order="random", random_state=int(seed))
            return chain.fit(X[rows], Y[rows])

        self.estimators_ = Parallel(n_jobs=self.n_jobs)(
            delayed(fit_one)(seed, rows) for seed, rows in zip(seeds, self.samples_)
        )

    def _predict_proba(self, X: MatrixLike) -> NDArray[np.float64]:
        total = np.zeros((X.shape[0], self.n_labels_))
        for chain in self.estimators_:
            if self.voting == "hard":
                total += chain._predict(X)
            else:
                total += chain._predict_proba(X)
        return total / len(self.estimators_)

    def _predict(self, X: MatrixLike) -> NDArray[Any]:
        return (self._predict_proba(X) > self.threshold).astype(np.uint8)
