import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from reference_iblr import loop_iblr, loop_meta_features
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split

from mlknn import IBLR
from mlknn.algorithms._iblr import IllPosedFitWarning
from mlknn.neighbors import BruteNeighbors, NeighborGraph, build_graph


def graph_of(indices, loo=False):
    indices = np.asarray(indices, dtype=np.intp)
    distances = np.broadcast_to(np.arange(1.0, indices.shape[1] + 1), indices.shape).copy()
    return NeighborGraph(indices, distances, loo)


def check_against_loop(X, Y, Xq, k, include_features, C=5e7, tol=1e-8):
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # both must converge here
        warnings.simplefilter("error", IllPosedFitWarning)  # and the problem be determined
        clf = IBLR(k, include_features=include_features, C=C, tol=tol).fit(X, Y)
    index = BruteNeighbors().fit(X)
    train_nbrs = index.kneighbors(None, k)[1]
    query_nbrs = index.kneighbors(Xq, k)[1]
    proba, pred, meta = loop_iblr(
        train_nbrs, Y, query_nbrs, k, X if include_features else None, Xq if include_features else None, C=C
    )
    np.testing.assert_array_equal(clf.meta_features(build_graph(clf.nn_, None, k)), meta)
    # The default tol (1e-8 on the gradient of the mean objective) against an exact
    # Newton fit: docs/iblr.md states 1e-6 on the probabilities.
    got = clf.predict_proba(Xq)
    np.testing.assert_allclose(got, proba, rtol=0, atol=1e-6)
    near = np.abs(proba - 0.5) < 1e-6  # a decision may flip only within the tolerance
    np.testing.assert_array_equal(clf.predict(Xq)[~near], pred[~near])


@pytest.mark.parametrize("include_features", [False, True])
@pytest.mark.parametrize("k", [1, 3, 5, 10])
def test_matches_loop_reference(small_problem, k, include_features):
    # With the features (IBLR-ML+) the labels of small_problem, thresholds of X @ W
    # plus a little noise, are linearly separable: C = 10 makes the fit determined.
    X, Y = small_problem
    Xq = np.vstack([X[:25] + 0.05, np.random.default_rng(1).normal(size=(25, 6))])
    check_against_loop(X, Y, Xq, k, include_features, C=10.0 if include_features else 5e7)


@pytest.mark.data
@pytest.mark.parametrize("include_features", [False, True])
def test_matches_loop_reference_on_emotions(data_dir, include_features):
    from mlknn.datasets import load

    data = load("emotions", data_home=data_dir)
    Xtr, Xte, Ytr, _ = train_test_split(data.X, data.Y, test_size=0.5, random_state=0)
    # IBLR-ML+ separates labels 3 and 4 of this split (72 features, 296 rows):
    # nearly unpenalised, that fit is ill-posed (test_ill_posed_warnings), so C = 10.
    # With 78 inputs the default tol leaves 1.5e-6 on two probabilities; 1e-10 is checked.
    check_against_loop(Xtr, Ytr, Xte, 10, include_features, C=10.0 if include_features else 5e7,
                       tol=1e-10 if include_features else 1e-8)


# ------------------------------------------------------------- meta-features
def test_hand_worked_meta_features():
    # Points on a line, q = 2, k = 2 (leave-one-out for the training points):
    #   x:  0       1       2       10      11
    #   Y:  [1,0]   [1,1]   [0,1]   [0,0]   [1,0]
    # LOO neighbours: 0 -> {1, 2}, 1 -> {0, 2}, 2 -> {1, 0}, 3 -> {4, 2}, 4 -> {3, 2}
    # meta = mean label vector of the two neighbours:
    #   0: ([1,1] + [0,1]) / 2 = [0.5, 1]     1: ([1,0] + [0,1]) / 2 = [0.5, 0.5]
    #   2: ([1,1] + [1,0]) / 2 = [1, 0.5]     3: ([1,0] + [0,1]) / 2 = [0.5, 0.5]
    #   4: ([0,0] + [0,1]) / 2 = [0, 0.5]
    X = np.array([[0.0], [1.0], [2.0], [10.0], [11.0]])
    Y = np.array([[1, 0], [1, 1], [0, 1], [0, 0], [1, 0]])
    clf = IBLR(2).fit(X, Y)
    train_graph = build_graph(clf.nn_, None, 2)
    np.testing.assert_array_equal(
        clf.meta_features(train_graph), [[0.5, 1], [0.5, 0.5], [1, 0.5], [0.5, 0.5], [0, 0.5]]
    )
    # A query at 0.9: neighbours 1 and 0 -> [1, 0.5]; its own labels are unknown.
    np.testing.assert_array_equal(clf.meta_features(clf.query_graph([[0.9]])[0]), [[1, 0.5]])


def test_training_meta_features_exclude_own_labels():
    # Point 5 duplicates point 0 with the opposite labels. With k = 1 each one's
    # leave-one-out neighbour is the other copy (distance 0), so each one's
    # meta-features are the other's labels, never its own.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3)) * 10
    Y = (rng.random((30, 3)) < 0.5).astype(np.uint8)
    X[5] = X[0]
    Y[0] = [1, 0, 1]
    Y[5] = [0, 1, 0]
    clf = IBLR(1).fit(X, Y)
    meta = clf.meta_features(build_graph(clf.nn_, None, 1))
    np.testing.assert_array_equal(meta[0], [0, 1, 0])
    np.testing.assert_array_equal(meta[5], [1, 0, 1])
    # and the fit uses exactly these (the loop oracle reads the LOO graph literally)
    np.testing.assert_array_equal(meta, loop_meta_features(build_graph(clf.nn_, None, 1).indices, Y, 1))


def test_no_leak_of_own_labels_into_the_model():
    # Labels independent of X: with leave-one-out meta-features the model has nothing
    # to fit (small coefficients); had an instance's own label been among its
    # meta-features, f_l would separate label l and its coefficient would explode.
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 4))
    Y = (rng.random((300, 3)) < 0.4).astype(np.uint8)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        clf = IBLR(5).fit(X, Y)
    assert np.abs(clf.coef_).max() < 5


def test_hand_worked_logistic_fit_is_nearly_unpenalised():
    # q = 1, k = 1, n = 8: the meta-feature is the neighbour's label, f in {0, 1}.
    # Instances 0-3 have a labelled neighbour (f = 1), their labels 1, 1, 1, 0;
    # instances 4-7 an unlabelled one (f = 0), their labels 0, 0, 0, 1.
    # The unpenalised logistic MLE with one binary input reproduces the frequencies:
    # P(y = 1 | f = 1) = 3/4, P(y = 1 | f = 0) = 1/4, i.e. b = -ln 3, a = 2 ln 3.
    Y = np.array([[1], [1], [1], [0], [0], [0], [0], [1]])
    train = graph_of([[1], [0], [0], [1], [5], [4], [4], [5]], loo=True)
    clf = IBLR(1, tol=1e-10).fit_from_graph(train, Y)
    assert clf.intercept_[0] == pytest.approx(-math.log(3), abs=1e-5)
    assert clf.coef_[0, 0] == pytest.approx(2 * math.log(3), abs=1e-5)
    proba = clf.predict_proba_from_graph(graph_of([[0], [4]]))
    np.testing.assert_allclose(proba[:, 0], [0.75, 0.25], atol=1e-6)
    np.testing.assert_array_equal(clf.predict_from_graph(graph_of([[0], [4]]))[:, 0], [1, 0])


def test_default_is_close_to_unpenalised(small_problem):
    X, Y = small_problem
    near = IBLR(5, tol=1e-10).fit(X, Y).predict_proba(X)
    exact = IBLR(5, C=np.inf, tol=1e-10).fit(X, Y).predict_proba(X)
    np.testing.assert_allclose(near, exact, atol=1e-5)


def test_score_equations_hold_at_the_fit(small_problem):
    # Intercept unpenalised: the residuals sum to zero; the other score equations
    # are zero up to the tiny ridge.
    X, Y = small_problem
    clf = IBLR(5, tol=1e-10).fit(X, Y)
    meta = clf.meta_features(build_graph(clf.nn_, None, 5))
    proba = 1 / (1 + np.exp(-(meta @ clf.coef_.T + clf.intercept_)))
    residual = proba - Y
    np.testing.assert_allclose(residual.sum(axis=0), 0, atol=1e-6)
    np.testing.assert_allclose(meta.T @ residual, 0, atol=1e-6)


# ------------------------------------------------------------- other checks
@pytest.mark.parametrize("include_features", [False, True])
def test_constant_labels_predict_the_constant(small_problem, include_features):
    X, Y = small_problem
    Y = Y.copy()
    Y[:, 0] = 0
    Y[:, 2] = 1
    clf = IBLR(5, include_features=include_features).fit(X, Y)
    np.testing.assert_array_equal(clf.constant_labels_, [True, False, True, False])
    np.testing.assert_array_equal(clf.constant_values_, [0, 0, 1, 0])
    proba = clf.predict_proba(X)
    assert np.all(proba[:, 0] == 0) and np.all(proba[:, 2] == 1)
    pred = clf.predict(X)
    assert pred[:, 0].sum() == 0 and pred[:, 2].all()
    assert np.all(clf.coef_[[0, 2]] == 0)
    # the other labels are unaffected by the constant ones' presence... as inputs,
    # constant meta-features carry no information; all scores stay in [0, 1]
    assert np.all(np.isfinite(proba)) and proba.min() >= 0 and proba.max() <= 1


def test_single_label(small_problem):
    X, Y = small_problem
    clf = IBLR(3).fit(X, Y[:, :1])
    assert clf.predict(X).shape == (80, 1) and clf.coef_.shape == (1, 1)


def test_plus_variant_shapes_and_sparse_input(small_problem):
    X, Y = small_problem
    Xs = sp.csr_matrix(np.where(np.abs(X) > 0.5, X, 0.0))
    Xd = Xs.toarray()
    # Sparse inputs are scaled, not centred; dense ones centred and scaled: the same
    # optimum, reached by different lbfgs paths. Compared where the optimum is well
    # conditioned (C = 100). At the default C these 80 points separate most labels in
    # the 10 inputs, the nearly unpenalised optimum lies far out, and the two paths
    # stop at different points (see docs/iblr.md).
    a = IBLR(5, include_features=True, C=100.0, tol=1e-10).fit(Xs, Y)
    b = IBLR(5, include_features=True, C=100.0, tol=1e-10).fit(Xd, Y)
    # One coefficient per feature and per meta-feature (the shape does not depend on C,
    # so the two fits above serve; a separate default-C fit only repeated this).
    assert a.coef_.shape == b.coef_.shape == (4, 6 + 4)
    np.testing.assert_allclose(a.predict_proba(Xs[:30]), b.predict_proba(Xd[:30]), atol=1e-6)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(a.predict(Xs), b.predict(Xd))


def test_plus_variant_uses_features():
    # Label 1 is a function of x_0 alone; neighbours in x_1 (which dominates the
    # distance) carry no information about it. IBLR-ML+ recovers it, IBLR-ML does not.
    rng = np.random.default_rng(2)
    X = np.column_stack([rng.normal(size=200), 100 * rng.normal(size=200)])
    Y = np.column_stack([X[:, 1] > 0, X[:, 0] + 0.3 * rng.normal(size=200) > 0]).astype(np.uint8)
    Xt = np.column_stack([rng.normal(size=200), 100 * rng.normal(size=200)])
    Yt = (Xt[:, 0] > 0).astype(np.uint8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        plus = IBLR(5, include_features=True).fit(X, Y).predict(Xt)[:, 1]
        plain = IBLR(5).fit(X, Y).predict(Xt)[:, 1]
    assert np.mean(plus == Yt) > 0.85
    assert np.mean(plain == Yt) < 0.7


def test_fit_from_graph_equals_fit(small_problem):
    X, Y = small_problem
    index = BruteNeighbors().fit(X)
    wide_train = build_graph(index, None, 12)
    wide_query = build_graph(index, X[:15] + 0.1, 12)
    for include_features in (False, True):
        ref = IBLR(6, include_features=include_features).fit(X, Y)
        clf = IBLR(6, include_features=include_features).fit_from_graph(
            wide_train, Y, X=X if include_features else None, index=index
        )
        Xq = X[:15] + 0.1
        np.testing.assert_allclose(
            clf.predict_proba_from_graph(wide_query, Xq if include_features else None), ref.predict_proba(Xq)
        )
        np.testing.assert_array_equal(clf.predict(Xq), ref.predict(Xq))


def test_plus_variant_needs_X_with_graphs(small_problem):
    X, Y = small_problem
    index = BruteNeighbors().fit(X)
    with pytest.raises(ValueError, match=r"include_features=True.*needs the features X.*got X=None"):
        IBLR(5, include_features=True).fit_from_graph(build_graph(index, None, 5), Y)
    clf = IBLR(5, include_features=True).fit(X, Y)
    with pytest.raises(ValueError, match=r"include_features=True.*got X=None"):
        clf.predict_proba_from_graph(build_graph(index, X[:3], 5))


def test_non_convergence_gives_one_warning_naming_labels(small_problem):
    X, Y = small_problem
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf = IBLR(5, include_features=True, max_iter=1).fit(X, Y)
    conv = [w for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert len(conv) == 1
    assert "max_iter=1" in str(conv[0].message) and "label(s) [0, 1, 2, 3]" in str(conv[0].message)
    np.testing.assert_array_equal(clf.n_iter_, 1)


def test_float32_and_dtype(small_problem):
    X, Y = small_problem
    ref = IBLR(5).fit(X, Y)
    np.testing.assert_allclose(IBLR(5).fit(X.astype(np.float32), Y).predict_proba(X[:30].astype(np.float32)),
                               ref.predict_proba(X[:30]), atol=1e-8)
    assert IBLR(5).fit(X, Y.astype(np.float64)).predict(X[:3]).dtype == np.float64
    assert ref.predict(X[:3]).dtype == Y.dtype


@pytest.mark.parametrize(
    "params,match",
    [
        ({"n_neighbors": 0}, r"'n_neighbors' parameter of IBLR must be an int in the range \[1, inf\)\. Got 0"),
        ({"n_neighbors": 80}, r"must be <= n_samples - 1 = 79.*Got 80"),
        ({"C": 0}, r"'C' parameter of IBLR must be a float in the range \(0\.0, inf\]\. Got 0 "),
        ({"C": -1.0}, r"'C' parameter of IBLR must be a float in the range \(0\.0, inf\]\. Got -1\.0"),
        ({"max_iter": 0}, r"'max_iter' parameter of IBLR must be an int in the range \[1, inf\)\. Got 0"),
        ({"tol": 0.0}, r"'tol' parameter of IBLR must be a float in the range \(0\.0, inf\)\. Got 0\.0"),
        ({"include_features": "yes"}, r"'include_features' parameter of IBLR must be an instance of 'bool'"),
        ({"neighbors": "nope"}, "'neighbors' parameter"),
    ],
)
def test_bad_parameters(small_problem, params, match):
    X, Y = small_problem
    with pytest.raises(ValueError, match=match):
        IBLR(**params).fit(X, Y)


def test_clone_and_params():
    clf = IBLR(7, include_features=True, C=1e3)
    assert clone(clf).get_params() == clf.get_params()
    assert clf.set_params(n_neighbors=3).n_neighbors == 3


# ------------------------------------------------------------- readings and ill-posed fits
def test_mulan_variant_pins_the_ridge(small_problem):
    X, Y = small_problem
    paper = IBLR(5).fit(X, Y)
    mulan = IBLR(5, variant="mulan").fit(X, Y)
    np.testing.assert_array_equal(mulan.predict_proba(X[:20]), paper.predict_proba(X[:20]))
    with pytest.warns(UserWarning, match=r"ridge 1e-8 \(C=5e\+07\).*'C' parameter \(1\) is ignored"):
        pinned = IBLR(5, C=1.0, variant="mulan").fit(X, Y)
    np.testing.assert_array_equal(pinned.predict_proba(X[:20]), paper.predict_proba(X[:20]))
    assert not np.allclose(IBLR(5, C=1.0).fit(X, Y).predict_proba(X[:20]), paper.predict_proba(X[:20]))


def test_constant_columns_are_removed(small_problem):
    # A constant input column (IBLR-ML+ with a constant feature) gets coefficient 0
    # and changes nothing else.
    X, Y = small_problem
    Xc = np.hstack([X, np.full((X.shape[0], 1), 3.0)])
    with_const = IBLR(5, include_features=True, C=10.0).fit(Xc, Y)
    without = IBLR(5, include_features=True, C=10.0).fit(X, Y)
    np.testing.assert_array_equal(with_const.coef_[:, 6], 0.0)
    np.testing.assert_allclose(with_const.predict_proba(Xc[:20]), without.predict_proba(X[:20]), atol=1e-9)


def test_ill_posed_warnings():
    rng = np.random.default_rng(5)
    # q large against n: 30 labels, 40 rows -> 30 inputs + intercept > 40 / 2.
    X = rng.normal(size=(40, 3))
    Y = (rng.random((40, 30)) < 0.5).astype(np.uint8)
    with pytest.warns(IllPosedFitWarning, match=r"30 inputs \(\+ intercept\) for n = 40 training rows"):
        IBLR(5).fit(X, Y)
    # A real penalty: no warning.
    with warnings.catch_warnings():
        warnings.simplefilter("error", IllPosedFitWarning)
        IBLR(5, C=1.0).fit(X, Y)


def test_separated_labels_are_named(small_problem):
    # IBLR-ML+ on small_problem: thresholds of X @ W, separable by the features.
    X, Y = small_problem
    with pytest.warns(IllPosedFitWarning, match=r"separate the training rows of \d label\(s\) \[0"):
        clf = IBLR(5, include_features=True).fit(X, Y)
    assert clf.separated_labels_[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error", IllPosedFitWarning)
        IBLR(5, include_features=True, C=10.0).fit(X, Y)  # penalised: determined, no warning


def test_dense_in_q_estimators_have_no_sparse_label_path():
    from mlknn import DMLkNN, MLHiKNN

    assert IBLR._supports_sparse_labels is False
    assert MLHiKNN._supports_sparse_labels is False
    assert DMLkNN._supports_sparse_labels is False


@pytest.mark.parametrize("name", ["IBLR", "MLHiKNN", "DMLkNN"])
def test_dense_in_q_estimators_refuse_a_huge_sparse_y_before_allocating(name, monkeypatch):
    import mlknn
    from mlknn.utils._validation import DENSE_LABEL_BUDGET_ENV, LabelSpaceTooLargeError

    monkeypatch.setenv(DENSE_LABEL_BUDGET_ENV, str(2**20))  # 1 MiB
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    q = 100_000  # 40 x 100,000 dense: far above 1 MiB
    rows = np.arange(40)
    Y = sp.csr_array((np.ones(40, dtype=np.uint8), (rows, rows * 7)), shape=(40, q))
    with pytest.raises(LabelSpaceTooLargeError, match=r"(?s)MLkNN.*bytes|bytes.*MLkNN"):
        getattr(mlknn, name)(n_neighbors=3).fit(X, Y)
