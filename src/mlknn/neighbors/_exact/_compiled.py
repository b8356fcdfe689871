"""The compiled selection of the exact kernel, where numba is installed; else nothing.

``_kernel`` asks :func:`kernels` for the compiled steps 2-3
(``_numba_kernels.py``, ``_numba_loo.py``, ``_numba_sparse.py``) and keeps its numpy path when the answer is None: numba
missing or failing to import, ``MLKNN_NUMBA=0`` in the environment, or the module
flag ``ENABLED`` set to False (the tests run both paths). numba is imported on the
first search that needs it, never at ``import mlknn``. Both paths give the same
neighbours and bit for bit the same float64 distances (the compiled sum follows
numpy's pairwise order; ``tests/test_compiled_kernel.py``).

Threads: the compiled functions release the GIL, and a chunk's rows are split into
ranges of at least ``MIN_ROWS_PER_THREAD`` rows, one per thread, on the
process-wide pool of :mod:`mlknn.utils._threads`.
"""

import importlib
import importlib.util
import os
import threading
import warnings
from types import ModuleType
from typing import Any

import numpy as np

from ...utils._threads import run_ranges
from ...utils._typing import NDArray

#: False: always the numpy path (the tests set it; ``MLKNN_NUMBA=0`` sets it at import).
ENABLED = os.environ.get("MLKNN_NUMBA", "1") != "0"

# Below this many rows per thread the pool's hand-off costs more than it saves.
MIN_ROWS_PER_THREAD = 256

#: The widest search the compiled selection takes; wider ones keep the numpy path.
#: Its k-th smallest and its top k insert into sorted buffers of k entries (cheap for
#: small k, O(k) per insertion): it beats numpy up to a few tens of neighbours and
#: loses beyond, where the hubness reductions' candidate lists (>= 100 wide) are.
MAX_NEIGHBORS = 32

_lock = threading.Lock()
_module: ModuleType | None = None
_tried = False


def _fresh_lock() -> None:
    """A forked child gets a fresh lock: a thread of the parent may have held it."""
    global _lock
    _lock = threading.Lock()


os.register_at_fork(after_in_child=_fresh_lock)


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
    below). ``rtol``: the relative band of ``_kernel.GEMM_RTOL``.
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
    at least 4k groups. Twice ``_kernel.group_size``'s: the compiled scan of a
    passing group's members is cheap, the k-th smallest of the group minima is not
    (yeast, n = 1,208, k = 10: 15 instead of 7, a fifth less time)."""
    return max(1, min(32, n_fit // (4 * k), int(np.sqrt(2.0 * n_fit / k))))




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
    parts = max(1, min(threads, n_rows // MIN_ROWS_PER_THREAD))

    def rows(a: int, b: int) -> None:
        mod.select_rows(V, Q, X, scale, rtol, offset, k, group, every, a, b, dist, ind)

    run_ranges(rows, np.linspace(0, n_rows, parts + 1).astype(int).tolist())
    return dist, ind
