"""``mlknn run``: one quick run, or an experiment grid into a results database.

* ``mlknn run`` (no dataset): the built-in simulated data of seed 000, one
  algorithm, prints every metric. ``--data NAME --algorithm A --k 10``: the
  same on one dataset (its fixed train/test split when it has one).
* ``mlknn run DATASET... --db FILE [--algorithms A,B --protocol 5x2 --k 10,20
  --param name=v1,v2 --config FILE.toml --jobs N]``: the grid of datasets x
  algorithm configurations x folds, written to a SQLite database cell by cell;
  rerunning the same command completes only the missing cells.
"""

import time
from pathlib import Path

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


def _clean(value):
    """A parameter value, or its default when the function was called directly
    (``ctx.invoke``) and typer left its OptionInfo / ArgumentInfo in place."""
    info_types = tuple(
        t for t in (getattr(typer.models, "OptionInfo", None), getattr(typer.models, "ArgumentInfo", None)) if t
    )
    if info_types and isinstance(value, info_types):
        return value.default if value.default is not ... else None
    return value


def _split_list(text, what):
    if text is None:
        return []
    if isinstance(text, (list, tuple)):
        items = []
        for t in text:
            items += _split_list(t, what)
        return items
    return [t.strip() for t in str(text).split(",") if t.strip()]


def _parse_ks(text):
    out = []
    for t in _split_list(text, "k"):
        try:
            v = int(t)
        except ValueError:
            raise ValueError(f"The '--k' option must be a comma-separated list of ints >= 1. Got {text!r} instead.") from None
        if v < 1:
            raise ValueError(f"The '--k' option must be a comma-separated list of ints >= 1. Got {text!r} instead.")
        out.append(v)
    return out


def single_run(data, algorithm, k, seed, console=None):
    """The original ``mlknn run``: fit one algorithm, evaluate, print every metric."""
    from .._registry import KNN_ESTIMATORS, get_estimator_class
    from ..metrics import GREATER_IS_BETTER, evaluate

    console = console or Console()
    X_train, X_test, Y_train, Y_test, description = load_split(data, seed)
    cls = get_estimator_class(algorithm)
    params = {}
    defaults = cls().get_params()
    if algorithm.lower() in KNN_ESTIMATORS or "n_neighbors" in defaults:
        params["n_neighbors"] = k
    if "random_state" in defaults:
        params["random_state"] = seed
    estimator = cls(**params)
    start = time.perf_counter()
    estimator.fit(X_train, Y_train)
    fit_s = time.perf_counter() - start
    start = time.perf_counter()
    Y_pred = estimator.predict(X_test)
    Y_score = estimator.predict_proba(X_test) if hasattr(estimator, "predict_proba") else None
    predict_s = time.perf_counter() - start
    Y_pred = Y_pred.toarray() if hasattr(Y_pred, "toarray") else np.asarray(Y_pred)
    metrics = evaluate(Y_test, Y_pred, Y_score)
    title = f"{type(estimator).__name__}({', '.join(f'{a}={b}' for a, b in params.items())}) on {description}"
    console.print(format_metrics_table(metrics, title=title, greater_is_better=GREATER_IS_BETTER))
    console.print(
        f"train {X_train.shape[0]} x {X_train.shape[1]}, test {X_test.shape[0]}, "
        f"{Y_train.shape[1]} labels; fit {fit_s:.2f} s, predict {predict_s:.2f} s"
    )
    return metrics


class RichProgress:
    """Progress over the whole grid (cells done / total, ETA) with rich."""

    def __init__(self, console, description="cells"):
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.console = console
        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("cells"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
            transient=False,
        )
        self.description = description
        self.task = None

    def __enter__(self):
        self.progress.start()
        return self

    def __exit__(self, *exc):
        self.progress.stop()

    def start(self, total, done):
        if self.task is None:
            self.task = self.progress.add_task(self.description, total=total, completed=done)
        else:
            self.progress.update(self.task, total=total, completed=done)

    def advance(self, n):
        self.progress.advance(self.task, n)

    def message(self, text):
        self.progress.console.log(text)


def build_config(datasets, *, config=None, algorithms=None, protocol=None, folds=None, repeats=None, test_size=None,
                 stratify=None, seed=None, k=None, params=(), scaling=None, feature_selection=None,
                 min_label_count=None, label_scope=None, neighbors=None):  # fmt: skip
    """An :class:`~mlknn.experiments.ExperimentConfig` from a TOML file and/or options
    (options override the file)."""
    from dataclasses import replace

    from ..experiments import ExperimentConfig, PreprocessingConfig, ProtocolConfig, parse_param_option
    from ..experiments._config import config_from_dict, load_config, parse_value

    base = config_from_dict(load_config(config)) if config else None
    ds = tuple(datasets) or (base.datasets if base else ())
    if not ds:
        raise ValueError("No dataset: give DATASET arguments or 'datasets' in the --config file.")
    algs = tuple(_split_list(algorithms, "algorithms")) or (base.algorithms if base else ("mlknn",))
    ks = tuple(_parse_ks(k)) if k else (base.k if base else (10,))
    proto = base.protocol if base else ProtocolConfig()
    pchanges = {}
    if protocol is not None:
        pchanges.update(name=protocol, n_splits=None, n_repeats=None, test_size=None)
    if folds is not None:
        pchanges["n_splits"] = folds
    if repeats is not None:
        pchanges["n_repeats"] = repeats
    if test_size is not None:
        pchanges["test_size"] = test_size
    if stratify is not None:
        pchanges["stratify"] = stratify
    if seed is not None:
        pchanges["seed"] = seed
    proto = replace(proto, **pchanges)
    proto.splitter()  # validate now (errors name the option)
    prep = base.preprocessing if base else PreprocessingConfig()
    changes = {}
    if scaling is not None:
        changes["scaling"] = scaling
    if feature_selection is not None:
        fs = parse_value(feature_selection)
        changes["feature_selection"] = None if fs in (None, 0, "none") else fs
    if min_label_count is not None:
        changes["min_label_count"] = min_label_count
    if label_scope is not None:
        changes["label_scope"] = label_scope
    prep = replace(prep, **changes)
    per_ds = tuple((d, replace(p, **changes)) for d, p in base.dataset_preprocessing) if base else ()
    grid = tuple(base.params) if base else ()
    grid += tuple(parse_param_option(p) for p in params or ())
    return ExperimentConfig(
        datasets=ds,
        algorithms=algs,
        k=ks,
        params=grid,
        protocol=proto,
        preprocessing=prep,
        dataset_preprocessing=per_ds,
        neighbors=neighbors or (base.neighbors if base else "brute"),
        metric=base.metric if base else "euclidean",
    )


def run_command(
    datasets: list[str] = typer.Argument(None, help="Datasets ($MLKNN_DATA names or .arff paths) for an experiment grid; needs --db. Without any: one quick run."),
    data: str = typer.Option(None, "--data", help="Single run: dataset name or .arff path; default the built-in simulated 2-D data."),
    algorithm: str = typer.Option(None, "--algorithm", "-a", help="Single run: the algorithm (registry name); default mlknn."),
    algorithms: str = typer.Option(None, "--algorithms", help="Grid: comma-separated registry names (e.g. mlknn,dmlknn,mlknn:skml)."),
    k: str = typer.Option(None, "--k", help="Neighbours: one int for a single run, a comma-separated list for a grid (default 10)."),
    seed: int = typer.Option(None, "--seed", help="Random seed (split, protocol and estimators); default 0."),
    protocol: str = typer.Option(None, "--protocol", help="Grid: kfold (5 x 10-fold), 5x2, holdout (10 x 80/20); default 5x2."),
    folds: int = typer.Option(None, "--folds", help="Grid: folds per repetition (kfold/5x2)."),
    repeats: int = typer.Option(None, "--repeats", help="Grid: repetitions."),
    test_size: float = typer.Option(None, "--test-size", help="Grid: test fraction of the hold-out protocol."),
    stratify: bool = typer.Option(None, "--stratify/--no-stratify", help="Grid: iterative multi-label stratification."),
    scaling: str = typer.Option(None, "--scaling", help="Grid: none, minmax or zscore (fitted on each training part)."),
    feature_selection: str = typer.Option(None, "--feature-selection", help="Grid: chi-square selection, a fraction (0.2) or a count (184)."),
    min_label_count: int = typer.Option(None, "--min-label-count", help="Grid: drop labels with fewer positive instances."),
    label_scope: str = typer.Option(None, "--label-scope", help="Grid: count labels on each training part (train) or on the whole dataset (dataset)."),
    param: list[str] = typer.Option(None, "--param", help="Grid axis: name=v1,v2 (every algorithm with that parameter) or algorithm.name=v1,v2. Repeatable."),
    config: Path = typer.Option(None, "--config", help="Grid: a TOML experiment file (options override it)."),
    db: Path = typer.Option(None, "--db", help="Grid: the SQLite results database (created if missing; reruns complete it)."),
    jobs: int = typer.Option(1, "--jobs", "-j", help="Grid: fold tasks in parallel (joblib)."),
    neighbors: str = typer.Option(None, "--neighbors", help="Grid: neighbour backend of the shared search (default brute)."),
    scheduler: str = typer.Option(None, "--scheduler", help="Grid: run the fold tasks on the Dask cluster of this scheduler (tcp://HOST:8786); this process still writes the database. Needs mlknn[dask]."),
    dask_workers: int = typer.Option(None, "--dask-workers", help="Grid: run the fold tasks on a local Dask cluster of N worker processes. Needs mlknn[dask]."),
):
    """Run one algorithm quickly, or an experiment grid into a results database."""
    loc = {k_: _clean(v) for k_, v in locals().items()}
    console = Console()
    ds = list(loc["datasets"] or [])
    if not ds and not loc["config"]:
        grid_only = [n for n in ("algorithms", "protocol", "folds", "repeats", "test_size", "scaling",
                                 "feature_selection", "min_label_count", "label_scope", "param", "db", "neighbors",
                                 "scheduler", "dask_workers")
                     if loc[n] not in (None, [], ())]  # fmt: skip
        if grid_only:
            raise ValueError(
                f"The option(s) {', '.join('--' + n.replace('_', '-') for n in grid_only)} need DATASET arguments "
                "(or --config): `mlknn run emotions yeast --algorithms mlknn,dmlknn --db r.db`."
            )
        ks = _parse_ks(loc["k"]) if loc["k"] is not None else [10]
        if len(ks) != 1:
            raise ValueError(f"The '--k' option of a single run must be one int. Got {loc['k']!r} instead.")
        return single_run(loc["data"], loc["algorithm"] or "mlknn", ks[0], loc["seed"] or 0, console)
    if loc["data"] is not None:
        raise ValueError("The '--data' option is for a single run; for a grid give the datasets as arguments.")
    if loc["db"] is None:
        raise ValueError(
            "The '--db' option is required for an experiment grid (the results database file); for a single "
            "run on one dataset use --data NAME."
        )
    algs = loc["algorithms"]
    if loc["algorithm"]:
        algs = ",".join(a for a in (algs, loc["algorithm"]) if a)
    cfg = build_config(
        ds, config=loc["config"], algorithms=algs, protocol=loc["protocol"], folds=loc["folds"],
        repeats=loc["repeats"], test_size=loc["test_size"], stratify=loc["stratify"], seed=loc["seed"],
        k=loc["k"], params=loc["param"], scaling=loc["scaling"], feature_selection=loc["feature_selection"],
        min_label_count=loc["min_label_count"], label_scope=loc["label_scope"], neighbors=loc["neighbors"],
    )  # fmt: skip
    return grid_run(cfg, loc["db"], loc["jobs"], console, scheduler=loc["scheduler"], dask_workers=loc["dask_workers"])


def grid_run(cfg, db, jobs, console, scheduler=None, dask_workers=None):
    from ..experiments import run_experiment

    jobs = 1 if jobs is None else jobs
    if jobs == 0 or jobs < -1:
        raise ValueError(f"The '--jobs' option must be >= 1 or -1 (all cores). Got {jobs} instead.")
    specs = cfg.specs()
    console.print(
        f"[bold]{len(cfg.datasets)}[/] dataset(s) x [bold]{len(specs)}[/] configuration(s) x "
        f"[bold]{cfg.protocol.n_folds()}[/] fold(s) ({cfg.protocol.name}, seed {cfg.protocol.seed}) -> {db}"
    )
    start = time.perf_counter()
    if scheduler is not None or dask_workers is not None:
        # Fold tasks on a Dask cluster (mlknn.distributed); results streamed into db here.
        from ..distributed import dask_executor

        with dask_executor(scheduler, dask_workers) as executor:
            console.print(f"dask: {scheduler or f'local cluster of {dask_workers} worker process(es)'}")
            with RichProgress(console, "grid") as progress:
                info = run_experiment(cfg, db, progress=progress, executor=executor)
            console.print(executor.report())
    else:
        with RichProgress(console, "grid") as progress:
            info = run_experiment(cfg, db, n_jobs=jobs, progress=progress)
    console.print(
        f"{info['total']} cells: {info['done_before']} already in {db}, {info['computed']} computed now "
        f"({info['rows_written']} rows) in {time.perf_counter() - start:.1f} s. Report: mlknn report {db}"
    )
    return info
