"""Calibrated label ranking (Zhang and Zhou 2014): pairwise comparisons plus a virtual label.

Base estimator and constant labels (of a pairwise subset too) as in
:mod:`._binary_relevance`.
"""

from itertools import combinations
from typing import Any, cast

import numpy as np
from joblib import Parallel, delayed

from ..utils._docstrings import fill_doc
from ..utils._param_validation import Integral, StrOptions
from ..utils._typing import MatrixLike, NDArray
from ._base import (
    MEMBER_CONSTRAINTS,
    BaselineClassifier,
    cite,
    fit_label,
    label_scores,
    resolve_estimator,
)


@cite
@fill_doc
class CalibratedLabelRanking(BaselineClassifier):
    """Calibrated label ranking (Zhang and Zhou 2014): q(q-1)/2 pairwise classifiers plus q
    classifiers against the virtual label y_V.

    ``g_jk`` is trained on the instances where exactly one of y_j, y_k is relevant,
    with target 1 when it is y_j; ``g_jV`` is the binary-relevance classifier of
    y_j. Votes (``voting='hard'``, the review's section on calibrated label ranking):

    * ``zeta(x, y_j) = sum_{k<j} [g_kj(x) <= 0] + sum_{k>j} [g_jk(x) > 0] + [g_jV(x) > 0]``
    * ``zeta(x, y_V) = sum_j [g_jV(x) <= 0]``

    and ``Y = {y_j : zeta(x, y_j) > zeta(x, y_V)}``. With ``voting='soft'`` each
    0/1 vote is replaced by the classifier's P(target = 1) (and its complement).

    ``predict_proba`` is ``(zeta(x, y_j) - zeta(x, y_V) + q) / (2 q)`` in [0, 1]:
    it ranks the labels as zeta does and is > 0.5 exactly for the predicted labels.

    A pair (j, k) with no training instance where the two labels differ has no
    classifier; its vote is split 1/2 - 1/2.

    Parameters
    ----------
    estimator : classifier, default=None
        None: ``DecisionTreeClassifier(random_state=random_state)``.
    voting : {'hard', 'soft'}, default='hard'
        'hard': each pairwise and virtual-label model gives a 0/1 vote; 'soft': its
        probability.
    n_jobs : int, default=None
        Models fitted in parallel (joblib); None: one.
    {random_state}
        Seeds the default decision trees (and any randomness of the base learner).

    Attributes
    ----------
    pairs_ : ndarray of shape (q (q - 1) / 2, 2)
        (j, k) with j < k.
    pairwise_estimators_ : list of LabelClassifier or None
    virtual_estimators_ : list of LabelClassifier
    n_features_in_ : int
        Number of features seen in ``fit``.
    n_labels_ : int
        Number of labels q.
    classes_ : list of ndarray
        ``[0, 1]`` for every label (scikit-learn's multi-label form).

    See Also
    --------
    BinaryRelevance : the virtual-label classifiers alone.
    RankSVM : a ranking learnt by one large-margin model.

    References
    ----------
    J. Fuernkranz, E. Huellermeier, E. Loza Mencia and K. Brinker, "Multilabel
    classification via calibrated label ranking", Machine Learning 73(2):133-153,
    2008.

    %(review)s, section on calibrated label ranking.

    Examples
    --------
    >>> from mlknn.baselines import CalibratedLabelRanking
    >>> from mlknn.datasets import make_multilabel
    >>> data = make_multilabel(n_samples=100, random_state=0)
    >>> clf = CalibratedLabelRanking(random_state=0).fit(data.X, data.Y)
    >>> len(clf.pairwise_estimators_), len(clf.virtual_estimators_)
    (10, 5)
    """

    _parameter_constraints = {
        **MEMBER_CONSTRAINTS,
        "voting": [StrOptions({"hard", "soft"})],
        "n_jobs": [Integral, None],
    }

    def __init__(
        self,
        estimator: Any = None,
        *,
        voting: str = "hard",
        n_jobs: int | None = None,
        random_state: Any = None,
    ) -> None:
        self.estimator = estimator
        self.voting = voting
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _fit(self, X: MatrixLike, Y: NDArray[Any]) -> None:
        q = Y.shape[1]
        base = resolve_estimator(self.estimator, self.random_state)
        self.pairs_ = np.array(list(combinations(range(q), 2)), dtype=np.intp).reshape(-1, 2)

        def fit_pair(j: Any, k: Any) -> Any:
            rows = np.flatnonzero(Y[:, j] != Y[:, k])
            if rows.size == 0:
                return None
            return fit_label(base, X[rows], Y[rows, j])

        self.pairwise_estimators_ = Parallel(n_jobs=self.n_jobs)(delayed(fit_pair)(j, k) for j, k in self.pairs_)
        self.virtual_estimators_ = Parallel(n_jobs=self.n_jobs)(
            delayed(fit_label)(base, X, Y[:, j]) for j in range(q)
        )

    def _vote(self, model: Any, X: MatrixLike) -> NDArray[np.float64]:
        if model is None:
            return np.full(X.shape[0], 0.5)
        if self.voting == "hard":
            return cast(NDArray[np.float64], model.predict(X).astype(np.float64))
        return label_scores(model, X)

    def _zeta(self, X: MatrixLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        n, q = X.shape[0], self.n_labels_
        zeta = np.zeros((n, q))
        zeta_v = np.zeros(n)
        for (j, k), model in zip(self.pairs_, self.pairwise_estimators_):
            v = self._vote(model, X)
            zeta[:, j] += v
            zeta[:, k] += 1.0 - v
        for j, model in enumerate(self.virtual_estimators_):
            v = self._vote(model, X)
            zeta[:, j] += v
            zeta_v += 1.0 - v
        return zeta, zeta_v

    def _predict_proba(self, X: MatrixLike) -> NDArray[np.float64]:
        zeta, zeta_v = self._zeta(X)
        q = self.n_labels_
        return (zeta - zeta_v[:, None] + q) / (2.0 * q)

    def _predict(self, X: MatrixLike) -> NDArray[Any]:
        zeta, zeta_v = self._zeta(X)
        return (zeta > zeta_v[:, None]).astype(np.uint8)
