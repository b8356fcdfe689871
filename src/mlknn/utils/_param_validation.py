"""One shim over scikit-learn's private parameter-validation helpers.

scikit-learn keeps ``Interval``, ``Options``, ``StrOptions``, ``HasMethods``, ``_fit_context``,
``validate_parameter_constraints`` (one value against its constraints, outside ``fit``)
and ``get_chunk_n_rows`` (rows per chunk under ``working_memory``) in private modules. Importing them in exactly one place means a change of location
in a future scikit-learn release is fixed here and nowhere else (imbalanced-learn
isolates the same drift behind its ``sklearn_compat`` module).
"""

from collections.abc import Callable
from numbers import Integral, Real
from typing import TYPE_CHECKING, Any, TypeVar

from sklearn.utils._chunking import get_chunk_n_rows
from sklearn.utils._param_validation import (
    HasMethods,
    Interval,
    InvalidParameterError,
    Options,
    StrOptions,
)

_F = TypeVar("_F", bound=Callable[..., Any])

if TYPE_CHECKING:
    # scikit-learn has no stubs: the two decorators' types, so that a decorated
    # function keeps its own signature for the type checker.
    def _fit_context(*, prefer_skip_nested_validation: bool) -> Callable[[_F], _F]: ...

    def validate_params(
        parameter_constraints: dict[str, Any], *, prefer_skip_nested_validation: bool
    ) -> Callable[[_F], _F]: ...

    def validate_parameter_constraints(
        parameter_constraints: dict[str, Any], params: dict[str, Any], caller_name: str
    ) -> None: ...
else:
    from sklearn.base import _fit_context
    from sklearn.utils._param_validation import validate_parameter_constraints, validate_params


__all__ = [
    "HasMethods",
    "Integral",
    "Interval",
    "InvalidParameterError",
    "Options",
    "Real",
    "StrOptions",
    "_fit_context",
    "get_chunk_n_rows",
    "validate_parameter_constraints",
    "validate_params",
]
