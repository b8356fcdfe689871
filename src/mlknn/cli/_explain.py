"""``mlknn explain DATA --row I [--algorithm NAME] [--k K]``: why one row got its labels.

Fits the estimator on every row of the dataset but row I (the leave-one-out
prediction of row I: the row takes no part in the statistics it is explained
by), explains row I with ``est.explain``, and prints two tables: its top labels
with posterior, evidence, the estimator's terms, the decision and whether the
row truly has the label; and its neighbours (dataset row numbers) with their
distances and labels, by name.
"""

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from ._format import format_number


def format_explanation_tables(
    rows: Mapping[str, Any], title: str, true_labels: Sequence[int] = ()
) -> list[Table]:
    """The label and neighbour tables of ``Explanation.summary_rows`` (pure: no printing).

    Parameters
    ----------
    rows : dict
        ``Explanation.summary_rows(i, top)``.
    title : str
    true_labels : sequence of int
        The row's true labels (a ``true`` column), when known.

    Returns
    -------
    list of rich Table
    """
    truth = set(int(t) for t in true_labels)
    labels = Table(title=title)
    label_keys = [k for k in rows["labels"][0] if k not in ("label", "name")] if rows["labels"] else []
    labels.add_column("label", no_wrap=True)
    for key in label_keys:
        labels.add_column(key, justify="right", no_wrap=True, min_width=len(key))
    labels.add_column("true", justify="right")
    for rec in rows["labels"]:
        cells = [_cell(rec[key]) for key in label_keys]
        labels.add_row(str(rec["name"]), *cells, "yes" if rec["label"] in truth else "no")
    neighbours = Table(title="neighbours (dataset rows, nearest first)")
    neighbour_keys = [k for k in rows["neighbours"][0] if k != "labels"] if rows["neighbours"] else []
    for key in neighbour_keys:
        neighbours.add_column(key, justify="right")
    neighbours.add_column("labels", overflow="fold")
    for rec in rows["neighbours"]:
        neighbours.add_row(*(_cell(rec[key]) for key in neighbour_keys), ", ".join(rec["labels"]) or "-")
    return [labels, neighbours]


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return format_number(value, 4)
    return str(value)


def explain_command(
    data: str = typer.Argument(..., help="Dataset name (MANIFEST in $MLKNN_DATA) or path to an .arff file."),
    row: int = typer.Option(..., "--row", help="The dataset row to explain (0-based)."),
    algorithm: str = typer.Option("mlknn", "--algorithm", "-a", help="A kNN algorithm (mlknn, dmlknn, mlhiknn, "
                                  "bmlknn, nc, brknn, brknna, brknnb, iblr)."),
    k: int = typer.Option(10, "--k", "-k", min=1, help="Number of neighbours k."),
    top: int = typer.Option(5, "--top", min=1, help="Labels shown: the top ones by posterior, plus every "
                            "predicted one."),
    scaling: str = typer.Option(None, "--scaling", help="none, minmax or zscore, fitted on the other rows."),
    param: list[str] = typer.Option(None, "--param", help="An estimator parameter, name=value (repeatable)."),
    seed: int = typer.Option(0, "--seed", help="random_state of the estimator."),
) -> None:
    """Explain one row: its top labels with the evidence behind them, and its neighbours."""
    import numpy as np

    from .._registry import KNN_ESTIMATORS
    from ..datasets import load
    from ._run import _estimator_class, _preprocess, _single_params

    if algorithm.lower() not in KNN_ESTIMATORS:
        _estimator_class(algorithm)  # an unknown name: its did-you-mean error
        raise ValueError(
            f"The '--algorithm' option of mlknn explain must be a kNN algorithm ({', '.join(KNN_ESTIMATORS)}); "
            f"{algorithm!r} has no neighbours to show."
        )
    ds = load(data)
    n = ds.X.shape[0]
    if not 0 <= row < n:
        raise ValueError(f"The '--row' option must be in [0, {n - 1}] ({ds.name} has {n} rows). Got {row}.")
    others = np.flatnonzero(np.arange(n) != row)
    X_train, X_row, prep = _preprocess(ds.X[others], ds.X[[row]], ds.Y[others], scaling, None)
    cls = _estimator_class(algorithm)
    params = _single_params(cls, algorithm, k, seed, None, param)
    estimator = cls(**params).fit(X_train, ds.Y[others])
    # Neighbour indices back to dataset rows, and their labels from the whole dataset.
    explanation = estimator.explain(X_row)
    explanation = dataclasses.replace(explanation, indices=others[explanation.indices], train_labels=ds.Y,
                                      label_names=list(ds.label_names))
    y_row = ds.Y[[row]]
    truth = np.flatnonzero(y_row.toarray() if hasattr(y_row, "toarray") else np.asarray(y_row)).tolist()
    title = f"{explanation.estimator} on {ds.name}, row {row} (fitted on the other {n - 1} rows; {prep})"
    console = Console()
    for table in format_explanation_tables(explanation.summary_rows(0, top), title, truth):
        console.print(table)
    described = {"evidence": explanation.evidence_description, **explanation.term_descriptions()}
    for name, text in described.items():
        console.print(f"{name}: {text}", markup=False, highlight=False, soft_wrap=True)
