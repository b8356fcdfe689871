"""The symmetric leave-one-out path (``mlknn.neighbors._exact._loo``) against the plain one.

``BruteNeighbors.kneighbors(None, k)`` on dense data with several chunks takes the
symmetric path (each off-diagonal block of the Gram matrix computed once); setting
the private ``allow_symmetric_loo = False`` on an index's ``_index`` forces the plain chunked path.
The two must agree bit for bit (indices and float64 distances) on random, tie-heavy
integer and duplicated data, with n not a multiple of the block, float32 and
float64, every metric, one and two threads; and agree with the double-loop oracle.
A spy checks that the symmetric path really ran (small ``working_memory`` forces
several blocks at small n).
"""

import numpy as np
import pytest
from reference_impls import loop_knn

import mlknn.neighbors._exact._index as index_mod
import mlknn.neighbors._exact._loo as loo_mod
from mlknn.neighbors import BruteNeighbors
from mlknn.neighbors._exact._loo import _from_sortable_bits, _sortable_bits


@pytest.fixture
def spy(monkeypatch):
    calls = []
    real = loo_mod.symmetric_loo

    def wrapped(kernel, k, block, workers):
        calls.append((k, block, workers))
        return real(kernel, k, block, workers)

    monkeypatch.setattr(loo_mod, "symmetric_loo", wrapped)
    # The small test problems (few features, wide k) are outside where the path pays;
    # take it anyway, so that its answers are checked on every shape.
    monkeypatch.setattr(loo_mod, "symmetric_pays", lambda n, d, k: True)
    return calls


def both_paths(X, k, metric="euclidean", working_memory=0.3, n_jobs=1):
    index = BruteNeighbors(metric=metric, working_memory=working_memory, n_jobs=n_jobs).fit(X)
    sym = index.kneighbors(None, k)
    index._index.allow_symmetric_loo = False
    plain = index.kneighbors(None, k)
    return sym, plain


def assert_same(a, b):
    np.testing.assert_array_equal(a[1], b[1])
    np.testing.assert_array_equal(a[0], b[0])
    assert a[0].dtype == b[0].dtype == np.float64 and a[1].dtype == b[1].dtype == np.intp


def tie_heavy(rng, n, d=4, duplicate_every=5):
    X = rng.integers(0, 3, size=(n, d)).astype(np.float64)
    X[::duplicate_every] = X[1::duplicate_every][: X[::duplicate_every].shape[0]]  # exact duplicates
    return X


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("metric", ["euclidean", "sqeuclidean", "cosine"])
@pytest.mark.parametrize("n,k", [(333, 1), (701, 7), (1500, 16)])
def test_symmetric_equals_plain_random(spy, dtype, metric, n, k):
    X = np.random.default_rng(n).standard_normal((n, 11)).astype(dtype)
    sym, plain = both_paths(X, k, metric)
    assert spy and spy[0][1] < n and n % spy[0][1] != 0  # several blocks, a ragged last one
    assert_same(sym, plain)


@pytest.mark.parametrize("k", [1, 5, 30])
def test_symmetric_equals_plain_and_loop_on_ties_and_duplicates(spy, k):
    X = tie_heavy(np.random.default_rng(k), 450)
    sym, plain = both_paths(X, k, working_memory=0.2)
    assert spy
    assert_same(sym, plain)
    want = loop_knn(X, None, k, loo=True)
    np.testing.assert_array_equal(sym[1], want[1])
    np.testing.assert_array_equal(sym[0], want[0])  # integer squared distances: exact
    assert not np.any(sym[1] == np.arange(X.shape[0])[:, None])  # self excluded, duplicates kept


def test_symmetric_matches_loop_reference_far_from_origin(spy):
    # Data far from the origin: the centred keys keep the rounding band narrow.
    rng = np.random.default_rng(4)
    X = 1e3 + rng.standard_normal((400, 6))
    sym = BruteNeighbors(working_memory=0.2).fit(X).kneighbors(None, 6)
    want = loop_knn(X, None, 6, loo=True)
    assert spy
    np.testing.assert_array_equal(sym[1], want[1])
    np.testing.assert_allclose(sym[0], want[0], rtol=1e-12)


def test_symmetric_two_threads_equals_plain(spy, monkeypatch):
    # Force the threaded path (row blocks in parallel, the running state under a lock).
    monkeypatch.setattr(index_mod, "PARALLEL_MIN_WORK", 0)
    rng = np.random.default_rng(9)
    for X, k in ((rng.standard_normal((1200, 9)).astype(np.float32), 10), (tie_heavy(rng, 900), 12)):
        sym, plain = both_paths(X, k, working_memory=0.5, n_jobs=2)
        assert spy[-1][2] == 2
        assert_same(sym, plain)


def test_pruning_the_pool_at_every_piece_changes_nothing(spy, monkeypatch):
    import mlknn.neighbors._exact._loo as loo

    monkeypatch.setattr(loo, "_PRUNE_MIN", 0)
    monkeypatch.setattr(loo, "_prune", counting := _Counting(loo._prune))
    rng = np.random.default_rng(12)
    for X, k in ((rng.standard_normal((900, 8)), 6), (tie_heavy(rng, 700), 9)):
        sym, plain = both_paths(X, k, working_memory=0.2)
        assert_same(sym, plain)
    assert counting.calls >= 4  # per data set: pruned during the blocks and at the end


class _Counting:
    def __init__(self, fn):
        self.fn, self.calls = fn, 0

    def __call__(self, *args):
        self.calls += 1
        return self.fn(*args)


def test_one_block_and_sparse_take_the_plain_path(spy):
    import scipy.sparse as sp

    X = np.random.default_rng(1).standard_normal((300, 5))
    BruteNeighbors().fit(X).kneighbors(None, 4)  # one chunk: nothing to share
    Xs = sp.random(300, 40, density=0.1, random_state=1, format="csr")
    BruteNeighbors(working_memory=0.2).fit(Xs).kneighbors(None, 4)
    assert spy == []


def test_k_equal_to_n_minus_one_and_tiny_last_block(spy):
    # Every other point is a neighbour; a last block of fewer than k rows.
    X = np.random.default_rng(2).standard_normal((203, 3))
    k = 202
    sym, plain = both_paths(X, k, working_memory=0.0016)  # 0.0016 MB / (8 x 203) ~ blocks of ~100
    assert spy
    assert_same(sym, plain)


def test_sortable_bits_order_and_round_trip():
    keys = np.array([np.inf, -np.inf, -3.5, -0.0, 0.0, 1e-30, -1e-30, 2.0, 7.5, np.float32(3.4e38)],
                    dtype=np.float32)
    bits = _sortable_bits(keys)
    assert np.all(np.diff(bits[np.argsort(keys, kind="stable")].astype(np.float64)) >= 0)
    order = np.argsort(bits, kind="stable")
    assert np.all(np.diff(keys[order]) >= 0)
    np.testing.assert_array_equal(_from_sortable_bits(bits).view(np.uint32), keys.view(np.uint32))


def test_the_symmetric_path_is_taken_only_where_it_pays():
    # Many features and few neighbours: the halved GEMM dominates; otherwise the
    # candidate pool's selection and memory outweigh it (docs/performance.md).
    pays = loo_mod.symmetric_pays
    assert pays(50_000, 120, 10)
    assert not pays(50_000, 8, 10)
    assert not pays(40_000, 120, 30)
    assert not pays(1 << 32, 120, 10)


def test_a_shape_where_it_does_not_pay_takes_the_plain_path(monkeypatch):
    calls = []
    monkeypatch.setattr(loo_mod, "symmetric_loo", lambda *a: calls.append(a))
    X = np.random.default_rng(0).normal(size=(3000, 4)).astype(np.float32)
    index = BruteNeighbors(working_memory=0.3, n_jobs=1).fit(X)
    index.kneighbors(None, 5)
    assert calls == []


@pytest.fixture
def piece_spy(monkeypatch):
    """Counts the off-diagonal pieces that the compiled kernel answered."""
    import mlknn.neighbors._exact._loo as loo

    answered = []
    real = loo._piece_compiled

    def wrapped(*args):
        out = real(*args)
        answered.append(out is not None)
        return out

    monkeypatch.setattr(loo, "_piece_compiled", wrapped)
    return answered


@pytest.mark.parametrize("start", [4, 0])  # 0: every piece overflows its first buffer and regrows
@pytest.mark.parametrize("k", [1, 6, 32])
def test_compiled_pieces_equal_plain_and_loop(spy, piece_spy, monkeypatch, start, k):
    pytest.importorskip("numba")
    import mlknn.neighbors._exact._loo as loo

    monkeypatch.setattr(loo, "_PIECE_START", start)
    rng = np.random.default_rng(k + start)
    for X in (rng.standard_normal((1100, 7)).astype(np.float32), tie_heavy(rng, 800)):
        sym, plain = both_paths(X, k, working_memory=0.1)
        assert_same(sym, plain)
        if (k, start) == (6, 4):  # the plain path meets the oracle on every shape elsewhere
            want = loop_knn(X, None, k, loo=True)
            np.testing.assert_array_equal(sym[1], want[1])
    assert any(piece_spy)  # the compiled kernel answered some pieces (once caps are finite)


def test_compiled_pieces_fall_back_above_the_compiled_k_and_without_numba(spy, piece_spy, monkeypatch):
    from mlknn.neighbors._exact import _compiled

    X = tie_heavy(np.random.default_rng(3), 700)
    k = _compiled.MAX_NEIGHBORS + 1
    sym, plain = both_paths(X, k, working_memory=0.1)
    assert_same(sym, plain)
    assert piece_spy and not any(piece_spy)
    piece_spy.clear()
    monkeypatch.setattr(_compiled, "kernels", lambda: None)
    sym, plain = both_paths(X, 5, working_memory=0.1)
    assert_same(sym, plain)
    assert piece_spy and not any(piece_spy)


def test_loo_piece_kernel_against_its_definition():
    # The kernel alone, against the rule its docstring states, on a tie-heavy piece.
    nk = pytest.importorskip("mlknn.neighbors._exact._numba_loo")
    rng = np.random.default_rng(5)
    V = rng.integers(0, 6, size=(21, 97)).astype(np.float32)
    k, m = 4, 3
    cap_row = np.where(rng.random(21) < 0.5, np.inf, rng.integers(0, 6, 21).astype(np.float64))
    band_row = np.full(21, 0.25)
    thr_col = rng.integers(0, 6, 97).astype(np.float32) + np.float32(0.25)
    bufs = [np.empty(4000, dtype=dt) for dt in (np.intp, np.intp, np.float32) * 2]
    nr, nc = nk.loo_piece(V, cap_row, band_row, thr_col, k, m, *bufs)
    n_groups = 97 // m
    want_rows, want_cols = set(), set()
    for i in range(21):
        pool = np.concatenate((V[i, : m * n_groups].reshape(m, n_groups).min(axis=0), V[i, m * n_groups :]))
        kth = np.sort(pool)[k - 1]
        thr = np.float32(min(kth, cap_row[i]) + band_row[i] + 1e-300)
        want_rows |= {(i, j) for j in range(97) if V[i, j] <= thr}
        want_cols |= {(j, i) for j in range(97) if V[i, j] <= thr_col[j]}
    got_rows = set(zip(bufs[0][:nr].tolist(), bufs[1][:nr].tolist()))
    got_cols = set(zip(bufs[3][:nc].tolist(), bufs[4][:nc].tolist()))
    assert nr == len(want_rows) and got_rows == want_rows
    assert nc == len(want_cols) and got_cols == want_cols
    np.testing.assert_array_equal(bufs[2][:nr], V[bufs[0][:nr], bufs[1][:nr]])
    np.testing.assert_array_equal(bufs[5][:nc], V[bufs[4][:nc], bufs[3][:nc]])
    small = [b[:10] for b in bufs]
    assert nk.loo_piece(V, cap_row, band_row, thr_col, k, m, *small) == (-1, -1)  # overflow reported


def test_compiled_running_merge_equals_the_sorting_merge(monkeypatch):
    # _RunningTopK.offer: the compiled replace-the-largest merge and the numpy
    # sort-and-partition merge keep the same k smallest values and caps, ties included.
    pytest.importorskip("numba")
    from mlknn.neighbors._exact import _compiled
    from mlknn.neighbors._exact._loo import _RunningTopK

    rng = np.random.default_rng(8)
    n, k = 60, 5
    offers = []
    for _ in range(12):
        size = int(rng.integers(0, 200))
        rows = rng.integers(0, n, size)
        keys = rng.integers(-3, 4, size).astype(np.float32)  # many ties
        offers.append((rows, keys))
    compiled_state = _RunningTopK(n, k, np.dtype(np.float32))
    for rows, keys in offers:
        compiled_state.offer(rows, keys)
    monkeypatch.setattr(_compiled, "kernels", lambda: None)
    numpy_state = _RunningTopK(n, k, np.dtype(np.float32))
    for rows, keys in offers:
        numpy_state.offer(rows, keys)
    # A loop reference: the k smallest of everything offered to each row.
    every = [np.sort(np.concatenate([keys[rows == i] for rows, keys in offers] + [np.full(k, np.inf, np.float32)]))[:k]
             for i in range(n)]
    np.testing.assert_array_equal(np.sort(compiled_state.best, axis=1), np.sort(numpy_state.best, axis=1))
    np.testing.assert_array_equal(np.sort(compiled_state.best, axis=1), np.array(every))
    np.testing.assert_array_equal(compiled_state.cap, numpy_state.cap)
    np.testing.assert_array_equal(compiled_state.cap, np.array(every).max(axis=1))
