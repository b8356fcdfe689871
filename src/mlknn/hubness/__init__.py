"""Hubness: measures (Teng et al. 2025, eqs 1, 26, 27) and reduction (eqs 2-4, Algorithms 4-5).

Measures
--------
k_occurrence
    How often each training point appears in a neighbour graph (O_k).
hubness_stats
    S_k (skewness of O_k), H_occ^k (hub occurrence) and A_occ^k (antihub
    occurrence) of a dataset, as in Teng et al.'s (2025) Table 1.
skewness, hub_occurrence, antihub_occurrence
    The three measures from an O_k vector.

Reduction (graph -> graph)
--------------------------
LocalScaling, MutualProximity, DisSimLocal
    Re-rank a wide candidate graph by a secondary dissimilarity into a graph of
    width k (:class:`HubnessGraph`). Every kNN estimator with a ``hubness``
    parameter (``None | "ls" | "mp" | "mp-gauss" | "dsl"`` or one of these
    objects) applies them in fit and in every query; see docs/hubness.md.
make_reduction
    The reduction object for a ``hubness`` parameter value.
HUBNESS_CONSTRAINT, REDUCTIONS
    The ``hubness`` parameter's validation constraint, and its string values.
"""

from ._constraints import HUBNESS_CONSTRAINT, REDUCTIONS
from ._dsl import DisSimLocal
from ._factory import make_reduction
from ._graph import HubnessGraph
from ._ls import LocalScaling
from ._measures import (
    HubnessStats,
    antihub_occurrence,
    hub_occurrence,
    hubness_stats,
    k_occurrence,
    skewness,
)
from ._mp import MutualProximity

__all__ = [
    "HUBNESS_CONSTRAINT",
    "REDUCTIONS",
    "DisSimLocal",
    "HubnessGraph",
    "HubnessStats",
    "LocalScaling",
    "MutualProximity",
    "antihub_occurrence",
    "hub_occurrence",
    "hubness_stats",
    "k_occurrence",
    "make_reduction",
    "skewness",
]
