"""``mlknn hubness NAME [--k 10]``: S_k, H_occ^k and A_occ^k of a dataset.

The measures of Teng et al.'s (2025) Table 1 (eqs 1, 26, 27), from the exact k-NN graph of
the dataset's features as loaded (no scaling), Euclidean metric: leave-one-out by
default, or with each point as its own first neighbour (``--include-self``, the
convention that reproduces Table 1's values).
"""

from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:  # imported lazily: mlknn.hubness pulls in scikit-learn, which --help does not need
    from ..hubness import HubnessStats


def format_hubness_table(name: str, stats: "HubnessStats", include_self: bool = False) -> Table:
    """A rich table of one dataset's hubness measures (pure: no printing)."""
    table = Table(title=f"hubness of {name} (k = {stats.n_neighbors}{', self included' if include_self else ''})")
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_row("n", str(stats.n_samples))
    table.add_row("S_k (skewness of O_k, eq 1)", f"{stats.skewness:.2f}")
    table.add_row("H_occ (hub occurrence, eq 26; hub: O_k > 2k)", f"{stats.hub_occurrence:.2f}")
    table.add_row("A_occ (antihub occurrence, eq 27)", f"{stats.antihub_occurrence:.4f}")
    table.add_row("max O_k", str(stats.max_occurrence))
    return table


def hubness_command(
    name_or_path: str = typer.Argument(..., help="Dataset name (MANIFEST in $MLKNN_DATA) or path to an .arff file."),
    k: int = typer.Option(10, "--k", "-k", min=1, help="Number of neighbours k (Teng et al. 2025 use 10)."),
    include_self: bool = typer.Option(
        False,
        "--include-self",
        help="Count each point as its own first neighbour (k - 1 others), the convention that "
        "reproduces Teng et al.'s (2025) Table 1; default: the leave-one-out definition of the text.",
    ),
    scaling: str = typer.Option(
        "none", "--scaling",
        help="none, minmax or zscore, fitted on the whole dataset before the search (the report's hubness "
        "uses the grid's scaling; hubness depends on it).",
    ),
) -> Any:
    """Print the hubness of a dataset: S_k, H_occ and A_occ (Teng et al. 2025, Table 1)."""
    from ..datasets import load
    from ..hubness import hubness_stats
    from ._run import check_choice, print_if_unscaled

    check_choice("--scaling", scaling, ("none", "minmax", "zscore"))
    data = load(name_or_path)
    X = data.X
    console = Console()
    if scaling != "none":
        from ..preprocessing import FoldPreprocessor

        X = FoldPreprocessor(scaling, None, 0).fit(X, data.Y).transform(X)
    else:
        print_if_unscaled(X, console, "", "the neighbours (and the hubness) follow the widest features")
    stats = hubness_stats(X, n_neighbors=k, include_self=include_self)
    title = getattr(data, "name", name_or_path) + ("" if scaling == "none" else f", {scaling} scaled")
    console.print(format_hubness_table(title, stats, include_self))
    return stats
