"""The exact leave-one-out graph on the symmetric Gram matrix: half the GEMM flops.

The leave-one-out graph of a training set multiplies X with itself, so the matrix of
keys is symmetric if the keys are: this path ranks by ``w_ij = |x_i|^2 / 2 + |x_j|^2
/ 2 - x_i . x_j`` (half the squared distance, in the centred space of
``_layout``), written by one GEMM of ``[-x_i, 1, |x_i|^2 / 2]`` with
``[x_j, |x_j|^2 / 2, 1]`` (K = d + 2). Every pair is computed once (about n^2 d flops
instead of 2 n^2 d), and each computed key serves twice: as a candidate of its row's
point and, read transposed, of its column's.

Per point, running states hold the k smallest keys offered so far; the largest is
an upper bound ``U`` on the point's final k-th key, so an entry only passes when it
is within twice the rounding bound of ``U`` (the rule of ``_kernel.threshold``). The
passing entries are pooled (about n k (1 + ln(n / b)) of them for strips of b
points, pruned against the current bounds whenever the pool passes 4 n k; no n x n
array); at the end each point keeps those within the rounding band of its final
``U``, and the same exact float64 recomputation and (distance, index) ordering as the
plain path (``_kernel.finish``) give the result. Exactness: every threshold is at
least the point's final k-th key plus twice the rounding bound, so every true
neighbour and every tie at the boundary is in the pool; the answer is bit for bit
the plain path's (tested in ``tests/test_exact_loo.py``).

Two ways to compute it, with the same answer:

* compiled (numba; ``_tiled_candidates``): the matrix in tiles small enough for a
  core's L2 cache, each read both ways by one kernel pass right after the product
  wrote it (``_numba_loo``): first every diagonal tile (a strip of points against
  itself, which gives every point a finite bound), then each strip against the
  later points tile by tile. A point's state 0 (its row readings) is written only
  by the worker that owns its strip, its state 1 (its transposed readings) only
  under the lock of its column block, which workers going through the blocks in
  opposite directions seldom contend for; a point's bound is the smaller of its
  states' (either bounds the k-th key of the whole row). At the end each point
  keeps the pooled entries within the rounding band of its own k-th pooled key,
  which is its true k-th key (every key under its final ``U`` was pooled): the
  tightest threshold, whichever thread saw which keys (``_Pool.nearest``);
* numpy (numba missing or failing; ``_blockwise_candidates``): a row block against
  every later point in one product, read twice by ``_kernel.candidates``, one
  running state updated under a lock (a stale ``U`` only loosens a threshold).
"""

import threading
from typing import Any

import numpy as np

from ...utils._threads import blas_single_threaded, map_chunks, run_items
from ...utils._typing import NDArray
from . import _compiled
from ._kernel import GEMM_RTOL, Index, candidates, finish, threshold
from ._layout import KeyLayout, Keys

# The pool is pruned when it passes max(_PRUNE_PER_KEY n k, _PRUNE_MIN) entries.
_PRUNE_PER_KEY = 4
_PRUNE_MIN = 1 << 20

#: Where the symmetric path pays: it halves the GEMM flops but keeps a candidate
#: pool for every row, so the GEMM must dominate the selection: many features, few
#: neighbours. At few features or many neighbours the plain path is faster and the
#: pool takes several times its memory (docs/performance.md, "Figures behind the
#: source's constants", has the measurements behind the two limits).
SYMMETRIC_MIN_FEATURES = 64
SYMMETRIC_MAX_NEIGHBORS = 16


def symmetric_pays(n_samples: int, n_features: int, n_neighbors: int) -> bool:
    """Whether a leave-one-out graph of this shape is faster on the symmetric path."""
    return (
        n_features >= SYMMETRIC_MIN_FEATURES
        and n_neighbors <= SYMMETRIC_MAX_NEIGHBORS
        # The path packs a row and a column index as one int64, row << 32 | column.
        and n_samples < 1 << 31
    )


def symmetric_loo_is_usable_for(layout: KeyLayout, n_queries: int, chunk: int, k: int) -> bool:
    """Whether the leave-one-out graph of ``layout`` takes :func:`symmetric_loo`.

    Dense training points (the float32 keys), more than one chunk of rows (one
    chunk is one plain GEMM already), a shape where the path pays
    (:func:`symmetric_pays`) and keys in the range where their rounding band holds
    (``_compiled.keys_out_of_range``).
    """
    aug = layout.aug
    if aug is None or n_queries <= chunk or not symmetric_pays(aug.shape[0], aug.shape[1] - 1, k):
        return False
    return not _compiled.keys_out_of_range(
        layout.key_sqnorm + layout.key_sqnorm_max, aug.dtype, aug.shape[1], GEMM_RTOL[np.dtype(aug.dtype)]
    )


class _RunningTopK:
    """Per row, the k smallest keys seen so far and their maximum ``cap`` (float64).

    ``cap`` starts at +inf and only decreases; it is rewritten after ``best`` under
    the lock, so a reader without the lock sees, per row, an old or a new valid bound.
    """

    def __init__(self, n: int, k: int, dtype: np.dtype[Any]) -> None:
        self.best: Keys = np.full((n, k), np.inf, dtype=dtype)
        self.cap: NDArray[np.float64] = np.full(n, np.inf)
        self.k = k
        self.lock = threading.Lock()

    def offer(self, rows: Index, keys: Keys) -> None:
        """Merge candidate keys (rows in any order, each (row, column) offered once)."""
        if rows.size == 0:
            return
        k = self.k
        # One sort of (row, key) packed into uint64 (numpy's SIMD sort), several
        # times faster than a two-key lexsort and its gathers.
        packed = np.sort((rows.astype(np.uint64) << np.uint64(32)) | _sortable_bits(keys))
        rows = (packed >> np.uint64(32)).astype(np.intp)
        keys = _from_sortable_bits(packed)
        first = np.flatnonzero(np.concatenate(([True], rows[1:] != rows[:-1])))
        counts = np.diff(np.append(first, rows.size))
        uniq = rows[first]
        # Each row's (up to) k smallest new keys beside its k best: a (rows, 2k) block.
        slot = np.arange(k)
        take = first[:, None] + slot
        valid = slot < counts[:, None]
        with self.lock:
            block = np.full((uniq.size, 2 * k), np.inf, dtype=self.best.dtype)
            block[:, :k] = self.best[uniq]
            block[:, k:][valid] = keys[take[valid]]
            block = np.partition(block, k - 1, axis=1)[:, :k]
            self.best[uniq] = block
            self.cap[uniq] = block.max(axis=1)


def _sortable_bits(keys: Keys) -> NDArray[np.uint64]:
    """float32 keys as uint64 whose unsigned order is the keys' order (sign-magnitude flip)."""
    bits = np.ascontiguousarray(keys, dtype=np.float32).view(np.uint32)
    neg = bits >> np.uint32(31) == 1
    out = np.where(neg, ~bits, bits | np.uint32(0x80000000))
    return out.astype(np.uint64)


def _from_sortable_bits(packed: NDArray[np.uint64]) -> NDArray[np.float32]:
    """The float32 keys back from the low 32 bits of ``packed`` (inverse of ``_sortable_bits``)."""
    bits = (packed & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    pos = bits >> np.uint32(31) == 1
    return np.where(pos, bits & np.uint32(0x7FFFFFFF), ~bits).view(np.float32)


def _prune(
    pool: list[tuple[Index, Index, Keys]], cap: NDArray[np.float64], scale: NDArray[np.float64], dtype: np.dtype[Any]
) -> tuple[Index, Index, Keys]:
    """The pooled entries still within the rounding band of their row's bound ``cap``.

    ``cap`` only decreases, and the threshold is monotone in it, so an entry dropped
    now would be dropped by the final filter too.
    """
    rows = np.concatenate([p[0] for p in pool])
    cols = np.concatenate([p[1] for p in pool])
    keys = np.concatenate([p[2] for p in pool])
    ok = keys <= threshold(cap, scale, dtype)[rows]
    return rows[ok], cols[ok], keys[ok]


def symmetric_loo(
    layout: KeyLayout, k: int, block: int, workers: int
) -> tuple[NDArray[np.float64], Index]:
    """Squared distances and indices of the k nearest other training points of every point.

    ``layout`` holds dense training points (``aug`` set); ``block`` rows per block
    (the plain path's chunk: the numpy path's key buffer is ``block x n``),
    ``workers`` threads. Returns the plain path's answer bit for bit: ``(n, k)``
    float64 squared distances, ascending, ties by the lower index, and their
    ``intp`` indices.
    """
    aug = layout.aug
    assert aug is not None and aug.dtype == np.float32, "the symmetric path needs the dense float32 keys"
    assert aug.shape[0] < 1 << 31, "row and column indices are packed in 32 bits"
    n, d = aug.shape[0], aug.shape[1] - 1
    F = np.empty((n, d + 2), dtype=aug.dtype)  # [x, |x|^2/2, 1] (centred)
    F[:, : d + 1] = aug
    F[:, d + 1] = 1.0
    scale = layout.key_sqnorm + layout.key_sqnorm_max
    mod = _compiled.kernels()
    if mod is not None:
        try:
            pool = _tiled_candidates(mod, F, scale, k, min(block, TILE_ROWS), workers)
            return pool.nearest(layout.X, k, workers)
        except Exception as exc:  # a numba failure at run time: the numpy path
            _compiled.disable(exc)
    pairs = _blockwise_candidates(F, scale, k, block, workers)
    rows = (pairs >> 32).astype(np.intp)
    cols = (pairs & 0xFFFFFFFF).astype(np.intp)
    starts = range(0, n, block)
    edges = np.searchsorted(rows, np.append(np.asarray(starts), n))
    dist = np.empty((n, k), dtype=np.float64)
    ind = np.empty((n, k), dtype=np.intp)
    X = layout.X

    def finish_block(t: int) -> None:
        a, b = starts[t], min(starts[t] + block, n)
        lo, hi = edges[t], edges[t + 1]
        dist[a:b], ind[a:b] = finish(layout, X[a:b], rows[lo:hi] - a, cols[lo:hi], k, b - a)

    map_chunks(finish_block, range(len(starts)), workers)
    return dist, ind


def _blockwise_candidates(F: Keys, scale: NDArray[np.float64], k: int, block: int, workers: int) -> NDArray[np.int64]:
    """The candidate pairs (``row << 32 | column``, sorted) by numpy, block by block
    (the path without numba): row block ``I`` against every later point in one
    product, read both ways by ``_kernel.candidates``, the running state in a
    :class:`_RunningTopK` under a lock."""
    n = F.shape[0]
    state = _RunningTopK(n, k, F.dtype)
    pool: list[tuple[Index, Index, Keys]] = []
    # Entries pooled since the last pruning, and the size that triggers the next:
    # pruning keeps the pool near n (k + band) instead of n k ln(n / b) (large n).
    pooled, limit = [0], [max(_PRUNE_PER_KEY * n * k, _PRUNE_MIN)]
    local = threading.local()

    def keep(rows: Index, cols: Index, keys: Keys) -> None:
        state.offer(rows, keys)
        with state.lock:
            pool.append((rows, cols, keys))
            pooled[0] += rows.size
            if pooled[0] > limit[0]:
                pool[:] = [_prune(pool, state.cap, scale, F.dtype)]
                pooled[0] = pool[0][0].size
                limit[0] = max(limit[0], 2 * pooled[0])

    def step(a: int) -> None:
        b = min(a + block, n)
        m, n_off = b - a, n - b
        A = _negated_keys(F, a, b)
        if n_off:
            buf = getattr(local, "buf", None)
            if buf is None:
                buf = local.buf = np.empty(block * n, dtype=F.dtype)
            V = np.matmul(A, F[b:].T, out=buf[: m * n_off].reshape(m, n_off))
            # Rows of I against every later column (query-major).
            r, c = candidates(V, scale[a:b], None, k, 1, cap=state.cap[a:b])
            keep(r + a, c + b, np.take(V.reshape(-1), r * n_off + c))
        Vd = A @ F[a:b].T
        r, c = candidates(Vd, scale[a:b], 0, k, 1, cap=state.cap[a:b])
        keep(r + a, c + a, np.take(Vd.reshape(-1), r * m + c))
        if n_off:
            # Every later row against the columns of I: the same keys, training-major.
            cap = state.cap[b:]
            r, c = candidates(V, scale[b:], None, k, 0, cap=cap, bound=not np.isfinite(cap).all())
            keep(r + b, c + a, np.take(V.reshape(-1), c * n_off + r))

    map_chunks(step, range(0, n, block), workers)
    # The final thresholds: the same rule as every piece's, on the final bounds.
    rows, cols, _ = _prune(pool, state.cap, scale, F.dtype)
    return np.sort((rows.astype(np.int64) << 32) | cols.astype(np.int64))


def _negated_keys(F: Keys, a: int, b: int) -> Keys:
    """``[-x, 1, |x|^2/2]`` of the points ``a .. b - 1`` (``F`` holds ``[x, |x|^2/2, 1]``):
    their product with ``F`` gives the symmetric keys ``w``."""
    d = F.shape[1] - 2
    A = np.empty((b - a, d + 2), dtype=F.dtype)
    np.negative(F[a:b, :d], out=A[:, :d])
    A[:, d] = 1.0
    A[:, d + 1] = F[a:b, d]
    return A


#: Rows of a tile (at most; the strip height) and columns of a tile: a tile's keys
#: (640 x 640 float32, 1.6 MiB) stay in a core's L2 cache between the product that
#: writes them and the pass that reads them both ways, and the product of such
#: tiles runs near the square GEMM's rate (docs/performance.md, "Symmetric kernel,
#: issue 29 point 6").
TILE_ROWS = 640
TILE_COLS = 640
#: A worker's candidate buffers hold the worst case of this many rows of a tile
#: (every key a candidate both ways); they are emptied into the pool when full.
_ROOM_ROWS = 64


def _cache_aligned(size: int, dtype: np.dtype[Any]) -> Keys:
    """An empty 1-D array that starts on a 64-byte boundary: the kernel's 16-key
    loads then never straddle two cache lines (numpy aligns to 16 bytes only)."""
    per_line = 64 // np.dtype(dtype).itemsize
    raw = np.empty(size + per_line, dtype=dtype)
    skip = (-raw.ctypes.data % 64) // np.dtype(dtype).itemsize
    return raw[skip : skip + size]


class _Pool:
    """The candidates of every tile, as (``row << 32 | column``, key) chunks, a list
    of them per thread (appended and pruned by that thread alone: no lock).

    A thread's list is pruned against the current bounds whenever it passes
    ``max(_PRUNE_PER_KEY n k / threads, _PRUNE_MIN)`` entries since its last
    pruning (the bounds only decrease, so an entry dropped now would fail the final
    filter too): all lists together stay within what one pool of ``_PRUNE_PER_KEY n
    k`` entries took.
    """

    def __init__(
        self, mod: Any, n: int, k: int, best: Keys, scale: NDArray[np.float64], band: NDArray[np.float64],
        threads: int,
    ) -> None:
        self.mod = mod
        self.best, self.scale, self.band = best, scale, band
        self.limit = max(_PRUNE_PER_KEY * n * k // max(threads, 1), _PRUNE_MIN)
        self.parts: list[_PoolPart] = []
        self.local = threading.local()
        self.lock = threading.Lock()  # guards the list of parts only

    def add(self, pairs: NDArray[np.int64], keys: Keys) -> None:
        """Pool a copy of the entries (the caller reuses its buffers)."""
        part = getattr(self.local, "part", None)
        if part is None:
            part = self.local.part = _PoolPart(self.limit)
            with self.lock:
                self.parts.append(part)
        part.pairs.append(pairs.copy())
        part.keys.append(keys.copy())
        part.pooled += pairs.size
        if part.pooled > part.limit:
            self.prune(part)
            part.limit = max(part.limit, 2 * part.pooled)

    def thresholds(self) -> Keys:
        """Every point's threshold now: its bound (the smallest of its states'
        k-th keys) plus twice the rounding bound (``_kernel.threshold``)."""
        bound = self.best[:, :, -1].min(axis=0).astype(np.float64)
        return threshold(bound, self.scale, self.best.dtype)

    def prune(self, part: "_PoolPart") -> None:
        """Keep the entries of a thread's list within the rounding band of their
        row's bound now (``_numba_loo.loo_compact``), as one chunk."""
        thr = self.thresholds()
        kept = [self.mod.loo_compact(p, v, thr) for p, v in zip(part.pairs, part.keys)]
        part.pairs = [np.concatenate([p[:m] for p, m in zip(part.pairs, kept)])]
        part.keys = [np.concatenate([v[:m] for v, m in zip(part.keys, kept)])]
        part.pooled = part.pairs[0].size

    def nearest(self, X: Keys, k: int, workers: int) -> tuple[NDArray[np.float64], Index]:
        """The k nearest other points of every point (``(n, k)`` float64 squared
        distances and indices, the plain path's answer) from the pooled entries
        within the rounding band of the final bounds: the chunks filtered in place
        in parallel (``_numba_loo.loo_compact``), then each thread re-ranks a range
        of points from all of them (``_numba_loo.loo_rerank``): no sort of the pool."""
        mod = self.mod
        n = self.best.shape[1]
        thr = self.thresholds()
        chunks = [(p, v) for part in self.parts for p, v in zip(part.pairs, part.keys)]
        kept = [0] * len(chunks)

        def compact(t: int) -> None:
            kept[t] = mod.loo_compact(chunks[t][0], chunks[t][1], thr)

        map_chunks(compact, range(len(chunks)), workers)
        pairs = np.concatenate([p[:m] for (p, _), m in zip(chunks, kept)] + [np.empty(0, dtype=np.int64)])
        keys = np.concatenate([v[:m] for (_, v), m in zip(chunks, kept)] + [np.empty(0, dtype=self.best.dtype)])
        Q = np.ascontiguousarray(X)  # as _kernel.finish reads the rows: the same bits
        dist = np.empty((n, k), dtype=np.float64)
        ind = np.empty((n, k), dtype=np.intp)
        edges = np.linspace(0, n, workers + 1).astype(np.int64)

        def rank(t: int) -> None:
            lo, hi = int(edges[t]), int(edges[t + 1])
            if lo < hi and mod.loo_rerank(pairs, keys, self.band, lo, hi, Q, X, dist, ind) < k:
                # Cannot happen: every true neighbour is pooled (the module docstring).
                raise RuntimeError("the symmetric path pooled fewer than k candidates for a point")

        map_chunks(rank, range(workers), workers)
        return dist, ind


class _PoolPart:
    """One thread's chunks of the pool (``_Pool``) and the size of its next pruning."""

    def __init__(self, limit: int) -> None:
        self.pairs: list[NDArray[np.int64]] = []
        self.keys: list[Keys] = []
        self.pooled, self.limit = 0, limit


#: Strips handed to a worker together (at most), which read each column tile one
#: after the other. A tile of the training points' keys (640 x d + 2) is packed by
#: the BLAS for every product that reads it; once the keys outgrow the caches, that
#: packing waits on main memory and grows into a large share of the time at a few
#: hundred thousand points (docs/performance.md, "Symmetric kernel at large n").
#: Sharing each tile between the strips of a group reads it from memory once.
STRIPS_PER_GROUP = 16
#: At least this many groups per worker: the first groups are the largest (their
#: strips meet every later point), so enough of them keep the workers' ends even.
_GROUPS_PER_WORKER = 16


def _strips_per_group(n_strips: int, workers: int) -> int:
    """How many strips of rows form one unit of work (see ``STRIPS_PER_GROUP``)."""
    return max(1, min(STRIPS_PER_GROUP, n_strips // (_GROUPS_PER_WORKER * max(1, workers))))


def _tiled_candidates(mod: Any, F: Keys, scale: NDArray[np.float64], k: int, rows: int, workers: int) -> "_Pool":
    """The pool of candidate pairs of the leave-one-out graph
    on the symmetric Gram matrix, tile by tile (``_numba_loo.loo_diagonal``,
    ``loo_tile``): the rows ``I`` of each strip of ``rows`` points against
    themselves, then against every later point in tiles of at most ``TILE_COLS``
    columns, on a grid of column blocks of that width.

    Two running states per point (the k smallest keys offered, ascending; the last
    is the state's bound): state 0 for its row readings, written only by the
    worker that owns its strip, and state 1 for its transposed readings, written
    only under the lock of its column block. A point's bound is the smaller of the
    two, each an upper bound on its final k-th key (they hold keys of distinct
    columns). Every diagonal tile runs first, so every point has a finite bound
    before any off-diagonal tile is read. With several workers, each goes through
    its strip's column blocks in its own direction (half of them backwards), so two
    workers seldom want the same block at once; a busy block is put off to the end
    of the group rather than waited for. A worker takes a group of consecutive
    strips at a time (``_strips_per_group``) and reads each column tile for all of
    them in turn, so the tile comes from main memory once per group.
    """
    n = F.shape[0]
    band = 2.0 * (GEMM_RTOL[np.dtype(F.dtype)] * scale)
    best = np.full((2, n, k), np.inf, dtype=F.dtype)
    pool = _Pool(mod, n, k, best, scale, band, workers)
    starts = list(range(0, n, rows))

    def diagonal(a: int) -> None:
        b = min(a + rows, n)
        V = _negated_keys(F, a, b) @ F[a:b].T
        m = b - a
        pairs, keys = np.empty(m * m, dtype=np.int64), np.empty(m * m, dtype=F.dtype)
        count = mod.loo_diagonal(V, a, _compiled.group_size(m, k), best, band, pairs, keys)
        pool.add(pairs[:count], keys[:count])

    per_group = _strips_per_group(len(starts), workers)
    queue = iter([starts[i : i + per_group] for i in range(0, len(starts), per_group)])
    take = threading.Lock()
    room = 2 * TILE_COLS * _ROOM_ROWS
    locks = [threading.Lock() for _ in range(0, n, TILE_COLS)]

    def worker(t: int) -> None:
        buf = _cache_aligned(rows * TILE_COLS, F.dtype)
        thr_col = _cache_aligned(TILE_COLS, F.dtype)
        pairs, keys = np.empty(room, dtype=np.int64), np.empty(room, dtype=F.dtype)
        count = 0
        while True:
            with take:
                group = next(queue, None)
            if group is None:
                break
            strips = [(a, min(a + rows, n)) for a in group]
            A = [_negated_keys(F, a, b) for a, b in strips]
            first_b = strips[0][1]
            blocks = list(range(first_b // TILE_COLS, len(locks))) if first_b < n else []
            if t % 2:
                blocks.reverse()
            later: list[int] = []
            for wait, todo in ((False, blocks), (True, later)):
                for g in todo:
                    if not locks[g].acquire(blocking=wait):
                        later.append(g)
                        continue
                    try:
                        # The strips of the group read the same column tile one after the
                        # other: it comes from main memory once for all of them.
                        for (a, b), A_s in zip(strips, A):
                            c, e = max(b, g * TILE_COLS), min((g + 1) * TILE_COLS, n)
                            if c >= e:
                                continue
                            V = np.matmul(A_s, F[c:e].T, out=buf[: (b - a) * (e - c)].reshape(b - a, e - c))
                            first = 0
                            while True:
                                first, count = mod.loo_tile(V, a, c, 1, best, band, thr_col, pairs, keys, count, first)
                                if first == b - a:
                                    break
                                pool.add(pairs[:count], keys[:count])
                                count = 0
                    finally:
                        locks[g].release()
        pool.add(pairs[:count], keys[:count])

    with blas_single_threaded():
        run_items(diagonal, starts, workers)
        # The column state starts from the diagonal tile's keys too: the keys of
        # distinct columns, as its later offers (columns before the strip) are,
        # so its k-th is still a bound; most offers then fail at once instead of
        # filling k empty slots per point.
        best[1] = best[0]
        run_items(worker, range(workers), workers)
    return pool
