"""Exact k-nearest-neighbour graphs on a Dask cluster, block by block.

The training set and the queries are cut into row blocks. One task per training
block fits :class:`mlknn.neighbors.BruteNeighbors` on it (the single-machine exact
kernel, unchanged); one task per (query block, training block) pair asks that index
for the block's top-k and shifts the indices by the block's offset; a tree
reduction merges the partial top-k lists of a query block by (distance, global
index) with :func:`numpy.lexsort`.

Why the result is identical to ``BruteNeighbors().fit(X).kneighbors(Q, k)``:

* a candidate's distance is recomputed exactly in float64 from the two rows alone,
  so a pair gets the same distance whichever block it is computed in;
* within a block the kernel orders by (distance, local index), and local order is
  global order (a block is a contiguous range of rows), so each partial list is the
  block's exact top-k under the global (distance, index) order, ties included;
* the k best of a union are among the k best of each part, so merging the partial
  lists by (distance, global index) gives the single-machine answer;
* the merge compares *squared* Euclidean distances (the blocks run with
  ``metric="sqeuclidean"`` and the square root is taken once at the end, as the
  single-machine kernel does): two different squared distances can have the same
  rounded square root, and ordering by the root would then break their tie by
  index where the single-machine kernel does not;
* leave-one-out (``X_query=None``): the query blocks are the training blocks; the
  diagonal pair uses the kernel's own leave-one-out query, which excludes only the
  point's own index (duplicates stay), and every off-diagonal pair is an ordinary
  query.
"""

import math

import numpy as np
import scipy.sparse as sp

from ..neighbors import BruteNeighbors, NeighborGraph

__all__ = ["kneighbors_graph", "get_client"]

#: Partial top-k lists merged by one reduction task.
_FAN_IN = 4
#: Smallest default block (rows): smaller blocks make the scheduling overhead dominate.
_MIN_BLOCK = 2048
_METRICS = ("euclidean", "sqeuclidean", "cosine")


# --------------------------------------------------------------------- client
def _distributed(caller):
    from ..utils import check_optional_dependency

    check_optional_dependency("dask", caller)
    return check_optional_dependency("distributed", caller)


def get_client(client=None, caller="mlknn.distributed"):
    """The Dask client to use: ``client``, or the default one of this process.

    Parameters
    ----------
    client : distributed.Client, optional
    caller : str
        Named in the error messages.

    Returns
    -------
    distributed.Client

    Raises
    ------
    ImportError
        When dask[distributed] is not installed.
    ValueError
        When ``client`` is None and no client has been created in this process.
    """
    distributed = _distributed(caller)
    if client is not None:
        return client
    try:
        return distributed.default_client()
    except ValueError:
        raise ValueError(
            f"{caller} needs a Dask client: pass client=, or create one first, e.g. "
            "distributed.Client(distributed.LocalCluster(n_workers=2)) or "
            "distributed.Client('tcp://scheduler:8786')."
        ) from None


# --------------------------------------------------------------------- blocks
def _is_dask_array(X):
    return hasattr(X, "dask") and hasattr(X, "chunks") and hasattr(X, "to_delayed")


def _default_block(n_rows, client):
    try:
        n_workers = max(1, len(client.scheduler_info(n_workers=-1)["workers"]))
    except TypeError:  # older distributed: no n_workers argument
        n_workers = max(1, len(client.scheduler_info()["workers"]))
    except Exception:  # noqa: BLE001 - a default only
        n_workers = 1
    return max(1, min(n_rows, max(_MIN_BLOCK, math.ceil(n_rows / (2 * n_workers)))))


def _check_block(block, name):
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

    def __init__(self, X, block, client, name, *, local=None):
        self.client = client
        self.name = name
        if _is_dask_array(X):
            self.local = local
            X = _validate_dask(X, name)
            if block is not None:
                X = X.rechunk({0: block, 1: -1})
            elif len(X.chunks[1]) > 1:
                X = X.rechunk({1: -1})
            self.dask_array = X
            sizes = [int(s) for s in X.chunks[0]]
            self.shape = (int(sum(sizes)), int(X.shape[1]))
            self.dtype = X.dtype
        else:
            self.dask_array = None
            self.local = X
            self.shape = X.shape
            self.dtype = X.dtype
            n = X.shape[0]
            block = block if block is not None else _default_block(n, client)
            sizes = [min(block, n - s) for s in range(0, n, block)]
        self.bounds = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
        self.futures = None
        self.send()

    @property
    def n_blocks(self):
        return len(self.bounds) - 1

    def send(self):
        """(Re)send the blocks to the cluster."""
        if self.dask_array is not None:
            parts = list(self.dask_array.to_delayed().ravel())
            self.futures = self.client.compute(parts)
        else:
            parts = [self.local[a:b] for a, b in zip(self.bounds[:-1], self.bounds[1:])]
            self.futures = self.client.scatter(parts, hash=False)
        return self

    def lost(self):
        """Whether a block has been lost (its worker died holding the only copy)."""
        return any(f.status in ("lost", "cancelled", "error") for f in self.futures)


def _validate_dask(X, name):
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_features); got a dask array of shape {X.shape}.")
    if any(isinstance(c, float) and math.isnan(c) for c in X.chunks[0]):
        X = X.compute_chunk_sizes()
    if X.dtype not in (np.float32, np.float64):
        if X.dtype.kind not in "biuf":
            raise ValueError(f"{name} must be numeric (dtype convertible to float); got dtype {X.dtype}.")
        X = X.astype(np.float64)
    return X


def _validate_local(X, name):
    from sklearn.utils import check_array

    try:
        X = check_array(X, accept_sparse="csr", dtype=[np.float64, np.float32])
    except TypeError as exc:
        raise ValueError(f"{name} must be a numeric array or sparse matrix; could not convert it: {exc}") from exc
    if sp.issparse(X):
        X = X.tocsr()
    return X


# ---------------------------------------------------------------------- tasks
def _block_metric(metric):
    # Merge on squared distances; see the module docstring.
    return "sqeuclidean" if metric == "euclidean" else metric


def _fit_block(X_block, metric):
    return BruteNeighbors(metric=_block_metric(metric)).fit(X_block)


def _block_topk(index, Q_block, k, offset, loo):
    """Top-k of a query block in one training block, global indices."""
    n_avail = index.n_samples_fit_ - (1 if loo else 0)
    kk = min(k, n_avail)
    n_q = index.n_samples_fit_ if loo else Q_block.shape[0]
    if kk < 1:
        return np.empty((n_q, 0), dtype=np.float64), np.empty((n_q, 0), dtype=np.intp)
    dist, ind = index.kneighbors(None if loo else Q_block, n_neighbors=kk)
    ind += offset
    return dist, ind


def merge_topk(k, *parts):
    """Merge partial top-k lists ``(distances, indices)`` by (distance, index).

    Parameters
    ----------
    k : int
    *parts : tuples (distances, indices), each of shape (n_queries, k_i)

    Returns
    -------
    distances, indices : ndarrays of shape (n_queries, min(k, sum k_i))
    """
    dist = np.concatenate([p[0] for p in parts], axis=1)
    ind = np.concatenate([p[1] for p in parts], axis=1)
    if dist.shape[1] == 0:
        return dist, ind
    order = np.lexsort((ind, dist), axis=-1)[:, :k]
    return np.take_along_axis(dist, order, axis=1), np.take_along_axis(ind, order, axis=1)


def _finish(part, metric):
    dist, ind = part
    dist = np.ascontiguousarray(dist, dtype=np.float64)
    if metric == "euclidean":
        np.sqrt(dist, out=dist)
    return dist, np.ascontiguousarray(ind, dtype=np.intp)


def _tree_reduce(client, parts, k, retries):
    while len(parts) > 1:
        parts = [
            client.submit(merge_topk, k, *parts[i : i + _FAN_IN], retries=retries, pure=False) if len(parts[i : i + _FAN_IN]) > 1 else parts[i]
            for i in range(0, len(parts), _FAN_IN)
        ]
    return parts[0]


# ---------------------------------------------------------------------- graph
class TrainingIndex:
    """The training blocks of a distributed search and their fitted block indices.

    Kept between calls (e.g. by :class:`~mlknn.distributed.DistributedKNN`), so the
    training data are sent and indexed once for every query.
    """

    def __init__(self, X, client, *, metric="euclidean", train_block=None, retries=1):
        if metric not in _METRICS:
            raise ValueError(
                f"The 'metric' parameter of the distributed search must be one of {_METRICS}. Got {metric!r} instead."
            )
        self.client = client
        self.metric = metric
        self.retries = retries
        train_block = _check_block(train_block, "train_block")
        if not _is_dask_array(X):
            X = _validate_local(X, "X_train")
        self.blocks = Blocks(X, train_block, client, "X_train")
        self.n_samples_fit_, self.n_features_in_ = self.blocks.shape
        self._fit_indices()

    def _fit_indices(self):
        self.indices = [
            self.client.submit(_fit_block, f, self.metric, retries=self.retries, pure=False) for f in self.blocks.futures
        ]

    def recover(self):
        """Send lost training blocks again (numpy / sparse input) and refit the block indices."""
        if self.blocks.dask_array is None and self.blocks.lost():
            self.blocks.send()
            self._fit_indices()
        elif any(f.status in ("lost", "cancelled", "error") for f in self.indices):
            self._fit_indices()

    def check_n_neighbors(self, n_neighbors, loo):
        limit = self.n_samples_fit_ - 1 if loo else self.n_samples_fit_
        if isinstance(n_neighbors, bool) or not isinstance(n_neighbors, (int, np.integer)) or not (
            1 <= n_neighbors <= limit
        ):
            what = "n_samples_fit - 1 (leave-one-out)" if loo else "n_samples_fit"
            raise ValueError(f"Expected 1 <= n_neighbors <= {what} = {limit}, but n_neighbors = {n_neighbors}.")
        return int(n_neighbors)

    def query_blocks(self, X_query, query_block=None):
        """:class:`Blocks` of the queries, checked against the training features."""
        query_block = _check_block(query_block, "query_block")
        if not _is_dask_array(X_query):
            X_query = _validate_local(X_query, "X_query")
        if X_query.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X_query has {X_query.shape[1]} features, but the training set has {self.n_features_in_} features."
            )
        return Blocks(X_query, query_block, self.client, "X_query")

    def graph_futures(self, queries, n_neighbors):
        """One future per query block: its merged (distances, indices), final metric.

        Parameters
        ----------
        queries : Blocks or None
            None: the leave-one-out graph of the training set.
        n_neighbors : int

        Returns
        -------
        list of Future
        """
        loo = queries is None
        k = self.check_n_neighbors(n_neighbors, loo)
        self.recover()  # a worker died since the blocks were sent (e.g. between fit and predict)
        client, bounds = self.client, self.blocks.bounds
        q_futures = self.blocks.futures if loo else queries.futures
        out = []
        for qi, qf in enumerate(q_futures):
            parts = []
            for tj, index in enumerate(self.indices):
                diag = loo and qi == tj
                parts.append(
                    client.submit(
                        _block_topk, index, None if diag else qf, k, int(bounds[tj]), diag, retries=self.retries, pure=False
                    )
                )
            merged = _tree_reduce(client, parts, k, self.retries)
            out.append(client.submit(_finish, merged, self.metric, retries=self.retries, pure=False))
        return out

    def kneighbors(self, queries, n_neighbors):
        """Gathered ``(distances, indices)`` of every query (None: leave-one-out)."""
        futures = self.graph_futures(queries, n_neighbors)
        parts = _gather_with_recovery(self, queries, futures, lambda: self.graph_futures(queries, n_neighbors))
        dist = np.concatenate([p[0] for p in parts], axis=0)
        ind = np.concatenate([p[1] for p in parts], axis=0)
        return dist, ind


def _is_lost_data_error(exc):
    """Errors that mean a worker died with data or tasks (not a bug in a task)."""
    name = type(exc).__name__
    return name in ("FutureCancelledError", "CancelledError", "KilledWorker", "FutureLostError") or (
        "lost" in str(exc).lower() and "scattered" in str(exc).lower()
    )


def _gather_with_recovery(train, queries, futures, rebuild, attempts=2):
    """Gather ``futures``; when a worker died holding scattered blocks, send them again and rebuild."""
    for attempt in range(attempts + 1):
        try:
            return train.client.gather(futures)
        except Exception as exc:  # noqa: BLE001 - re-raised unless it is a lost block
            if attempt == attempts or not _is_lost_data_error(exc):
                raise
            train.recover()
            if queries is not None and queries.dask_array is None and queries.lost():
                queries.send()
            futures = rebuild()
    raise AssertionError("unreachable")  # pragma: no cover


def kneighbors_graph(
    X_train,
    X_query=None,
    n_neighbors=10,
    *,
    client=None,
    metric="euclidean",
    train_block=None,
    query_block=None,
    retries=1,
):
    """Exact k-nearest-neighbour graph computed block by block on a Dask cluster.

    The answer is identical (indices and float64 distances, bit for bit) to
    ``BruteNeighbors(metric=metric).fit(X_train).kneighbors(X_query, n_neighbors)``,
    including the tie rule (equal distances ordered by the lower training index)
    and leave-one-out (only each point's own index excluded; duplicates kept).

    Parameters
    ----------
    X_train : {ndarray, sparse matrix, dask array} of shape (n_train, n_features)
    X_query : {ndarray, sparse matrix, dask array} of shape (n_queries, n_features), optional
        None: the leave-one-out graph of the training set.
    n_neighbors : int
    client : distributed.Client, optional
        Default: the current default client.
    metric : {"euclidean", "sqeuclidean", "cosine"}, default="euclidean"
    train_block, query_block : int, optional
        Rows per block. Default: a dask array's own row chunks; else
        ``max(2048, ceil(n / (2 * n_workers)))``. With ``X_query=None`` the query
        blocks are the training blocks (``query_block`` is ignored).
    retries : int, default=1
        Passed to every ``client.submit`` (a task that raises is run again).

    Returns
    -------
    NeighborGraph
        ``loo=True`` when ``X_query`` is None.

    Notes
    -----
    Tasks: one index per training block, one top-k per (query block, training
    block), ``ceil`` merges of :data:`_FAN_IN` lists. The graph (n_queries x k) is
    gathered on the client; :meth:`TrainingIndex.graph_futures` keeps it on the
    workers instead. Numpy / sparse inputs are scattered from this process; when a
    worker dies holding a block's only copy, the blocks are scattered again and the
    search rebuilt (at most twice). Dask arrays are recomputed by Dask itself.
    """
    client = get_client(client, "mlknn.distributed.kneighbors_graph")
    train = TrainingIndex(X_train, client, metric=metric, train_block=train_block, retries=retries)
    train.check_n_neighbors(n_neighbors, X_query is None)
    queries = None if X_query is None else train.query_blocks(X_query, query_block)
    dist, ind = train.kneighbors(queries, n_neighbors)
    return NeighborGraph(ind, dist, loo=X_query is None)
