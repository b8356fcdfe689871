"""The batched Newton-CG of the per-label logistic regressions (MLHiKNN, IBLR)."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize_scalar
from scipy.special import expit
from sklearn.linear_model import LogisticRegression

from mlknn.algorithms import _line_search as line_search
from mlknn.algorithms import _logistic
from mlknn.algorithms._logistic import fit_logistic_batched


def _problem(seed=0, n=150, p=8, L=6):
    rng = np.random.default_rng(seed)
    Z = rng.random((n, p))
    W = rng.normal(size=(p, L)) * 2
    Y = (rng.random((n, L)) < expit((Z - 0.5) @ W)).astype(np.uint8)
    return Z, Y


def _exact(Z, Y, labels, C):
    """scikit-learn's exact Newton solver, one label at a time, to tol 1e-12."""
    out = []
    for l in labels:
        m = LogisticRegression(C=C, solver="newton-cholesky", tol=1e-12, max_iter=1000).fit(Z, Y[:, l])
        out.append((m.coef_[0], m.intercept_[0]))
    return np.array([c for c, _ in out]), np.array([b for _, b in out])


@pytest.mark.parametrize("C", [1.0, 100.0])
def test_same_optimum_as_an_exact_newton_fit(C):
    Z, Y = _problem()
    labels = np.arange(Y.shape[1])
    coef, intercept, n_iter, not_converged, separated = fit_logistic_batched(Z, Y, labels, C=C, tol=1e-10, max_iter=100)
    ref_coef, ref_b = _exact(Z, Y, labels, C)
    assert not_converged == [] and not separated.any()
    np.testing.assert_allclose(coef, ref_coef, rtol=0, atol=1e-6)
    np.testing.assert_allclose(intercept, ref_b, rtol=0, atol=1e-6)
    np.testing.assert_allclose(expit(Z @ coef.T + intercept), expit(Z @ ref_coef.T + ref_b), rtol=0, atol=1e-8)
    assert n_iter.max() < 20  # Newton: a handful of steps


def test_gradient_is_below_tol_at_the_stop():
    Z, Y = _problem(1)
    C, tol = 5.0, 1e-7
    coef, b, *_ = fit_logistic_batched(Z, Y, np.arange(Y.shape[1]), C=C, tol=tol, max_iter=100)
    n = Z.shape[0]
    R = expit(Z @ coef.T + b) - Y
    grad_w = (Z.T @ R) / n + coef.T / (C * n)
    assert np.abs(grad_w).max() <= tol and np.abs(R.sum(axis=0) / n).max() <= tol


def test_a_subset_of_labels_in_their_order():
    Z, Y = _problem(2)
    full = fit_logistic_batched(Z, Y, [0, 1, 2, 3, 4, 5], C=1.0, tol=1e-10, max_iter=100)
    part = fit_logistic_batched(Z, Y, [4, 1], C=1.0, tol=1e-10, max_iter=100)
    np.testing.assert_allclose(part[0], full[0][[4, 1]], atol=1e-8)


def test_batches_jacobi_and_sparse_inputs_reach_the_same_optimum(monkeypatch):
    Z, Y = _problem(3)
    labels = np.arange(Y.shape[1])
    ref = fit_logistic_batched(Z, Y, labels, C=2.0, tol=1e-10, max_iter=100)
    monkeypatch.setattr(_logistic, "_BATCH_BYTES", 1)  # one label per batch
    one = fit_logistic_batched(Z, Y, labels, C=2.0, tol=1e-10, max_iter=100)
    monkeypatch.setattr(_logistic, "_EIGEN_MAX", 0)  # diagonal preconditioner
    jac = fit_logistic_batched(sp.csr_matrix(Z), Y, labels, C=2.0, tol=1e-10, max_iter=100)
    for got in (one, jac):
        np.testing.assert_allclose(got[0], ref[0], atol=1e-7)
        np.testing.assert_allclose(got[1], ref[1], atol=1e-7)


def test_separable_labels_are_flagged_and_max_iter_reported():
    # Label 0 is a threshold of column 0: separable. Label 1 is noise.
    rng = np.random.default_rng(4)
    Z = rng.random((60, 3))
    Y = np.column_stack([Z[:, 0] > 0.5, rng.random(60) < 0.5]).astype(np.uint8)
    _, _, n_iter, not_converged, separated = fit_logistic_batched(Z, Y, [0, 1], C=5e7, tol=1e-8, max_iter=100)
    assert separated.tolist() == [True, False]
    _, _, n_iter, not_converged, _ = fit_logistic_batched(Z, Y, [0, 1], C=5e7, tol=1e-8, max_iter=2)
    assert not_converged == [0, 1] and n_iter.tolist() == [2, 2]


def test_no_labels():
    Z, Y = _problem()
    coef, b, n_iter, nc, sep = fit_logistic_batched(Z, Y, [], C=1.0, tol=1e-8, max_iter=10)
    assert coef.shape == (0, Z.shape[1]) and b.shape == (0,) and nc == [] and sep.shape == (0,)


def test_rotated_unrotated_and_float32_products_reach_the_same_optimum(monkeypatch):
    # Dense inputs run the CG in the eigenbasis of G (rotated inputs, diagonal
    # preconditioner); sparse inputs in the original basis with the same
    # preconditioner applied through V; float32 products only shape the Newton
    # direction. All three stop at max|grad| <= tol of the same strictly convex problem.
    Z, Y = _problem(5, n=200, p=12, L=7)
    labels = np.arange(Y.shape[1])
    dense = fit_logistic_batched(Z, Y, labels, C=3.0, tol=1e-10, max_iter=100)
    sparse = fit_logistic_batched(sp.csr_matrix(Z), Y, labels, C=3.0, tol=1e-10, max_iter=100)
    monkeypatch.setattr(_logistic, "_FLOAT32_FROM", 0)
    f32 = fit_logistic_batched(Z, Y, labels, C=3.0, tol=1e-10, max_iter=100)
    ref_coef, ref_b = _exact(Z, Y, labels, 3.0)
    for got in (dense, sparse, f32):
        assert got[3] == []
        np.testing.assert_allclose(got[0], ref_coef, rtol=0, atol=1e-6)
        np.testing.assert_allclose(got[1], ref_b, rtol=0, atol=1e-6)
    # The two bases give the same iterates up to rounding: a wrong rotated Hessian
    # product would still converge (line search) but in other steps.
    np.testing.assert_array_equal(dense[2], sparse[2])
    assert _logistic._Preconditioner(Z, 0.1, np.float64).rotated
    assert not _logistic._Preconditioner(sp.csr_matrix(Z), 0.1, np.float64).rotated


def _count_cg_products(monkeypatch):
    """Wrap the CG so that every call records how many Hessian products it made."""
    calls = []
    orig = _logistic._cg

    def cg(hess_vec, rhs, precond, atol=0.0, max_steps=None):
        n = [0]

        def counted(d, cols):
            n[0] += 1
            return hess_vec(d, cols)

        x = orig(counted, rhs, precond, atol, max_steps)
        calls.append(n[0])
        return x

    monkeypatch.setattr(_logistic, "_cg", cg)
    return calls


@pytest.mark.parametrize("sparse", [False, True])
def test_head_blocks_reach_the_optimum_and_a_full_head_is_the_exact_hessian(monkeypatch, sparse):
    # Large-problem mode (float32 products, head blocks, line-search shortcuts) on a
    # small problem: the same optimum as scikit-learn's exact Newton. With a head
    # covering all p + 1 directions the preconditioner is each label's Hessian
    # itself, so every CG needs one product (two if float32 rounding leaves the
    # residual just above its target); a wrong block would still converge, in more.
    Z, Y = _problem(6, n=300, p=10, L=6)
    if sparse:
        Z = sp.csr_matrix(Z)
    labels = np.arange(Y.shape[1])
    ref_coef, ref_b = _exact(Z, Y, labels, 2.0)
    monkeypatch.setattr(_logistic, "_FLOAT32_FROM", 0)
    for head in (3, 11):
        monkeypatch.setattr(_logistic, "_HEAD", head)
        calls = _count_cg_products(monkeypatch)
        coef, b, n_iter, nc, _ = fit_logistic_batched(Z, Y, labels, C=2.0, tol=1e-10, max_iter=100)
        monkeypatch.setattr(_logistic, "_cg", _cg_orig)
        assert nc == []
        np.testing.assert_allclose(coef, ref_coef, rtol=0, atol=1e-6)
        np.testing.assert_allclose(b, ref_b, rtol=0, atol=1e-6)
        if head == 11:
            assert max(calls[1:]) <= 2  # the first Newton step skips the head (constant weights)
        else:
            assert max(calls) > 2


_cg_orig = _logistic._cg


def _objective(Z1, W, T, pen):
    """Mean logistic loss + penalty of every column, directly (W includes the intercept row)."""
    S = Z1 @ W
    return (np.logaddexp(0.0, S) - T * S).mean(axis=0) + 0.5 * pen * (W[:-1] ** 2).sum(axis=0)


def _newton_line_problem(seed, n, p, m, scales):
    """Inputs [Z 1], targets, penalty, a random point, its scores, gradient and Newton directions times ``scales``."""
    rng = np.random.default_rng(seed)
    Z1 = np.hstack([rng.random((n, p)), np.ones((n, 1))])
    T = (rng.random((n, m)) < (0.2 if seed == 7 else 0.3)).astype(float)
    pen = 1.0 / n
    W0 = rng.normal(size=(p + 1, m)) * 0.5
    S = Z1 @ W0
    P = expit(S)
    g = Z1.T @ (P - T) / n
    g[:p] += pen * W0[:p]
    H = np.einsum("ni,nl,nj->lij", Z1, P * (1 - P) / n, Z1) + pen * np.diag([1.0] * p + [0.0])[None]
    d = -np.linalg.solve(H, g.T[:, :, None])[:, :, 0].T * scales
    return Z1, T, pen, W0, S, P, g, d


def test_line_search_steps_meet_armijo_on_the_true_objective():
    # Steps of every size along descent directions: those taken on the curvature
    # bound alone (no loss evaluated, objective returned as NaN), those from the
    # 1-D Newton search and the halvings must all satisfy Armijo on the objective
    # computed directly.
    n, p, m = 400, 6, 60
    # Newton directions scaled from tiny to far too long.
    Z1, T, pen, W0, S, P, g, d = _newton_line_problem(7, n, p, m, np.geomspace(1e-3, 30.0, m))
    Zd = Z1 @ d
    slope = (g * d).sum(axis=0)
    curv = np.einsum("ij,ij,ij->j", P * (1 - P) / n, Zd, Zd) + pen * (d[:p] ** 2).sum(axis=0)
    f0 = _objective(Z1, W0, T, pen)
    f = np.where(np.arange(m) % 2 == 0, f0, np.nan)  # some objectives known, some not
    M = np.maximum(Zd.max(axis=0), -Zd.min(axis=0))
    line = _logistic.NumpyPasses(n, fast=True).line(S, Zd, T)
    Wa, ba, S_new, f_new = line_search.line_search(line, n, W0[:p].copy(), W0[p].copy(), d, f, slope, curv, M, pen)
    W_new = np.vstack([Wa, ba])
    np.testing.assert_allclose(S_new, Z1 @ W_new, rtol=0, atol=1e-12)
    f_true = _objective(Z1, W_new, T, pen)
    t = (ba - W0[p]) / d[p]
    assert (t > 0).all()
    assert (f_true <= f0 + line_search._ARMIJO * t * slope + 1e-13 * np.abs(f0)).all()
    skipped = np.isnan(f_new)
    assert skipped[: m // 3].all() and not skipped[-5:].any()  # short steps on the bound, long ones searched
    np.testing.assert_allclose(f_new[~skipped], f_true[~skipped], rtol=1e-12)


def test_line_minimum_is_near_the_minimum_along_the_line():
    n, p, m = 300, 5, 20
    # Newton directions 0.2-5 times their own length (the minimum near t = 1 / scale).
    Z1, T, pen, W0, S, P, g, d = _newton_line_problem(8, n, p, m, np.geomspace(0.2, 5.0, m))
    Zd = Z1 @ d
    slope = (g * d).sum(axis=0)
    line = _logistic.NumpyPasses(n, fast=True).line(S, Zd, T)
    cols = np.arange(m)
    t = line_search._bracketed_newton(lambda tt: line.derivatives(tt, cols), n, (W0[:p] * d[:p]).sum(axis=0),
                                      (d[:p] * d[:p]).sum(axis=0), slope, pen)

    def phi(j, s):
        return _objective(Z1, W0[:, [j]] + s * d[:, [j]], T[:, [j]], pen)[0]

    for j in range(m):
        best = minimize_scalar(lambda s: phi(j, s), bounds=(0.0, 50.0), method="bounded", options={"xatol": 1e-10})
        # Three safeguarded Newton steps from t = 1: at least 90 % of the decrease available along the line.
        assert phi(j, t[j]) - best.fun <= 0.1 * (phi(j, 0.0) - best.fun)


def _low_rank_problem(seed=11, n=400, p=30, L=5, noise=0.02):
    """Inputs near a 3-dimensional subspace: most eigenvalues of G are tiny, so the CG's tail applies."""
    rng = np.random.default_rng(seed)
    latent = rng.random((n, 3))
    Z = latent @ rng.random((3, p)) / 3 + noise * rng.random((n, p))
    W = rng.normal(size=(p, L))
    Y = (rng.random((n, L)) < expit((Z - Z.mean(axis=0)) @ W * 4)).astype(np.uint8)
    return Z, Y


def test_tail_size_rule():
    # The tail is every eigen-direction with c_max lam_j <= tail_eps * pen, never a head direction.
    Z, _ = _low_rank_problem()
    n, p = Z.shape
    pen = 1.0 / n
    pre = _logistic._Preconditioner(Z, pen, np.float32, head=4, tail_eps=0.1)
    # A largest curvature that puts the threshold between the 10th and 11th eigenvalue.
    c_max = 0.1 * pen / np.sqrt(pre.lam[9] * pre.lam[10])
    pre.c = np.array([0.5, 1.0, 0.25]) * c_max
    expected = int(np.sum(c_max * pre.lam <= 0.1 * pen))
    assert expected == 10
    assert pre._tail_size() == expected
    pre.c = np.array([1e-9])  # a tiny curvature: everything but the head would qualify
    assert pre._tail_size() == p + 1 - 4
    assert _logistic._Preconditioner(Z, pen, np.float32, head=4)._tail_size() == 0  # tail_eps = 0: none
    zero_pen = _logistic._Preconditioner(Z, 0.0, np.float32, head=4, tail_eps=0.1)
    zero_pen.c = np.array([0.2])
    assert zero_pen._tail_size() == 0  # no penalty: no direction is penalty-dominated


def test_tail_model_reaches_the_exact_optimum(monkeypatch):
    # Large-problem mode on a problem whose spectrum decays: the CG's operator drops the
    # data term of the tail directions, the Newton iteration (exact gradient and line
    # search) still stops at the optimum of scikit-learn's exact Newton; and the
    # tail was in use (a wrong tail model would converge too: the operator itself is
    # checked in test_tail_operator_is_the_mean_weight_model).
    Z, Y = _low_rank_problem()
    labels = np.arange(Y.shape[1])
    ref_coef, ref_b = _exact(Z, Y, labels, 1.0)
    monkeypatch.setattr(_logistic, "_FLOAT32_FROM", 0)
    monkeypatch.setattr(_logistic, "_HEAD", 4)  # the default head would cover all 31 directions
    tails = []
    orig = _logistic._Preconditioner._tail_size

    def recorded(self):
        tails.append(orig(self))
        return tails[-1]

    monkeypatch.setattr(_logistic._Preconditioner, "_tail_size", recorded)
    coef, b, n_iter, nc, _ = fit_logistic_batched(Z, Y, labels, C=1.0, tol=1e-10, max_iter=100)
    assert nc == []
    assert min(tails) > 0
    np.testing.assert_allclose(coef, ref_coef, rtol=0, atol=1e-6)
    np.testing.assert_allclose(b, ref_b, rtol=0, atol=1e-6)
    # Without the tail, the same optimum.
    monkeypatch.setattr(_logistic, "_TAIL_EPS", 0.0)
    tails.clear()
    coef0, b0, *_ = fit_logistic_batched(Z, Y, labels, C=1.0, tol=1e-10, max_iter=100)
    assert max(tails) == 0
    np.testing.assert_allclose(coef0, coef, rtol=0, atol=1e-6)


def test_tail_operator_is_the_mean_weight_model(monkeypatch):
    # The CG's product with a tail of a0 directions, against the formula written out in
    # float64: kept directions Zt_A^T D Zt_A d_A, tail directions c_l lam_j d_j, plus the
    # penalty pen (I - u u^T) d.
    Z, Y = _low_rank_problem(n=200, p=12, L=3)
    n, p = Z.shape
    pen = 1.0 / n
    pre = _logistic._Preconditioner(Z, pen, np.float64, head=2, tail_eps=0.1)
    rng = np.random.default_rng(3)
    Dn = rng.random((n, 3)) * 0.25 / n
    captured = {}

    def cg(hess_vec, rhs, precond, atol=0.0, max_steps=None):
        d = rng.normal(size=rhs.shape)
        captured["d"], captured["Hd"] = d, hess_vec(d, np.arange(rhs.shape[1]))
        return np.zeros_like(rhs)

    monkeypatch.setattr(_logistic, "_cg", cg)
    pre.newton_direction(Dn, rng.normal(size=(p + 1, 3)), head=False)
    a0 = pre._tail_size()
    assert a0 > 0
    d, Hd = captured["d"], captured["Hd"]
    Zt = np.hstack([Z, np.ones((n, 1))]) @ pre.V
    expected = np.empty_like(d)
    for l in range(3):
        A = slice(a0, p + 1)
        expected[A, l] = Zt[:, A].T @ (Dn[:, l] * (Zt[:, A] @ d[A, l]))
        expected[:a0, l] = Dn[:, l].sum() * pre.lam[:a0] * d[:a0, l]
        expected[:, l] += pen * (d[:, l] - pre.u * (pre.u @ d[:, l]))
    np.testing.assert_allclose(Hd, expected, rtol=1e-10, atol=1e-14)


def _rare_label_problem(seed=21, n=600, p=40, L=4):
    """Rare labels on many correlated inputs: curvature weights far from constant, so the CG needs many steps."""
    rng = np.random.default_rng(seed)
    Z = rng.random((n, p)) ** 3
    W = rng.normal(size=(p, L)) * 3
    S = (Z - Z.mean(axis=0)) @ W
    Y = (S > np.quantile(S, 0.97, axis=0)).astype(np.uint8)
    Y[rng.random((n, L)) < 0.01] ^= 1  # label noise: not separable
    return Z, Y


@pytest.mark.parametrize("large", [False, True])
def test_cg_step_cap_of_small_and_large_problems(monkeypatch, large):
    # Small problems cap each CG at _MAX_CG steps, large ones (float32 products) at
    # _MAX_CG_LARGE. Each cap is respected, and either stops at the same optimum (the
    # line search and the stopping test are the Newton iteration's, not the CG's).
    Z, Y = _rare_label_problem()
    labels = np.arange(Y.shape[1])
    ref_coef, ref_b = _exact(Z, Y, labels, 1.0)
    if large:  # with a head of 4 of the 41 eigen-directions (48 would be the exact Hessian here)
        monkeypatch.setattr(_logistic, "_FLOAT32_FROM", 0)
        monkeypatch.setattr(_logistic, "_HEAD", 4)
    name = "_MAX_CG_LARGE" if large else "_MAX_CG"
    steps = {}
    for cap in (2, 200):
        monkeypatch.setattr(_logistic, name, cap)
        calls = _count_cg_products(monkeypatch)
        coef, b, n_iter, nc, _ = fit_logistic_batched(Z, Y, labels, C=1.0, tol=1e-9, max_iter=300)
        monkeypatch.setattr(_logistic, "_cg", _cg_orig)
        assert nc == []
        np.testing.assert_allclose(expit(Z @ coef.T + b), expit(Z @ ref_coef.T + ref_b), rtol=0, atol=1e-6)
        steps[cap] = (max(calls), int(n_iter.max()))
    assert steps[2][0] <= 2
    # The problem needs more than 2 CG steps per Newton step, and a CG cut short costs Newton steps.
    assert steps[200][0] > 2
    assert steps[200][1] < steps[2][1]
