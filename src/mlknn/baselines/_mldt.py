"""ML-DT, the multi-label decision tree (Zhang and Zhou 2014, section on ML-DT)."""


from typing import Any

import numpy as np
from sklearn.tree import DecisionTreeClassifier

from ..utils._docstrings import fill_doc
from ..utils._param_validation import Integral, Interval, Real
from ..utils._typing import MatrixLike, NDArray
from ._base import POSITIVE_INT, BaselineClassifier, cite, class_one_proba


@cite
@fill_doc
class MLDT(BaselineClassifier):
    """Multi-label decision tree (Zhang and Zhou 2014, section on ML-DT, Clare and King 2001).

    Splits maximise the information gain of the multi-label entropy
    ``MLEnt(T) = sum_j -p_j log2 p_j - (1 - p_j) log2(1 - p_j)``; a leaf predicts
    the labels with ``p_j > 0.5`` and ``predict_proba`` returns the leaf's p_j.

    scikit-learn's multi-output ``DecisionTreeClassifier(criterion="entropy")``
    is exactly this tree: its impurity of a node is the mean over outputs of the
    binary entropies, i.e. ``MLEnt(T) / q``, so its impurity decrease is the IG of
    The review's section on ML-DT divided by the constant q and selects the same split (thresholds are
    midpoints between consecutive distinct values); its prediction per output is
    the majority class of the leaf, i.e. ``p_j > 0.5`` (a tie at 0.5 predicts 0).
    That tree is fitted here; ties between equally good splits are broken by the
    random feature order of ``random_state``.

    The review leaves the stopping criterion C open; the default grows the tree
    until the leaves are pure or no split has positive gain (no pruning).

    Parameters
    ----------
    max_depth : int, default=None
        Largest depth of the tree; None grows it until the leaves are pure or too small.
    min_samples_split : int, default=2
        Fewest instances a node needs to be split.
    min_samples_leaf : int, default=1
        Fewest instances in a leaf.
    min_impurity_decrease : float, default=0.0
        In scikit-learn's units: weighted IG / q (bits).
    {random_state}
        Seeds the tie-breaking among equally good splits (scikit-learn's feature
        permutation).

    Attributes
    ----------
    tree_ : DecisionTreeClassifier
    n_features_in_ : int
        Number of features seen in ``fit``.
    n_labels_ : int
        Number of labels q.
    classes_ : list of ndarray
        ``[0, 1]`` for every label (scikit-learn's multi-label form).

    See Also
    --------
    BinaryRelevance : one tree per label instead of one multi-label tree.

    References
    ----------
    A. Clare and R. D. King, "Knowledge discovery in multi-label phenotype data",
    PKDD 2001, LNCS 2168, pp. 42-53.

    %(review)s, section on ML-DT.

    Examples
    --------
    >>> from mlknn.baselines import MLDT
    >>> from mlknn.datasets import make_multilabel
    >>> data = make_multilabel(n_samples=100, random_state=0)
    >>> clf = MLDT(max_depth=3, random_state=0).fit(data.X, data.Y)
    >>> clf.predict_proba(data.X[:2]).shape
    (2, 5)
    """

    _parameter_constraints = {
        "max_depth": [*POSITIVE_INT, None],
        "min_samples_split": [Interval(Integral, 2, None, closed="left")],
        "min_samples_leaf": POSITIVE_INT,
        "min_impurity_decrease": [Interval(Real, 0, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        *,
        max_depth: int | None = None,
        min_samples_split: int = 2,
        min_samples_leaf: int = 1,
        min_impurity_decrease: float = 0.0,
        random_state: Any = None,
    ) -> None:
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_impurity_decrease = min_impurity_decrease
        self.random_state = random_state

    def _fit(self, X: MatrixLike, Y: NDArray[Any]) -> None:
        self.tree_ = DecisionTreeClassifier(
            criterion="entropy",
            max_depth=self.max_depth,
            min_samples_split=self.min_samples_split,
            min_samples_leaf=self.min_samples_leaf,
            min_impurity_decrease=self.min_impurity_decrease,
            random_state=self.random_state,
        ).fit(X, Y)

    def _predict_proba(self, X: MatrixLike) -> NDArray[np.float64]:
        P = self.tree_.predict_proba(X)
        if self.tree_.n_outputs_ == 1:
            P = [P]
        classes = self.tree_.classes_ if self.tree_.n_outputs_ > 1 else [self.tree_.classes_]
        # The tree returns one (n, n_classes_j) array per label: take each one's class-1 column.
        return np.column_stack([class_one_proba(Pj, cj) for Pj, cj in zip(P, classes)])

    def _predict(self, X: MatrixLike) -> NDArray[Any]:
        return (self._predict_proba(X) > 0.5).astype(np.uint8)
