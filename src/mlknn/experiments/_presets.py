"""Reproduction presets: one per seed paper.

A preset knows the paper's protocol and parameters, which of its datasets are
in ``$MLKNN_DATA``, how its columns map to registry algorithms, and where its
published tables are (``published/*.json``, transcribed from the paper's texts).
:func:`reproduce` runs the experiment into a results database, dataset by
dataset, and compares every published cell with ours:

``z = (our mean - paper mean) / paper std``

(the paper's standard deviation, floored at 0.0005, half the unit of the
published 3-decimal values; the BML-kNN paper publishes no standard deviations, so
there z uses ours, floored at half a unit of its 2-decimal rounding, and says
so). See docs/reproduction.md for the results
and the reasons of the gaps.
"""

import csv
import json
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from os import PathLike
from pathlib import Path
from typing import Any

from ._preset_model import STD_FLOOR, Cell, PaperColumn, Preset
from ._preset_table import PRESETS

__all__ = ["PRESETS", "STD_FLOOR", "PaperColumn", "Preset", "available_datasets", "get_preset", "reproduce",
           "write_comparison"]  # fmt: skip


def get_preset(name: str) -> Preset:
    """The preset of a name.

    Parameters
    ----------
    name : str
        A key of :data:`PRESETS`.

    Returns
    -------
    Preset
        The preset.

    Raises
    ------
    ValueError
        If ``name`` is not a preset (the message lists the presets).

    See Also
    --------
    reproduce : Run a preset.

    Examples
    --------
    >>> from mlknn.experiments import get_preset
    >>> preset = get_preset("mlhiknn2025")
    >>> preset.k, preset.protocol.name, preset.metrics
    (20, '5x2', ('macro_auc',))
    """
    if name not in PRESETS:
        raise ValueError(f"Unknown preset {name!r}. Known presets: {', '.join(PRESETS)}.")
    return PRESETS[name]


def available_datasets(names: Iterable[str], data_home: str | PathLike[str] | None = None) -> list[str]:
    """The names that exist in the dataset folder (``$MLKNN_DATA``)."""
    from ..datasets import list_datasets

    have = {str(d["name"]).lower() for d in list_datasets(data_home)}
    return [n for n in names if n.lower() in have]


#: The ``meta`` key under which :func:`reproduce` stores its comparison (JSON) for the report.
COMPARISON_META = "reproduce_comparison"
#: The columns of a comparison row (comparison.csv, and the stored comparison).
COMPARISON_COLUMNS = ("table", "dataset", "metric", "ties", "paper_algorithm", "ours", "paper_mean", "paper_std",
                      "our_mean", "our_std", "n_folds", "diff", "z", "sd_source", "within_2sd")  # fmt: skip


def write_comparison(rows: Iterable[Cell], out_dir: str | PathLike[str]) -> tuple[Path, Path]:
    """comparison.csv and comparison.md in ``out_dir``; returns their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    cols = list(COMPARISON_COLUMNS)
    with open(out / "comparison.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=cols)
        w.writeheader()
        for r in rows:
            w.writerow({k: r[k] for k in cols})
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        lines.append("| " + " | ".join(_cell(r[k]) for k in cols) + " |")
    (out / "comparison.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out / "comparison.csv", out / "comparison.md"


def _warn_missing_tie_variants(rows: Sequence[Cell], db_path: Path) -> None:
    """Warn when cells read under a tie rule found no stored variant: cells computed before
    the variants were stored are resumed as they are, without them (like ``at_k``)."""
    empty = [r for r in rows if r.get("ties") not in (None, "pessimistic") and r["n_folds"] == 0]
    if not empty:
        return
    import warnings

    warnings.warn(
        f"{len(empty)} published cell(s) of {empty[0]['dataset']!r} are read under a tie rule "
        f"(e.g. {empty[0]['stored_metric']!r}) that the results database {str(db_path)!r} does not hold: its cells "
        "were computed before the ranking measures were stored under several tie rules, and resuming does not "
        "recompute them. Use a new --out (or --db) to compute them.",
        UserWarning,
        stacklevel=3,
    )


def _cell(v: object) -> str:
    if isinstance(v, float):
        return "-" if math.isnan(v) else f"{v:.3f}"
    if v is None:
        return "-"
    return str(v)


def reproduce(name: str, *, datasets: Sequence[str] | None = None, quick: bool = False,
              tables: Sequence[str] | None = None, all_algorithms: bool = False, scaling: str | None = None,
              db: str | PathLike[str] | None = None, out_dir: str | PathLike[str] | None = None, n_jobs: int = 1,
              progress: Any = None, on_dataset: Callable[[str, list[Cell]], object] | None = None,
              data_home: str | PathLike[str] | None = None,
              feature_selection: float | str | None = "preset") -> dict[str, Any]:  # fmt: skip
    """Run a preset on the datasets present and compare with the paper.

    Parameters
    ----------
    name : str
        A key of :data:`PRESETS`.
    datasets : sequence of str, optional
        Default: every dataset of the preset found in ``$MLKNN_DATA``.
    quick : bool, default=False
        Fewer repetitions (see each preset's ``quick_repeats``).
    tables : sequence of str, optional
        Published tables to reproduce (``"Table 3"`` or ``"3"``); default the
        preset's main table(s).
    all_algorithms : bool, default=False
        Also run the non-kNN baselines of the tables.
    scaling : str, optional
        Override the preset's feature scaling.
    feature_selection : "preset", None, float or int, default="preset"
        Override the preset's chi-square selection where it uses one (None: none).
    db : path, optional
        Default ``<out_dir>/results.db``.
    out_dir : path, optional
        Default ``results/reproduce-<name>``.
    n_jobs : int, default=1
        Fold tasks computed in parallel (joblib), as in :func:`run_experiment`.
    progress : optional, see :func:`run_experiment`
        As in :func:`run_experiment`.
    on_dataset : callable(dataset, comparison_rows), optional
        Called after each dataset (the CLI prints its cells there).
    data_home : str or path-like, optional
        Dataset folder; default ``$MLKNN_DATA``.

    Returns
    -------
    dict
        ``rows`` (comparison dicts), ``config``, ``columns``, ``skipped``
        (algorithms not importable), ``db``, ``csv``, ``markdown``.

    See Also
    --------
    PRESETS : The presets by name.
    get_preset : One preset.
    run_experiment : The runner behind it.

    Examples
    --------
    >>> from mlknn.experiments import reproduce
    >>> out = reproduce("dmlknn2011", datasets=["emotions"], quick=True)  # doctest: +SKIP
    >>> out["markdown"]  # doctest: +SKIP
    """
    from .._registry import available_estimators
    from ._results import ResultsDB
    from ._runner import run_experiment

    preset = get_preset(name)
    if tables:
        tables = tuple(t if str(t).lower().startswith("table") else f"Table {t}" for t in tables)
        unknown = set(tables) - set(preset.table_ids())
        if unknown:
            raise ValueError(f"Preset {name!r} has no published {sorted(unknown)}; it has {preset.table_ids()}.")
    if datasets:
        bad = [d for d in datasets if d not in preset.datasets]
        if bad:
            raise ValueError(
                f"The 'datasets' option names {bad}, which are not in the published tables of {name!r} "
                f"({', '.join(preset.datasets)})."
            )
        missing = [d for d in datasets if d not in available_datasets(datasets, data_home)]
        if missing:
            raise ValueError(f"Dataset(s) {missing} are not in the dataset folder ($MLKNN_DATA).")
    else:
        datasets = available_datasets(preset.datasets, data_home)
        if not datasets:
            raise ValueError(f"None of the datasets of {name!r} ({', '.join(preset.datasets)}) is in $MLKNN_DATA.")
    available = set(available_estimators())
    wanted = preset.columns_for(tables or preset.default_tables, all_algorithms)
    skipped = sorted({c.algorithm for c in wanted if c.algorithm.split(":")[0] not in available})
    config, columns = preset.config(datasets, quick=quick, tables=tables, all_algorithms=all_algorithms,
                                    scaling=scaling, available=available,
                                    feature_selection=feature_selection)  # fmt: skip
    out_dir = Path(out_dir or Path("results") / f"reproduce-{name}")
    out_dir.mkdir(parents=True, exist_ok=True)
    db_path = Path(db or out_dir / "results.db")
    all_rows = []
    with ResultsDB(db_path) as rdb:
        for ds in datasets:
            sub = replace(config, datasets=(ds,))
            run_experiment(sub, rdb, n_jobs=n_jobs, progress=progress, data_home=data_home)
            rows = preset.compare(rdb.rows("dataset = ?", (ds,)), sub, columns, tables)
            _warn_missing_tie_variants(rows, db_path)
            all_rows.extend(rows)
            if on_dataset is not None:
                on_dataset(ds, rows)
    csv_path, md_path = write_comparison(all_rows, out_dir)
    with ResultsDB(db_path) as rdb:  # so that `mlknn report` of this database shows the comparison
        rdb.set_meta(COMPARISON_META, json.dumps({"preset": name, "title": preset.title, "rows": [
            {k: r.get(k) for k in COMPARISON_COLUMNS} for r in all_rows]}, default=float))
    return {"rows": all_rows, "config": config, "columns": columns, "skipped": skipped, "db": db_path,
            "csv": csv_path, "markdown": md_path, "preset": preset}  # fmt: skip
