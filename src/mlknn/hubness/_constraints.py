"""Parameter constraints of the hubness reductions, in scikit-learn's validation.

scikit-learn's ``validate_parameter_constraints`` accepts only its own constraint
classes (``Interval``, ``StrOptions``, ``Options``, ...), and words its message
"The {name!r} parameter of {caller} must be {constraint}. Got {value!r} instead."
from each constraint's ``str``. The subclasses below keep that machinery and add
the two rules the reductions need beyond it: booleans are not numbers here
(``True`` is not a k of 1), and a byte budget must be finite. An optional
``description`` replaces the generated wording where the rule has a reason worth
saying (the metrics a method is defined for, who sets ``n_neighbors``).
"""

import math
from numbers import Integral, Real
from typing import Any, Literal

import numpy as np

from ..utils._param_validation import HasMethods, Interval, Options, StrOptions

__all__ = ["HUBNESS_CONSTRAINT", "N_NEIGHBORS", "REDUCTIONS", "REDUCTION_CONSTRAINTS", "NonBoolInterval", "Value",
           "WordedStrOptions"]


class NonBoolInterval(Interval):
    """An :class:`Interval` that refuses booleans and, with ``finite=True``, infinities.

    Parameters
    ----------
    type : {numbers.Integral, numbers.Real}
    left, right : float or None
        Bounds (None: unbounded).
    closed : {"left", "right", "both", "neither"}
    finite : bool, default=False
        Refuse ``inf`` and ``-inf`` (NaN is always refused).
    description : str, optional
        The wording of the rule in the error message; default: scikit-learn's
        ("an int in the range [1, inf)").
    """

    def __init__(
        self,
        type: type,
        left: float | None,
        right: float | None,
        *,
        closed: Literal["left", "right", "both", "neither"],
        finite: bool = False,
        description: str | None = None,
    ) -> None:
        super().__init__(type, left, right, closed=closed)
        self.finite = finite
        self.description = description

    def is_satisfied_by(self, val: Any) -> bool:
        if isinstance(val, (bool, np.bool_)):
            return False
        if self.finite and isinstance(val, Real) and not math.isfinite(val):
            return False
        return bool(super().is_satisfied_by(val))

    def __str__(self) -> str:
        return self.description if self.description is not None else str(super().__str__())


class Value(Options):
    """One allowed integer value besides a range (e.g. ``-1``: every training point).

    Parameters
    ----------
    value : int
    """

    def __init__(self, value: int) -> None:
        super().__init__(Integral, {value})
        self.value = value

    def is_satisfied_by(self, val: Any) -> bool:
        return not isinstance(val, (bool, np.bool_)) and bool(super().is_satisfied_by(val))

    def __str__(self) -> str:
        return repr(self.value)


class WordedStrOptions(StrOptions):
    """:class:`StrOptions` whose error message says the rule in its own words.

    Parameters
    ----------
    options : set of str
    description : str
        E.g. "'euclidean' or 'sqeuclidean' (DSL is defined in Euclidean space)".
    """

    def __init__(self, options: set[str], *, description: str) -> None:
        super().__init__(options)
        self.description = description

    def __str__(self) -> str:
        return self.description


#: k of a reduction: the output width (and LS / DSL's scale neighbour).
N_NEIGHBORS = NonBoolInterval(
    Integral, 1, None, closed="left",
    description="an int in the range [1, inf) (an estimator's hubness= parameter sets it to the "
                "estimator's n_neighbors)",
)
#: Constraints every reduction shares (see :class:`~mlknn.hubness._base._GraphReduction`).
REDUCTION_CONSTRAINTS: dict[str, list[Any]] = {
    "n_neighbors": [N_NEIGHBORS],
    "n_candidates": [None, Value(-1), NonBoolInterval(Integral, 1, None, closed="left")],
    "metric": [str],
    "working_memory": [
        NonBoolInterval(Real, 0, None, closed="neither", finite=True, description="a finite number > 0 (megabytes)")
    ],
}

#: Names accepted by the ``hubness`` parameter of the kNN estimators.
REDUCTIONS = ("ls", "mp", "mp-gauss", "dsl")
#: A ``hubness`` parameter: one of those names, a reduction object, or None.
HUBNESS_CONSTRAINT: list[Any] = [StrOptions(set(REDUCTIONS)), HasMethods(["fit", "transform", "search_width"]), None]
