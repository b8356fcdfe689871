"""Label plumbing of :class:`~mlknn.base.KNNMultiLabelBase`: sparse or dense Y, output formats, top k.

Plain functions the base class calls with what it knows (its flags, fit's dtype
and container kind, its scoring method), so this module never imports the class
back: what fit does with a sparse Y (kept sparse, or densified within the memory
budget), what ``predict`` returns (fit's dtype and container kind), the ``k``
check of ``predict_topk`` and its default: the top k of the scores, whole within
the budget, else by row chunks.
"""

import dataclasses
from collections.abc import Callable
from typing import Any, Literal

import numpy as np
import scipy.sparse as sp
from sklearn.utils import gen_batches

from ..neighbors import NeighborGraph
from ..utils._param_validation import Integral, get_chunk_n_rows
from ..utils._topk import topk_from_dense
from ..utils._typing import FloatArray, LabelMatrix, MatrixLike, NDArray
from ..utils._validation import check_dense_label_budget, dense_label_budget

__all__ = [
    "check_dense_scores",
    "check_k",
    "container_kind",
    "format_prediction",
    "graph_rows",
    "labels_for_fit",
    "num_rows",
    "topk_of_scores",
]


def graph_rows(graph: NeighborGraph, rows: slice) -> NeighborGraph:
    """The rows ``rows`` (a slice) of a neighbour graph, keeping its class (e.g. a
    hubness-reduced graph with its primary distances)."""
    changes = {
        f.name: getattr(graph, f.name)[rows]
        for f in dataclasses.fields(graph)
        if isinstance(getattr(graph, f.name), np.ndarray) and getattr(graph, f.name).ndim >= 1
    }
    return dataclasses.replace(graph, **changes)


def labels_for_fit(Y: LabelMatrix, *, keep_sparse: bool, estimator: Any) -> LabelMatrix:
    """Keep a sparse Y sparse if the estimator supports it (``keep_sparse``), else densify within budget."""
    if sp.issparse(Y) and not keep_sparse:
        check_dense_label_budget(*Y.shape, estimator=estimator, what="a dense label matrix")
        return Y.toarray()
    return Y


def check_k(k: int, n_labels: int) -> int:
    """``predict_topk``'s ``k`` as an int in ``[1, n_labels]``, or a ValueError naming the rule."""
    if isinstance(k, bool) or not isinstance(k, Integral) or k < 1:
        raise ValueError(f"The 'k' parameter of predict_topk must be an int >= 1. Got {k!r} instead.")
    if k > n_labels:
        raise ValueError(
            f"The 'k' parameter of predict_topk must be <= n_labels = {n_labels} (q, the "
            f"number of labels). Got k = {k} instead."
        )
    return int(k)


def check_dense_scores(n_rows: int, n_labels: int, *, sparse_labels: bool, estimator: Any) -> None:
    """Refuse a dense (n_rows, n_labels) score array beyond the budget after a fit on sparse labels."""
    if sparse_labels:
        check_dense_label_budget(n_rows, n_labels, estimator=estimator,
                                 what="a dense predict_proba output",
                                 alternative="predict_topk(X, k) (the k best labels per query)")


def format_prediction(P: MatrixLike, y_dtype: np.dtype[Any], container: str | None) -> MatrixLike:
    """A 0/1 prediction in fit's dtype and container kind.

    A sparse Y given to ``fit`` gives CSR predictions (``csr_matrix`` for a
    matrix, ``csr_array`` for an array), also from an estimator that
    densified Y; a dense Y (``container`` None) gives a dense ndarray.
    """
    if container is None:
        return (P.toarray() if sp.issparse(P) else np.asarray(P)).astype(y_dtype, copy=False)
    P = sp.csr_array(P).astype(y_dtype, copy=False)
    P.eliminate_zeros()
    return sp.csr_matrix(P) if container == "matrix" else P


def topk_of_scores(
    scores: Callable[[NeighborGraph, MatrixLike], FloatArray], graph: NeighborGraph, X: MatrixLike,
    k: int, n_labels: int,
) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """The top k of ``scores(graph, X)``: whole if it fits the budget, else by row chunks.

    An estimator whose scores come from a BLAS product (IBLR, MLHiKNN) can
    differ in the last bit between chunk sizes: within the budget the
    scores are exactly those of ``predict_proba``.
    """
    n = graph.n_points
    if n * n_labels * 8 <= min(dense_label_budget(), 2**30):
        return topk_from_dense(scores(graph, X), k)
    step = get_chunk_n_rows(row_bytes=32 * n_labels, max_n_rows=n)
    labels, top = [], []
    for rows in gen_batches(n, step):
        lab, sc = topk_from_dense(scores(graph_rows(graph, rows), None if X is None else X[rows]), k)
        labels.append(lab)
        top.append(sc)
    return np.vstack(labels), np.vstack(top)


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
