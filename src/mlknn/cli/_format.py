"""Pure formatting helpers: data in, rich renderables out (no printing here)."""

import math
from collections.abc import Iterable, Mapping, Sequence

from rich.table import Table


def format_number(value: object, digits: int = 4) -> str:
    """A float with ``digits`` decimals; NaN as a dash."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, (int,)) and not isinstance(value, bool):
        return str(value)
    return f"{value:.{digits}f}"


def format_metrics_table(
    metrics: Mapping[str, object],
    title: str = "metrics",
    greater_is_better: Mapping[str, bool] | None = None,
) -> Table:
    """A two-column table metric -> value (with an arrow telling the direction)."""
    table = Table(title=title)
    table.add_column("metric")
    table.add_column("value", justify="right")
    for name, value in metrics.items():
        arrow = ""
        if greater_is_better is not None and name in greater_is_better:
            arrow = " (higher better)" if greater_is_better[name] else " (lower better)"
        table.add_row(name + arrow, format_number(value))
    return table


def _cell(value: object, digits: int) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return format_number(value, digits)
    return str(value)


def format_records_table(
    records: Iterable[Mapping[str, object]],
    columns: Sequence[str],
    title: str | None = None,
    digits: int = 4,
    compact: bool = False,
) -> Table:
    """A table from a list of dicts, one row each, in the order of ``columns``.

    ``compact``: no box and one space of padding (names are never cut), so that
    the dataset list reads at 80 columns.
    """
    from rich import box

    if compact:
        table = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 1))
    else:
        table = Table(title=title)
    for col in columns:
        left = col in ("name", "format", "dataset")
        table.add_column(col, justify="left" if left else "right", no_wrap=left, overflow="fold")
    for rec in records:
        table.add_row(*(_cell(rec.get(c, ""), digits) for c in columns))
    return table
