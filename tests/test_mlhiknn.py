import math

import numpy as np
import pytest
from reference_impls import loop_knn
from reference_mlhiknn import EXACT_LOGISTIC, loop_mlhiknn
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

from mlknn.algorithms._mlhiknn import MLHiKNN, distance_weights, fuzzy_weight, hubness_weights
from mlknn.neighbors import BruteNeighbors, build_graph

TOL = 1e-10
#: Probabilities after the logistic regressions: the solver's stated tolerance
#: (LOGISTIC_PARAMS["tol"] = 1e-8 on the gradient; docs/mlhiknn.md measures <= 5e-8).
PROBA_TOL = 1e-7


def _check_against_loop(clf, X, Y, Xq, train_nbrs, train_dist, query_nbrs, query_dist, **kw):
    ref = loop_mlhiknn(train_nbrs, train_dist, Y, query_nbrs, query_dist, clf.n_neighbors, **kw)
    np.testing.assert_array_equal(clf.k_occurrence_, ref["O"])
    np.testing.assert_array_equal(clf.label_k_occurrence_, ref["OL"])
    np.testing.assert_allclose(clf.fuzzy_weight_, ref["g"], rtol=0, atol=TOL)
    np.testing.assert_allclose(clf.membership_, ref["u1"], rtol=0, atol=TOL)
    np.testing.assert_allclose(1 - clf.membership_, ref["u0"], rtol=0, atol=TOL)
    np.testing.assert_allclose(clf.train_relevance_, ref["r_train"], rtol=0, atol=TOL)
    graph, _ = clf.query_graph(Xq)
    np.testing.assert_allclose(clf._relevance(graph), ref["r_query"], rtol=0, atol=TOL)
    np.testing.assert_allclose(clf.predict_proba(Xq), ref["proba"], rtol=0, atol=PROBA_TOL)
    np.testing.assert_array_equal(clf.predict(Xq), ref["pred"])
    return ref


@pytest.mark.parametrize(
    "k,lam,beta,s",
    [(5, 3.0, 2.0, 1.0), (10, 2.0, 3.0, 0.5), (3, 0.2, 1.5, 1.0), (7, math.inf, 2.0, 0.0), (4, 1.0, math.inf, 2.0)],
)
def test_matches_loop_reference(small_problem, k, lam, beta, s):
    # Includes lambda k <= 1 (eq 28), lambda = inf (eq 29), beta = inf (uniform w_d), s = 0.
    X, Y = small_problem
    Xq = X[:20] + 0.05
    clf = MLHiKNN(k, fuzziness=lam, beta=beta, smoothing=s).fit(X, Y)
    td, ti = loop_knn(X, None, k, loo=True)
    qd, qi = loop_knn(X, Xq, k)
    _check_against_loop(clf, X, Y, Xq, ti, td, qi, qd, lam=lam, beta=beta, s=s)


@pytest.mark.parametrize("variant", ["g1", "g0", "h1", "d1", "fo"])
def test_ablation_variants_match_loop_and_differ_from_full_model(small_problem, variant):
    X, Y = small_problem
    Xq = X[:30] + 0.05
    k = 6
    td, ti = loop_knn(X, None, k, loo=True)
    qd, qi = loop_knn(X, Xq, k)
    clf = MLHiKNN(k, variant=variant).fit(X, Y)
    _check_against_loop(clf, X, Y, Xq, ti, td, qi, qd, variant=variant)
    full = MLHiKNN(k).fit(X, Y)
    assert np.abs(clf.predict_proba(Xq) - full.predict_proba(Xq)).max() > 1e-3
    if variant in ("g1", "g0"):
        assert np.all(clf.fuzzy_weight_ == (1.0 if variant == "g1" else 0.0))
    if variant == "fo":
        np.testing.assert_array_equal(clf.coef_, 0.0)


@pytest.mark.data
def test_matches_loop_reference_on_emotions(data_dir):
    # Full emotions (593 x 72), 50/50 split as in seed 001's 2-fold CV; raw features.
    from mlknn.datasets import load

    data = load("emotions")
    X, Xq, Y, _ = train_test_split(data.X, data.Y, test_size=0.5, random_state=0)
    k = 20
    index = BruteNeighbors().fit(X)
    td, ti = index.kneighbors(None, k)
    qd, qi = index.kneighbors(Xq, k)
    clf = MLHiKNN(k).fit(X, Y)
    _check_against_loop(clf, X, Y, Xq, ti, td, qi, qd)


def test_hand_worked_example():
    # Four points on a line, one label, k = 2, lambda = 3 (lambda k = 6), beta = 2, s = 1.
    X = np.array([[0.0], [1.0], [3.0], [7.0]])
    Y = np.array([[1], [1], [0], [0]])
    clf = MLHiKNN(2, fuzziness=3, beta=2, smoothing=1).fit(X, Y)
    # LOO 2-NN: 0 -> [1, 3] at [1, 3]; 1 -> [0, 3] at [1, 2]; 3 -> [1, 0] at [2, 3];
    # 7 -> [3, 1] at [4, 6]. Reverse counts 0: 2, 1: 3, 3: 3, 7: 0; plus self:
    np.testing.assert_array_equal(clf.k_occurrence_, [3, 4, 4, 1])
    # O^l: y_x + labels of x's reverse neighbours: 0 <- {1, 3}: 1+1+0; 1 <- {0, 3, 7}: 1+1+0+0;
    # 2 <- {0, 1, 7}: 0+1+1+0; 3 <- {}: 0.
    np.testing.assert_array_equal(clf.label_k_occurrence_[:, 0], [2, 2, 2, 0])
    g = [1 - math.log(3) / math.log(6), 1 - math.log(4) / math.log(6), 1 - math.log(4) / math.log(6), 1.0]
    np.testing.assert_allclose(clf.fuzzy_weight_, g)
    p1 = [3 / 5, 3 / 6, 3 / 6, 1 / 3]  # (O^l + 1) / (O + 2)
    y = [1, 1, 0, 0]
    u1 = [g[i] * y[i] + (1 - g[i]) * p1[i] for i in range(4)]
    np.testing.assert_allclose(clf.membership_[:, 0], u1)
    # n = 4, so points 1 and 3 (O = 4 = n) have w_h = 0 (eq 21).
    # Point 0: both neighbours have w_h = 0 -> uniform w_h; w_d ~ [1, 1/9] -> [9/10, 1/10].
    # Point 1: w_h = [1, 0] -> r = u1(0).  Point 3 (index 2): w_h = [0, 1] -> r = u1(0).
    # Point 7: uniform w_h; w_d ~ [1/16, 1/36] -> [9/13, 4/13].
    r = [(9 * u1[1] + u1[2]) / 10, u1[0], u1[0], (9 * u1[2] + 4 * u1[1]) / 13]
    np.testing.assert_allclose(clf.train_relevance_[:, 0], r, atol=1e-14)
    Xq = np.array([[0.5], [5.0], [3.0], [1.0]])
    graph, _ = clf.query_graph(Xq)
    # 0.5 -> [0, 1] equidistant, w_h = [1, 0]: u1(0). 5 -> [3, 7] (tie, lower index first),
    # w_h = [0, 1]: u1(7) = 0. 3 -> [3 (d=0), 1]: w_d = [1, 0] by the zero-distance rule, w_h
    # uniform: u1(3). 1 -> [1 (d=0), 0]: w_d = [1, 0], w_h = [0, 1], product 0 -> uniform.
    expected = [u1[0], u1[3], u1[2], (u1[1] + u1[0]) / 2]
    np.testing.assert_allclose(clf._relevance(graph)[:, 0], expected, atol=1e-14)
    lr = LogisticRegression(**EXACT_LOGISTIC).fit(clf.train_relevance_, Y[:, 0])
    np.testing.assert_allclose(clf.predict_proba(Xq)[:, 0], lr.predict_proba(np.c_[expected])[:, 1], atol=PROBA_TOL)


def test_zero_distance_rule():
    w = distance_weights(np.array([[0.0, 0.0, 1.0, 2.0], [0.0, 1.0, 1.0, 1.0], [1.0, 2.0, 2.0, 4.0]]), 2.0)
    np.testing.assert_allclose(w[0], [0.5, 0.5, 0, 0])
    np.testing.assert_allclose(w[1], [1, 0, 0, 0])
    np.testing.assert_allclose(w[2], np.array([1, 1 / 4, 1 / 4, 1 / 16]) / 1.5625)
    # No overflow for tiny distances with a steep exponent (beta = 5/4 -> d^-8).
    w = distance_weights(np.array([[1e-300, 2e-300, 1.0]]), 1.25)
    assert np.all(np.isfinite(w)) and w.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(w[0, :2], np.array([1, 2.0**-8]) / (1 + 2.0**-8))


def test_duplicates_give_finite_scores(small_problem):
    X, Y = small_problem
    Xd = np.vstack([X, X[:10], X[:10]])  # each of the first 10 points three times
    Yd = np.vstack([Y, Y[:10], Y[:10]])
    clf = MLHiKNN(5).fit(Xd, Yd)
    assert np.all(np.isfinite(clf.train_relevance_))
    proba = clf.predict_proba(Xd)
    assert np.all(np.isfinite(proba)) and proba.min() >= 0 and proba.max() <= 1
    # A query equal to a triplicated point: its three copies share the weight.
    graph, _ = clf.query_graph(X[:1])
    assert np.count_nonzero(graph.distances[0] == 0) == 3
    td, ti = BruteNeighbors().fit(Xd).kneighbors(None, 5)
    qd, qi = graph.distances, graph.indices
    ref = loop_mlhiknn(ti, td, Yd, qi, qd, 5)
    np.testing.assert_allclose(clf._relevance(graph), ref["r_query"], atol=TOL)


def test_hubness_weight_edge_cases():
    # eq 21: O = n -> 0; every neighbour with O = n -> uniform.
    w = hubness_weights(np.array([[10, 1, 5], [10, 10, 10]]), 10)
    h = np.array([0, math.log(10), math.log(2)])
    np.testing.assert_allclose(w[0], h / h.sum())
    np.testing.assert_allclose(w[1], [1 / 3] * 3)
    # k = n - 1: every O_k = n, all hubness weights uniform; still finite.
    X = np.random.default_rng(1).normal(size=(6, 2))
    Y = np.array([[1, 0], [0, 1], [1, 1], [0, 0], [1, 0], [0, 1]])
    clf = MLHiKNN(5).fit(X, Y)
    np.testing.assert_array_equal(clf.k_occurrence_, 6)
    assert np.all(np.isfinite(clf.predict_proba(X)))


def test_fuzzy_weight_ends():
    O = np.array([1, 2, 5, 30, 60, 100])
    np.testing.assert_allclose(fuzzy_weight(O, 3, 20), 1 - np.log(np.minimum(O, 60)) / np.log(60))
    assert fuzzy_weight(O, 3, 20)[0] == 1.0  # eq 14
    np.testing.assert_array_equal(fuzzy_weight(O, 3, 20)[4:], 0.0)  # eq 15
    np.testing.assert_array_equal(fuzzy_weight(O, 0.05, 20), 0.0)  # eq 28, lambda k = 1
    np.testing.assert_array_equal(fuzzy_weight(O, 0.01, 20), 0.0)  # eq 28
    np.testing.assert_array_equal(fuzzy_weight(O, math.inf, 20), 1.0)  # eq 29
    g = fuzzy_weight(np.arange(1, 61), 3, 20)
    assert np.all(np.diff(g) < 0) and np.all(np.diff(g, 2) > 0)  # eqs 17-18


def test_constant_label_predicts_constant(small_problem):
    X, Y = small_problem
    Y = Y.copy()
    Y[:, 0] = 0
    Y[:, 1] = 1
    clf = MLHiKNN(5).fit(X, Y)
    proba = clf.predict_proba(X[:25] + 0.1)
    np.testing.assert_array_equal(proba[:, 0], 0.0)
    np.testing.assert_array_equal(proba[:, 1], 1.0)
    pred = clf.predict(X[:25] + 0.1)
    assert pred[:, 0].sum() == 0 and pred[:, 1].all()
    np.testing.assert_array_equal(clf.constant_[:2], [0.0, 1.0])
    assert np.isnan(clf.constant_[2:]).all()
    td, ti = loop_knn(X, None, 5, loo=True)
    qd, qi = loop_knn(X, X[:25] + 0.1, 5)
    ref = loop_mlhiknn(ti, td, Y, qi, qd, 5)
    np.testing.assert_allclose(proba, ref["proba"], atol=PROBA_TOL)
    assert MLHiKNN(3).fit(X, Y[:, :1]).predict(X).shape == (80, 1)


def test_decision_rules():
    # Full model: proba > 0.5 (0.5 -> 0). Variant fo: r >= 0.5 (Table 14).
    X = np.random.default_rng(2).normal(size=(30, 3))
    Y = (X[:, :2] > 0).astype(int)
    clf = MLHiKNN(4).fit(X, Y)
    clf.coef_[:] = 0.0
    clf.intercept_[:] = 0.0
    np.testing.assert_array_equal(clf.predict_proba(X), 0.5)
    assert clf.predict(X).sum() == 0
    fo = MLHiKNN(4, variant="fo").fit(X, Y)
    fo.membership_ = np.full_like(fo.membership_, 0.5)
    np.testing.assert_allclose(fo.predict_proba(X), 0.5)
    assert fo.predict(X).all()


def test_predict_is_proba_above_half(small_problem):
    X, Y = small_problem
    clf = MLHiKNN(7).fit(X, Y)
    np.testing.assert_array_equal(clf.predict(X), (clf.predict_proba(X) > 0.5).astype(int))


def test_fit_from_graph_equals_fit(small_problem):
    X, Y = small_problem
    index = BruteNeighbors().fit(X)
    wide_train = build_graph(index, None, 15)
    wide_query = build_graph(index, X[:15] + 0.1, 15)
    clf = MLHiKNN(6).fit_from_graph(wide_train, Y, index=index)
    ref = MLHiKNN(6).fit(X, Y)
    np.testing.assert_allclose(clf.predict_proba_from_graph(wide_query), ref.predict_proba(X[:15] + 0.1), atol=1e-12)


@pytest.mark.parametrize("hubness", ["ls", "mp", "mp-gauss", "dsl"])
def test_hubness_parameter(small_problem, hubness):
    from mlknn.hubness import HubnessGraph

    X, Y = small_problem
    Xq = X[:12] + 0.07
    clf = MLHiKNN(5, hubness=hubness).fit(X, Y)
    assert clf._search_width() == 100 and clf.hubness_.fit_graph_.n_neighbors == 5
    graph, _ = clf.query_graph(Xq)
    assert isinstance(graph, HubnessGraph) and graph.n_neighbors == 5
    # The model reads the re-ranked neighbourhoods, with eq 20 on the primary distances.
    tg = clf.hubness_.fit_graph_
    ref = loop_mlhiknn(tg.indices, tg.primary_distances, Y, graph.indices, graph.primary_distances, 5)
    np.testing.assert_allclose(clf.train_relevance_, ref["r_train"], atol=TOL)
    np.testing.assert_allclose(clf.predict_proba(Xq), ref["proba"], atol=PROBA_TOL)
    assert not np.array_equal(tg.indices, build_graph(BruteNeighbors().fit(X), None, 5).indices)
    # fit_from_graph with a wide enough graph and X gives the same model.
    index = BruteNeighbors().fit(X)
    alt = MLHiKNN(5, hubness=hubness).fit_from_graph(build_graph(index, None, 79), Y, X=X, index=index)
    np.testing.assert_allclose(
        alt.predict_proba_from_graph(build_graph(index, Xq, 79), Xq), clf.predict_proba(Xq), atol=1e-12
    )


def test_hubness_needs_X_from_graph(small_problem):
    X, Y = small_problem
    index = BruteNeighbors().fit(X)
    with pytest.raises(ValueError, match="needs the features X"):
        MLHiKNN(5, hubness="mp").fit_from_graph(build_graph(index, None, 79), Y, index=index)


@pytest.mark.parametrize(
    "params,match",
    [
        ({"fuzziness": 0}, r"'fuzziness' parameter of MLHiKNN must be a float in the range \(0(\.0)?, inf\]"),
        ({"beta": 1}, r"'beta' parameter of MLHiKNN must be a float in the range \(1(\.0)?, inf\]"),
        ({"smoothing": -0.5}, "'smoothing' parameter"),
        ({"variant": "g2"}, "'variant' parameter of MLHiKNN must be a str among"),
        ({"hubness": "csls"}, "'hubness' parameter of MLHiKNN"),
        ({"n_neighbors": 80}, r"must be <= n_samples - 1 = 79"),
    ],
)
def test_bad_parameters(small_problem, params, match):
    X, Y = small_problem
    with pytest.raises(ValueError, match=match):
        MLHiKNN(**params).fit(X, Y)


def test_defaults_and_clone():
    clf = MLHiKNN()
    assert (clf.n_neighbors, clf.fuzziness, clf.beta, clf.smoothing) == (20, 3.0, 2.0, 1.0)
    assert clf.variant is None and clf.hubness is None
    assert clone(clf).get_params() == clf.get_params()
