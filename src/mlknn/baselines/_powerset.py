"""Label powerset and RAkEL, random and disjoint (Zhang and Zhou 2014, section on RAkEL; Teng et al.'s (2025) RAkELd).

Base estimator and constant labels as in :mod:`._binary_relevance`.
"""

from itertools import combinations
from math import comb
from typing import Any

import numpy as np
from joblib import Parallel, delayed
from sklearn.utils import check_random_state

from ..utils._docstrings import fill_doc
from ..utils._param_validation import Integral
from ..utils._typing import MatrixLike, NDArray
from ._base import (
    MEMBER_CONSTRAINTS,
    POSITIVE_INT,
    VOTING_CONSTRAINTS,
    BaselineClassifier,
    cite,
    member_estimator,
    member_seeds,
    resolve_estimator,
)


def _fit_powerset(estimator: Any, X: MatrixLike, Y: NDArray[Any]) -> tuple[NDArray[Any], Any]:
    """Label-powerset model of Y: (distinct label sets (K, k), fitted classifier or None)."""
    sets, codes = np.unique(Y, axis=0, return_inverse=True)
    codes = np.asarray(codes).reshape(-1)
    if sets.shape[0] == 1:
        return sets, None
    return sets, estimator.fit(X, codes)


def _powerset_outputs(
    sets: NDArray[Any],
    model: Any,
    X: MatrixLike,
) -> tuple[NDArray[Any], NDArray[np.float64]]:
    """(predicted label sets (n, k) 0/1, marginal P(label = 1) (n, k)) of one LP model."""
    n = X.shape[0]
    if model is None:
        pred = np.repeat(sets, n, axis=0)
        return pred, pred.astype(np.float64)
    classes = np.asarray(model.classes_)
    if hasattr(model, "predict_proba"):
        P = np.zeros((n, sets.shape[0]))
        P[:, classes] = model.predict_proba(X)
        pred = sets[np.argmax(P, axis=1)]
    else:
        pred = sets[np.asarray(model.predict(X))]
        P = None
    # A marginal is a sum of class probabilities: rounding can take it 1 ulp past 1.
    marg = pred.astype(np.float64) if P is None else np.clip(P @ sets, 0.0, 1.0)
    return pred, marg


@cite
@fill_doc
class LabelPowerset(BaselineClassifier):
    """Label powerset: one multi-class problem whose classes are the label sets seen
    in training (the building block of RAkEL, the review's section on RAkEL).

    ``predict`` returns the label set of the predicted class (so it never predicts
    a label set that was not seen in training); ``predict_proba`` returns the
    marginals ``P(y_j = 1 | x) = sum over classes c with y_j in c of P(c | x)``, so
    ``predict`` is not in general ``predict_proba > 0.5``.

    Parameters
    ----------
    estimator : classifier, default=None
        Multi-class learner M. None: ``DecisionTreeClassifier(random_state=random_state)``.
    {random_state}
        Seeds the default decision tree.

    Attributes
    ----------
    label_sets_ : ndarray of shape (n_classes, n_labels)
        Class c is the label set ``label_sets_[c]``.
    estimator_ : classifier or None
        None when training has a single label set.
    n_features_in_ : int
        Number of features seen in ``fit``.
    n_labels_ : int
        Number of labels q.
    classes_ : list of ndarray
        ``[0, 1]`` for every label (scikit-learn's multi-label form).

    See Also
    --------
    RAkEL, RAkELd : label powersets on random subsets of the labels.
    CML : a model of whole label sets with pairwise label terms.

    References
    ----------
    G. Tsoumakas and I. Katakis, "Multi-label classification: an overview",
    International Journal of Data Warehousing and Mining 3(3):1-13, 2007.

    %(review)s, section on RAkEL.

    Examples
    --------
    >>> from mlknn.baselines import LabelPowerset
    >>> from mlknn.datasets import make_multilabel
    >>> data = make_multilabel(n_samples=100, random_state=0)
    >>> clf = LabelPowerset(random_state=0).fit(data.X, data.Y)
    >>> clf.label_sets_.shape[1], clf.predict(data.X[:2]).shape
    (5, (2, 5))
    """

    _parameter_constraints = {
        **MEMBER_CONSTRAINTS,
    }

    def __init__(self, estimator: Any = None, *, random_state: Any = None) -> None:
        self.estimator = estimator
        self.random_state = random_state

    def _fit(self, X: MatrixLike, Y: NDArray[Any]) -> None:
        base = resolve_estimator(self.estimator, self.random_state)
        self.label_sets_, self.estimator_ = _fit_powerset(base, X, Y)

    def _predict(self, X: MatrixLike) -> NDArray[Any]:
        return _powerset_outputs(self.label_sets_, self.estimator_, X)[0]

    def _predict_proba(self, X: MatrixLike) -> NDArray[np.float64]:
        return _powerset_outputs(self.label_sets_, self.estimator_, X)[1]


def _draw_labelsets(rng: np.random.RandomState, q: int, k: int, n: int) -> NDArray[np.intp]:
    """``n`` distinct k-subsets of range(q), each sorted, drawn uniformly."""
    total = comb(q, k)
    if total <= 200_000:
        allsets = np.array(list(combinations(range(q), k)), dtype=np.intp).reshape(total, k)
        return allsets[np.sort(rng.choice(total, size=n, replace=False))]
    seen: set[tuple[int, ...]] = set()
    out: list[tuple[int, ...]] = []
    while len(out) < n:  # loop over ensemble members, not instances
        s = tuple(sorted(rng.choice(q, size=k, replace=False).tolist()))
        if s not in seen:
            seen.add(s)
            out.append(s)
    return np.array(out, dtype=np.intp)


@cite
@fill_doc
class RAkEL(BaselineClassifier):
    """Random k-labelsets, overlapping version (Zhang and Zhou 2014, section on RAkEL).

    ``n_estimators`` distinct random k-labelsets, a label powerset model on each;
    for label y_j, ``tau_j`` counts the models whose labelset contains it and
    ``mu_j`` those among them whose predicted label set contains it. The score is
    ``mu_j / tau_j`` (``voting='hard'``) and label j is predicted when the score
    is > ``threshold`` (0.5).

    Parameters
    ----------
    estimator : classifier, default=None
        Multi-class learner M. None: a decision tree (seeded per model).
    labelset_size : int, default=3
        k (Zhang and Zhou 2014, section on RAkEL and Teng et al. 2025). Capped at q.
    n_estimators : int, default=None
        n. None: ``min(2 q, C(q, k))`` (the review's RAkEL n = 2q, at most the number of
        distinct k-labelsets). An explicit value must be <= C(q, k).
    voting : {'hard', 'soft'}, default='hard'
        'soft' replaces the 0/1 votes by each model's marginal P(y_j = 1).
    threshold : float, default=0.5
        A label is predicted when its score is strictly greater.
    n_jobs : int, default=None
        Models fitted in parallel (joblib); None: one.
    {random_state}
        Seeds the k-labelsets drawn and the default decision trees.

    Attributes
    ----------
    labelsets_ : ndarray of shape (n_models, k)
    estimators_ : list of (label_sets, classifier) pairs
    label_frequency_ : ndarray of shape (n_labels,)
        Training frequency of each label: the score of a label that no labelset
        covers (possible when n * k < q, or by chance).
    n_features_in_ : int
        Number of features seen in ``fit``.
    n_labels_ : int
        Number of labels q.
    classes_ : list of ndarray
        ``[0, 1]`` for every label (scikit-learn's multi-label form).

    See Also
    --------
    RAkELd : the disjoint version.
    LabelPowerset : one model over all the labels.

    Notes
    -----
    A label covered by no labelset (tau_j = 0; the review's section on RAkEL leaves mu/tau undefined)
    gets its training frequency as score.

    References
    ----------
    G. Tsoumakas, I. Katakis and I. Vlahavas, "Random k-labelsets for multilabel
    classification", IEEE TKDE 23(7):1079-1089, 2011.

    %(review)s, section on RAkEL.

    Examples
    --------
    >>> from mlknn.baselines import RAkEL
    >>> from mlknn.datasets import make_multilabel
    >>> data = make_multilabel(n_samples=100, random_state=0)
    >>> clf = RAkEL(labelset_size=3, random_state=0).fit(data.X, data.Y)
    >>> clf.labelsets_.shape
    (10, 3)
    """

    _parameter_constraints = {
        **MEMBER_CONSTRAINTS,
        "labelset_size": POSITIVE_INT,
        "n_estimators": [*POSITIVE_INT, None],
        **VOTING_CONSTRAINTS,
        "n_jobs": [Integral, None],
    }

    def __init__(
        self,
        estimator: Any = None,
        *,
        labelset_size: int = 3,
        n_estimators: int | None = None,
        voting: str = "hard",
        threshold: float = 0.5,
        n_jobs: int | None = None,
        random_state: Any = None,
    ) -> None:
        self.estimator = estimator
        self.labelset_size = labelset_size
        self.n_estimators = n_estimators
        self.voting = voting
        self.threshold = threshold
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _fit(self, X: MatrixLike, Y: NDArray[Any]) -> None:
        q = Y.shape[1]
        k = min(self.labelset_size, q)
        total = comb(q, k)
        n = min(2 * q, total) if self.n_estimators is None else self.n_estimators
        if n > total:
            raise ValueError(
                f"The 'n_estimators' parameter of RAkEL must be <= C(n_labels, labelset_size) "
                f"= C({q}, {k}) = {total} (the number of distinct labelsets); got {n}."
            )
        rng = check_random_state(self.random_state)
        self.labelsets_ = _draw_labelsets(rng, q, k, n)
        seeds = member_seeds(rng, n)
        self.label_frequency_ = Y.mean(axis=0)
        self.estimators_ = Parallel(n_jobs=self.n_jobs)(
            delayed(_fit_powerset)(member_estimator(self.estimator, s), X, Y[:, ls])
            for s, ls in zip(seeds, self.labelsets_)
        )

    def _predict_proba(self, X: MatrixLike) -> NDArray[np.float64]:
        n, q = X.shape[0], self.n_labels_
        mu = np.zeros((n, q))
        tau = np.zeros(q)
        for ls, (sets, model) in zip(self.labelsets_, self.estimators_):
            pred, marg = _powerset_outputs(sets, model, X)
            mu[:, ls] += pred if self.voting == "hard" else marg
            tau[ls] += 1
        covered = tau > 0
        out = np.tile(self.label_frequency_, (n, 1)).astype(np.float64)
        out[:, covered] = mu[:, covered] / tau[covered]
        return out

    def _predict(self, X: MatrixLike) -> NDArray[Any]:
        return (self._predict_proba(X) > self.threshold).astype(np.uint8)


@fill_doc
class RAkELd(BaselineClassifier):
    """Random k-labelsets, disjoint version: a random partition of the labels into
    ``ceil(q / k)`` labelsets (the last one smaller when k does not divide q), one
    label powerset model on each.

    ``predict`` is each model's predicted label set; ``predict_proba`` its marginals.

    Parameters
    ----------
    estimator : classifier, default=None
        None: a decision tree (seeded per model).
    labelset_size : int, default=3
        k, the size of each disjoint labelset (the last one may be smaller).
    {random_state}
        Seeds the partition of the labels and the default decision trees.

    Attributes
    ----------
    labelsets_ : list of ndarray
        The partition.
    estimators_ : list of (label_sets, classifier) pairs
    n_features_in_ : int
        Number of features seen in ``fit``.
    n_labels_ : int
        Number of labels q.
    classes_ : list of ndarray
        ``[0, 1]`` for every label (scikit-learn's multi-label form).

    See Also
    --------
    RAkEL : the overlapping version.
    LabelPowerset : one model over all the labels.

    References
    ----------
    G. Tsoumakas, I. Katakis and I. Vlahavas, "Random k-labelsets for multilabel
    classification", IEEE TKDE 23(7):1079-1089, 2011.

    Examples
    --------
    >>> from mlknn.baselines import RAkELd
    >>> from mlknn.datasets import make_multilabel
    >>> data = make_multilabel(n_samples=100, random_state=0)
    >>> clf = RAkELd(labelset_size=2, random_state=0).fit(data.X, data.Y)
    >>> [len(ls) for ls in clf.labelsets_]
    [2, 2, 1]
    """

    _parameter_constraints = {
        **MEMBER_CONSTRAINTS,
        "labelset_size": POSITIVE_INT,
    }

    def __init__(self, estimator: Any = None, *, labelset_size: int = 3, random_state: Any = None) -> None:
        self.estimator = estimator
        self.labelset_size = labelset_size
        self.random_state = random_state

    def _fit(self, X: MatrixLike, Y: NDArray[Any]) -> None:
        q = Y.shape[1]
        k = min(self.labelset_size, q)
        rng = check_random_state(self.random_state)
        perm = rng.permutation(q)
        self.labelsets_ = [np.sort(perm[i : i + k]) for i in range(0, q, k)]
        seeds = member_seeds(rng, len(self.labelsets_))
        self.estimators_ = [
            _fit_powerset(member_estimator(self.estimator, s), X, Y[:, ls]) for s, ls in zip(seeds, self.labelsets_)
        ]

    def _outputs(self, X: MatrixLike) -> tuple[NDArray[Any], NDArray[np.float64]]:
        pred = np.zeros((X.shape[0], self.n_labels_), dtype=np.uint8)
        marg = np.zeros((X.shape[0], self.n_labels_))
        for ls, (sets, model) in zip(self.labelsets_, self.estimators_):
            p, mg = _powerset_outputs(sets, model, X)
            pred[:, ls] = p
            marg[:, ls] = mg
        return pred, marg

    def _predict(self, X: MatrixLike) -> NDArray[Any]:
        return self._outputs(X)[0]

    def _predict_proba(self, X: MatrixLike) -> NDArray[np.float64]:
        return self._outputs(X)[1]
