"""The process-wide thread runtime of mlknn's compiled passes.

The exact search (``mlknn.neighbors``) and the fused logistic passes
(``mlknn.algorithms``) both split their work over threads: compiled functions that
release the GIL, each thread on its own range of rows, with the process's BLAS held
to one thread meanwhile. This module owns what they share:

* one persistent pool of Python threads (:func:`submit`, :func:`run_ranges`,
  :func:`run_items`, :func:`map_chunks`), so that no pool is started per call: a
  small search is over in about the time a pool takes to start;
* the rule that turns ``n_jobs`` into a number of threads (:func:`resolve_n_jobs`,
  :func:`threads_for`), read from one cached ``threadpoolctl`` controller;
* one shared single-thread BLAS limit for overlapping callers
  (:func:`blas_single_threaded`);
* the steering of the pool's threads off the caller's CPU (``_steer_workers``).

numba's own ``parallel=True`` is not used: with its default workqueue layer, two
threads launching a parallel kernel at once abort the process, and estimators run
in threads (joblib) are common.
"""

import contextlib
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None
_pool_size = 0
_blas: Any = None


def resolve_n_jobs(n_jobs: int | None) -> int:
    """Threads a backend uses for ``n_jobs``; the same rule on every backend.

    ``None``: as many as the process's BLAS thread pool holds (so a caller's
    ``threadpoolctl.threadpool_limits`` is respected; usually all cores); ``-1``
    (any negative value): all cores; ``n >= 1``: n threads.

    Parameters
    ----------
    n_jobs : int or None
        The ``n_jobs`` parameter of a backend.

    Returns
    -------
    int
        The number of threads, >= 1.

    See Also
    --------
    BruteNeighbors : Its ``n_jobs`` follows this rule, as every backend's does.

    Examples
    --------
    >>> from mlknn.neighbors import resolve_n_jobs
    >>> resolve_n_jobs(2), resolve_n_jobs(None) >= 1
    (2, True)
    """
    if n_jobs is None:
        from threadpoolctl import threadpool_info

        blas = [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]
        return max(1, min(blas) if blas else (os.cpu_count() or 1))
    if n_jobs < 0:
        return os.cpu_count() or 1
    return max(1, int(n_jobs))


def threads_for(n_jobs: int | None) -> int:
    """Threads of the compiled selection for a backend's ``n_jobs``: the rule of
    ``resolve_n_jobs`` (None: the BLAS pool's size, so that ``threadpool_limits``
    holds), read from one cached ``ThreadpoolController`` (``threadpool_info`` scans
    the loaded libraries on every call, as costly as the selection of a small problem)."""
    if n_jobs is not None:
        return resolve_n_jobs(n_jobs)
    counts = [lib.num_threads for lib in _blas_controller().lib_controllers]
    return max(1, min(counts) if counts else (os.cpu_count() or 1))


def _blas_controller() -> Any:
    """The process's BLAS libraries as one cached ``ThreadpoolController`` selection."""
    global _blas
    if _blas is None:
        from threadpoolctl import ThreadpoolController

        _blas = ThreadpoolController().select(user_api="blas")
    return _blas


def run_ranges(fn: Callable[[int, int], object], edges: Sequence[int]) -> None:
    """``fn(a, b)`` for every range ``edges[p]..edges[p + 1]``: the first on the calling
    thread, the others on the process-wide pool (``_executor``); the first error
    raised is raised here, after every range has ended."""
    ranges = [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:])]
    if len(ranges) == 1:
        fn(*ranges[0])
        return
    futures = submit(fn, ranges[1:])
    try:
        fn(*ranges[0])
    finally:
        errors = [f.exception() for f in futures]
    for err in errors:
        if err is not None:
            raise err


def run_items(fn: Callable[[Any], object], items: Sequence[Any], workers: int) -> None:
    """``fn(item)`` for every item, on ``workers`` threads that each take the next item.

    The calling thread and ``workers - 1`` threads of the process-wide pool
    (``_executor``): no pool is started per call (as costly as a small search's
    selection). A caller whose pool threads are busy with another
    caller's items drains its own items itself, so two searches at once never wait
    on each other. The first error raised is raised here, after every thread has
    stopped taking items.
    """
    todo = iter(items)
    take = threading.Lock()
    failed: list[BaseException] = []

    def drain() -> None:
        while not failed:
            with take:
                item = next(todo, _DONE)
            if item is _DONE:
                return
            try:
                fn(item)
            except BaseException as exc:  # noqa: BLE001 - re-raised by the caller
                failed.append(exc)

    futures = submit(drain, [()] * (workers - 1))
    try:
        drain()
    finally:
        for f in futures:
            f.result()
    if failed:
        raise failed[0]


_DONE = object()


@contextlib.contextmanager
def blas_single_threaded() -> Iterator[None]:
    """A context in which the process's BLAS runs on the calling thread only.

    The limit is the cached ``_blas_controller``'s (``threadpool_limits`` would scan
    the loaded libraries on every call) and is shared: the first of
    several overlapping callers (searches run from several threads) sets it and the
    last one out restores the BLAS's own thread count. With one limiter each, a
    caller that entered second would restore the 1 that the first had set, and the
    BLAS would stay single-threaded for the rest of the process.
    """
    global _limit_depth, _limiter
    with _limit_lock:
        if _limit_depth == 0:
            _limiter = _blas_controller().limit(limits=1)
        _limit_depth += 1
    try:
        yield
    finally:
        with _limit_lock:
            _limit_depth -= 1
            if _limit_depth == 0 and _limiter is not None:
                _limiter.restore_original_limits()
                _limiter = None


_limit_lock = threading.Lock()
_limit_depth = 0
_limiter: Any = None


def _executor(threads: int) -> ThreadPoolExecutor:
    """A process-wide pool of at least ``threads`` threads (kept between calls).

    A pool that is outgrown is dropped, not shut down (another caller may still be
    submitting to it; its idle threads end with the process). A forked child gets
    a fresh pool: the parent's threads do not exist there (``_forget_pool``).
    """
    global _pool, _pool_size
    with _lock:
        if _pool is None or _pool_size < threads:
            size = max(threads, os.cpu_count() or 1)
            ids: list[int] = []
            _pool = ThreadPoolExecutor(size, thread_name_prefix="mlknn-select", initializer=_record_worker,
                                       initargs=(ids,))
            _pool_size = size
            _worker_ids[id(_pool)] = ids
        return _pool


def submit(fn: Callable[..., object], calls: Sequence[tuple[Any, ...]]) -> list[Future[Any]]:
    """``fn(*args)`` for each ``args`` of ``calls`` on the process-wide pool; their futures.

    The pool's threads are first steered off the caller's CPU (``_steer_workers``)
    and keep that CPU set while they run: a task given the caller's whole set back
    as it starts drifts back onto the caller's CPU, and the two then share one
    core (docs/performance.md, "Figures behind the source's constants").
    """
    if not calls:
        return []
    pool = _executor(len(calls))
    _steer_workers(pool)
    return [pool.submit(fn, *args) for args in calls]


def _record_worker(ids: list[int]) -> None:
    ids.append(threading.get_native_id())


#: The native thread ids of each pool's threads (``_record_worker``), by ``id(pool)``.
_worker_ids: dict[int, list[int]] = {}

#: False: the pool's threads are never steered off the caller's CPU
#: (``MLKNN_STEER_THREADS=0`` sets it at import).
STEER_THREADS = os.environ.get("MLKNN_STEER_THREADS", "1") != "0"
_getcpu: Any = None


def _caller_cpu() -> int:
    """The CPU the calling thread runs on (glibc's ``sched_getcpu``), or -1."""
    global _getcpu
    if _getcpu is None:
        try:
            import ctypes

            fn = ctypes.CDLL(None).sched_getcpu
            fn.restype, fn.argtypes = ctypes.c_int, []
            _getcpu = fn
        except (OSError, AttributeError):  # not Linux / glibc
            _getcpu = False
    return int(_getcpu()) if _getcpu else -1


def _steer_workers(pool: ThreadPoolExecutor) -> None:
    """Let the pool's threads run on every CPU of the caller's set but the caller's own.

    A search of a few milliseconds hands half its rows to a pool thread that was
    asleep. On a virtual machine the kernel sees the other, idle vCPU as preempted
    and wakes the thread on the caller's CPU, where the two share one core until
    the load balancer parts them, tens of milliseconds later: the first calls
    after every pause are then markedly slower (docs/performance.md, "Figures
    behind the source's constants"). With the caller's CPU taken out of
    the threads' affinity before they wake, they start on the other CPU. A no-op
    where the caller may run on one CPU only, off Linux, or with
    ``MLKNN_STEER_THREADS=0``; each hand-off costs one system call per thread.
    """
    ids = _worker_ids.get(id(pool))
    if not STEER_THREADS or not ids or not hasattr(os, "sched_setaffinity"):
        return
    cpu = _caller_cpu()
    try:
        allowed = os.sched_getaffinity(0)
    except OSError:
        return
    if cpu < 0 or cpu not in allowed or len(allowed) < 2:
        return
    mask = allowed - {cpu}
    for tid in list(ids):
        try:
            os.sched_setaffinity(tid, mask)
        except OSError:  # the thread has ended, or the set is not ours to give
            pass


def _forget_pool() -> None:
    global _pool, _pool_size, _lock
    _pool, _pool_size, _lock = None, 0, threading.Lock()
    _worker_ids.clear()


os.register_at_fork(after_in_child=_forget_pool)


def map_chunks(work: Callable[[int], object], starts: Sequence[int], workers: int) -> None:
    """``work(start)`` for every chunk start, on ``workers`` threads.

    Chunks in parallel, each with single-threaded BLAS: the selection and exact
    steps (numpy or compiled, GIL released) then run on every core too, instead of
    idling all cores but one between two matrix products. The threads are the
    process-wide pool's (:func:`run_items`), the BLAS limit the cached
    controller's: no per-call start-up cost for small searches.
    """
    if workers == 1 or len(starts) <= 1:
        for start in starts:
            work(start)
        return
    with blas_single_threaded():
        run_items(work, starts, workers)
