"""``mlknn run``: one quick run, or an experiment grid into a results database.

* ``mlknn run`` (no dataset): the built-in simulated data of Younes et al. (2011), one
  algorithm, prints every metric. ``--data NAME --algorithm A --k 10``: the
  same on one dataset (its fixed train/test split when it has one).
* ``mlknn run DATASET... --db FILE [--algorithms A,B --protocol 5x2 --k 10,20
  --param name=v1,v2 --config FILE.toml --jobs N]``: the grid of datasets x
  algorithm configurations x folds, written to a SQLite database cell by cell;
  rerunning the same command completes only the missing cells.
"""

# Postponed annotations: the array types below are only named for the type checker, so that
# building the command line (and its --help) imports neither numpy nor scipy.
from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeAlias

import typer
from rich.console import Console
from rich.progress import TaskID

from ._format import format_metrics_table

if TYPE_CHECKING:
    from ..experiments import ExperimentConfig, ProtocolConfig
    from ..utils._typing import Estimator, LabelMatrix, MatrixLike

    #: A run's data: X_train, X_test, Y_train, Y_test and a one-line description.
    _Split: TypeAlias = tuple[MatrixLike, MatrixLike, LabelMatrix, LabelMatrix, str]


def _load_fixed_split(train_path: str, test_path: str, labels: str | None = None) -> _Split:
    """Two files given by path: the train and test parts of one dataset (same attributes)."""
    from ..datasets import load

    train, test = load(train_path, labels=_labels(labels)), load(test_path, labels=_labels(labels))
    if train.feature_names != test.feature_names or train.label_names != test.label_names:
        raise ValueError(
            f"The '--test' file {str(test_path)!r} does not have the attributes of the '--data' file "
            f"{str(train_path)!r} ({len(test.feature_names)} features / {len(test.label_names)} labels "
            f"against {len(train.feature_names)} / {len(train.label_names)}, or other names)."
        )
    return train.X, test.X, train.Y, test.Y, f"{train.name} + {test.name} (train/test files)"


def _labels(text: str | None) -> int | str | None:
    """``--labels``: a signed count (``-2``) or comma-separated column names."""
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        return text


def check_choice(option: str, value: str, choices: Sequence[str]) -> None:
    """Refuse an option value outside ``choices``, naming the closest one."""
    if value in choices:
        return
    import difflib

    close = difflib.get_close_matches(str(value), list(choices), n=1, cutoff=0.5)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    raise ValueError(f"The '{option}' option must be one of {', '.join(choices)}. Got {value!r} instead.{hint}")


def _clean(value: Any) -> Any:
    """A parameter value, or its default when the function was called directly
    (``ctx.invoke``) and typer left its OptionInfo / ArgumentInfo in place."""
    info_types = tuple(
        t for t in (getattr(typer.models, "OptionInfo", None), getattr(typer.models, "ArgumentInfo", None)) if t
    )
    if info_types and isinstance(value, info_types):
        return value.default if value.default is not ... else None
    return value


def _split_list(text: str | Sequence[str] | None, what: str) -> list[str]:
    if text is None:
        return []
    if isinstance(text, (list, tuple)):
        items: list[str] = []
        for t in text:
            items += _split_list(t, what)
        return items
    return [t.strip() for t in str(text).split(",") if t.strip()]


def _parse_ks(text: str | Sequence[str] | None) -> list[int]:
    out: list[int] = []
    for t in _split_list(text, "k"):
        try:
            v = int(t)
        except ValueError:
            raise ValueError(f"The '--k' option must be a comma-separated list of ints >= 1. Got {text!r} instead.") from None
        if v < 1:
            raise ValueError(f"The '--k' option must be a comma-separated list of ints >= 1. Got {text!r} instead.")
        out.append(v)
    return out


def _estimator_class(algorithm: str) -> type[Estimator]:
    """The registry's class for ``algorithm``; an unknown name gets a did-you-mean."""
    import difflib

    from .._registry import ESTIMATORS, get_estimator_class

    if algorithm.lower() not in ESTIMATORS:
        close = difflib.get_close_matches(algorithm.lower(), sorted(ESTIMATORS), n=2, cutoff=0.6)
        if close:
            raise ValueError(
                f"Unknown algorithm {algorithm!r}; did you mean {' or '.join(map(repr, close))}? "
                f"Known algorithms: {', '.join(sorted(ESTIMATORS))}."
            )
    return get_estimator_class(algorithm)


def _single_params(
    cls: type[Estimator],
    algorithm: str,
    k: int,
    seed: int,
    neighbors: str | None,
    param: Sequence[str] | None,
) -> dict[str, Any]:
    """Constructor parameters of a single run: k, seed, backend and ``--param name=value``."""
    from .._registry import KNN_ESTIMATORS
    from ..experiments import parse_value

    defaults = cls().get_params()
    params: dict[str, Any] = {}
    if algorithm.lower() in KNN_ESTIMATORS or "n_neighbors" in defaults:
        params["n_neighbors"] = k
    if "random_state" in defaults:
        params["random_state"] = seed
    if neighbors is not None:
        if "neighbors" not in defaults:
            raise ValueError(f"The '--neighbors' option needs a kNN algorithm; {algorithm!r} searches no neighbours.")
        params["neighbors"] = neighbors
    for item in param or ():
        name, sep, value = str(item).partition("=")
        name = name.strip().split(".")[-1]
        if not sep or name not in defaults or "," in value:
            raise ValueError(
                f"The '--param' option of a single run must be name=value with a parameter of {cls.__name__} "
                f"({', '.join(sorted(defaults))}). Got {item!r} instead."
            )
        params[name] = parse_value(value.strip())
    return params


def _feature_selection(feature_selection: str | float | None) -> float | int | None:
    """``--feature-selection`` as a value (None for none / 0)."""
    from ..experiments import parse_value

    fs = parse_value(feature_selection) if isinstance(feature_selection, str) else feature_selection
    return None if fs in (None, 0, "none") else fs  # type: ignore[return-value]  # a str: refused where used


def _preprocessing_text(scaling: str | None, fs: str | float | None) -> str:
    """The preprocessing of a single run in words."""
    scaling = scaling or "none"
    if scaling == "none" and fs is None:
        return "raw features"
    what = ", ".join(p for p in (scaling if scaling != "none" else "", f"chi2 {fs}" if fs is not None else "") if p)
    return what + " (fitted on the training part)"


def _preprocess(
    X_train: MatrixLike,
    X_test: MatrixLike,
    Y_train: LabelMatrix,
    scaling: str | None,
    feature_selection: str | float | None,
) -> tuple[MatrixLike, MatrixLike, str]:
    """Scaling / chi-square selection fitted on the training part (as the grid does per fold)."""
    from ..preprocessing import FoldPreprocessor

    fs = _feature_selection(feature_selection)
    what = _preprocessing_text(scaling, fs)
    if (scaling or "none") == "none" and fs is None:
        return X_train, X_test, what
    pre = FoldPreprocessor(scaling or "none", fs, 0).fit(X_train, Y_train)
    return pre.transform(X_train), pre.transform(X_test), what


def _run_data(data_name: str | None, seed: int, test: str | None,
              labels: str | None) -> tuple[MatrixLike, LabelMatrix, int | None, str]:  # fmt: skip
    """A single run's data as one matrix, how many of its last rows are the fixed test part
    and a description.

    No name: the simulated 2-D dataset of Younes et al. (2011) (no files needed), split 50/50.
    A name or path with ``test``: that file as the test part. A name or path alone: the
    source's fixed train/test split when it has one, else a seeded 50/50 split (the number
    of test rows is then None).
    """
    from ..datasets import load, make_simulated_2d

    if test is not None:
        if data_name is None:
            raise ValueError("The '--test' option needs '--data' (the training file).")
        return _stacked(*_load_fixed_split(data_name, test, labels))
    if data_name is None:
        ds = make_simulated_2d(random_state=seed)
        return ds.X, ds.Y, None, f"{ds.name} (built-in, seeded 50/50 split)"
    if labels is None:  # a CSV / TSV table (labels given) has no fixed split
        try:
            train, test_part = load(data_name, split="train"), load(data_name, split="test")
            return _stacked(train.X, test_part.X, train.Y, test_part.Y, f"{train.name} (fixed train/test split)")
        except ValueError as exc:
            if "split" not in str(exc):
                raise
    ds = load(data_name, labels=_labels(labels))
    return ds.X, ds.Y, None, f"{ds.name} (seeded 50/50 split, random_state={seed}; --test FILE for a fixed one)"


def _stacked(X_train: MatrixLike, X_test: MatrixLike, Y_train: LabelMatrix, Y_test: LabelMatrix,
             description: str) -> tuple[MatrixLike, LabelMatrix, int, str]:  # fmt: skip
    """The train part's rows, then the test part's, and the number of test rows."""
    import numpy as np
    import scipy.sparse as sp

    X = sp.vstack([X_train, X_test], format="csr") if sp.issparse(X_train) else np.vstack([X_train, X_test])
    Y = sp.vstack([Y_train, Y_test], format="csr") if sp.issparse(Y_train) else np.vstack([Y_train, Y_test])
    return X, Y, X_test.shape[0], description


def _check_like_fit(estimator: Estimator, X: MatrixLike, Y: LabelMatrix, protocol: ProtocolConfig,
                    scaling: str | None, feature_selection: str | float | None) -> None:  # fmt: skip
    """The errors and the feature-scale warning that the preprocessing and ``estimator.fit``
    give on the run's training part, in their own words: the harness checks a grid in its
    own words and fits on its own search's graph, where the estimator does not check the scales."""
    from ..utils._validation import warn_if_unscaled

    estimator._validate_params()
    fold = next(protocol.splitter().split(X, Y))
    if hasattr(estimator, "_check_n_neighbors"):
        estimator._check_n_neighbors(len(fold.train), estimator.search_width(len(fold.train)))
    checks_scales = not getattr(estimator, "_normalises_features", True) and (scaling or "none") == "none"
    if checks_scales or _feature_selection(feature_selection) is not None:
        X_train = _preprocess(X[fold.train], X[fold.test], Y[fold.train], scaling, feature_selection)[0]
        if checks_scales:
            warn_if_unscaled(X_train, estimator)


def _warn_again(records: Sequence[Mapping[str, Any]]) -> None:
    """Raise again the warnings the harness recorded for the cell (the user of a single run
    sees what fitting and predicting warned, as when calling the estimator directly)."""
    import warnings

    for record in records:
        warnings.warn(record["message"], _warning_class(record["category"]), stacklevel=2)


def _warning_class(name: str) -> type[Warning]:
    """The warning class of that ``module.qualname`` (what the harness records): every class
    that was raised is loaded, so it is among the subclasses of Warning."""
    pending: list[type[Warning]] = [Warning]
    while pending:
        cls = pending.pop()
        if f"{cls.__module__}.{cls.__qualname__}" == name:
            return cls
        pending += cls.__subclasses__()
    return UserWarning


def single_run(data: str | None, algorithm: str, k: int, seed: int, console: Console | None = None, *,
               test: str | None = None, scaling: str | None = None, feature_selection: str | float | None = None,
               neighbors: str | None = None, param: Sequence[str] | None = (),
               labels: str | None = None) -> dict[str, float]:  # fmt: skip
    """``mlknn run`` on one dataset: one cell of the harness (protocol ``"given"``), every metric printed."""
    import tempfile

    from .._registry import make_estimator
    from ..experiments import ExperimentConfig, PreprocessingConfig, ProtocolConfig, ResultsDB, run_experiment
    from ..metrics import GREATER_IS_BETTER

    console = console or Console()
    X, Y, n_test, description = _run_data(data, seed, test, labels)
    cls = _estimator_class(algorithm)
    params = _single_params(cls, algorithm, k, seed, neighbors, param)
    protocol = ProtocolConfig("given", seed=seed, n_test=n_test)
    _check_like_fit(make_estimator(algorithm, **params), X, Y, protocol, scaling, feature_selection)
    fs = _feature_selection(feature_selection)
    cfg = ExperimentConfig(
        datasets=("data",), algorithms=(algorithm,),
        params=tuple(("*", name, (v,)) for name, v in params.items() if name not in ("random_state", "neighbors")),
        protocol=protocol,
        preprocessing=PreprocessingConfig(scaling=scaling or "none", feature_selection=fs),
        neighbors=neighbors or "brute",
    )  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp, ResultsDB(Path(tmp) / "run.db") as db:
        info = run_experiment(cfg, db, data={"data": (X, Y)})
        rows = db.rows()
        _warn_again([w for w in db.warnings() if w["stage"] != "error"])
    if info["failed"]:
        raise ValueError(info["errors"][0]["message"])
    values = {r["metric"]: r["value"] for r in rows}
    # The metrics in evaluate()'s order, without the harness's own search measure.
    metrics = {m: values[m] for m in GREATER_IS_BETTER if m in values}
    metrics.update({m: v for m, v in values.items() if m not in GREATER_IS_BETTER and m != "search_recall"})
    cell = rows[0]
    title = f"{cls.__name__}({', '.join(f'{a}={b}' for a, b in params.items())}) on {description}"
    console.print(format_metrics_table(metrics, title=title, greater_is_better=GREATER_IS_BETTER))
    console.print(
        f"train {cell['n_train']} x {cell['n_features']}, test {cell['n_test']}, {cell['n_labels']} labels; "
        f"{_preprocessing_text(scaling, fs)}; fit {cell['fit_seconds'] + cell['search_seconds']:.2f} s, "
        f"predict {cell['predict_seconds']:.2f} s",
        markup=False, highlight=False, soft_wrap=True,
    )  # fmt: skip
    return metrics


class RichProgress:
    """Progress over the whole grid (cells done / total, ETA) with rich."""

    def __init__(self, console: Console, description: str = "cells") -> None:
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
        self.task: TaskID | None = None

    def __enter__(self) -> RichProgress:
        self.progress.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.progress.stop()

    def start(self, total: int, done: int) -> None:
        if self.task is None:
            self.task = self.progress.add_task(self.description, total=total, completed=done)
        else:
            self.progress.update(self.task, total=total, completed=done)

    def advance(self, n: int) -> None:
        # start() comes first (run_experiment's order); before it there is no task.
        assert self.task is not None
        self.progress.advance(self.task, n)

    def message(self, text: str) -> None:
        # print, not log: log lines carry the caller's file:line (_run.py:166).
        self.progress.console.print(text, markup=False, highlight=False)


def build_config(datasets: Sequence[str], *, config: str | Path | None = None, algorithms: str | None = None,
                 protocol: str | None = None, folds: int | None = None, repeats: int | None = None,
                 test_size: float | None = None, stratify: bool | None = None, seed: int | None = None,
                 k: str | Sequence[str] | None = None, params: Sequence[str] | None = (), scaling: str | None = None,
                 feature_selection: str | None = None, min_label_count: int | None = None,
                 label_scope: str | None = None, neighbors: str | None = None,
                 missing_labels: float | None = None, batch: int | None = None, shuffle: bool | None = None,
                 threshold: Sequence[str] | None = None, conformal: Sequence[str] | None = None,
                 calibration: bool | None = None) -> ExperimentConfig:  # fmt: skip
    """An :class:`~mlknn.experiments.ExperimentConfig` from a TOML file and/or options
    (options override the file, through :meth:`ExperimentConfig.with_overrides`)."""
    from ..experiments import ExperimentConfig, config_from_dict, load_config

    base = config_from_dict(load_config(config)) if config else None
    ds = tuple(datasets) or (base.datasets if base else ())
    if not ds:
        raise ValueError("No dataset: give DATASET arguments or 'datasets' in the --config file.")
    if base is None:
        base = ExperimentConfig(datasets=ds, algorithms=("mlknn",), k=(10,))
    options = {
        "datasets": ds, "algorithms": tuple(_split_list(algorithms, "algorithms")) or None,
        "k": tuple(_parse_ks(k)) if k else None, "protocol": protocol, "n_splits": folds,
        "n_repeats": repeats, "test_size": test_size, "stratify": stratify, "seed": seed,
        "scaling": scaling, "feature_selection": feature_selection, "min_label_count": min_label_count,
        "label_scope": label_scope, "neighbors": neighbors, "add_params": tuple(params or ()) or None,
        "missing_labels": missing_labels, "batch": batch, "shuffle": shuffle,
        "threshold": tuple(_split_list(threshold, "threshold")) or None,
        "conformal": tuple(_split_list(conformal, "conformal")) or None, "calibration": calibration,
    }  # fmt: skip
    # An option left out (None) keeps the file's value.
    cfg: ExperimentConfig = base.with_overrides(**{name: v for name, v in options.items() if v is not None})
    return cfg


#: Options of the grid only (a single run has no protocol, database or workers).
_GRID_ONLY = ("algorithms", "protocol", "folds", "repeats", "test_size", "stratify", "min_label_count",
              "label_scope", "db", "scheduler", "dask_workers", "missing_labels", "batch", "shuffle", "threshold",
              "conformal", "calibration")  # fmt: skip


def run_command(
    datasets: list[str] = typer.Argument(None, help="Datasets ($MLKNN_DATA names or .arff paths) for an experiment grid; needs --db. Without any: one quick run."),
    data: str = typer.Option(None, "--data", help="Single run: dataset name or .arff path; default the built-in simulated 2-D data."),
    test: str = typer.Option(None, "--test", help="Single run: the test file of a fixed split (--data X-train.arff --test X-test.arff)."),
    labels: str = typer.Option(None, "--labels", help="Single run on a CSV / TSV file: its label columns, by name (sports,news) or count (2: the first two, -2: the last two)."),
    algorithm: str = typer.Option(None, "--algorithm", "-a", help="Single run: the algorithm; default mlknn. `mlknn algorithms` lists the names."),
    algorithms: str = typer.Option(None, "--algorithms", help="Grid: comma-separated algorithms (e.g. mlknn,dmlknn,mlknn:skml); `mlknn algorithms` lists them."),
    k: str = typer.Option(None, "--k", help="Neighbours: one int for a single run, a comma-separated list for a grid (default 10)."),
    seed: int = typer.Option(None, "--seed", help="Random seed (split, protocol and estimators); default 0."),
    protocol: str = typer.Option(None, "--protocol", help="Grid: kfold (5 x 10-fold), 5x2, holdout (10 x 80/20), prequential (test-then-train, batch by batch; docs/streams.md); default 5x2."),
    batch: int = typer.Option(None, "--batch", help="Grid, prequential: instances per batch (default 500; the first batch only trains)."),
    shuffle: bool = typer.Option(None, "--shuffle/--file-order", help="Grid, prequential: the stream in a random order drawn from --seed (default: file order)."),
    folds: int = typer.Option(None, "--folds", help="Grid: folds per repetition (kfold/5x2)."),
    repeats: int = typer.Option(None, "--repeats", help="Grid: repetitions."),
    test_size: float = typer.Option(None, "--test-size", help="Grid: test fraction of the hold-out protocol."),
    stratify: bool = typer.Option(None, "--stratify/--no-stratify", help="Grid: iterative multi-label stratification."),
    scaling: str = typer.Option(None, "--scaling", help="none, minmax or zscore, fitted on each training part (the README's numbers use minmax)."),
    feature_selection: str = typer.Option(None, "--feature-selection", help="Chi-square selection fitted on the training part: a fraction (0.2) or a count (184)."),
    min_label_count: int = typer.Option(None, "--min-label-count", help="Grid: drop labels with fewer positive instances."),
    label_scope: str = typer.Option(None, "--label-scope", help="Grid: count labels on each training part (train) or on the whole dataset (dataset)."),
    missing_labels: float = typer.Option(None, "--missing-labels", help="Grid: hide this fraction of each training part's label entries (seeded per fold; unknown to the estimators with missing_labels=, 0 to the others; docs/incomplete_labels.md)."),
    param: list[str] = typer.Option(None, "--param", help="Grid axis: name=v1,v2 (every algorithm with that parameter) or algorithm.name=v1,v2; single run: name=value. Repeatable."),
    config: Path = typer.Option(None, "--config", help="Grid: a TOML experiment file (options override it)."),
    db: Path = typer.Option(None, "--db", help="Grid: the SQLite results database (created if missing; reruns complete it)."),
    jobs: int = typer.Option(1, "--jobs", "-j", help="Grid: fold tasks in parallel (joblib)."),
    neighbors: str = typer.Option(None, "--neighbors", help="Neighbour backend (of the grid's shared search; default brute)."),
    scheduler: str = typer.Option(None, "--scheduler", help="Grid: run the fold tasks on the Dask cluster of this scheduler (tcp://HOST:8786); this process still writes the database. Needs mlknn[dask]."),
    dask_workers: int = typer.Option(None, "--dask-workers", help="Grid: run the fold tasks on a local Dask cluster of N worker processes. Needs mlknn[dask]."),
    threshold: list[str] = typer.Option(None, "--threshold", help="Grid: also record the measures under a tuned decision rule (per-label, global, rcut, pcut; chosen on each training part). Repeatable."),
    conformal: list[str] = typer.Option(None, "--conformal", help="Grid: also record the coverage and size of conformal label sets, guarantee:alpha (set:0.1, fnr:0.1, label:0.1). Repeatable."),
    calibration: bool = typer.Option(False, "--calibration", help="Grid: record the ECE and reliability bins of the posteriors (implied by --threshold / --conformal)."),
) -> dict[str, float] | dict[str, Any]:
    """Run one algorithm quickly, or an experiment grid into a results database.

    The algorithms, their aliases and what each computes: `mlknn algorithms`.
    """
    loc = {k_: _clean(v) for k_, v in locals().items()}
    console = Console()
    ds = list(loc["datasets"] or [])
    if not ds and not loc["config"]:
        return _single_from_options(loc, console)
    for name in ("data", "test", "labels"):
        if loc[name] is not None:
            raise ValueError(f"The '--{name}' option is for a single run; for a grid give the datasets as arguments.")
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
        missing_labels=loc["missing_labels"], batch=loc["batch"], shuffle=loc["shuffle"],
        threshold=loc["threshold"], conformal=loc["conformal"], calibration=loc["calibration"] or None,
    )  # fmt: skip
    return grid_run(cfg, loc["db"], loc["jobs"], console, scheduler=loc["scheduler"], dask_workers=loc["dask_workers"])


def _single_from_options(loc: Mapping[str, Any], console: Console) -> dict[str, float]:
    """A single run from the options of ``mlknn run`` (refusing the grid-only ones)."""
    grid_only = [n for n in _GRID_ONLY if loc[n] not in (None, [], ()) and loc[n] is not False]  # False: a flag off
    if grid_only:
        raise ValueError(
            f"The option(s) {', '.join('--' + n.replace('_', '-') for n in grid_only)} need DATASET arguments "
            "(or --config): `mlknn run emotions yeast --algorithms mlknn,dmlknn --db r.db`."
        )
    ks = _parse_ks(loc["k"]) if loc["k"] is not None else [10]
    if len(ks) != 1:
        raise ValueError(f"The '--k' option of a single run must be one int. Got {loc['k']!r} instead.")
    return single_run(
        loc["data"], loc["algorithm"] or "mlknn", ks[0], loc["seed"] or 0, console, test=loc["test"],
        scaling=loc["scaling"], feature_selection=loc["feature_selection"], neighbors=loc["neighbors"],
        param=loc["param"], labels=loc["labels"],
    )  # fmt: skip


def grid_run(
    cfg: ExperimentConfig,
    db: str | Path,
    jobs: int | None,
    console: Console,
    scheduler: str | None = None,
    dask_workers: int | None = None,
) -> dict[str, Any]:
    from ..experiments import run_experiment

    jobs = 1 if jobs is None else jobs
    if jobs == 0 or jobs < -1:
        raise ValueError(f"The '--jobs' option must be >= 1 or -1 (all cores). Got {jobs} instead.")
    specs = cfg.specs()
    console.print(
        f"[bold]{len(cfg.datasets)}[/] dataset(s) x [bold]{len(specs)}[/] configuration(s) x "
        + (f"[bold]{cfg.protocol.n_folds()}[/] fold(s)" if cfg.protocol.n_folds() else "one fold per batch")
        + f" ({protocol_description(cfg)}) -> {db}",
        soft_wrap=True,
    )
    _warn_unscaled_datasets(cfg, console)
    start = time.perf_counter()
    info: dict[str, Any]
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
    _print_cell_warnings(db, console)
    if info.get("failed"):
        _print_failures(info["errors"], db, console)
        raise typer.Exit(1)
    return info


def protocol_description(cfg: ExperimentConfig) -> str:
    """The grid's protocol in words, from its splitter: '1 x 3-fold cross-validation, seed 0'."""
    p: dict[str, Any] = dict(cfg.protocol.splitter().params())
    if cfg.protocol.name == "prequential":
        what = f"prequential: batches of {p['batch_size']} after the first {p['n_initial']} rows"
        if not p["shuffle"]:  # the file order: no seed involved
            return f"{what}, file order"
    elif p.get("splitter") == "holdout":
        what = f"{p['n_repeats']} x hold-out, {float(p['test_size']):.0%} test"
    else:
        what = f"{p['n_repeats']} x {p['n_splits']}-fold cross-validation"
    if p.get("stratify"):
        what += ", iterative stratification"
    return f"{what}, seed {cfg.protocol.seed}"


def _print_failures(errors: Sequence[Mapping[str, Any]], db: str | Path, console: Console) -> None:
    """The cells that failed, grouped by configuration and message, and what to do next."""
    groups: dict[tuple[str, str, str], list[Mapping[str, Any]]] = {}
    for e in errors:
        groups.setdefault((e["algorithm"], e["params"], e["message"]), []).append(e)
    console.print(f"{len(errors)} cell(s) failed; the others are in {db}. Failures (also recorded in the database, "
                  "`mlknn report` lists them; the same command retries them):", markup=False, highlight=False)
    for (algorithm, params, message), cells in groups.items():
        datasets = ", ".join(sorted({str(c["dataset"]) for c in cells}))
        console.print(f"  {algorithm} {params} on {datasets} ({len(cells)} fold(s)): {message}", markup=False,
                      highlight=False, soft_wrap=True)


def print_if_unscaled(X: MatrixLike, console: Console, what: str, effect: str) -> None:
    """A warning line when X's feature ranges differ by orders of magnitude (X used unscaled)."""
    import warnings

    from ..utils._validation import FEATURE_SCALE_RATIO, warn_if_unscaled

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ratio = warn_if_unscaled(X)
    if ratio > FEATURE_SCALE_RATIO:
        console.print(
            f"Warning: {what}the feature ranges differ by a factor of {ratio:.3g} and the features are not "
            f"scaled, so {effect}; add --scaling minmax (the README's numbers are min-max scaled).",
            markup=False, highlight=False, soft_wrap=True,
        )  # fmt: skip


def _warn_unscaled_datasets(cfg: ExperimentConfig, console: Console) -> None:
    """Before a grid: a line for each unscaled dataset whose feature ranges differ by orders
    of magnitude (the harness searches on the graph, where the estimators cannot check)."""
    from ..experiments import load_dataset

    for name in cfg.datasets:
        if cfg.preprocessing_for(name).scaling != "none":
            continue
        try:
            X, _ = load_dataset(name)
        except Exception:  # noqa: BLE001 - the run itself reports a dataset that cannot load
            continue
        print_if_unscaled(X, console, f"{name}: ", "distances are dominated by the widest features")


def _print_cell_warnings(db: str | Path, console: Console) -> None:
    """One line per warning category recorded with the cells (what fit/predict raised)."""
    from ..experiments import ResultsDB

    with ResultsDB(db) as rdb:
        rows = rdb.warnings() if hasattr(rdb, "warnings") else []
    by_cat: dict[str, dict[str, Any]] = {}
    for w in rows:
        if w["stage"] == "error":  # failed cells: listed by _print_failures
            continue
        cat = by_cat.setdefault(w["category"], {"cells": set(), "datasets": set(), "message": w["message"]})
        cat["cells"].add((w["dataset"], w["algorithm"], w["params"], w["repeat"], w["fold"]))
        cat["datasets"].add(w["dataset"])
    for name, cat in sorted(by_cat.items()):
        msg = " ".join(str(cat["message"]).split())
        msg = msg if len(msg) <= 240 else msg[:235] + " [...]"
        ds = ", ".join(sorted(map(str, cat["datasets"]))[:5])
        console.print(f"Warning: {name} in {len(cat['cells'])} cell(s) ({ds}): {msg}", markup=False, highlight=False,
                      soft_wrap=True)  # fmt: skip
