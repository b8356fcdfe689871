"""Contract tests for every neighbour backend (issue 6).

Each backend is parametrised; a backend whose optional library is missing is
skipped with the pip command that installs it. The contract (see
``mlknn/neighbors/_base.py`` and ``_brute.py``): distances ascending, float64 and
exact for the neighbours returned, ties by the lower index, leave-one-out removes
exactly the point's own index (duplicates kept); exact backends return what
``brute`` returns; approximate ones reach recall >= 0.95 on an easy clustered set.
"""

import importlib.util
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_blobs
from sklearn.neighbors import KNeighborsTransformer

from mlknn import MLkNN
from mlknn.neighbors import (
    BruteNeighbors,
    GraphCache,
    PrecomputedNeighbors,
    available_backends,
    build_graph,
    compute_graphs,
    estimate_recall,
    get_backend,
    graph_to_csr,
    is_exact,
    recall_at_k,
)
from mlknn.neighbors._reuse import fold_graphs

_REQUIRES = {
    "faiss": ("faiss", "faiss"),
    "faiss-ivf": ("faiss", "faiss"),
    "faiss-hnsw": ("faiss", "faiss"),
    "hnswlib": ("hnswlib", "hnswlib"),
    "voyager": ("voyager", "ann"),
    "pynndescent": ("pynndescent", "pynndescent"),
}
ALL = ["brute", "faiss", "faiss-ivf", "faiss-hnsw", "hnswlib", "voyager", "pynndescent", "precomputed"]
EXACT = ["brute", "faiss", "precomputed"]
APPROX = ["faiss-ivf", "faiss-hnsw", "hnswlib", "voyager", "pynndescent"]
SEARCHING = [b for b in ALL if b != "precomputed"]  # backends that index feature vectors


def _param(name):
    marks = []
    if name in _REQUIRES:
        module, extra = _REQUIRES[name]
        marks.append(
            pytest.mark.skipif(
                importlib.util.find_spec(module) is None,
                reason=f"{module} is not installed: pip install 'mlknn[{extra}]'"
                + (" (no binary wheel: builds with g++ and the Python headers)" if module == "hnswlib" else ""),
            )
        )
    if name == "pynndescent":
        marks.append(pytest.mark.slow)  # numba compiles on first use in a process
    return pytest.param(name, marks=marks, id=name)


def params(names):
    return [_param(n) for n in names]


# ---------------------------------------------------------------- helpers
def clustered(n=600, d=8, centers=12, seed=0, dtype=np.float64, n_queries=0):
    """Blobs; with ``n_queries``, (X, Q) drawn from the same clusters."""
    X, _ = make_blobs(n_samples=n + n_queries, n_features=d, centers=centers, cluster_std=1.0,
                      random_state=seed)
    X = X.astype(dtype)
    return (X[:n], X[n:]) if n_queries else X


class Fitted:
    """A backend fitted on X, queried with feature vectors whatever the backend.

    ``precomputed`` receives exact sparse graphs built by brute force (wide enough
    for every k used here), so that it can be tested with the same calls.
    """

    WIDTH = 25

    def __init__(self, name, X, **params):
        self.name = name
        self.X = X
        if name == "precomputed":
            self._brute = BruteNeighbors().fit(X)
            width = min(self.WIDTH, X.shape[0] - 1)
            g = build_graph(self._brute, None, width)
            self.index = get_backend("precomputed").fit(graph_to_csr(g, X.shape[0]))
        else:
            self.index = get_backend(name, random_state=0, **params).fit(X)

    def kneighbors(self, Q=None, k=5):
        if self.name == "precomputed" and Q is not None:
            width = min(self.WIDTH, self.X.shape[0])
            Q = graph_to_csr(build_graph(self._brute, Q, width), self.X.shape[0])
        return self.index.kneighbors(Q, k)


def check_contract(dist, ind, n_fit, k, loo):
    assert dist.dtype == np.float64 and ind.dtype == np.intp
    assert dist.shape == ind.shape == (dist.shape[0], k)
    assert np.all(np.diff(dist, axis=1) >= 0), "distances must be ascending"
    assert np.all((ind >= 0) & (ind < n_fit))
    # no index twice in a row
    s = np.sort(ind, axis=1)
    assert np.all(np.diff(s, axis=1) > 0)
    # ties ordered by index
    tie = np.diff(dist, axis=1) == 0
    assert np.all(np.diff(ind, axis=1)[tie] > 0)
    if loo:
        assert not np.any(ind == np.arange(ind.shape[0])[:, None]), "LOO must exclude the point itself"


@pytest.fixture(scope="module")
def blobs():
    return clustered(n_queries=60)


@pytest.fixture(scope="module")
def exact_reference(blobs):
    X, Q = blobs
    b = BruteNeighbors().fit(X)
    return b.kneighbors(None, 10), b.kneighbors(Q, 10)


# ------------------------------------------------------------- contract
def test_every_backend_is_registered():
    for name in ALL:
        assert name in available_backends() or name in _REQUIRES
    assert is_exact("auto") and is_exact("brute") and is_exact("faiss") and is_exact("precomputed")
    for name in APPROX:
        assert not is_exact(name)
    assert getattr(get_backend("auto"), "exact", False)


@pytest.mark.parametrize("name", params(ALL))
def test_sorted_loo_and_query_contract(name, blobs):
    X, Q = blobs
    f = Fitted(name, X)
    for q, loo in ((None, True), (Q, False)):
        d, i = f.kneighbors(q, 10)
        check_contract(d, i, X.shape[0], 10, loo)
        # Distances are exact float64 Euclidean distances of the indices returned.
        P = X if q is None else q
        ref = np.sqrt(((P[:, None, :] - X[i]) ** 2).sum(axis=2))
        np.testing.assert_allclose(d, ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", params(EXACT))
def test_exact_backends_equal_brute(name, blobs, exact_reference):
    X, Q = blobs
    (bd, bi), (qd, qi) = exact_reference
    f = Fitted(name, X)
    d, i = f.kneighbors(None, 10)
    np.testing.assert_array_equal(i, bi)
    np.testing.assert_allclose(d, bd, rtol=1e-12, atol=0)
    d, i = f.kneighbors(Q, 10)
    np.testing.assert_array_equal(i, qi)
    np.testing.assert_allclose(d, qd, rtol=1e-12, atol=0)


@pytest.mark.parametrize("name", params(["faiss"]))
def test_exact_faiss_follows_the_tie_rule_on_tied_data(name):
    # Small integers: many equal distances, so the lower-index rule decides.
    rng = np.random.default_rng(3)
    X = rng.integers(0, 3, size=(400, 4)).astype(np.float64)
    Q = rng.integers(0, 3, size=(50, 4)).astype(np.float64)
    b = BruteNeighbors().fit(X)
    f = get_backend(name).fit(X)
    for q in (None, Q):
        np.testing.assert_array_equal(f.kneighbors(q, 7)[1], b.kneighbors(q, 7)[1])
        np.testing.assert_array_equal(f.kneighbors(q, 7)[0], b.kneighbors(q, 7)[0])


@pytest.mark.parametrize("name", params(ALL))
def test_loo_excludes_self_with_duplicates(name):
    rng = np.random.default_rng(4)
    base = rng.normal(size=(60, 5))
    # Every point three times, plus 40 copies of one point (more than k + 1 + margin).
    X = np.vstack([base, base, base, np.repeat(base[:1] + 10.0, 40, axis=0)])
    k = 5
    f = Fitted(name, X)
    d, i = f.kneighbors(None, k)
    check_contract(d, i, X.shape[0], k, loo=True)
    # The two other copies of each base point come first, at distance exactly 0.
    n = base.shape[0]
    for r in (0, 17, n + 3, 2 * n + 59):
        copies = sorted({r % n, r % n + n, r % n + 2 * n} - {r})
        if name in EXACT:
            assert i[r, :2].tolist() == copies
        assert np.all(d[r, :2] == 0.0)
    # The 40 identical points: all neighbours at distance 0, the point itself never.
    big = np.arange(3 * n, 3 * n + 40)
    assert np.all(d[big] == 0.0)
    if name in EXACT:
        expected = [[j for j in big if j != r][:k] for r in big]
        np.testing.assert_array_equal(i[big], expected)


@pytest.mark.parametrize("name", params(APPROX))
def test_approximate_recall_on_clustered_data(name):
    X, Q = clustered(n=2000, d=16, centers=20, seed=5, n_queries=200)
    index = get_backend(name, random_state=0).fit(X)
    b = BruteNeighbors().fit(X)
    assert recall_at_k(index.kneighbors(None, 10)[1], b.kneighbors(None, 10)[1]) >= 0.95
    assert recall_at_k(index.kneighbors(Q, 10)[1], b.kneighbors(Q, 10)[1]) >= 0.95
    assert estimate_recall(index, X, Q, n_neighbors=10, n_samples=100, random_state=0) >= 0.95


@pytest.mark.parametrize("name", params(APPROX))
def test_recall_method_and_estimator_report_it(name):
    # Hard data (uniform, 32-d) so that recall is below 1 and the numbers mean something;
    # n_samples >= n searches every row, so the sample estimate equals the full recall.
    from mlknn import MLkNN

    rng = np.random.default_rng(3)
    X = rng.random((1500, 32))
    Q = rng.random((120, 32))
    Y = (rng.random((1500, 3)) < 0.3).astype(np.uint8)
    index = get_backend(name, random_state=0).fit(X)
    b = BruteNeighbors().fit(X)
    full_loo = recall_at_k(index.kneighbors(None, 10)[1], b.kneighbors(None, 10)[1])
    full_q = recall_at_k(index.kneighbors(Q, 10)[1], b.kneighbors(Q, 10)[1])
    assert index.recall(None, 10, n_samples=10**6) == pytest.approx(full_loo, abs=1e-12)
    assert index.recall(Q, 10, n_samples=10**6) == pytest.approx(full_q, abs=1e-12)
    assert 0.0 < min(full_loo, full_q) <= 1.0

    est = MLkNN(n_neighbors=10, neighbors=get_backend(name, random_state=0)).fit(X, Y)
    # The estimator's own index (a multi-threaded HNSW build need not repeat exactly).
    est_loo = recall_at_k(est.nn_.kneighbors(None, 10)[1], b.kneighbors(None, 10)[1])
    est_q = recall_at_k(est.nn_.kneighbors(Q, 10)[1], b.kneighbors(Q, 10)[1])
    assert est.neighbor_recall(n_samples=10**6) == pytest.approx(est_loo, abs=1e-12)
    assert est.neighbor_recall(Q, n_samples=10**6) == pytest.approx(est_q, abs=1e-12)
    sample = est.neighbor_recall(Q, n_samples=50, random_state=0)
    assert 0.0 <= sample <= 1.0
    with pytest.raises(ValueError, match="n_samples"):
        est.neighbor_recall(n_samples=0)


def test_recall_of_exact_and_graph_fitted_estimators():
    from mlknn import MLkNN
    from mlknn.neighbors import build_graph

    rng = np.random.default_rng(0)
    X = rng.random((80, 4))
    Y = (rng.random((80, 2)) < 0.4).astype(np.uint8)
    assert MLkNN(5).fit(X, Y).neighbor_recall() == 1.0
    graph = build_graph(BruteNeighbors().fit(X), None, 5)
    with pytest.raises(ValueError, match="without an index"):
        MLkNN(5).fit_from_graph(graph, Y).neighbor_recall()


@pytest.mark.parametrize("name", params(SEARCHING))
def test_float32_and_float64(name, blobs, exact_reference):
    X, Q = blobs
    (bd, bi), (qd, qi) = exact_reference
    for dtype in (np.float32, np.float64):
        index = get_backend(name, random_state=0).fit(X.astype(dtype))
        d, i = index.kneighbors(Q.astype(dtype), 10)
        check_contract(d, i, X.shape[0], 10, loo=False)
        if name in EXACT:
            if dtype == np.float64:
                np.testing.assert_array_equal(i, qi)
            else:
                # float32 coordinates are other points: compare with brute on the same ones.
                ref = BruteNeighbors().fit(X.astype(dtype)).kneighbors(Q.astype(dtype), 10)
                np.testing.assert_array_equal(i, ref[1])
                np.testing.assert_array_equal(d, ref[0])
        else:
            assert recall_at_k(i, qi) >= 0.95
    # Mixed: float64 queries on a float32 index.
    index = get_backend(name, random_state=0).fit(X.astype(np.float32))
    d, i = index.kneighbors(Q, 10)
    check_contract(d, i, X.shape[0], 10, loo=False)


def _sparse_data():
    rng = np.random.default_rng(7)
    X = (rng.random((300, 40)) < 0.15) * rng.random((300, 40))
    return X


@pytest.mark.parametrize("name", params(SEARCHING))
def test_sparse_input_supported_or_named_error(name):
    X = _sparse_data()
    Xs = sp.csr_matrix(X)
    if name in ("faiss", "faiss-ivf", "faiss-hnsw", "hnswlib", "voyager"):
        with pytest.raises(TypeError, match=rf"neighbors='{name}' does not accept sparse input"):
            get_backend(name).fit(Xs)
        with pytest.raises(TypeError, match=rf"neighbors='{name}'"):
            get_backend(name).fit(X).kneighbors(Xs[:5], 3)
        return
    ref = BruteNeighbors().fit(X)
    index = get_backend(name, random_state=0).fit(Xs)
    for q in (None, Xs[:40], X[:40]):
        d, i = index.kneighbors(q, 8)
        check_contract(d, i, X.shape[0], 8, loo=q is None)
        qd = None if q is None else X[:40]
        rd, ri = ref.kneighbors(qd, 8)
        if name in EXACT:
            np.testing.assert_array_equal(i, ri)
            np.testing.assert_allclose(d, rd, atol=1e-12)
        else:
            assert recall_at_k(i, ri) >= 0.9


@pytest.mark.parametrize("name", params(SEARCHING))
def test_cosine_metric(name, blobs):
    X, Q = blobs
    X, Q = X + 20.0, Q + 20.0  # away from the origin: cosine neighbours differ from Euclidean ones
    ref = BruteNeighbors(metric="cosine").fit(X).kneighbors(Q, 5)
    d, i = get_backend(name, metric="cosine", random_state=0).fit(X).kneighbors(Q, 5)
    if name in EXACT:
        np.testing.assert_array_equal(i, ref[1])
        np.testing.assert_allclose(d, ref[0], atol=1e-12)
    else:
        assert recall_at_k(i, ref[1]) >= 0.9


@pytest.mark.parametrize("name", params(SEARCHING))
def test_errors_and_pickle(name, blobs):
    X, Q = blobs
    index = get_backend(name, random_state=0).fit(X)
    with pytest.raises(ValueError, match=r"n_neighbors <= n_samples_fit - 1"):
        index.kneighbors(None, X.shape[0])
    with pytest.raises(ValueError, match="X has 3 features"):
        index.kneighbors(np.zeros((1, 3)), 2)
    with pytest.raises(ValueError, match="'metric' parameter"):
        get_backend(name, metric="hamming").fit(X)
    again = pickle.loads(pickle.dumps(index))
    np.testing.assert_array_equal(again.kneighbors(Q, 5)[1], index.kneighbors(Q, 5)[1])


def test_missing_optional_dependency_says_what_to_install(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "faiss", None)  # import faiss -> ImportError
    with pytest.raises(ImportError, match=r"pip install 'mlknn\[faiss\]'"):
        get_backend("faiss")
    monkeypatch.setitem(sys.modules, "hnswlib", None)
    with pytest.raises(ImportError, match=r"pip install 'mlknn\[hnswlib\]'"):
        MLkNN(neighbors="hnswlib").fit(np.random.default_rng(0).normal(size=(20, 2)), np.ones((20, 1)))
    monkeypatch.setitem(sys.modules, "voyager", None)
    with pytest.raises(ImportError, match=r"pip install 'mlknn\[ann\]'"):
        MLkNN(neighbors="voyager").fit(np.random.default_rng(0).normal(size=(20, 2)), np.ones((20, 1)))


# ------------------------------------------------------------ estimators
@pytest.fixture(scope="module")
def ml_problem():
    rng = np.random.default_rng(8)
    X = clustered(n=400, d=6, centers=8, seed=8)  # first 320 train, last 80 test
    W = rng.normal(size=(6, 5))
    Y = (X @ W + rng.normal(size=(400, 5)) > 0).astype(np.uint8)
    return X[:320], Y[:320], X[320:]


@pytest.mark.parametrize("name", params(ALL))
def test_mlknn_accepts_every_backend_name(name, ml_problem):
    X, Y, Xt = ml_problem
    ref = MLkNN(n_neighbors=7).fit(X, Y)
    if name == "precomputed":
        t = KNeighborsTransformer(n_neighbors=7, mode="distance").fit(X)
        clf = MLkNN(n_neighbors=7, neighbors="precomputed").fit(t.transform(X), Y)
        proba = clf.predict_proba(t.transform(Xt))
        pred = clf.predict(t.transform(Xt))
    else:
        clf = MLkNN(n_neighbors=7, neighbors=name).fit(X, Y)
        proba, pred = clf.predict_proba(Xt), clf.predict(Xt)
    assert proba.shape == (Xt.shape[0], Y.shape[1]) and pred.shape == proba.shape
    if name in EXACT:
        np.testing.assert_allclose(proba, ref.predict_proba(Xt), atol=1e-12)
        np.testing.assert_array_equal(pred, ref.predict(Xt))
    else:
        assert np.mean(pred == ref.predict(Xt)) >= 0.9


def test_auto_gives_brute_results(ml_problem):
    X, Y, Xt = ml_problem
    a = MLkNN(n_neighbors=5, neighbors="auto").fit(X, Y)
    b = MLkNN(n_neighbors=5, neighbors="brute").fit(X, Y)
    np.testing.assert_array_equal(a.predict_proba(Xt), b.predict_proba(Xt))


# ------------------------------------------------------------ precomputed
def test_precomputed_pipeline_with_kneighbors_transformer(ml_problem):
    from sklearn.pipeline import make_pipeline

    X, Y, Xt = ml_problem
    pipe = make_pipeline(
        KNeighborsTransformer(n_neighbors=6, mode="distance"), MLkNN(n_neighbors=6, neighbors="precomputed")
    )
    pipe.fit(X, Y)
    np.testing.assert_array_equal(pipe.predict(Xt), MLkNN(n_neighbors=6).fit(X, Y).predict(Xt))


def test_precomputed_dense_distance_matrix_and_ties():
    X = np.array([[0.0], [1.0], [0.0], [3.0], [1.0]])
    D = np.abs(X - X.T)
    idx = PrecomputedNeighbors().fit(D)
    d, i = idx.kneighbors(None, 2)
    assert i.tolist() == [[2, 1], [4, 0], [0, 1], [1, 4], [1, 0]]
    np.testing.assert_array_equal(i, BruteNeighbors().fit(X).kneighbors(None, 2)[1])
    dq, iq = idx.kneighbors(np.abs(np.array([[0.9]]) - X.T), 3)
    assert iq.tolist() == [[1, 4, 0]]


def test_precomputed_errors():
    rng = np.random.default_rng(9)
    X = rng.normal(size=(30, 3))
    g = build_graph(BruteNeighbors().fit(X), None, 4)
    idx = PrecomputedNeighbors().fit(graph_to_csr(g, 30))
    np.testing.assert_array_equal(idx.kneighbors(None, 4)[1], g.indices)
    with pytest.raises(ValueError, match=r"4 neighbours in row 0 besides the point itself, but n_neighbors = 5"):
        idx.kneighbors(None, 5)
    with pytest.raises(ValueError, match="square"):
        PrecomputedNeighbors().fit(sp.csr_matrix((5, 30)))
    with pytest.raises(ValueError, match="one column per training point"):
        idx.kneighbors(sp.csr_matrix((2, 29)), 1)
    with pytest.raises(TypeError, match="graph_to_csr"):
        PrecomputedNeighbors().fit(g)
    with pytest.raises(ValueError, match="non-negative"):
        PrecomputedNeighbors().fit(-np.ones((3, 3)))
    # (distances, indices) arrays convert too; explicit zero distances survive.
    Xd = np.vstack([X, X[:1]])
    gd = build_graph(BruteNeighbors().fit(Xd), None, 3)
    csr = graph_to_csr(gd.distances, 31, indices=gd.indices)
    assert csr.nnz == 31 * 3
    np.testing.assert_array_equal(PrecomputedNeighbors().fit(csr).kneighbors(None, 3)[1], gd.indices)


# ------------------------------------------------------------------ reuse
@pytest.mark.parametrize("neighbors", ["brute", pytest.param("faiss", marks=_param("faiss").marks)])
def test_graph_cache_equals_plain_fit_predict(neighbors, ml_problem):
    X, Y, Xt = ml_problem
    index, train_graph, test_graph = compute_graphs(X, Xt, max_k=12, neighbors=neighbors)
    assert train_graph.loo and train_graph.n_neighbors == 12 and test_graph.n_neighbors == 12
    cache = GraphCache(X, Xt, max_k=12, neighbors=neighbors)
    for k in (1, 3, 7, 12):
        est = MLkNN(n_neighbors=k, neighbors=neighbors)
        plain = est.fit(X, Y)
        via = MLkNN(n_neighbors=k).fit_from_graph(train_graph, Y, X=X, index=index)
        np.testing.assert_array_equal(via.predict_proba_from_graph(test_graph, Xt), plain.predict_proba(Xt))
        np.testing.assert_array_equal(via.predict_from_graph(test_graph, Xt), plain.predict(Xt))
        np.testing.assert_array_equal(via.predict(Xt), plain.predict(Xt))  # index= keeps predict working
        np.testing.assert_array_equal(cache.predict_proba(est, Y), plain.predict_proba(Xt))
        np.testing.assert_array_equal(cache.predict(est, Y), plain.predict(Xt))
    with pytest.raises(ValueError, match="larger max_k"):
        cache.fit(MLkNN(n_neighbors=13), Y)


def test_fold_graphs_is_the_runner_entry_point(ml_problem):
    X, Y, Xt = ml_problem
    index, g_train, g_test = fold_graphs(X, Xt, 5, neighbors="brute", metric="euclidean")
    b = BruteNeighbors().fit(X)
    np.testing.assert_array_equal(g_train.indices, b.kneighbors(None, 5)[1])
    np.testing.assert_array_equal(g_test.indices, b.kneighbors(Xt, 5)[1])
    assert compute_graphs(X, None, 5, neighbors="brute")[2] is None


# ----------------------------------------------------------------- recall
def test_recall_at_k():
    E = np.array([[1, 2, 3], [4, 5, 6]])
    assert recall_at_k(E, E) == 1.0
    assert recall_at_k(E[:, ::-1], E) == 1.0  # order ignored
    assert recall_at_k(np.array([[1, 9, 8], [7, 6, 5]]), E) == pytest.approx(3 / 6)
    assert recall_at_k(np.array([[-1, -1, 3], [-1, -1, -1]]), E) == pytest.approx(1 / 6)
    assert recall_at_k(np.array([[3, 1, 0, 2]]), np.array([[1, 2, 5]]), k=2) == 0.5
    with pytest.raises(ValueError, match="1 <= k <= 3"):
        recall_at_k(E, E, k=4)
    with pytest.raises(ValueError, match="same number of rows"):
        recall_at_k(E[:1], E)


def test_estimate_recall_of_exact_search_is_one(blobs):
    X, Q = blobs
    index = BruteNeighbors().fit(X)
    assert estimate_recall(index, X, None, n_neighbors=5, n_samples=50, random_state=0) == 1.0
    assert estimate_recall(index, X, Q, n_neighbors=5, n_samples=50, random_state=0) == 1.0
    full = index.kneighbors(None, 5)[1]
    assert estimate_recall(index, X, None, n_neighbors=5, approx_indices=full, random_state=1) == 1.0
    # A graph of missing slots (-1) has recall 0.
    missing = np.full_like(full, -1)
    assert estimate_recall(index, X, None, n_neighbors=5, approx_indices=missing) == 0.0


def test_brute_parallel_chunks_equal_serial(monkeypatch):
    from mlknn.neighbors._exact import _index

    rng = np.random.default_rng(10)
    X = np.vstack([rng.normal(size=(700, 6)), rng.normal(size=(50, 6))[np.repeat(np.arange(50), 2)]])
    Q = rng.normal(size=(300, 6))
    serial = BruteNeighbors(n_jobs=1, working_memory=0.5)
    ref = [serial.fit(X).kneighbors(q, 9) for q in (None, Q)]
    monkeypatch.setattr(_index, "PARALLEL_MIN_WORK", 0)
    for Xv in (X, X.astype(np.float32), sp.csr_matrix(X)):
        par = BruteNeighbors(n_jobs=2, working_memory=0.5).fit(Xv)
        assert par._index.workers(10, par.n_jobs) == 2
        for q, (rd, ri) in zip((None, Q), ref):
            d, i = par.kneighbors(q if q is None or not sp.issparse(Xv) else sp.csr_matrix(q), 9)
            if Xv.dtype == np.float32:
                continue  # other coordinates; covered by the float32 tests
            np.testing.assert_array_equal(i, ri)
            np.testing.assert_allclose(d, rd, rtol=1e-12, atol=1e-12)


def test_radius_counts_parallel_chunks_equal_serial(monkeypatch):
    from mlknn.neighbors._exact import _index

    rng = np.random.default_rng(11)
    X = np.vstack([rng.normal(size=(700, 6)), rng.normal(size=(50, 6))[np.repeat(np.arange(50), 2)]])
    Q = rng.normal(size=(300, 6))
    Y = (rng.random((X.shape[0], 4)) < 0.3).astype(np.uint8)
    radius = 2.0
    monkeypatch.setattr(_index, "PARALLEL_MIN_WORK", 0)
    for Xv in (X, sp.csr_matrix(X)):
        serial = BruteNeighbors(n_jobs=1, working_memory=0.5).fit(Xv)
        par = BruteNeighbors(n_jobs=2, working_memory=0.5).fit(Xv)
        for q in (None, Q):
            qv = q if q is None or not sp.issparse(Xv) else sp.csr_matrix(q)
            rs, rc = serial.radius_neighbors_counts(qv, radius, Y)
            ps, pc = par.radius_neighbors_counts(qv, radius, Y)
            np.testing.assert_array_equal(ps, rs)
            np.testing.assert_array_equal(pc, rc)
            # ... and both agree with the exact distances of kneighbors.
            d, i = serial.kneighbors(qv, X.shape[0] - 1 if q is None else X.shape[0])
            np.testing.assert_array_equal(rs, (d <= radius).sum(axis=1))
            want = np.array([Y[i[r][d[r] <= radius]].sum(axis=0) for r in range(len(d))])
            np.testing.assert_array_equal(rc, want)


@pytest.mark.parametrize("offset,scale", [(1e4, 1.0), (1e3, 1e-4), (0.0, 1e-30)])
def test_brute_far_from_origin_and_tiny_scales_match_loop_reference(offset, scale):
    # The float32 ranking keys are computed on centred data: a large common offset
    # or a tiny spread must not change the (exact, float64) answer.
    from reference_impls import loop_knn

    rng = np.random.default_rng(11)
    X = offset + scale * rng.normal(size=(120, 4))
    Q = offset + scale * rng.normal(size=(9, 4))
    index = BruteNeighbors().fit(X)
    for q, loo in ((None, True), (Q, False)):
        d, i = index.kneighbors(q, 6)
        rd, ri = loop_knn(X, q, 6, loo=loo)
        np.testing.assert_array_equal(i, ri)
        np.testing.assert_allclose(d, rd, rtol=1e-9)
