"""Steps 2-3 of the exact search: candidate selection and exact re-ranking of one chunk.

The algorithm (the package docstring has the whole of it), per chunk of queries:
step 1 (``_layout.py``) gives the ranking keys ``v = |x|^2 / 2 - q.x``; then

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

Steps 2-3 touch each key once (the group-minimum reduction) rather than selecting
over whole rows or masking the whole chunk. No n x n matrix is allocated: a chunk
is ``chunk_rows x n_train``.

Where numba is installed, steps 2-3 of a dense chunk run compiled, one pass per row
(``_compiled.py``, ``_numba_kernels.select_rows``): the same threshold rule, the
exact distances summed in the order of numpy's pairwise sum (``exact_sqdist``), so
that the answer is bit for bit that of the numpy path below, which stays the
fallback (numba missing, ``MLKNN_NUMBA=0``) and the path of sparse data and of the
symmetric leave-one-out pieces (``_loo.py``).
"""

from typing import Any

import numpy as np
import scipy.sparse as sp

from ...utils._budget import WORK_BYTES
from ...utils._typing import MatrixLike, NDArray
from . import _compiled
from ._layout import KeyLayout, Keys

#: Row or column indices of candidates.
Index = NDArray[np.intp]

#: Relative rounding error of the GEMM that step 2 must cover, relative to
#: |q|^2 + max |x|^2 (in units of v = |x|^2/2 - q.x, so 2x the bound of the expansion).
GEMM_RTOL = {np.dtype(np.float32): 2e-5, np.dtype(np.float64): 1e-11}
#: Query rows per chunk: at least 512, more while the chunk's output stays under
#: 16 MiB (fewer Python steps for small training sets), at most 2048; and never above
#: ``working_memory``. Not fewer than 512: the GEMM of inner dimension d + 1 packs the
#: whole training matrix once per call, so short chunks pay the packing more often
#: than the product (docs/performance.md, "Figures behind the source's constants").
MIN_CHUNK_ROWS = 512
MAX_CHUNK_ROWS = 2048
CHUNK_BYTES = WORK_BYTES
# Sparse training data: a chunk's queries are densified (d x rows) up to this size;
# beyond it (huge vocabularies) the product stays sparse x sparse.
_DENSE_Q_BYTES = 4 * WORK_BYTES
# Group size of step 2 (columns per group), at most 32: the selection runs over n / m
# minima, and step 3 gathers the m members of about k groups per row, so
# m ~ sqrt(n / 2k) balances the two; the cap applies from a few thousand points.
_GROUP = 32


def search_chunk(
    layout: KeyLayout,
    Qc: MatrixLike,
    qn: NDArray[np.float64],
    loo_offset: int | None,
    k: int,
    buf: Keys | None = None,
    threads: int = 1,
) -> tuple[NDArray[np.float64], Index]:
    """Squared distances and indices of the k nearest training points of one chunk.

    Parameters
    ----------
    layout : KeyLayout
        The fitted training points.
    Qc : ndarray or sparse matrix of shape (rows, n_features)
        A chunk of prepared queries.
    qn : ndarray of shape (rows,), float64
        Their squared norms.
    loo_offset : int or None
        Leave-one-out: row i is training point ``i + loo_offset`` and excludes it.
    k : int
        Neighbours per row.
    buf : ndarray, optional
        The key buffer the dense GEMM writes into (``KeyLayout.ranking_keys``).
    threads : int, default=1
        Threads the compiled selection may use (1 when chunks already run in
        parallel).

    Returns
    -------
    sqdist : ndarray of shape (rows, k), float64
        Ascending, ties by the lower index.
    indices : ndarray of shape (rows, k), intp
    """
    X = layout.X
    n_rows = Qc.shape[0]
    key_X = layout.key_X
    if key_X is not None and X.shape[1] * n_rows * key_X.dtype.itemsize <= _DENSE_Q_BYTES:
        V, fit_axis = layout.transposed_keys(Qc), 0  # (n_fit, rows)
        scale = qn + layout.sqnorm_max
    else:
        # (rows, n_fit). The leave-one-out graph in one chunk takes this path too:
        # one plain GEMM on the augmented keys is cheaper than a symmetric product
        # of the Gram matrix followed by a subtraction pass.
        (V, scale), fit_axis = layout.ranking_keys(Qc, qn, buf, loo_offset), 1
        if compiled_selection_is_usable_for(layout, Qc, k):
            mod = _compiled.kernels()
            assert mod is not None
            # Steps 2-3 compiled, one pass per row (_numba_kernels.select_rows).
            rtol = GEMM_RTOL[np.dtype(np.float32)]
            group = _compiled.group_size(X.shape[0], k)
            try:
                return _compiled.select(mod, V, Qc, X, scale, rtol, loo_offset, k, group, threads)
            except Exception as exc:  # a numba failure at run time: the numpy path
                _compiled.disable(exc)
    if _compiled.keys_out_of_range(scale, V.dtype, layout.n_terms, GEMM_RTOL.get(np.dtype(V.dtype), 1e-11)):
        # Keys that may be inf, NaN or rounded beyond the band carry no reliable
        # order: every pair is a candidate.
        r, c = np.divmod(np.arange(n_rows * X.shape[0]), X.shape[0])
        if loo_offset is not None:
            keep = c != r + loo_offset
            r, c = r[keep], c[keep]
    else:
        found = _compiled_training_major(V, scale, loo_offset, k) if fit_axis == 0 else None
        r, c = found if found is not None else candidates(V, scale, loo_offset, k, fit_axis)
    return finish(layout, Qc, r, c, k, n_rows)


def compiled_selection_is_usable_for(layout: KeyLayout, Qc: MatrixLike, k: int) -> bool:
    """Whether steps 2-3 of a chunk run compiled (``_numba_kernels.select_rows``).

    Dense training points and queries (query-major float32 keys), ``k`` within the
    compiled selection's limit, and numba available.
    """
    dense = layout.aug is not None and not sp.issparse(Qc)
    return dense and k <= _compiled.MAX_NEIGHBORS and _compiled.kernels() is not None


def finish(
    layout: KeyLayout, Qc: MatrixLike, r: Index, c: Index, k: int, n_rows: int
) -> tuple[NDArray[np.float64], Index]:
    """Step 3's end: exact float64 distances of the candidate pairs ``(Qc[r], X[c])``,
    then the first k of each row in (distance, index) order."""
    exact = exact_sqdist(Qc, layout.X, r, c)
    return topk_sorted(r, c, exact, k, n_rows)


def _compiled_training_major(
    V: Keys, scale: NDArray[np.float64], loo_offset: int | None, k: int
) -> tuple[Index, Index] | None:
    """``candidates(V, scale, loo_offset, k, 0)`` by ``_numba_sparse.training_major_candidates``.

    The sparse path's float32 keys (binary and count data); None (the numpy path)
    for float64 keys, k above the compiled limit, or without numba. The same rule
    and group size as the numpy path, so the same candidates. The output buffers
    start at 8 k (rows + 64) entries and double while a chunk overflows them.
    """
    mod = _compiled.kernels()
    if mod is None or V.dtype != np.float32 or k > _compiled.MAX_NEIGHBORS or not V.flags.c_contiguous:
        return None
    n_fit, n_rows = V.shape
    band = 2.0 * (GEMM_RTOL[np.dtype(np.float32)] * np.ascontiguousarray(scale, dtype=np.float64))
    offset = -1 if loo_offset is None else int(loo_offset)
    size = 8 * k * (n_rows + 64)
    while True:
        r = np.empty(size, dtype=np.intp)
        c = np.empty(size, dtype=np.intp)
        try:
            count = mod.training_major_candidates(V, band, k, group_size(n_fit, k), offset, r, c)
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


def candidates(
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
    row its columns piece by piece, ``_loo.py``): the threshold is the smaller
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
    m = group_size(n_fit, k) if bound else max(1, min(_GROUP, n_fit))
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
    thr = threshold(kth, scale, V.dtype, finite=cap is not None)
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


def threshold(
    kth: NDArray[np.float64], scale: NDArray[np.float64], dtype: np.dtype[Any], finite: bool = False
) -> Keys:
    """Step 2's threshold in the keys' dtype: the bound ``kth`` plus twice the GEMM
    rounding bound. ``finite``: capped at the largest finite value, so that an
    excluded (+inf) entry never passes where no finite bound is known yet (``kth`` =
    +inf, the symmetric path's first pieces)."""
    delta = GEMM_RTOL.get(np.dtype(dtype), 1e-11) * scale
    thr = (kth + 2.0 * delta + 1e-300).astype(dtype)
    return np.minimum(thr, np.finfo(dtype).max) if finite else thr


def group_size(n_fit: int, k: int) -> int:
    """Columns per group of step 2: about sqrt(n / 2k), at most 32, and at least
    4k groups (so the k-th group minimum is a tight bound)."""
    return max(1, min(_GROUP, n_fit // (4 * k), int(np.sqrt(n_fit / (2.0 * k)))))


def topk_sorted(
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


def round_toward(values: NDArray[np.float64], dtype: np.dtype[Any], down: bool) -> Keys:
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


def exact_sqdist(
    Qc: MatrixLike,
    X: MatrixLike,
    r: NDArray[np.integer[Any]],
    c: NDArray[np.integer[Any]],
    block: int | None = None,
) -> NDArray[np.float64]:
    """Squared distances of the pairs (Qc[r], X[c]) in float64, block by block.

    Direct differences, dense or sparse, so that identical rows give exactly 0.
    Dense pairs are summed in numpy's pairwise order (``np.add.reduce``), by the
    compiled kernel where numba is installed (``_compiled.py``), the same bits.
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

