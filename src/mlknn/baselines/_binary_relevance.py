"""Binary relevance (Zhang and Zhou 2014, section on binary relevance and AdaBoost.MH): one binary problem per label.

The base ``estimator`` defaults to scikit-learn's
``DecisionTreeClassifier(random_state=random_state)``, the stand-in for the C4.5 /
J48 trees that Teng et al. (2025) used with MULAN (an unpruned CART tree, not C4.5: the
split criterion is Gini and there is no pessimistic pruning). A label that is
constant in a training set is predicted as that constant: see
:class:`mlknn.baselines._base.LabelClassifier`.
"""


from typing import Any

import numpy as np
from sklearn.multioutput import MultiOutputClassifier

from ..utils._docstrings import fill_doc
from ..utils._param_validation import Integral
from ..utils._typing import MatrixLike, NDArray
from ._base import (
    MEMBER_CONSTRAINTS,
    BaselineClassifier,
    LabelClassifier,
    cite,
    proba_list_to_matrix,
    resolve_estimator,
)


@cite
@fill_doc
class BinaryRelevance(BaselineClassifier):
    """Binary relevance (Zhang and Zhou 2014): one independent binary classifier per label.

    Fits scikit-learn's :class:`~sklearn.multioutput.MultiOutputClassifier` over
    the labels, with each label's classifier wrapped so that a constant label
    is predicted as that constant.

    Parameters
    ----------
    estimator : classifier, default=None
        Base binary learner B. None: ``DecisionTreeClassifier(random_state=random_state)``.
    t_criterion : bool, default=False
        the review's binary relevance and AdaBoost.MH T-criterion: when no label is predicted for an instance,
        predict the one with the highest score. Off by default (MULAN's BR, used by
        Teng et al. (2025) do not apply it).
    n_jobs : int, default=None
        Labels fitted in parallel (joblib).
    {random_state}
        Seeds the default tree.

    Attributes
    ----------
    estimators_ : list of LabelClassifier
        One per label.
    n_labels_ : int
    n_features_in_ : int
    classes_ : list of ndarray
        ``[0, 1]`` for every label (scikit-learn's multi-label form).
    multi_output_ : sklearn.multioutput.MultiOutputClassifier
        The fitted per-label classifiers (``estimators_`` are its estimators).

    See Also
    --------
    ClassifierChain : binary relevance with the preceding labels as inputs.
    StackedBinaryRelevance : binary relevance stacked on its own outputs.
    mlknn.BRkNN : binary relevance with a kNN vote.

    Notes
    -----
    ``predict_proba`` is the base learner's P(label = 1) (the logistic of
    ``decision_function`` for learners without ``predict_proba``); ``predict`` is
    the base learner's own prediction, as in the review's section on binary relevance and AdaBoost.MH (``g_j(x) > 0``).

    References
    ----------
    M. R. Boutell, J. Luo, X. Shen and C. M. Brown, "Learning multi-label scene
    classification", Pattern Recognition 37(9):1757-1771, 2004.

    %(review)s, section on binary relevance and AdaBoost.MH.

    Examples
    --------
    >>> from mlknn.baselines import BinaryRelevance
    >>> from mlknn.datasets import make_multilabel
    >>> data = make_multilabel(n_samples=100, random_state=0)
    >>> clf = BinaryRelevance(random_state=0).fit(data.X, data.Y)
    >>> clf.predict(data.X[:2]).shape
    (2, 5)
    """

    _parameter_constraints = {
        **MEMBER_CONSTRAINTS,
        "t_criterion": ["boolean"],
        "n_jobs": [Integral, None],
    }

    def __init__(
        self,
        estimator: Any = None,
        *,
        t_criterion: bool = False,
        n_jobs: int | None = None,
        random_state: Any = None,
    ) -> None:
        self.estimator = estimator
        self.t_criterion = t_criterion
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _fit(self, X: MatrixLike, Y: NDArray[Any]) -> None:
        base = resolve_estimator(self.estimator, self.random_state)
        self.multi_output_ = MultiOutputClassifier(LabelClassifier(base), n_jobs=self.n_jobs).fit(X, Y)
        self.estimators_ = self.multi_output_.estimators_

    def _predict_proba(self, X: MatrixLike) -> NDArray[np.float64]:
        return proba_list_to_matrix(self.multi_output_.predict_proba(X))

    def _predict(self, X: MatrixLike) -> NDArray[Any]:
        pred = np.asarray(self.multi_output_.predict(X)).astype(np.uint8)
        if self.t_criterion:
            empty = np.flatnonzero(pred.sum(axis=1) == 0)
            if empty.size:
                P = self._predict_proba(X[empty])
                pred[empty, np.argmax(P, axis=1)] = 1
        return pred
