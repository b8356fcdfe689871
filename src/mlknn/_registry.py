"""Where every public estimator lives, by the lower-case name the CLI uses.

Imports are lazy so that ``import mlknn`` stays fast and an optional dependency of
one estimator never breaks another.
"""

import importlib
from typing import Any

from .utils._param_validation import validate_params

#: CLI / harness name -> (module, class name).
ESTIMATORS: dict[str, tuple[str, str]] = {
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
    "br": ("mlknn.baselines._binary_relevance", "BinaryRelevance"),
    "cc": ("mlknn.baselines._chains", "ClassifierChain"),
    "ecc": ("mlknn.baselines._chains", "EnsembleClassifierChains"),
    "lp": ("mlknn.baselines._powerset", "LabelPowerset"),
    "rakel": ("mlknn.baselines._powerset", "RAkEL"),
    "rakeld": ("mlknn.baselines._powerset", "RAkELd"),
    "clr": ("mlknn.baselines._clr", "CalibratedLabelRanking"),
    "stacking": ("mlknn.baselines._stacking", "StackedBinaryRelevance"),
    "adaboostmh": ("mlknn.baselines._adaboost", "AdaBoostMH"),
    "mldt": ("mlknn.baselines._mldt", "MLDT"),
    "ranksvm": ("mlknn.baselines._ranksvm", "RankSVM"),
    "bpmll": ("mlknn.baselines._bpmll", "BPMLL"),
    "mlrbf": ("mlknn.baselines._mlrbf", "MLRBF"),
    "cml": ("mlknn.baselines._cml", "CML"),
    "mlls": ("mlknn.baselines._mlls", "MLLS"),
    "thresholdcalibration": ("mlknn.baselines._threshold_calibration", "ThresholdCalibration"),
}

#: Names of the kNN estimators (they accept n_neighbors and share neighbour graphs).
KNN_ESTIMATORS = ("mlknn", "dmlknn", "mlhiknn", "bmlknn", "nc", "brknn", "brknna", "brknnb", "iblr")


@validate_params({"name": [str]}, prefer_skip_nested_validation=True)
def get_estimator_class(name: str) -> type[Any]:
    """Return the estimator class registered under ``name`` (case-insensitive).

    Parameters
    ----------
    name : str

    Returns
    -------
    type

    Raises
    ------
    ValueError
        For an unknown name (the message lists the known ones).
    ImportError
        When the estimator's module cannot be imported (a broken module fails
        loudly; it is never skipped).
    """
    key = name.lower()
    if key not in ESTIMATORS:
        import difflib

        close = difflib.get_close_matches(key, sorted(ESTIMATORS), n=2, cutoff=0.6)
        hint = f" Did you mean {' or '.join(map(repr, close))}?" if close else ""
        raise ValueError(
            f"Unknown algorithm {name!r}.{hint} Known algorithms: {', '.join(sorted(ESTIMATORS))} "
            "(`mlknn algorithms` describes them)."
        )
    module, cls = ESTIMATORS[key]
    try:
        found: type[Any] = getattr(importlib.import_module(module), cls)
        return found
    except (ImportError, AttributeError) as exc:
        raise ImportError(
            f"The estimator {key!r} is registered as {module}.{cls}, which cannot be imported: {exc}"
        ) from exc


def available_estimators() -> list[str]:
    """Every registered name, after importing each estimator class.

    Fails loudly: a module that cannot be imported raises an ImportError naming
    the estimator, so that the suites driven by this list (bad input,
    determinism, properties, persistence, common checks) fail rather than
    silently shrink.

    Returns
    -------
    list of str
    """
    for key in ESTIMATORS:
        get_estimator_class(key)
    return list(ESTIMATORS)


def make_estimator(
    name: str, *, n_neighbors: int | None = None, random_state: Any = None, **params: Any
) -> Any:
    """The estimator registered under ``name``, built from its defaults.

    The one factory behind the harness, the CLI and the tests: ``n_neighbors`` and
    ``random_state`` are set only on an estimator that has them (a baseline ignores
    ``n_neighbors``), then ``params`` (which win over both).

    Parameters
    ----------
    name : str
        A registered name (case-insensitive), as in :data:`ESTIMATORS`.
    n_neighbors : int, optional
        k, for the estimators with an ``n_neighbors`` parameter.
    random_state : int, RandomState instance or None, optional
        Seed, for the estimators with a ``random_state`` parameter.
    **params
        Further constructor parameters.

    Returns
    -------
    estimator
        Unfitted.

    Raises
    ------
    ValueError
        For an unknown name (with the closest known ones).
    TypeError
        For a parameter the estimator does not have (its constructor's error).

    See Also
    --------
    mlknn.experiments.run_experiment : The harness, which builds every cell's estimator here.

    Examples
    --------
    >>> from mlknn import make_estimator
    >>> make_estimator("mlknn", n_neighbors=5)
    MLkNN(n_neighbors=5)
    >>> make_estimator("br", n_neighbors=5, random_state=0)  # a baseline: no n_neighbors
    BinaryRelevance(random_state=0)
    """
    cls = get_estimator_class(name)
    defaults = cls().get_params()
    kwargs: dict[str, Any] = {}
    if n_neighbors is not None and "n_neighbors" in defaults:
        kwargs["n_neighbors"] = n_neighbors
    if random_state is not None and "random_state" in defaults:
        kwargs["random_state"] = random_state
    kwargs.update(params)
    return cls(**kwargs)
