"""The fixed-cost shortcuts of small problems give exactly the general paths' answers.

* ``neighbor_label_counts`` on a dense 0/1 uint8 (or bool) Y gathers the neighbours'
  label rows instead of a sparse product: the same int64 counts (checked against the
  sparse product and a double loop, uint8 and int64 accumulation, several chunks);
* ``prepare_points`` skips ``check_array`` for an array it would return unchanged,
  and still refuses what it refused (NaN, inf, wrong dtype copies, non-contiguous);
* ``topk_sorted``'s one-sort shortcut (no ties among a row's k + 1 smallest)
  against the three-key lexsort on tie-free and tie-heavy rows;
* the leave-one-out graph in one chunk against several chunks.
"""

import numpy as np
import pytest
import scipy.sparse as sp

import mlknn.algorithms._kernels as kernels
from mlknn.neighbors import NeighborGraph
from mlknn.neighbors._contract import prepare_points
from mlknn.neighbors._exact._kernel import topk_sorted


def sparse_product_counts(indices, Y):
    n, k = indices.shape
    A = sp.csr_matrix((np.ones(n * k, np.int64), indices.ravel(), np.arange(0, n * k + 1, k)),
                      shape=(n, Y.shape[0]))
    return np.asarray(A @ Y.astype(np.int64))


def loop_counts(indices, Y):
    out = np.zeros((indices.shape[0], Y.shape[1]), dtype=np.int64)
    for i, row in enumerate(indices):
        for j in row:
            out[i] += Y[j]
    return out


@pytest.mark.parametrize("dtype", [np.uint8, np.bool_])
@pytest.mark.parametrize("k", [1, 10, 300])
def test_gathered_counts_equal_sparse_product_and_loop(monkeypatch, dtype, k):
    rng = np.random.default_rng(k)
    n_train, n, q = 320, 57, 9
    Y = (rng.random((n_train, q)) < 0.4).astype(dtype)
    indices = rng.integers(0, n_train, size=(n, k))
    indices[:, -1] = indices[:, 0]  # a repeated neighbour counts twice, as in the product
    graph = NeighborGraph(indices, np.zeros((n, k)), loo=False)
    want = loop_counts(indices, Y.astype(np.int64))
    for chunk_bytes in (1, 700, 1 << 24):  # one row per step, several rows, one step
        monkeypatch.setattr(kernels, "_GATHER_BYTES", chunk_bytes)
        got = kernels.neighbor_label_counts(graph, Y)
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(want, sparse_product_counts(indices, Y))


def test_counts_of_other_label_dtypes_keep_the_sparse_product():
    rng = np.random.default_rng(0)
    Y = (rng.random((40, 3)) < 0.5).astype(np.float64)
    indices = rng.integers(0, 40, size=(12, 4))
    graph = NeighborGraph(indices, np.zeros((12, 4)), loo=False)
    np.testing.assert_array_equal(kernels.neighbor_label_counts(graph, Y), loop_counts(indices, Y.astype(np.int64)))


def test_prepare_points_skips_only_what_check_array_returns_unchanged():
    X = np.random.default_rng(1).standard_normal((30, 4))
    assert prepare_points(X, "euclidean", order="C") is X
    assert prepare_points(X.astype(np.float32), "euclidean", order="C").dtype == np.float32
    F = np.asfortranarray(X)
    got = prepare_points(F, "euclidean", order="C")
    assert got.flags.c_contiguous and np.array_equal(got, X)
    assert prepare_points(X.astype(np.float16), "euclidean").dtype == np.float64
    with pytest.raises(TypeError, match="np.matrix"):  # still check_array's refusal
        prepare_points(np.asmatrix(X), "euclidean")
    for bad in (np.nan, np.inf, -np.inf):
        Xb = X.copy()
        Xb[3, 2] = bad
        with pytest.raises(ValueError, match="NaN|infinity"):
            prepare_points(Xb, "euclidean", order="C")
    big = np.full((4, 2), 1e308)  # finite entries whose sum overflows: the full check decides
    assert np.array_equal(prepare_points(big, "euclidean"), big)
    with pytest.raises(ValueError):
        prepare_points(np.empty((0, 3)), "euclidean")


@pytest.mark.parametrize("ties", [False, True])
def test_topk_sorted_shortcut_equals_lexsort(ties):
    rng = np.random.default_rng(5)
    for _ in range(30):
        n_rows, k = int(rng.integers(1, 40)), int(rng.integers(1, 8))
        per = k + rng.integers(0, 6, size=n_rows)
        rows = np.repeat(np.arange(n_rows), per)
        cols = np.concatenate([rng.choice(100, size=p, replace=False) for p in per]).astype(np.intp)
        values = rng.integers(0, 3, rows.size).astype(np.float64) if ties else rng.random(rows.size)
        perm = rng.permutation(rows.size)
        rows, cols, values = rows[perm], cols[perm], values[perm]
        d, c = topk_sorted(rows, cols, values, k, n_rows)
        order = np.lexsort((cols, values, rows))
        starts = np.concatenate(([0], np.cumsum(per)[:-1]))
        take = starts[:, None] + np.arange(k)
        np.testing.assert_array_equal(c, cols[order][take])
        np.testing.assert_array_equal(d, values[order][take])


@pytest.mark.parametrize("metric", ["euclidean", "cosine"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_one_chunk_loo_equals_the_chunked_path(monkeypatch, metric, dtype):
    # One chunk holding every training point (the small problems' leave-one-out
    # graph) and several chunks (the plain path): the same answer bit for bit.
    from mlknn.neighbors import BruteNeighbors
    from mlknn.neighbors._exact import _kernel

    chunks = []
    real = _kernel.search_chunk

    def spy(layout, Qc, *args, **kwargs):
        chunks.append(Qc.shape[0])
        return real(layout, Qc, *args, **kwargs)

    monkeypatch.setattr(_kernel, "search_chunk", spy)
    rng = np.random.default_rng(3)
    X = rng.standard_normal((500, 7)).astype(dtype)
    Xi = rng.integers(0, 3, size=(400, 3)).astype(dtype)  # ties and duplicates
    Xi[::9] = Xi[1::9][: Xi[::9].shape[0]]
    for data, k in ((X, 10), (Xi, 12), (X + 1e3, 3)):
        one = BruteNeighbors(metric=metric).fit(data)
        chunks.clear()
        got = one.kneighbors(None, k)
        assert chunks == [data.shape[0]]
        chunked = BruteNeighbors(metric=metric, working_memory=0.2).fit(data)
        chunked._index.allow_symmetric_loo = False
        chunks.clear()
        want = chunked.kneighbors(None, k)
        assert len(chunks) > 1
        np.testing.assert_array_equal(got[1], want[1])
        np.testing.assert_array_equal(got[0], want[0])
