"""The batched Newton-CG's large problems with compiled, threaded elementwise passes.

:func:`mlknn.algorithms._logistic._newton_cg` with numpy passes spends about half of a large
problem's time outside the matrix products: expit, the residuals and curvature
weights, the line search's trial scores and losses, each a numpy pass over an
(n, labels) float64 array on one thread, most allocating a fresh temporary of that
size, whose page faults cost as much as the arithmetic. :class:`FusedPasses` gives the
same iteration those passes fused into the few compiled row-block kernels of
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


class FusedPasses:
    """The Newton-CG's passes with the compiled row-block kernels (``_logistic.Passes``).

    One object per batch of m labels over n rows. Two (n, m) work areas are reused
    by every step as views of the live columns' width (fresh arrays per step cost
    page faults worth a third of the passes, and raise the peak): the residuals,
    then (once the gradient has used them) the curvature weights; and the step's
    score changes. The scores live in a third, compacted in place when labels stop.
    """

    def __init__(self, runner: _Passes, n: int, m: int) -> None:
        self.compiled = runner  # the preconditioner's CG products use it too
        self.n = n
        self.work_s = np.empty(n * m)
        self.work_a = np.empty(n * m)
        self.work_zd = np.empty(n * m)

    def _view(self, work: FloatArray, width: int) -> FloatArray:
        return work[: self.n * width].reshape(self.n, width)

    def start(self, Z: MatrixLike, W: FloatArray, b: FloatArray, warm: bool) -> FloatArray:
        """The scores ``Z W + b`` of the starting point (``Z W`` only for a warm start)."""
        S = self._view(self.work_s, b.shape[0])
        S[...] = b
        if warm:
            S += np.asarray(Z @ W)
        return S

    def gradient(self, Z: MatrixLike, S: FloatArray, T: NDArray[Any], W: FloatArray, pen: float) -> FloatArray:
        """The mean objective's gradient (weights, then the intercept), shape (p + 1, m)."""
        n, p = Z.shape
        R = self._view(self.work_a, S.shape[1])
        rsum = self.compiled.residuals(S, T, R)
        g = np.empty((p + 1, S.shape[1]))
        g[:p] = np.asarray(Z.T @ R)
        g[:p] /= n
        g[:p] += pen * W
        g[p] = rsum / n
        return g

    def compact(self, S: FloatArray, keep: NDArray[np.intp]) -> FloatArray:
        """The columns ``keep`` of the scores, moved to the front of their work area."""
        self.compiled.mod.compact_columns(self.work_s, self.n, S.shape[1], keep)  # sequential: in place
        return self._view(self.work_s, keep.size)

    def curvature_weights(self, S: FloatArray) -> FloatArray:
        """``p (1 - p) / n`` at the scores."""
        Dn = self._view(self.work_a, S.shape[1])
        self.compiled.curvature_weights(S, Dn)
        return Dn

    def score_changes(self, Z: MatrixLike, step: FloatArray) -> FloatArray:
        """``Z d`` (the intercept's change is added by :meth:`step_stats`)."""
        p = Z.shape[1]
        Zd = self._view(self.work_zd, step.shape[1])
        if isinstance(Z, np.ndarray):
            np.matmul(Z, step[:p], out=Zd)
        else:
            Zd[...] = Z @ step[:p]
        return Zd

    def step_stats(self, Zd: FloatArray, step: FloatArray, Dn: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Adds the intercept's change to Zd; the data term's curvature along the step
        and the largest score change."""
        curv, max_change = self.compiled.step_stats(Zd, step[-1], Dn)
        return curv, max_change

    def line(self, S: FloatArray, Zd: FloatArray, T: NDArray[Any]) -> "_FusedLine":
        """The passes of one line search along ``Zd`` from ``S`` (S updated in place)."""
        return _FusedLine(self.compiled, S, Zd, T)


class _FusedLine:
    """:class:`~mlknn.algorithms._line_search.LineMoves` compiled: no (n, m) trial arrays;
    the accepted steps are applied to S in place at the end."""

    def __init__(self, runner: _Passes, S: FloatArray, Zd: FloatArray, T: NDArray[Any]) -> None:
        self.runner, self.S, self.Zd, self.T = runner, S, Zd, T

    def derivatives(self, t: FloatArray, cols: NDArray[np.intp]) -> tuple[FloatArray, FloatArray]:
        return self.runner.line_derivatives(self.S, self.Zd, self.T, t, cols)

    def loss_at_start(self, cols: NDArray[np.intp]) -> FloatArray:
        return self.runner.line_loss(self.S, self.Zd, self.T, np.zeros(cols.size), cols)

    def loss(self, t: FloatArray, cols: NDArray[np.intp]) -> FloatArray:
        return self.runner.line_loss(self.S, self.Zd, self.T, t, cols)

    def accept(self, cols: NDArray[np.intp], ok: BoolArray) -> None:
        pass  # the step lengths say it all: applied by finish

    def finish(self, t: FloatArray) -> FloatArray:
        moved = np.flatnonzero(t != 0.0)
        self.runner.step_scores(self.S, self.Zd, t[moved], moved)
        return self.S
