"""Algorithm-adaptation baselines and AdaBoost.MH (seed 003, Knowl 7, 12-16;
Zhang 2009 for ML-RBF): loop references, gradients, optimality conditions and
toy problems whose answer is known by construction."""

import numpy as np
import pytest
import scipy.sparse as sp
from reference_baselines import (
    loop_adaboost_mh,
    loop_best_split,
    loop_bpmll,
    loop_cml_log_likelihood,
    loop_mlent,
    loop_mlrbf_hidden,
    loop_mlrbf_sigma,
    loop_ranksvm_objective,
)
from scipy.optimize import check_grad
from sklearn.metrics.pairwise import polynomial_kernel

from mlknn.baselines import BPMLL, CML, MLDT, MLLS, MLRBF, AdaBoostMH, RankSVM
from mlknn.baselines._adaboost import _sorted_features, best_stump
from mlknn.baselines._bpmll import bpmll_loss_grad
from mlknn.baselines._cml import cml_loss_grad, pair_features
from mlknn.baselines._ranksvm import huber_hinge, ranking_pairs, ranksvm_loss_grad


@pytest.fixture
def linear_problem():
    """Labels are half-spaces of standardised features (learnable by linear models)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 6))
    W = rng.normal(size=(6, 4))
    Y = (X @ W > 0.3).astype(np.uint8)
    return X[:200], Y[:200], X[200:], Y[200:]


# ------------------------------------------------------------------ AdaBoost.MH
def test_adaboost_mh_matches_loop_reference():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(25, 3))
    Y = (rng.uniform(size=(25, 3)) < 0.4).astype(np.uint8)
    Y[:, 0] = X[:, 1] > 0.2
    ada = AdaBoostMH(n_estimators=4).fit(X, Y)
    feats, thrs, confs, norms = loop_adaboost_mh(X.tolist(), Y.tolist(), 4)
    np.testing.assert_array_equal(ada.features_, feats)
    np.testing.assert_allclose(ada.thresholds_, thrs)
    np.testing.assert_allclose(ada.confidences_, confs, atol=1e-10)
    np.testing.assert_allclose(ada.normalizers_, norms)


def test_adaboost_mh_stump_search_is_exhaustive():
    """best_stump's Z equals the minimum over all features and midpoints."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 4))
    Y = (rng.uniform(size=(40, 3)) < 0.5).astype(np.uint8)
    D = rng.uniform(size=(40, 3))
    D /= D.sum()
    Dp, Dn = D * Y, D * (1 - Y)
    order, values = _sorted_features(X)
    f, thr, Z = best_stump(Dp, Dn, order, values)
    best = np.inf
    for g in range(4):
        for t in np.unique(X[:, g]):
            block = X[:, g] > t
            z = 0.0
            for b in (block, ~block):
                z += 2 * np.sqrt(Dp[b].sum(0) * Dn[b].sum(0)).sum()
            best = min(best, z)
    assert Z == pytest.approx(best)


def test_adaboost_mh_learns_stumps_and_bounds_training_loss():
    """Each label is one threshold: a handful of rounds learn them, and the training
    Hamming loss stays below prod_t Z_t (Schapire and Singer's bound)."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(200, 4))
    Y = np.column_stack([X[:, 0] > 0.2, X[:, 1] < -0.1, X[:, 2] > 0.5]).astype(np.uint8)
    for T in (1, 3, 10):
        ada = AdaBoostMH(n_estimators=T).fit(X, Y)
        assert np.mean(ada.predict(X) != Y) <= np.prod(ada.normalizers_) + 1e-12
    assert np.mean(ada.predict(X) != Y) == 0
    np.testing.assert_allclose(ada.predict_proba(X), 1 / (1 + np.exp(-2 * ada.decision_function(X))))


def test_adaboost_mh_sparse_equals_dense(linear_problem):
    X, Y, Xq, _ = linear_problem
    X = np.where(np.abs(X) < 0.5, 0.0, X)
    a = AdaBoostMH(20).fit(X, Y)
    b = AdaBoostMH(20).fit(sp.csr_matrix(X), Y)
    np.testing.assert_array_equal(a.features_, b.features_)
    np.testing.assert_allclose(a.decision_function(Xq), b.decision_function(sp.csr_matrix(Xq)))


# ------------------------------------------------------------------------ ML-DT
def test_mldt_root_split_is_the_best_multilabel_information_gain():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(40, 3)).round(3)
    Y = (rng.uniform(size=(40, 4)) < 0.35).astype(np.uint8)
    Y[:, 1] |= X[:, 2] > 0.5
    tree = MLDT(max_depth=1, random_state=0).fit(X, Y).tree_
    f, thr, ig = loop_best_split(X.tolist(), Y.tolist())
    assert tree.tree_.feature[0] == f
    assert tree.tree_.threshold[0] == pytest.approx(thr)
    # scikit-learn's multi-output entropy is MLEnt / q
    assert tree.tree_.impurity[0] * Y.shape[1] == pytest.approx(loop_mlent(Y.tolist()))
    n = tree.tree_.weighted_n_node_samples
    left, right = tree.tree_.children_left[0], tree.tree_.children_right[0]
    gain = (tree.tree_.impurity[0] - n[left] / n[0] * tree.tree_.impurity[left] - n[right] / n[0] * tree.tree_.impurity[right])
    assert gain * Y.shape[1] == pytest.approx(ig)


def test_mldt_leaf_rule_is_majority_frequency():
    """One split on x0 at 0: the leaves' label frequencies are known by construction
    and p_j > 0.5 decides (p = 0.5 predicts 0)."""
    X = np.array([[-2.0], [-1.5], [-1.0], [-0.5], [0.5], [1.0], [1.5], [2.0]])
    Y = np.array([[1, 1, 0], [1, 0, 0], [1, 1, 0], [1, 0, 0], [0, 1, 1], [0, 1, 1], [0, 0, 1], [0, 0, 1]])
    dt = MLDT(max_depth=1).fit(X, Y)
    np.testing.assert_allclose(dt.predict_proba([[-1.0], [1.0]]), [[1, 0.5, 0], [0, 0.5, 1]])
    np.testing.assert_array_equal(dt.predict([[-1.0], [1.0]]), [[1, 0, 0], [0, 0, 1]])


# --------------------------------------------------------------------- Rank-SVM
def test_ranking_pairs_and_objective_match_loops(linear_problem):
    X, Y, _, _ = linear_problem
    Y = Y[:30].copy()
    Y[0] = 1  # a full label set: no pair
    X = X[:30]
    rng = np.random.default_rng(0)
    W = rng.normal(size=(6, 4))
    b = rng.normal(size=4)
    pairs = ranking_pairs(Y, chunk=7)
    assert not np.any(pairs[0] == 0)
    value, _ = ranksvm_loss_grad(np.concatenate([W.ravel(), b]), X, pairs, 4, 0.7)
    ref = loop_ranksvm_objective(X @ W + b, W, Y, 0.7, lambda z: float(huber_hinge(np.array(z))[0]))
    assert value == pytest.approx(ref)


def test_ranksvm_gradient_is_exact(linear_problem):
    X, Y, _, _ = linear_problem
    X, Y = X[:40], Y[:40]
    pairs = ranking_pairs(Y)
    theta = np.random.default_rng(1).normal(size=6 * 4 + 4) * 0.3

    def f(t):
        return ranksvm_loss_grad(t, X, pairs, 4, 2.0)[0]

    def g(t):
        return ranksvm_loss_grad(t, X, pairs, 4, 2.0)[1]

    assert check_grad(f, g, theta) < 1e-5 * max(1.0, np.abs(g(theta)).max())


def test_huber_hinge_is_close_to_the_hinge():
    z = np.linspace(-3, 3, 601)
    loss, _ = huber_hinge(z)
    assert np.max(np.abs(loss - np.maximum(0, 1 - z))) <= 0.05 + 1e-12


def test_ranksvm_ranks_and_thresholds_a_separable_problem(linear_problem):
    X, Y, Xq, Yq = linear_problem
    svm = RankSVM(C=10.0).fit(X, Y)
    F = svm.label_scores(Xq)
    # ranking loss: relevant above irrelevant for almost every pair
    i, j, k, _ = ranking_pairs(Yq)
    assert np.mean(F[i, j] > F[i, k]) > 0.95
    # Rank-SVM only learns score differences (adding one vector to every w_j
    # changes no margin), so the linear threshold on f(x) cannot recover each
    # label's own cut exactly: the bipartition is good, not perfect.
    majority = np.mean((Y.mean(0) > 0.5)[None, :] != Yq)
    assert np.mean(svm.predict(Xq) != Yq) < 0.5 * majority


def test_ranksvm_polynomial_kernel_learns_what_linear_cannot():
    """Two labels, exactly one relevant: label 0 iff x0 x1 > 0 (XOR). The ranking
    f_0 - f_1 must follow the sign of x0 x1: a degree-2 kernel can, a linear model
    cannot."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(240, 2))
    y0 = (X[:, 0] * X[:, 1] > 0).astype(np.uint8)
    Y = np.column_stack([y0, 1 - y0])
    lin = RankSVM(C=10.0).fit(X[:160], Y[:160])
    poly = RankSVM(C=10.0, kernel="poly", degree=2, gamma=1.0, coef0=1.0, random_state=0).fit(X[:160], Y[:160])

    def acc(model):
        F = model.label_scores(X[160:])
        return np.mean((F[:, 0] > F[:, 1]) == (y0[160:] == 1))

    assert acc(poly) > 0.9
    assert acc(lin) < 0.75


def test_ranksvm_nystroem_with_all_landmarks_is_the_exact_kernel():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    Y = (X[:, :2] > 0).astype(np.uint8)
    svm = RankSVM(kernel="poly", degree=3, gamma=0.5, coef0=1.0, n_components=500, random_state=0).fit(X, Y)
    Phi = svm.feature_map_.transform(X)
    np.testing.assert_allclose(Phi @ Phi.T, polynomial_kernel(X, degree=3, gamma=0.5, coef0=1.0), atol=1e-6)


# ----------------------------------------------------------------------- BP-MLL
def test_bpmll_loss_and_gradient_match_knowl14_error_terms():
    rng = np.random.default_rng(0)
    m, d, s, q = 12, 4, 3, 4
    X = rng.normal(size=(m, d))
    Y = (rng.uniform(size=(m, q)) < 0.5).astype(np.uint8)
    Y[0] = 0  # no relevant label: no pair
    V, gamma = rng.normal(size=(d, s)) * 0.5, rng.normal(size=s) * 0.5
    W, theta = rng.normal(size=(s, q)) * 0.5, rng.normal(size=q) * 0.5
    params = np.concatenate([V.ravel(), gamma, W.ravel(), theta])
    value, grad = bpmll_loss_grad(params, X, Y, ((d, s), q), 0.0)
    E, (dW, dtheta, dV, dgamma) = loop_bpmll(X, Y, V, gamma, W, theta)
    assert value == pytest.approx(E)
    # Knowl 14's update directions are minus the gradient.
    np.testing.assert_allclose(-grad, np.concatenate([dV.ravel(), dgamma, dW.ravel(), dtheta]), atol=1e-10)


def test_bpmll_gradient_with_weight_decay_is_exact():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(15, 3))
    Y = (rng.uniform(size=(15, 3)) < 0.5).astype(float)
    shapes = ((3, 2), 3)
    p = rng.normal(size=3 * 2 + 2 + 2 * 3 + 3) * 0.5
    f = lambda t: bpmll_loss_grad(t, X, Y, shapes, 0.3)[0]  # noqa: E731
    g = lambda t: bpmll_loss_grad(t, X, Y, shapes, 0.3)[1]  # noqa: E731
    assert check_grad(f, g, p) < 1e-6


def test_bpmll_learns_a_ranking(linear_problem):
    X, Y, Xq, Yq = linear_problem
    for solver, iters in (("lbfgs", 200), ("gd", 300)):
        net = BPMLL(hidden_layer_size=8, solver=solver, learning_rate=0.5, max_iter=iters, random_state=0).fit(X, Y)
        C = net.label_scores(Xq)
        i, j, k, _ = ranking_pairs(Yq)
        assert np.mean(C[i, j] > C[i, k]) > 0.85, solver
        assert np.mean(net.predict(Xq) != Yq) < 0.2, solver
    assert net.coefs_[0].shape == (6, 8) and net.coefs_[1].shape == (8, 4)
    assert BPMLL(random_state=0, max_iter=1).fit(np.zeros((10, 20)) + np.eye(10, 20), Y[:10]).coefs_[0].shape == (20, 4)


# ----------------------------------------------------------------------- ML-RBF
def test_mlrbf_matches_loop_formulas(linear_problem):
    X, Y, Xq, _ = linear_problem
    rbf = MLRBF(fraction=0.05, scaling_factor=1.5, random_state=0).fit(X, Y)
    counts = Y.sum(axis=0)
    expected = [max(1, int(round(0.05 * c))) for c in counts]
    assert [int(np.sum(rbf.center_labels_ == j)) for j in range(4)] == expected
    assert rbf.sigma_ == pytest.approx(loop_mlrbf_sigma(rbf.centers_.tolist(), 1.5))
    H = loop_mlrbf_hidden(X.tolist(), rbf.centers_.tolist(), rbf.sigma_)
    W, *_ = np.linalg.lstsq(H, 2.0 * Y - 1, rcond=None)
    np.testing.assert_allclose(rbf.coef_, W, atol=1e-8)
    Hq = loop_mlrbf_hidden(Xq.tolist(), rbf.centers_.tolist(), rbf.sigma_)
    np.testing.assert_array_equal(rbf.predict(Xq), (Hq @ W > 0).astype(int))


def test_mlrbf_prototypes_are_label_centroids():
    """Label j's instances form one tight blob: with one cluster per label the
    prototype is the blob's mean and the labels are recovered."""
    rng = np.random.default_rng(0)
    centers = np.array([[0, 0], [5, 0], [0, 5]], dtype=float)
    X = np.vstack([c + 0.3 * rng.normal(size=(40, 2)) for c in centers])
    Y = np.repeat(np.eye(3, dtype=np.uint8), 40, axis=0)
    rbf = MLRBF(fraction=0.01, random_state=0).fit(X, Y)
    np.testing.assert_allclose(rbf.centers_, [X[Y[:, j] == 1].mean(0) for j in range(3)])
    np.testing.assert_array_equal(rbf.predict(centers), np.eye(3))


# -------------------------------------------------------------------------- CML
def test_cml_likelihood_matches_loop_and_gradient_is_exact():
    rng = np.random.default_rng(0)
    m, d, q = 20, 3, 3
    X = rng.normal(size=(m, d))
    Y = (rng.uniform(size=(m, q)) < 0.5).astype(np.uint8)
    S, t = np.unique(Y, axis=0, return_inverse=True)
    t = np.asarray(t).ravel()
    Phi = pair_features(S)
    assert Phi.shape == (len(S), 4 * 3)
    params = rng.normal(size=d * q + q + Phi.shape[1]) * 0.5
    args = (X, S.astype(float), Phi, t, np.bincount(t, minlength=len(S)).astype(float), 0.5)
    value, _ = cml_loss_grad(params, *args)
    W, b, pc = params[: d * q].reshape(d, q), params[d * q : d * q + q], params[d * q + q :]
    ll = loop_cml_log_likelihood(X.tolist(), Y, S.tolist(), W, b, pc)
    assert value == pytest.approx(-ll + 0.5 * 0.5 * (params**2).sum())
    f = lambda p: cml_loss_grad(p, *args)[0]  # noqa: E731
    g = lambda p: cml_loss_grad(p, *args)[1]  # noqa: E731
    assert check_grad(f, g, params) < 1e-5


def test_cml_row_blocks_change_nothing(monkeypatch):
    # The (rows, label sets) potentials are built in blocks of rows so that no
    # (n, K) array is allocated; blocks of a few rows must give the same model.
    import mlknn.baselines._cml as adaptation

    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 4))
    Y = (rng.uniform(size=(60, 5)) < 0.5).astype(np.uint8)
    whole = CML(max_iter=20).fit(X, Y)
    monkeypatch.setattr(adaptation, "_CML_BLOCK_BYTES", 8 * 3 * len(whole.label_sets_))  # 3 rows a block
    assert len(adaptation._cml_row_blocks(60, len(whole.label_sets_))) == 20
    blocks = CML(max_iter=20).fit(X, Y)
    np.testing.assert_allclose(blocks.coef_, whole.coef_, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(blocks.predict_proba(X), whole.predict_proba(X), atol=1e-8)
    np.testing.assert_allclose(blocks.predict_log_set_proba(X), whole.predict_log_set_proba(X), atol=1e-7)
    np.testing.assert_array_equal(blocks.predict(X), whole.predict(X))


def test_cml_marginals_never_exceed_one():
    # Label 0 is in every label set, so its marginal is a sum of all the set
    # probabilities: 1.0000000000000004 before the clip (seed 0).
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    Y = (rng.random((40, 5)) < 0.5).astype(np.uint8)
    Y[:, 0] = 1
    P = CML(max_iter=20).fit(X, Y).predict_proba(X)
    assert P.min() >= 0.0 and P.max() <= 1.0
    np.testing.assert_allclose(P[:, 0], 1.0, rtol=0, atol=1e-12)


def test_cml_learns_label_correlation():
    """Labels 0 and 1 always co-occur and label 2 excludes them; x decides which
    group. MAP predictions are training label sets and recover the groups."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    g = X[:, 0] + 0.2 * rng.normal(size=200) > 0
    Y = np.column_stack([g, g, ~g]).astype(np.uint8)
    cml = CML(prior_variance=10.0).fit(X[:150], Y[:150])
    pred = cml.predict(X[150:])
    assert {tuple(r) for r in pred} <= {(1, 1, 0), (0, 0, 1)}
    assert np.mean(np.all(pred == Y[150:], axis=1)) > 0.85
    P = cml.predict_proba(X[150:])
    np.testing.assert_allclose(P[:, 0], P[:, 1])  # co-occurring labels share marginals


def test_cml_all_label_sets_equals_observed_when_all_are_observed():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 3))
    Y = (X[:, :2] + 0.5 * rng.normal(size=(120, 2)) > 0).astype(np.uint8)
    assert len(np.unique(Y, axis=0)) == 4
    a = CML().fit(X, Y)
    b = CML(label_sets="all").fit(X, Y)
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X), atol=1e-5)
    assert b.label_sets_.shape == (4, 2)


# ------------------------------------------------------------------------- MLLS
def test_mlls_closed_form_is_optimal(linear_problem):
    X, Y, _, _ = linear_problem
    mlls = MLLS(alpha=0.7, beta=0.2, n_components=2, fit_intercept=False).fit(X, Y)
    U, Theta = mlls.coef_, mlls.subspace_
    np.testing.assert_allclose(Theta @ Theta.T, np.eye(2), atol=1e-10)
    np.testing.assert_allclose(mlls.shared_coef_, Theta @ U)
    # Stationary in U for the chosen Theta (gradient of Knowl 16's objective).
    m = len(X)
    T = 2.0 * Y - 1
    grad = 2 / m * X.T @ (X @ U - T) + 2 * 0.7 * (U - Theta.T @ Theta @ U) + 2 * 0.2 * U
    np.testing.assert_allclose(grad, 0, atol=1e-10)
    # The chosen subspace beats random ones (each with its own optimal U).
    best = mlls.objective(X, Y, U, Theta)
    rng = np.random.default_rng(0)
    M = X.T @ X / m + 0.9 * np.eye(6)
    for _ in range(20):
        Q, _ = np.linalg.qr(rng.normal(size=(6, 2)))
        Ur = np.linalg.solve(M - 0.7 * Q @ Q.T, X.T @ T / m)
        assert best <= mlls.objective(X, Y, Ur, Q.T) + 1e-12


def test_mlls_without_sharing_is_ridge(linear_problem):
    X, Y, Xq, Yq = linear_problem
    mlls = MLLS(alpha=0.0, beta=0.3).fit(X, Y)
    Xc = X - X.mean(0)
    T = 2.0 * Y - 1
    U = np.linalg.solve(Xc.T @ Xc / len(X) + 0.3 * np.eye(6), Xc.T @ (T - T.mean(0)) / len(X))
    np.testing.assert_allclose(mlls.coef_, U, atol=1e-10)
    assert np.mean(mlls.predict(Xq) != Yq) < 0.15


def test_mlls_sparse_matches_dense(linear_problem):
    X, Y, Xq, _ = linear_problem
    X = np.where(np.abs(X) < 0.5, 0.0, X)
    a = MLLS().fit(X, Y)
    b = MLLS().fit(sp.csr_matrix(X), Y)
    np.testing.assert_allclose(a.decision_function(Xq), b.decision_function(sp.csr_matrix(Xq)), atol=1e-8)
