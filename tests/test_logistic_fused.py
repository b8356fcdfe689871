"""The compiled passes of the batched Newton-CG's large problems (``_logistic_fused``).

Each compiled pass against the numpy expressions it replaces; the fused
iteration against the numpy one (same stops, the same optimum to rounding) and
against scikit-learn's exact solver; and its independence of the thread count.
"""

import numpy as np
import pytest
from scipy.special import expit
from sklearn.linear_model import LogisticRegression

from mlknn.algorithms import _logistic, _logistic_fused
from mlknn.algorithms._logistic import fit_logistic_batched
from mlknn.neighbors._exact import _compiled

mod = _logistic_fused.kernels()
pytestmark = pytest.mark.skipif(mod is None, reason="numba is not installed (the numpy iteration runs instead)")


def _arrays(seed=0, n=1300, m=9):
    rng = np.random.default_rng(seed)
    S = rng.normal(scale=4.0, size=(n, m))
    S[0, 0], S[1, 0] = 800.0, -800.0  # saturated scores: no overflow in expit or log(1 + e^s)
    T = (rng.random((n, m)) < 0.3).astype(np.float64)
    Zd = rng.normal(size=(n, m))
    Dn = rng.random((n, m)) / n
    return S, T, Zd, Dn


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_each_pass_equals_its_numpy_expression(threads):
    S, T, Zd, Dn = _arrays()
    n, m = S.shape
    passes = _logistic_fused._Passes(mod, n, threads)
    assert passes.n_blocks == 6  # 1,300 rows in blocks of 256: uneven last block
    R, D = np.empty_like(S), np.empty_like(S)
    rsum = passes.residuals(S, T, R)
    passes.curvature_weights(S, D)
    P = expit(S)
    np.testing.assert_allclose(R, P - T, rtol=1e-15, atol=1e-16)
    np.testing.assert_allclose(D, P * (1 - P) / n, rtol=1e-14, atol=1e-300)
    np.testing.assert_allclose(rsum, (P - T).sum(axis=0), rtol=1e-12)

    shift = np.linspace(-1, 1, m)
    Z2 = Zd.copy()
    curv, maxabs = passes.step_stats(Z2, shift, Dn)
    np.testing.assert_array_equal(Z2, Zd + shift)
    np.testing.assert_allclose(curv, np.einsum("ij,ij,ij->j", Dn, Z2, Z2), rtol=1e-12)
    np.testing.assert_array_equal(maxabs, np.abs(Z2).max(axis=0))

    cols = np.array([7, 0, 3], dtype=np.intp)  # any subset, in any order
    t = np.array([0.5, 1.0, -2.0])
    d1, d2 = passes.line_derivatives(S, Zd, T, t, cols)
    St = S[:, cols] + t * Zd[:, cols]
    Pt = expit(St)
    np.testing.assert_allclose(d1, ((Pt - T[:, cols]) * Zd[:, cols]).sum(axis=0), rtol=1e-11)
    np.testing.assert_allclose(d2, (Pt * (1 - Pt) * Zd[:, cols] ** 2).sum(axis=0), rtol=1e-11)
    loss = passes.line_loss(S, Zd, T, t, cols)
    np.testing.assert_allclose(loss, (np.logaddexp(0, St) - T[:, cols] * St).sum(axis=0), rtol=1e-12)
    assert np.isfinite(passes.line_loss(S, Zd, T, np.zeros(1), np.array([0], dtype=np.intp))).all()

    for keep in (np.array([0, 3, 7], dtype=np.intp), np.array([8], dtype=np.intp), np.arange(m, dtype=np.intp)):
        flat = S.ravel().copy()
        mod.compact_columns(flat, n, m, keep)  # in place, one sequential pass
        np.testing.assert_array_equal(flat[: n * keep.size].reshape(n, keep.size), S[:, keep])
    U = Zd.astype(np.float32)
    D32 = Dn.astype(np.float32)
    U2 = U[:, :3].copy()
    passes.scale_by_columns(U2, D32, cols)
    np.testing.assert_array_equal(U2, U[:, :3] * D32[:, cols])

    S2 = S.copy()
    passes.step_scores(S2, Zd, t, cols)
    expected = S.copy()
    expected[:, cols] = St
    np.testing.assert_array_equal(S2, expected)


def test_the_column_sums_do_not_depend_on_the_thread_count():
    S, T, Zd, Dn = _arrays(1, n=3000, m=5)
    out = []
    for threads in (1, 2, 4):
        passes = _logistic_fused._Passes(mod, S.shape[0], threads)
        R = np.empty_like(S)
        cols = np.arange(5, dtype=np.intp)
        out.append((passes.residuals(S, T, R), *passes.line_derivatives(S, Zd, T, np.ones(5), cols)))
    for got in out[1:]:
        for a, b in zip(out[0], got):
            np.testing.assert_array_equal(a, b)


def _problem(seed=0, n=700, p=30, L=12):
    rng = np.random.default_rng(seed)
    Z = rng.random((n, p))
    W = rng.normal(size=(p, L)) * 3
    Y = (rng.random((n, L)) < expit((Z - 0.5) @ W)).astype(np.uint8)
    Y[:3, 0] = 1 - Y[:3, 0]
    return Z, Y


def test_fused_and_numpy_iterations_stop_at_the_same_optimum(monkeypatch):
    # The large path (float32 products, head blocks, curvature-bound line search)
    # forced on a small problem; the fused run and the numpy run take the same
    # Newton steps up to rounding and both stop at max|grad| <= tol.
    Z, Y = _problem()
    labels = np.arange(Y.shape[1])
    monkeypatch.setattr(_logistic, "_FLOAT32_FROM", 0)
    calls = []
    orig = _logistic_fused.FusedPasses

    def spy(*args, **kwargs):
        calls.append(1)
        return orig(*args, **kwargs)

    monkeypatch.setattr(_logistic_fused, "FusedPasses", spy)
    fused = fit_logistic_batched(Z, Y, labels, C=1.0, tol=1e-9, max_iter=100)
    assert calls  # the fused iteration ran
    monkeypatch.setattr(_compiled, "ENABLED", False)
    plain = fit_logistic_batched(Z, Y, labels, C=1.0, tol=1e-9, max_iter=100)
    assert len(calls) == 1  # and not with numba disabled
    np.testing.assert_array_equal(fused[2], plain[2])  # the same number of Newton steps per label
    np.testing.assert_allclose(fused[0], plain[0], rtol=0, atol=1e-7)
    np.testing.assert_allclose(fused[1], plain[1], rtol=0, atol=1e-7)
    n = Z.shape[0]
    for coef, b in ((fused[0], fused[1]),):
        Rr = expit(Z @ coef.T + b) - Y
        grad = np.vstack([Z.T @ Rr / n + coef.T / n, Rr.sum(axis=0) / n])
        assert np.abs(grad).max() <= 1e-9
    for l in labels:
        ref = LogisticRegression(C=1.0, solver="newton-cholesky", tol=1e-12, max_iter=1000).fit(Z, Y[:, l])
        np.testing.assert_allclose(fused[0][l], ref.coef_[0], rtol=0, atol=1e-6)
        np.testing.assert_allclose(fused[1][l], ref.intercept_[0], rtol=0, atol=1e-6)


def test_fused_fit_is_the_same_on_one_or_two_threads(monkeypatch):
    Z, Y = _problem(3, n=1500)
    labels = np.arange(Y.shape[1])
    monkeypatch.setattr(_logistic, "_FLOAT32_FROM", 0)
    got = []
    for threads in (1, 2):
        monkeypatch.setattr(_logistic_fused, "threads_for", lambda n_jobs, t=threads: t)
        got.append(fit_logistic_batched(Z, Y, labels, C=1.0, tol=1e-9, max_iter=100))
    for a, b in zip(got[0][:3], got[1][:3]):
        np.testing.assert_array_equal(a, b)
