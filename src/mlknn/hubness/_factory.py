"""The reduction object for an estimator's ``hubness`` parameter."""

from sklearn.base import clone

from ._dsl import DisSimLocal
from ._ls import LocalScaling
from ._mp import MutualProximity

#: Names accepted by the ``hubness`` parameter of the kNN estimators.
REDUCTIONS = ("ls", "mp", "mp-gauss", "dsl")


def make_reduction(hubness, *, n_neighbors, metric="euclidean"):
    """The unfitted reduction for an estimator's ``hubness`` parameter.

    Parameters
    ----------
    hubness : {"ls", "mp", "mp-gauss", "dsl"} or reduction object
        A name, or an object with ``fit``, ``transform`` and ``search_width``
        (e.g. ``LocalScaling(n_candidates=50)``), which is cloned.
    n_neighbors : int
        The estimator's k (output width; LS / DSL scale).
    metric : str
        The estimator's metric.

    Returns
    -------
    reduction

    See Also
    --------
    LocalScaling, MutualProximity, DisSimLocal : The reductions the names build.
    hubness_stats : Measure hubness before and after a reduction.

    Examples
    --------
    >>> from mlknn.hubness import make_reduction
    >>> type(make_reduction("ls", n_neighbors=10)).__name__
    'LocalScaling'
    >>> type(make_reduction("mp-gauss", n_neighbors=10)).__name__
    'MutualProximity'
    """
    if isinstance(hubness, str):
        if hubness == "ls":
            return LocalScaling(n_neighbors, metric=metric)
        if hubness == "mp":
            return MutualProximity(n_neighbors, method="empiric", metric=metric)
        if hubness == "mp-gauss":
            return MutualProximity(n_neighbors, method="gaussian", metric=metric)
        if hubness == "dsl":
            return DisSimLocal(n_neighbors, metric=metric)
        raise ValueError(
            f"The 'hubness' parameter must be None, one of {list(REDUCTIONS)} or a reduction "
            f"object. Got {hubness!r} instead."
        )
    if not all(hasattr(hubness, m) for m in ("fit", "transform", "search_width")):
        raise ValueError(
            "The 'hubness' parameter must be None, one of "
            f"{list(REDUCTIONS)} or an object with fit, transform and search_width methods. "
            f"Got {type(hubness).__name__} instead."
        )
    reduction = clone(hubness)
    params = reduction.get_params(deep=False) if hasattr(reduction, "get_params") else {}
    update = {"n_neighbors": n_neighbors} if "n_neighbors" in params else {}
    if "metric" in params:
        update["metric"] = metric
    if update:
        reduction.set_params(**update)
    return reduction

