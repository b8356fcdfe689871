"""Radius counts on data whose float32 ranking keys may overflow (magnitude ~1e19+).

Before, the keys of such data were inf or NaN and the counts wrong; now every pair of
the chunk is recomputed exactly in float64. Checked against a loop count.
"""

import numpy as np
import pytest

from mlknn.neighbors import BruteNeighbors


def _loop_counts(X, Q, radius, loo):
    counts = []
    for i, q in enumerate(X if Q is None else Q):
        n = 0
        for j, x in enumerate(X):
            if loo and i == j:
                continue
            d = float(np.sqrt(np.sum((np.asarray(q, np.float64) - np.asarray(x, np.float64)) ** 2)))
            n += d <= radius
        counts.append(n)
    return np.array(counts)


@pytest.mark.parametrize("magnitude", [1e25, 1e150])
def test_radius_counts_beyond_the_float32_range(magnitude):
    rng = np.random.default_rng(7)
    X, Q = rng.standard_normal((50, 3)), rng.standard_normal((8, 3))
    X[::2] *= magnitude
    Q[::3] *= magnitude
    index = BruteNeighbors(working_memory=0.001).fit(X)  # several chunks
    for radius in (1.5, 3.0):
        with np.errstate(over="ignore", invalid="ignore"):
            got_q = index.radius_neighbors_counts(Q, radius)
            got_loo = index.radius_neighbors_counts(None, radius)
        np.testing.assert_array_equal(got_q, _loop_counts(X, Q, radius, loo=False))
        np.testing.assert_array_equal(got_loo, _loop_counts(X, None, radius, loo=True))
        # The unscaled rows sit within a few units of each other: the counts are not trivial.
        assert got_loo.max() > 0


def test_radius_counts_ordinary_data_unchanged():
    rng = np.random.default_rng(8)
    X, Q = rng.standard_normal((80, 4)), rng.standard_normal((10, 4))
    index = BruteNeighbors().fit(X)
    np.testing.assert_array_equal(index.radius_neighbors_counts(Q, 2.0), _loop_counts(X, Q, 2.0, loo=False))
