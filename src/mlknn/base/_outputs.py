"""Label plumbing of :class:`~mlknn.base.KNNMultiLabelBase`: sparse or dense Y, output formats, top k.

What fit does with a sparse Y (kept sparse, or densified within the memory
budget), what ``predict`` returns (fit's dtype and container kind), the ``k``
check of ``predict_topk`` and its default: the top k of ``_predict_proba_graph``,
whole within the budget, else by row chunks.
"""

import dataclasses
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import scipy.sparse as sp
from sklearn.utils import gen_batches

from ..neighbors import NeighborGraph
from ..utils._param_validation import Integral, get_chunk_n_rows
from ..utils._topk import topk_from_dense
from ..utils._typing import FloatArray, LabelMatrix, MatrixLike, NDArray
from ..utils._validation import check_dense_label_budget, dense_label_budget


def graph_rows(graph: NeighborGraph, rows: slice) -> NeighborGraph:
    """The rows ``rows`` (a slice) of a neighbour graph, keeping its class (e.g. a
    hubness-reduced graph with its primary distances)."""
    changes = {
        f.name: getattr(graph, f.name)[rows]
        for f in dataclasses.fields(graph)
        if isinstance(getattr(graph, f.name), np.ndarray) and getattr(graph, f.name).ndim >= 1
    }
    return dataclasses.replace(graph, **changes)


class _LabelOutputMixin:
    """Sparse-label, output-format and top-k plumbing of :class:`~mlknn.base.KNNMultiLabelBase`."""

    n_labels_: int
    _y_dtype: np.dtype[Any]
    _supports_sparse_labels: bool

    if TYPE_CHECKING:  # provided by KNNMultiLabelBase's subclasses
        def _predict_proba_graph(self, graph: NeighborGraph, X: MatrixLike) -> FloatArray: ...

    def _labels_for_fit(self, Y: LabelMatrix) -> LabelMatrix:
        """Keep a sparse Y sparse if this estimator supports it, else densify within budget."""
        if sp.issparse(Y) and not self._supports_sparse_labels:
            check_dense_label_budget(*Y.shape, estimator=self, what="a dense label matrix")
            return Y.toarray()
        return Y

    def _check_k(self, k: int) -> int:
        if isinstance(k, bool) or not isinstance(k, Integral) or k < 1:
            raise ValueError(f"The 'k' parameter of predict_topk must be an int >= 1. Got {k!r} instead.")
        if k > self.n_labels_:
            raise ValueError(
                f"The 'k' parameter of predict_topk must be <= n_labels = {self.n_labels_} (q, the "
                f"number of labels). Got k = {k} instead."
            )
        return int(k)

    def _check_dense_scores(self, n_rows: int) -> None:
        if getattr(self, "sparse_labels_", False):
            check_dense_label_budget(n_rows, self.n_labels_, estimator=self,
                                     what="a dense predict_proba output",
                                     alternative="predict_topk(X, k) (the k best labels per query)")

    def _format_prediction(self, P: MatrixLike) -> MatrixLike:
        """``_predict_graph``'s 0/1 output in fit's dtype and container kind.

        A sparse Y given to ``fit`` gives CSR predictions (``csr_matrix`` for a
        matrix, ``csr_array`` for an array), also from an estimator that
        densified Y; a dense Y gives a dense ndarray.
        """
        container = getattr(self, "_y_container", None)
        if container is None:
            return (P.toarray() if sp.issparse(P) else np.asarray(P)).astype(self._y_dtype, copy=False)
        P = sp.csr_array(P).astype(self._y_dtype, copy=False)
        P.eliminate_zeros()
        return sp.csr_matrix(P) if container == "matrix" else P

    def _predict_graph(self, graph: NeighborGraph, X: MatrixLike) -> MatrixLike:
        proba = self._predict_proba_graph(graph, X)
        return (proba > 0.5).astype(np.uint8)

    def _predict_topk_graph(
        self, graph: NeighborGraph, X: MatrixLike, k: int
    ) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """Default top k: of ``_predict_proba_graph``, whole if it fits the budget, else by row chunks.

        An estimator whose scores come from a BLAS product (IBLR, MLHiKNN) can
        differ in the last bit between chunk sizes: within the budget the
        scores are exactly those of :meth:`predict_proba`.
        """
        n = graph.n_points
        if n * self.n_labels_ * 8 <= min(dense_label_budget(), 2**30):
            return topk_from_dense(self._predict_proba_graph(graph, X), k)
        step = get_chunk_n_rows(row_bytes=32 * self.n_labels_, max_n_rows=n)
        labels, scores = [], []
        for rows in gen_batches(n, step):
            part = self._predict_proba_graph(graph_rows(graph, rows), None if X is None else X[rows])
            lab, sc = topk_from_dense(part, k)
            labels.append(lab)
            scores.append(sc)
        return np.vstack(labels), np.vstack(scores)


def num_rows(X: Any) -> int:
    """Rows of an input before validation (for the budget check; validation comes next)."""
    shape = getattr(X, "shape", None)
    if shape is not None and len(shape) >= 1:
        return int(shape[0])
    try:
        return len(X)
    except TypeError:
        return 0


def container_kind(Y: MatrixLike) -> Literal["matrix", "array"] | None:
    """What ``predict`` returns: "matrix" (``csr_matrix``) or "array" (``csr_array``) for a
    sparse Y, None (a dense ndarray) for a dense one."""
    if not sp.issparse(Y):
        return None
    return "matrix" if isinstance(Y, sp.spmatrix) else "array"
