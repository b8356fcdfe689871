import numpy as np
import pytest
import scipy.sparse as sp
from reference_impls import loop_knn
from sklearn.neighbors import NearestNeighbors

from mlknn.neighbors import BruteNeighbors, NeighborGraph, build_graph, get_backend


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_brute_matches_loop_reference(dtype):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 5)).astype(dtype)
    Q = rng.normal(size=(7, 5)).astype(dtype)
    index = BruteNeighbors().fit(X)
    d, i = index.kneighbors(Q, 6)
    rd, ri = loop_knn(X, Q, 6)
    np.testing.assert_array_equal(i, ri)
    np.testing.assert_allclose(d, rd, rtol=1e-6 if dtype == np.float32 else 1e-12)
    d, i = index.kneighbors(None, 6)
    rd, ri = loop_knn(X, None, 6, loo=True)
    np.testing.assert_array_equal(i, ri)


def test_brute_matches_sklearn_on_continuous_data():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 12))
    ours_d, ours_i = BruteNeighbors().fit(X).kneighbors(X[:50], 10)
    sk_d, sk_i = NearestNeighbors(n_neighbors=10, algorithm="brute").fit(X).kneighbors(X[:50])
    np.testing.assert_array_equal(ours_i, sk_i)
    # scikit-learn's GEMM expansion gives ~6e-8 for a point's distance to itself; ours is 0.
    assert np.all(ours_d[:, 0] == 0)
    np.testing.assert_allclose(ours_d, sk_d, atol=1e-6)


def test_duplicates_tie_break_and_loo_excludes_only_self():
    # Rows 0, 2, 5 are identical; row 3 is identical to row 1.
    X = np.array([[0.0, 0], [1, 1], [0, 0], [1, 1], [5, 5], [0, 0], [0.1, 0]])
    d, i = BruteNeighbors().fit(X).kneighbors(None, 3)
    # Point 0: duplicates 2 and 5 at distance exactly 0 (lower index first), then 6.
    assert i[0].tolist() == [2, 5, 6]
    assert d[0].tolist() == [0.0, 0.0, 0.1]
    # Point 2: its own index excluded, duplicates 0 and 5 kept.
    assert i[2].tolist() == [0, 5, 6]
    assert i[3, 0] == 1 and d[3, 0] == 0.0
    # Queries: ties ordered by training index.
    d, i = BruteNeighbors().fit(X).kneighbors(np.array([[0.0, 0.0]]), 4)
    assert i[0].tolist() == [0, 2, 5, 6]


def test_many_duplicates_beyond_k_take_lowest_indices():
    X = np.zeros((50, 3))
    X[::7] += 1.0
    d, i = BruteNeighbors().fit(X).kneighbors(None, 5)
    assert np.all(d == 0)
    zero_rows = np.flatnonzero(X[:, 0] == 0)
    expected = [j for j in zero_rows if j != 1][:5]
    assert i[1].tolist() == expected


def test_sparse_equals_dense_and_float32_equals_float64():
    rng = np.random.default_rng(3)
    X = (rng.random((120, 30)) < 0.1) * rng.integers(1, 4, size=(120, 30))
    Xd = X.astype(np.float64)
    ref_d, ref_i = BruteNeighbors().fit(Xd).kneighbors(None, 8)
    for Xv in (sp.csr_matrix(Xd), Xd.astype(np.float32), sp.csr_matrix(Xd.astype(np.float32))):
        d, i = BruteNeighbors().fit(Xv).kneighbors(None, 8)
        np.testing.assert_array_equal(i, ref_i)
        np.testing.assert_allclose(d, ref_d, atol=1e-12)


def test_sparse_with_unsorted_indices_and_explicit_zeros():
    rng = np.random.default_rng(4)
    Xd = rng.random((30, 8)) * (rng.random((30, 8)) < 0.4)
    A = sp.csr_matrix(Xd)
    # Reverse column order inside each row and add an explicit zero.
    B = sp.csr_matrix((A.data[::-1].copy(), A.indices[::-1].copy(), A.indptr.copy()), shape=A.shape)
    B = sp.csr_matrix((np.r_[A.data, 0.0], np.r_[A.indices, 0], np.r_[A.indptr[:-1], A.nnz + 1]), shape=A.shape)
    ref = BruteNeighbors().fit(Xd).kneighbors(None, 4)[1]
    np.testing.assert_array_equal(BruteNeighbors().fit(B).kneighbors(None, 4)[1], ref)


def test_chunking_gives_the_same_answer():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(500, 4))
    big = BruteNeighbors(working_memory=256).fit(X).kneighbors(None, 7)
    tiny = BruteNeighbors(working_memory=0.01).fit(X).kneighbors(None, 7)  # one row a chunk
    np.testing.assert_array_equal(big[1], tiny[1])
    np.testing.assert_array_equal(big[0], tiny[0])


def test_cosine_metric_matches_sklearn():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(100, 5))
    d, i = BruteNeighbors(metric="cosine").fit(X).kneighbors(X[:10], 5)
    sd, si = NearestNeighbors(n_neighbors=5, metric="cosine", algorithm="brute").fit(X).kneighbors(X[:10])
    np.testing.assert_array_equal(i, si)
    np.testing.assert_allclose(d, sd, atol=1e-10)


def test_errors_name_the_parameter():
    index = BruteNeighbors().fit(np.zeros((5, 2)) + np.arange(5)[:, None])
    with pytest.raises(ValueError, match=r"n_neighbors <= n_samples_fit - 1 .* = 4, but n_neighbors = 5"):
        index.kneighbors(None, 5)
    with pytest.raises(ValueError, match="X has 3 features"):
        index.kneighbors(np.zeros((1, 3)), 2)
    with pytest.raises(ValueError, match="'neighbors' parameter"):
        get_backend("nope")
    with pytest.raises(ValueError, match="'metric' parameter"):
        BruteNeighbors(metric="hamming").fit(np.zeros((3, 2)))


def test_graph_take_slices_first_columns():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(60, 3))
    index = BruteNeighbors().fit(X)
    wide = build_graph(index, None, 10)
    narrow = build_graph(index, None, 4)
    np.testing.assert_array_equal(wide.take(4).indices, narrow.indices)
    assert wide.take(4).loo
    with pytest.raises(ValueError, match="n_neighbors <= 10"):
        wide.take(11)
    with pytest.raises(ValueError, match="same 2-D shape"):
        NeighborGraph(np.zeros((2, 3), dtype=np.intp), np.zeros((2, 2)))
