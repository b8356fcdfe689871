import os
from pathlib import Path

# numba (pynndescent's JIT) caches compiled code beside the sources, inside the virtual
# environment, so a fresh venv (CI recreates it) recompiled for about 7 minutes. A cache
# folder outside the venv survives it: numba keys the cache by the source's hash and
# folder, so a reinstall of the same version reuses it. Set before numba is imported (no
# test module is collected before this file); an explicit NUMBA_CACHE_DIR wins.
os.environ.setdefault("NUMBA_CACHE_DIR", str(Path.home() / ".cache" / "mlknn-numba"))

import numpy as np  # noqa: E402
import pytest  # noqa: E402


@pytest.fixture
def small_problem():
    """A small dense multi-label problem with distinct points (no distance ties)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 6))
    W = rng.normal(size=(6, 4))
    Y = (X @ W + 0.3 * rng.normal(size=(80, 4)) > 0.4).astype(np.uint8)
    return X, Y


def data_home():
    """The benchmark-data folder, or None when MLKNN_DATA is unset."""
    path = os.environ.get("MLKNN_DATA")
    return Path(path) if path else None


@pytest.fixture
def data_dir():
    path = data_home()
    if path is None:
        pytest.skip("MLKNN_DATA is not set (CI always sets it)")
    return path
