"""The exact leave-one-out graph on the symmetric Gram matrix: half the GEMM flops.

The leave-one-out graph of a training set multiplies X with itself, so the matrix of
keys is symmetric if the keys are: this path ranks by ``w_ij = |x_i|^2 / 2 + |x_j|^2
/ 2 - x_i . x_j`` (half the squared distance, in the centred space of
``_layout``), written by one GEMM of ``[-x_i, 1, |x_i|^2 / 2]`` with
``[x_j, |x_j|^2 / 2, 1]`` (K = d + 2). Row blocks ``I`` of ``b`` points are processed
once each: one product gives the keys of block ``I`` against every later point
(``b x (n - end of I)``) and one the diagonal block. That output serves twice:

* as query-major keys of the rows of ``I`` (their columns after ``I``);
* read transposed (training-major, ``fit_axis=0`` of ``_kernel.candidates``) as the keys of
  every later row against the columns of ``I``.

So every off-diagonal pair is computed once (about n^2 d flops instead of 2 n^2 d),
and a row receives its columns in pieces: the blocks before its own, one at a time,
then all later columns at once. Per row, a running state (n x k) holds the k
smallest keys seen; its largest is an upper bound ``U`` on the row's final k-th key
(the ``cap`` of ``candidates``), so a piece only passes the entries within twice the
rounding bound of ``min(U, the piece's own bound)``. The passing entries of every
piece are kept (a pool of about n (k + k ln(n / b)) entries, pruned against the
current bounds whenever it passes 4 n k; no n x n array); at the
end each row keeps those within the rounding band of its final ``U``, and the same
exact float64 recomputation and (distance, index) ordering as the plain path
(``_kernel.finish``) give the result. Exactness: each piece's threshold is at
least the row's final k-th key plus twice the rounding bound, so every true
neighbour and every tie at the boundary is in the pool; the answer is bit for bit
the plain path's (tested in ``tests/test_exact_loo.py``).

Threads: row blocks run in parallel (``map_chunks``); the running state is updated
under a lock (a lost or stale ``U`` only loosens a threshold, a torn one could not be
allowed).
"""

import threading
from typing import Any

import numpy as np

from ...utils._threads import map_chunks
from ...utils._typing import NDArray
from . import _compiled
from ._kernel import GEMM_RTOL, Index, candidates, finish, threshold
from ._layout import KeyLayout, Keys

# The pool is pruned when it passes max(4 n k, this many) entries.
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
        # The path packs row and column indices in 32 bits.
        and n_samples < 1 << 32
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
        mod = _compiled.kernels() if self.k <= _compiled.MAX_NEIGHBORS else None
        if mod is not None:  # a compiled replace-the-largest merge: no sort
            with self.lock:
                try:
                    mod.offer_running(self.best, self.cap, rows, np.asarray(keys, dtype=self.best.dtype))
                    return
                except Exception as exc:  # a numba failure at run time: the numpy merge
                    _compiled.disable(exc)
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


#: First size of the compiled piece's output buffers, in k (rows + columns) entries:
#: above what the largest piece (the first, before any cap is known) needs on the
#: shapes where the path pays, so that a buffer rarely grows.
_PIECE_START = 4


def _piece_compiled(
    V: Keys,
    cap_rows: NDArray[np.float64],
    cap_cols: NDArray[np.float64],
    scale_rows: NDArray[np.float64],
    scale_cols: NDArray[np.float64],
    k: int,
    local: threading.local,
) -> tuple[tuple[Index, Index, Keys], tuple[Index, Index, Keys]] | None:
    """Both directions' candidates of an off-diagonal piece by ``_numba_loo.loo_piece``, or None.

    None (the caller takes the numpy path, the same candidates up to the bound
    each direction uses) where numba is unavailable, k is above the compiled
    kernels' limit, or some later point has no finite cap yet (the first pieces:
    the column direction then needs a bound of its own). The thresholds follow
    ``_kernel.threshold``: the same rule as the numpy path's, so the
    final candidate set, and the answer, are the same bit for bit.
    Output buffers are kept per thread in ``local`` and grown when a piece
    overflows them.
    """
    mod = _compiled.kernels()
    if mod is None or k > _compiled.MAX_NEIGHBORS or not np.isfinite(cap_cols).all():
        return None
    rtol = GEMM_RTOL[np.dtype(V.dtype)]
    band_rows = 2.0 * (rtol * scale_rows)
    thr_cols = threshold(cap_cols, scale_cols, V.dtype, finite=True)
    cap_rows = np.array(cap_rows)  # a snapshot: other threads lower the running caps
    n_rows, n_cols = V.shape
    need = getattr(local, "piece_size", _PIECE_START * k * (n_rows + n_cols))
    group = _compiled.group_size(n_cols, k)
    while True:
        out = getattr(local, "piece_out", None)
        if out is None or out[0].shape[0] < need:
            out = local.piece_out = tuple(
                np.empty(need, dtype=dt) for dt in (np.intp, np.intp, V.dtype, np.intp, np.intp, V.dtype)
            )
        try:
            nr, nc = mod.loo_piece(V, cap_rows, band_rows, thr_cols, k, group, *out)
        except Exception as exc:  # a numba failure at run time: the numpy path
            _compiled.disable(exc)
            return None
        if nr >= 0:
            local.piece_size = need
            r, c, key, rt, ct, key_t = out
            return (r[:nr].copy(), c[:nr].copy(), key[:nr].copy()), (rt[:nc].copy(), ct[:nc].copy(), key_t[:nc].copy())
        need = 2 * need + 64


def symmetric_loo(
    layout: KeyLayout, k: int, block: int, workers: int
) -> tuple[NDArray[np.float64], Index]:
    """Squared distances and indices of the k nearest other training points of every point.

    ``layout`` holds dense training points (``aug`` set); ``block`` rows per block
    (the plain path's chunk: the key buffer is ``block x n``), ``workers`` threads.
    Returns the plain path's answer bit for bit: ``(n, k)`` float64 squared
    distances, ascending, ties by the lower index, and their ``intp`` indices.
    """
    aug = layout.aug
    assert aug is not None and aug.dtype == np.float32, "the symmetric path needs the dense float32 keys"
    assert aug.shape[0] < 1 << 32, "row and column indices are packed in 32 bits"
    n, d = aug.shape[0], aug.shape[1] - 1
    F = np.empty((n, d + 2), dtype=aug.dtype)  # [x, |x|^2/2, 1] (centred)
    F[:, : d + 1] = aug
    F[:, d + 1] = 1.0
    scale = layout.key_sqnorm + layout.key_sqnorm_max
    state = _RunningTopK(n, k, aug.dtype)
    pool: list[tuple[Index, Index, Keys]] = []
    # Entries pooled since the last pruning, and the size that triggers the next:
    # pruning keeps the pool near n (k + band) instead of n k ln(n / b) (large n).
    pooled, limit = [0], [max(4 * n * k, _PRUNE_MIN)]
    local = threading.local()

    def keep(rows: Index, cols: Index, keys: Keys) -> None:
        state.offer(rows, keys)
        with state.lock:
            pool.append((rows, cols, keys))
            pooled[0] += rows.size
            if pooled[0] > limit[0]:
                pool[:] = [_prune(pool, state.cap, scale, aug.dtype)]
                pooled[0] = pool[0][0].size
                limit[0] = max(limit[0], 2 * pooled[0])

    def step(a: int) -> None:
        b = min(a + block, n)
        m, n_off = b - a, n - b
        A = np.empty((m, d + 2), dtype=F.dtype)  # [-x, 1, |x|^2/2]
        np.negative(F[a:b, :d], out=A[:, :d])
        A[:, d] = 1.0
        A[:, d + 1] = F[a:b, d]
        if n_off:
            buf = getattr(local, "buf", None)
            if buf is None:
                buf = local.buf = np.empty(block * n, dtype=F.dtype)
            V = np.matmul(A, F[b:].T, out=buf[: m * n_off].reshape(m, n_off))
            both = _piece_compiled(V, state.cap[a:b], state.cap[b:], scale[a:b], scale[b:], k, local)
            if both is not None:  # both directions of the piece in one compiled pass
                (r, c, keys), (rt, ct, keys_t) = both
                keep(r + a, c + b, keys)
            else:
                # Rows of I against every later column (query-major).
                r, c = candidates(V, scale[a:b], None, k, 1, cap=state.cap[a:b])
                keep(r + a, c + b, np.take(V.reshape(-1), r * n_off + c))
        Vd = A @ F[a:b].T
        r, c = candidates(Vd, scale[a:b], 0, k, 1, cap=state.cap[a:b])
        keep(r + a, c + a, np.take(Vd.reshape(-1), r * m + c))
        if n_off:
            # Every later row against the columns of I: the same keys, training-major.
            if both is not None:
                keep(rt + b, ct + a, keys_t)
            else:
                cap = state.cap[b:]
                r, c = candidates(V, scale[b:], None, k, 0, cap=cap, bound=not np.isfinite(cap).all())
                keep(r + b, c + a, np.take(V.reshape(-1), c * n_off + r))

    starts = range(0, n, block)
    map_chunks(step, starts, workers)
    # The final thresholds: the same rule as every piece's, on the final bounds.
    rows, cols, _ = _prune(pool, state.cap, scale, aug.dtype)
    pool.clear()
    packed = np.sort((rows.astype(np.uint64) << np.uint64(32)) | cols.astype(np.uint64))
    rows = (packed >> np.uint64(32)).astype(np.intp)
    cols = (packed & np.uint64(0xFFFFFFFF)).astype(np.intp)
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
