"""The neighbours layer's shared contract: cosine on every backend, seeded approximate
search, the all-pairs API, the n_jobs rule and backends as scikit-learn estimators."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.spatial.distance import cdist
from sklearn import config_context
from sklearn.base import BaseEstimator, clone

from mlknn.neighbors import (
    available_backends,
    drop_own_index,
    get_backend,
    is_exact,
    merge_topk,
    pairwise_distances,
    pairwise_distances_chunked,
    resolve_n_jobs,
)

SEARCH_BACKENDS = ["brute", "faiss", "faiss-ivf", "faiss-hnsw", "hnswlib", "voyager", "pynndescent", "torch"]


def _loop_cosine_knn(X, Q, k, loo):
    """Reference: scipy's cosine distance, each row sorted by (distance, index) in a loop."""
    D = cdist(X if loo else Q, X, "cosine")
    dist, ind = [], []
    for i, row in enumerate(D):
        cand = [(row[j], j) for j in range(X.shape[0]) if not (loo and j == i)]
        cand.sort()
        dist.append([c[0] for c in cand[:k]])
        ind.append([c[1] for c in cand[:k]])
    return np.array(dist), np.array(ind)


@pytest.fixture(scope="module")
def clustered():
    # Directions in 8 well-separated clusters, with varied norms (cosine ignores them).
    rng = np.random.default_rng(3)
    centers = rng.normal(size=(8, 12)) * 4
    X = centers[rng.integers(0, 8, 300)] + rng.normal(size=(300, 12))
    X *= rng.uniform(0.5, 3.0, size=(300, 1))
    Q = centers[rng.integers(0, 8, 40)] + rng.normal(size=(40, 12))
    return X, Q


@pytest.mark.parametrize("name", SEARCH_BACKENDS)
def test_cosine_on_every_backend(name, clustered):
    if name not in available_backends():
        pytest.skip(f"{name} is not installed here")
    X, Q = clustered
    k = 6
    index = get_backend(name, metric="cosine", random_state=0).fit(X)
    for loo in (True, False):
        rd, ri = _loop_cosine_knn(X, Q, k, loo)
        d, i = index.kneighbors(None if loo else Q, k)
        # Whatever neighbours a backend returns, their distances are exact cosine
        # distances (re-ranked in float64) and ascending.
        D = cdist(X if loo else Q, X, "cosine")
        np.testing.assert_allclose(d, np.take_along_axis(D, i, axis=1), rtol=1e-9, atol=1e-12)
        assert np.all(np.diff(d, axis=1) >= 0)
        if loo:
            assert not np.any(i == np.arange(X.shape[0])[:, None])
        if is_exact(name):
            np.testing.assert_array_equal(i, ri)
            np.testing.assert_allclose(d, rd, rtol=1e-9, atol=1e-12)
        else:
            hits = np.mean([len(set(a) & set(b)) / k for a, b in zip(i, ri)])
            assert hits >= 0.9, f"{name} cosine recall {hits}"


def test_cosine_sparse_brute_and_pynndescent(clustered):
    X, Q = clustered
    Xs = sp.csr_matrix(np.where(np.abs(X) > 1.0, X, 0.0))
    Qs = sp.csr_matrix(np.where(np.abs(Q) > 1.0, Q, 0.0))
    rd, ri = _loop_cosine_knn(Xs.toarray(), Qs.toarray(), 5, False)
    d, i = get_backend("brute", metric="cosine").fit(Xs).kneighbors(Qs, 5)
    np.testing.assert_array_equal(i, ri)
    np.testing.assert_allclose(d, rd, rtol=1e-9, atol=1e-12)


def test_pynndescent_random_state_is_deterministic(clustered):
    if "pynndescent" not in available_backends():
        pytest.skip("pynndescent is not installed here")
    X, Q = clustered
    runs = []
    for _ in range(2):
        index = get_backend("pynndescent", random_state=42, n_jobs=1, graph_neighbors=8).fit(X)
        runs.append((index._index.neighbor_graph[0].copy(), index.kneighbors(Q, 5)[1]))
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    np.testing.assert_array_equal(runs[0][1], runs[1][1])


@pytest.mark.parametrize("metric", ["euclidean", "sqeuclidean", "cosine"])
@pytest.mark.parametrize("kind", ["dense", "float32", "sparse"])
def test_pairwise_distances_against_cdist(metric, kind):
    rng = np.random.default_rng(5)
    A = rng.normal(size=(23, 7))
    B = rng.normal(size=(31, 7))
    A[3] = B[4]  # an identical pair: exactly 0 on the dense path
    if kind == "float32":
        A, B = A.astype(np.float32), B.astype(np.float32)
    if kind == "sparse":
        A[np.abs(A) < 0.5] = 0
        B[np.abs(B) < 0.5] = 0
    scipy_metric = {"euclidean": "euclidean", "sqeuclidean": "sqeuclidean", "cosine": "cosine"}[metric]
    want = cdist(A.astype(np.float64), B.astype(np.float64), scipy_metric)
    a, b = (sp.csr_matrix(A), sp.csr_matrix(B)) if kind == "sparse" else (A, B)
    got = pairwise_distances(a, b, metric=metric)
    assert got.dtype == np.float64 and got.shape == (23, 31)
    # float32 rows are L2-normalised in float32 for cosine (as every backend does).
    tol = 1e-6 if (kind, metric) == ("float32", "cosine") else 1e-9
    np.testing.assert_allclose(got, want, rtol=tol, atol=1e-12)
    if kind != "sparse" and metric != "cosine":
        assert got[3, 4] == 0.0
    blocks = list(pairwise_distances_chunked(a, b, metric=metric, max_cols=8))
    assert [c.stop - c.start for c, _ in blocks] == [8, 8, 8, 7]
    np.testing.assert_array_equal(np.hstack([D for _, D in blocks]), got)


def test_pairwise_chunked_follows_working_memory():
    X = np.zeros((100, 3))
    Y = np.zeros((1000, 3))
    per_col = 8 * (100 + 1000) + 1  # bytes of one column and its share of Y's rows
    with config_context(working_memory=per_col * 250 / 2**20):
        widths = {c.stop - c.start for c, _ in pairwise_distances_chunked(X, Y)}
    assert max(widths) == 250
    widths = {c.stop - c.start for c, _ in pairwise_distances_chunked(X, Y, working_memory=per_col * 10 / 2**20)}
    assert max(widths) == 10
    with pytest.raises(ValueError, match="metric"):
        list(pairwise_distances_chunked(X, Y, metric="manhattan"))


def test_drop_own_index_and_merge_topk_by_hand():
    ind = np.array([[4, 2, 7], [1, 0, 3], [5, 6, 8]])
    dist = np.array([[0.0, 0.0, 1.0], [0.0, 0.0, 2.0], [1.0, 2.0, 3.0]])
    # Row 0: own index 2 sits second (a duplicate first); row 2: absent, the last goes.
    d, i = drop_own_index(ind, np.array([2, 1, 9]), dist)
    np.testing.assert_array_equal(i, [[4, 7], [0, 3], [5, 6]])
    np.testing.assert_array_equal(d, [[0.0, 1.0], [0.0, 2.0], [1.0, 2.0]])
    d, i = merge_topk(3, (np.array([[1.0, 2.0]]), np.array([[5, 9]])), (np.array([[1.0, 1.5]]), np.array([[3, 7]])))
    np.testing.assert_array_equal(i, [[3, 5, 7]])  # equal distances: the lower index first


def test_n_jobs_none_means_the_blas_pool_everywhere():
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        assert resolve_n_jobs(None) == 1
    assert resolve_n_jobs(3) == 3
    assert resolve_n_jobs(-1) >= 1


@pytest.mark.parametrize("name", SEARCH_BACKENDS + ["precomputed"])
def test_backends_are_sklearn_estimators(name):
    if name not in available_backends():
        pytest.skip(f"{name} is not installed here")
    backend = get_backend(name, random_state=0)
    assert isinstance(backend, BaseEstimator)
    params = backend.get_params()
    assert {"metric", "n_jobs", "random_state"} <= set(params)
    twin = clone(backend)
    assert twin.get_params() == params and twin is not backend
    with pytest.raises(ValueError, match="Invalid parameter"):
        backend.set_params(no_such_parameter=1)
