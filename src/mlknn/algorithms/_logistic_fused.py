"""The batched Newton-CG's large problems with compiled, threaded elementwise passes.

:func:`mlknn.algorithms._logistic._newton_cg` spends about half of a large
problem's time outside the matrix products: expit, the residuals and curvature
weights, the line search's trial scores and losses, each a numpy pass over an
(n, labels) float64 array on one thread, most allocating a fresh temporary of that
size, whose page faults cost as much as the arithmetic. Here the same iteration runs with those passes fused
into the few compiled row-block kernels of
:mod:`mlknn.algorithms._logistic_kernels`, run on the BLAS thread count, and the
scores updated in place. The algorithm is the same step for step (Newton
direction, curvature bound, 1-D Newton line minimum, Armijo halvings); only the
rounding of the column sums differs (row blocks, then the blocks in a fixed
order), so the iterates agree with the numpy path's to rounding and both stop at
``tol`` (``tests/test_logistic_fused.py``).

Used when numba is available and enabled (``MLKNN_NUMBA``, see
:mod:`mlknn.neighbors._exact._compiled`) and the problem takes the large path (float32
products); small problems keep the numpy iteration, bit for bit as before.
"""

import importlib
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from ..neighbors._exact import _compiled
from ..utils._threads import submit, threads_for
from ..utils._typing import BoolArray, FloatArray, MatrixLike, NDArray
from ._line_search import _armijo, _bracketed_newton, _full_step_certified
from ._logistic_start import start_point

#: Rows per block of a compiled pass (its partial column sums are added in block order).
_BLOCK_ROWS = 256

_module: ModuleType | None = None
_tried = False


def kernels() -> ModuleType | None:
    """The compiled passes, or None where numba is unavailable or disabled (the numpy iteration then)."""
    global _module, _tried
    if not _compiled.ENABLED or _compiled.kernels() is None:
        return None
    if not _tried:
        try:
            _module = importlib.import_module(f"{__package__}._logistic_kernels")
        except Exception as exc:  # a broken numba cache, ...: the numpy iteration, with one warning
            _compiled.disable(exc)
            _module = None
        _tried = True
    return _module


class _Passes:
    """Runs a pass over fixed row blocks on up to ``threads`` threads; returns its per-block column sums.

    Each thread has a scratch block of ``_BLOCK_ROWS`` rows (grown to the widest
    pass), where numpy's SIMD ``exp`` / ``log1p`` write what the compiled kernels read.
    """

    def __init__(self, mod: ModuleType, n: int, threads: int) -> None:
        self.mod = mod
        self.edges = np.unique(np.r_[np.arange(0, n, _BLOCK_ROWS), n]).astype(np.int64)
        self.n_blocks = self.edges.size - 1
        self.threads = max(1, min(threads, self.n_blocks))
        self.scratch = [np.empty(0) for _ in range(self.threads)]

    def _block_scratch(self, thread: int, rows: int, width: int) -> FloatArray:
        if self.scratch[thread].size < _BLOCK_ROWS * width:
            self.scratch[thread] = np.empty(_BLOCK_ROWS * width)
        return self.scratch[thread][: rows * width].reshape(rows, width)

    def _run(self, block: Callable[..., None], n_out: int, width: int) -> list[FloatArray]:
        """``block(thread, lo, hi, *partials)`` for every row block; the (n_blocks, width) partials."""
        parts: list[FloatArray] = [np.empty((self.n_blocks, width)) for _ in range(n_out)]
        e = self.edges

        def blocks(first: int) -> None:
            for b in range(first, self.n_blocks, self.threads):
                block(first, int(e[b]), int(e[b + 1]), *(part[b] for part in parts))

        if self.threads == 1:
            blocks(0)
        else:
            futures = submit(blocks, [(first,) for first in range(1, self.threads)])
            blocks(0)
            for fut in futures:
                fut.result()
        return parts

    def _exp_trial(
        self,
        thread: int,
        lo: int,
        hi: int,
        S: FloatArray,
        Zd: FloatArray | None,
        t: FloatArray | None,
        cols: NDArray[np.intp] | None,
        log: bool = False,
    ) -> FloatArray:
        """The block's ``exp(-|s|)`` (``log1p`` of it with ``log``), s the scores (``S + t Zd`` on ``cols``)."""
        width = S.shape[1] if cols is None else cols.size
        E = self._block_scratch(thread, hi - lo, width)
        if cols is None:
            self.mod.neg_abs(S, lo, hi, E)
        else:
            self.mod.neg_abs_trial(S, Zd, t, cols, lo, hi, E)
        np.exp(E, out=E)
        if log:
            np.log1p(E, out=E)
        return E

    def residuals(self, S: FloatArray, T: NDArray[Any], R: FloatArray) -> FloatArray:
        """Fills ``R = expit(S) - T``; returns its column sums."""

        def block(thread: int, lo: int, hi: int, rsum: FloatArray) -> None:
            E = self._exp_trial(thread, lo, hi, S, None, None, None)
            self.mod.residuals(S, E, T, R, lo, hi, rsum)

        (rs,) = self._run(block, 1, S.shape[1])
        return np.asarray(rs.sum(axis=0))

    def curvature_weights(self, S: FloatArray, Dn: FloatArray) -> None:
        """Fills ``Dn = expit(S) (1 - expit(S)) / n``."""
        inv_n = 1.0 / S.shape[0]

        def block(thread: int, lo: int, hi: int) -> None:
            E = self._exp_trial(thread, lo, hi, S, None, None, None)
            self.mod.curvature_weights(S, E, Dn, inv_n, lo, hi)

        self._run(block, 0, 0)

    def step_stats(self, Zd: FloatArray, shift: FloatArray, Dn: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Adds ``shift`` to every row of Zd; returns the column sums of ``Dn Zd^2`` and max ``|Zd|``."""

        def block(thread: int, lo: int, hi: int, curv: FloatArray, maxabs: FloatArray) -> None:
            self.mod.step_stats(Zd, shift, Dn, lo, hi, curv, maxabs)

        curv, maxabs = self._run(block, 2, Zd.shape[1])
        return curv.sum(axis=0), maxabs.max(axis=0)

    def line_derivatives(
        self, S: FloatArray, Zd: FloatArray, T: NDArray[Any], t: FloatArray, cols: NDArray[np.intp]
    ) -> tuple[FloatArray, FloatArray]:
        """Column sums of ``(p - T) Zd`` and ``p (1 - p) Zd^2`` at ``p = expit(S + t Zd)``, on ``cols``."""

        def block(thread: int, lo: int, hi: int, d1: FloatArray, d2: FloatArray) -> None:
            E = self._exp_trial(thread, lo, hi, S, Zd, t, cols)
            self.mod.line_derivatives(S, Zd, T, t, cols, E, lo, hi, d1, d2)

        d1, d2 = self._run(block, 2, cols.size)
        return d1.sum(axis=0), d2.sum(axis=0)

    def line_loss(
        self, S: FloatArray, Zd: FloatArray, T: NDArray[Any], t: FloatArray, cols: NDArray[np.intp]
    ) -> FloatArray:
        """Column sums of ``log(1 + e^s) - T s`` at ``s = S + t Zd``, on ``cols``."""

        def block(thread: int, lo: int, hi: int, loss: FloatArray) -> None:
            L = self._exp_trial(thread, lo, hi, S, Zd, t, cols, log=True)
            self.mod.line_loss(S, Zd, T, t, cols, L, lo, hi, loss)

        (loss,) = self._run(block, 1, cols.size)
        return np.asarray(loss.sum(axis=0))

    def step_scores(self, S: FloatArray, Zd: FloatArray, t: FloatArray, cols: NDArray[np.intp]) -> None:
        """``S[:, cols] += t Zd[:, cols]`` in place."""
        self._run(lambda thread, lo, hi: self.mod.step_scores(S, Zd, t, cols, lo, hi), 0, 0)

    def scale_by_columns(self, U: NDArray[Any], D: NDArray[Any], cols: NDArray[np.intp]) -> None:
        """``U[:, c] *= D[:, cols[c]]`` in place."""
        self._run(lambda thread, lo, hi: self.mod.scale_by_columns(U, D, cols, lo, hi), 0, 0)

    def weighted_rows(self, ind: NDArray[Any], w: FloatArray, U: FloatArray) -> NDArray[np.float64]:
        """``out[i] = sum_j w[i, j] U[ind[i, j]]`` (the rows of ind are this runner's rows)."""
        out = np.empty((ind.shape[0], U.shape[1]))
        self._run(lambda thread, lo, hi: self.mod.weighted_rows(ind, w, U, out, lo, hi), 0, 0)
        return out


def runner(n_rows: int) -> _Passes | None:
    """A runner of the compiled passes over ``n_rows`` rows on the BLAS thread count, or None (no numba)."""
    mod = kernels()
    return None if mod is None else _Passes(mod, n_rows, threads_for(None))


def newton_cg_fused(
    Z: MatrixLike,
    T: FloatArray,
    pen: float,
    tol: float,
    max_iter: int,
    precond: Any,
    atol: float,
    passes: _Passes,
    init: tuple[FloatArray, FloatArray] | None = None,
) -> tuple[FloatArray, FloatArray, NDArray[np.int64], BoolArray, BoolArray]:
    """:func:`mlknn.algorithms._logistic._newton_cg` (large path) with the compiled passes.

    Same arguments and returns (``precond`` a ``_logistic._Preconditioner``).
    """
    n, p = Z.shape
    m = T.shape[1]
    W, b = start_point(T, p, init)  # the intercept-only optimum, or a warm start
    work_s = np.empty(n * m)  # the scores, compacted in place when labels stop
    S = work_s.reshape(n, m)
    S[...] = b
    if init is not None:
        S += np.asarray(Z @ W)
    iters = np.zeros(m, dtype=np.int64)
    converged = np.zeros(m, dtype=bool)
    act = np.arange(m)
    separated = np.zeros(m, dtype=bool)
    f = np.full(m, np.nan)
    Ta = T
    # Two (n, m) work areas reused by every step as views of the live columns' width
    # (fresh 63 MB arrays per step cost page faults worth a third of the passes, and
    # raise the peak): the residuals, then (once the gradient has used them) the
    # curvature weights; and the step's score changes.
    work_a, work_zd = np.empty(n * m), np.empty(n * m)

    def view(work: FloatArray, width: int) -> FloatArray:
        return work[: n * width].reshape(n, width)

    for _ in range(max_iter + 1):
        R = view(work_a, act.size)
        rsum = passes.residuals(S, Ta, R)
        g = np.empty((p + 1, act.size))
        g[:p] = np.asarray(Z.T @ R)
        del R
        g[:p] /= n
        g[:p] += pen * W[:, act]
        g[p] = rsum / n
        done = np.abs(g).max(axis=0) <= tol
        last = bool(iters[act[0]] >= max_iter)
        stop = np.ones(act.size, dtype=bool) if last else done
        if stop.any():
            separated[act[stop]] = ((2.0 * Ta[:, stop] - 1.0) * S[:, stop] > 0).all(axis=0)
        converged[act[done]] = True
        if last:
            break
        if done.any():
            keep = np.flatnonzero(~done)
            if keep.size == 0:
                break
            passes.mod.compact_columns(work_s, n, act.size, keep)  # sequential: in place
            S = view(work_s, keep.size)
            act, g, f, Ta = act[keep], g[:, keep], f[keep], Ta[:, keep]
        Dn = view(work_a, act.size)
        passes.curvature_weights(S, Dn)
        d = precond.newton_direction(Dn, g, atol, head=bool(iters[act[0]] > 0), passes=passes)
        Zd = view(work_zd, act.size)
        if isinstance(Z, np.ndarray):
            np.matmul(Z, d[:p], out=Zd)
        else:
            Zd[...] = Z @ d[:p]
        curv, M = passes.step_stats(Zd, d[p], Dn)
        del Dn
        slope = (g * d).sum(axis=0)
        curv += pen * (d[:p] * d[:p]).sum(axis=0)
        W[:, act], b[act], f = _line_search_fused(S, Zd, W[:, act], b[act], d, f, slope, curv, M, Ta, pen, passes)
        iters[act] += 1
    return W, b, iters, converged, separated


def _line_search_fused(
    S: FloatArray,
    Zd: FloatArray,
    Wa: FloatArray,
    ba: FloatArray,
    d: FloatArray,
    f: FloatArray,
    slope: FloatArray,
    curv: FloatArray,
    M: FloatArray,
    Ta: FloatArray,
    pen: float,
    passes: _Passes,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """:func:`mlknn.algorithms._line_search._line_search` with ``curv``, updating S in place.

    ``M`` is each column's largest ``|Zd|``. Returns the new weights, intercepts and
    objectives (NaN where the curvature bound accepted the full step); S holds
    the new scores.
    """
    n, p = S.shape[0], Wa.shape[0]
    m = S.shape[1]
    safe = _full_step_certified(M, slope, curv)  # the full step, without evaluating the loss
    f_new = np.full(m, np.nan)
    Wa = np.where(safe, Wa + d[:p], Wa)
    t = np.ones(m)
    todo = np.flatnonzero(~safe)
    if todo.size:
        Wt, dt = Wa[:, todo], d[:p, todo]

        def derivatives(tt: FloatArray) -> tuple[FloatArray, FloatArray]:
            return passes.line_derivatives(S, Zd, Ta, tt, todo)

        t[todo] = _bracketed_newton(derivatives, n, (Wt * dt).sum(axis=0), (dt * dt).sum(axis=0), slope[todo], pen)
        unknown = todo[np.isnan(f[todo])]
        if unknown.size:
            Wu = Wa[:, unknown]
            f[unknown] = passes.line_loss(S, Zd, Ta, np.zeros(unknown.size), unknown) / n
            f[unknown] += 0.5 * pen * (Wu * Wu).sum(axis=0)
    for _ls in range(40):
        if todo.size == 0:
            break
        tt = t[todo]
        Wt = Wa[:, todo] + tt * d[:p, todo]
        ft = passes.line_loss(S, Zd, Ta, tt, todo) / n + 0.5 * pen * (Wt * Wt).sum(axis=0)
        ok = _armijo(ft, f[todo], tt, slope[todo])
        idx = todo[ok]
        f_new[idx] = ft[ok]
        Wa[:, idx] = Wt[:, ok]
        todo = todo[~ok]
        t[todo] *= 0.5
    if todo.size:  # a failed line search keeps its point
        t[todo] = 0.0
        f_new[todo] = f[todo]
    moved = np.flatnonzero(t != 0.0)
    passes.step_scores(S, Zd, t[moved], moved)
    return Wa, ba + t * d[p], f_new
