"""The compiled selection (``mlknn.neighbors._exact._compiled``, ``_numba_kernels``) against the numpy path.

With numba installed, ``BruteNeighbors`` selects and re-ranks a dense chunk with one
compiled pass per row; ``_compiled.ENABLED = False`` forces the numpy path. The two
must agree bit for bit, indices and float64 distances (the compiled sum follows
numpy's pairwise order), on random float32/float64 data, tie-heavy integer data,
duplicates, k = n - 1 and k = n, n not a multiple of the group size, every metric,
query chunks that are not the leave-one-out block, several chunks, and rows split
over threads; and both must agree with the double-loop oracle. Without numba the
tests that need it skip; the rest check the fallback.
"""

import subprocess
import sys

import numpy as np
import pytest
from reference_impls import loop_knn
from test_exact_loo import assert_same as assert_identical  # indices, distances, dtypes

import mlknn.neighbors._exact._compiled as compiled
import mlknn.utils._threads as runtime
from mlknn.neighbors import BruteNeighbors
from mlknn.neighbors._exact._kernel import exact_sqdist

# The tests that compare the two paths need the compiled one (numba installed, and
# not disabled by MLKNN_NUMBA=0); the rest check the numpy fallback either way.
needs_numba = pytest.mark.skipif(compiled.kernels() is None, reason="numba missing or MLKNN_NUMBA=0")


@pytest.fixture(autouse=True)
def any_width(monkeypatch):
    # The compiled selection serves searches up to MAX_NEIGHBORS wide; the tests
    # check it at every k (k = n - 1 included), so the limit is lifted here.
    monkeypatch.setattr(compiled, "MAX_NEIGHBORS", 10**9)


def both(X, Q, k, monkeypatch, **params):
    """(compiled, numpy) answers of BruteNeighbors(**params) for queries Q (None: LOO)."""
    index = BruteNeighbors(**params).fit(X)
    assert compiled.kernels() is not None
    fast = index.kneighbors(Q, k)
    with monkeypatch.context() as m:
        m.setattr(compiled, "ENABLED", False)
        assert compiled.kernels() is None
        slow = index.kneighbors(Q, k)
    return fast, slow


def tie_heavy(rng, n, d=3):
    X = rng.integers(0, 3, size=(n, d)).astype(np.float64)
    m = X[1::7].shape[0]
    X[: 7 * m : 7] = X[1::7]  # exact duplicates
    return X


@pytest.mark.parametrize("d", [1, 3, 7, 8, 9, 64, 103, 128, 129, 136, 300, 1031])
@pytest.mark.parametrize("dtypes", [(np.float64, np.float64), (np.float32, np.float32), (np.float64, np.float32)])
def test_pair_sqdist_equals_the_numpy_pairwise_sum_bit_for_bit(monkeypatch, d, dtypes):
    # Row sums past 128 terms are split in halves as numpy does: d = 129, 136,
    # 300 and 1031 exercise the explicit stack that replaces the recursion.
    rng = np.random.default_rng(d)
    Q = (rng.standard_normal((30, d)) * 10).astype(dtypes[0])
    X = (rng.standard_normal((40, d)) * 10).astype(dtypes[1])
    r, c = rng.integers(0, 30, 400), rng.integers(0, 40, 400)
    want = np.add.reduce((Q[r].astype(np.float64) - X[c].astype(np.float64)) ** 2, axis=1)
    got = exact_sqdist(Q, X, r, c)
    with monkeypatch.context() as m:
        m.setattr(compiled, "ENABLED", False)
        slow = exact_sqdist(Q, X, r, c, block=7)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(slow, want)
    np.testing.assert_allclose(got, ((Q[r].astype(np.float64) - X[c]) ** 2).sum(axis=1), rtol=1e-12)


@needs_numba
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("metric", ["euclidean", "sqeuclidean", "cosine"])
@pytest.mark.parametrize("n,d,k", [(1, 2, 1), (7, 3, 6), (61, 5, 10), (503, 9, 10), (1208, 103, 10), (997, 130, 3)])
def test_compiled_equals_numpy_path_random(monkeypatch, dtype, metric, n, d, k):
    rng = np.random.default_rng(n + d)
    X = (rng.standard_normal((n, d)) + 3.0).astype(dtype)
    Q = (rng.standard_normal((37, d)) + 3.0).astype(dtype)
    if n > 1:
        assert_identical(*both(X, None, min(k, n - 1), monkeypatch, metric=metric))
    assert_identical(*both(X, Q, min(k, n), monkeypatch, metric=metric))


@needs_numba
@pytest.mark.parametrize("n", [40, 333, 1500])
def test_compiled_equals_numpy_path_and_loop_on_ties_and_duplicates(monkeypatch, n):
    rng = np.random.default_rng(n)
    X = tie_heavy(rng, n)
    Q = tie_heavy(rng, 25)
    # Every k up to n - 1 on the two smaller sets; the largest adds the group size's
    # cap at small k (a full-width search is the same code at any n).
    for k in (1, 5, 17, n - 1) if n <= 333 else (1, 5, 17):
        fast, slow = both(X, None, k, monkeypatch)
        assert_identical(fast, slow)
        if n <= 333:
            want = loop_knn(X, None, k, loo=True)
            np.testing.assert_array_equal(fast[1], want[1])
            np.testing.assert_array_equal(fast[0], want[0])  # integer squared distances: exact
    for k in (1, 9, n) if n <= 333 else (1, 9):
        fast, slow = both(X, Q, k, monkeypatch)
        assert_identical(fast, slow)
        if n <= 333:
            want = loop_knn(X, Q, k)
            np.testing.assert_array_equal(fast[1], want[1])
            np.testing.assert_array_equal(fast[0], want[0])


def test_compiled_matches_loop_reference_on_continuous_data():
    rng = np.random.default_rng(11)
    X, Q = rng.standard_normal((150, 6)), rng.standard_normal((20, 6))
    index = BruteNeighbors().fit(X)
    for got, want in ((index.kneighbors(None, 8), loop_knn(X, None, 8, loo=True)),
                      (index.kneighbors(Q, 8), loop_knn(X, Q, 8))):
        np.testing.assert_array_equal(got[1], want[1])
        np.testing.assert_allclose(got[0], want[0], rtol=1e-13)


@needs_numba
def test_several_chunks_and_thread_split_equal_one_chunk(monkeypatch):
    # Chunks other than the leave-one-out block (loo_offset > 0), and a chunk's rows
    # split over threads: the same answer as one chunk on one thread.
    rng = np.random.default_rng(2)
    X = rng.standard_normal((1700, 20)).astype(np.float32)
    X[100:120] = X[200:220]  # duplicates across chunks
    Q = rng.standard_normal((1100, 20))
    monkeypatch.setattr(compiled, "MIN_ROWS_PER_THREAD", 64)
    one = BruteNeighbors(n_jobs=1).fit(X)
    want_loo, want_q = one.kneighbors(None, 7), one.kneighbors(Q, 7)
    for params in ({"n_jobs": 2}, {"n_jobs": 3}, {"n_jobs": 1, "working_memory": 0.5}):
        index = BruteNeighbors(**params).fit(X)
        assert_identical(index.kneighbors(None, 7), want_loo)
        assert_identical(index.kneighbors(Q, 7), want_q)
    monkeypatch.setattr(compiled, "ENABLED", False)
    assert_identical(BruteNeighbors(working_memory=0.5).fit(X).kneighbors(None, 7), want_loo)


@pytest.mark.parametrize("enabled", [True, False])
@pytest.mark.parametrize("magnitude", [1e25, 1e150])
def test_data_beyond_the_float32_range_takes_every_point_as_candidate(monkeypatch, enabled, magnitude):
    # Keys that may overflow float32 (inf, NaN, or finite keys beside overflowed
    # ones: two clusters far apart): every training point is a candidate, on both
    # paths, and the answer is still exact.
    if enabled and compiled.kernels() is None:
        pytest.skip("numba missing or MLKNN_NUMBA=0")
    monkeypatch.setattr(compiled, "ENABLED", enabled and compiled.ENABLED)
    rng = np.random.default_rng(4)
    X, Q = rng.standard_normal((60, 3)), rng.standard_normal((9, 3))
    X[::2] *= magnitude
    Q[::3] *= magnitude
    index = BruteNeighbors(working_memory=0.001).fit(X)  # several chunks, LOO offsets > 0
    with np.errstate(over="ignore", invalid="ignore"):
        got, got_loo = index.kneighbors(Q, 4), index.kneighbors(None, 4)
    for g, want in ((got, loop_knn(X, Q, 4)), (got_loo, loop_knn(X, None, 4, loo=True))):
        np.testing.assert_array_equal(g[1], want[1])
        np.testing.assert_allclose(g[0], want[0], rtol=1e-12)
    # Many features and several chunks: the symmetric leave-one-out path would
    # take it; overflowing keys send it to the plain path instead.
    X = np.hstack([X] * 22)  # d = 66
    index = BruteNeighbors(working_memory=0.01).fit(X)
    with np.errstate(over="ignore", invalid="ignore"):
        got_loo = index.kneighbors(None, 4)
    want = loop_knn(X, None, 4, loo=True)
    np.testing.assert_array_equal(got_loo[1], want[1])


@needs_numba
def test_numba_import_failure_falls_back_to_numpy(monkeypatch):
    rng = np.random.default_rng(5)
    X = tie_heavy(rng, 200)
    want = BruteNeighbors().fit(X).kneighbors(None, 6)
    monkeypatch.setitem(sys.modules, "mlknn.neighbors._exact._numba_kernels", None)  # import raises ImportError
    monkeypatch.setattr(compiled, "_tried", False)
    monkeypatch.setattr(compiled, "_module", None)
    with pytest.warns(RuntimeWarning, match="numba is installed but could not be imported"):
        assert compiled.kernels() is None
    assert_identical(BruteNeighbors().fit(X).kneighbors(None, 6), want)
    monkeypatch.undo()
    assert compiled.kernels() is not None


def test_import_mlknn_does_not_import_numba_and_the_variable_disables_it():
    import os

    code = ("import sys, mlknn, mlknn.neighbors, mlknn.neighbors._exact._compiled as c; "
            "print('numba' in sys.modules, c.ENABLED)")
    env = {key: value for key, value in os.environ.items() if key != "MLKNN_NUMBA"}
    for setting, enabled in ((None, "True"), ("0", "False"), ("1", "True")):
        if setting is not None:
            env["MLKNN_NUMBA"] = setting
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
        assert out.stdout.split() == ["False", enabled]


def test_group_size_keeps_enough_groups():
    for n in (1, 5, 40, 399, 1208, 5000, 50000):
        for k in (1, 5, 10, 50):
            m = compiled.group_size(n, k)
            assert 1 <= m <= 32
            if m > 1:
                assert n // m >= 4 * k


def _child_search(queue):
    # First the state right after the fork (no search yet, so nothing can block):
    # the parent's pool, whose threads do not exist here, must be forgotten.
    queue.put(runtime._pool is None)
    rng = np.random.default_rng(8)
    X = rng.standard_normal((800, 6))
    got = BruteNeighbors(n_jobs=2).fit(X).kneighbors(None, 4)[1].sum()
    queue.put((got, runtime._pool is not None))  # the child made and used its own pool


@needs_numba
def test_thread_pool_survives_fork(monkeypatch):
    # The selection's thread pool of the parent has no threads in a forked child:
    # the child must make its own, not wait forever on the parent's. The verdict is
    # the child's reported state and answer; the queue timeouts only guard against
    # a child that died before reporting.
    import multiprocessing

    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("no fork start method on this platform")
    monkeypatch.setattr(compiled, "MIN_ROWS_PER_THREAD", 64)
    rng = np.random.default_rng(8)
    want = BruteNeighbors(n_jobs=2).fit(rng.standard_normal((800, 6))).kneighbors(None, 4)[1].sum()
    assert runtime._pool is not None  # the parent's pool exists before the fork
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_child_search, args=(queue,))
    child.start()
    forgotten = queue.get(timeout=600)
    if not forgotten:
        child.kill()
        pytest.fail("the forked child kept the parent's thread pool (its threads do not exist there)")
    got, own_pool = queue.get(timeout=600)
    child.join()
    assert own_pool and got == want
    assert child.exitcode == 0


def test_a_broken_numba_install_warns_and_falls_back(monkeypatch):
    import importlib

    def broken(name, *args, **kwargs):
        raise RuntimeError("cannot cache function: no locator available")

    monkeypatch.setattr(importlib, "import_module", broken)
    monkeypatch.setattr(compiled, "_tried", False)
    monkeypatch.setattr(compiled, "_module", None)
    monkeypatch.setattr(compiled, "ENABLED", True)
    with pytest.warns(RuntimeWarning, match="numpy path"):
        assert compiled.kernels() is None
    X = tie_heavy(np.random.default_rng(6), 120)
    got = BruteNeighbors().fit(X).kneighbors(None, 5)
    want = loop_knn(X, None, 5, loo=True)
    np.testing.assert_array_equal(got[1], want[1])


@needs_numba
def test_wide_searches_keep_the_numpy_path(monkeypatch):
    from mlknn.neighbors._exact import _kernel

    monkeypatch.setattr(compiled, "MAX_NEIGHBORS", 8)
    calls = []
    real = compiled.select
    monkeypatch.setattr(_kernel._compiled, "select", lambda *a, **kw: calls.append(a[7]) or real(*a, **kw))
    X = np.random.default_rng(9).standard_normal((300, 4))
    index = BruteNeighbors().fit(X)
    index.kneighbors(None, 8)
    assert calls == [8]
    wide = index.kneighbors(None, 9)
    assert calls == [8]  # k = 9 > MAX_NEIGHBORS: numpy
    np.testing.assert_array_equal(wide[1], loop_knn(X, None, 9, loo=True)[1])


@needs_numba
@pytest.mark.parametrize("fit_dtype,query_dtype", [(np.float64, np.float32), (np.float32, np.float64)])
def test_mixed_dtypes_equal_the_numpy_path(monkeypatch, fit_dtype, query_dtype):
    rng = np.random.default_rng(12)
    X = rng.standard_normal((700, 11)).astype(fit_dtype)
    Q = np.asfortranarray(rng.standard_normal((300, 11)).astype(query_dtype))  # prepared to C order
    assert_identical(*both(X, Q, 6, monkeypatch))
    np.testing.assert_array_equal(both(X, Q, 6, monkeypatch)[0][1], loop_knn(X, Q, 6)[1])


@needs_numba
@pytest.mark.parametrize("k", [1, 5, 32])
def test_sparse_training_major_selection_equals_numpy_path_and_loop(monkeypatch, k):
    # Sparse binary data (float32 keys, many ties): the compiled training-major
    # candidates against the numpy path, leave-one-out and queries, several chunks (the
    # loo offset moves), and output buffers that must grow; and, for one k (the numpy
    # path meets the oracle on every k in test_exact_kernel), against the loop oracle.
    import scipy.sparse as sp

    import mlknn.neighbors._exact._kernel as ek

    rng = np.random.default_rng(k)
    # Very sparse rows: many empty and equal rows, ties wider than the first buffers.
    dense = (rng.random((500, 40)) < 0.03).astype(np.float64)
    dense[50:60] = dense[400:410]  # duplicates
    X = sp.csr_matrix(dense)
    Q = sp.csr_matrix((rng.random((250, 40)) < 0.03).astype(np.float64))
    calls, overflows = [], []
    real = ek._compiled_training_major
    monkeypatch.setattr(ek, "_compiled_training_major", lambda *a: calls.append(1) or real(*a))
    mod = compiled.kernels()
    kernel = mod.training_major_candidates

    def counted(*args):
        count = kernel(*args)
        overflows.append(count < 0)
        return count

    monkeypatch.setattr(mod, "training_major_candidates", counted)
    index = BruteNeighbors(n_jobs=1, working_memory=0.5).fit(X)
    got_loo, got_q = index.kneighbors(None, k), index.kneighbors(Q, k)
    assert len(calls) >= 4  # several chunks, each compiled
    assert any(overflows) or k == 32  # buffers grew (k = 32: the first buffers are 8 k wide)
    monkeypatch.setattr(compiled, "ENABLED", False)
    want = BruteNeighbors(n_jobs=1, working_memory=0.5).fit(X)
    assert_identical(got_loo, want.kneighbors(None, k))
    assert_identical(got_q, want.kneighbors(Q, k))
    if k != 5:
        return
    for got, (d, i) in ((got_loo, loop_knn(X.toarray(), None, k, loo=True)), (got_q, loop_knn(X.toarray(), Q.toarray(), k))):
        np.testing.assert_array_equal(got[1], i)
        np.testing.assert_allclose(got[0], d, rtol=1e-12)


@needs_numba
def test_training_major_kernel_overflow_and_float64_keys_fall_back():
    import mlknn.neighbors._exact._kernel as ek

    mod = compiled.kernels()
    rng = np.random.default_rng(0)
    V = rng.integers(0, 3, size=(200, 30)).astype(np.float32)  # ties: many candidates
    band = np.full(30, 0.1)
    small = [np.empty(5, dtype=np.intp) for _ in range(2)]
    assert mod.training_major_candidates(V.copy(), band, 3, 4, -1, *small) == -1
    big = [np.empty(200 * 30, dtype=np.intp) for _ in range(2)]
    n = mod.training_major_candidates(V.copy(), band, 3, 4, -1, *big)
    # Against the rule: per column, the 3rd smallest of the group minima and tail, plus the band.
    want = set()
    n_groups = 200 // 4
    for j in range(30):
        pool = V[:, j].reshape(4, n_groups).min(axis=0)
        thr = np.float32(np.sort(pool)[2] + 0.1 + 1e-300)
        want |= {(j, i) for i in range(200) if V[i, j] <= thr}
    assert n == len(want) and set(zip(big[0][:n].tolist(), big[1][:n].tolist())) == want
    assert ek._compiled_training_major(V.astype(np.float64), np.ones(30), None, 3) is None


@needs_numba
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sparse_pair_distances_equal_scipys_bit_for_bit(monkeypatch, dtype):
    # The compiled sparse exact distances against the scipy path (difference, square,
    # reduceat sum): rows of few and of many (> 129) non-zeros, explicit zeros,
    # identical rows (distance exactly 0), empty rows, values of mixed magnitude.
    import scipy.sparse as sp

    rng = np.random.default_rng(3)
    n, d = 300, 400
    density = np.where(rng.random(n) < 0.2, 0.5, 0.03)[:, None]
    dense = np.where(rng.random((n, d)) < density, rng.standard_normal((n, d)) * 10.0 ** rng.integers(-4, 4, (n, d)), 0.0)
    dense[10] = dense[20]  # identical rows
    dense[30] = 0.0  # an empty row
    X = sp.csr_matrix(dense.astype(dtype))
    X.data[X.indptr[100] :: 17] = 0.0  # explicit zeros, still stored (rows 100 on)
    assert X.has_canonical_format
    r = rng.integers(0, n, 5000)
    c = rng.integers(0, n, 5000)
    r[:3], c[:3] = (10, 30, 30), (20, 30, 5)
    got = exact_sqdist(X, X, r, c)
    monkeypatch.setattr(compiled, "ENABLED", False)
    want = exact_sqdist(X, X, r, c)
    np.testing.assert_array_equal(got.view(np.int64), want.view(np.int64))
    assert got[0] == 0.0 and got[1] == 0.0
    assert (np.diff(X.indptr)[r] + np.diff(X.indptr)[c]).max() > 129  # the halving path ran
