"""The reduction object for an estimator's ``hubness`` parameter."""

from numbers import Integral
from typing import Any

from sklearn.base import clone

from ..utils._param_validation import InvalidParameterError, validate_params
from ..utils._typing import Estimator
from ._constraints import REDUCTIONS, NonBoolInterval
from ._dsl import DisSimLocal
from ._ls import LocalScaling
from ._mp import MutualProximity


@validate_params(
    {
        # Checked below, by the dispatch on the name, in its own words: an unknown name
        # or an object without the three methods (tests pin that message).
        "hubness": "no_validation",
        "n_neighbors": [NonBoolInterval(Integral, 1, None, closed="left")],
        "metric": [str],
    },
    prefer_skip_nested_validation=True,
)
def make_reduction(hubness: Any, *, n_neighbors: int, metric: str = "euclidean") -> Estimator:
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
        raise InvalidParameterError(
            f"The 'hubness' parameter must be None, one of {list(REDUCTIONS)} or a reduction "
            f"object. Got {hubness!r} instead."
        )
    if not all(hasattr(hubness, m) for m in ("fit", "transform", "search_width")):
        raise InvalidParameterError(
            "The 'hubness' parameter must be None, one of "
            f"{list(REDUCTIONS)} or an object with fit, transform and search_width methods. "
            f"Got {type(hubness).__name__} instead."
        )
    reduction = clone(hubness)
    params = reduction.get_params(deep=False) if hasattr(reduction, "get_params") else {}
    update: dict[str, Any] = {"n_neighbors": n_neighbors} if "n_neighbors" in params else {}
    if "metric" in params:
        update["metric"] = metric
    if update:
        reduction.set_params(**update)
    return reduction

