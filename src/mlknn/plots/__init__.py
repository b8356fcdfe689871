"""Figures of the papers mlknn implements, as scikit-learn-style Display objects.

Every display is built with a ``from_*`` class method and drawn with
``plot(ax=None)`` (a new figure when ``ax`` is None); it keeps ``figure_`` and
``ax_``. Empty data draws a "no data" panel instead of failing.

=============================  =====================================================
CriticalDifferenceDisplay      Demsar's critical-difference diagram (Nemenyi)
KOccurrenceDisplay             k-occurrence distribution (Teng et al. 2025, Figure 1)
LabelCooccurrenceDisplay       P(label q | label r) matrix (Younes et al. 2011, Figure 1)
ParameterCurveDisplay          metric (or average rank) versus a parameter per
                               algorithm: k (Teng et al. 2025, Figures 2-7), the radius of
                               BML-kNN (BML-kNN paper, Figures 2-5)
ReliabilityDisplay             relevant fraction versus mean posterior per bin, per
                               label and pooled (calibration)
=============================  =====================================================

matplotlib is imported lazily; the report uses the Agg backend.
"""

from ._data_displays import KOccurrenceDisplay, LabelCooccurrenceDisplay
from ._displays import CriticalDifferenceDisplay, ParameterCurveDisplay
from ._reliability import ReliabilityDisplay

__all__ = [
    "CriticalDifferenceDisplay",
    "KOccurrenceDisplay",
    "LabelCooccurrenceDisplay",
    "ParameterCurveDisplay",
    "ReliabilityDisplay",
]
