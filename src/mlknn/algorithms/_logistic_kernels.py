"""Compiled row-block passes of the batched Newton-CG's large problems (numba).

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

Columns are addressed through ``cols`` (indices into the arrays' columns), so a
line search can run on the labels that need it without gathering their columns.
"""

import math
from typing import Any

from numba import njit


@njit(cache=True, nogil=True, inline="always")
def _expit(x: float) -> float:
    # 1 / (1 + e^-x) without overflow for either sign.
    if x >= 0.0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


@njit(cache=True, nogil=True, inline="always")
def _log1pexp(x: float) -> float:
    # log(1 + e^x) (numpy's logaddexp(0, x)) without overflow.
    if x > 0.0:
        return x + math.log1p(math.exp(-x))
    return math.log1p(math.exp(x))


@njit(cache=True, nogil=True)
def residuals(S: Any, T: Any, R: Any, Dn: Any, inv_n: float, lo: int, hi: int, rsum: Any, dsum: Any) -> None:
    """``R = expit(S) - T`` and ``Dn = expit(S) (1 - expit(S)) / n`` on rows lo:hi; their column sums."""
    m = S.shape[1]
    for j in range(m):
        rsum[j] = 0.0
        dsum[j] = 0.0
    for i in range(lo, hi):
        for j in range(m):
            p = _expit(S[i, j])
            r = p - T[i, j]
            w = p * (1.0 - p) * inv_n
            R[i, j] = r
            Dn[i, j] = w
            rsum[j] += r
            dsum[j] += w


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
def line_derivatives(S: Any, Zd: Any, T: Any, t: Any, cols: Any, lo: int, hi: int, d1: Any, d2: Any) -> None:
    """Column sums over rows lo:hi of ``(p - T) Zd`` and ``p (1 - p) Zd^2``, ``p = expit(S + t Zd)``.

    For the columns ``cols`` (``t[c]``: the step length of ``cols[c]``).
    """
    m = cols.shape[0]
    for c in range(m):
        d1[c] = 0.0
        d2[c] = 0.0
    for i in range(lo, hi):
        for c in range(m):
            j = cols[c]
            z = Zd[i, j]
            p = _expit(S[i, j] + t[c] * z)
            d1[c] += (p - T[i, j]) * z
            d2[c] += p * (1.0 - p) * z * z


@njit(cache=True, nogil=True)
def line_loss(S: Any, Zd: Any, T: Any, t: Any, cols: Any, lo: int, hi: int, loss: Any) -> None:
    """Column sums over rows lo:hi of ``log(1 + e^s) - T s``, ``s = S + t Zd``, for the columns ``cols``."""
    m = cols.shape[0]
    for c in range(m):
        loss[c] = 0.0
    for i in range(lo, hi):
        for c in range(m):
            j = cols[c]
            s = S[i, j] + t[c] * Zd[i, j]
            loss[c] += _log1pexp(s) - T[i, j] * s


@njit(cache=True, nogil=True)
def step_scores(S: Any, Zd: Any, t: Any, cols: Any, lo: int, hi: int) -> None:
    """``S[:, cols] += t Zd[:, cols]`` on rows lo:hi, in place."""
    m = cols.shape[0]
    for i in range(lo, hi):
        for c in range(m):
            j = cols[c]
            S[i, j] += t[c] * Zd[i, j]
