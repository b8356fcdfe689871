"""Turning scores into 0/1 label sets: thresholds, the top r labels, a minimum per instance."""

from typing import Any

import numpy as np

from ..utils._typing import NDArray
from ._search import top_order


def above(P: NDArray[Any], thresholds: NDArray[Any] | float) -> NDArray[np.uint8]:
    """``P > thresholds`` (one threshold, or one per label) as a 0/1 matrix."""
    return (np.asarray(P) > thresholds).astype(np.uint8)


def top_labels(P: NDArray[Any], r: int) -> NDArray[np.uint8]:
    """The r highest-scoring labels of each row (equal scores: the lower label index first)."""
    P = np.asarray(P)
    out = np.zeros(P.shape, dtype=np.uint8)
    r = min(r, P.shape[1])
    if r > 0:
        np.put_along_axis(out, top_order(P)[:, :r], 1, axis=1)
    return out


def with_at_least(decisions: NDArray[np.uint8], P: NDArray[Any], min_labels: int) -> NDArray[np.uint8]:
    """``decisions`` with each row's top ``min_labels`` labels added (nothing removed)."""
    if min_labels <= 0:
        return decisions
    return np.maximum(decisions, top_labels(P, min_labels))
