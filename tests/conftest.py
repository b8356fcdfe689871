import os
from pathlib import Path

import numpy as np
import pytest


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
