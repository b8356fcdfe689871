"""Shared checks and constants of the statistical tests."""

from collections.abc import Iterable

import numpy as np
from numpy.typing import ArrayLike, NDArray

#: Nemenyi critical values q_alpha (studentized range / sqrt(2)) for k = 2..10
#: algorithms, Demsar (2006), Table 5(a).
Q_ALPHA: dict[float, tuple[float, ...]] = {
    0.05: (1.960, 2.343, 2.569, 2.728, 2.850, 2.949, 3.031, 3.102, 3.164),
    0.10: (1.645, 2.052, 2.291, 2.459, 2.589, 2.693, 2.780, 2.855, 2.920),
}


def _check_alpha(alpha: float) -> None:
    if not (isinstance(alpha, (int, float)) and 0 < alpha < 1):
        raise ValueError(f"The 'alpha' parameter must be a float in the range (0, 1). Got {alpha!r} instead.")


def _paired(a: ArrayLike, b: ArrayLike, what: str) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    a = np.asarray(a, dtype=np.float64).ravel()
    b = np.asarray(b, dtype=np.float64).ravel()
    if a.shape != b.shape:
        raise ValueError(f"{what} needs two samples of the same length; got {a.size} and {b.size}.")
    if a.size < 2:
        raise ValueError(f"{what} needs at least 2 paired values; got {a.size}.")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError(f"{what} needs finite values; got NaN or inf.")
    return a, b


def _table(table: ArrayLike, names: Iterable[str] | None = None) -> tuple[NDArray[np.float64], list[str]]:
    T = np.asarray(table, dtype=np.float64)
    if T.ndim != 2:
        raise ValueError(f"The 'table' must be 2-D (n_datasets, n_algorithms); got shape {T.shape}.")
    out = [str(i) for i in range(T.shape[1])] if names is None else list(names)
    if len(out) != T.shape[1]:
        raise ValueError(f"The 'names' parameter must have {T.shape[1]} entries (one per column); got {len(out)}.")
    return T, out


# --------------------------------------------------------------------- t-test
