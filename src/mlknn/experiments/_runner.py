"""Run an experiment grid into a results database, resumably.

The unit of work is a *fold task*: one dataset, one (repeat, fold), and every
algorithm configuration still missing on it. A fold task

1. slices the fold and fits the preprocessing on its training part;
2. for the kNN estimators, searches the neighbours ONCE at the largest width
   any of them needs (training leave-one-out graph + test graph) and feeds
   every algorithm and every k from it (``fit_from_graph`` /
   ``predict_proba_from_graph``: a graph sorted by distance serves every
   smaller k through its first columns);
3. fits the other estimators the ordinary way;
4. evaluates every configuration with :func:`mlknn.metrics.evaluate`
   (:mod:`mlknn.experiments._cell`), recording the warnings each step raised.

The main process writes each finished fold task in ONE transaction, so an
interrupted run (Ctrl-C, ``kill -9``) loses at most the folds in flight, and
running the same command again computes only the missing cells. Fold tasks
run in parallel with joblib (``n_jobs``).
"""

import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

from ..model_selection import Fold
from ..utils._typing import Estimator, LabelMatrix, MatrixLike
from ._cell import CellOutcome, FoldData, FoldSearch, WarningLog, is_knn, run_cell
from ._checks import ERROR_STAGE, GridConfigurationError, error_record, grid_problems
from ._config import AlgorithmSpec, ExperimentConfig
from ._data import apply_prefilter, as_label_matrix, load_dataset
from ._decisions import DecisionSettings
from ._missing import hide_labels
from ._parsing import canonical_json
from ._results import CELL_COLUMNS, ResultsDB
from ._settings import PreprocessingConfig
from ._stream import StreamModel, can_update, carried_bytes

if TYPE_CHECKING:
    from ..neighbors import FoldGraphs

#: Environment variable: seconds to sleep at the start of every fold task. Only
#: for tests that interrupt a run on purpose (makes "mid-run" deterministic).
FOLD_DELAY_ENV = "MLKNN_FOLD_DELAY"


# ---------------------------------------------------------------- estimators
def _params_json(est: Estimator) -> str:
    out: dict[str, Any] = {}
    for k, v in est.get_params(deep=False).items():
        out[k] = v if isinstance(v, (int, float, str, bool, type(None))) else repr(v)
    return canonical_json(out)


# ---------------------------------------------------------------- neighbours
def search_graphs(
    X_train: MatrixLike, X_test: MatrixLike, width: int, neighbors: str = "brute", metric: str = "euclidean"
) -> "FoldGraphs":
    """(index, train LOO graph, test graph) at ``width`` neighbours
    (:func:`mlknn.neighbors.compute_graphs`)."""
    from ..neighbors import compute_graphs

    return compute_graphs(X_train, X_test, width, neighbors=neighbors, metric=metric)


#: Extra result row of the kNN cells of a grid searched with an approximate
#: backend: recall@width of the fold's test-query graph against exact search.
SEARCH_RECALL = "search_recall"

#: Test queries searched exactly per fold to measure it.
SEARCH_RECALL_SAMPLES = 200


def _search_recall(
    graphs: "FoldGraphs", X_tr: MatrixLike, X_te: MatrixLike, width: int, seed: int, fold: Fold
) -> float | None:
    """Recall of an approximate fold search on a sample of the test queries (None if exact)."""
    from ..neighbors import estimate_recall, is_exact

    index, _, g_te = graphs
    if index is None or is_exact(index) or g_te is None:
        return None
    return estimate_recall(index, X_tr, X_te, n_neighbors=width, n_samples=SEARCH_RECALL_SAMPLES,
                           random_state=(int(seed) + 7919 * int(fold.repeat) + int(fold.fold)) % 2**32,
                           approx_indices=g_te.indices)  # fmt: skip


# ---------------------------------------------------------------- fold task
@dataclass
class FoldTask:
    dataset: str
    fold: Fold
    specs: list[AlgorithmSpec]
    preprocessing: PreprocessingConfig
    search: dict[str, str]
    protocol_key: str
    seed: int
    at_k: tuple[int, ...] = ()
    ties: tuple[str, ...] = ()
    decisions: DecisionSettings = field(default_factory=DecisionSettings)


@dataclass
class FoldResult:
    """What a fold task returns: result rows and warning rows (dicts), written in one transaction."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[dict[str, Any]] = field(default_factory=list)


#: A fold task's job, ``fn(task, X, Y) -> (task, result)``, as executors run it.
FoldJob: TypeAlias = Callable[[FoldTask, MatrixLike, LabelMatrix], tuple[FoldTask, FoldResult]]


class FoldExecutor(Protocol):
    """What ``run_experiment(executor=...)`` needs (e.g. :class:`mlknn.distributed.DaskExecutor`)."""

    def run_folds(
        self, fn: FoldJob, tasks: list[FoldTask], X: MatrixLike, Y: LabelMatrix
    ) -> Iterable[tuple[FoldTask, FoldResult]]: ...


class Progress(Protocol):
    """What ``run_experiment(progress=...)`` calls (the CLI's progress bar)."""

    def start(self, total: int, done: int) -> None: ...

    def advance(self, n: int) -> None: ...

    def message(self, text: str) -> None: ...


def _fold_delay() -> None:
    delay = float(os.environ.get(FOLD_DELAY_ENV, "0") or 0)
    if delay > 0:
        time.sleep(delay)


def prepare_fold(task: FoldTask, X: MatrixLike, Y: LabelMatrix, log: WarningLog) -> FoldData:
    """Slice the fold and fit its preprocessing on the training part (step 1)."""
    from ..preprocessing import FoldPreprocessor

    f = task.fold
    X_tr, X_te = X[f.train], X[f.test]
    Y_tr, Y_te = Y[f.train], Y[f.test]
    with log.stage("preprocess"):
        pre = FoldPreprocessor(**task.preprocessing.fold_level()).fit(X_tr, Y_tr)
        X_tr, Y_tr = pre.transform(X_tr, Y_tr)
        X_te, Y_te = pre.transform(X_te, Y_te)
    Y_tr, hidden = hide_labels(Y_tr, task.preprocessing.missing_labels, task.seed, f.repeat, f.train)
    return FoldData(X_tr, Y_tr, X_te, Y_te, hidden)


def _search_width(task: FoldTask, spec: AlgorithmSpec, est: Estimator, n_train: int) -> int:
    """The width ``est`` needs, checked against the fold's training size."""
    width: int = est.search_width(n_train)
    if est.n_neighbors > n_train - 1 or width > n_train - 1:
        f = task.fold
        raise ValueError(
            f"The 'n_neighbors' parameter of {spec.label()} must be <= n_train - 1 = {n_train - 1} "
            f"on dataset {task.dataset!r} (repeat {f.repeat}, fold {f.fold}). Got {est.n_neighbors} instead."
        )
    return width


def search_fold(
    task: FoldTask, data: FoldData, knn: list[tuple[AlgorithmSpec, Estimator]], log: WarningLog
) -> FoldSearch | None:
    """One search at the widest width any kNN estimator needs (step 2); None without kNN cells."""
    if not knn:
        return None
    width = max(_search_width(task, spec, est, data.n_train) for spec, est in knn)
    with log.stage("search"):
        t0 = time.perf_counter()
        graphs = search_graphs(data.X_train, data.X_test, width, **task.search)
        seconds = time.perf_counter() - t0
        recall = _search_recall(graphs, data.X_train, data.X_test, width, task.seed, task.fold)
    return FoldSearch(*graphs, seconds=seconds, recall=recall)


def _fold_columns(task: FoldTask, data: FoldData) -> dict[str, Any]:
    f = task.fold
    return {
        "dataset": task.dataset,
        "preprocessing": task.preprocessing.key(),
        "search": canonical_json(task.search),
        "protocol": task.protocol_key,
        "repeat": int(f.repeat),
        "fold": int(f.fold),
        "n_train": int(data.n_train),
        "n_test": int(data.X_test.shape[0]),
        "n_features": int(data.X_train.shape[1]),
        "n_labels": int(data.Y_train.shape[1]),
    }


def cell_rows(
    base: dict[str, Any], spec: AlgorithmSpec, est: Estimator, outcome: CellOutcome, search: FoldSearch | None
) -> list[dict[str, Any]]:
    """The result rows of one cell: one per measure (steps 3-4 feed them)."""
    values = dict(outcome.values)
    if is_knn(est) and search is not None and search.recall is not None:
        values[SEARCH_RECALL] = search.recall
    cell = {**base, "algorithm": spec.name, "params": spec.key()}
    est_json = f"{type(est).__name__}{_params_json(est)}"
    return [
        {**cell, "metric": m, "value": v, "fit_seconds": outcome.fit_seconds,
         "predict_seconds": outcome.predict_seconds, "search_seconds": outcome.search_seconds,
         "estimator": est_json}
        for m, v in values.items()
    ]  # fmt: skip


def cell_warning_rows(
    base: dict[str, Any], spec: AlgorithmSpec, records: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The warning rows of one cell (see :meth:`ResultsDB.warnings`)."""
    cell = {c: base[c] for c in CELL_COLUMNS if c in base}
    return [{**cell, "algorithm": spec.name, "params": spec.key(), **r} for r in records]


def run_fold(task: FoldTask, X: MatrixLike, Y: LabelMatrix,
             streams: dict[tuple[str, str], StreamModel] | None = None) -> FoldResult:  # fmt: skip
    """Compute every missing cell of one fold.

    Steps: slice and preprocess the fold (:func:`prepare_fold`), search the
    neighbours once for every kNN estimator (:func:`search_fold`), fit, predict
    and evaluate each estimator (:func:`mlknn.experiments._cell.run_cell`),
    and turn each outcome into result rows and warning rows.

    Parameters
    ----------
    task : FoldTask
    X, Y : the dataset
    streams : dict, optional
        Given for the batches of a prequential protocol run in stream order: the
        models carried by ``partial_fit`` (:mod:`mlknn.experiments._stream`), by
        ``(algorithm, params)``, read and updated here. Cells whose model cannot be
        updated exactly are refitted.

    Returns
    -------
    FoldResult
    """
    _fold_delay()
    fold_log = WarningLog()
    data = prepare_fold(task, X, Y, fold_log)
    built = [(spec, spec.build(task.seed)) for spec in task.specs]
    carried: dict[tuple[str, str], int] = {}  # (algorithm, params) -> rows its model has learnt
    if streams is not None:
        from ..utils._resources import memory_limit

        carriable = [i for i, (spec, est) in enumerate(built)
                     if is_knn(est) and can_update(est, task.preprocessing, task.search)]  # fmt: skip
        width = max((est.n_neighbors for _, est in built if is_knn(est)), default=1) + 1
        per_model = carried_bytes(X, Y, width)
        # What the models carried from here hold by the end of the stream, beyond what they hold now.
        held = sum(m.n_seen for m in streams.values()) / max(1, X.shape[0]) * per_model
        needed = len(carriable) * per_model - held
        for i in carriable:
            spec, est = built[i]
            # Each cell is judged by the limit its estimator's guards use (its own max_memory,
            # else the global one), so that a cell carried here is one whose fit would not refuse.
            room = memory_limit(getattr(est, "max_memory", None))[0] - needed
            # A model is carried only from an earlier batch of this stream (fewer rows seen);
            # otherwise (the first batch, or after a failed cell) a fresh one starts with them all,
            # if the carried models fit in memory (else the cell is refitted).
            kept = streams.pop((spec.name, spec.key()), None)
            if kept is not None and kept.n_seen < data.n_train:
                built[i] = (spec, kept.estimator)
                carried[(spec.name, spec.key())] = kept.n_seen
            elif room >= 0:
                carried[(spec.name, spec.key())] = 0
    base = _fold_columns(task, data)
    out = FoldResult()
    try:
        searched = [(s, e) for s, e in built if is_knn(e) and (s.name, s.key()) not in carried]
        search = search_fold(task, data, searched, fold_log)
    except Exception as exc:  # noqa: BLE001 - recorded for every kNN cell of the fold; the others still run
        search = None
        for spec, _ in searched:
            out.warnings += cell_warning_rows(base, spec, [error_record(exc)])
        failed = {id(est) for _, est in searched}
        built = [(spec, est) for spec, est in built if id(est) not in failed]
    shared = fold_log.records()  # preprocessing and search warnings concern every cell of the fold
    for spec, est in built:
        n_seen = carried.get((spec.name, spec.key()))
        try:
            outcome = run_cell(est, data, search, task.at_k, task.ties, decisions=task.decisions,
                               seed=task.seed, n_seen=n_seen)
        except Exception as exc:  # noqa: BLE001 - one failing cell is recorded; the grid goes on
            out.warnings += cell_warning_rows(base, spec, [error_record(exc)])
            continue
        if streams is not None and n_seen is not None:
            streams[(spec.name, spec.key())] = StreamModel(est, data.n_train)
        out.rows += cell_rows(base, spec, est, outcome, search if n_seen is None else None)
        fold_level = [r for r in shared if (is_knn(est) and n_seen is None) or r["stage"] != "search"]
        out.warnings += cell_warning_rows(base, spec, fold_level + outcome.warnings)
    return out


def _run_fold_job(task: FoldTask, X: MatrixLike, Y: LabelMatrix) -> tuple[FoldTask, FoldResult]:
    return task, run_fold(task, X, Y)


def _run_stream(tasks: list[FoldTask], X: MatrixLike, Y: LabelMatrix) -> Iterator[tuple[FoldTask, FoldResult]]:
    """A prequential protocol's batches in stream order, carrying the models that
    ``partial_fit`` updates exactly from one batch to the next."""
    streams: dict[tuple[str, str], StreamModel] = {}
    for task in sorted(tasks, key=lambda t: t.fold.fold):
        yield task, run_fold(task, X, Y, streams)


# ----------------------------------------------------------------- planning
def cell_key(
    dataset: str, spec: AlgorithmSpec, prep_key: str, search_key: str, protocol_key: str, repeat: int, fold: int
) -> tuple[str, str, str, str, str, str, int, int]:
    return (dataset, spec.name, spec.key(), prep_key, search_key, protocol_key, int(repeat), int(fold))


def count_cells(
    config: ExperimentConfig, db: ResultsDB, n_samples: Mapping[str, int] | None = None
) -> tuple[int, int]:
    """(total, done) cells of ``config`` in ``db`` (without loading any data).

    Parameters
    ----------
    config : ExperimentConfig
        The experiment.
    db : ResultsDB
        The results database.
    n_samples : mapping of dataset name -> rows, optional
        Required by the prequential protocol, whose number of batches depends
        on each dataset's length.

    Returns
    -------
    total : int
        Cells of the grid (algorithm configurations x datasets x folds).
    done : int
        Those already in ``db``.

    See Also
    --------
    run_experiment : Computes the missing cells.

    Examples
    --------
    >>> import os, tempfile
    >>> from mlknn.datasets import make_multilabel
    >>> from mlknn.experiments import ExperimentConfig, ProtocolConfig, ResultsDB, count_cells
    >>> toy = make_multilabel(n_samples=60, n_features=5, n_labels=3, random_state=0)
    >>> config = ExperimentConfig(datasets=("toy",), algorithms=("mlknn",), k=(5, 10),
    ...                           protocol=ProtocolConfig("holdout", n_repeats=2))
    >>> db = ResultsDB(os.path.join(tempfile.mkdtemp(), "results.db"))
    >>> count_cells(config, db)
    (4, 0)
    """
    specs = config.specs()
    per_dataset = {ds: config.protocol.n_folds((n_samples or {}).get(ds)) for ds in config.datasets}
    if None in per_dataset.values():
        raise ValueError(
            "count_cells of a prequential protocol needs n_samples (rows per dataset): its number of "
            "batches depends on each dataset's length."
        )
    total = len(specs) * sum(int(n or 0) for n in per_dataset.values())
    done_set = db.done_cells(config.datasets)
    protocol_key, search_key = config.protocol.key(), config.search_key()
    wanted = {(s.name, s.key()) for s in specs}
    split_params = config.protocol.splitter().params()
    n_rep = split_params["n_repeats"]
    done = 0
    for c in done_set:
        ds, alg, params, prep, search, proto, rep, fold = c
        n_fold = per_dataset.get(ds) if config.protocol.name == "prequential" else split_params.get("n_splits", 1)
        if (
            rep < n_rep
            and fold < int(n_fold or 0)  # type: ignore[call-overload]  # an int or None
            and ds in config.datasets
            and (alg, params) in wanted
            and prep == config.preprocessing_for(ds).key()
            and search == search_key
            and proto == protocol_key
        ):
            done += 1
    return total, done


class _NullProgress:
    def start(self, total: int, done: int) -> None:
        pass

    def advance(self, n: int) -> None:
        pass

    def message(self, text: str) -> None:
        pass


def _load(
    dataset: str, config: ExperimentConfig, data: Mapping[str, tuple[MatrixLike, MatrixLike]] | None,
    data_home: str | os.PathLike[str] | None,
) -> tuple[MatrixLike, LabelMatrix]:
    """A dataset as the experiment splits it: in memory or loaded, after its dataset-level filter."""
    if data is not None and dataset in data:
        X, Y = data[dataset]
    else:
        X, Y = load_dataset(dataset, data_home)
    return apply_prefilter(X, as_label_matrix(Y), config.preprocessing_for(dataset).dataset_level())


def run_experiment(
    config: ExperimentConfig,
    db: ResultsDB | str | os.PathLike[str],
    *,
    n_jobs: int = 1,
    progress: Progress | None = None,
    data: Mapping[str, tuple[MatrixLike, MatrixLike]] | None = None,
    data_home: str | os.PathLike[str] | None = None,
    executor: FoldExecutor | None = None,
    incremental: bool = True,
) -> dict[str, Any]:
    """Run (or complete) an experiment.

    Parameters
    ----------
    config : ExperimentConfig
        The grid: datasets, algorithms, parameters, protocol and preprocessing.
    db : ResultsDB or str or path-like
        The results database, or its path (created if missing; cells already in it are
        not computed again).
    n_jobs : int, default=1
        Fold tasks computed in parallel (joblib); results are written by this
        process only.
    progress : object with ``start(total, done)``, ``advance(n)``, ``message(text)``, optional
        Receives the number of cells, those done before and each finished one (the CLI's
        progress bar); None: silent.
    data : mapping of dataset name -> (X, Y), optional
        In-memory datasets (take precedence over loading by name).
    data_home : str, optional
        Dataset folder (default ``$MLKNN_DATA``).
    executor : object with ``run_folds(fn, tasks, X, Y)``, optional
        Runs the fold tasks elsewhere instead of joblib (e.g.
        :class:`mlknn.distributed.DaskExecutor` on a Dask cluster): it must yield
        ``fn(task, X, Y)`` for every task exactly once, in any order, as they
        finish. This process still writes every result (``n_jobs`` is then unused).
    incremental : bool, default=True
        Prequential protocol without ``executor``: run the batches in stream order
        in this process and carry each cell's model from batch to batch with
        ``partial_fit`` where that gives the refitted model bit for bit
        (:mod:`mlknn.experiments._stream`; the stored measures are the same, the
        cost no longer grows with the square of the stream; ``n_jobs`` is then
        unused). False: refit every batch on everything seen, batches in parallel.

    Returns
    -------
    dict
        ``total`` cells, ``done_before``, ``computed`` cells, ``rows_written``,
        ``failed`` cells and their ``errors`` (the ``warnings`` rows of stage
        ``"error"``: a cell that raised is recorded there and the run goes on; it
        has no result rows, so running again retries it).

    Raises
    ------
    GridConfigurationError
        Before anything runs, when a configuration cannot be built or its k
        exceeds a dataset's training part: every such problem, one line each.

    See Also
    --------
    count_cells : How many cells are done.
    ResultsDB : Where the results go.
    mlknn.distributed.run_experiment : The same on a Dask cluster.

    Examples
    --------
    >>> import os, tempfile
    >>> from mlknn.datasets import make_multilabel
    >>> from mlknn.experiments import ExperimentConfig, ProtocolConfig, ResultsDB, run_experiment
    >>> toy = make_multilabel(n_samples=60, n_features=5, n_labels=3, random_state=0)
    >>> config = ExperimentConfig(datasets=("toy",), algorithms=("mlknn",), k=(5, 10),
    ...                           protocol=ProtocolConfig("holdout", n_repeats=2))
    >>> db = ResultsDB(os.path.join(tempfile.mkdtemp(), "results.db"))
    >>> summary = run_experiment(config, db, data={"toy": (toy.X, toy.Y)})
    >>> summary["total"], db.count()
    (4, 80)
    >>> sorted({row["algorithm"] for row in db.rows()})
    ['mlknn']
    """
    own_db = not isinstance(db, ResultsDB)
    results_db = db if isinstance(db, ResultsDB) else ResultsDB(db)
    progress = progress or _NullProgress()
    try:
        specs = config.specs()
        loaded: dict[str, tuple[MatrixLike, LabelMatrix]] = {}
        sizes = None
        if config.protocol.name == "prequential":  # the number of batches needs each dataset's length
            loaded = {name: _load(name, config, data, data_home) for name in config.datasets}
            sizes = {name: int(X.shape[0]) for name, (X, _) in loaded.items()}
        total, done_before = count_cells(config, results_db, sizes)
        protocol_key, search_key = config.protocol.key(), config.search_key()
        splitter = config.protocol.splitter()
        done = results_db.done_cells(config.datasets)
        computed = written = 0

        def tasks_for(dataset: str) -> tuple[MatrixLike, LabelMatrix, list[FoldTask]]:
            prep = config.preprocessing_for(dataset)
            prep_key = prep.key()
            prefilter = prep.dataset_level()
            X, Y = loaded.pop(dataset) if dataset in loaded else _load(dataset, config, data, data_home)
            folds = list(splitter.split(X, Y))
            results_db.record_folds(dataset, protocol_key, canonical_json(prefilter), folds, X.shape[0])
            out: list[FoldTask] = []
            for f in folds:
                missing = [
                    s for s in specs
                    if cell_key(dataset, s, prep_key, search_key, protocol_key, f.repeat, f.fold) not in done
                ]  # fmt: skip
                if missing:
                    out.append(FoldTask(dataset, f, missing, prep, config.search(), protocol_key, config.protocol.seed,
                                        tuple(config.at_k), tuple(config.ties), config.decisions()))
            return X, Y, out

        # Every dataset's folds first, so that every cell is checked against every dataset
        # before anything runs, and all the problems are reported at once.
        prepared = [(dataset, *tasks_for(dataset)) for dataset in config.datasets]
        problems = grid_problems(specs, config.protocol.seed, [
            (dataset, min(len(t.fold.train) for t in tasks)) for dataset, _, _, tasks in prepared if tasks
        ])  # fmt: skip
        if problems:
            raise GridConfigurationError(problems)
        progress.start(total, done_before)
        failed: list[dict[str, Any]] = []
        for dataset, X, Y, tasks in prepared:
            if not tasks:
                continue
            progress.message(f"{dataset}: {len(tasks)} fold(s) to compute")
            if executor is not None:
                results = executor.run_folds(_run_fold_job, tasks, X, Y)
            elif incremental and config.protocol.name == "prequential":
                results = _run_stream(tasks, X, Y)
            elif n_jobs == 1 or len(tasks) == 1:
                results = (_run_fold_job(t, X, Y) for t in tasks)
            else:
                from joblib import Parallel, delayed

                results = Parallel(n_jobs=n_jobs, return_as="generator_unordered")(
                    delayed(_run_fold_job)(t, X, Y) for t in tasks
                )
            for task, result in results:
                written += results_db.write_cells(result.rows, warnings=result.warnings)
                errors = [w for w in result.warnings if w["stage"] == ERROR_STAGE]
                for error in errors:
                    progress.message(f"failed: {error['algorithm']} {error['params']} on {error['dataset']} "
                                     f"(repeat {error['repeat']}, fold {error['fold']}): {error['message']}")
                failed += errors
                computed += len(task.specs) - len(errors)
                progress.advance(len(task.specs))
        return {"total": total, "done_before": done_before, "computed": computed, "rows_written": written,
                "failed": len(failed), "errors": failed}
    finally:
        if own_db:
            results_db.close()
