"""``mlknn run``: fit and evaluate one algorithm on one dataset."""

import time

import numpy as np
import typer
from rich.console import Console

from ._format import format_metrics_table


def load_split(data_name, random_state=0):
    """Train/test data for a CLI run.

    No name: the simulated 2-D dataset of seed 000 (no files needed), split 50/50.
    A name or path: the source's fixed train/test split when it has one, else a
    seeded 50/50 split.

    Returns
    -------
    X_train, X_test, Y_train, Y_test, description
    """
    from sklearn.model_selection import train_test_split

    from ..datasets import load, make_simulated_2d

    if data_name is None:
        data = make_simulated_2d(random_state=random_state)
        parts = train_test_split(data.X, data.Y, test_size=0.5, random_state=random_state)
        return (*parts, f"{data.name} (built-in, seeded 50/50 split)")
    try:
        train = load(data_name, split="train")
        test = load(data_name, split="test")
        return train.X, test.X, train.Y, test.Y, f"{train.name} (fixed train/test split)"
    except ValueError as exc:
        if "split" not in str(exc):
            raise
    data = load(data_name)
    parts = train_test_split(data.X, data.Y, test_size=0.5, random_state=random_state)
    return (*parts, f"{data.name} (seeded 50/50 split, random_state={random_state})")


def run_command(
    data: str = typer.Option(None, "--data", help="Dataset name in $MLKNN_DATA or path to an .arff file; default: the built-in simulated 2-D data."),
    algorithm: str = typer.Option("mlknn", "--algorithm", "-a", help="Algorithm name (mlknn, dmlknn, mlhiknn, brknn, ...)."),
    k: int = typer.Option(10, "--k", help="Number of neighbours (kNN algorithms)."),
    seed: int = typer.Option(0, "--seed", help="Random seed for the split and the algorithm."),
):
    """Fit one algorithm, evaluate it on held-out data and print every metric."""
    from .._registry import KNN_ESTIMATORS, get_estimator_class
    from ..metrics import GREATER_IS_BETTER, evaluate

    console = Console()
    X_train, X_test, Y_train, Y_test, description = load_split(data, seed)
    cls = get_estimator_class(algorithm)
    params = {}
    if algorithm.lower() in KNN_ESTIMATORS or "n_neighbors" in cls().get_params():
        params["n_neighbors"] = k
    if "random_state" in cls().get_params():
        params["random_state"] = seed
    estimator = cls(**params)
    start = time.perf_counter()
    estimator.fit(X_train, Y_train)
    fit_s = time.perf_counter() - start
    start = time.perf_counter()
    Y_pred = estimator.predict(X_test)
    Y_score = estimator.predict_proba(X_test) if hasattr(estimator, "predict_proba") else None
    predict_s = time.perf_counter() - start
    metrics = evaluate(Y_test, np.asarray(Y_pred), Y_score)
    title = f"{type(estimator).__name__}({', '.join(f'{a}={b}' for a, b in params.items())}) on {description}"
    console.print(format_metrics_table(metrics, title=title, greater_is_better=GREATER_IS_BETTER))
    console.print(
        f"train {X_train.shape[0]} x {X_train.shape[1]}, test {X_test.shape[0]}, "
        f"{Y_train.shape[1]} labels; fit {fit_s:.2f} s, predict {predict_s:.2f} s"
    )
