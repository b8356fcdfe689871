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
    # Force the threaded path (strips in parallel, the column state under block locks).
    monkeypatch.setattr(index_mod, "PARALLEL_MIN_WORK", 0)
    rng = np.random.default_rng(9)
    for X, k in ((rng.standard_normal((1200, 9)).astype(np.float32), 10), (tie_heavy(rng, 900), 12)):
        sym, plain = both_paths(X, k, working_memory=0.5, n_jobs=2)
        assert spy[-1][2] == 2
        assert_same(sym, plain)


def test_pruning_the_pool_at_every_piece_changes_nothing(spy, monkeypatch):
    import mlknn.neighbors._exact._loo as loo
    from mlknn.neighbors._exact import _compiled

    monkeypatch.setattr(_compiled, "kernels", lambda: None)  # the numpy path's pool
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
def small_tiles(monkeypatch):
    """Tiles of a few dozen points (ragged at every edge) for the compiled tiled path."""
    monkeypatch.setattr(loo_mod, "TILE_ROWS", 37)
    monkeypatch.setattr(loo_mod, "TILE_COLS", 53)


@pytest.fixture
def tiled_spy(monkeypatch):
    """Records whether the compiled tiled path answered (False: the numpy path ran)."""
    answered = []
    real = loo_mod._tiled_candidates

    def wrapped(*args):
        out = real(*args)
        answered.append(True)
        return out

    monkeypatch.setattr(loo_mod, "_tiled_candidates", wrapped)
    return answered


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n_jobs", [1, 2])
@pytest.mark.parametrize("k", [1, 6, 32])
def test_tiled_path_on_ragged_tiles_equals_plain_and_loop(spy, small_tiles, tiled_spy, monkeypatch, dtype, n_jobs, k):
    pytest.importorskip("numba")
    monkeypatch.setattr(index_mod, "PARALLEL_MIN_WORK", 0)
    rng = np.random.default_rng(k + n_jobs)
    for X in (rng.standard_normal((611, 7)).astype(dtype), tie_heavy(rng, 480).astype(dtype)):
        sym, plain = both_paths(X, k, working_memory=0.1, n_jobs=n_jobs)
        assert_same(sym, plain)
        if dtype is np.float64:  # the plain path meets the oracle on every shape elsewhere
            want = loop_knn(X, None, k, loo=True)
            np.testing.assert_array_equal(sym[1], want[1])
    assert tiled_spy and spy[-1][2] == n_jobs


def test_tiled_path_puts_off_busy_column_blocks(spy, small_tiles, tiled_spy, monkeypatch):
    # Every column block is busy at the first try: each strip puts all its blocks
    # off and reads them after, still each tile once; one and two workers.
    pytest.importorskip("numba")
    import threading
    import types

    monkeypatch.setattr(index_mod, "PARALLEL_MIN_WORK", 0)
    refused = []

    class BusyOnce:
        def __init__(self):
            self.lock, self.tried = threading.Lock(), False

        def acquire(self, blocking=True):
            if not blocking and not self.tried:
                self.tried = True
                refused.append(1)
                return False
            return self.lock.acquire(blocking)

        def release(self):
            self.lock.release()

        def __enter__(self):
            self.lock.acquire()

        def __exit__(self, *exc):
            self.lock.release()

    # The module's locks only (its column-block locks among them).
    monkeypatch.setattr(loo_mod, "threading", types.SimpleNamespace(Lock=BusyOnce, local=threading.local))
    rng = np.random.default_rng(8)
    for n_jobs in (1, 2):
        refused.clear()
        X = tie_heavy(rng, 400).astype(np.float32)
        assert_same(*both_paths(X, 6, working_memory=0.1, n_jobs=n_jobs))
        assert refused
    assert len(tiled_spy) == 2


@pytest.mark.parametrize("per_group", [2, 3, 7])
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_tiled_path_with_groups_of_strips_equals_plain_and_loop(spy, small_tiles, tiled_spy, monkeypatch,
                                                                per_group, n_jobs):
    # Workers take several strips at a time and read each column tile for all of them
    # (a ragged last group, column tiles that start inside the group); the answer is
    # the plain path's bit for bit, with and without busy column blocks.
    pytest.importorskip("numba")
    monkeypatch.setattr(index_mod, "PARALLEL_MIN_WORK", 0)
    monkeypatch.setattr(loo_mod, "_strips_per_group", lambda n_strips, workers: per_group)
    rng = np.random.default_rng(per_group + 10 * n_jobs)
    for X in (rng.standard_normal((611, 7)).astype(np.float32), tie_heavy(rng, 480).astype(np.float32)):
        sym, plain = both_paths(X, 6, working_memory=0.1, n_jobs=n_jobs)
        assert_same(sym, plain)
        np.testing.assert_array_equal(sym[1], loop_knn(X.astype(np.float64), None, 6, loo=True)[1])
    assert len(tiled_spy) == 2 and spy[-1][2] == n_jobs


def test_strips_per_group_grows_with_the_strips_and_keeps_workers_busy():
    group = loo_mod._strips_per_group
    assert group(10, 2) == 1  # small problems: one strip at a time, as before
    assert group(79, 2) == 2  # n = 50,000: enough groups to share between two workers
    assert group(469, 2) == 14  # n = 300,000
    assert group(1563, 2) == loo_mod.STRIPS_PER_GROUP  # n = 10^6
    for n_strips in (1, 40, 79, 469, 1563):
        for workers in (1, 2, 4):
            per_group = group(n_strips, workers)
            assert 1 <= per_group <= loo_mod.STRIPS_PER_GROUP
            assert per_group == 1 or -(-n_strips // per_group) >= 16 * workers


def test_tiled_path_k_equal_to_n_minus_one_and_one_point_strips(spy, small_tiles, tiled_spy, monkeypatch):
    # Every other point a neighbour; then strips of one point (a diagonal tile of
    # one key, +inf) and tiles of one column.
    pytest.importorskip("numba")
    X = np.random.default_rng(2).standard_normal((150, 3))
    assert_same(*both_paths(X, 149, working_memory=0.01))
    monkeypatch.setattr(loo_mod, "TILE_ROWS", 1)
    monkeypatch.setattr(loo_mod, "TILE_COLS", 1)
    assert_same(*both_paths(tie_heavy(np.random.default_rng(3), 60), 4, working_memory=0.001))
    assert len(tiled_spy) == 2


def test_tiled_path_with_small_output_buffers_and_pruning(spy, small_tiles, tiled_spy, monkeypatch):
    # Buffers that fill in the middle of a tile (the kernel stops at a row and is
    # called again from there) and a pool pruned at every chance.
    pytest.importorskip("numba")
    monkeypatch.setattr(loo_mod, "_ROOM_ROWS", 1)
    monkeypatch.setattr(loo_mod, "_PRUNE_MIN", 0)
    monkeypatch.setattr(loo_mod, "_PRUNE_PER_KEY", 0)
    pruned = []
    real = loo_mod._Pool.prune
    monkeypatch.setattr(loo_mod._Pool, "prune", lambda self, part: pruned.append(1) or real(self, part))
    rng = np.random.default_rng(6)
    for X, k in ((rng.standard_normal((700, 9)), 8), (tie_heavy(rng, 500), 5)):
        assert_same(*both_paths(X, k, working_memory=0.1))
    assert len(tiled_spy) == 2 and len(pruned) > 10


def test_the_numpy_path_without_numba_and_after_a_kernel_failure(spy, tiled_spy, monkeypatch):
    from mlknn.neighbors._exact import _compiled

    X = tie_heavy(np.random.default_rng(3), 700)
    real = _compiled.kernels()
    monkeypatch.setattr(_compiled, "kernels", lambda: None)
    assert_same(*both_paths(X, 5, working_memory=0.1))
    assert not tiled_spy
    if real is None:
        pytest.skip("numba is not installed")

    class Failing:  # the real kernels, but the symmetric path's first one fails
        def loo_diagonal(self, *args):
            raise RuntimeError("a numba failure at run time")

        def __getattr__(self, name):
            return getattr(real, name)

    disabled = []
    monkeypatch.setattr(_compiled, "kernels", lambda: Failing())
    monkeypatch.setattr(_compiled, "disable", disabled.append)
    sym = BruteNeighbors(working_memory=0.1, n_jobs=1).fit(X).kneighbors(None, 5)
    monkeypatch.undo()
    index = BruteNeighbors(working_memory=0.1, n_jobs=1).fit(X)
    index._index.allow_symmetric_loo = False
    assert_same(sym, index.kneighbors(None, 5))
    assert [str(e) for e in disabled] == ["a numba failure at run time"]


def _state(rng, n_states, n, k, finite):
    """Running states as the tiled path keeps them: per state and point the k smallest
    keys so far, ascending (+inf where fewer)."""
    best = np.full((n_states, n, k), np.inf, dtype=np.float32)
    for s in range(n_states):
        for r in range(n):
            if rng.random() < finite:
                best[s, r] = np.sort(rng.integers(0, 6, k).astype(np.float32))
    return best


def _threshold_now(best, r, band):
    c = float(best[:, r, -1].min())
    t = c + band[r] + 1e-300
    big = np.finfo(np.float32).max
    return np.float32(t) if t < big else np.float32(big)


def test_loo_tile_kernel_against_its_definition():
    # The kernel alone on a tie-heavy tile: every entry at or under its row's (or
    # column's) final threshold is emitted, none above the threshold it had at the
    # start, each state is the k smallest of what it held and was offered, and
    # output buffers that fill mid-tile give the same result in several calls.
    nk = pytest.importorskip("mlknn.neighbors._exact._numba_loo")
    rng = np.random.default_rng(5)
    n, k, a, b = 140, 4, 3, 40
    V = rng.integers(0, 6, size=(21, 97)).astype(np.float32)
    band = np.full(n, 0.25)
    best0 = _state(rng, 3, n, k, finite=0.6)
    start = {r: _threshold_now(best0, r, band) for r in range(n)}
    best = best0.copy()
    pairs, keys = np.empty(4000, np.int64), np.empty(4000, np.float32)
    first, count = nk.loo_tile(V, a, b, 2, best, band, np.empty(97, np.float32), pairs, keys, 0, 0)
    assert first == 21
    got = {(int(p >> 32), int(p & 0xFFFFFFFF)): float(v) for p, v in zip(pairs[:count], keys[:count])}
    assert len(got) == count
    for i in range(21):
        for j in range(97):
            r, c = a + i, b + j
            v = V[i, j]
            for row, col in ((r, c), (c, r)):
                if v <= _threshold_now(best, row, band):
                    assert got.get((row, col)) == v
                if (row, col) in got:
                    assert v <= start[row]
    for s, owner in ((0, range(a, a + 21)), (2, range(b, b + 97))):
        for r in owner:
            offered = [v for (row, col), v in got.items() if row == r]
            want = np.sort(np.concatenate([best0[s, r], np.array(offered, np.float32)]))[:k]
            np.testing.assert_array_equal(best[s, r], want)
    np.testing.assert_array_equal(best[1], best0[1])  # another worker's state: read only
    # The same tile with room for two rows at a time.
    best2 = best0.copy()
    small_p, small_k = np.empty(2 * 2 * 97, np.int64), np.empty(2 * 2 * 97, np.float32)
    out_p, out_k, first, calls = [], [], 0, 0
    while first < 21:
        first, c2 = nk.loo_tile(V, a, b, 2, best2, band, np.empty(97, np.float32), small_p, small_k, 0, first)
        out_p.append(small_p[:c2].copy())
        out_k.append(small_k[:c2].copy())
        calls += 1
    assert calls > 5
    np.testing.assert_array_equal(np.concatenate(out_p), pairs[:count])
    np.testing.assert_array_equal(np.concatenate(out_k), keys[:count])
    np.testing.assert_array_equal(best2, best)


def test_loo_diagonal_kernel_against_its_definition():
    nk = pytest.importorskip("mlknn.neighbors._exact._numba_loo")
    rng = np.random.default_rng(7)
    n, k, a = 60, 5, 11
    for m, group in ((30, 2), (30, 1), (23, 3), (4, 1), (1, 1)):  # fewer than k others: every key passes
        V = rng.integers(0, 6, size=(m, m)).astype(np.float32)
        band = np.full(n, 0.5)
        best = np.full((2, n, k), np.inf, np.float32)
        pairs, keys = np.empty(m * m, np.int64), np.empty(m * m, np.float32)
        count = nk.loo_diagonal(V.copy(), a, group, best, band, pairs, keys)
        got = sorted(zip((pairs[:count] >> 32).tolist(), (pairs[:count] & 0xFFFFFFFF).tolist(), keys[:count].tolist()))
        want = []
        n_groups = m // group
        for i in range(m):
            row = V[i].copy()
            row[i] = np.inf
            minima = row[: n_groups * group].reshape(group, n_groups).min(axis=0)
            pool = np.concatenate((minima, row[n_groups * group :]))
            kth = np.sort(pool)[k - 1] if pool.size >= k else np.inf
            thr = np.float32(min(float(kth) + 0.5 + 1e-300, np.finfo(np.float32).max))
            want += [(a + i, a + j, float(V[i, j])) for j in range(m) if j != i and V[i, j] <= thr]
            low = np.sort(np.concatenate([np.delete(V[i], i), np.full(k, np.inf, np.float32)]))[:k]
            np.testing.assert_array_equal(best[0, a + i], low)  # the row's k smallest
        assert got == sorted(want)
        assert np.all(best[1] == np.inf)


def test_passing_mask_and_lowest_bit_against_their_definitions():
    simd = pytest.importorskip("mlknn.neighbors._exact._numba_simd")
    from numba import njit

    @njit
    def masks(keys, thr_keys, thr):
        out = np.empty(keys.shape[0] - simd.MASK_WIDTH + 1, dtype=np.int64)
        for s in range(out.shape[0]):  # every offset, aligned or not
            out[s] = simd.passing_mask(keys, thr_keys, s, thr)
        return out

    @njit
    def bits(mask):
        out = []
        while mask != 0:
            out.append(simd.lowest_bit(mask))
            mask &= mask - 1
        return out

    rng = np.random.default_rng(11)
    keys = rng.integers(0, 5, 70).astype(np.float32)
    keys[[3, 40]] = np.nan  # never passes
    keys[7] = -np.inf
    thr_keys = rng.integers(0, 5, 70).astype(np.float32)
    for thr in (np.float32(-1), np.float32(2), np.float32(np.inf)):
        got = masks(keys, thr_keys, thr)
        for s, mask in enumerate(got):
            want = [j for j in range(simd.MASK_WIDTH) if keys[s + j] <= max(thr_keys[s + j], thr)]
            assert int(mask) == sum(1 << j for j in want)
            assert bits(mask) == want


def test_loo_compact_and_loo_rerank_against_their_definitions():
    # A pool of (row, column, key) entries in no order, keys with ties: the
    # compaction keeps, in order, exactly the entries at or under their row's
    # threshold; the re-ranking of a range of rows keeps, per row, the columns
    # within the band of its k-th pooled key and answers as exact_sqdist +
    # topk_sorted on them (any range, any order of the entries).
    nk = pytest.importorskip("mlknn.neighbors._exact._numba_loo")
    from mlknn.neighbors._exact._kernel import exact_sqdist, topk_sorted

    rng = np.random.default_rng(13)
    n, k = 90, 4
    X = tie_heavy(rng, n, d=5)
    rows = np.repeat(np.arange(n), 12)
    cols = rng.integers(0, n, rows.size)
    keep = cols != rows
    rows, cols = rows[keep], cols[keep]
    _, first = np.unique(rows * n + cols, return_index=True)  # each pair once
    rows, cols = rows[first], cols[first]
    order = rng.permutation(rows.size)
    rows, cols = rows[order], cols[order]
    keys = rng.integers(0, 8, rows.size).astype(np.float32)
    pairs = (rows.astype(np.int64) << 32) | cols
    thr = rng.integers(3, 9, n).astype(np.float32)
    p2, k2 = pairs.copy(), keys.copy()
    m = nk.loo_compact(p2, k2, thr)
    ok = keys <= thr[rows]
    np.testing.assert_array_equal(p2[:m], pairs[ok])
    np.testing.assert_array_equal(k2[:m], keys[ok])

    band = np.full(n, 1.5)
    want_d = np.empty((n, k))
    want_i = np.empty((n, k), np.intp)
    for r in range(n):
        mine = rows == r
        kth = np.sort(keys[mine])[k - 1]
        c = cols[mine][keys[mine] <= np.float32(kth + 1.5)]
        d = exact_sqdist(X, X, np.full(c.size, r), c)
        want_d[r], want_i[r] = (a[0] for a in topk_sorted(np.zeros(c.size, np.intp), c, d, k, 1))
    for lo, hi in ((0, n), (0, 1), (17, 60), (89, 90)):
        got_d = np.full((n, k), -1.0)
        got_i = np.full((n, k), -1, np.intp)
        fewest = nk.loo_rerank(pairs, keys, band, lo, hi, X, X, got_d, got_i)
        assert fewest == min(np.bincount(rows, minlength=n)[lo:hi])
        np.testing.assert_array_equal(got_d[lo:hi], want_d[lo:hi])
        np.testing.assert_array_equal(got_i[lo:hi], want_i[lo:hi])
        assert np.all(got_i[:lo] == -1) and np.all(got_i[hi:] == -1)
    # A row with fewer than k pooled pairs: reported, nothing written.
    short = rows != 5
    assert nk.loo_rerank(pairs[short], keys[short], band, 0, n, X, X, np.empty((n, k)), np.empty((n, k), np.intp)) == (
        np.bincount(rows[short], minlength=n).min())
