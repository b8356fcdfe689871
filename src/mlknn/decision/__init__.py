"""Decisions on top of posteriors: tuned thresholds, calibration, conformal label sets.

Every rule here is fitted on posteriors the model has not seen the labels of: the
training set's out-of-sample posteriors (:func:`mlknn.model_selection.loo_predict_proba`)
or a held-out calibration part.

======================  =============================================================
TunedThresholds         per-label, global, rank (rcut) or proportional (pcut) cut
                        maximising a measure, or a fixed threshold
CalibratedProba         each label's posterior through an isotonic or sigmoid map
ConformalLabelSets      label sets with a coverage guarantee: the whole set, the
                        false-negative rate, or each label
======================  =============================================================

See the user guide's "Decisions" page for which rule serves which goal.
"""

from ._calibrated import CalibratedProba
from ._conformal import ConformalLabelSets, UncertifiedLabelWarning
from ._tuned import TunedThresholds

__all__ = ["CalibratedProba", "ConformalLabelSets", "TunedThresholds", "UncertifiedLabelWarning"]
