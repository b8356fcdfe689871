import numpy as np
import pytest
import scipy.sparse as sp
from reference_bmlknn import loop_bmlknn, loop_nc
from sklearn.base import clone

from mlknn import MLkNN
from mlknn.algorithms._bmlknn import BMLkNN, NeighborhoodClassifier
from mlknn.neighbors import BruteNeighbors, build_graph


def _kth_quantile(X, k, q):
    d, _ = BruteNeighbors().fit(X).kneighbors(None, k)
    return float(np.quantile(d[:, k - 1], q))


# ---------------------------------------------------------------- BML-kNN
@pytest.mark.parametrize("k,quantile,s", [(1, 0.5, 1.0), (5, 0.3, 1.0), (5, 0.7, 0.5), (8, 0.5, 0.0), (10, 0.9, 1.0)])
def test_bmlknn_matches_loop_reference(small_problem, k, quantile, s):
    X, Y = small_problem
    Xq = X[:20] + 0.05
    radius = _kth_quantile(X, k, quantile)
    clf = BMLkNN(k, radius=radius, smoothing=s).fit(X, Y)
    post, pred, prior, ct, cf = loop_bmlknn(X, Y, Xq, k, radius, s)
    np.testing.assert_allclose(clf.prior_, prior, rtol=0, atol=1e-12)
    np.testing.assert_allclose(clf.cond_prob_true_, ct, rtol=0, atol=1e-12)
    np.testing.assert_allclose(clf.cond_prob_false_, cf, rtol=0, atol=1e-12)
    np.testing.assert_allclose(clf.predict_proba(Xq), post, rtol=0, atol=1e-10)
    np.testing.assert_array_equal(clf.predict(Xq), pred)


@pytest.mark.data
def test_bmlknn_and_nc_match_loop_reference_on_emotions(data_dir):
    # Subset (stated): the first 150 training instances of the seeded 50/50 split
    # and 40 test queries, since the references compute every distance in Python.
    from sklearn.model_selection import train_test_split

    from mlknn.datasets import load

    data = load("emotions", data_home=data_dir)
    Xtr, Xte, Ytr, _ = train_test_split(data.X, data.Y, test_size=0.5, random_state=0)
    Xtr, Ytr, Xq = Xtr[:150], Ytr[:150], Xte[:40]
    radius = _kth_quantile(Xtr, 10, 0.5)
    post, pred = loop_bmlknn(Xtr, Ytr, Xq, 10, radius, 1.0)[:2]
    clf = BMLkNN(10, radius=radius).fit(Xtr, Ytr)
    np.testing.assert_allclose(clf.predict_proba(Xq), post, rtol=0, atol=1e-10)
    np.testing.assert_array_equal(clf.predict(Xq), pred)
    post, pred = loop_nc(Xtr, Ytr, Xq, radius, 1.0)[:2]
    nc = NeighborhoodClassifier(radius, n_neighbors=10).fit(Xtr, Ytr)
    np.testing.assert_allclose(nc.predict_proba(Xq), post, rtol=0, atol=1e-10)
    np.testing.assert_array_equal(nc.predict(Xq), pred)


def test_bmlknn_hand_worked_example():
    # Five points on a line, one label, k = 2, radius = 1.5, s = 1.
    X = np.array([[0.0], [1.0], [2.0], [10.0], [11.0]])
    Y = np.array([[1], [1], [0], [0], [0]])
    # LOO 2-NN (distance) and the delta-kNNs (d <= 1.5):
    #   x0: x1 (1), x2 (2)  -> {x1}      C = 1
    #   x1: x0 (1), x2 (1)  -> {x0, x2}  C = 1
    #   x2: x1 (1), x0 (2)  -> {x1}      C = 1   (ML-kNN would count 2)
    #   x3: x4 (1), x2 (8)  -> {x4}      C = 0
    #   x4: x3 (1), x2 (9)  -> {x3}      C = 0
    # prior = (1 + 2) / (2 + 5) = 3/7.
    # positives x0, x1: c = [0, 2, 0]; negatives x2, x3, x4: c_bar = [2, 1, 0].
    # p(C=j|1) = (1 + c[j]) / (1*3 + 2) = [1/5, 3/5, 1/5]
    # p(C=j|0) = (1 + c_bar[j]) / (3 + 3) = [1/2, 1/3, 1/6]
    clf = BMLkNN(2, radius=1.5, smoothing=1.0).fit(X, Y)
    assert clf.prior_[0] == pytest.approx(3 / 7)
    np.testing.assert_allclose(clf.cond_prob_true_[:, 0], [1 / 5, 3 / 5, 1 / 5])
    np.testing.assert_allclose(clf.cond_prob_false_[:, 0], [1 / 2, 1 / 3, 1 / 6])
    # t = 1.4: 2-NN x1 (0.4), x2 (0.6), both inside -> C = 1.
    #   3/7 * 3/5 = 9/35 vs 4/7 * 1/3 = 4/21 -> posterior 27/47, predict 1.
    # t = 5.0: 2-NN x2 (3), x1 (4), none inside -> C = 0.
    #   3/7 * 1/5 = 3/35 vs 4/7 * 1/2 = 2/7 -> posterior 3/13, predict 0.
    # t = 0.5: 2-NN x0, x1 (tie at 0.5, lower index first), both inside -> C = 2.
    #   3/7 * 1/5 = 3/35 vs 4/7 * 1/6 = 2/21 -> posterior 9/19, predict 0.
    Xq = [[1.4], [5.0], [0.5]]
    np.testing.assert_allclose(clf.predict_proba(Xq)[:, 0], [27 / 47, 3 / 13, 9 / 19])
    np.testing.assert_array_equal(clf.predict(Xq)[:, 0], [1, 0, 0])


def test_bmlknn_radius_inf_is_mlknn(small_problem):
    X, Y = small_problem
    Xq = X[:30] + 0.1
    for k, s in [(1, 1.0), (5, 1.0), (7, 0.0)]:
        b = BMLkNN(k, radius=np.inf, smoothing=s).fit(X, Y)
        m = MLkNN(k, smoothing=s).fit(X, Y)
        np.testing.assert_array_equal(b.cond_prob_true_, m.cond_prob_true_)
        np.testing.assert_array_equal(b.cond_prob_false_, m.cond_prob_false_)
        np.testing.assert_array_equal(b.predict_proba(Xq), m.predict_proba(Xq))
        np.testing.assert_array_equal(b.predict(Xq), m.predict(Xq))
    # A radius beyond every distance is the same as inf.
    big = BMLkNN(5, radius=1e6).fit(X, Y).predict_proba(Xq)
    np.testing.assert_array_equal(big, MLkNN(5).fit(X, Y).predict_proba(Xq))
    assert BMLkNN().radius == np.inf


def test_bmlknn_no_neighbour_within_radius(small_problem):
    # Every count is 0 (bin 0 holds all instances): p(C=0|1) = (s + u) / (s (k+1) + u).
    X, Y = small_problem
    k, s = 5, 1.0
    clf = BMLkNN(k, radius=1e-6, smoothing=s).fit(X, Y)
    u = Y.sum(axis=0)
    m = Y.shape[0]
    like1 = (s + u) / (s * (k + 1) + u)
    like0 = (s + (m - u)) / (s * (k + 1) + (m - u))
    np.testing.assert_allclose(clf.cond_prob_true_[0], like1)
    joint1 = clf.prior_ * like1
    joint0 = (1 - clf.prior_) * like0
    proba = clf.predict_proba(X[:10] + 0.5)
    np.testing.assert_allclose(proba, np.broadcast_to(joint1 / (joint1 + joint0), proba.shape))
    np.testing.assert_array_equal(clf.predict(X[:10] + 0.5), np.broadcast_to(joint1 > joint0, proba.shape))


def test_bmlknn_auto_radius(small_problem):
    X, Y = small_problem
    clf = BMLkNN(5, radius="auto").fit(X, Y)
    assert clf.radius_ == pytest.approx(_kth_quantile(X, 5, 0.5))
    ref = BMLkNN(5, radius=clf.radius_).fit(X, Y)
    np.testing.assert_array_equal(clf.predict_proba(X), ref.predict_proba(X))


@pytest.mark.parametrize("method", ["ls", "mp", "dsl"])
def test_bmlknn_hubness_radius_in_metric_units(small_problem, method):
    # Neighbours from the re-ranked graph; the radius compared with their
    # Euclidean distances (checked pair by pair in the loop reference), not with
    # the secondary dissimilarities.
    X, Y = small_problem
    Xq = X[:20] + 0.05
    k = 5
    radius = _kth_quantile(X, k, 0.5)
    clf = BMLkNN(k, radius=radius, hubness=method).fit(X, Y)
    train_nbrs = clf.hubness_.fit_graph_.indices
    query_nbrs = clf.query_graph(Xq)[0].indices
    post, pred, prior, ct, cf = loop_bmlknn(X, Y, Xq, k, radius, neighbours=(train_nbrs, query_nbrs))
    np.testing.assert_allclose(clf.cond_prob_true_, ct, rtol=0, atol=1e-12)
    np.testing.assert_allclose(clf.cond_prob_false_, cf, rtol=0, atol=1e-12)
    np.testing.assert_allclose(clf.predict_proba(Xq), post, rtol=0, atol=1e-10)
    np.testing.assert_array_equal(clf.predict(Xq), pred)
    # The reduction changed the neighbourhoods (otherwise this proves nothing).
    assert not np.array_equal(train_nbrs, BruteNeighbors().fit(X).kneighbors(None, k)[1])
    # "auto": median metric distance to the k-th re-ranked neighbour.
    auto = BMLkNN(k, radius="auto", hubness=method).fit(X, Y)
    kth = np.linalg.norm(X - X[auto.hubness_.fit_graph_.indices[:, k - 1]], axis=1)
    assert auto.radius_ == pytest.approx(float(np.median(kth)), rel=1e-12)


# -------------------------------------------------------------------- NC
@pytest.mark.parametrize("quantile,s", [(0.1, 1.0), (0.5, 1.0), (0.9, 0.5), (0.5, 0.0)])
@pytest.mark.parametrize("n_neighbors", [1, 5, 79])
def test_nc_matches_loop_reference(small_problem, quantile, s, n_neighbors):
    X, Y = small_problem
    Xq = np.vstack([X[:20] + 0.05, X[:3]])  # the last three duplicate training points
    radius = _kth_quantile(X, 5, quantile)
    clf = NeighborhoodClassifier(radius, n_neighbors=n_neighbors, smoothing=s).fit(X, Y)
    post, pred, prior, ct, cf, J, sizes = loop_nc(X, Y, Xq, radius, s)
    assert clf.max_count_ == J
    np.testing.assert_array_equal(clf.train_sizes_, sizes)
    np.testing.assert_allclose(clf.prior_, prior, rtol=0, atol=1e-12)
    np.testing.assert_allclose(clf.cond_prob_true_, ct, rtol=0, atol=1e-12)
    np.testing.assert_allclose(clf.cond_prob_false_, cf, rtol=0, atol=1e-12)
    np.testing.assert_allclose(clf.predict_proba(Xq), post, rtol=0, atol=1e-10)
    np.testing.assert_array_equal(clf.predict(Xq), pred)


def test_nc_hand_worked_example():
    # Four points, one label, radius 1.5, s = 1.
    X = np.array([[0.0], [1.0], [2.0], [10.0]])
    Y = np.array([[1], [1], [1], [0]])
    # LOO radius neighbourhoods: x0 {x1} C=1; x1 {x0, x2} C=2; x2 {x1} C=1; x3 {} C=0.
    # J = 2 (x1's neighbourhood) -> 3 bins. prior = (1 + 3) / (2 + 4) = 2/3.
    # positives x0, x1, x2: c = [0, 2, 1] -> (1 + c) / (3 + 3) = [1/6, 1/2, 1/3]
    # negative x3: c_bar = [1, 0, 0] -> (1 + c_bar) / (3 + 1) = [1/2, 1/4, 1/4]
    clf = NeighborhoodClassifier(1.5, n_neighbors=1).fit(X, Y)
    assert clf.max_count_ == 2
    np.testing.assert_array_equal(clf.train_sizes_, [1, 2, 1, 0])
    np.testing.assert_allclose(clf.cond_prob_true_[:, 0], [1 / 6, 1 / 2, 1 / 3])
    np.testing.assert_allclose(clf.cond_prob_false_[:, 0], [1 / 2, 1 / 4, 1 / 4])
    # t = 1.0 (not LOO): x0, x1, x2 inside -> C = 3 > J: empty-bin likelihoods
    #   1 / (3 + 3) = 1/6 and 1 / (3 + 1) = 1/4; 2/3 * 1/6 = 1/9 vs 1/3 * 1/4 = 1/12
    #   -> posterior 4/7, predict 1.
    # t = 5.0: nobody inside -> C = 0: 2/3 * 1/6 = 1/9 vs 1/3 * 1/2 = 1/6 -> 2/5, predict 0.
    # t = 0.2: x0, x1 inside -> C = 2: 2/3 * 1/3 = 2/9 vs 1/3 * 1/4 = 1/12 -> 8/11, predict 1.
    Xq = [[1.0], [5.0], [0.2]]
    np.testing.assert_allclose(clf.predict_proba(Xq)[:, 0], [4 / 7, 2 / 5, 8 / 11])
    np.testing.assert_array_equal(clf.predict(Xq)[:, 0], [1, 0, 1])


def test_nc_no_neighbour_within_radius(small_problem):
    # J = 0: one bin holding every instance, likelihood 1 on both sides, so the
    # posterior is the prior; a query with neighbours gets the empty-bin values.
    X, Y = small_problem
    clf = NeighborhoodClassifier(1e-6, n_neighbors=3).fit(X, Y)
    assert clf.max_count_ == 0
    np.testing.assert_allclose(clf.cond_prob_true_, 1.0)
    proba = clf.predict_proba(X[:5] + 0.5)
    np.testing.assert_allclose(proba, np.broadcast_to(clf.prior_, proba.shape))


def test_nc_chunked_counting_is_bounded_and_identical(small_problem):
    # A radius holding every point: every row falls back to radius counting, here
    # with a working memory that forces one query row per chunk.
    X, Y = small_problem
    tiny = BruteNeighbors(working_memory=1e-4)
    a = NeighborhoodClassifier(np.inf, n_neighbors=3, neighbors=tiny).fit(X, Y)
    b = NeighborhoodClassifier(np.inf, n_neighbors=79).fit(X, Y)
    assert a.max_count_ == 79
    np.testing.assert_array_equal(a.predict_proba(X[:10] + 0.1), b.predict_proba(X[:10] + 0.1))
    np.testing.assert_array_equal(a.train_sizes_, np.full(80, 79))


def test_nc_fit_from_graph_and_errors(small_problem):
    X, Y = small_problem
    index = BruteNeighbors().fit(X)
    radius = _kth_quantile(X, 5, 0.5)
    ref = NeighborhoodClassifier(radius, n_neighbors=5).fit(X, Y)
    clf = NeighborhoodClassifier(radius, n_neighbors=5).fit_from_graph(build_graph(index, None, 8), Y, index=index)
    Xq = X[:15] + 0.1
    query = build_graph(index, Xq, 8)
    np.testing.assert_array_equal(clf.predict_proba_from_graph(query, Xq), ref.predict_proba(Xq))
    with pytest.raises(ValueError, match="pass the query features X"):
        clf.predict_proba_from_graph(query)
    with pytest.raises(ValueError, match="has no radius_neighbors_counts"):
        NeighborhoodClassifier(radius, n_neighbors=5).fit_from_graph(build_graph(index, None, 5), Y)


class _KnnOnly:
    """A backend with fit and kneighbors but no radius counting."""

    def __init__(self):
        self._inner = BruteNeighbors()

    def fit(self, X):
        self._inner.fit(X)
        self.n_features_in_ = self._inner.n_features_in_
        return self

    def kneighbors(self, X=None, n_neighbors=10, return_distance=True):
        return self._inner.kneighbors(X, n_neighbors, return_distance)


def test_nc_backend_without_radius_counting(small_problem):
    X, Y = small_problem
    # Fine while the graph covers every radius neighbourhood ...
    NeighborhoodClassifier(1e-6, n_neighbors=3, neighbors=_KnnOnly()).fit(X, Y).predict(X)
    # ... and a clear error naming the parameter when it does not.
    with pytest.raises(ValueError, match=r"'neighbors' backend \(_KnnOnly\) has no radius_neighbors_counts"):
        NeighborhoodClassifier(np.inf, n_neighbors=3, neighbors=_KnnOnly()).fit(X, Y)


# ------------------------------------------------------------ shared checks
@pytest.mark.parametrize("make", [lambda: BMLkNN(5, radius=2.5), lambda: NeighborhoodClassifier(2.5, n_neighbors=5)])
def test_sparse_and_float32_give_same_decisions(small_problem, make):
    X, Y = small_problem
    ref = make().fit(X, Y)
    np.testing.assert_allclose(
        make().fit(sp.csr_matrix(X), Y).predict_proba(sp.csr_matrix(X[:30])), ref.predict_proba(X[:30])
    )
    np.testing.assert_array_equal(
        make().fit(X.astype(np.float32), Y).predict(X[:30].astype(np.float32)), ref.predict(X[:30])
    )


def test_bmlknn_fit_from_graph_equals_fit(small_problem):
    X, Y = small_problem
    index = BruteNeighbors().fit(X)
    clf = BMLkNN(6, radius=2.5).fit_from_graph(build_graph(index, None, 12), Y, index=index)
    ref = BMLkNN(6, radius=2.5).fit(X, Y)
    Xq = X[:15] + 0.1
    np.testing.assert_array_equal(clf.predict_proba_from_graph(build_graph(index, Xq, 12)), ref.predict_proba(Xq))


@pytest.mark.parametrize("cls", [BMLkNN, NeighborhoodClassifier])
@pytest.mark.parametrize(
    "params,match",
    [
        ({"radius": 0.0}, r"'radius' parameter of {name} must be a float in the range \(0(\.0)?, inf\] or a str among \{'auto'\}\. Got 0\.0"),
        ({"radius": -1}, r"'radius' parameter of {name} must be .* Got -1"),
        ({"radius": "median"}, r"'radius' parameter of {name} must be .* Got 'median'"),
        ({"smoothing": -1}, r"'smoothing' parameter of {name} must be a float in the range \[0(\.0)?, inf\)"),
        ({"n_neighbors": 0}, r"'n_neighbors' parameter of {name} must be an int in the range \[1, inf\)"),
        ({"n_neighbors": 80}, r"'n_neighbors' parameter of {name} must be <= n_samples - 1 = 79"),
    ],
)
def test_bad_parameters(small_problem, cls, params, match):
    X, Y = small_problem
    with pytest.raises(ValueError, match=match.replace("{name}", cls.__name__)):
        cls(**params).fit(X, Y)


def test_constant_labels(small_problem):
    X, Y = small_problem
    Y = Y.copy()
    Y[:, 0] = 0
    Y[:, 1] = 1
    for clf in (BMLkNN(5, radius=2.5), NeighborhoodClassifier(2.5, n_neighbors=5)):
        proba = clf.fit(X, Y).predict_proba(X)
        assert np.all(np.isfinite(proba)) and proba.min() >= 0 and proba.max() <= 1
        pred = clf.predict(X)
        assert pred[:, 0].sum() == 0 and pred[:, 1].all()
    # s = 0: a count no training instance had gives 0 = 0 (both products vanish):
    # the posterior is then the prior and the MAP tie predicts 0; still finite.
    for clf in (BMLkNN(5, radius=2.5, smoothing=0), NeighborhoodClassifier(2.5, smoothing=0)):
        proba = clf.fit(X, Y).predict_proba(X)
        assert np.all(np.isfinite(proba)) and proba.min() >= 0 and proba.max() <= 1
        assert clf.predict(X)[:, 0].sum() == 0


def test_clone_params_and_lazy_export():
    import mlknn

    assert mlknn.BMLkNN is BMLkNN and mlknn.NeighborhoodClassifier is NeighborhoodClassifier
    for clf in (BMLkNN(7, radius=0.3), NeighborhoodClassifier(0.3, n_neighbors=4)):
        assert clone(clf).get_params() == clf.get_params()


# ------------------------------------------- BruteNeighbors.radius_neighbors_counts
def _loop_radius_counts(X_train, X_query, radius, Y, loo):
    from scipy.spatial.distance import cdist

    D = cdist(X_query, X_train)
    inside = D <= radius
    if loo:
        np.fill_diagonal(inside, False)
    return inside.sum(axis=1), inside.astype(int) @ Y


@pytest.mark.parametrize("radius", [0.0, 1.0, np.sqrt(2), 2.0, 3.0, np.inf])
def test_radius_neighbors_counts_exact_boundaries_and_duplicates(radius):
    # Integer grid: many distances are exactly the radius, and many points repeat.
    rng = np.random.default_rng(1)
    X = rng.integers(0, 4, size=(60, 3)).astype(float)
    Y = rng.integers(0, 2, size=(60, 4))
    index = BruteNeighbors(working_memory=0.01).fit(X)
    sizes, counts = index.radius_neighbors_counts(None, radius, Y)
    ref_sizes, ref_counts = _loop_radius_counts(X, X, radius, Y, loo=True)
    np.testing.assert_array_equal(sizes, ref_sizes)
    np.testing.assert_array_equal(counts, ref_counts)
    # Same decisions as the distances kneighbors reports.
    dist, _ = index.kneighbors(None, 59)
    np.testing.assert_array_equal(sizes, (dist <= radius).sum(axis=1))
    Xq = X[:7] + 0.5
    np.testing.assert_array_equal(
        index.radius_neighbors_counts(Xq, radius), _loop_radius_counts(X, Xq, radius, Y, loo=False)[0]
    )
    sub = index.radius_neighbors_counts(None, radius, Y, query_indices=[5, 3])
    np.testing.assert_array_equal(sub[0], sizes[[5, 3]])
    np.testing.assert_array_equal(sub[1], counts[[5, 3]])


@pytest.mark.parametrize("metric", ["euclidean", "sqeuclidean", "cosine"])
def test_radius_neighbors_counts_agrees_with_kneighbors(metric):
    X = np.random.default_rng(2).normal(size=(150, 12))
    index = BruteNeighbors(metric=metric).fit(X)
    dist, _ = index.kneighbors(None, 149)
    radius = float(np.median(dist[:, 10]))
    sizes = index.radius_neighbors_counts(None, radius)
    np.testing.assert_array_equal(sizes, (dist <= radius).sum(axis=1))
    for Z in (sp.csr_matrix(X), X.astype(np.float32)):
        other = BruteNeighbors(metric=metric).fit(Z)
        d2, _ = other.kneighbors(None, 149)
        np.testing.assert_array_equal(other.radius_neighbors_counts(None, radius), (d2 <= radius).sum(axis=1))


def test_radius_neighbors_counts_errors():
    index = BruteNeighbors().fit(np.zeros((5, 2)))
    with pytest.raises(ValueError, match=r"Expected radius >= 0 .* radius = -1\.0"):
        index.radius_neighbors_counts(None, -1.0)
    with pytest.raises(ValueError, match="query_indices"):
        index.radius_neighbors_counts(None, 1.0, query_indices=[7])
    with pytest.raises(ValueError, match=r"labels of shape \(n_samples_fit, n_labels\)"):
        index.radius_neighbors_counts(None, 1.0, np.zeros((4, 2)))
    with pytest.raises(ValueError, match="X has 3 features"):
        index.radius_neighbors_counts(np.zeros((2, 3)), 1.0)
