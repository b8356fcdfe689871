"""The exact leave-one-out graph out of core, checkpointed block by block, resumable after a kill.

:func:`checkpointed_graph` runs the blocks of :func:`mlknn.distributed.kneighbors_graph`
on this machine, without Dask: X (an array, or a ``.npy`` file memory-mapped) is read
one training block at a time, the training set's leave-one-out graph is computed one
query block at a time, and each finished query block is written to a cache folder
before the next starts. A run killed at any point (``kill -9`` included) resumes from
the blocks on disk: a block file is written to a temporary name in the same folder
and renamed into place (an atomic rename), so a block file on disk is always complete,
and a half-written temporary is ignored. The result is the same as
``BruteNeighbors().fit(X).kneighbors(None, k)``, bit for bit, for the reasons the
distributed search gives (the same block tasks and the same merge:
``_block_topk`` and :func:`mlknn.neighbors.merge_topk`).

The cache folder holds one subfolder per problem, named by a fingerprint of X (a hash
of its bytes), k, the metric and the block sizes, so a changed input never reuses a
stale block.
"""

import hashlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ..neighbors import NeighborGraph, check_n_neighbors, merge_topk
from ..utils._typing import NDArray
from ._blocks import _check_block, default_train_block
from ._graph import _METRICS, _block_topk, _finish

#: Rows per query block by default: one checkpoint per block (a kill loses at most one).
DEFAULT_QUERY_BLOCK = 8192

#: Bytes of X hashed per step of the fingerprint.
_HASH_STEP = 64 * 2**20

#: ``progress(done, total, computed)``: called after each query block (``computed``:
#: False when the block was read back from the cache).
Progress = Callable[[int, int, bool], None]


def _open(X: Any) -> NDArray[Any]:
    """X as a 2-D float array; a path to a ``.npy`` file is memory-mapped (read-only)."""
    if isinstance(X, (str, os.PathLike)):
        X = np.load(os.fspath(X), mmap_mode="r")
    if not isinstance(X, np.ndarray) or X.ndim != 2 or X.dtype not in (np.float32, np.float64):
        raise ValueError(
            "X must be a 2-D float32 or float64 array or the path of such a .npy file; got "
            f"{type(X).__name__}{' of dtype ' + str(X.dtype) if isinstance(X, np.ndarray) else ''}."
        )
    if X.shape[0] and not np.isfinite(X[: min(X.shape[0], 4096)]).all():
        raise ValueError("X contains NaN or infinity.")
    return X


def _fingerprint(X: NDArray[Any], params: dict[str, Any]) -> str:
    digest = hashlib.blake2b(digest_size=16)
    digest.update(json.dumps({**params, "shape": list(X.shape), "dtype": str(X.dtype)}, sort_keys=True).encode())
    flat = X.reshape(-1) if X.flags.c_contiguous else None
    rows = max(1, _HASH_STEP // max(1, X.shape[1] * X.itemsize))
    for start in range(0, X.shape[0], rows):
        part = flat[start * X.shape[1] : (start + rows) * X.shape[1]] if flat is not None else X[start : start + rows]
        digest.update(np.ascontiguousarray(part).data)
    return digest.hexdigest()


def _write_atomic(path: Path, dist: NDArray[Any], ind: NDArray[Any]) -> None:
    """Write a block so that ``path`` is either absent or complete (rename into place)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            np.savez(fh, distances=dist, indices=ind)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _read(path: Path) -> tuple[NDArray[np.float64], NDArray[np.intp]] | None:
    try:
        with np.load(path) as data:
            return data["distances"], data["indices"]
    except (OSError, ValueError, KeyError):  # unreadable: computed again
        return None


class _Bar:
    """A progress line with elapsed time and ETA on stderr (rewritten in place on a terminal)."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.start = time.perf_counter()
        self.computed = 0
        self.tty = sys.stderr.isatty()
        self.last_tenth = -1

    def __call__(self, done: int, total: int, computed: bool) -> None:
        self.computed += int(computed)
        elapsed = time.perf_counter() - self.start
        # The ETA extrapolates from the blocks computed in this run (read ones are instant).
        left = total - done
        eta = elapsed / self.computed * left if self.computed else 0.0
        line = (f"leave-one-out graph: {done}/{total} blocks ({100 * done / total:.0f} %), "
                f"{elapsed / 60:.1f} min elapsed, about {eta / 60:.1f} min left")
        tenth = 10 * done // total
        if self.tty:
            print("\r" + line, end="\n" if done == total else "", file=sys.stderr, flush=True)
        elif tenth != self.last_tenth:
            print(line, file=sys.stderr, flush=True)
        self.last_tenth = tenth


def checkpointed_graph(
    X: Any,
    n_neighbors: int = 10,
    *,
    cache_dir: str | os.PathLike[str],
    metric: str = "euclidean",
    query_block: int | None = None,
    train_block: int | None = None,
    progress: bool | Progress = True,
) -> NeighborGraph:
    """The exact leave-one-out k-NN graph of X, out of core, resumable from ``cache_dir``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), or str or path
        float32 or float64; a path to a ``.npy`` file is memory-mapped, so only
        one training block is in memory at a time.
    n_neighbors : int, default=10
        The number of neighbours k per point (leave-one-out).
    cache_dir : str or path
        Where the finished blocks are kept (created if needed). Rerunning with
        the same X and settings reads them back instead of computing them.
    metric : {"euclidean", "sqeuclidean", "cosine"}, default="euclidean"
        The distance the neighbours are ranked by.
    query_block : int, optional
        Rows per checkpointed block (default 8192); a kill loses at most one.
    train_block : int, optional
        Rows of X read at once (default: as many as fit in 256 MB).
    progress : bool or callable, default=True
        True: a progress line with elapsed time and ETA on stderr; a callable
        ``progress(done, total, computed)`` is called after every block.

    Returns
    -------
    NeighborGraph
        Equal, bit for bit, to ``BruteNeighbors(metric=metric).fit(X).kneighbors(None, k)``.

    See Also
    --------
    kneighbors_graph : The same blocks on a Dask cluster.

    Examples
    --------
    >>> import numpy as np, tempfile
    >>> from mlknn.distributed import checkpointed_graph
    >>> X = np.random.default_rng(0).normal(size=(100, 4))
    >>> with tempfile.TemporaryDirectory() as cache:
    ...     graph = checkpointed_graph(X, 3, cache_dir=cache, query_block=40, progress=False)
    >>> graph.indices.shape
    (100, 3)
    """
    if metric not in _METRICS:
        raise ValueError(f"The 'metric' parameter must be one of {_METRICS}. Got {metric!r} instead.")
    X = _open(X)
    n = X.shape[0]
    k = check_n_neighbors(n_neighbors, n, True)
    query_block = _check_block(query_block, "query_block") or DEFAULT_QUERY_BLOCK
    train_block = _check_block(train_block, "train_block") or default_train_block(X)
    # Query blocks lie inside training blocks (the leave-one-out rule of _block_topk).
    query_block = min(query_block, train_block)
    params = {"k": k, "metric": metric, "query_block": query_block, "train_block": train_block}
    folder = Path(cache_dir) / f"loo-graph-{_fingerprint(X, params)}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "settings.json").write_text(json.dumps({**params, "n": n, "d": X.shape[1]}))
    starts = [(t, q) for t in range(0, n, train_block) for q in range(t, min(t + train_block, n), query_block)]
    report = _Bar(len(starts)) if progress is True else (progress or None)
    dist = np.empty((n, k))
    ind = np.empty((n, k), dtype=np.intp)
    for done, (t_start, q_start) in enumerate(starts, 1):
        q_stop = min(q_start + query_block, t_start + train_block, n)
        path = folder / f"block-{q_start:012d}.npz"
        saved = _read(path) if path.exists() else None
        computed = saved is None
        if saved is None:
            queries = np.asarray(X[q_start:q_stop])
            parts = []
            for c in range(0, n, train_block):
                own = q_start - c if c == t_start else None
                parts.append(_block_topk(np.asarray(X[c : c + train_block]), queries, k, c, own, metric))
            saved = _finish(merge_topk(k, *parts), metric)
            _write_atomic(path, *saved)
        dist[q_start:q_stop], ind[q_start:q_stop] = saved
        if report is not None:
            report(done, len(starts), computed)
    return NeighborGraph(indices=ind, distances=dist, loo=True)
