"""``mlknn export``, ``mlknn report`` and ``mlknn reproduce``."""

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table


def export_command(
    db: Path = typer.Argument(..., help="Results database (SQLite) written by `mlknn run ... --db`."),
    csv: str = typer.Option("-", "--csv", help="CSV file to write; - (the default) writes to standard output."),
    wide: bool = typer.Option(False, "--wide", help="One row per cell with a column per parameter and per measure (a tidy table for pandas, R or a spreadsheet); default one row per cell x metric."),
) -> None:
    """Export every result of a database to CSV (a file, or standard output)."""
    import sys
    import tempfile

    from ..experiments import ResultsDB

    if not db.exists():
        raise FileNotFoundError(f"The results database {str(db)!r} does not exist.")
    with ResultsDB(db) as rdb:
        if wide:
            n = _write_wide(rdb.wide_rows(), csv)
            if csv != "-":
                Console(stderr=True).print(f"{n} cells -> {csv}", markup=False, highlight=False)
            return
        if csv != "-":
            n = rdb.to_csv(csv)
            Console(stderr=True).print(f"{n} rows -> {csv}", markup=False, highlight=False)
            return
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "results.csv"
            n = rdb.to_csv(path)
            with open(path, encoding="utf-8", newline="") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), ""):
                    sys.stdout.write(chunk)
    sys.stdout.flush()


def _write_wide(rows: Sequence[Mapping[str, Any]], target: str) -> int:
    """The wide rows as CSV into a file, or standard output for ``-``; returns the row count."""
    import csv as csv_module
    import sys

    columns = list(rows[0]) if rows else ["dataset", "algorithm"]

    def write(fh: Any) -> None:
        writer = csv_module.DictWriter(fh, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({c: "" if row[c] is None or row[c] != row[c] else row[c] for c in columns})

    if target == "-":
        write(sys.stdout)
        sys.stdout.flush()
    else:
        with open(target, "w", newline="", encoding="utf-8") as fh:
            write(fh)
    return len(rows)


def report_command(
    db: Path = typer.Argument(..., help="Results database (SQLite)."),
    out: Path = typer.Option(Path("report"), "--out", help="Output folder (report.md, report.html, figures/)."),
    metrics: str = typer.Option(None, "--metrics", help="Comma-separated metrics (keys of mlknn.metrics.evaluate); default all."),
    alpha: float = typer.Option(0.05, "--alpha", help="Significance level of the tests."),
    dataset_figures: bool = typer.Option(True, "--dataset-figures/--no-dataset-figures", help="k-occurrence and label co-occurrence figures (load the datasets)."),
    min_datasets: int = typer.Option(10, "--min-datasets", help="Fewest datasets for the rank tests across datasets (Friedman, Nemenyi, Wilcoxon); Demsar (2006) advises more than 10."),
) -> None:
    """Write the Markdown and self-contained HTML report of a results database."""
    from ..report import build_report

    if not db.exists():
        raise FileNotFoundError(f"The results database {str(db)!r} does not exist.")
    ms = [m.strip() for m in metrics.split(",") if m.strip()] if metrics else None
    if min_datasets < 2:
        raise ValueError(f"The '--min-datasets' option must be an int >= 2. Got {min_datasets} instead.")
    paths = build_report(db, out, metrics=ms, alpha=alpha, dataset_figures=dataset_figures, min_datasets=min_datasets)
    Console().print(f"{paths['html']} ({len(paths['figures'])} figures), {paths['markdown']}")


def _fmt(v: float | None, digits: int = 3) -> str:
    if v is None or (isinstance(v, float) and v != v):
        return "-"
    return f"{v:.{digits}f}"


def comparison_table(rows: Sequence[Mapping[str, Any]], title: str) -> Table:
    t = Table(title=title)
    for c in ("table", "dataset", "metric", "paper", "ours", "paper mean ± sd", "our mean ± sd", "diff", "z", "within 2 sd"):
        t.add_column(c, justify="left" if c in ("table", "dataset", "metric", "paper", "ours") else "right")
    for r in rows:
        ok = r["within_2sd"]
        flag = "-" if ok is None else ("yes" if ok else "[red]no[/]")
        z = _fmt(r["z"], 2) + ("" if r["sd_source"] == "paper" else " (our sd)")
        # The readings carry brackets ("MLKNN [scikit-multilearn reading]",
        # "coverage[mulan]"): escaped, or rich takes them for markup and drops them.
        t.add_row(
            escape(str(r["table"])), escape(str(r["dataset"])), escape(str(r["metric"])),
            escape(str(r["paper_algorithm"])), escape(str(r["ours"])),
            f"{_fmt(r['paper_mean'])} ± {_fmt(r['paper_std'])}",
            f"{_fmt(r['our_mean'])} ± {_fmt(r['our_std'])} (n={r['n_folds']})",
            _fmt(r["diff"]), z, flag,
        )  # fmt: skip
    return t


def reproduce_command(
    preset: str = typer.Argument(..., help="mlhiknn2025, dmlknn2011 or bmlknn (BML-kNN paper)."),
    datasets: str = typer.Option(None, "--datasets", help="Comma-separated datasets (default: all of the paper's found in $MLKNN_DATA)."),
    quick: bool = typer.Option(False, "--quick", help="Fewer repetitions of the protocol."),
    tables: str = typer.Option(None, "--tables", help="Published tables to reproduce, e.g. 3,12,15 (default: the main one(s))."),
    all_algorithms: bool = typer.Option(False, "--all-algorithms", help="Also the non-kNN baselines of the tables."),
    scaling: str = typer.Option(None, "--scaling", help="Override the preset's feature scaling (none, minmax, zscore)."),
    feature_selection: str = typer.Option(None, "--feature-selection", help="Override the preset's chi-square selection where it has one: none, a fraction or a count."),
    db: Path = typer.Option(None, "--db", help="Results database (default <out>/results.db)."),
    out: Path = typer.Option(None, "--out", help="Output folder (default results/reproduce-<preset>)."),
    jobs: int = typer.Option(1, "--jobs", "-j", help="Fold tasks in parallel."),
) -> dict[str, Any]:
    """Run a paper's protocol on the datasets present and compare with its tables, cell by cell."""
    import sys

    from ..experiments import get_preset, reproduce
    from ._run import RichProgress

    # A pipe or a log file gets rich's 80 columns by default: too narrow for the cells.
    console = Console(width=None if sys.stdout.isatty() else 170)
    p = get_preset(preset)
    console.print(f"[bold]{p.title}[/]")
    for note in p.notes:
        console.print(f"  - {note}")
    ds = [d.strip() for d in datasets.split(",") if d.strip()] if datasets else None
    tb = [t.strip() for t in tables.split(",") if t.strip()] if tables else None

    def show(dataset: str, rows: Sequence[Mapping[str, Any]]) -> None:
        console.print(comparison_table(rows, f"{preset}: {dataset}"))

    fs: float | str | None = "preset"
    if feature_selection is not None:
        from ..experiments import parse_value

        fs = parse_value(feature_selection)
    with RichProgress(console, preset) as progress:
        res: dict[str, Any] = reproduce(preset, datasets=ds, quick=quick, tables=tb, all_algorithms=all_algorithms, scaling=scaling,
                        db=db, out_dir=out, n_jobs=jobs, progress=progress, on_dataset=show,
                        feature_selection=fs)  # fmt: skip
    rows = res["rows"]
    scored = [r for r in rows if r["within_2sd"] is not None]
    n_ok = sum(1 for r in scored if r["within_2sd"])
    if res["skipped"]:
        console.print(f"not run (estimator not importable): {', '.join(res['skipped'])}")
    console.print(
        f"{n_ok}/{len(scored)} published cells within 2 sd. Saved {res['csv']} and {res['markdown']}; "
        f"results in {res['db']} (mlknn report {res['db']})."
    )
    return res


def register(app: typer.Typer) -> None:
    """Add the commands to the ``mlknn`` typer app."""
    app.command("export")(export_command)
    app.command("report")(report_command)
    app.command("reproduce")(reproduce_command)
