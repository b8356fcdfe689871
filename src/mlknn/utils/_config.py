"""Global settings of mlknn: :func:`get_config`, :func:`set_config`, :func:`config_context`.

Modelled on scikit-learn's ``sklearn.config_context``: a module-level default,
a per-thread copy (so that a ``with config_context(...)`` in one thread does not
change another thread's settings), and a context manager that restores the
previous values on exit, also when the block raises.

The settings are the resource guards' (see :mod:`mlknn.utils._resources`):

``max_memory``
    Bytes a fit or prediction may be estimated to need before it is refused.
    ``None`` (default): half the memory available when the call starts;
    an int or float: that many bytes; a string such as ``"8GB"`` or
    ``"512 MiB"``; ``float("inf")`` or ``"off"``: never refuse.
``blas_flops``
    The floating-point operations per second that turn a dense-in-q solver's
    work into a time estimate (a multi-core BLAS reaches 10^10-10^12).
``warn_seconds``
    A fit estimated above this many seconds warns once with the estimate.
"""

import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_GLOBAL_CONFIG: dict[str, Any] = {
    "max_memory": None,
    "blas_flops": 5e10,
    "warn_seconds": 600.0,
}
_THREAD_CONFIG = threading.local()

_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40, "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
_SIZE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)\s*([a-z]*)\s*$", re.IGNORECASE)


def _thread_config() -> dict[str, Any]:
    if not hasattr(_THREAD_CONFIG, "config"):
        _THREAD_CONFIG.config = _GLOBAL_CONFIG.copy()
    config: dict[str, Any] = _THREAD_CONFIG.config
    return config


def parse_memory_size(value: Any, name: str = "max_memory") -> float | None:
    """Bytes from an int, a float, a string with a unit (``"8GB"``, ``"512 MiB"``) or None.

    ``"off"``, ``"none"`` and ``inf`` mean no limit (``float("inf")``); None means
    the default (half the available memory).

    Parameters
    ----------
    value : int, float, str or None
    name : str
        The setting's name, for the error message.

    Returns
    -------
    float or None
    """
    if value is None:
        return None
    if isinstance(value, bool):
        raise ValueError(f"The '{name}' setting must be a number of bytes, a size such as '8GB', 'off' or None; "
                         f"got {value!r}.")
    if isinstance(value, (int, float)):
        if not value > 0:
            raise ValueError(f"The '{name}' setting must be > 0 bytes; got {value!r}.")
        return float(value)
    if isinstance(value, str):
        if value.strip().lower() in ("off", "none", "inf", "unlimited"):
            return float("inf")
        match = _SIZE.match(value)
        unit = match.group(2).lower() if match else None
        if match and unit in _UNITS and float(match.group(1)) > 0:
            return float(match.group(1)) * _UNITS[unit]
    raise ValueError(f"The '{name}' setting must be a number of bytes, a size such as '8GB' or '512MiB', 'off' "
                     f"or None; got {value!r}.")


def _checked(name: str, value: Any) -> Any:
    if name == "max_memory":
        parse_memory_size(value)
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ValueError(f"The '{name}' setting must be a number > 0; got {value!r}.")
    return float(value)


def get_config() -> dict[str, Any]:
    """The current values of mlknn's global settings (this thread's).

    Returns
    -------
    dict
        ``max_memory``, ``blas_flops`` and ``warn_seconds`` (see
        :func:`set_config`).

    See Also
    --------
    config_context : Change settings inside a ``with`` block.
    set_config : Change settings.

    Examples
    --------
    >>> import mlknn
    >>> sorted(mlknn.get_config())
    ['blas_flops', 'max_memory', 'warn_seconds']
    """
    return _thread_config().copy()


#: The default of :func:`set_config`'s arguments: leave the setting as it is.
_KEEP: Any = object()


def set_config(max_memory: Any = _KEEP, blas_flops: Any = _KEEP, warn_seconds: Any = _KEEP) -> None:
    """Set mlknn's global settings (for this thread; the others keep theirs).

    Settings not passed keep their values.

    Parameters
    ----------
    max_memory : int, float, str or None
        Bytes a fit or prediction may be estimated to need before it is refused
        (``"8GB"``, ``"512MiB"`` and ``"off"`` are read too). None: half the
        memory available at the call.
    blas_flops : float
        Floating-point operations per second of the BLAS, for the time estimates.
    warn_seconds : float
        A fit estimated to take longer warns once with its estimate.

    See Also
    --------
    config_context : The same for the duration of a ``with`` block.
    get_config : The current values.

    Examples
    --------
    >>> import mlknn
    >>> mlknn.set_config(max_memory="16GB")
    >>> mlknn.get_config()["max_memory"]
    '16GB'
    >>> mlknn.set_config(max_memory=None)
    """
    config = _thread_config()
    for name, value in (("max_memory", max_memory), ("blas_flops", blas_flops), ("warn_seconds", warn_seconds)):
        if value is not _KEEP:
            config[name] = _checked(name, value)


@contextmanager
def config_context(**settings: Any) -> Iterator[None]:
    """Change mlknn's global settings inside a ``with`` block (this thread only).

    Parameters
    ----------
    **settings
        ``max_memory``, ``blas_flops``, ``warn_seconds``: see :func:`set_config`.
        Settings not given keep their values.

    Yields
    ------
    None

    See Also
    --------
    set_config : Change settings outside a block.
    get_config : The current values.

    Examples
    --------
    >>> import mlknn
    >>> with mlknn.config_context(max_memory="off"):
    ...     mlknn.get_config()["max_memory"]
    'off'
    >>> mlknn.get_config()["max_memory"] is None
    True
    """
    unknown = set(settings) - set(_GLOBAL_CONFIG)
    if unknown:
        raise TypeError(f"config_context() got unknown setting(s) {sorted(unknown)}; known: {sorted(_GLOBAL_CONFIG)}.")
    checked = {name: _checked(name, value) for name, value in settings.items()}
    config = _thread_config()
    old = config.copy()
    config.update(checked)
    try:
        yield
    finally:
        config.clear()
        config.update(old)
