"""Radius counts on data whose float32 ranking keys may overflow (magnitude ~1e19+).

Before, the keys of such data were inf or NaN and the counts wrong; now every pair of
the chunk is recomputed exactly in float64. Checked against a loop count.
"""

import numpy as np
import pytest
from reference_impls import loop_knn

import mlknn.neighbors._exact._compiled as compiled
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



@pytest.mark.parametrize("enabled", [True, False])
@pytest.mark.parametrize("magnitude", [1e-20, 1e-22, 1e-23])
def test_tiny_data_neighbours_and_counts_exact(monkeypatch, enabled, magnitude):
    # Keys in float32's subnormal range round by an absolute amount that the relative
    # band does not cover: every pair is a candidate (before: wrong neighbours and
    # counts on both paths, e.g. 82 of 300 rows at 1e-22), compiled path or not.
    monkeypatch.setattr(compiled, "ENABLED", enabled and compiled.ENABLED)
    rng = np.random.default_rng(1)
    X = rng.standard_normal((300, 5)) * magnitude
    index = BruteNeighbors().fit(X)
    got = index.kneighbors(None, 5)
    want = loop_knn(X, None, 5, loo=True)
    np.testing.assert_array_equal(got[1], want[1])
    radius = float(np.median(want[0][:, 2]))
    np.testing.assert_array_equal(index.radius_neighbors_counts(None, radius), _loop_counts(X, None, radius, loo=True))


def test_numba_failure_at_run_time_falls_back_with_one_warning(monkeypatch):
    # A failure inside the compiled call (a corrupt cache file, a full disk while
    # numba saves it) warns once and the search goes on with the numpy path.
    mod = compiled.kernels()
    if mod is None:
        pytest.skip("numba missing or MLKNN_NUMBA=0")
    rng = np.random.default_rng(3)
    X = rng.standard_normal((200, 6))
    want = loop_knn(X, None, 4, loo=True)

    class Broken:
        def __getattr__(self, name):
            def fail(*args, **kwargs):
                raise OSError("No space left on device")
            return fail

    monkeypatch.setattr(compiled, "_module", Broken())
    monkeypatch.setattr(compiled, "_tried", True)
    with pytest.warns(RuntimeWarning, match="numpy path"):
        got = BruteNeighbors().fit(X).kneighbors(None, 4)
    np.testing.assert_array_equal(got[1], want[1])
    assert compiled.kernels() is None  # off for the rest of the process
