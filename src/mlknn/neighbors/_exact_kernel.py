"""The exact search kernel: ranking keys by GEMM, candidate selection, exact re-ranking.

Used by :class:`~mlknn.neighbors.BruteNeighbors` (``_brute.py``), the radius counts
(``_radius.py``), the re-ranking of the approximate backends (``_approximate.py``)
and the Dask path (``mlknn.distributed``).

Why our own kernel rather than ``sklearn.neighbors.NearestNeighbors``: mlknn's
contract is stricter than scikit-learn's. We need (a) a deterministic tie rule
(equal distances ordered by the lower training index) so that every backend, the
distributed path and the loop references agree exactly, and (b) distances that are
exact enough for duplicates to come out as 0 (the GEMM expansion
``|q|^2 - 2 q.x + |x|^2`` does not give 0 for identical rows).

The algorithm, per chunk of queries (memory bounded by ``working_memory``):

1. one matrix product gives the ranking key ``v = |x|^2 / 2 - q.x`` for every
   (query, training point) pair: the training matrix is stored centred (minus its
   column means: distances do not change, the rounding band shrinks for data far
   from the origin) and augmented with a ``|x|^2 / 2`` column, the queries with a
   ``-1`` column, so the GEMM writes ``v`` directly into a reused buffer. The GEMM
   is float32 for float32 and float64 input alike (step 3 makes the result exact).
   ``v`` orders the training points of a row exactly as the squared distance
   ``|q|^2 + 2 v`` does, so no elementwise pass is needed. Sparse training data
   compute ``X @ q`` instead (see ``_chunk_transposed``);
2. a threshold that is at least the k-th smallest ``v`` of the row, cheaply: the
   columns are split into interleaved groups (column ``j`` belongs to group
   ``j mod B``) and the k-th smallest of the group minima is an upper bound on the
   k-th smallest value (k groups, k distinct values at or below it). Adding twice
   the GEMM rounding bound gives a threshold that certainly admits every true
   neighbour and every tie at the boundary;
3. only groups whose minimum is under the threshold can hold candidates: their
   members are gathered and filtered, and the candidates' squared distances are
   recomputed exactly in float64 (direct differences for dense input), then
   ordered by (distance, index).

Steps 2-3 touch each GEMM output once (the group-minimum reduction); the full-row
selection, the boolean mask and ``nonzero`` over the whole chunk of the first
version are gone (see docs/performance.md for the measurements). No n x n matrix is
allocated: a chunk is ``chunk_rows x n_train``.

Where numba is installed, steps 2-3 of a dense chunk run compiled, one pass per row
(``_compiled.py``, ``_numba_kernels.select_rows``): the same threshold rule, the
exact distances summed in the order of numpy's pairwise sum (``_exact_sqdist``), so
that the answer is bit for bit that of the numpy path below, which stays the
fallback (numba missing, ``MLKNN_NUMBA=0``) and the path of sparse data and of the
symmetric leave-one-out pieces (``_exact_loo.py``).
"""

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..utils._typing import MatrixLike, NDArray, SparseMatrix
from . import _compiled

# The GEMM's keys (float32 for dense data; float32/float64 for sparse), row/column
# indices of candidates.
Keys = NDArray[np.floating[Any]]
Index = NDArray[np.intp]

# Relative rounding error of the GEMM that step 2 must cover, relative to
# |q|^2 + max |x|^2 (in units of v = |x|^2/2 - q.x, so 2x the bound of the expansion).
_GEMM_RTOL = {np.dtype(np.float32): 2e-5, np.dtype(np.float64): 1e-11}
# Query rows per chunk: at least 512, more while the chunk's output stays under
# 16 MiB (fewer Python steps for small training sets), at most 2048; and never above
# ``working_memory``. 512, not 256: the K = d + 1 GEMM packs the whole training
# matrix once per call, and one thread (AVX-512 OpenBLAS, n = 50k) ran the product
# at 76 GFLOP/s with 256 rows, 89 with 512, 94 with 1024 (square 4096^3: 98-101).
_MIN_CHUNK_ROWS = 512
_MAX_CHUNK_ROWS = 2048
_CHUNK_BYTES = 16 << 20
# Sparse training data: a chunk's queries are densified (d x rows) up to this size
# (see fit); beyond it (huge vocabularies) the product stays sparse x sparse.
_DENSE_Q_BYTES = 64 << 20
# Group size of step 2 (columns per group), at most 32: the selection runs over n / m
# minima, and step 3 gathers the m members of about k groups per row. m ~ sqrt(n / 2k)
# balances the two (measured: yeast, n = 1208, k = 10: m = 8 takes a third of the
# time of m = 30 in steps 2-3; at n = 50k the cap of 32 applies).
_GROUP = 32


class _ExactKernel:
    """The fitted key layout and the chunk kernel of exact search (a mixin).

    ``_fit_keys(X)`` stores the training points (already prepared: CSR or
    C-contiguous, L2-normalised for cosine) in the layout step 1 reads;
    ``_chunk`` answers one chunk of queries (squared distances and indices).
    """

    _fit_X: MatrixLike
    _fit_sqnorm: NDArray[np.float64]
    _fit_sqnorm_max: float
    _fit_aug: Keys | None
    _key_X: SparseMatrix | None
    _center: NDArray[np.float64]
    _key_sqnorm: NDArray[np.float64]
    _key_sqnorm_max: float

    def _fit_keys(self, X: MatrixLike) -> None:
        """Store the prepared training points ``X`` in step 1's layout."""
        self._fit_sqnorm = _row_sqnorms(X)
        if sp.issparse(X):
            self._fit_aug = None
            self._fit_X = X
            # Sparse training data: the chunk's keys are computed transposed, as
            # X @ Q.T with the chunk's queries dense (d x rows, cache-resident):
            # scipy's csr_matvecs streams X once and writes contiguous rows, several
            # times faster than Q @ X.T (sparse x sparse, then toarray). float32
            # keys when every stored value is exactly a float32 (binary, counts).
            # Stored augmented, [X, |x|^2 / 2] (one more entry per row), so that the
            # product with [-q; 1] writes v itself: no pass over the (n_fit, rows)
            # keys to subtract, and bit for bit the same keys (the half-norm is the
            # last term of each row's float sum either way).
            key_dtype = X.dtype
            if X.dtype == np.float64 and np.array_equal(X.data.astype(np.float32), X.data):
                key_dtype = np.dtype(np.float32)
            half = (0.5 * self._fit_sqnorm).astype(key_dtype)
            self._key_X = sp.hstack([X.astype(key_dtype), sp.csr_matrix(half[:, None])], format="csr")
        else:
            self._key_X = None
            self._fit_X = X
            # Step 1's keys in float32 on centred data, for float32 and float64
            # input alike: [X - mean, |X - mean|^2 / 2], C-contiguous, read by the
            # GEMM directly. Centring keeps the rounding band (relative to the
            # norms) narrow for data far from the origin; float32 halves the GEMM of
            # float64 input. Exactness comes from the float64 recomputation.
            n, d = X.shape
            self._center = X.mean(axis=0, dtype=np.float64) if n else np.zeros(d)
            aug = np.empty((n, d + 1), dtype=np.float32)
            csq = np.empty(n, dtype=np.float64)
            # Data beyond float32's range become inf here, by design: the inf keys and
            # rounding scale make every point a candidate of the exact float64 pass, so
            # the overflow is expected and its RuntimeWarning says nothing to the user.
            with np.errstate(over="ignore"):
                for a in range(0, n, 1 << 15):
                    b = min(a + (1 << 15), n)
                    np.subtract(X[a:b], self._center, out=aug[a:b, :d], casting="unsafe")
                    block = aug[a:b, :d].astype(np.float64)
                    csq[a:b] = np.einsum("ij,ij->i", block, block)
                aug[:, d] = 0.5 * csq
            self._fit_aug = aug
            self._key_sqnorm = csq  # |x - mean|^2: the rounding scale of the symmetric LOO keys
            self._key_sqnorm_max = float(csq.max(initial=0.0))
        self._fit_sqnorm_max = float(self._fit_sqnorm.max(initial=0.0))

    def _ranking_keys(
        self, Qc: MatrixLike, qn: NDArray[np.float64], buf: Keys | None, loo_offset: int | None = None
    ) -> tuple[Keys, NDArray[np.float64]]:
        """Step 1: ``v = |x|^2 / 2 - q.x`` for every pair, shape (rows, n_fit).

        Also returns, per row, the scale of the keys' rounding error (|q|^2 +
        max |x|^2 in the space the keys were computed in: centred for dense data).
        ``loo_offset``: the queries are training points ``loo_offset, ...``, whose
        centred float32 rows and norms the fit already holds.
        """
        X = self._fit_X
        n_rows = Qc.shape[0]
        if self._fit_aug is not None:
            aug = self._fit_aug
            d = aug.shape[1] - 1
            Qa = np.empty((n_rows, d + 1), dtype=aug.dtype)
            if loo_offset is not None:
                # The same bits as below: float32(mean - x) = -float32(x - mean),
                # and the norms of the same float32 rows.
                rows = slice(loo_offset, loo_offset + n_rows)
                np.negative(aug[rows, :d], out=Qa[:, :d])
                scale = self._key_sqnorm[rows] + self._key_sqnorm_max
            else:
                Qd = Qc.toarray() if sp.issparse(Qc) else Qc
                np.subtract(self._center, Qd, out=Qa[:, :d], casting="unsafe")  # -(q - mean)
                q64 = Qa[:, :d].astype(np.float64)
                scale = np.einsum("ij,ij->i", q64, q64) + self._key_sqnorm_max
            Qa[:, d] = 1.0
            return np.matmul(Qa, aug.T, out=None if buf is None else buf[:n_rows]), scale
        prod = Qc @ X.T
        D = prod.toarray() if sp.issparse(prod) else np.asarray(prod)
        if not D.flags.c_contiguous:
            D = np.ascontiguousarray(D)
        if D.dtype != np.float64 and D.dtype != np.float32:
            D = D.astype(np.float64)
        np.subtract((0.5 * self._fit_sqnorm).astype(D.dtype)[None, :], D, out=D)
        return D, qn + self._fit_sqnorm_max

    def _transposed_keys(self, Qc: MatrixLike) -> Keys:
        """Step 1 for sparse training data: keys laid out (n_fit, rows), as ``X @ q``.

        The chunk's queries are dense (d x rows, cache-resident): scipy's
        csr_matvecs streams X once and writes contiguous rows.
        """
        Xk = self._key_X
        assert Xk is not None, "sparse training data only"
        dt = Xk.dtype
        d = Xk.shape[1] - 1
        Qa = np.empty((d + 1, Qc.shape[0]), dtype=dt)  # [-q; 1], one column per query
        np.negative(Qc.T.toarray() if sp.issparse(Qc) else Qc.T, out=Qa[:d], casting="unsafe")
        Qa[d] = 1.0
        V = np.asarray(Xk @ Qa)  # (n_fit, rows) = |x|^2 / 2 - X q
        if not V.flags.c_contiguous or V.dtype != dt:
            V = np.ascontiguousarray(V, dtype=dt)
        return V

    def _chunk(
        self,
        Qc: MatrixLike,
        qn: NDArray[np.float64],
        loo_offset: int | None,
        k: int,
        buf: Keys | None = None,
        threads: int = 1,
    ) -> tuple[NDArray[np.float64], Index]:
        """Squared distances and indices of the k nearest training points of a chunk.

        ``threads``: threads the compiled selection may use (1 when chunks already
        run in parallel).
        """
        X = self._fit_X
        n_rows = Qc.shape[0]
        key_X = self._key_X
        if key_X is not None and X.shape[1] * n_rows * key_X.dtype.itemsize <= _DENSE_Q_BYTES:
            V, fit_axis = self._transposed_keys(Qc), 0  # (n_fit, rows)
            scale = qn + self._fit_sqnorm_max
        else:
            # (rows, n_fit). The leave-one-out graph in one chunk takes this path
            # too: a plain GEMM on the augmented keys beat numpy's syrk of the Gram
            # matrix plus the subtraction (yeast, 1,208 points: 1.7 vs 3.2 ms on two
            # threads, equal on one).
            (V, scale), fit_axis = self._ranking_keys(Qc, qn, buf, loo_offset), 1
            dense = self._fit_aug is not None and not sp.issparse(Qc)
            mod = _compiled.kernels() if dense and k <= _compiled.MAX_NEIGHBORS else None
            if mod is not None:
                # Steps 2-3 compiled, one pass per row (_numba_kernels.select_rows).
                rtol = _GEMM_RTOL[np.dtype(np.float32)]
                group = _compiled.group_size(X.shape[0], k)
                try:
                    return _compiled.select(mod, V, Qc, X, scale, rtol, loo_offset, k, group, threads)
                except Exception as exc:  # a numba failure at run time: the numpy path
                    _compiled.disable(exc)
        keyed = self._fit_aug if self._fit_aug is not None else key_X
        n_terms = X.shape[1] + 1 if keyed is None else keyed.shape[1]
        if _compiled.keys_out_of_range(scale, V.dtype, n_terms, _GEMM_RTOL.get(np.dtype(V.dtype), 1e-11)):
            # Keys that may be inf, NaN or rounded beyond the band carry no reliable
            # order: every pair is a candidate.
            r, c = np.divmod(np.arange(n_rows * X.shape[0]), X.shape[0])
            if loo_offset is not None:
                keep = c != r + loo_offset
                r, c = r[keep], c[keep]
        else:
            found = _compiled_training_major(V, scale, loo_offset, k) if fit_axis == 0 else None
            r, c = found if found is not None else _candidates(V, scale, loo_offset, k, fit_axis)
        return self._finish(Qc, qn, r, c, k, n_rows)

    def _finish(
        self, Qc: MatrixLike, qn: NDArray[np.float64] | None, r: Index, c: Index, k: int, n_rows: int
    ) -> tuple[NDArray[np.float64], Index]:
        """Exact recomputation on the candidates (r, c), then (row, distance, index) order."""
        exact = _exact_sqdist(Qc, self._fit_X, qn, self._fit_sqnorm, r, c)
        return _topk_sorted(r, c, exact, k, n_rows)


def _compiled_training_major(
    V: Keys, scale: NDArray[np.float64], loo_offset: int | None, k: int
) -> tuple[Index, Index] | None:
    """``_candidates(V, scale, loo_offset, k, 0)`` by ``_numba_sparse.training_major_candidates``.

    The sparse path's float32 keys (binary and count data); None (the numpy path)
    for float64 keys, k above the compiled limit, or without numba. The same rule
    and group size as the numpy path, so the same candidates. The output buffers
    start at 8 k (rows + 64) entries and double while a chunk overflows them.
    """
    mod = _compiled.kernels()
    if mod is None or V.dtype != np.float32 or k > _compiled.MAX_NEIGHBORS or not V.flags.c_contiguous:
        return None
    n_fit, n_rows = V.shape
    band = 2.0 * (_GEMM_RTOL[np.dtype(np.float32)] * np.ascontiguousarray(scale, dtype=np.float64))
    offset = -1 if loo_offset is None else int(loo_offset)
    size = 8 * k * (n_rows + 64)
    while True:
        r = np.empty(size, dtype=np.intp)
        c = np.empty(size, dtype=np.intp)
        try:
            count = mod.training_major_candidates(V, band, k, _group_size(n_fit, k), offset, r, c)
        except Exception as exc:  # a numba failure at run time: the numpy path
            _compiled.disable(exc)
            return None
        if count >= 0:
            return r[:count], c[:count]
        size *= 2


def _unravel(flat: Index, shape: tuple[int, ...], fit_axis: int) -> tuple[Index, Index]:
    """(row, column) of flat positions in a 2-D array whose training axis is ``fit_axis``."""
    a, b = np.divmod(flat, shape[1])
    return (b, a) if fit_axis == 0 else (a, b)


def _candidates(
    V: Keys,
    scale: NDArray[np.float64],
    loo_offset: int | None,
    k: int,
    fit_axis: int,
    cap: NDArray[np.float64] | None = None,
    bound: bool = True,
) -> tuple[Index, Index]:
    """Steps 2-3 of the module docstring on one chunk of ranking keys.

    ``V`` holds the keys, training points along ``fit_axis`` (1: query-major
    ``(rows, n_fit)`` from the dense GEMM; 0: training-major ``(n_fit, rows)`` from
    sparse ``X @ q``); ``scale`` is the per-row rounding scale. Returns the (row,
    training index) pairs that may be among the k nearest (every true neighbour and
    every tie at the boundary), in no particular order.

    ``cap`` (per row, float64, may be +inf) is an upper bound on the row's k-th
    smallest key known from other columns (the symmetric leave-one-out path feeds a
    row its columns piece by piece, ``_exact_loo.py``): the threshold is the smaller
    of the two bounds. ``bound=False`` skips step 2's own bound (the partition) and
    uses ``cap`` alone; so does a block with fewer than k groups.
    """
    n_fit, n_rows = V.shape[fit_axis], V.shape[1 - fit_axis]
    rows = np.arange(n_rows)
    if loo_offset is not None:  # exclude the point itself only
        if fit_axis == 0:
            V[rows + loo_offset, rows] = np.inf
        else:
            V[rows, rows + loo_offset] = np.inf
    # Step 2: an upper bound on the k-th smallest key, from interleaved groups.
    # Without a partition (bound=False) nothing needs many groups: the largest size
    # makes the group minima and their comparison smallest.
    m = _group_size(n_fit, k) if bound else max(1, min(_GROUP, n_fit))
    n_groups = n_fit // m
    body = m * n_groups
    bound = bound and n_groups + n_fit - body >= k
    if m > 1:
        if fit_axis == 0:
            G, tail = V[:body].reshape(m, n_groups, n_rows).min(axis=0), V[body:]
        else:
            G, tail = V[:, :body].reshape(n_rows, m, n_groups).min(axis=1), V[:, body:]
        pool = np.concatenate((G, tail), axis=fit_axis) if body < n_fit and bound else G
    else:
        G = pool = V
    if bound:
        kth = np.partition(pool.T if fit_axis == 0 else pool, k - 1, axis=1)[:, k - 1].astype(np.float64)
        if cap is not None:
            kth = np.minimum(kth, cap)
    else:
        kth = np.broadcast_to(np.inf, n_rows) if cap is None else cap
    thr = _threshold(kth, scale, V.dtype, finite=cap is not None)
    thr_b = thr[None, :] if fit_axis == 0 else thr[:, None]
    # Step 3: members of the groups whose minimum passes, then the tail columns.
    # (Flat indices: 2-D nonzero and 2-D fancy indexing are several times slower.)
    if m == 1:
        return _unravel(np.flatnonzero(V <= thr_b), V.shape, fit_axis)
    gr, gg = _unravel(np.flatnonzero(G <= thr_b), G.shape, fit_axis)
    # Flat positions in V of the passing groups' members, (groups, m): column
    # gg + n_groups j of row gr. Then the members under the row's threshold.
    step = n_groups * (n_rows if fit_axis == 0 else 1)
    base = gg * n_rows + gr if fit_axis == 0 else gr * n_fit + gg
    pos = base[:, None] + step * np.arange(m)
    hit = np.flatnonzero(np.take(V.reshape(-1), pos) <= thr[gr][:, None])
    g, j = np.divmod(hit, m)
    r = gr[g]
    c = gg[g] + n_groups * j
    if body < n_fit:
        tr, tc = _unravel(np.flatnonzero(tail <= thr_b), tail.shape, fit_axis)
        r = np.concatenate((r, tr))
        c = np.concatenate((c, tc + body))
    return r, c


def _threshold(
    kth: NDArray[np.float64], scale: NDArray[np.float64], dtype: np.dtype[Any], finite: bool = False
) -> Keys:
    """Step 2's threshold in the keys' dtype: the bound ``kth`` plus twice the GEMM
    rounding bound. ``finite``: capped at the largest finite value, so that an
    excluded (+inf) entry never passes where no finite bound is known yet (``kth`` =
    +inf, the symmetric path's first pieces)."""
    delta = _GEMM_RTOL.get(np.dtype(dtype), 1e-11) * scale
    thr = (kth + 2.0 * delta + 1e-300).astype(dtype)
    return np.minimum(thr, np.finfo(dtype).max) if finite else thr


def _group_size(n_fit: int, k: int) -> int:
    """Columns per group of step 2: about sqrt(n / 2k), at most 32, and at least
    4k groups (so the k-th group minimum is a tight bound)."""
    return max(1, min(_GROUP, n_fit // (4 * k), int(np.sqrt(n_fit / (2.0 * k)))))


def _topk_sorted(
    rows: NDArray[np.integer[Any]], cols: Index, values: NDArray[np.floating[Any]], k: int, n_rows: int
) -> tuple[NDArray[Any], Index]:
    """The first ``k`` (value, column) pairs of each row in (value, column) order.

    ``rows``, ``cols``, ``values`` list candidate entries in any order; every row
    must have at least ``k``. Returns two ``(n_rows, k)`` arrays.
    """
    counts = np.bincount(rows, minlength=n_rows)
    width = int(counts.max(initial=0))
    if rows.size and width * n_rows <= 4 * rows.size + 32 * n_rows:
        # Few candidates per row (the usual case): a padded (n_rows, width) layout
        # and two row-wise sorts on short rows, several times faster than a
        # three-key lexsort of all candidates. Padding slots hold the largest
        # column index (sorted after every real column) and +inf.
        if np.any(rows[1:] < rows[:-1]):
            order = np.argsort(rows, kind="stable")
            rows, cols, values = rows[order], cols[order], values[order]
        starts = np.cumsum(counts) - counts
        slot = np.arange(rows.size) - starts[rows]
        D = np.full((n_rows, width), np.inf, dtype=values.dtype)
        C = np.full((n_rows, width), np.iinfo(cols.dtype).max, dtype=cols.dtype)
        D[rows, slot] = values
        C[rows, slot] = cols
        # Usually no two of a row's k + 1 smallest values are equal: then the
        # values alone fix the first k and their order, and one sort suffices
        # (a tie anywhere, +inf padding included, takes the two-sort path below).
        by_value = np.argsort(D, axis=1, kind="stable")[:, : k + 1]
        head = np.take_along_axis(D, by_value, axis=1)
        if not np.any(head[:, 1:] == head[:, :-1]):
            return head[:, :k], np.take_along_axis(C, by_value[:, :k], axis=1)
        by_col = np.argsort(C, axis=1, kind="stable")
        D, C = np.take_along_axis(D, by_col, axis=1), np.take_along_axis(C, by_col, axis=1)
        by_value = np.argsort(D, axis=1, kind="stable")[:, :k]  # ties keep column order
        return np.take_along_axis(D, by_value, axis=1), np.take_along_axis(C, by_value, axis=1)
    order = np.lexsort((cols, values, rows))
    cols, values = cols[order], values[order]
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    take = starts[:, None] + np.arange(k)[None, :]
    return values[take], cols[take]


def _map_chunks(work: Callable[[int], object], starts: Sequence[int], workers: int) -> None:
    """``work(start)`` for every chunk start, on ``workers`` threads.

    Chunks in parallel, each with single-threaded BLAS: the selection and exact
    steps (numpy or compiled, GIL released) then run on every core too, instead of
    idling all cores but one between two matrix products. The threads are the
    process-wide pool's (``_compiled.run_items``), the BLAS limit the cached
    controller's: no per-call start-up cost for small searches.
    """
    if workers == 1 or len(starts) <= 1:
        for start in starts:
            work(start)
        return
    with _compiled.blas_single_threaded():
        _compiled.run_items(work, starts, workers)


def _round_toward(values: NDArray[np.float64], dtype: np.dtype[Any], down: bool) -> Keys:
    """``values`` (float64) cast to ``dtype``, rounded down (or up) so that the
    comparison ``key <= result`` in ``dtype`` stays on the safe side."""
    out = np.asarray(values, dtype=np.float64).astype(dtype)
    if down:
        bad = out.astype(np.float64) > values
        out[bad] = np.nextafter(out[bad], dtype.type(-np.inf))
    else:
        bad = out.astype(np.float64) < values
        out[bad] = np.nextafter(out[bad], dtype.type(np.inf))
    return out


def _row_sqnorms(X: MatrixLike) -> NDArray[np.float64]:
    if sp.issparse(X):
        sq: NDArray[np.float64] = np.asarray(X.multiply(X).sum(axis=1), dtype=np.float64).ravel()
        return sq
    X64 = X.astype(np.float64, copy=False)
    dense: NDArray[np.float64] = np.einsum("ij,ij->i", X64, X64)
    return dense


def _l2_normalize(X: MatrixLike) -> MatrixLike:
    norms = np.sqrt(_row_sqnorms(X))
    norms[norms == 0] = 1.0  # an all-zero row stays zero (distance 1 to all)
    if sp.issparse(X):
        # Row scaling of the stored values (the same products as diags(1 / norms) @ X)
        # keeps X's canonical layout: a pair's exact distance is then one function of
        # the two rows, not of which other rows share its block (scipy's binary
        # operations take another summation order on non-canonical operands).
        X = sp.csr_matrix(X)
        inv = np.repeat(1.0 / norms, np.diff(X.indptr))
        out = sp.csr_matrix(((inv * X.data).astype(X.dtype), X.indices.copy(), X.indptr.copy()), shape=X.shape)
        out.has_canonical_format = X.has_canonical_format
        out.eliminate_zeros()  # as the product did
        return out
    return (X / norms[:, None]).astype(X.dtype, copy=False)


def _contiguous_base(X: NDArray[Any]) -> NDArray[Any]:
    """The C-contiguous array whose leading columns X is, or X itself."""
    base = X.base
    if (
        not X.flags.c_contiguous
        and isinstance(base, np.ndarray)
        and base.ndim == 2
        and base.flags.c_contiguous
        and base.dtype == X.dtype
        and base.shape[0] == X.shape[0]
        and base.strides == X.strides
        and base.__array_interface__["data"][0] == X.__array_interface__["data"][0]
    ):
        return base
    return X


def _exact_sqdist(
    Qc: MatrixLike,
    X: MatrixLike,
    qn: NDArray[np.float64] | None,
    xn: NDArray[np.float64] | None,
    r: NDArray[np.integer[Any]],
    c: NDArray[np.integer[Any]],
    block: int | None = None,
) -> NDArray[np.float64]:
    """Squared distances of the pairs (Qc[r], X[c]) in float64, block by block.

    Direct differences, dense or sparse, so that identical rows give exactly 0.
    Dense pairs are summed in numpy's pairwise order (``np.add.reduce``), by the
    compiled kernel where numba is installed (``_compiled.py``), the same bits.
    ``qn`` and ``xn`` are kept in the signature for callers; they are not needed.
    Dense blocks reuse two small buffers (about 256 KiB each): fresh multi-megabyte
    temporaries cost more in page faults than the arithmetic.
    """
    out = np.empty(r.shape[0], dtype=np.float64)
    q_sparse, x_sparse = sp.issparse(Qc), sp.issparse(X)
    d = X.shape[1]
    if block is None:
        block = max(64, (1 << 17) // max(d, 1))
    if not q_sparse and not x_sparse:
        mod = _compiled.kernels()
        if mod is not None:  # the same sums, without the gathered copies
            try:
                mod.pair_sqdist(np.ascontiguousarray(Qc), X, r, c, out)
                return out
            except Exception as exc:  # a numba failure at run time: the numpy path
                _compiled.disable(exc)
    if not q_sparse:
        Q64 = np.ascontiguousarray(Qc, dtype=np.float64)  # one chunk of queries: small
    if not q_sparse and not x_sparse:
        # np.take is several times slower from a strided view: read rows from the
        # contiguous array X is the leading columns of (BruteNeighbors' [X, |x|^2/2]).
        src = _contiguous_base(X)
        qbuf = np.empty((block, d), dtype=np.float64)
        xbuf = np.empty((block, src.shape[1]), dtype=X.dtype)
        for s in range(0, r.shape[0], block):
            m = min(block, r.shape[0] - s)
            qb, xb = qbuf[:m], xbuf[:m]
            np.take(Q64, r[s : s + m], axis=0, out=qb, mode="clip")  # "raise" buffers out
            np.take(src, c[s : s + m], axis=0, out=xb, mode="clip")
            np.subtract(qb, xb[:, :d], out=qb)  # float64 - float32 upcasts inside the ufunc
            # Row sums by np.add.reduce (numpy's pairwise order, which the compiled
            # kernel reproduces), not einsum (whose order depends on the SIMD width).
            np.multiply(qb, qb, out=qb)
            np.add.reduce(qb, axis=1, out=out[s : s + m])
        return out
    if (q_sparse and x_sparse and r.shape[0] and Qc.format == X.format == "csr" and Qc.has_canonical_format
            and X.has_canonical_format):
        mod = _compiled.kernels()
        if mod is not None:  # scipy's sums below, bit for bit, without the row copies
            width = int(np.diff(Qc.indptr).max(initial=0)) + int(np.diff(X.indptr).max(initial=0))
            try:
                mod.sparse_pair_sqdist(Qc.indptr, Qc.indices, Qc.data, X.indptr, X.indices, X.data,
                                       np.ascontiguousarray(r), np.ascontiguousarray(c), width, out)
                return out
            except Exception as exc:  # a numba failure at run time: the scipy path
                _compiled.disable(exc)
    block = max(block, 1 << 12)
    for s in range(0, r.shape[0], block):
        rr, cc = r[s : s + block], c[s : s + block]
        if q_sparse and x_sparse:
            diff = sp.csr_matrix(Qc[rr], dtype=np.float64) - sp.csr_matrix(X[cc], dtype=np.float64)
            v = np.asarray(diff.multiply(diff).sum(axis=1), dtype=np.float64).ravel()
        else:  # mixed: the sparse side is densified block by block
            A = Qc[rr].toarray() if q_sparse else Q64[rr]
            B = X[cc].toarray() if x_sparse else X[cc]
            diff = np.subtract(A, B, dtype=np.float64)
            v = np.einsum("ij,ij->i", diff, diff)
        out[s : s + block] = v
    return out

