"""``mlknn datasets list`` and ``mlknn datasets info NAME``."""

import typer
from rich.console import Console

from ._format import format_records_table

app = typer.Typer(help="Benchmark datasets found in $MLKNN_DATA.", no_args_is_help=True)

_COLUMNS = ["name", "n", "d", "q", "lcard", "ldens", "ldiv", "pldiv", "sparse"]


@app.command("list")
def list_command():
    """List the datasets of MANIFEST.tsv with their published statistics."""
    from ..datasets import list_datasets

    rows = list_datasets()
    Console().print(format_records_table(rows, ["name", "format"] + [c for c in _COLUMNS[1:] if c != "pldiv"], title="datasets"))


@app.command("info")
def info_command(name: str = typer.Argument(..., help="Dataset name (MANIFEST) or path to an .arff file.")):
    """Load a dataset and print the statistics computed from its data."""
    from ..datasets import dataset_stats, load

    data = load(name)
    stats = dataset_stats(data.Y, data.X)
    stats = {"name": data.name, **stats, "sparse": "yes" if hasattr(data.X, "tocsr") else "no"}
    Console().print(format_records_table([stats], _COLUMNS, title=f"{data.name}"))
