"""The line search of the batched Newton-CG (:mod:`mlknn.algorithms._logistic`).

Every label's objective along its Newton step ``d`` is convex in the step
length t; the scores along it are ``s + t Z d``, so no product with Z is needed
per trial. Three ways to a step, cheapest first: the full step where a
curvature bound proves the Armijo decrease (no loss evaluated), a few
safeguarded 1-D Newton steps on the objective along the line where it cannot
(large score changes), and halvings where Armijo still fails.
"""

from collections.abc import Callable
from typing import Protocol

import numpy as np

from ..utils._typing import BoolArray, FloatArray, NDArray

_ARMIJO = 1e-4

#: Safeguarded 1-D Newton steps of the line search where the full step is not certified.
_LINE_NEWTON = 3

#: Halvings of the step before a label's line search gives up (2**-40: no decrease
#: is representable below that on an objective of order 1).
_MAX_HALVINGS = 40


def _loss(S: FloatArray, T: FloatArray) -> FloatArray:
    """Column sums of ``log(1 + exp(s)) - t s`` (the data term, not yet divided by n)."""
    return np.asarray((np.logaddexp(0.0, S) - T * S).sum(axis=0))


def _full_step_certified(M: FloatArray, slope: FloatArray, curv: FloatArray) -> BoolArray:
    """Where the curvature bound proves Armijo for the full step (see :func:`line_search`).

    ``M``: each label's largest ``|score change|`` along the step; ``slope``, ``curv``:
    the objective's first and second derivatives along it at t = 0.
    """
    Mc = np.clip(M, 1e-4, 2.0)
    growth = np.where(M > 1e-4, (np.expm1(Mc) - Mc) / (Mc * Mc), 0.5 + M / 6.0)
    return np.asarray((M <= 2.0) & (slope + curv * growth <= _ARMIJO * slope))


def _armijo(ft: FloatArray, f0: FloatArray, t: FloatArray, slope: FloatArray) -> BoolArray:
    """Armijo's sufficient decrease at step lengths t, with slack for rounding near the
    optimum, where the objective barely moves."""
    return np.asarray(ft <= f0 + _ARMIJO * t * slope + 1e-13 * np.abs(f0))


class LineMoves(Protocol):
    """The passes a line search makes along the steps of its labels (two implementations:
    numpy, ``_logistic.NumpyPasses``, and compiled, ``_logistic_fused.FusedPasses``).

    Each method works on the columns ``cols`` of the scores S and their changes Zd
    along the Newton step (the intercept's included), at step lengths ``t`` (one per
    column of ``cols``).
    """

    def derivatives(self, t: FloatArray, cols: NDArray[np.intp]) -> tuple[FloatArray, FloatArray]:
        """Column sums of ``(p - y) zd`` and ``p (1 - p) zd^2`` at ``p = expit(s + t zd)``."""
        ...

    def loss_at_start(self, cols: NDArray[np.intp]) -> FloatArray:
        """Column sums of the data term ``log(1 + e^s) - y s`` at the current scores."""
        ...

    def loss(self, t: FloatArray, cols: NDArray[np.intp]) -> FloatArray:
        """Column sums of the data term at ``s + t zd`` (a trial the search may accept)."""
        ...

    def accept(self, cols: NDArray[np.intp], ok: BoolArray) -> None:
        """The last trial (of :meth:`loss`) is taken where ``ok`` holds; ``cols`` those columns."""
        ...

    def finish(self, t: FloatArray) -> FloatArray:
        """The new scores ``S + t Zd`` (``t`` = 0 where the search failed); may reuse S."""
        ...


def line_search(
    moves: LineMoves,
    n: int,
    W: FloatArray,
    b: FloatArray,
    step: FloatArray,
    f: FloatArray,
    slope: FloatArray,
    curv: FloatArray | None,
    max_change: FloatArray | None,
    pen: float,
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """Armijo line search per label: the full step where a bound proves it, else a 1-D search, then halvings.

    Parameters
    ----------
    moves : LineMoves
        The passes over the scores along the steps (numpy or compiled).
    n : int
        Training rows (the data term is a mean over them).
    W : ndarray of shape (p, m)
        The labels' current weights.
    b : ndarray of shape (m,)
        Their current intercepts.
    step : ndarray of shape (p + 1, m)
        The Newton directions (weights, then the intercept).
    f : ndarray of shape (m,)
        The objectives at the current points, NaN where not computed yet
        (filled in place where the search needs them).
    slope, curv : ndarray of shape (m,)
        First and second derivatives of the objective along the step at t = 0;
        ``curv`` None (small problems): the plain backtracking from t = 1.
    max_change : ndarray of shape (m,), optional
        Each label's largest ``|score change|`` along the full step (with ``curv``).
    pen : float
        The penalty's weight (its Hessian per weight).

    Returns
    -------
    W, b : ndarray of shapes (p, m) and (m,)
        The new weights and intercepts. A label whose line search fails keeps its
        point (its gradient will not change, so it reaches max_iter and is reported).
    S : ndarray of shape (n, m)
        The new scores.
    f : ndarray of shape (m,)
        The new objectives, NaN for a label whose full step the curvature bound
        accepted (its loss was not evaluated).
    """
    p, m = W.shape
    # The logistic loss l(s) has |l'''| <= l'', so along the step each row's
    # curvature grows at most by exp(M t), M the step's largest score change; then
    # f(1) <= f(0) + slope + curv (e^M - 1 - M) / M^2 (the penalty's exact term,
    # curv / 2 at most, is covered as the factor is >= 1/2). Where that bound
    # already meets Armijo the full step is taken without evaluating the loss
    # (near the optimum every label: it spares an (n, labels) logaddexp pass).
    if curv is None or max_change is None:
        safe = np.zeros(m, dtype=bool)
    else:
        safe = _full_step_certified(max_change, slope, curv)
    f_new = np.full(m, np.nan)
    W = np.where(safe, W + step[:p], W)
    t = np.ones(m)
    todo = np.flatnonzero(~safe)
    if todo.size and curv is not None:
        # Far from the optimum (large score changes) the full Newton step is a
        # poor guess: a few safeguarded 1-D Newton steps on f(t) first, then Armijo.
        Wt, dt = W[:, todo], step[:p, todo]

        def derivatives(tt: FloatArray) -> tuple[FloatArray, FloatArray]:
            return moves.derivatives(tt, todo)

        t[todo] = _bracketed_newton(derivatives, n, (Wt * dt).sum(axis=0), (dt * dt).sum(axis=0), slope[todo], pen)
    unknown = todo[np.isnan(f[todo])]
    if unknown.size:
        Wu = W[:, unknown]
        f[unknown] = moves.loss_at_start(unknown) / n + 0.5 * pen * (Wu * Wu).sum(axis=0)
    for _halving in range(_MAX_HALVINGS):
        if todo.size == 0:
            break
        tt = t[todo]
        Wt = W[:, todo] + tt * step[:p, todo]
        ft = moves.loss(tt, todo) / n + 0.5 * pen * (Wt * Wt).sum(axis=0)
        ok = _armijo(ft, f[todo], tt, slope[todo])
        idx = todo[ok]
        moves.accept(idx, ok)
        f_new[idx] = ft[ok]
        W[:, idx] = Wt[:, ok]
        todo = todo[~ok]
        t[todo] *= 0.5
    if todo.size:  # a failed line search keeps its point
        t[todo] = 0.0
        f_new[todo] = f[todo]
    return W, b + t * step[p], moves.finish(t), f_new


def _bracketed_newton(
    derivatives: Callable[[FloatArray], tuple[FloatArray, FloatArray]],
    n: int,
    wd: FloatArray,
    dd: FloatArray,
    slope: FloatArray,
    pen: float,
) -> FloatArray:
    """A step length near each column's minimum along its step: ``_LINE_NEWTON`` safeguarded 1-D Newton steps from 1.

    The objective is convex along the line, its derivative increasing: a trial
    with a derivative <= 0 becomes the bracket's lower end, one with a positive
    derivative its upper end (the lower end starts at t = 0 with ``slope``). A
    Newton step that leaves the bracket (from the right of a minimum where the
    scores saturate, the curvature is small and Newton overshoots) is replaced
    by the secant step of the derivative between the bracket's ends
    (Illinois-modified regula falsi).

    ``derivatives(t)`` returns the column sums of ``(p - t) z`` and ``p (1 - p) z^2``
    at the step lengths t (before the division by n); ``wd`` and ``dd`` are
    ``w . d`` and ``d . d`` of each column (the penalty's terms).
    """
    m = slope.shape[0]
    t, lo, hi = np.ones(m), np.zeros(m), np.full(m, np.inf)
    glo, ghi = slope.astype(np.float64), np.full(m, np.nan)  # derivatives at lo and hi
    # As if the upper end had moved last: a first trial past the minimum already
    # halves the slope at 0, pulling the secant towards 0 (the overlong first Newton steps).
    prev_left = np.zeros(m, dtype=bool)
    for _ in range(_LINE_NEWTON):
        s1, s2 = derivatives(t)
        d1 = s1 / n + pen * (wd + t * dd)
        d2 = s2 / n + pen * dd
        left = d1 <= 0
        # Illinois: an end kept twice in a row has its derivative halved, so that
        # the secant does not creep towards the other end.
        ghi = np.where(left & prev_left, 0.5 * ghi, ghi)
        glo = np.where(~left & ~prev_left, 0.5 * glo, glo)
        lo, glo = np.where(left, t, lo), np.where(left, d1, glo)
        hi, ghi = np.where(left, hi, t), np.where(left, ghi, d1)
        prev_left = left
        with np.errstate(divide="ignore", invalid="ignore"):
            tn = t - d1 / d2
            secant = lo - glo * (hi - lo) / (ghi - glo)  # in [lo, hi): glo <= 0 < ghi
        inside = (tn >= lo) & (tn <= hi)
        # No upper end yet means every trial had d1 <= 0, where Newton moves right,
        # inside the bracket; only a zero curvature (NaN step) keeps t.
        t = np.where(inside, tn, np.where(np.isfinite(hi), secant, t))
    return t
