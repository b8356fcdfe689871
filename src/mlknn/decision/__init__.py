"""Decisions on top of posteriors: tuned thresholds, calibration, conformal label sets.

Every rule here is chosen on the training set's out-of-sample posteriors
(:func:`mlknn.model_selection.loo_predict_proba`), never on scores the model has seen.

=====================  ==============================================================
TunedThresholds        per-label, global, rank (rcut) or proportional (pcut) cut
                       maximising a measure, or a fixed threshold
=====================  ==============================================================

See the user guide's "Decisions" page for which rule serves which goal.
"""

from ._tuned import TunedThresholds

__all__ = ["TunedThresholds"]
