"""How small dense searches use the cores (issue 16): one chunk per thread, the
process-wide pool's ``run_items``, and the steering of its threads off the caller's CPU.

Answers are compared bit for bit with the one-thread path; the hand-off's own
guarantees (every item once, errors raised in the caller, concurrent callers, the
affinity it sets) are checked directly.
"""

import os
import threading

import numpy as np
import pytest
from test_exact_loo import assert_same

import mlknn.neighbors._exact._compiled as compiled
import mlknn.neighbors._exact._index as index_mod
import mlknn.utils._threads as runtime
from mlknn.neighbors import BruteNeighbors

needs_numba = pytest.mark.skipif(compiled.kernels() is None, reason="numba missing or MLKNN_NUMBA=0")


@pytest.fixture
def map_spy(monkeypatch):
    calls = []
    real = index_mod.map_chunks

    def wrapped(work, starts, workers):
        calls.append((list(starts), workers))
        return real(work, starts, workers)

    monkeypatch.setattr(index_mod, "map_chunks", wrapped)
    return calls


@needs_numba
@pytest.mark.parametrize("n_jobs", [2, 3])
def test_a_small_search_splits_into_one_chunk_per_thread_with_the_same_answer(map_spy, n_jobs):
    rng = np.random.default_rng(n_jobs)
    X = rng.integers(0, 3, size=(1300, 6)).astype(np.float64)  # ties and duplicates
    Q = rng.integers(0, 3, size=(900, 6)).astype(np.float64)
    want = BruteNeighbors(n_jobs=1).fit(X)
    want_loo, want_q = want.kneighbors(None, 9), want.kneighbors(Q, 9)
    assert all(workers == 1 for _, workers in map_spy)  # n_jobs=1: one chunk, no split
    map_spy.clear()
    index = BruteNeighbors(n_jobs=n_jobs).fit(X)
    assert_same(index.kneighbors(None, 9), want_loo)
    assert_same(index.kneighbors(Q, 9), want_q)
    (loo_starts, loo_workers), (q_starts, q_workers) = map_spy
    assert loo_workers == q_workers == n_jobs
    assert len(loo_starts) == n_jobs and len(q_starts) == n_jobs  # one chunk per thread


@needs_numba
def test_no_split_under_the_rows_per_thread_minimum_or_without_numba(map_spy, monkeypatch):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((2 * compiled.MIN_ROWS_PER_THREAD - 1, 5))
    BruteNeighbors(n_jobs=2).fit(X).kneighbors(None, 4)
    monkeypatch.setattr(compiled, "ENABLED", False)
    BruteNeighbors(n_jobs=2).fit(rng.standard_normal((1500, 5))).kneighbors(None, 4)
    assert [workers for _, workers in map_spy] == [1, 1]


def test_run_items_does_every_item_once_on_several_threads():
    seen, threads = [], set()
    lock = threading.Lock()

    def fn(item):
        with lock:
            seen.append(item)
            threads.add(threading.get_ident())

    runtime.run_items(fn, range(200), 3)
    assert sorted(seen) == list(range(200))
    runtime.run_items(fn, [], 3)  # nothing to do
    seen.clear()
    runtime.run_items(fn, range(5), 1)  # one worker: the caller alone, in order
    assert seen == list(range(5))


def test_run_items_raises_the_first_error_after_every_thread_stops():
    done = []

    def fn(item):
        if item == 3:
            raise ValueError("item 3")
        done.append(item)

    with pytest.raises(ValueError, match="item 3"):
        runtime.run_items(fn, range(50), 2)
    assert 3 not in done


def test_concurrent_callers_each_get_all_their_items():
    results = {}

    def caller(name):
        got = []
        lock = threading.Lock()

        def fn(item):
            with lock:
                got.append(item)

        runtime.run_items(fn, range(300), 2)
        results[name] = sorted(got)

    callers = [threading.Thread(target=caller, args=(i,)) for i in range(4)]
    for t in callers:
        t.start()
    for t in callers:
        t.join()
    assert results == {i: list(range(300)) for i in range(4)}


linux_two_cpus = pytest.mark.skipif(
    not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2 or runtime._caller_cpu() < 0,
    reason="needs Linux's affinity calls, glibc's sched_getcpu and two CPUs",
)


@linux_two_cpus
def test_the_pool_threads_are_steered_off_the_callers_cpu():
    pool = runtime._executor(1)
    pool.submit(lambda: None).result()  # the thread exists and has recorded its id
    allowed = os.sched_getaffinity(0)
    for _ in range(5):
        cpu = runtime._caller_cpu()
        runtime._steer_workers(pool)
        masks = {tid: os.sched_getaffinity(tid) for tid in runtime._worker_ids[id(pool)]}
        # The caller may have moved between reading its CPU and steering: read it again.
        if runtime._caller_cpu() == cpu:
            assert masks and all(mask == allowed - {cpu} for mask in masks.values())
            break
    else:
        pytest.fail("the caller kept moving between CPUs")


@pytest.fixture
def unsteered_pool():
    """The pool, its thread ids, and the caller's CPU set, every thread allowed all of it."""
    pool = runtime._executor(1)
    pool.submit(lambda: None).result()
    ids = runtime._worker_ids[id(pool)]
    allowed = os.sched_getaffinity(0)
    for tid in ids:
        os.sched_setaffinity(tid, allowed)
    return pool, ids, allowed


@linux_two_cpus
def test_steering_off_leaves_the_threads_alone(monkeypatch, unsteered_pool):
    pool, ids, allowed = unsteered_pool
    monkeypatch.setattr(runtime, "STEER_THREADS", False)
    runtime._steer_workers(pool)
    assert all(os.sched_getaffinity(tid) == allowed for tid in ids)


@linux_two_cpus
def test_a_caller_confined_to_one_cpu_is_not_steered(monkeypatch, unsteered_pool):
    pool, ids, allowed = unsteered_pool
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {runtime._caller_cpu()})
    runtime._steer_workers(pool)
    monkeypatch.undo()
    assert all(os.sched_getaffinity(tid) == allowed for tid in ids)  # nothing else to run on


def test_submit_returns_one_future_per_call():
    futures = runtime.submit(lambda a, b: a * b, [(2, 3), (4, 5)])
    assert [f.result() for f in futures] == [6, 20]
    assert runtime.submit(len, []) == []


def test_overlapping_single_thread_limits_restore_the_blas_thread_count():
    # Two searches from two threads, their limits overlapping (A in, B in, A out,
    # B out): the BLAS's own thread count comes back, not the 1 that A had set.
    controller = runtime._blas_controller()
    if not controller.lib_controllers:
        pytest.skip("no BLAS library found by threadpoolctl")
    before = [lib.num_threads for lib in controller.lib_controllers]
    a, b = runtime.blas_single_threaded(), runtime.blas_single_threaded()
    a.__enter__()
    b.__enter__()
    assert all(lib.num_threads == 1 for lib in controller.lib_controllers)
    a.__exit__(None, None, None)
    assert all(lib.num_threads == 1 for lib in controller.lib_controllers)  # B still inside
    b.__exit__(None, None, None)
    assert [lib.num_threads for lib in controller.lib_controllers] == before
