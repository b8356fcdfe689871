"""The compiled kernels of sparse training data (``_kernel.py``'s transposed keys).

The candidate selection on training-major keys (``training_major_candidates``,
the numpy path's rule and group size) and the exact squared distances of sparse
row pairs with scipy's bits (``sparse_pair_sqdist``). The k-th smallest and
numpy's pairwise summation tree are the dense kernels' (``_numba_kernels``).
Loaded with the other kernels by ``_compiled.kernels``; same caching and GIL rules.
"""

from typing import Any

import numpy as np
from numba import njit

from ._numba_kernels import _kth_filtered, _pairwise_leaf, _tree_sum

__all__ = ["sparse_pair_sqdist", "training_major_candidates"]


@njit(cache=True, nogil=True)
def training_major_candidates(V: Any, band: Any, k: int, m: int, loo_offset: int, out_r: Any, out_c: Any) -> int:
    """Steps 2-3 of ``_kernel.candidates`` on training-major keys (sparse data), compiled.

    ``V`` (n_fit, rows), float32: the keys ``X @ [-q; 1]`` of a chunk's queries
    (columns). Column j's threshold is ``float32(kth_j + band[j] + 1e-300)``, kth_j
    the k-th smallest of its interleaved group minima and tail keys (+inf with
    fewer than k of them), the rule of ``_kernel.threshold``; its candidates
    are the entries at or under it. ``loo_offset`` >= 0: query j is training point
    ``j + loo_offset``, whose own entry is set to +inf first (as the numpy path
    does, in place). The group minima are taken along the rows of V, all queries at
    once (contiguous), the k-th per query on the transposed minima.

    Writes (query, training index) of every candidate to ``out_r, out_c`` and
    returns their number, or -1 when the buffers are too small (the caller grows
    them and calls again).
    """
    n_fit, n_rows = V.shape
    if loo_offset >= 0:
        for j in range(n_rows):
            V[j + loo_offset, j] = np.inf
    n_groups = n_fit // m
    body = n_groups * m
    n_pool = n_groups + n_fit - body
    thr = np.empty(n_rows, dtype=np.float32)
    G = np.empty((n_groups, n_rows), dtype=np.float32)
    for t in range(n_groups):
        G[t, :] = V[t, :]
    for g in range(1, m):
        for t in range(n_groups):
            src = V[g * n_groups + t]
            dst = G[t]
            for j in range(n_rows):
                v = src[j]
                p = dst[j]
                dst[j] = v if v < p else p
    if n_pool >= k:
        pool = np.empty((n_rows, n_pool), dtype=np.float32)
        for t in range(n_groups):
            for j in range(n_rows):
                pool[j, t] = G[t, j]
        for i in range(body, n_fit):
            for j in range(n_rows):
                pool[j, n_groups + i - body] = V[i, j]
        scratch = np.empty(n_pool + k, dtype=np.float32)
        for j in range(n_rows):
            kth = _kth_filtered(pool[j], k, scratch)
            thr[j] = np.float32(kth + band[j] + 1e-300)
    else:
        thr[:] = np.inf
    cap = out_r.shape[0]
    count = 0
    for t in range(n_groups):
        gt = G[t]
        for j in range(n_rows):
            tj = thr[j]
            if gt[j] <= tj:
                if count + m > cap:
                    return -1
                for g in range(m):
                    i = g * n_groups + t
                    out_r[count] = j
                    out_c[count] = i
                    count += V[i, j] <= tj
    for i in range(body, n_fit):
        if count + n_rows > cap:
            return -1
        row = V[i]
        for j in range(n_rows):
            out_r[count] = j
            out_c[count] = i
            count += row[j] <= thr[j]
    return count


@njit(cache=True, nogil=True)
def _pairwise(a: Any, stack: Any, vals: Any) -> float:
    """numpy's pairwise sum of the float64 values ``a`` (``_tree_sum`` above 128)."""
    if a.shape[0] <= 128:
        return float(_pairwise_leaf(a))
    return _tree_sum(a, a, True, stack, vals)


@njit(cache=True, nogil=True)
def sparse_pair_sqdist(
    q_ptr: Any, q_ind: Any, q_val: Any, x_ptr: Any, x_ind: Any, x_val: Any, r: Any, c: Any, width: int, out: Any
) -> None:
    """out[p] = |Q[r[p]] - X[c[p]]|^2 for CSR rows with sorted indices, as scipy computes it.

    The bits of ``_kernel.exact_sqdist``'s sparse path: scipy's canonical
    ``csr_minus_csr`` (the differences in index order, exact zeros dropped), then
    ``multiply`` (the squares, zeros dropped), then ``sum(axis=1)``, which is
    ``np.add.reduceat``: the first square plus numpy's pairwise sum of the others.
    ``width``: at least the largest nnz(Q row) + nnz(X row).
    """
    buf = np.empty(width + 1, dtype=np.float64)
    stack = np.empty((64, 3), dtype=np.int64)
    vals = np.empty(64, dtype=np.float64)
    for p in range(r.shape[0]):
        ia, ea = q_ptr[r[p]], q_ptr[r[p] + 1]
        ib, eb = x_ptr[c[p]], x_ptr[c[p] + 1]
        m = 0
        while ia < ea or ib < eb:
            if ib == eb or (ia < ea and q_ind[ia] < x_ind[ib]):
                v = np.float64(q_val[ia])
                ia += 1
            elif ia == ea or x_ind[ib] < q_ind[ia]:
                v = -np.float64(x_val[ib])
                ib += 1
            else:
                v = np.float64(q_val[ia]) - np.float64(x_val[ib])
                ia += 1
                ib += 1
            if v != 0.0:
                s = v * v
                buf[m] = s
                m += s != 0.0
        out[p] = 0.0 if m == 0 else buf[0] + _pairwise(buf[1:m], stack, vals)
