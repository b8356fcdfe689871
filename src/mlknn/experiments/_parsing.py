"""Command-line and TOML values: parsing ``name=value`` options and coercing to defaults."""

import json
import math
from numbers import Integral
from typing import TypeAlias

#: A value read from the command line (:func:`parse_value`).
Scalar: TypeAlias = int | float | bool | str | None


def canonical_json(obj: object) -> str:
    """Deterministic JSON (sorted keys, no spaces) used as a key in the results DB.

    Parameters
    ----------
    obj : object
        JSON-serialisable value (dicts, lists, numbers, strings, None; NaN and
        infinities allowed).

    Returns
    -------
    str
        The JSON text.

    See Also
    --------
    ResultsDB : Stores cells under such keys.

    Examples
    --------
    >>> from mlknn.experiments import canonical_json
    >>> canonical_json({"k": 10, "algorithm": "mlknn", "smoothing": [1.0, None]})
    '{"algorithm":"mlknn","k":10,"smoothing":[1.0,null]}'
    """
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=True)


def _fmt(v: object) -> str:
    if isinstance(v, float) and math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return str(v)


def parse_value(text: str) -> Scalar:
    """A command-line value: int, float (``inf`` too), bool, None or str.

    Parameters
    ----------
    text : str
        One value as typed on the command line.

    Returns
    -------
    int, float, bool, None or str
        The first reading that fits, in the order None, bool, inf, int, float, str.

    See Also
    --------
    parse_param_option : Parses a whole ``--param`` option.

    Examples
    --------
    >>> from mlknn.experiments import parse_value
    >>> [parse_value(t) for t in ["10", "0.5", "inf", "true", "none", "brute"]]
    [10, 0.5, inf, True, None, 'brute']
    """
    t = str(text).strip()
    low = t.lower()
    if low in ("none", "null"):
        return None
    if low in ("true", "false"):
        return low == "true"
    if low in ("inf", "+inf", "infinity"):
        return math.inf
    if low in ("-inf", "-infinity"):
        return -math.inf
    try:
        return int(t)
    except ValueError:
        pass
    try:
        return float(t)
    except ValueError:
        return t


def parse_param_option(text: str) -> tuple[str, str, tuple[Scalar, ...]]:
    """``"name=v1,v2"`` or ``"algorithm.name=v1,v2"`` -> (scope, name, values).

    Parameters
    ----------
    text : str
        The option's value, ``"name=v1,v2"`` (every algorithm with the parameter)
        or ``"algorithm.name=v1,v2"`` (one algorithm).

    Returns
    -------
    scope : str
        ``"*"`` or the algorithm name, lower-cased.
    name : str
        The parameter.
    values : tuple
        The values, each read by :func:`parse_value`.

    See Also
    --------
    parse_value : Reads each value.
    ExperimentConfig : Its ``params`` holds these triples.

    Examples
    --------
    >>> from mlknn.experiments import parse_param_option
    >>> parse_param_option("mlknn.smoothing=0.5,1")
    ('mlknn', 'smoothing', (0.5, 1))
    >>> parse_param_option("radius=inf")
    ('*', 'radius', (inf,))
    """
    if "=" not in text:
        raise ValueError(
            f"The '--param' option must look like name=v1,v2 or algorithm.name=v1,v2. Got {text!r} instead."
        )
    lhs, rhs = text.split("=", 1)
    lhs = lhs.strip()
    scope, name = ("*", lhs)
    if "." in lhs:
        scope, name = lhs.split(".", 1)
    values = tuple(parse_value(v) for v in rhs.split(",") if v.strip() != "")
    if not name or not values:
        raise ValueError(f"The '--param' option {text!r} names no parameter or no value.")
    return scope.lower(), name, values


def _coerce(value: object, default: object) -> object:
    # An int given for a float parameter is stored as float, so that 3 and 3.0
    # are the same cell.
    if isinstance(default, float) and isinstance(value, Integral) and not isinstance(value, bool):
        return float(value)
    return value
