import os
from pathlib import Path

# numba (pynndescent's JIT) caches compiled code beside the sources, inside the virtual
# environment, so a fresh venv (CI recreates it) recompiled for about 7 minutes. A cache
# folder outside the venv survives it: numba keys the cache by the source's hash and
# folder, so a reinstall of the same version reuses it. Set before numba is imported (no
# test module is collected before this file); an explicit NUMBA_CACHE_DIR wins.
os.environ.setdefault("NUMBA_CACHE_DIR", str(Path.home() / ".cache" / "mlknn-numba"))

from collections import Counter  # noqa: E402

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


def _skip_reason(report):
    # A skip's longrepr is (path, line, "Skipped: reason"); a skipif's reason has no prefix.
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return reason.removeprefix("Skipped: ")


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """One line per skip reason with its count, instead of one line per skipped test."""
    skipped = terminalreporter.stats.get("skipped", [])
    if not skipped:
        return
    counts = Counter(_skip_reason(report) for report in skipped)
    terminalreporter.section(f"{len(skipped)} skipped, by reason")
    for reason, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        terminalreporter.write_line(f"{count:5d}  {reason}")
