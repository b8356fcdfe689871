"""Checks of a grid before it runs, and the record of a cell that fails while it runs.

:func:`grid_problems` builds every algorithm configuration and checks its parameters
(the estimator's own constraints, and k against each dataset's smallest training part)
so that a grid reports every impossible cell at once, before any fold is computed.
:func:`error_record` turns an exception raised by one cell into a row of the results
database's ``warnings`` table (stage ``"error"``): the run records it and goes on.
"""

from collections.abc import Iterable, Sequence
from typing import Any

from ._config import AlgorithmSpec

#: The ``stage`` of a recorded cell failure in the ``warnings`` table.
ERROR_STAGE = "error"


class GridConfigurationError(ValueError):
    """A grid whose cells cannot all run as configured (raised before any fold is computed).

    Parameters
    ----------
    problems : sequence of str
        One line per problem.

    Attributes
    ----------
    problems : list of str
        One line per problem (configuration, and the dataset where it applies).
    """

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        lines = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(f"The grid cannot run as configured; nothing was computed. {len(self.problems)} problem(s):\n"
                         f"{lines}")


def _message(exc: BaseException) -> str:
    """An exception's message on one line, without its class name (which means nothing to a user)."""
    return " ".join(str(exc).split()) or type(exc).__name__


def grid_problems(
    specs: Sequence[AlgorithmSpec], seed: int, smallest_train: Iterable[tuple[str, int]]
) -> list[str]:
    """Every reason a cell of the grid cannot run, one line each (empty: the grid can run).

    Parameters
    ----------
    specs : sequence of AlgorithmSpec
        The grid's algorithm configurations.
    seed : int
        The protocol's seed (the estimators' ``random_state``).
    smallest_train : iterable of (str, int)
        Each dataset with the size of its smallest training part still to compute.

    Returns
    -------
    list of str
    """
    from ._cell import is_knn

    problems: list[str] = []
    built: list[tuple[AlgorithmSpec, Any]] = []
    for spec in specs:
        try:
            est = spec.build(seed)
            est._validate_params()
        except (ValueError, TypeError) as exc:
            problems.append(f"{spec.label()}: {_message(exc)}")
            continue
        built.append((spec, est))
    for dataset, n_train in smallest_train:
        for spec, est in built:
            if not is_knn(est):
                continue
            try:
                width = est.search_width(n_train)
            except (ValueError, TypeError) as exc:
                problems.append(f"{spec.label()} on {dataset!r}: {_message(exc)}")
                continue
            if est.n_neighbors > n_train - 1 or width > n_train - 1:
                problems.append(
                    f"The 'n_neighbors' parameter of {spec.label()} must be <= n_train - 1 = {n_train - 1} on "
                    f"dataset {dataset!r} (its smallest training part). Got {est.n_neighbors} instead "
                    f"(searching {width} neighbours)."
                )
    return problems


def error_record(exc: BaseException) -> dict[str, Any]:
    """The ``warnings`` row fields (without the cell's) of a cell that raised ``exc``."""
    category = f"{type(exc).__module__}.{type(exc).__qualname__}"
    return {"stage": ERROR_STAGE, "category": category, "message": _message(exc), "count": 1}
