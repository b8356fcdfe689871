"""Compiled row-block passes of the batched Newton-CG's large problems (numba), and of MLHiKNN's relevance.

Loaded lazily by :mod:`mlknn.algorithms._logistic_fused`, never at ``import
mlknn``. Each function reads and writes the rows ``lo:hi`` of (n, m) C-ordered
float64 arrays in one pass, where numpy needs one pass (and one temporary array of
n x m) per operation: on delicious (n = 8,052, m up to 983) a Newton step's
elementwise work is about ten such passes, and those temporaries of 63 MB each,
allocated and faulted in afresh, cost as much system time as the passes
themselves. Column sums are returned per row block (``out[j]`` for column j): the
caller adds the blocks' partial sums in a fixed order, so the result does not
depend on how many threads ran the blocks. The functions release the GIL
(``nogil=True``); the caller runs blocks on several Python threads.

The exponentials come from numpy (``np.exp`` and ``np.log1p`` on a block, SIMD
loops: 1.2 ns an entry against 8 ns for a scalar ``math.exp``), written to a
per-thread scratch block ``E`` that the kernels read; the kernels themselves are
arithmetic only.

Columns are addressed through ``cols`` (indices into the arrays' columns), so a
line search can run on the labels that need it without gathering their columns.
"""

from typing import Any

from numba import njit


@njit(cache=True, nogil=True, inline="always")
def _expit(s: float, e: float) -> float:
    # expit(s) from e = exp(-|s|), without overflow for either sign.
    if s >= 0.0:
        return 1.0 / (1.0 + e)
    return e / (1.0 + e)


@njit(cache=True, nogil=True)
def neg_abs_trial(S: Any, Zd: Any, t: Any, cols: Any, lo: int, hi: int, E: Any) -> None:
    """``E[i - lo, c] = -|S[i, j] + t[c] Zd[i, j]|``, ``j = cols[c]``, on rows lo:hi (the caller exponentiates E)."""
    m = cols.shape[0]
    for i in range(lo, hi):
        for c in range(m):
            j = cols[c]
            E[i - lo, c] = -abs(S[i, j] + t[c] * Zd[i, j])


@njit(cache=True, nogil=True)
def neg_abs(S: Any, lo: int, hi: int, E: Any) -> None:
    """``E[i - lo] = -|S[i]|`` on rows lo:hi."""
    m = S.shape[1]
    for i in range(lo, hi):
        for j in range(m):
            E[i - lo, j] = -abs(S[i, j])


@njit(cache=True, nogil=True)
def residuals(S: Any, E: Any, T: Any, R: Any, lo: int, hi: int, rsum: Any) -> None:
    """``R = expit(S) - T`` on rows lo:hi and its column sums; ``E[i - lo] = exp(-|S[i]|)``."""
    m = S.shape[1]
    for j in range(m):
        rsum[j] = 0.0
    for i in range(lo, hi):
        for j in range(m):
            r = _expit(S[i, j], E[i - lo, j]) - T[i, j]
            R[i, j] = r
            rsum[j] += r


@njit(cache=True, nogil=True)
def curvature_weights(S: Any, E: Any, Dn: Any, inv_n: float, lo: int, hi: int) -> None:
    """``Dn = expit(S) (1 - expit(S)) / n`` on rows lo:hi; ``E[i - lo] = exp(-|S[i]|)``."""
    m = S.shape[1]
    for i in range(lo, hi):
        for j in range(m):
            p = _expit(S[i, j], E[i - lo, j])
            Dn[i, j] = p * (1.0 - p) * inv_n


@njit(cache=True, nogil=True)
def step_stats(Zd: Any, shift: Any, Dn: Any, lo: int, hi: int, curv: Any, maxabs: Any) -> None:
    """``Zd += shift`` (the intercept's step) on rows lo:hi; column sums of ``Dn Zd^2`` and max ``|Zd|``."""
    m = Zd.shape[1]
    for j in range(m):
        curv[j] = 0.0
        maxabs[j] = 0.0
    for i in range(lo, hi):
        for j in range(m):
            z = Zd[i, j] + shift[j]
            Zd[i, j] = z
            curv[j] += Dn[i, j] * z * z
            a = abs(z)
            if a > maxabs[j]:
                maxabs[j] = a


@njit(cache=True, nogil=True)
def line_derivatives(S: Any, Zd: Any, T: Any, t: Any, cols: Any, E: Any, lo: int, hi: int, d1: Any, d2: Any) -> None:
    """Column sums over rows lo:hi of ``(p - T) Zd`` and ``p (1 - p) Zd^2``, ``p = expit(S + t Zd)``.

    For the columns ``cols`` (``t[c]``: the step length of ``cols[c]``); ``E[i - lo, c]``
    is ``exp(-|S[i, j] + t[c] Zd[i, j]|)``.
    """
    m = cols.shape[0]
    for c in range(m):
        d1[c] = 0.0
        d2[c] = 0.0
    for i in range(lo, hi):
        for c in range(m):
            j = cols[c]
            z = Zd[i, j]
            p = _expit(S[i, j] + t[c] * z, E[i - lo, c])
            d1[c] += (p - T[i, j]) * z
            d2[c] += p * (1.0 - p) * z * z


@njit(cache=True, nogil=True)
def line_loss(S: Any, Zd: Any, T: Any, t: Any, cols: Any, L: Any, lo: int, hi: int, loss: Any) -> None:
    """Column sums over rows lo:hi of ``log(1 + e^s) - T s``, ``s = S + t Zd``, for the columns ``cols``.

    ``L[i - lo, c] = log1p(exp(-|s|))``, so that ``log(1 + e^s) = max(s, 0) + L``.
    """
    m = cols.shape[0]
    for c in range(m):
        loss[c] = 0.0
    for i in range(lo, hi):
        for c in range(m):
            j = cols[c]
            s = S[i, j] + t[c] * Zd[i, j]
            loss[c] += max(s, 0.0) + L[i - lo, c] - T[i, j] * s


@njit(cache=True, nogil=True)
def step_scores(S: Any, Zd: Any, t: Any, cols: Any, lo: int, hi: int) -> None:
    """``S[:, cols] += t Zd[:, cols]`` on rows lo:hi, in place."""
    m = cols.shape[0]
    for i in range(lo, hi):
        for c in range(m):
            j = cols[c]
            S[i, j] += t[c] * Zd[i, j]


@njit(cache=True, nogil=True)
def scale_by_columns(U: Any, D: Any, cols: Any, lo: int, hi: int) -> None:
    """``U[:, c] *= D[:, cols[c]]`` on rows lo:hi (the CG's curvature weights, without gathering them)."""
    m = cols.shape[0]
    for i in range(lo, hi):
        for c in range(m):
            U[i, c] *= D[i, cols[c]]


@njit(cache=True, nogil=True)
def weighted_rows(ind: Any, w: Any, U: Any, out: Any, lo: int, hi: int) -> None:
    """``out[i] = sum_j w[i, j] U[ind[i, j]]`` on rows lo:hi, the neighbours in their order.

    MLHiKNN's relevance (eqs 5-6) at many labels: the product of the weighted
    neighbour graph with the (n_train, q) memberships, as scipy's CSR product
    computes it (same terms, same order), on several threads.
    """
    k = ind.shape[1]
    q = U.shape[1]
    for i in range(lo, hi):
        for c in range(q):
            out[i, c] = 0.0
        for j in range(k):
            r = ind[i, j]
            wij = w[i, j]
            for c in range(q):
                out[i, c] += wij * U[r, c]


@njit(cache=True, nogil=True)
def compact_columns(flat: Any, n: int, m: int, cols: Any) -> None:
    """In place, the (n, m) row-major array in ``flat[: n m]`` becomes its columns ``cols``
    (increasing), an (n, len(cols)) array in ``flat[: n len(cols)]``.

    Safe in one sequential pass: entry (i, c) is written at ``i len(cols) + c`` and read
    from ``i m + cols[c]``, never below the write and always above every earlier write.
    """
    w = cols.shape[0]
    for i in range(n):
        for c in range(w):
            flat[i * w + c] = flat[i * m + cols[c]]
