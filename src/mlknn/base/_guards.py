"""Resource guards of :class:`~mlknn.base.KNNMultiLabelBase`: estimate, then refuse or proceed.

``fit``, ``predict``, ``predict_proba`` and ``predict_topk`` call
:meth:`_ResourceGuardMixin._check_resources` after validating the input and
before anything of the problem's size is allocated. The estimate is
:meth:`_resource_estimate`: the neighbour search's (the index's copy of X and
the graph) plus the method's, by default the count estimators' (kNN label
counts: O(n k r) for sparse labels, a few (n, q) arrays for dense ones);
the dense-in-q solvers (DML-kNN, MLHiKNN, IBLR) override the method's part.
The limit is the estimator's ``max_memory`` parameter where it is not None,
else the global setting (``mlknn.config_context(max_memory=...)``).
"""

from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from ..utils._budget import WORK_BYTES
from ..utils._resources import BASE_BYTES, ProblemSize, ResourceEstimate, check_resources, estimate
from ..utils._typing import MatrixLike
from ._outputs import num_rows

#: Bytes of the exact search's working blocks (its chunks and their candidates).
SEARCH_WORK_BYTES = 2 * WORK_BYTES


def search_estimate(size: ProblemSize) -> ResourceEstimate:
    """The neighbour search: the index's copies of X, the graph and the kernel's blocks."""
    rows, width = size.n_queries, size.n_neighbors
    return estimate(
        index=2.0 * 8 * size.n_train * size.n_features,
        graph=2.0 * 16 * rows * width,
        search_blocks=float(SEARCH_WORK_BYTES),
    )


def count_estimate(size: ProblemSize, action: str) -> ResourceEstimate:
    """ML-kNN-like counting: neighbour label counts, per-label tables, the outputs."""
    n, m, q, k = size.n_train, size.n_queries, size.n_labels, size.n_neighbors
    tables = 8.0 * 6 * (k + 2) * q
    if size.sparse_labels:
        # The counts are sparse: (row, label, count) triples and their sort.
        counts = 64.0 * size.neighbor_label_pairs
        dense_out = 8.0 * 2 * m * q if action in ("predict_proba", "predict") else 0.0
        return estimate(label_counts=counts, tables=tables, dense_output=dense_out)
    labels = float(n * q) if action == "fit" else 0.0
    return estimate(dense_labels=labels, label_counts=8.0 * 2 * m * q, tables=tables,
                    dense_output=8.0 * 2 * m * q if action != "fit" else 0.0)


def label_nnz(Y: MatrixLike) -> int:
    """Non-zero entries of a validated Y (sparse or dense), without a copy."""
    if sp.issparse(Y):
        return int(Y.nnz)
    return int(np.count_nonzero(Y))


class _ResourceGuardMixin:
    """``_check_resources`` and the default ``_resource_estimate`` of the kNN estimators."""

    n_train_: int
    n_labels_: int
    n_features_in_: int
    _supports_sparse_labels: bool
    #: The ``max_memory`` parameter, stored by each estimator's ``__init__``. The class
    #: default is for models saved (pickled or by mlknn.persistence) before the
    #: parameter existed: they load without the attribute and follow the global setting.
    max_memory: Any = None

    if TYPE_CHECKING:  # provided by KNNMultiLabelBase
        def search_width(self, n_train: int | None = None) -> int: ...

    def _resource_estimate(self, size: ProblemSize, action: str) -> ResourceEstimate:
        """Peak memory (and dense-product work) of ``action`` at ``size``: the search's and the method's."""
        return search_estimate(size) + self._method_estimate(size, action) + estimate(interpreter=float(BASE_BYTES))

    def _method_estimate(self, size: ProblemSize, action: str) -> ResourceEstimate:
        """The method's part of :meth:`_resource_estimate` (default: label counting); solvers override it."""
        return count_estimate(size, action)

    def _check_resources(self, action: str, n_queries: int, *, n_features: int | None = None,
                         n_labels: int | None = None, nnz_labels: int | None = None,
                         n_train: int | None = None, sparse_labels: bool | None = None) -> ResourceEstimate:
        """Refuse ``action`` over the memory limit, before it allocates (see :mod:`mlknn.utils._resources`).

        At fit the sizes are passed; afterwards they are the fitted ones.
        """
        n_train = self.n_train_ if n_train is None else n_train
        size = ProblemSize(
            n_train=int(n_train),
            n_queries=int(n_queries),
            n_features=int(self.n_features_in_ if n_features is None else n_features),
            n_labels=int(self.n_labels_ if n_labels is None else n_labels),
            nnz_labels=int(getattr(self, "_nnz_labels", 0) if nnz_labels is None else nnz_labels),
            n_neighbors=int(self.search_width(int(n_train))),
            sparse_labels=bool(getattr(self, "sparse_labels_", False) if sparse_labels is None else sparse_labels),
        )
        need = self._resource_estimate(size, action)
        return check_resources(type(self).__name__, action, size, need, max_memory=self.max_memory)

    def _rows_scored(self, X: Any) -> int:
        """Rows a prediction scores: those of X, or the training rows (leave-one-out) when X is None."""
        return self.n_train_ if X is None else num_rows(X)

    def _guard_fit(self, n_features: int, Y: MatrixLike) -> None:
        """The fit's check, from the validated Y (still as given: sparse stays sparse) and X's width."""
        nnz = label_nnz(Y)
        n, q = Y.shape
        self._check_resources("fit", n, n_features=n_features, n_labels=q, nnz_labels=nnz, n_train=n,
                              sparse_labels=bool(sp.issparse(Y) and self._supports_sparse_labels))
        self._nnz_labels = nnz  # after the check: a refused fit leaves a fitted model unchanged
