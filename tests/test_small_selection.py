"""The compiled selection's pieces for small problems (issue 16): the filtered k-th
smallest, the branch-free candidate lists, the vector exact sums and the placement of
the k best by rank, each against the numpy path or a direct computation, bit for bit.
"""

import numpy as np
import pytest
from reference_impls import loop_knn
from test_compiled_kernel import both
from test_exact_loo import assert_same

import mlknn.neighbors._exact._compiled as compiled

needs_numba = pytest.mark.skipif(compiled.kernels() is None, reason="numba missing or MLKNN_NUMBA=0")


def kth_reference(pool, k):
    """The k-th smallest entry that is not NaN, +inf when fewer than k are."""
    finite = np.sort(pool[~np.isnan(pool)])
    return float(finite[k - 1]) if finite.size >= k else np.inf


@needs_numba
@pytest.mark.parametrize("k", [1, 2, 3, 10, 17, 32])
def test_kth_filtered_equals_the_kth_smallest(k):
    mod = compiled.kernels()
    rng = np.random.default_rng(k)
    for trial in range(300):
        n = int(rng.integers(k, 4 * k + 40))
        kind = trial % 5
        if kind == 0:  # continuous
            pool = rng.standard_normal(n).astype(np.float32)
        elif kind == 1:  # many ties
            pool = rng.integers(0, 4, n).astype(np.float32)
        elif kind == 2:  # +inf entries (excluded self entries, empty groups)
            pool = rng.standard_normal(n).astype(np.float32)
            pool[rng.random(n) < 0.4] = np.inf
        elif kind == 3:  # NaN entries (fewer than k numbers possible)
            pool = rng.standard_normal(n).astype(np.float32)
            pool[rng.random(n) < 0.7] = np.nan
        else:  # sorted descending: every entry is a new minimum
            pool = np.sort(rng.standard_normal(n).astype(np.float32))[::-1].copy()
        scratch = np.empty(n + k, dtype=np.float32)
        got = mod._kth_filtered(pool, k, scratch)
        assert got == kth_reference(pool, k) or (np.isinf(got) and np.isinf(kth_reference(pool, k))), (trial, n)
        assert got == mod._kth_smallest(pool, k, np.empty(k, dtype=np.float32))


def clustered(rng, n, d, size):
    """Clusters of ``size`` exact duplicates: each row then has about ``size``
    candidates at its threshold (ties at distance 0), on both sides of the rank
    placement's limit (``_numba_kernels._RANK_MAX``)."""
    centres = rng.standard_normal((-(-n // size), d))
    X = np.repeat(centres, size, axis=0)[:n]
    return X[rng.permutation(n)]


@needs_numba
@pytest.mark.parametrize("d", [3, 7, 8, 9, 103, 128, 129])
@pytest.mark.parametrize("size", [1, 12, 31, 32, 33, 60])
def test_candidate_counts_around_the_rank_limit_equal_numpy_path(monkeypatch, d, size):
    # size 1: about k candidates (placement by rank, paired sums with an odd count
    # now and then); 33 and 60: more than _RANK_MAX (sorted insertion).
    rng = np.random.default_rng(d * 100 + size)
    X = clustered(rng, 400, d, size)
    Q = np.vstack([X[:50], rng.standard_normal((50, d))])
    for k in (1, 10, 32):
        fast, slow = both(X, None, k, monkeypatch)
        assert_same(fast, slow)
        fast, slow = both(X, Q, k, monkeypatch)
        assert_same(fast, slow)
    if d <= 9:  # the double loop is slow in many features
        ind = both(X, Q[::4], 10, monkeypatch)[0][1]
        np.testing.assert_array_equal(ind, loop_knn(X, Q[::4], 10)[1])


@needs_numba
def test_vector_leaf_equals_the_scalar_leaf_and_numpy_bit_for_bit():
    # Contiguous rows take the 8-wide vector sum, strided ones the scalar sum: both
    # are numpy's pairwise sum (np.add.reduce), float32 and mixed rows included.
    from numba import njit

    mod = compiled.kernels()
    leaf, scalar = mod._leaf, mod._leaf_scalar

    @njit
    def both_sums(q, x):
        return leaf(q, x), scalar(q, x)

    rng = np.random.default_rng(3)
    for d in (1, 3, 7, 8, 9, 15, 16, 17, 64, 103, 127, 128):
        for qt, xt in ((np.float64, np.float64), (np.float32, np.float32), (np.float64, np.float32)):
            q = (rng.standard_normal(2 * d) * 10.0 ** rng.integers(-3, 4)).astype(qt)
            x = (rng.standard_normal(2 * d) * 10.0 ** rng.integers(-3, 4)).astype(xt)
            want = np.add.reduce((q[:d].astype(np.float64) - x[:d].astype(np.float64)) ** 2)
            assert both_sums(q[:d], x[:d]) == (want, want)  # contiguous: the vector sum
            want = np.add.reduce((q[::2].astype(np.float64) - x[::2].astype(np.float64)) ** 2)
            assert both_sums(q[::2], x[::2]) == (want, want)  # strided: the scalar sum
