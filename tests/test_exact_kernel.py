"""The exact kernel's pieces (``mlknn.neighbors._exact._kernel``) against plain references.

The brute backend's answers are checked against the double-loop oracle
(``reference_impls.loop_knn``) where the kernel's shortcuts change: small
training sets (few, small groups in step 2), tie-heavy integer data, duplicates
in leave-one-out, k close to n. The row-wise top-k is checked against a
three-key ``lexsort``, on both of its layouts (padded rows and the fallback for
very uneven rows).
"""

import numpy as np
import pytest
from reference_impls import loop_knn

from mlknn.neighbors import BruteNeighbors
from mlknn.neighbors._exact._kernel import exact_sqdist, group_size, topk_sorted


def lexsort_topk(rows, cols, values, k, n_rows):
    """Reference: sort all entries by (row, value, column), keep each row's first k."""
    d = np.empty((n_rows, k), dtype=values.dtype)
    c = np.empty((n_rows, k), dtype=cols.dtype)
    for i in range(n_rows):
        entries = sorted(zip(values[rows == i].tolist(), cols[rows == i].tolist()))[:k]
        d[i] = [e[0] for e in entries]
        c[i] = [e[1] for e in entries]
    return d, c


def random_candidates(rng, n_rows, k, max_extra, skew=False, ties=False):
    per = k + rng.integers(0, max_extra + 1, size=n_rows)
    if skew:
        per[0] = 50 * (k + max_extra)  # one very long row: the lexsort fallback
    rows = np.repeat(np.arange(n_rows), per)
    cols = np.concatenate([rng.choice(10 * per.max(), size=p, replace=False) for p in per]).astype(np.intp)
    values = rng.integers(0, 4, size=rows.size).astype(np.float64) if ties else rng.random(rows.size)
    perm = rng.permutation(rows.size)  # candidates arrive in no particular order
    return rows[perm], cols[perm], values[perm]


@pytest.mark.parametrize("skew", [False, True])
@pytest.mark.parametrize("ties", [False, True])
def test_topk_sorted_equals_lexsort_reference(skew, ties):
    rng = np.random.default_rng(7)
    for _ in range(20):
        n_rows, k = int(rng.integers(1, 30)), int(rng.integers(1, 6))
        rows, cols, values = random_candidates(rng, n_rows, k, int(rng.integers(0, 12)), skew, ties)
        got = topk_sorted(rows, cols, values, k, n_rows)
        want = lexsort_topk(rows, cols, values, k, n_rows)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
        assert got[1].dtype == np.intp and got[0].dtype == np.float64


def test_topk_sorted_keeps_infinite_values_in_column_order():
    # Padding slots are +inf too: real +inf entries must still come first, by column.
    rows = np.array([0, 0, 0, 1, 1, 1, 1])
    cols = np.array([9, 3, 5, 2, 8, 1, 4], dtype=np.intp)
    values = np.array([np.inf, np.inf, 1.0, 0.5, np.inf, 0.5, 2.0])
    d, c = topk_sorted(rows, cols, values, 3, 2)
    np.testing.assert_array_equal(c, [[5, 3, 9], [1, 2, 4]])
    np.testing.assert_array_equal(d, [[1.0, np.inf, np.inf], [0.5, 0.5, 2.0]])


def test_group_size_bounds():
    for n in (1, 5, 40, 399, 1208, 5000, 50000, 10**6):
        for k in (1, 5, 10, 50):
            m = group_size(n, k)
            assert 1 <= m <= 32
            if m > 1:
                assert n // m >= 4 * k  # enough groups for a tight k-th group minimum
    assert group_size(1208, 10) < group_size(50000, 10) == 32


def test_exact_sqdist_block_size_does_not_change_values():
    rng = np.random.default_rng(3)
    Q, X = rng.standard_normal((40, 13)), rng.standard_normal((70, 13)).astype(np.float32)
    r, c = rng.integers(0, 40, 500), rng.integers(0, 70, 500)
    want = ((Q[r] - X[c].astype(np.float64)) ** 2).sum(axis=1)
    for block in (1, 7, 64, 10**4):
        np.testing.assert_allclose(exact_sqdist(Q, X, r, c, block=block), want, rtol=1e-13)
    np.testing.assert_array_equal(exact_sqdist(Q, X, r, c, block=7),
                                  exact_sqdist(Q, X, r, c))


@pytest.mark.parametrize("n,d,k", [(12, 3, 11), (60, 4, 5), (300, 6, 10), (700, 5, 3)])
def test_small_problems_match_loop_reference(n, d, k):
    rng = np.random.default_rng(n)
    X = rng.standard_normal((n, d))
    Q = rng.standard_normal((25, d))
    index = BruteNeighbors().fit(X)
    for got, want in ((index.kneighbors(None, k), loop_knn(X, None, k, loo=True)),
                      (index.kneighbors(Q, min(k, n)), loop_knn(X, Q, min(k, n)))):
        np.testing.assert_array_equal(got[1], want[1])
        np.testing.assert_allclose(got[0], want[0], rtol=1e-12)


@pytest.mark.parametrize("n", [50, 400])
def test_tie_heavy_integer_data_and_duplicates_match_loop_reference(n):
    rng = np.random.default_rng(n + 1)
    X = rng.integers(0, 3, size=(n, 3)).astype(np.float64)  # many equal distances and duplicates
    Q = rng.integers(0, 3, size=(20, 3)).astype(np.float64)
    index = BruteNeighbors().fit(X)
    for k in (1, 6, 17):
        dist, ind = index.kneighbors(None, k)
        want = loop_knn(X, None, k, loo=True)
        np.testing.assert_array_equal(ind, want[1])
        np.testing.assert_array_equal(dist, want[0])  # integer squared distances: exact
        got = index.kneighbors(Q, k)
        want = loop_knn(X, Q, k)
        np.testing.assert_array_equal(got[1], want[1])
        np.testing.assert_array_equal(got[0], want[0])


@pytest.mark.parametrize("binary", [True, False])
def test_sparse_augmented_keys_equal_half_norm_minus_product(binary):
    # [X, |x|^2/2] @ [-q; 1] must give bit for bit |x|^2/2 - X q (the keys before
    # the augmentation), in float32 for binary data and float64 otherwise.
    import scipy.sparse as sp

    rng = np.random.default_rng(5)
    X = sp.random(300, 40, density=0.2, random_state=2, format="csr")
    X.data = np.ones_like(X.data) if binary else rng.standard_normal(X.nnz)
    index = BruteNeighbors().fit(X)
    Q = X[:30]
    dt = np.float32 if binary else np.float64
    V = index._index.layout.transposed_keys(Q)
    half = (0.5 * np.asarray(X.multiply(X).sum(axis=1)).ravel()).astype(dt)
    want = half[:, None] - np.asarray(X.astype(dt) @ Q.T.toarray().astype(dt))
    assert V.dtype == dt and V.shape == (300, 30)
    np.testing.assert_array_equal(V, want)
