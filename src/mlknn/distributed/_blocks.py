"""Row blocks of the training set and the queries on a Dask cluster, and their input checks.

The training set is cut into a few large blocks (memory-bounded: each worker
holds the training block it searches), the queries into many small ones (the
parallelism); see :mod:`mlknn.distributed._graph` for the search over them.
"""

import math
from typing import Any, Self

import numpy as np
import scipy.sparse as sp

from ..utils._typing import MatrixLike, NDArray
from ._client import Client, Future, _n_workers

#: Default size of a training block (MB of data): few training blocks keep the
#: per-query overhead (candidates of every block, merges) small; every worker holds
#: the training block it searches.
_TRAIN_BLOCK_MB = 256
#: Default query block: at least this many rows, and about 4 blocks per worker.
_MIN_QUERY_BLOCK = 256
_QUERY_BLOCKS_PER_WORKER = 4


def _is_dask_array(X: Any) -> bool:
    return hasattr(X, "dask") and hasattr(X, "chunks") and hasattr(X, "to_delayed")


def _row_bytes(X: MatrixLike) -> float:
    itemsize = np.dtype(X.dtype).itemsize
    row: float
    if sp.issparse(X):
        row = max(1.0, X.nnz / max(X.shape[0], 1) * (itemsize + 4) + 8)
    else:
        row = max(1.0, X.shape[1] * itemsize)
    return row


def default_train_block(X: MatrixLike) -> int:
    """Rows per training block by default: as many as fit in ``_TRAIN_BLOCK_MB``."""
    n: int = X.shape[0]
    return max(1, min(n, int(_TRAIN_BLOCK_MB * 2**20 // _row_bytes(X))))


def default_query_block(n_rows: int, client: Client) -> int:
    """Rows per query block by default: about 4 blocks per worker, at least 256 rows."""
    per = math.ceil(n_rows / (_QUERY_BLOCKS_PER_WORKER * _n_workers(client)))
    return max(1, min(n_rows, max(_MIN_QUERY_BLOCK, per)))


def _check_block(block: int | None, name: str) -> int | None:
    if block is None:
        return None
    if isinstance(block, bool) or not isinstance(block, (int, np.integer)) or block < 1:
        raise ValueError(f"The '{name}' parameter must be an int >= 1 (rows per block) or None. Got {block!r} instead.")
    return int(block)


class Blocks:
    """Row blocks of a matrix living on the cluster.

    ``futures[b]`` holds rows ``bounds[b]:bounds[b + 1]``. Built from a numpy array
    or CSR matrix (kept here, scattered block by block, so that lost blocks can be
    scattered again) or from a dask array (computed on the workers; lost blocks are
    recomputed by Dask from the array's graph).
    """

    futures: list[Future]
    bounds: NDArray[np.int64]
    #: The input when numpy / sparse (scattered again if lost), else None.
    local: MatrixLike
    #: The input when a dask array (recomputed by Dask if lost), else None.
    dask_array: Any

    def __init__(self, X: MatrixLike, block: int, client: Client, name: str) -> None:
        self.client = client
        self.name = name
        if _is_dask_array(X):
            self.local = None
            X = _validate_dask(X, name)
            X = X.rechunk({0: block, 1: -1})
            self.dask_array = X
            sizes = [int(s) for s in X.chunks[0]]
            self.shape = (int(sum(sizes)), int(X.shape[1]))
        else:
            self.dask_array = None
            self.local = X
            self.shape = X.shape
            n = X.shape[0]
            sizes = [min(block, n - s) for s in range(0, n, block)]
        self.dtype = X.dtype
        self.bounds = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
        self.futures = []
        self.send()

    @property
    def n_blocks(self) -> int:
        return len(self.bounds) - 1

    def send(self) -> Self:
        """(Re)send the blocks to the cluster."""
        if self.dask_array is not None:
            parts = list(self.dask_array.to_delayed().ravel())
            self.futures = self.client.compute(parts)
        else:
            parts = [self.local[a:b] for a, b in zip(self.bounds[:-1], self.bounds[1:])]
            self.futures = self.client.scatter(parts, hash=False)
        return self

    def lost(self) -> bool:
        """Whether a block has been lost (its worker died holding the only copy)."""
        return any(f.status in ("lost", "cancelled", "error") for f in self.futures)


def _validate_dask(X: Any, name: str) -> Any:
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_features); got a dask array of shape {X.shape}.")
    if any(isinstance(c, float) and math.isnan(c) for c in X.chunks[0]):
        X = X.compute_chunk_sizes()
    if X.dtype not in (np.float32, np.float64):
        if X.dtype.kind not in "biuf":
            raise ValueError(f"{name} must be numeric (dtype convertible to float); got dtype {X.dtype}.")
        X = X.astype(np.float64)
    return X


def _validate_local(X: MatrixLike, name: str) -> MatrixLike:
    from sklearn.utils import check_array

    try:
        X = check_array(X, accept_sparse="csr", dtype=[np.float64, np.float32])
    except TypeError as exc:
        raise ValueError(f"{name} must be a numeric array or sparse matrix; could not convert it: {exc}") from exc
    if sp.issparse(X):
        X = X.tocsr()
    return X


def _slice_rows(X_block: MatrixLike, start: int, stop: int) -> MatrixLike:
    return X_block[start:stop]
