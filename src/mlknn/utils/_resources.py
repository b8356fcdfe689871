"""Resource guards: refuse a fit or prediction that would exceed the machine, before it allocates.

Every kNN estimator estimates, from the problem's sizes alone (rows, features,
labels, non-zero labels, neighbours), the peak memory of a fit or prediction
and, for the solvers that are dense in the number of labels q, their work in
floating-point operations. :func:`check_resources` compares the memory with
the limit (the estimator's ``max_memory`` parameter where it is set, else
``mlknn.config_context(max_memory=...)``, by default half the memory available
when the call starts) and refuses with one message naming the need,
the time estimate and the estimators that can do the job; a fit estimated to
run longer than ``warn_seconds`` warns once.

The estimates are the arrays the code paths allocate, counted by reading them
(a (n, q) float64 array is ``8 n q`` bytes), plus the interpreter's noise; they
aim at the peak resident memory within a factor of about 1.5
(``tests/test_resources.py`` and docs/performance.md measure them).
"""

import importlib
import os
import warnings
from dataclasses import dataclass, field
from typing import Any

from ._config import get_config, parse_memory_size
from ._param_validation import Options
from ._validation import SPARSE_LABEL_ESTIMATORS, LabelSpaceTooLargeError


class InsufficientMemoryError(LabelSpaceTooLargeError):
    """A fit or prediction was refused: its memory estimate exceeds the limit.

    Raised before anything large is allocated. A ``MemoryError`` and a
    ``ValueError`` (the input is valid but too large for this machine), and a
    :class:`~mlknn.LabelSpaceTooLargeError`, which code written before the
    general guard catches.
    """


class LongFitWarning(UserWarning):
    """A fit is estimated to take longer than ``warn_seconds`` (see :func:`mlknn.set_config`)."""


@dataclass(frozen=True)
class ProblemSize:
    """The sizes an estimate is computed from.

    Attributes
    ----------
    n_train : int
        Training rows.
    n_queries : int
        Rows scored (the training rows for fit's leave-one-out graph).
    n_features : int
    n_labels : int
    nnz_labels : int
        Non-zero entries of the training Y.
    n_neighbors : int
        Neighbours searched per row.
    sparse_labels : bool
        The estimator keeps Y sparse (else it holds a dense (n, q) uint8 copy).
    """

    n_train: int
    n_queries: int
    n_features: int
    n_labels: int
    nnz_labels: int
    n_neighbors: int
    sparse_labels: bool = False

    @property
    def labels_per_row(self) -> float:
        """Mean number of labels of a training row."""
        return self.nnz_labels / max(1, self.n_train)

    @property
    def neighbor_label_pairs(self) -> float:
        """Upper bound of the non-zero neighbour label counts of the scored rows (n k r, at most n q)."""
        return float(min(self.n_queries * self.n_neighbors * self.labels_per_row,
                         self.n_queries * self.n_labels))


@dataclass(frozen=True)
class ResourceEstimate:
    """A peak memory estimate, the work of the dense BLAS products, and what dominates.

    Attributes
    ----------
    bytes : float
        Peak memory beyond the inputs.
    flops : float
        Floating-point operations of the dense products (0 when they are negligible).
    parts : dict of str to float
        The largest items of ``bytes``, by name, for the message.
    alternative : str or None
        What can do the job when this is refused (None: the estimators that keep
        sparse labels sparse, as far as they are imported).
    """

    bytes: float
    flops: float = 0.0
    parts: dict[str, float] = field(default_factory=dict)
    alternative: str | None = None

    def __add__(self, other: "ResourceEstimate") -> "ResourceEstimate":
        return ResourceEstimate(self.bytes + other.bytes, self.flops + other.flops, {**self.parts, **other.parts},
                                self.alternative or other.alternative)


def estimate(flops: float = 0.0, alternative: str | None = None, **parts: float) -> ResourceEstimate:
    """A :class:`ResourceEstimate` from named byte counts (their sum is the peak)."""
    return ResourceEstimate(float(sum(parts.values())), float(flops), {k: float(v) for k, v in parts.items()},
                            alternative)


#: Bytes allocated outside the counted arrays (temporaries, allocator slack); small
#: problems are never refused for it.
BASE_BYTES = 16 * 2**20


def available_memory() -> float | None:
    """Bytes of memory available now, or None when unknown.

    Linux's MemAvailable (/proc/meminfo), else psutil's ``available`` where it is
    installed, else the physical memory.
    """
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return float(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return float(importlib.import_module("psutil").virtual_memory().available)
    except ImportError:
        pass
    try:
        return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return None


class MemorySize(Options):
    """Parameter constraint: what :func:`~mlknn.utils._config.parse_memory_size` reads.

    A number of bytes > 0 (``inf`` too), a size string (``"16GB"``, ``"512 MiB"``)
    or ``"off"``; the constraint of the estimators' ``max_memory`` parameter, beside
    None. Written as a scikit-learn ``Options`` so that parameter validation names
    the parameter, the rule and the value.
    """

    def __init__(self) -> None:
        super().__init__(object, set())

    def is_satisfied_by(self, val: Any) -> bool:
        if val is None:
            return False  # None is its own constraint (the global setting), listed beside this one
        try:
            parse_memory_size(val)
        except (ValueError, TypeError):
            return False
        return True

    def __str__(self) -> str:
        return "a number of bytes > 0, a size string such as '16GB' or '512MiB', 'off'"


#: The constraint of the estimators' ``max_memory`` parameter (None: the global setting).
MAX_MEMORY_CONSTRAINT: list[Any] = [MemorySize(), None]


def memory_limit(max_memory: Any = None, owner: str = "the estimator") -> tuple[float, str]:
    """The byte limit of the guards and how it was set (for the message).

    Parameters
    ----------
    max_memory : int, float, str or None, default=None
        An estimator's own limit; None: the global setting
        (``mlknn.config_context(max_memory=...)``, by default half the available memory).
    owner : str, default="the estimator"
        Who set ``max_memory``, for the message.

    Returns
    -------
    limit : float
        Bytes (``inf``: no limit).
    source : str
        How the limit was set, in words.
    """
    if max_memory is not None:
        own = parse_memory_size(max_memory)
        return float("inf") if own is None else own, f"{owner}'s max_memory={max_memory!r}"
    configured = parse_memory_size(get_config()["max_memory"])
    if configured is not None:
        return configured, "the configured max_memory"
    available = available_memory()
    if available is None:
        return float("inf"), "no limit: the available memory is unknown"
    return available / 2, f"half of the {format_bytes(available)} available"


def format_bytes(value: float) -> str:
    """``1.50 GiB`` style."""
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if value >= size:
            return f"{value / size:.2f} {unit}"
    return f"{int(value)} bytes"


def format_seconds(seconds: float) -> str:
    """``3.2 hours`` style."""
    for unit, size in (("days", 86400.0), ("hours", 3600.0), ("minutes", 60.0)):
        if seconds >= size:
            return f"{seconds / size:.1f} {unit}"
    return f"{seconds:.1f} s"


def estimated_seconds(flops: float) -> float:
    """Seconds of ``flops`` at the configured BLAS rate (``blas_flops``)."""
    return float(flops) / float(get_config()["blas_flops"])


_WARNED: set[tuple[str, str, int]] = set()


def _how_to_change(who: str, max_memory: Any) -> str:
    """The refusal's advice: where the limit that applied is changed."""
    if max_memory is not None:
        return (f"{who}(max_memory=...) or set_params(max_memory=...) changes it, max_memory='off' disables the "
                "check, max_memory=None follows mlknn.config_context(max_memory=...)")
    return (f"{who}(max_memory=...), mlknn.config_context(max_memory=...) or mlknn.set_config(max_memory=...) "
            "changes it, max_memory='off' disables the check")


def check_resources(who: str, action: str, size: ProblemSize, need: ResourceEstimate,
                    max_memory: Any = None) -> ResourceEstimate:
    """Refuse when ``need`` exceeds the memory limit; warn once for a long fit.

    Parameters
    ----------
    who : str
        The estimator's name, for the message.
    action : str
        ``"fit"``, ``"predict_proba"``, ...
    size : ProblemSize
    need : ResourceEstimate
        With the alternative its message names.
    max_memory : int, float, str or None, default=None
        The estimator's ``max_memory`` parameter: its limit overrides the global
        setting; None follows the global setting.

    Returns
    -------
    ResourceEstimate
        ``need``, when it fits.

    Raises
    ------
    InsufficientMemoryError
        Naming the bytes needed and their largest parts, the time estimate, the
        limit and how to change it, and the alternative.
    """
    limit, source = memory_limit(max_memory, who)
    seconds = estimated_seconds(need.flops) if need.flops else 0.0
    rate = f"{float(get_config()['blas_flops']):.3g} flop/s"
    if need.bytes > limit:
        largest = sorted(need.parts.items(), key=lambda item: -item[1])[:3]
        parts = ", ".join(f"{name} {format_bytes(value)}" for name, value in largest if value >= 2**20)
        time = f" and about {format_seconds(seconds)} of dense products at {rate}" if seconds >= 1 else ""
        alternative = need.alternative
        if alternative is None:
            names = sorted(SPARSE_LABEL_ESTIMATORS - {who})
            alternative = ("an estimator that keeps sparse labels sparse (pass Y as a scipy sparse matrix): "
                           + ", ".join(names)) if names else "fewer rows or labels per call"
        raise InsufficientMemoryError(
            f"{who}.{action} refused: estimated to need {need.bytes:,.0f} bytes ({format_bytes(need.bytes)}) of memory"
            f"{' (' + parts + ')' if parts else ''}{time} for n_train = {size.n_train:,} rows, "
            f"{size.n_queries:,} scored rows, q = {size.n_labels:,} labels, d = {size.n_features:,} "
            f"features, k = {size.n_neighbors}; the limit is {format_bytes(limit)} ({source}; "
            f"{_how_to_change(who, max_memory)}). Use " + alternative + "."
        )
    if action == "fit" and seconds > float(get_config()["warn_seconds"]):
        key = (who, action, round(seconds))
        if key not in _WARNED:
            _WARNED.add(key)
            warnings.warn(
                f"{who}.fit is estimated to take about {format_seconds(seconds)} (its dense products, "
                f"{need.flops:.3g} flops at {rate}; mlknn.set_config(blas_flops=...) sets the rate) and "
                f"{format_bytes(need.bytes)} of memory, for n = {size.n_train:,} rows and "
                f"q = {size.n_labels:,} labels.",
                LongFitWarning,
                stacklevel=4,
            )
    return need

