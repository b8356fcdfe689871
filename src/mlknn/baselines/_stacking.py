"""Stacked binary relevance (Zhang and Zhou 2014: stacked aggregation).

Base estimator and constant labels as in :mod:`._binary_relevance`.
"""


from typing import Any, cast

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import KFold, check_cv
from sklearn.utils import check_random_state

from ..utils._docstrings import fill_doc
from ..utils._param_validation import StrOptions
from ..utils._typing import MatrixLike, NDArray
from ._base import (
    ESTIMATOR_CONSTRAINT,
    MEMBER_CONSTRAINTS,
    BaselineClassifier,
    cite,
    hstack,
    is_int,
    member_seeds,
)
from ._binary_relevance import BinaryRelevance


@cite
@fill_doc
class StackedBinaryRelevance(BaselineClassifier):
    """Stacked binary relevance ("stacked aggregation", the review's binary relevance section and summary; Godbole and
    Sarawagi's 2BR).

    Level 1 is binary relevance on x. Level 2 is binary relevance on
    ``[x, f(x)]`` (or ``f(x)`` alone with ``passthrough=False``), where the
    training rows of f are the level-1 outputs obtained by cross-validation
    (each row predicted by a level-1 model that did not see it); at prediction
    time f is the level-1 model refitted on all the training data.

    Parameters
    ----------
    estimator : classifier, default=None
        Level-1 learner. None: a decision tree seeded with ``random_state``.
    meta_estimator : classifier, default=None
        Level-2 learner. None: same as ``estimator``.
    cv : int or cross-validation splitter, default=5
        An int is ``KFold(cv, shuffle=True, random_state=random_state)``.
    stack_method : {'predict_proba', 'predict'}, default='predict_proba'
        Level-1 output appended: P(y_j = 1) or the 0/1 prediction.
    passthrough : bool, default=True
        Keep x in the level-2 input.
    {random_state}
        Seeds the cross-validation folds of level 1 and the default learners.

    Attributes
    ----------
    base_ : BinaryRelevance
        Level 1, fitted on all the training data.
    meta_ : BinaryRelevance
        Level 2.
    n_features_in_ : int
        Number of features seen in ``fit``.
    n_labels_ : int
        Number of labels q.
    classes_ : list of ndarray
        ``[0, 1]`` for every label (scikit-learn's multi-label form).

    See Also
    --------
    BinaryRelevance : level 1 alone.
    ClassifierChain : label dependencies through a chain instead of stacking.

    References
    ----------
    S. Godbole and S. Sarawagi, "Discriminative methods for multi-labeled
    classification", PAKDD 2004, LNCS 3056, pp. 22-30.

    %(review)s, the review's sections on binary relevance and its summary.

    Examples
    --------
    >>> from mlknn.baselines import StackedBinaryRelevance
    >>> from mlknn.datasets import make_multilabel
    >>> data = make_multilabel(n_samples=100, random_state=0)
    >>> clf = StackedBinaryRelevance(cv=3, random_state=0).fit(data.X, data.Y)
    >>> clf.predict(data.X[:2]).shape
    (2, 5)
    """

    _parameter_constraints = {
        **MEMBER_CONSTRAINTS,
        "meta_estimator": ESTIMATOR_CONSTRAINT,
        "cv": ["cv_object"],
        "stack_method": [StrOptions({"predict_proba", "predict"})],
        "passthrough": ["boolean"],
    }

    def __init__(
        self,
        estimator: Any = None,
        *,
        meta_estimator: Any = None,
        cv: Any = 5,
        stack_method: str = "predict_proba",
        passthrough: bool = True,
        random_state: Any = None,
    ) -> None:
        self.estimator = estimator
        self.meta_estimator = meta_estimator
        self.cv = cv
        self.stack_method = stack_method
        self.passthrough = passthrough
        self.random_state = random_state

    def _level1_outputs(self, model: Any, X: MatrixLike) -> NDArray[np.float64]:
        out = model._predict_proba(X) if self.stack_method == "predict_proba" else model._predict(X)
        return cast(NDArray[np.float64], out)

    def _splitter(self) -> Any:
        if is_int(self.cv):
            return KFold(int(self.cv), shuffle=True, random_state=self.random_state)
        return check_cv(self.cv)

    def _fit(self, X: MatrixLike, Y: NDArray[Any]) -> None:
        rs = check_random_state(self.random_state)
        seed1, seed2 = (int(s) for s in member_seeds(rs, 2))
        level1 = BinaryRelevance(self.estimator, random_state=seed1)
        meta_est = self.meta_estimator if self.meta_estimator is not None else self.estimator
        Z = np.zeros(Y.shape, dtype=np.float64)
        for train, test in self._splitter().split(X, Y):
            model = clone(level1).fit(X[train], Y[train])
            Z[test] = self._level1_outputs(model, X[test])
        self.base_ = clone(level1).fit(X, Y)
        self.meta_ = BinaryRelevance(meta_est, random_state=seed2).fit(self._meta_input(X, Z), Y)

    def _meta_input(self, X: MatrixLike, Z: MatrixLike) -> MatrixLike:
        return hstack(X, Z) if self.passthrough else Z

    def _meta_X(self, X: MatrixLike) -> MatrixLike:
        return self._meta_input(X, self._level1_outputs(self.base_, X).astype(np.float64))

    def _predict(self, X: MatrixLike) -> NDArray[Any]:
        return self.meta_._predict(self._meta_X(X))

    def _predict_proba(self, X: MatrixLike) -> NDArray[np.float64]:
        return self.meta_._predict_proba(self._meta_X(X))
