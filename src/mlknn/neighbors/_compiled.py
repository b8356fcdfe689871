"""The compiled selection of the exact kernel, where numba is installed; else nothing.

``_exact_kernel`` asks :func:`kernels` for the compiled steps 2-3
(``_numba_kernels.py``, ``_numba_loo.py``, ``_numba_sparse.py``) and keeps its numpy path when the answer is None: numba
missing or failing to import, ``MLKNN_NUMBA=0`` in the environment, or the module
flag ``ENABLED`` set to False (the tests run both paths). numba is imported on the
first search that needs it, never at ``import mlknn``. Both paths give the same
neighbours and bit for bit the same float64 distances (the compiled sum follows
numpy's pairwise order; ``tests/test_compiled_kernel.py``).

Threads: the compiled functions release the GIL, and a chunk's rows are split into
ranges of at least ``_MIN_ROWS_PER_THREAD`` rows, one per thread: the first on the
calling thread, the others on a persistent pool of Python threads. numba's own
``parallel=True`` is not used: with its default workqueue layer, two threads
launching a parallel kernel at once abort the process, and estimators run in
threads (joblib) are common.
"""

import contextlib
import importlib
import importlib.util
import os
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from types import ModuleType
from typing import Any

import numpy as np

from ..utils._typing import NDArray

#: False: always the numpy path (the tests set it; ``MLKNN_NUMBA=0`` sets it at import).
ENABLED = os.environ.get("MLKNN_NUMBA", "1") != "0"

# Below this many rows per thread the pool's hand-off costs more than it saves.
_MIN_ROWS_PER_THREAD = 256

#: The widest search the compiled selection takes; wider ones keep the numpy path.
#: Its k-th smallest and its top k insert into sorted buffers of k entries (cheap for
#: small k, O(k) per insertion): one thread, n = 4,000, d = 50, leave-one-out, compiled
#: / numpy 0.034 / 0.050 s at k = 10, 0.060 / 0.096 at k = 32, 0.136 / 0.109 at k = 64,
#: 1.33 / 0.37 at k = 300 (the hubness reductions' candidate lists are >= 100 wide).
MAX_NEIGHBORS = 32

_lock = threading.Lock()
_module: ModuleType | None = None
_tried = False
_pool: ThreadPoolExecutor | None = None
_pool_size = 0
_blas: Any = None


#: The modules of compiled kernels: the dense selection (and the helpers the others
#: use), the symmetric leave-one-out path's, sparse data's.
_KERNEL_MODULES = ("_numba_kernels", "_numba_loo", "_numba_sparse")


def _load_kernels() -> ModuleType:
    """One namespace holding every compiled kernel, so that callers ask ``kernels()``
    only (each module is imported here, numba with the first)."""
    combined = ModuleType(f"{__package__}._compiled_kernels", "mlknn's compiled kernels (_compiled.kernels).")
    for name in _KERNEL_MODULES:
        mod = importlib.import_module(f"{__package__}.{name}")
        public = getattr(mod, "__all__", None) or [k for k in vars(mod) if not k.startswith("__")]
        combined.__dict__.update({k: getattr(mod, k) for k in public})
    return combined


def kernels() -> ModuleType | None:
    """The compiled kernels module, or None (numba unavailable or disabled)."""
    global _module, _tried
    if not ENABLED:
        return None
    if not _tried:
        with _lock:
            if not _tried:
                try:
                    _module = _load_kernels()
                except ImportError as exc:  # numba missing, or built for another numpy
                    _module = None
                    if importlib.util.find_spec("numba") is not None:  # installed but broken
                        warnings.warn(
                            f"numba is installed but could not be imported ({exc}); mlknn uses the numpy "
                            "path (same results, slower). Set MLKNN_NUMBA=0 to silence this.",
                            RuntimeWarning,
                            stacklevel=2,
                        )
                except Exception as exc:  # e.g. numba's cache has no writable folder
                    warnings.warn(
                        f"numba is installed but mlknn's compiled kernels could not be loaded "
                        f"({type(exc).__name__}: {exc}); using the numpy path (same results, slower). "
                        "Set MLKNN_NUMBA=0 to silence this.",
                        RuntimeWarning,
                        stacklevel=2,
                    )
                    _module = None
                _tried = True
    return _module


def threads_for(n_jobs: int | None) -> int:
    """Threads of the compiled selection for a backend's ``n_jobs``: the rule of
    ``resolve_n_jobs`` (None: the BLAS pool's size, so that ``threadpool_limits``
    holds), read from one cached ``ThreadpoolController`` (``threadpool_info`` costs
    about 0.3 ms a call, as much as the selection of a small problem)."""
    if n_jobs is not None:
        from ._contract import resolve_n_jobs

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
    (``_executor``): no pool is started per call (about 0.1 ms each, as much as a
    small search's selection). A caller whose pool threads are busy with another
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
    the loaded libraries on every call, about 0.3 ms) and is shared: the first of
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


def keys_out_of_range(scale: NDArray[np.float64], dtype: np.dtype[Any], n_terms: int, rtol: float) -> bool:
    """Whether some ranking key of a chunk may be inf or NaN, or rounded beyond the
    threshold's relative band: then every training point is a candidate of its rows
    (both paths), the only exact answer.

    Overflow: |key| <= |x|^2 / 2 + |q| |x| <= scale (the per-row rounding scale), and
    so is every partial sum of the GEMM's dot products: below the dtype's maximum,
    with room for rounding, no key overflows. Dense float32 keys reach it for data of
    magnitude about 1e19 (distances themselves stay exact in float64).

    Underflow: in the subnormal range rounding is absolute, up to half the smallest
    subnormal per product, so a key of ``n_terms`` products may be off by
    ``n_terms`` such halves, which the band ``rtol * scale`` no longer covers once
    ``scale`` is that small (float32 keys: data of magnitude about 1e-20 and
    below). ``rtol``: the relative band of ``_exact_kernel._GEMM_RTOL``.
    """
    info = np.finfo(dtype)
    if not bool(np.all(scale < 0.03 * float(info.max))):
        return True
    floor = (n_terms + 2) * float(info.smallest_subnormal)
    return bool(scale.size) and float(rtol) * float(np.min(scale)) < floor


def disable(exc: BaseException) -> None:
    """Turn the compiled path off for this process after a failure at run time
    (a corrupt cache file, a full disk while numba saves it, ...), with one warning;
    the caller goes on with the numpy path."""
    global _module, _tried
    with _lock:
        if _module is not None:
            warnings.warn(
                f"mlknn's compiled kernels failed ({type(exc).__name__}: {exc}); using the numpy path "
                "for the rest of this process (same results, slower). Set MLKNN_NUMBA=0 to silence this.",
                RuntimeWarning,
                stacklevel=3,
            )
        _module, _tried = None, True


def group_size(n_fit: int, k: int) -> int:
    """Columns per group of the compiled step 2: about sqrt(2 n / k), at most 32, and
    at least 4k groups. Twice ``_exact_kernel._group_size``'s: the compiled scan of a
    passing group's members is cheap, the k-th smallest of the group minima is not
    (yeast, n = 1,208, k = 10: 15 instead of 7, a fifth less time)."""
    return max(1, min(32, n_fit // (4 * k), int(np.sqrt(2.0 * n_fit / k))))


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

    The pool's threads are first steered off the caller's CPU (``_steer_workers``),
    and keep that CPU set while they run. Tried and dropped: giving a task the
    caller's whole set back as it starts (the thread then drifted back to the
    caller's CPU: yeast's fit + predict after a pause, min / median of 12 rounds,
    8.5 / 9.8 ms, against 6.9 / 7.7 ms kept steered and 7.7 / 9.5 ms not steered).
    The large graphs do not notice it either way (50k leave-one-out: 1.74-1.91 s
    steered, 1.71-1.84 s not, interleaved).
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
    the load balancer parts them, tens of milliseconds later: on the 2-vCPU Intel
    host, MLkNN fit + predict on yeast's 50/50 split took 9-11 ms for the first
    ~5 calls after every pause, then 6.1-6.8 ms. With the caller's CPU taken out of
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


def select(
    mod: ModuleType,
    V: NDArray[np.float32],
    Q: NDArray[Any],
    X: NDArray[Any],
    scale: NDArray[np.float64],
    rtol: float,
    loo_offset: int | None,
    k: int,
    group: int,
    threads: int,
) -> tuple[NDArray[np.float64], NDArray[np.intp]]:
    """Squared distances and indices of the k nearest training points of a chunk.

    ``V`` (rows, n_fit) float32 ranking keys (overwritten at the excluded self
    entries), ``Q`` the chunk's prepared queries (rows, d), ``X`` the prepared
    training points, ``scale`` the per-row rounding scale; ``loo_offset``: row i
    excludes training point ``i + loo_offset``; ``group``: columns per group of
    step 2; ``threads``: at most this many threads.
    """
    n_rows = V.shape[0]
    dist = np.empty((n_rows, k), dtype=np.float64)
    ind = np.empty((n_rows, k), dtype=np.intp)
    offset = -1 if loo_offset is None else int(loo_offset)
    scale = np.ascontiguousarray(scale, dtype=np.float64)
    every = keys_out_of_range(scale, V.dtype, X.shape[1] + 1, rtol)
    parts = max(1, min(threads, n_rows // _MIN_ROWS_PER_THREAD))

    def rows(a: int, b: int) -> None:
        mod.select_rows(V, Q, X, scale, rtol, offset, k, group, every, a, b, dist, ind)

    run_ranges(rows, np.linspace(0, n_rows, parts + 1).astype(int).tolist())
    return dist, ind
