"""Classic multi-label baselines as scikit-learn estimators (Zhang and Zhou 2014, from threshold calibration to MLLS).

Problem transformation (a base ``estimator``; default a decision tree, the C4.5 /
J48 stand-in of Teng et al. (2025)): :class:`BinaryRelevance`, :class:`ClassifierChain`,
:class:`EnsembleClassifierChains`, :class:`LabelPowerset`, :class:`RAkEL`,
:class:`RAkELd`, :class:`CalibratedLabelRanking`, :class:`StackedBinaryRelevance`,
:class:`AdaBoostMH`.

Algorithm adaptation: :class:`MLDT`, :class:`RankSVM`, :class:`BPMLL`,
:class:`MLRBF`, :class:`CML`, :class:`MLLS`.

Threshold calibration (Zhang and Zhou 2014): :class:`ThresholdCalibration`.

Every estimator takes ``fit(X, Y)`` with Y an (n, q) 0/1 matrix; ``predict``
returns an (n, q) 0/1 array in Y's dtype and ``predict_proba`` one (n, q) array
of scores in [0, 1]. See docs/baselines.md. One learner (or one tight family:
chains, powerset/RAkEL) per private module.
"""

from ._adaboost import AdaBoostMH
from ._binary_relevance import BinaryRelevance
from ._bpmll import BPMLL
from ._chains import ClassifierChain, EnsembleClassifierChains
from ._clr import CalibratedLabelRanking
from ._cml import CML
from ._mldt import MLDT
from ._mlls import MLLS
from ._mlrbf import MLRBF
from ._powerset import LabelPowerset, RAkEL, RAkELd
from ._ranksvm import RankSVM
from ._stacking import StackedBinaryRelevance
from ._threshold_calibration import ThresholdCalibration

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
