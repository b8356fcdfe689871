"""Exact k-nearest-neighbour graphs on a Dask cluster, block by block.

The training set is cut into a few large row blocks (memory-bounded) and the
queries into many small ones (parallelism). One task per (query block, training
block) pair fits :class:`mlknn.neighbors.BruteNeighbors` on the training block
(the single-machine exact kernel, unchanged; fitting is O(rows x features), small
next to the search), asks it for the query block's top-k and shifts the indices by
the block's offset; a tree reduction merges the partial top-k lists of a query
block by (distance, global index) with :func:`numpy.lexsort`.

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
* leave-one-out (``X_query=None``): the query blocks are sub-blocks of the
  training blocks. Against another training block a query block is an ordinary
  query. Against its own training block: when it is the whole block, the kernel's
  own leave-one-out query (only the point's own index excluded, duplicates kept);
  otherwise the block's top-(k + 1) with the point's own index removed (and the
  last one dropped when the own index was not among them: more than k duplicates
  with lower indices), which is the leave-one-out list, because removing one
  element of a sorted list keeps the order of the others.

Files: this module (the tasks, :class:`TrainingIndex`, :func:`kneighbors_graph`),
``_blocks.py`` (row blocks on the cluster and their input checks), ``_client.py``
(the Dask client and the recovery from lost workers).
"""

from collections.abc import Callable
from typing import Any, TypeAlias, cast

import numpy as np

from ..neighbors import (
    BruteNeighbors,
    NeighborGraph,
    check_n_neighbors,
    drop_own_index,
    merge_topk,
)
from ..utils._typing import MatrixLike, NDArray
from ._blocks import (
    Blocks,
    _check_block,
    _is_dask_array,
    _slice_rows,
    _validate_dask,
    _validate_local,
    default_query_block,
    default_train_block,
)
from ._client import Client, Future, _is_lost_data_error, get_client

__all__ = ["kneighbors_graph", "get_client"]

#: A query block of a search: (its future, None for a whole training block searched
#: against itself; first row; stop row; leave-one-out: its training block and the
#: local index of its first row there, else None, None).
_QueryBlock: TypeAlias = tuple[Future | None, int, int, int | None, int | None]

#: Partial top-k lists merged by one reduction task.
_FAN_IN = 4
_METRICS = ("euclidean", "sqeuclidean", "cosine")


# ---------------------------------------------------------------------- tasks
def _block_metric(metric: str) -> str:
    # Merge on squared distances; see the module docstring.
    return "sqeuclidean" if metric == "euclidean" else metric


def _block_topk(
    X_block: MatrixLike, Q_block: MatrixLike | None, k: int, offset: int, own_start: int | None, metric: str
) -> tuple[NDArray[np.float64], NDArray[np.intp]]:
    """Top-k of a query block in one training block, global indices (worker side).

    Parameters
    ----------
    X_block : training rows ``offset:offset + len(X_block)``
    Q_block : the queries; None: the training block itself (leave-one-out)
    k : int
    offset : int
        Global index of the block's first row.
    own_start : int or None
        Leave-one-out with a query block that is part of this training block: the
        local index of its first row (each query's own index is removed). None:
        ordinary queries.
    metric : str
    """
    index = BruteNeighbors(metric=_block_metric(metric)).fit(X_block)
    n_fit = index.n_samples_fit_
    if Q_block is None:  # the whole block against itself: the kernel's own LOO
        n_q, kk = n_fit, min(k, n_fit - 1)
        if kk >= 1:
            dist, ind = index.kneighbors(None, n_neighbors=kk)
    elif own_start is None:
        n_q, kk = Q_block.shape[0], min(k, n_fit)
        dist, ind = index.kneighbors(Q_block, n_neighbors=kk)
    else:
        n_q, kk = Q_block.shape[0], min(k + 1, n_fit)
        dist, ind = index.kneighbors(Q_block, n_neighbors=kk)
        dist, ind = drop_own_index(ind, own_start + np.arange(n_q), dist)
        kk -= 1
    if kk < 1:
        return np.empty((n_q, 0), dtype=np.float64), np.empty((n_q, 0), dtype=np.intp)
    ind += offset
    return dist, ind


def _finish(
    part: tuple[NDArray[Any], NDArray[Any]], metric: str
) -> tuple[NDArray[np.float64], NDArray[np.intp]]:
    dist, ind = part
    dist = np.ascontiguousarray(dist, dtype=np.float64)
    if metric == "euclidean":
        np.sqrt(dist, out=dist)
    return dist, np.ascontiguousarray(ind, dtype=np.intp)


def _tree_reduce(client: Client, parts: list[Future], k: int, retries: int) -> Future:
    while len(parts) > 1:
        parts = [
            client.submit(merge_topk, k, *parts[i : i + _FAN_IN], retries=retries, pure=False) if len(parts[i : i + _FAN_IN]) > 1 else parts[i]
            for i in range(0, len(parts), _FAN_IN)
        ]
    return parts[0]


# ---------------------------------------------------------------------- graph
class TrainingIndex:
    """The training blocks of a distributed search, on the cluster.

    Kept between calls (e.g. by :class:`~mlknn.distributed.DistributedKNN`), so the
    training data are sent once for every search.

    Parameters
    ----------
    X : {ndarray, sparse matrix, dask array} of shape (n_train, n_features)
        The training points, cut into blocks and scattered to the workers once.
    client : distributed.Client
        The Dask client whose workers hold the blocks and run the searches.
    metric : {"euclidean", "sqeuclidean", "cosine"}
        The distance the searches rank neighbours by.
    train_block : int, optional
        Rows per training block; default :func:`default_train_block` (as many rows
        as fit in 256 MB: one block for most data sets).
    query_block : int, optional
        Rows per query block of the leave-one-out searches (sub-blocks of the
        training blocks); default :func:`default_query_block`.
    retries : int
        Passed to every ``client.submit`` (a task that raises is run again).

    See Also
    --------
    kneighbors_graph : One search, building its own index.
    DistributedKNN : Keeps one index for its fitted estimator.

    Examples
    --------
    >>> # not run in the doctests: starting a Dask cluster takes seconds
    >>> import numpy as np
    >>> from mlknn import MLkNN
    >>> from mlknn.datasets import make_multilabel
    >>> from mlknn.distributed import TrainingIndex
    >>> data = make_multilabel(n_samples=80, n_features=5, n_labels=3, random_state=0)
    >>> from distributed import Client  # doctest: +SKIP
    >>> client = Client(n_workers=2, threads_per_worker=1)  # doctest: +SKIP
    >>> index = TrainingIndex(data.X, client)  # doctest: +SKIP
    >>> index.n_samples_fit_, index.n_features_in_  # doctest: +SKIP
    (80, 5)
    >>> client.close()  # doctest: +SKIP
    """

    def __init__(
        self,
        X: MatrixLike,
        client: Client,
        *,
        metric: str = "euclidean",
        train_block: int | None = None,
        query_block: int | None = None,
        retries: int = 1,
    ) -> None:
        if metric not in _METRICS:
            raise ValueError(
                f"The 'metric' parameter of the distributed search must be one of {_METRICS}. Got {metric!r} instead."
            )
        self.client = client
        self.metric = metric
        self.retries = retries
        train_block = _check_block(train_block, "train_block")
        self.query_block = _check_block(query_block, "query_block")
        if not _is_dask_array(X):
            X = _validate_local(X, "X_train")
        else:
            X = _validate_dask(X, "X_train")
        self.n_samples_fit_, self.n_features_in_ = int(X.shape[0]), int(X.shape[1])
        self.blocks = Blocks(X, train_block or default_train_block(X), client, "X_train")

    def recover(self) -> None:
        """Send lost training blocks again (numpy / sparse input; Dask recomputes a dask array's)."""
        if self.blocks.dask_array is None and self.blocks.lost():
            self.blocks.send()

    def check_n_neighbors(self, n_neighbors: int, loo: bool) -> int:
        """:func:`mlknn.neighbors.check_n_neighbors` against this index's training size.

        Parameters
        ----------
        n_neighbors : int
            The requested k.
        loo : bool
            Whether the search is leave-one-out.

        Returns
        -------
        int
            ``n_neighbors``, checked.
        """
        return check_n_neighbors(n_neighbors, self.n_samples_fit_, loo)

    def query_blocks(self, X_query: MatrixLike, query_block: int | None = None) -> Blocks:
        """:class:`Blocks` of the queries, checked against the training features.

        Parameters
        ----------
        X_query : {ndarray, sparse matrix, dask array} of shape (n_queries, n_features)
            The queries.
        query_block : int, default=None
            Rows per query block; default :func:`default_query_block`.

        Returns
        -------
        Blocks
            The query blocks, on the cluster.
        """
        query_block = _check_block(query_block, "query_block")
        if not _is_dask_array(X_query):
            X_query = _validate_local(X_query, "X_query")
        else:
            X_query = _validate_dask(X_query, "X_query")
        if X_query.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X_query has {X_query.shape[1]} features, but the training set has {self.n_features_in_} features."
            )
        block = query_block or default_query_block(int(X_query.shape[0]), self.client)
        return Blocks(X_query, block, self.client, "X_query")

    def _loo_queries(self) -> list[_QueryBlock]:
        """(future, start, stop, training block, local start) of each leave-one-out query block."""
        bounds, client = self.blocks.bounds, self.client
        size = self.query_block or default_query_block(self.n_samples_fit_, client)
        out: list[_QueryBlock] = []
        for t, fut in enumerate(self.blocks.futures):
            s, e = int(bounds[t]), int(bounds[t + 1])
            if e - s <= size:
                out.append((None, s, e, t, 0))  # the whole block: the kernel's own LOO
                continue
            for a in range(s, e, size):
                b = min(a + size, e)
                q = client.submit(_slice_rows, fut, a - s, b - s, retries=self.retries, pure=False)
                out.append((q, a, b, t, a - s))
        return out

    def graph_futures(self, queries: Blocks | None, n_neighbors: int) -> tuple[list[Future], NDArray[np.int64]]:
        """One future per query block: its merged (distances, indices), final metric.

        Parameters
        ----------
        queries : Blocks or None
            None: the leave-one-out graph of the training set.
        n_neighbors : int
            The number of neighbours k kept per query point.

        Returns
        -------
        futures : list of Future
        bounds : ndarray
            Query block ``i`` holds query rows ``bounds[i]:bounds[i + 1]``.
        """
        loo = queries is None
        k = self.check_n_neighbors(n_neighbors, loo)
        self.recover()  # a worker died since the blocks were sent (e.g. between fit and predict)
        client, tb = self.client, self.blocks.bounds
        qlist: list[_QueryBlock]
        if queries is None:
            qlist = self._loo_queries()
        else:
            qb = queries.bounds
            qlist = [(f, int(qb[i]), int(qb[i + 1]), None, None) for i, f in enumerate(queries.futures)]
        out = []
        for qf, _, _, own_block, own_start in qlist:
            parts = []
            for t, xf in enumerate(self.blocks.futures):
                own = own_block == t
                args: tuple[Any, ...]
                if own and qf is None:
                    args = (xf, None, k, int(tb[t]), None, self.metric)
                elif own:
                    args = (xf, qf, k, int(tb[t]), own_start, self.metric)
                else:
                    q = qf if qf is not None else self.blocks.futures[cast(int, own_block)]
                    args = (xf, q, k, int(tb[t]), None, self.metric)
                parts.append(client.submit(_block_topk, *args, retries=self.retries, pure=False))
            merged = _tree_reduce(client, parts, k, self.retries)
            out.append(client.submit(_finish, merged, self.metric, retries=self.retries, pure=False))
        bounds = np.array([q[1] for q in qlist] + [qlist[-1][2]], dtype=np.int64)
        return out, bounds

    def kneighbors(
        self, queries: Blocks | None, n_neighbors: int
    ) -> tuple[NDArray[np.float64], NDArray[np.intp]]:
        """Gathered ``(distances, indices)`` of every query (None: leave-one-out).

        Parameters
        ----------
        queries : Blocks or None
            From :meth:`query_blocks`; None: the leave-one-out graph of the training set.
        n_neighbors : int
            k.

        Returns
        -------
        distances : ndarray of shape (n_queries, n_neighbors)
            Float64 distances in increasing order.
        indices : ndarray of shape (n_queries, n_neighbors)
            Training indices.
        """

        def build() -> list[Future]:
            return self.graph_futures(queries, n_neighbors)[0]

        parts = _gather_with_recovery(self, queries, build(), build)
        dist = np.concatenate([p[0] for p in parts], axis=0)
        ind = np.concatenate([p[1] for p in parts], axis=0)
        return dist, ind


def kneighbors_graph(
    X_train: MatrixLike,
    X_query: MatrixLike = None,
    n_neighbors: int = 10,
    *,
    client: Client | None = None,
    metric: str = "euclidean",
    train_block: int | None = None,
    query_block: int | None = None,
    retries: int = 1,
) -> NeighborGraph:
    """Exact k-nearest-neighbour graph computed block by block on a Dask cluster.

    The answer is identical (indices and float64 distances, bit for bit) to
    ``BruteNeighbors(metric=metric).fit(X_train).kneighbors(X_query, n_neighbors)``,
    including the tie rule (equal distances ordered by the lower training index)
    and leave-one-out (only each point's own index excluded; duplicates kept).

    Parameters
    ----------
    X_train : {ndarray, sparse matrix, dask array} of shape (n_train, n_features)
        The points searched among (the graph's columns).
    X_query : {ndarray, sparse matrix, dask array} of shape (n_queries, n_features), optional
        None: the leave-one-out graph of the training set.
    n_neighbors : int
        The number of neighbours k kept per query point.
    client : distributed.Client, optional
        Default: the current default client.
    metric : {"euclidean", "sqeuclidean", "cosine"}, default="euclidean"
        The distance the neighbours are ranked by.
    train_block : int, optional
        Rows per training block. Default: as many as fit in 256 MB (one block for
        most data sets). Every worker holds the training block it searches, so this
        bounds a worker's memory; more blocks cost more candidates and merges.
    query_block : int, optional
        Rows per query block (the parallelism). Default: about 4 blocks per worker,
        at least 256 rows. With ``X_query=None`` the query blocks are sub-blocks
        of the training blocks.
    retries : int, default=1
        Passed to every ``client.submit`` (a task that raises is run again).

    Returns
    -------
    NeighborGraph
        ``loo=True`` when ``X_query`` is None.

    See Also
    --------
    TrainingIndex : The training blocks, kept on the cluster between searches.
    mlknn.neighbors.BruteNeighbors : The local search with the same answers.

    Notes
    -----
    Tasks: one top-k per (query block, training block) -- each fits the brute
    kernel on its training block, O(rows x features) -- and merges of
    :data:`_FAN_IN` partial lists. The graph (n_queries x k) is gathered on the
    client; :meth:`TrainingIndex.graph_futures` keeps it on the workers instead.
    Numpy / sparse inputs are scattered from this process; when a worker dies
    holding a block's only copy, the blocks are scattered again and the search
    rebuilt (at most twice). Dask arrays are rechunked to the blocks and recomputed
    by Dask itself.

    Examples
    --------
    >>> # not run in the doctests: starting a Dask cluster takes seconds
    >>> import numpy as np
    >>> from mlknn import MLkNN
    >>> from mlknn.datasets import make_multilabel
    >>> from mlknn.distributed import kneighbors_graph
    >>> data = make_multilabel(n_samples=80, n_features=5, n_labels=3, random_state=0)
    >>> from distributed import Client  # doctest: +SKIP
    >>> client = Client(n_workers=2, threads_per_worker=1)  # doctest: +SKIP
    >>> from mlknn.neighbors import BruteNeighbors
    >>> graph = kneighbors_graph(data.X, n_neighbors=3, client=client)  # doctest: +SKIP
    >>> exact = BruteNeighbors().fit(data.X).kneighbors(n_neighbors=3, return_distance=False)
    >>> bool(np.array_equal(graph.indices, exact))  # doctest: +SKIP
    True
    >>> client.close()  # doctest: +SKIP
    """
    client = get_client(client, "mlknn.distributed.kneighbors_graph")
    train = TrainingIndex(
        X_train, client, metric=metric, train_block=train_block, query_block=query_block, retries=retries
    )
    train.check_n_neighbors(n_neighbors, X_query is None)
    queries = None if X_query is None else train.query_blocks(X_query, query_block)
    dist, ind = train.kneighbors(queries, n_neighbors)
    return NeighborGraph(ind, dist, loo=X_query is None)


def _gather_with_recovery(
    train: TrainingIndex,
    queries: Blocks | None,
    futures: list[Future],
    rebuild: Callable[[], list[Future]],
    attempts: int = 2,
) -> list[Any]:
    """Gather ``futures``; when a worker died holding scattered blocks, send them again and rebuild."""
    for attempt in range(attempts + 1):
        try:
            gathered: list[Any] = train.client.gather(futures)
            return gathered
        except Exception as exc:  # noqa: BLE001 - re-raised unless it is a lost block
            if attempt == attempts or not _is_lost_data_error(exc):
                raise
            train.recover()
            if queries is not None and queries.dask_array is None and queries.lost():
                queries.send()
            futures = rebuild()
    raise AssertionError("unreachable")  # pragma: no cover
