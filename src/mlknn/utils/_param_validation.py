"""One shim over scikit-learn's private parameter-validation helpers.

scikit-learn keeps ``Interval``, ``StrOptions``, ``HasMethods``, ``_fit_context``
and ``get_chunk_n_rows`` (rows per chunk under ``working_memory``) in private modules. Importing them in exactly one place means a change of location
in a future scikit-learn release is fixed here and nowhere else (imbalanced-learn
isolates the same drift behind its ``sklearn_compat`` module).
"""

from numbers import Integral, Real

from sklearn.base import _fit_context
from sklearn.utils._chunking import get_chunk_n_rows
from sklearn.utils._param_validation import (
    HasMethods,
    Interval,
    InvalidParameterError,
    StrOptions,
    validate_params,
)

__all__ = [
    "HasMethods",
    "Integral",
    "Interval",
    "InvalidParameterError",
    "Real",
    "StrOptions",
    "_fit_context",
    "get_chunk_n_rows",
    "validate_params",
]
