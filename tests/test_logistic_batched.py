"""The batched Newton-CG of the per-label logistic regressions (MLHiKNN, IBLR)."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import expit
from sklearn.linear_model import LogisticRegression

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
