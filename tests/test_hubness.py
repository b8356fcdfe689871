import numpy as np
import pytest
import scipy.sparse as sp
import scipy.stats
from reference_impls import loop_knn, loop_mlknn
from reference_mlhiknn import loop_hubness_measures, loop_k_occurrence, loop_rerank, loop_secondary

from mlknn import MLkNN
from mlknn.hubness import (
    DisSimLocal,
    HubnessGraph,
    LocalScaling,
    MutualProximity,
    antihub_occurrence,
    hub_occurrence,
    hubness_stats,
    k_occurrence,
    make_reduction,
    skewness,
)
from mlknn.neighbors import BruteNeighbors, NeighborGraph, build_graph

METHODS = {
    "ls": lambda k, nc: LocalScaling(k, n_candidates=nc),
    "mp": lambda k, nc: MutualProximity(k, n_candidates=nc),
    "mp-gauss": lambda k, nc: MutualProximity(k, method="gaussian", n_candidates=nc),
    "dsl": lambda k, nc: DisSimLocal(k, n_candidates=nc),
}


@pytest.fixture
def hub_problem():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 6))
    Xq = np.vstack([X[:6] + 0.05 * rng.normal(size=(6, 6)), rng.normal(size=(4, 6))])
    return X, Xq


# ------------------------------------------------------------------ measures
def test_k_occurrence_matches_loop():
    rng = np.random.default_rng(0)
    ind = rng.integers(0, 30, size=(50, 4))
    g = NeighborGraph(ind, np.sort(rng.random((50, 4)), axis=1))
    np.testing.assert_array_equal(k_occurrence(g, 30), loop_k_occurrence(ind, 30))
    X = rng.normal(size=(25, 3))
    _, loo = loop_knn(X, None, 5, loo=True)
    lg = build_graph(BruteNeighbors().fit(X), None, 5)
    np.testing.assert_array_equal(k_occurrence(lg), loop_k_occurrence(loo, 25))  # n_train from a LOO graph
    assert k_occurrence(lg).sum() == 25 * 5


def test_k_occurrence_errors():
    g = NeighborGraph(np.array([[0, 3]]), np.array([[0.0, 1.0]]))
    with pytest.raises(ValueError, match="'n_train' parameter is required"):
        k_occurrence(g)
    with pytest.raises(ValueError, match="'n_train' parameter must exceed every neighbour index.*Got 3"):
        k_occurrence(g, 3)
    with pytest.raises(TypeError, match="'graph' parameter must be a NeighborGraph"):
        k_occurrence(np.zeros((2, 2)), 3)


def test_skewness_matches_scipy():
    rng = np.random.default_rng(1)
    for occ in [rng.poisson(5, 200), rng.geometric(0.1, 300), np.r_[np.zeros(50), 40]]:
        assert skewness(occ) == pytest.approx(scipy.stats.skew(occ), rel=1e-12)
    assert skewness(np.full(10, 3)) == 0.0  # constant: defined as 0 (scipy: nan)


def test_hub_and_antihub_occurrence_hand_example():
    # k = 1, five points; everyone's nearest neighbour is point 0 except point 0's (-> 1).
    g = NeighborGraph(np.array([[1], [0], [0], [0], [0]]), np.ones((5, 1)), loo=True)
    occ = k_occurrence(g)
    np.testing.assert_array_equal(occ, [4, 1, 0, 0, 0])
    # Hubs: O_k > 2k = 2 -> point 0; H_occ = 4 / (5 * 1). Antihubs: points 2, 3, 4.
    assert hub_occurrence(occ, 1) == pytest.approx(0.8)
    assert antihub_occurrence(occ) == pytest.approx(0.6)
    # S_k: mean 1, deviations [3, 0, -1, -1, -1]: m2 = 12/5, m3 = 24/5.
    assert skewness(occ) == pytest.approx((24 / 5) / (12 / 5) ** 1.5)
    stats = hubness_stats(g, n_neighbors=1)
    assert (stats.hub_occurrence, stats.antihub_occurrence, stats.max_occurrence) == (0.8, 0.6, 4)
    assert stats["skewness"] == stats.as_dict()["skewness"]


def test_hubness_stats_matches_loop():
    X = np.random.default_rng(4).normal(size=(60, 20))
    _, loo = loop_knn(X, None, 5, loo=True)
    s_k, h_occ, a_occ = loop_hubness_measures(loop_k_occurrence(loo, 60), 5)
    stats = hubness_stats(X, n_neighbors=5)
    assert stats.skewness == pytest.approx(s_k, rel=1e-12)
    assert stats.hub_occurrence == pytest.approx(h_occ)
    assert stats.antihub_occurrence == pytest.approx(a_occ)
    # include_self: searched against itself, each point is its own first neighbour.
    _, inc = loop_knn(X, X, 5)
    s_k, h_occ, a_occ = loop_hubness_measures(loop_k_occurrence(inc, 60), 5)
    stats = hubness_stats(X, n_neighbors=5, include_self=True)
    assert (stats.skewness, stats.hub_occurrence, stats.antihub_occurrence) == pytest.approx((s_k, h_occ, a_occ))
    assert stats.antihub_occurrence == 0.0


def test_hubness_stats_errors():
    X = np.zeros((5, 2))
    with pytest.raises(ValueError, match="'n_neighbors' parameter of hubness_stats must be <= n_samples - 1 = 4"):
        hubness_stats(X, n_neighbors=5)
    with pytest.raises(ValueError, match="'n_neighbors' parameter of hubness_stats must be an int"):
        hubness_stats(X, n_neighbors=0)
    with pytest.raises(ValueError, match="'include_self' parameter"):
        hubness_stats(X, n_neighbors=2, include_self=True, hubness="ls")


def test_reductions_reduce_hubness():
    X = np.random.default_rng(5).normal(size=(400, 60))
    before = hubness_stats(X, 10).skewness
    assert before > 1.0
    for h in ["ls", "mp", "mp-gauss", "dsl"]:
        assert hubness_stats(X, 10, hubness=h).skewness < 0.6 * before, h


# ----------------------------------------------------------------- reductions
@pytest.mark.parametrize("method", list(METHODS))
def test_reduction_matches_loop_exactly_with_all_candidates(hub_problem, method):
    # n_candidates = -1 (all training points): the re-ranking is exact.
    X, Xq = hub_problem
    k = 4
    index = BruteNeighbors().fit(X)
    red = METHODS[method](k, -1)
    width = min(red.search_width(), X.shape[0] - 1)
    assert width == 39
    red.fit(build_graph(index, None, width), X)
    ind, sec = loop_rerank(loop_secondary(method, X, None, k), k)
    np.testing.assert_array_equal(red.fit_graph_.indices, ind)
    np.testing.assert_allclose(red.fit_graph_.distances, sec, rtol=0, atol=1e-10)
    qg = red.transform(build_graph(index, Xq, width), Xq)
    ind, sec = loop_rerank(loop_secondary(method, X, Xq, k), k)
    np.testing.assert_array_equal(qg.indices, ind)
    np.testing.assert_allclose(qg.distances, sec, rtol=0, atol=1e-10)


@pytest.mark.parametrize("method", list(METHODS))
def test_reduction_restricted_to_candidates(hub_problem, method):
    # With W < n - 1 the values are still exact; only the W primary neighbours compete.
    X, Xq = hub_problem
    k, W = 3, 8
    index = BruteNeighbors().fit(X)
    red = METHODS[method](k, W).fit(build_graph(index, None, W), X)
    for graph, rows in [(red.fit_graph_, loop_secondary(method, X, None, k)),
                        (red.transform(build_graph(index, Xq, W), Xq), loop_secondary(method, X, Xq, k))]:
        cand = build_graph(index, None if graph.loo else Xq, W).indices
        restricted = [{x: row[x] for x in cand[i]} for i, row in enumerate(rows)]
        ind, sec = loop_rerank(restricted, k)
        np.testing.assert_array_equal(graph.indices, ind)
        np.testing.assert_allclose(graph.distances, sec, rtol=0, atol=1e-10)


@pytest.mark.parametrize("method", list(METHODS))
def test_transform_preserves_shape_sortedness_and_self_exclusion(method):
    rng = np.random.default_rng(6)
    X = rng.normal(size=(120, 15))
    Xq = rng.normal(size=(30, 15))
    k = 5
    red = METHODS[method](k, None)
    assert red.search_width() == 100
    index = BruteNeighbors().fit(X)
    g = red.fit(build_graph(index, None, 100), X).fit_graph_
    q = red.transform(build_graph(index, Xq, 100), Xq)
    for graph, n in [(g, 120), (q, 30)]:
        assert isinstance(graph, HubnessGraph)
        assert graph.indices.shape == graph.distances.shape == graph.primary_distances.shape == (n, k)
        assert np.all(np.diff(graph.distances, axis=1) >= 0)
        assert all(len(set(row)) == k for row in graph.indices.tolist())
    assert g.loo and not q.loo
    assert not np.any(g.indices == np.arange(120)[:, None])
    # Primary distances are the true metric distances of the chosen neighbours.
    np.testing.assert_allclose(q.primary_distances, np.linalg.norm(Xq[:, None, :] - X[q.indices], axis=2))
    # Transforming the training LOO graph gives the fitted graph; take() slices all arrays.
    assert red.transform(build_graph(index, None, 100)) is g
    t = g.take(2)
    assert isinstance(t, HubnessGraph) and t.primary_distances.shape == (120, 2)


@pytest.mark.parametrize("method", ["mp", "mp-gauss", "dsl"])
def test_sparse_features_give_same_graph(hub_problem, method):
    X, Xq = hub_problem
    X = np.where(np.abs(X) < 0.5, 0.0, X)
    Xq = np.where(np.abs(Xq) < 0.5, 0.0, Xq)
    index = BruteNeighbors().fit(X)
    dense = METHODS[method](4, 20).fit(build_graph(index, None, 20), X)
    sparse = METHODS[method](4, 20).fit(build_graph(index, None, 20), sp.csr_matrix(X))
    np.testing.assert_array_equal(dense.fit_graph_.indices, sparse.fit_graph_.indices)
    np.testing.assert_allclose(dense.fit_graph_.distances, sparse.fit_graph_.distances, atol=1e-10)
    qd = dense.transform(build_graph(index, Xq, 20), Xq)
    qs = sparse.transform(build_graph(index, Xq, 20), sp.csr_matrix(Xq))
    np.testing.assert_array_equal(qd.indices, qs.indices)
    np.testing.assert_allclose(qd.distances, qs.distances, atol=1e-10)


def test_small_working_memory_gives_same_result(hub_problem):
    # MP streams column blocks and row chunks: tiny blocks must not change anything.
    X, Xq = hub_problem
    index = BruteNeighbors().fit(X)
    for method in ("empiric", "gaussian"):
        big = MutualProximity(4, method=method, n_candidates=15).fit(build_graph(index, None, 15), X)
        tiny = MutualProximity(4, method=method, n_candidates=15, working_memory=0.001).fit(build_graph(index, None, 15), X)
        np.testing.assert_array_equal(big.fit_graph_.indices, tiny.fit_graph_.indices)
        np.testing.assert_allclose(big.fit_graph_.distances, tiny.fit_graph_.distances, atol=1e-12)
        qb = big.transform(build_graph(index, Xq, 15), Xq)
        qt = tiny.transform(build_graph(index, Xq, 15), Xq)
        np.testing.assert_allclose(qb.distances, qt.distances, atol=1e-12)


def test_ls_zero_scale_rule():
    # Point 0 has k = 2 exact duplicates -> d_k = 0: LS is 0 to its copies, 1 to the rest.
    X = np.array([[0.0], [0.0], [0.0], [1.0], [3.0], [4.5]])
    index = BruteNeighbors().fit(X)
    ls = LocalScaling(2, n_candidates=-1).fit(build_graph(index, None, 5))
    assert ls.scale_[0] == 0.0
    np.testing.assert_array_equal(ls.fit_graph_.indices[0], [1, 2])
    np.testing.assert_array_equal(ls.fit_graph_.distances[0], [0.0, 0.0])
    assert np.all(np.isfinite(ls.fit_graph_.distances))


def test_reduction_errors(hub_problem):
    X, Xq = hub_problem
    index = BruteNeighbors().fit(X)
    loo = build_graph(index, None, 10)
    with pytest.raises(ValueError, match="needs the features X in fit"):
        MutualProximity(3).fit(loo)
    with pytest.raises(ValueError, match="needs the training set's leave-one-out NeighborGraph"):
        LocalScaling(3).fit(build_graph(index, Xq, 10))
    with pytest.raises(ValueError, match="'metric' parameter of DisSimLocal must be 'euclidean' or 'sqeuclidean'"):
        DisSimLocal(3, metric="cosine").fit(loo, X)
    with pytest.raises(ValueError, match="'n_candidates' parameter of LocalScaling.*Got 0"):
        LocalScaling(3, n_candidates=0).fit(loo)
    with pytest.raises(ValueError, match="'method' parameter of MutualProximity"):
        MutualProximity(3, method="uniform").fit(loo, X)
    with pytest.raises(ValueError, match="'n_neighbors' parameter of LocalScaling"):
        LocalScaling().fit(loo)
    with pytest.raises(ValueError, match="at least n_neighbors = 12 wide"):
        LocalScaling(12).fit(loo)
    with pytest.raises(ValueError, match="'hubness' parameter must be None, one of"):
        make_reduction("csls", n_neighbors=3)
    fitted = DisSimLocal(3).fit(loo, X)
    with pytest.raises(ValueError, match="X has 5 features"):
        fitted.transform(build_graph(index, Xq, 10), Xq[:, :5])


def test_make_reduction_sets_k_and_metric():
    red = make_reduction(LocalScaling(n_candidates=30), n_neighbors=7, metric="sqeuclidean")
    assert (red.n_neighbors, red.n_candidates, red.metric) == (7, 30, "sqeuclidean")
    assert make_reduction("mp-gauss", n_neighbors=4).method == "gaussian"


# ---------------------------------------------------------- estimator hook
@pytest.mark.parametrize("hubness", ["ls", "mp", "mp-gauss", "dsl"])
def test_mlknn_with_hubness_matches_loop_on_reranked_graphs(small_problem, hubness):
    X, Y = small_problem
    Xq = X[:15] + 0.05
    k = 5
    clf = MLkNN(k, hubness=hubness).fit(X, Y)
    assert clf._search_width() == 100  # capped to n - 1 = 79 when searching
    assert clf.hubness_.fit_graph_.n_neighbors == k
    qg, _ = clf.query_graph(Xq)
    post, pred, *_ = loop_mlknn(clf.hubness_.fit_graph_.indices, Y, qg.indices, k)
    np.testing.assert_allclose(clf.predict_proba(Xq), post, atol=1e-12)
    np.testing.assert_array_equal(clf.predict(Xq), pred)
    # The graphs really changed (hubness reduction is not the identity here).
    plain = build_graph(BruteNeighbors().fit(X), None, k)
    assert (clf.hubness_.fit_graph_.indices != plain.indices).any()


def test_hubness_object_parameter(small_problem):
    X, Y = small_problem
    clf = MLkNN(4, hubness=LocalScaling(n_candidates=12)).fit(X, Y)
    assert clf._search_width() == 12 and clf.hubness_.n_neighbors == 4
    assert clf.hubness.n_neighbors is None  # the user's object is not mutated
    assert clf.predict(X[:3]).shape == (3, 4)


def test_hubness_none_is_identity(small_problem):
    X, Y = small_problem
    clf = MLkNN(5).fit(X, Y)
    assert clf._search_width() == 5 and not hasattr(clf, "hubness_")
    graph = build_graph(clf.nn_, X[:3], 5)
    assert clf._transform_graph(graph, X[:3]) is graph


def test_cli_hubness_command(data_dir, capsys):
    from mlknn.cli._hubness import hubness_command

    stats = hubness_command("emotions", k=10, include_self=True, scaling="none")
    out = capsys.readouterr().out
    assert "S_k" in out and "0.19" in out  # seed 001 Table 1: emotions S_k = 0.19
    assert stats.antihub_occurrence == 0.0


def test_mp_cosine_equals_euclidean_on_normalised_rows(hub_problem):
    # Cosine distance = half the squared Euclidean distance of L2-normalised rows: the
    # same order, so empiric MP (which only compares distances) gives the same graph.
    X, Xq = hub_problem
    Xn = X / np.linalg.norm(X, axis=1, keepdims=True)
    Xqn = Xq / np.linalg.norm(Xq, axis=1, keepdims=True)
    cos = MutualProximity(4, n_candidates=20, metric="cosine")
    euc = MutualProximity(4, n_candidates=20)
    cos.fit(build_graph(BruteNeighbors(metric="cosine").fit(X), None, 20), X)
    euc.fit(build_graph(BruteNeighbors().fit(Xn), None, 20), Xn)
    np.testing.assert_array_equal(cos.fit_graph_.indices, euc.fit_graph_.indices)
    np.testing.assert_allclose(cos.fit_graph_.distances, euc.fit_graph_.distances, atol=1e-12)
    qc = cos.transform(build_graph(BruteNeighbors(metric="cosine").fit(X), Xq, 20), Xq)
    qe = euc.transform(build_graph(BruteNeighbors().fit(Xn), Xqn, 20), Xqn)
    np.testing.assert_array_equal(qc.indices, qe.indices)
    with pytest.raises(ValueError, match="'metric' parameter of MutualProximity must be one of"):
        MutualProximity(4, metric="manhattan").fit(build_graph(BruteNeighbors().fit(X), None, 20), X)


def test_reduction_error_messages_name_parameter_rule_and_value(hub_problem):
    X, Xq = hub_problem
    index = BruteNeighbors().fit(X)
    loo = build_graph(index, None, 10)
    for wm in (np.inf, np.nan, 0, True, "big"):
        with pytest.raises(ValueError, match=r"'working_memory' parameter of MutualProximity must be a finite number > 0"):
            MutualProximity(3, working_memory=wm).fit(loo, X)
    MutualProximity(3, working_memory=np.int64(64)).fit(loo, X)  # numpy ints are numbers
    with pytest.raises(ValueError, match=r"'graph' parameter of LocalScaling.fit \(the candidate graph\) must be at least n_neighbors = 12 wide. Got width 10"):
        LocalScaling(12).fit(loo)
    fitted = LocalScaling(3).fit(loo)
    with pytest.raises(ValueError, match=r"'graph' parameter of LocalScaling.transform is a leave-one-out graph.*Got 39 points"):
        fitted.transform(build_graph(BruteNeighbors().fit(X[:40 - 1]), None, 10))
    with pytest.raises(ValueError, match=r"'X' parameter of hubness_stats.*loo=True.*loo=False"):
        hubness_stats(build_graph(index, Xq, 5), 3)
