"""``mlknn datasets list``, ``mlknn datasets info NAME`` and ``mlknn datasets fetch NAME``."""

import typer
from rich.console import Console

from ._format import format_records_table

app = typer.Typer(help="Benchmark datasets found in $MLKNN_DATA.", no_args_is_help=True, rich_markup_mode=None)

_COLUMNS = ["name", "n", "d", "q", "lcard", "ldens", "ldiv", "pldiv", "sparse"]


@app.command("list")
def list_command() -> None:
    """List the datasets of MANIFEST.tsv with their published statistics (or, with no dataset
    folder yet, the datasets that `mlknn datasets fetch NAME` can download)."""
    from ..datasets import list_datasets

    columns = ["name", "format"] + [c for c in _COLUMNS[1:] if c != "pldiv"]
    try:
        rows = list_datasets()
    except RuntimeError:  # no MLKNN_DATA and nothing fetched yet
        from ..datasets import fetchable_datasets, pinned_dataset

        rows = [dict(pinned_dataset(name).row) for name in fetchable_datasets()]
        console = Console()
        console.print(format_records_table(rows, columns, title="datasets that can be fetched", digits=3, compact=True))
        console.print("No dataset folder yet: `mlknn datasets fetch NAME` downloads one into the user cache (or set "
                      "MLKNN_DATA to a folder that holds MANIFEST.tsv).", markup=False, highlight=False, soft_wrap=True)
        return
    Console().print(format_records_table(rows, columns, title="datasets", digits=3, compact=True))


@app.command("info")
def info_command(name: str = typer.Argument(..., help="Dataset name (MANIFEST) or path to an .arff file.")) -> None:
    """Load a dataset and print the statistics computed from its data."""
    from ..datasets import dataset_stats, load

    data = load(name)
    stats = dataset_stats(data.Y, data.X)
    row = {"name": data.name, **stats, "sparse": hasattr(data.X, "tocsr")}
    Console().print(format_records_table([row], _COLUMNS, title=f"{data.name}"))


@app.command("fetch")
def fetch_command(
    name: str = typer.Argument(..., help="Dataset to download (emotions, yeast, medical, ..., yeast-meka)."),
    data_home: str = typer.Option(None, "--data-home", help="Folder to download into (default: $MLKNN_DATA, else the user cache)."),
    base_url: str = typer.Option(None, "--base-url", help="Mirror of raw.githubusercontent.com (owner/repo/commit/path layout)."),
) -> None:
    """Download a benchmark dataset, checked against its pinned SHA-256."""
    from ..datasets import fetch, pinned_dataset

    name = pinned_dataset(name).name
    home = fetch(name, data_home=data_home, base_url=base_url)
    Console().print(f"{name}: ready in {home / name} (load it with data_home={str(home)!r} or MLKNN_DATA={home})", markup=False, highlight=False, soft_wrap=True)
