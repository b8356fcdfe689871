"""One L2-penalised logistic regression per label, all labels solved together.

MLHiKNN and IBLR end in q logistic regressions that share one (n, p) design
matrix Z and differ only in their 0/1 target column. Fitting them one at a time
with scikit-learn's ``newton-cholesky`` forms a (p, p) Hessian per label and
Newton step, O(n p^2) each, i.e. O(n p^2 q) = O(n q^3) per iteration when p ~ q
(hours at q = 983); lbfgs at a tight tolerance needs thousands of
matrix-vector passes per label. Here every step of every label is a column of
one matrix product with Z, so the work is BLAS-3 ((n, p) x (p, L) products) and
no (p, p) matrix is formed per label.

The method is a truncated Newton (Newton-CG) iteration run column by column:

* objective of label l, on the mean scale of scikit-learn's solvers,
  ``f_l(w, b) = (1/n) sum_i [log(1 + exp(s_i)) - y_il s_i] + ||w||^2 / (2 C n)``
  with ``s = Z w + b`` (the intercept is not penalised), the minimiser of
  ``LogisticRegression(C=C)``;
* the Newton direction solves ``H_l d = -g_l`` by preconditioned conjugate
  gradients, each CG step one product ``Z^T (D_l * (Z v))`` for all labels at
  once; the preconditioner is ``c_l G + I / (C n)`` with ``G = [Z 1]^T [Z 1] / n``
  (one eigendecomposition shared by all labels) and ``c_l`` the mean curvature
  weight of label l, exact when the weights ``D_l`` are constant. For dense
  inputs the CG runs in the eigenbasis of G (``G = V diag(lam) V^T``), on the
  rotated inputs ``[Z 1] V`` formed once: there the preconditioner is
  diagonal, so a CG step costs the two products with the rotated inputs and no
  (p, p) x (p, L) products (same iterates as in the original basis, up to
  rounding; a fifth of the CG time at q = 983);
* on large problems (float32 products) the preconditioner is, in the ``_HEAD``
  leading eigen-directions of G, each label's exact Hessian block (all labels'
  blocks from one (pairs, n) x (n, L) product per Newton step, inverted as a
  stack of (h, h) matrices): the curvature weights of a rare label are far from
  constant, and most of that shows in the leading directions (delicious: CG
  steps per label 31 -> 20 for about 0.6 CG step of work per Newton step);
* a line search per label on ``s + t Z d`` (no extra product with Z per trial):
  the full step is taken without evaluating the loss where a curvature bound
  proves the Armijo decrease (see :func:`mlknn.algorithms._line_search.line_search`; every label near the
  optimum); elsewhere (large score changes, the first Newton steps) three
  safeguarded 1-D Newton steps on the objective along the line propose t, which
  Armijo checks and halves if needed;
* a label stops when ``max |grad f_l| <= tol`` (the gradient of the mean
  objective, intercept included); labels that have stopped leave the batch.

Work that only the stopping labels need is done for them only: the
separation test runs on the labels that stop, the targets and scores of the
labels still running are kept compact, and the full Newton step is tried for
all labels at once, backtracking only the labels that fail it.

One iteration (``_newton_cg``) and one line search
(:func:`mlknn.algorithms._line_search.line_search`) serve every problem; they are
generic over the object that makes the passes over the (n, labels) scores:
:class:`NumpyPasses` here, or, on large problems where numba is available,
``_logistic_fused.FusedPasses`` (compiled and threaded, the scores updated in place).

Labels are processed in batches whose (n, batch) float64 work arrays fit in
``_BATCH_BYTES``. No Python loop over instances; the loop over labels is only
the batching.
"""

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np
import scipy.sparse as sp
from scipy.special import expit
from threadpoolctl import threadpool_limits

from ..utils._budget import WORK_BYTES
from ..utils._typing import ArrayLike, BoolArray, FloatArray, MatrixLike, NDArray
from . import _logistic_fused
from ._line_search import LineMoves, _loss, line_search
from ._logistic_start import start_point

#: Bytes the (n, batch) work arrays of one batch of labels may take (about 8 live).
_BATCH_BYTES = 32 * WORK_BYTES

#: Largest number of inputs (+ intercept) for the eigendecomposition preconditioner;
#: above it the diagonal of the Hessian is used instead.
_EIGEN_MAX = 4096

#: Conjugate-gradient steps per Newton step (per label), small problems.
_MAX_CG = 25

#: The same on large problems (float32 products). A CG cut short gives a poor
#: Newton direction, and the Newton iteration then converges only linearly: IBLR
#: with a weak penalty on many labels needs tens of CG steps per Newton step, and a
#: cap of 25 multiplied its Newton steps; 150 lets the CG finish. MLHiKNN's CGs stop
#: below 25 anyway, so its fits do not change (docs/notes/iblr.md has the measurements).
_MAX_CG_LARGE = 150

#: On large problems a CG stops once its residual is <= this times ``tol`` (2-norm,
#: which bounds the largest component the stopping test reads): solving further
#: cannot help the stop (10 % fewer CG steps on delicious, same distance to the optimum).
_CG_ATOL = 0.5


#: Leading eigen-directions of G in which the preconditioner is each label's exact Hessian block.
_HEAD = 48

#: Large problems: the CG's operator keeps the data term only in the eigen-directions
#: j of G where ``c_max lam_j > _TAIL_EPS * pen`` (``c_max`` the largest mean curvature
#: weight of the live labels); below, where the penalty outweighs the data's mean
#: curvature tenfold, it uses the mean-weight model ``c_l lam_j`` (the
#: preconditioner's). See ``_Preconditioner._tail_size``.
_TAIL_EPS = 0.1

#: n * p * (number of labels) from which the CG products run in float32.
_FLOAT32_FROM = 10**8

#: ``H v`` for the live columns ``cols`` of the current weights (the CG's product).
HessVec = Callable[[FloatArray, NDArray[np.intp]], FloatArray]

#: What :func:`fit_logistic_batched` returns: coef, intercept, n_iter, not_converged, separated.
BatchedFit = tuple[FloatArray, FloatArray, NDArray[np.int64], list[int], BoolArray]


def fit_logistic_batched(
    Z: MatrixLike, Y: MatrixLike, labels: ArrayLike, *, C: float, tol: float, max_iter: int,
    init: tuple[FloatArray, FloatArray] | None = None,
) -> BatchedFit:
    """Fit ``LogisticRegression(C=C)`` on ``(Z, Y[:, l])`` for every l in ``labels``, to ``tol``.

    Parameters
    ----------
    Z : {ndarray, sparse matrix} of shape (n, p)
        Shared inputs (float64).
    Y : ndarray of shape (n, q), 0/1
    labels : array-like of int
        The labels to fit; each must have both classes in ``Y``.
    C : float
        Inverse penalty (``np.inf``: none), as scikit-learn's.
    tol : float
        Stop a label when the largest absolute component of the gradient of its
        mean objective (see the module docstring) is <= tol.
    max_iter : int
        Newton iterations per label.
    init : (coef, intercept) of shapes (len(labels), p) and (len(labels),), optional
        A warm start (``partial_fit``): the iterations of each label start
        there instead of at the intercept-only optimum; a NaN intercept leaves
        that label's default start. The result is converged to ``tol`` either
        way (a different point within it).

    Returns
    -------
    coef : ndarray of shape (len(labels), p)
    intercept : ndarray of shape (len(labels),)
    n_iter : ndarray of shape (len(labels),), int64
        Newton iterations taken.
    not_converged : list of int
        The labels that reached ``max_iter``.
    separated : ndarray of shape (len(labels),), bool
        The fit puts every training row strictly on its own side
        (``(2 y - 1) s > 0``): the data separate the label, and the optimum is
        set by the penalty alone (far out when C is large).
    """
    labels = np.asarray(labels, dtype=np.intp).ravel()
    n, p = Z.shape
    L = labels.shape[0]
    coef = np.zeros((L, p))
    intercept = np.zeros(L)
    n_iter = np.zeros(L, dtype=np.int64)
    separated = np.zeros(L, dtype=bool)
    if L == 0:
        return coef, intercept, n_iter, [], separated
    if sp.issparse(Z):
        Z = sp.csr_matrix(Z, dtype=np.float64)
    else:
        Z = np.ascontiguousarray(Z, dtype=np.float64)
    pen = 0.0 if np.isinf(C) else 1.0 / (float(C) * n)  # Hessian of the penalty, per weight
    # The CG products only shape the Newton direction (an inexact Newton method
    # tolerates relative errors far above float32's); gradients, line searches
    # and the scores stay float64, so the result is converged to ``tol`` in float64.
    # Small problems keep float64 products: there speed does not matter, and an
    # ill-posed (separated) fit would turn float32 rounding, which depends on the
    # row order, into visible differences of its stopping point.
    dtype = np.float32 if n * p * L >= _FLOAT32_FROM else np.float64
    # The head blocks, the CG's absolute floor and the line search's shortcuts
    # pay off on large problems; small ones keep the plain Newton-CG, where speed
    # does not matter and plain backtracking keeps the iterates simplest to check.
    large = dtype == np.float32
    precond = _Preconditioner(
        Z, pen, dtype, _HEAD if large else 0, _TAIL_EPS if large else 0.0, _MAX_CG_LARGE if large else None
    )
    atol = _CG_ATOL * tol if large else 0.0
    batch = max(1, _BATCH_BYTES // (8 * 8 * max(n, p + 1)))
    not_converged: list[int] = []
    # Large problems run their elementwise passes compiled and threaded where numba is
    # available (the same iteration, see ``_logistic_fused``); small ones stay numpy.
    runner = _logistic_fused.runner(n) if large else None
    for start in range(0, L, batch):
        cols = labels[start : start + batch]
        part = None if init is None else (init[0][start : start + batch], init[1][start : start + batch])
        ops: Passes
        if runner is None:
            T = np.asarray(Y[:, cols], dtype=np.float64)
            ops = NumpyPasses(n, fast=large)
        else:  # the compiled passes read 0/1 targets of any dtype: uint8, 8 times less to read
            T = np.asarray(Y[:, cols], dtype=np.uint8)
            ops = _logistic_fused.FusedPasses(runner, n, T.shape[1])
        W, b, it, ok, sep = _newton_cg(Z, T, pen, tol, max_iter, precond, atol, ops, part)
        coef[start : start + batch] = W.T
        intercept[start : start + batch] = b
        n_iter[start : start + batch] = it
        separated[start : start + batch] = sep
        not_converged.extend(int(c) for c in cols[~ok])
    return coef, intercept, n_iter, not_converged, separated


class _Preconditioner:
    """``(c_l G + pen I)^{-1}`` for every label l, from one eigendecomposition of G.

    ``G = [Z 1]^T [Z 1] / n`` is the Hessian of the loss when every curvature
    weight is 1; with weights ``D_l`` of mean ``c_l`` the Hessian is about
    ``c_l G``, exactly when ``D_l`` is constant. (The exact diagonal of each
    label's Hessian in that eigenbasis saved 4 % of the CG steps on delicious
    for one extra pass over the rows per Newton step: a net loss.) With
    ``head = h > 0`` the leading h x h block (the h largest eigenvalues of G) is
    instead each label's exact Hessian block ``Zh^T D_l Zh / n`` plus the
    penalty, inverted per label: block-Jacobi in the eigenbasis. Measured on
    delicious (q = 983, the CG steps per label at one Newton step): 7.6 with
    the mean weights, 7.6 with each label's exact diagonal, 5.5 / 4.9 / 4.1 /
    3.3 with a head of 16 / 32 / 64 / 128; a Woodbury correction for each
    label's 16 / 32 / 64 rows of largest weight gave 6.6 / 6.3 / 5.9. For dense Z
    the CG runs in the eigenbasis (``rotated``), on ``Zt = [Z 1] V`` in the
    products' dtype, where the preconditioner is the diagonal
    ``1 / (c_l lam + floor)``; for sparse Z (whose rotation would be dense) it
    is applied in the original basis, two (p, p) x (p, L) products per CG
    step. Above ``_EIGEN_MAX`` inputs the diagonal of the Hessian (Jacobi) is
    used instead.
    """

    def __init__(
        self, Z: MatrixLike, pen: float, dtype: Any, head: int = 0, tail_eps: float = 0.0, max_cg: int | None = None
    ) -> None:
        n, p = Z.shape
        self.pen = pen
        self.max_cg = max_cg  # the CG's step cap (None: ``_MAX_CG``)
        self.tail_eps = tail_eps
        self.floor = max(pen, 1e-12)  # keeps the intercept direction (unpenalised) invertible
        self.eigen = p + 1 <= _EIGEN_MAX
        self.rotated = self.eigen and not sp.issparse(Z)
        self.c = np.zeros(0)
        self.diag = np.zeros((0, 0))
        self.head = np.zeros(0, dtype=np.intp)
        self.use_head = False
        self.work = np.empty(0, dtype=dtype)  # see newton_direction
        if self.eigen:
            ZtZ = Z.T @ Z
            ZtZ = ZtZ.toarray() if sp.issparse(ZtZ) else ZtZ
            s = np.asarray(Z.sum(axis=0)).ravel()
            G = np.empty((p + 1, p + 1))
            G[:p, :p] = ZtZ
            G[:p, p] = G[p, :p] = s
            G[p, p] = n
            # LAPACK's eigh is mostly level-2 work: a second BLAS thread barely
            # helps it and, on a loaded machine, spin-waits, several times slower
            # than one thread.
            with threadpool_limits(limits=1, user_api="blas"):
                lam, self.V = np.linalg.eigh(G / n)
            self.lam = np.maximum(lam, 0.0)
            self.u = self.V[p].copy()  # the intercept coordinate e_p in the eigenbasis
            # eigh sorts ascending: the head is the last ``head`` eigen-directions.
            self.head = np.arange(p + 1 - min(head, p + 1), p + 1)
        if self.rotated:
            # [Z 1] V, the inputs in the eigenbasis (float64 rotation, then the products' dtype).
            rotated = np.asarray(Z @ self.V[:p])
            rotated += self.V[p]  # in place: one (n, p + 1) float64 temporary, not two
            self.Zp = rotated.astype(dtype, copy=False)
            del rotated
        else:
            self.Zp = Z.astype(dtype) if dtype != np.float64 else Z
            if not self.eigen:
                self.Z2 = Z.multiply(Z).tocsr() if sp.issparse(Z) else Z * Z
        if self.head.size:
            if self.rotated:
                Zh = self.Zp[:, self.head]  # the head coordinates of the rotated inputs
            else:
                Zh = (np.asarray(Z @ self.V[:p, self.head]) + self.V[p, self.head]).astype(dtype)
            # Products of every pair (i <= j) of head coordinates, row by row: the
            # head block of every label's Hessian is then one (pairs, n) x (n, L) product.
            self.iu, self.ju = np.triu_indices(self.head.size)
            # Filled one head coordinate at a time (row i of the upper triangle, in
            # triu_indices' order): no two gathered (n, pairs) temporaries.
            h = self.head.size
            self.pairs = np.empty((Zh.shape[0], self.iu.size), dtype=Zh.dtype)
            start = 0
            for i in range(h):
                np.multiply(Zh[:, i : i + 1], Zh[:, i:], out=self.pairs[:, start : start + h - i])
                start += h - i
            uh = self.u[self.head]
            self.head_pen = pen * (np.eye(self.head.size) - np.outer(uh, uh))

    def setup(self, Dn: FloatArray, Dnp: FloatArray, head: bool = True) -> None:
        """Prepare for curvature weights ``Dn = D / n`` of shape (n, m) (``Dnp``: in the products' dtype)."""
        if self.eigen:
            self.c = Dn.sum(axis=0)  # mean curvature weight of each label
            self.use_head = bool(head and self.head.size)
            if self.use_head:
                self.head_inv = self._head_inverse(Dnp)
                self.head_live = self.head_inv
        else:
            diag = np.vstack([np.asarray(self.Z2.T @ Dn) + self.pen, Dn.sum(axis=0)[None, :]])
            self.diag = np.maximum(diag, self.floor)

    def _tail_size(self) -> int:
        """Leading eigen-directions (smallest eigenvalues) where the CG's operator uses the model ``c_l lam_j``.

        Those where the largest mean curvature weight of the labels being solved
        gives ``c_max lam_j <= tail_eps * pen``: there the penalty outweighs the
        data's mean curvature at least ``1 / tail_eps`` times, and the mean-weight
        model (the preconditioner's, exact when a label's weights are constant)
        replaces the data term there. The Newton
        direction is then that of an approximate Hessian: the Newton iteration
        keeps its exact gradient, its exact curvature along the step (line
        search) and its stopping test, so it converges to the same optimum and
        the same ``tol``. On many labels with a weak penalty about half the
        directions fall in the tail: a few percent more CG steps, each about half
        as costly, and probabilities within the slack of the stopping test of the
        untruncated fit's (docs/performance.md, "Figures behind the source's
        constants").
        Never the head directions; 0 when ``tail_eps`` is 0 (small problems).
        """
        if self.tail_eps <= 0.0 or self.pen <= 0.0 or not self.c.size:
            return 0
        c_max = float(self.c.max())
        if not c_max > 0.0:
            return 0
        tail = int(np.searchsorted(self.lam, self.tail_eps * self.pen / c_max, side="right"))
        return min(tail, int(self.lam.size) - int(self.head.size))

    def _head_inverse(self, Dnp: FloatArray) -> FloatArray:
        """Inverses of the head blocks of the labels' Hessians (eigenbasis), shape (m, h, h)."""
        h, m = self.head.size, Dnp.shape[1]
        flat = np.asarray(self.pairs.T @ Dnp, dtype=np.float64)
        A = np.empty((m, h, h))
        A[:, self.iu, self.ju] = flat.T
        A[:, self.ju, self.iu] = flat.T
        idx = np.arange(h)
        # The data block is PSD; a relative 1e-6 on its diagonal covers float32
        # rounding, the floor an unpenalised problem (C = inf).
        A[:, idx, idx] *= 1.0 + 1e-6
        A += self.head_pen
        A[:, idx, idx] += 1e-12
        return np.asarray(np.linalg.inv(A))

    def apply(self, R: FloatArray, cols: NDArray[np.intp]) -> FloatArray:
        """``M^{-1} R`` for the columns ``cols`` of the current weights; R is (p + 1, len(cols)).

        In the basis the CG runs in: the eigenbasis when ``rotated``.
        """
        if self.eigen:
            Rr = R if self.rotated else self.V.T @ R
            denom = self.lam[:, None] * self.c[cols][None, :] + self.floor
            out = Rr / denom
            if self.use_head:
                rh = Rr[self.head].T[:, :, None]  # (len(cols), h, 1)
                # The CG's live columns only shrink (see newton_direction's weights):
                # the live inverses are gathered again only when their count changes.
                if self.head_live.shape[0] != cols.size:
                    self.head_live = self.head_inv if cols.size == self.head_inv.shape[0] else self.head_inv[cols]
                out[self.head] = np.matmul(self.head_live, rh)[:, :, 0].T
            return np.asarray(out if self.rotated else self.V @ out)
        return np.asarray(R / self.diag[:, cols])

    def newton_direction(
        self, Dn: FloatArray, g: FloatArray, atol: float = 0.0, head: bool = True, passes: Any = None
    ) -> FloatArray:
        """Approximate solution d of ``H_l d = -g_l`` for every column (CG, see :func:`_cg`).

        ``head=False`` skips the head blocks (when each label's weights are constant,
        as at the start, the plain preconditioner is already exact). ``passes``
        (``_logistic_fused._Passes``, rotated inputs only): the CG's products reuse
        one work area and take the live columns' weights in place, compiled.
        """
        Zp, pen = self.Zp, self.pen
        n = Zp.shape[0]
        if passes is None:
            Dnp = Dn.astype(Zp.dtype)
        else:  # the weights in the products' dtype and the CG's products in work areas kept between calls
            if self.work.size < 2 * n * g.shape[1]:
                self.work = np.empty(2 * n * g.shape[1], dtype=Zp.dtype)
            Dnp = self.work[: n * g.shape[1]].reshape(Dn.shape)
            np.copyto(Dnp, Dn, casting="same_kind")
        self.setup(Dn, Dnp, head)
        p = g.shape[0] - 1
        live = [Dnp]  # the weights of the CG's live columns, gathered when they change

        def weights(cols: NDArray[np.intp]) -> FloatArray:
            # The live columns only shrink: an unchanged count is an unchanged set.
            if live[0].shape[1] != cols.size:
                live[0] = Dnp[:, cols]
            return live[0]

        if self.rotated:
            u = self.u
            work = self.work[n * g.shape[1] : 2 * n * g.shape[1]] if passes is not None else None
            a0 = self._tail_size()
            ZA = Zp[:, a0:]  # the kept eigen-directions (a view: BLAS reads it with its row stride)

            def hess_vec_rotated(d: FloatArray, cols: NDArray[np.intp]) -> FloatArray:
                # H' = Zt^T D Zt + pen (I - u u^T): the penalty spares the intercept e_p = V^T u.
                # In the tail (the first a0 eigen-directions, see _tail_size) the data term
                # is its mean-weight model c_l lam_j.
                dA = d[a0:].astype(Zp.dtype)
                if work is None:
                    U = ZA @ dA
                    U *= weights(cols)
                else:
                    U = work[: n * cols.size].reshape(n, cols.size)
                    np.matmul(ZA, dA, out=U)
                    passes.scale_by_columns(U, Dnp, cols)
                Hd = np.empty_like(d)
                Hd[a0:] = ZA.T @ U
                Hd[:a0] = (self.lam[:a0, None] * self.c[cols][None, :]) * d[:a0]
                Hd += pen * (d - np.outer(u, u @ d))
                return Hd

            return np.asarray(self.V @ _cg(hess_vec_rotated, self.V.T @ -g, self.apply, atol, self.max_cg))

        def hess_vec(d: FloatArray, cols: NDArray[np.intp]) -> FloatArray:
            dp = d.astype(Zp.dtype)
            U = (np.asarray(Zp @ dp[:p]) + dp[p]) * weights(cols)
            Hd = np.empty_like(d)
            Hd[:p] = np.asarray(Zp.T @ U) + pen * d[:p]
            Hd[p] = U.sum(axis=0, dtype=np.float64)
            return Hd

        return _cg(hess_vec, -g, self.apply, atol, self.max_cg)


class NumpyPasses:
    """The Newton-CG's passes over the scores in numpy (small problems, or no numba).

    One object per batch of labels: it keeps what a pass computes for the next one
    (the probabilities of the gradient for the curvature weights, the line
    search's accepted trial scores). ``fast``: the line search's shortcuts (the
    curvature bound and the 1-D Newton search), which pay off on large problems.
    The compiled twin is ``_logistic_fused.FusedPasses``; :func:`_newton_cg` runs
    either.
    """

    #: The preconditioner's CG products need no pass of their own here.
    compiled = None

    def __init__(self, n: int, fast: bool) -> None:
        self.n = n
        self.fast = fast
        self._P: FloatArray | None = None

    def start(self, Z: MatrixLike, W: FloatArray, b: FloatArray, warm: bool) -> FloatArray:
        """The scores ``Z W + b`` of the starting point (``Z W`` only for a warm start)."""
        S = np.broadcast_to(b, (self.n, b.shape[0])).copy()
        if warm:
            S += np.asarray(Z @ W)
        return S

    def gradient(self, Z: MatrixLike, S: FloatArray, T: NDArray[Any], W: FloatArray, pen: float) -> FloatArray:
        """The mean objective's gradient (weights, then the intercept), shape (p + 1, m)."""
        n, p = Z.shape
        P = expit(S)
        R = P - T
        g = np.empty((p + 1, S.shape[1]))
        g[:p] = np.asarray(Z.T @ R) / n + pen * W
        g[p] = R.sum(axis=0) / n
        self._P = P
        return g

    def compact(self, S: FloatArray, keep: NDArray[np.intp]) -> FloatArray:
        """The columns ``keep`` of the scores (labels that stopped leave)."""
        assert self._P is not None
        self._P = self._P[:, keep]
        return S[:, keep]

    def curvature_weights(self, S: FloatArray) -> FloatArray:
        """``p (1 - p) / n`` at the scores, from the gradient's probabilities."""
        P = self._P
        assert P is not None
        self._P = None
        return P * (1.0 - P) / self.n

    def score_changes(self, Z: MatrixLike, step: FloatArray) -> FloatArray:
        """``Z d + d_0``: the scores' change along the full step."""
        p = Z.shape[1]
        Zd: FloatArray = np.asarray(Z @ step[:p]) + step[p]
        return Zd

    def step_stats(
        self, Zd: FloatArray, step: FloatArray, Dn: FloatArray
    ) -> tuple[FloatArray | None, FloatArray | None]:
        """The data term's curvature along the step and the largest score change (``fast`` only)."""
        if not self.fast:
            return None, None
        curv: FloatArray = np.einsum("ij,ij,ij->j", Dn, Zd, Zd)
        return curv, np.maximum(Zd.max(axis=0), -Zd.min(axis=0))

    def line(self, S: FloatArray, Zd: FloatArray, T: NDArray[Any]) -> "_NumpyLine":
        """The passes of one line search along ``Zd`` from ``S``."""
        return _NumpyLine(S, Zd, T)


class _NumpyLine:
    """:class:`~mlknn.algorithms._line_search.LineMoves` in numpy: new score arrays."""

    def __init__(self, S: FloatArray, Zd: FloatArray, T: NDArray[Any]) -> None:
        self.S, self.Zd, self.T = S, Zd, T
        self.S_new = S + Zd  # the full step, where the curvature bound accepts it
        self.trial: FloatArray | None = None

    def derivatives(self, t: FloatArray, cols: NDArray[np.intp]) -> tuple[FloatArray, FloatArray]:
        Zd = self.Zd[:, cols]
        P = expit(self.S[:, cols] + t * Zd)
        d1 = np.einsum("ij,ij->j", P - self.T[:, cols], Zd)
        P *= 1.0 - P  # the curvature weights
        return d1, np.einsum("ij,ij,ij->j", P, Zd, Zd)

    def loss_at_start(self, cols: NDArray[np.intp]) -> FloatArray:
        return _loss(self.S[:, cols], self.T[:, cols])

    def loss(self, t: FloatArray, cols: NDArray[np.intp]) -> FloatArray:
        self.trial = self.S[:, cols] + t * self.Zd[:, cols]
        return _loss(self.trial, self.T[:, cols])

    def accept(self, cols: NDArray[np.intp], ok: BoolArray) -> None:
        assert self.trial is not None
        self.S_new[:, cols] = self.trial[:, ok]

    def finish(self, t: FloatArray) -> FloatArray:
        failed = t == 0.0
        self.S_new[:, failed] = self.S[:, failed]
        return self.S_new


class Passes(Protocol):
    """What :func:`_newton_cg` asks of its passes: :class:`NumpyPasses` or
    ``_logistic_fused.FusedPasses`` (the same iteration, step for step)."""

    compiled: Any

    def start(self, Z: MatrixLike, W: FloatArray, b: FloatArray, warm: bool) -> FloatArray: ...

    def gradient(self, Z: MatrixLike, S: FloatArray, T: NDArray[Any], W: FloatArray, pen: float) -> FloatArray: ...

    def compact(self, S: FloatArray, keep: NDArray[np.intp]) -> FloatArray: ...

    def curvature_weights(self, S: FloatArray) -> FloatArray: ...

    def score_changes(self, Z: MatrixLike, step: FloatArray) -> FloatArray: ...

    def step_stats(
        self, Zd: FloatArray, step: FloatArray, Dn: FloatArray
    ) -> tuple[FloatArray | None, FloatArray | None]: ...

    def line(self, S: FloatArray, Zd: FloatArray, T: NDArray[Any]) -> LineMoves: ...


def _newton_cg(
    Z: MatrixLike,
    T: NDArray[Any],
    pen: float,
    tol: float,
    max_iter: int,
    precond: "_Preconditioner",
    atol: float,
    passes: Passes,
    init: tuple[FloatArray, FloatArray] | None = None,
) -> tuple[FloatArray, FloatArray, NDArray[np.int64], BoolArray, BoolArray]:
    """The batched Newton-CG for the columns of T (one logistic regression each).

    Parameters
    ----------
    Z : ndarray or sparse matrix of shape (n, p)
        The shared inputs.
    T : ndarray of shape (n, m)
        0/1 targets, one column per label.
    pen : float
        The penalty's weight (its Hessian per weight), ``1 / (C n)``.
    tol : float
        A label stops when the largest component of its gradient is <= tol.
    max_iter : int
        Newton steps per label.
    precond : _Preconditioner
        Solves the Newton systems by preconditioned CG.
    atol : float
        The CG's residual floor (see ``_CG_ATOL``).
    passes : NumpyPasses or FusedPasses
        The passes over the (n, m) scores: numpy, or compiled and threaded.
    init : (W, b) of shapes (p, m) and (m,), optional
        A warm start (see :func:`fit_logistic_batched`).

    Returns
    -------
    W : ndarray of shape (p, m)
    b : ndarray of shape (m,)
    iterations : ndarray of shape (m,), int64
    converged, separated : ndarray of shape (m,), bool
        Whether each label met ``tol``; whether its final point puts every row on
        its own side.
    """
    n, p = Z.shape
    m = T.shape[1]
    W, b = start_point(T, p, init)
    S = passes.start(Z, W, b, init is not None)
    iters = np.zeros(m, dtype=np.int64)
    converged = np.zeros(m, dtype=bool)
    act = np.arange(m)
    separated = np.zeros(m, dtype=bool)
    f = np.full(m, np.nan)  # objectives, computed when a line search needs them
    Ta = T  # the targets of the active labels, kept compact as S, g and f are
    for _ in range(max_iter + 1):
        g = passes.gradient(Z, S, Ta, W[:, act], pen)
        done = np.abs(g).max(axis=0) <= tol
        # Every active label has made the same number of steps (labels only leave).
        last = bool(iters[act[0]] >= max_iter)
        stop = np.ones(act.size, dtype=bool) if last else done
        if stop.any():  # every row on its own side at the final point of the labels stopping now
            separated[act[stop]] = ((2.0 * Ta[:, stop] - 1.0) * S[:, stop] > 0).all(axis=0)
        converged[act[done]] = True
        if last:
            break
        if done.any():
            keep = np.flatnonzero(~done)
            if keep.size == 0:
                break
            S = passes.compact(S, keep)
            act, g, f, Ta = act[keep], g[:, keep], f[keep], Ta[:, keep]
        Dn = passes.curvature_weights(S)
        d = precond.newton_direction(Dn, g, atol, head=bool(iters[act[0]] > 0), passes=passes.compiled)
        Zd = passes.score_changes(Z, d)
        curv, max_change = passes.step_stats(Zd, d, Dn)
        del Dn
        slope = (g * d).sum(axis=0)
        if curv is not None:
            curv += pen * (d[:p] * d[:p]).sum(axis=0)
        line = passes.line(S, Zd, Ta)
        W[:, act], b[act], S, f = line_search(line, n, W[:, act], b[act], d, f, slope, curv, max_change, pen)
        iters[act] += 1
    return W, b, iters, converged, separated


def _cg(
    hess_vec: HessVec,
    rhs: FloatArray,
    precond: Callable[[FloatArray, NDArray[np.intp]], FloatArray],
    atol: float = 0.0,
    max_steps: int | None = None,
) -> FloatArray:
    """Preconditioned CG for ``H_l x_l = rhs_l``, column by column, all columns per product.

    ``hess_vec(d, cols)`` is ``H d`` for the live columns ``cols`` (one batched
    product), ``precond(r, cols)`` the preconditioner's ``M^{-1} r``. Each
    column stops when its residual is below ``eta * |rhs|`` with the forcing
    term ``eta = min(0.5, sqrt(|rhs|))`` (superlinear convergence of the outer
    Newton iteration), or after ``max_steps`` steps (None: ``_MAX_CG``).
    """
    x = np.zeros_like(rhs)
    norm0 = np.sqrt((rhs * rhs).sum(axis=0))
    target = np.maximum(np.minimum(0.5, np.sqrt(norm0)) * norm0, atol)
    cols = np.flatnonzero(norm0 > 0)
    # The live columns' iterates and residuals are kept compact (a column's x is
    # written out when it stops): no gathers and scatters of the full arrays per step.
    rc = rhs[:, cols]
    xc = np.zeros_like(rc)
    zr = precond(rc, cols)
    d = zr.copy()
    rz = (rc * zr).sum(axis=0)
    for _ in range(_MAX_CG if max_steps is None else max_steps):
        if cols.size == 0:
            break
        Hd = hess_vec(d, cols)
        dHd = (d * Hd).sum(axis=0)
        alpha = rz / np.where(dHd > 0, dHd, 1.0)
        xc += alpha * d
        rc -= alpha * Hd
        live = (np.sqrt((rc * rc).sum(axis=0)) > target[cols]) & (dHd > 0)
        if not live.all():
            x[:, cols[~live]] = xc[:, ~live]
            cols, d, rz, rc, xc = cols[live], d[:, live], rz[live], rc[:, live], xc[:, live]
        if cols.size == 0:
            break
        zr = precond(rc, cols)
        rz_new = (rc * zr).sum(axis=0)
        d = zr + (rz_new / rz) * d
        rz = rz_new
    x[:, cols] = xc
    return x
