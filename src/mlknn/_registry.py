"""Where every public estimator lives, by the lower-case name the CLI uses.

Imports are lazy so that ``import mlknn`` stays fast and an optional dependency of
one estimator never breaks another.
"""

import importlib

#: CLI / harness name -> (module, class name).
ESTIMATORS = {
    # kNN family (mlknn top level)
    "mlknn": ("mlknn.algorithms._mlknn", "MLkNN"),
    "dmlknn": ("mlknn.algorithms._dmlknn", "DMLkNN"),
    "mlhiknn": ("mlknn.algorithms._mlhiknn", "MLHiKNN"),
    "bmlknn": ("mlknn.algorithms._bmlknn", "BMLkNN"),
    "nc": ("mlknn.algorithms._bmlknn", "NeighborhoodClassifier"),
    "brknn": ("mlknn.algorithms._brknn", "BRkNN"),
    "brknna": ("mlknn.algorithms._brknn", "BRkNNa"),
    "brknnb": ("mlknn.algorithms._brknn", "BRkNNb"),
    "iblr": ("mlknn.algorithms._iblr", "IBLR"),
    # baselines (mlknn.baselines)
    "br": ("mlknn.baselines._transformation", "BinaryRelevance"),
    "cc": ("mlknn.baselines._transformation", "ClassifierChain"),
    "ecc": ("mlknn.baselines._transformation", "EnsembleClassifierChains"),
    "lp": ("mlknn.baselines._transformation", "LabelPowerset"),
    "rakel": ("mlknn.baselines._transformation", "RAkEL"),
    "rakeld": ("mlknn.baselines._transformation", "RAkELd"),
    "clr": ("mlknn.baselines._transformation", "CalibratedLabelRanking"),
    "stacking": ("mlknn.baselines._transformation", "StackedBinaryRelevance"),
    "adaboostmh": ("mlknn.baselines._adaboost", "AdaBoostMH"),
    "mldt": ("mlknn.baselines._adaptation", "MLDT"),
    "ranksvm": ("mlknn.baselines._adaptation", "RankSVM"),
    "bpmll": ("mlknn.baselines._adaptation", "BPMLL"),
    "mlrbf": ("mlknn.baselines._adaptation", "MLRBF"),
    "cml": ("mlknn.baselines._adaptation", "CML"),
    "mlls": ("mlknn.baselines._adaptation", "MLLS"),
    "thresholdcalibration": ("mlknn.baselines._transformation", "ThresholdCalibration"),
}

#: Names of the kNN estimators (they accept n_neighbors and share neighbour graphs).
KNN_ESTIMATORS = ("mlknn", "dmlknn", "mlhiknn", "bmlknn", "nc", "brknn", "brknna", "brknnb", "iblr")


def get_estimator_class(name):
    """Return the estimator class registered under ``name`` (case-insensitive).

    Parameters
    ----------
    name : str

    Returns
    -------
    type
    """
    key = name.lower()
    if key not in ESTIMATORS:
        raise ValueError(
            f"Unknown algorithm {name!r}. Known algorithms: {', '.join(sorted(ESTIMATORS))}."
        )
    module, cls = ESTIMATORS[key]
    return getattr(importlib.import_module(module), cls)


def available_estimators():
    """Names whose modules import here (an estimator in progress is left out)."""
    names = []
    for key in ESTIMATORS:
        try:
            get_estimator_class(key)
        except (ImportError, AttributeError):
            continue
        names.append(key)
    return names
