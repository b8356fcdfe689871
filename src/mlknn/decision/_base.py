"""What every decision rule around a posterior estimator shares: the fit preamble, the pass-throughs."""

from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from ..base import MultiLabelMixin
from ..model_selection import loo_predict_proba
from ..utils._docstrings import fill_doc
from ..utils._typing import MatrixLike, NDArray
from ..utils._validation import check_dense_label_budget, check_label_matrix, input_dtype


def estimator_has(name: str) -> Any:
    """A check for ``available_if``: the fitted (else the given) estimator has ``name``."""

    def check(self: Any) -> bool:
        return hasattr(self.estimator_ if hasattr(self, "estimator_") else self.estimator, name)

    return check


class PosteriorRuleBase(MultiLabelMixin, ClassifierMixin, BaseEstimator):
    """A rule from a wrapped estimator's posteriors to label sets.

    Subclasses have the parameters ``estimator``, ``cv`` and ``random_state`` and set
    ``estimator_`` in ``fit``.
    """

    estimator: Any
    estimator_: Any
    cv: Any
    random_state: Any

    def _check_labels(self, Y: MatrixLike) -> NDArray[np.uint8]:
        """Y as a dense uint8 matrix; records the label space and the dtype ``predict`` returns."""
        self._y_dtype = input_dtype(Y)
        if sp.issparse(Y):
            # The rules work on dense (n, q) out-of-sample posteriors.
            check_dense_label_budget(*Y.shape, estimator=self, what="dense out-of-sample posteriors",
                                     alternative="mlknn.model_selection.loo_predict_topk on sparse labels")
        checked: NDArray[np.uint8] = check_label_matrix(Y)
        self._set_label_space(checked)
        return checked

    def _out_of_sample_proba(self, X: MatrixLike, Y: NDArray[np.uint8]) -> NDArray[np.float64]:
        """The training set's out-of-sample posteriors (``loo_predict_proba`` with ``cv``)."""
        P = loo_predict_proba(self.estimator, X, Y, cv=self.cv, random_state=self.random_state)
        return np.asarray(P, dtype=np.float64)

    @fill_doc
    def predict_proba(self, X: MatrixLike) -> NDArray[np.float64]:
        """The fitted estimator's posteriors (the rule does not change them).

        Parameters
        ----------
        {X_query}

        Returns
        -------
        ndarray of shape (n_queries, n_labels)
        """
        check_is_fitted(self)
        return np.asarray(self.estimator_.predict_proba(X), dtype=np.float64)

    @available_if(estimator_has("predict_topk"))  # type: ignore[untyped-decorator]  # scikit-learn has no stubs
    def predict_topk(self, X: MatrixLike, k: int = 5) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """The k highest-scoring labels of each query and their scores.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_queries, n_features)
        k : int, default=5

        Returns
        -------
        labels : ndarray of shape (n_queries, k)
            By decreasing score.
        scores : ndarray of shape (n_queries, k)
            Their posteriors (as :meth:`predict_proba` gives them).
        """
        check_is_fitted(self)
        labels, scores = self.estimator_.predict_topk(X, k)
        return labels, scores
