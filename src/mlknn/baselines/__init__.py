"""Classic multi-label baselines as scikit-learn estimators (seed 003, Knowl 6-17).

Problem transformation (a base ``estimator``; default a decision tree, the C4.5 /
J48 stand-in of seed 001): :class:`BinaryRelevance`, :class:`ClassifierChain`,
:class:`EnsembleClassifierChains`, :class:`LabelPowerset`, :class:`RAkEL`,
:class:`RAkELd`, :class:`CalibratedLabelRanking`, :class:`StackedBinaryRelevance`,
:class:`AdaBoostMH`.

Algorithm adaptation: :class:`MLDT`, :class:`RankSVM`, :class:`BPMLL`,
:class:`MLRBF`, :class:`CML`, :class:`MLLS`.

Threshold calibration (Knowl 6): :class:`ThresholdCalibration`.

Every estimator takes ``fit(X, Y)`` with Y an (n, q) 0/1 matrix; ``predict``
returns an (n, q) 0/1 array in Y's dtype and ``predict_proba`` one (n, q) array
of scores in [0, 1]. See docs/baselines.md.
"""

from ._adaboost import AdaBoostMH
from ._adaptation import BPMLL, CML, MLDT, MLLS, MLRBF, RankSVM
from ._transformation import (
    BinaryRelevance,
    CalibratedLabelRanking,
    ClassifierChain,
    EnsembleClassifierChains,
    LabelPowerset,
    RAkEL,
    RAkELd,
    StackedBinaryRelevance,
    ThresholdCalibration,
)

__all__ = [
    "AdaBoostMH",
    "BPMLL",
    "BinaryRelevance",
    "CML",
    "CalibratedLabelRanking",
    "ClassifierChain",
    "EnsembleClassifierChains",
    "LabelPowerset",
    "MLDT",
    "MLLS",
    "MLRBF",
    "RAkEL",
    "RAkELd",
    "RankSVM",
    "StackedBinaryRelevance",
    "ThresholdCalibration",
]
