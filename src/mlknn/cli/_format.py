"""Pure formatting helpers: data in, rich renderables out (no printing here)."""

import math

from rich.table import Table


def format_number(value, digits=4):
    """A float with ``digits`` decimals; NaN as a dash."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, (int,)) and not isinstance(value, bool):
        return str(value)
    return f"{value:.{digits}f}"


def format_metrics_table(metrics, title="metrics", greater_is_better=None):
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


def format_records_table(records, columns, title=None):
    """A table from a list of dicts, one row each, in the order of ``columns``."""
    table = Table(title=title)
    for col in columns:
        table.add_column(col, justify="left" if col in ("name", "format", "dataset") else "right")
    for rec in records:
        table.add_row(*(format_number(rec.get(c)) if isinstance(rec.get(c), float) else str(rec.get(c, "")) for c in columns))
    return table
