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
4. evaluates every configuration with :func:`mlknn.metrics.evaluate`.

The main process writes each finished fold task in ONE transaction, so an
interrupted run (Ctrl-C, ``kill -9``) loses at most the folds in flight, and
running the same command again computes only the missing cells. Fold tasks
run in parallel with joblib (``n_jobs``).
"""

import os
import time
import warnings
from dataclasses import dataclass

import numpy as np

from ..model_selection._split import Fold
from ._config import canonical_json
from ._results import ResultsDB

#: Environment variable: seconds to sleep at the start of every fold task. Only
#: for tests that interrupt a run on purpose (makes "mid-run" deterministic).
FOLD_DELAY_ENV = "MLKNN_FOLD_DELAY"


# ------------------------------------------------------------------ datasets
def load_dataset(name, data_home=None):
    """X, Y of a dataset name (``$MLKNN_DATA``), an ARFF path or ``simulated2d``."""
    if name == "simulated2d":
        from ..datasets import make_simulated_2d

        b = make_simulated_2d(random_state=0)
        return b.X, np.asarray(b.Y)
    from ..datasets import load

    b = load(name, data_home=data_home)
    return b.X, np.asarray(b.Y)


def apply_prefilter(X, Y, prefilter):
    """Dataset-level preprocessing (before splitting): drop rare labels, then the
    instances left without any label. Returns X, Y."""
    if prefilter is None:
        return X, Y
    from ..preprocessing import RareLabelFilter

    Y = RareLabelFilter(prefilter["min_label_count"]).fit_transform(Y)
    if prefilter.get("drop_unlabelled"):
        keep = np.flatnonzero(np.asarray(Y).sum(axis=1) > 0)
        if keep.size < Y.shape[0]:
            X, Y = X[keep], Y[keep]
    return X, Y


# ---------------------------------------------------------------- estimators
def make_estimator(spec, seed):
    """Instantiate the estimator of an :class:`AlgorithmSpec`."""
    from .._registry import get_estimator_class

    base, variant = spec.base, spec.variant
    cls = get_estimator_class("brknn" if (base, variant) == ("brknna", "skml") else base)
    params = spec.params_dict()
    defaults = cls().get_params()
    if "random_state" in defaults and "random_state" not in params:
        params["random_state"] = seed
    try:
        return cls(**params)
    except TypeError as exc:
        raise ValueError(f"Cannot build {spec.label()}: {exc}") from exc


def _is_knn(est):
    from ..base import KNNMultiLabelBase

    return isinstance(est, KNNMultiLabelBase)


def _params_json(est):
    out = {}
    for k, v in est.get_params(deep=False).items():
        out[k] = v if isinstance(v, (int, float, str, bool, type(None))) else repr(v)
    return canonical_json(out)


def _scores(est, X):
    if hasattr(est, "predict_proba"):
        try:
            S = est.predict_proba(X)
            if isinstance(S, list):  # per-label (n, 2) arrays
                S = np.column_stack([s[:, -1] for s in S])
            return np.asarray(S, dtype=float)
        except (AttributeError, NotImplementedError):
            pass
    if hasattr(est, "decision_function"):
        return np.asarray(est.decision_function(X), dtype=float)
    return None


def _self_included_graph(graph, k):
    """scikit-multilearn's training neighbourhoods (``ignore_first_neighbours=0``):
    each training point is its own first neighbour, followed by its k - 1 nearest
    others. Flagged ``loo=True`` only so that ``fit_from_graph`` accepts it."""
    from ..neighbors import NeighborGraph

    n = graph.n_points
    ind = np.hstack([np.arange(n, dtype=np.intp)[:, None], graph.indices[:, : k - 1]])
    dist = np.hstack([np.zeros((n, 1)), graph.distances[:, : k - 1]])
    return NeighborGraph(np.ascontiguousarray(ind), np.ascontiguousarray(dist), loo=True)


def _skml_mlknn_scores(est, graph, Y_train):
    # scikit-multilearn's MLkNN.predict_proba: P(H1) * P(E_j | H1), not normalised.
    from ..algorithms._kernels import neighbor_label_counts

    counts = neighbor_label_counts(graph.take(est.n_neighbors), Y_train)
    cols = np.arange(Y_train.shape[1])[None, :]
    return est.prior_[None, :] * est.cond_prob_true_[counts, cols]


# ---------------------------------------------------------------- neighbours
def search_graphs(X_train, X_test, width, neighbors="brute", metric="euclidean"):
    """(index, train LOO graph, test graph) at ``width`` neighbours.

    Uses ``mlknn.neighbors._reuse`` when that helper exists, else
    :func:`mlknn.neighbors.get_backend` + :func:`mlknn.neighbors.build_graph`.
    """
    try:
        from ..neighbors import _reuse  # noqa: F401  (colleague's helper, optional)

        helper = getattr(_reuse, "fold_graphs", None)
    except ImportError:
        helper = None
    if helper is not None:
        try:
            return helper(X_train, X_test, width, neighbors=neighbors, metric=metric)
        except TypeError:
            pass
    from ..neighbors import build_graph, get_backend

    index = get_backend(neighbors, metric=metric).fit(X_train)
    return index, build_graph(index, None, width), build_graph(index, X_test, width)


# ---------------------------------------------------------------- fold task
@dataclass
class FoldTask:
    dataset: str
    fold: Fold
    specs: list
    preprocessing: object  # PreprocessingConfig
    search: dict
    protocol_key: str
    seed: int


def run_fold(task, X, Y):
    """Compute every missing cell of one fold; returns the result rows (dicts)."""
    from ..metrics import METRIC_NAMES, evaluate
    from ..preprocessing import FoldPreprocessor

    delay = float(os.environ.get(FOLD_DELAY_ENV, "0") or 0)
    if delay > 0:
        time.sleep(delay)
    f = task.fold
    X_tr, X_te = X[f.train], X[f.test]
    Y_tr, Y_te = Y[f.train], Y[f.test]
    pre = FoldPreprocessor(**task.preprocessing.fold_level()).fit(X_tr, Y_tr)
    X_tr, Y_tr = pre.transform(X_tr, Y_tr)
    X_te, Y_te = pre.transform(X_te, Y_te)
    n_tr = X_tr.shape[0]

    built = [(spec, make_estimator(spec, task.seed)) for spec in task.specs]
    knn = [(s, e) for s, e in built if _is_knn(e)]
    graphs, search_s, recall = None, 0.0, None
    if knn:
        widths = []
        for spec, est in knn:
            w = est._width_for(n_tr) if hasattr(est, "_width_for") else est._search_width()
            if est.n_neighbors > n_tr - 1 or w > n_tr - 1:
                raise ValueError(
                    f"The 'n_neighbors' parameter of {spec.label()} must be <= n_train - 1 = {n_tr - 1} "
                    f"on dataset {task.dataset!r} (repeat {f.repeat}, fold {f.fold}). Got {est.n_neighbors} instead."
                )
            widths.append(w)
        t0 = time.perf_counter()
        graphs = search_graphs(X_tr, X_te, max(widths), **task.search)
        search_s = time.perf_counter() - t0
        recall = _search_recall(graphs, X_tr, X_te, max(widths), task.seed, f)

    base = {
        "dataset": task.dataset,
        "preprocessing": task.preprocessing.key(),
        "search": canonical_json(task.search),
        "protocol": task.protocol_key,
        "repeat": int(f.repeat),
        "fold": int(f.fold),
        "n_train": int(n_tr),
        "n_test": int(X_te.shape[0]),
        "n_features": int(X_tr.shape[1]),
        "n_labels": int(Y_tr.shape[1]),
    }
    rows = []
    for spec, est in built:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t0 = time.perf_counter()
            if _is_knn(est):
                index, g_tr, g_te = graphs
                skml = (spec.base, spec.variant) == ("mlknn", "skml")
                if skml and getattr(est, "hubness", None) is None:
                    # With hubness reduction the training neighbourhoods stay
                    # leave-one-out (the reduced LOO graph; see VARIANTS).
                    g_tr = _self_included_graph(g_tr, est.n_neighbors)
                est.fit_from_graph(g_tr, Y_tr, X=X_tr, index=index)
                fit_s = time.perf_counter() - t0
                t0 = time.perf_counter()
                S = est.predict_proba_from_graph(g_te, X_te)
                P = est.predict_from_graph(g_te, X_te)
                if skml:
                    S = _skml_mlknn_scores(est, est._transform_graph(g_te, X_te), np.asarray(Y_tr))
                searched = search_s
            else:
                est.fit(X_tr, Y_tr)
                fit_s = time.perf_counter() - t0
                t0 = time.perf_counter()
                P = est.predict(X_te)
                S = _scores(est, X_te)
                searched = 0.0
            pred_s = time.perf_counter() - t0
            P = P.toarray() if hasattr(P, "toarray") else np.asarray(P)
            values = evaluate(Y_te, P, S)
        est_json = _params_json(est)
        if _is_knn(est) and recall is not None:
            values = {**values, SEARCH_RECALL: recall}
        for m in list(METRIC_NAMES) + ([SEARCH_RECALL] if SEARCH_RECALL in values else []):
            rows.append(
                {**base, "algorithm": spec.name, "params": spec.key(), "metric": m, "value": values[m],
                 "fit_seconds": fit_s, "predict_seconds": pred_s, "search_seconds": searched,
                 "estimator": f"{type(est).__name__}{est_json}"}
            )  # fmt: skip
    return rows


#: Extra result row of the kNN cells of a grid searched with an approximate
#: backend: recall@width of the fold's test-query graph against exact search.
SEARCH_RECALL = "search_recall"

#: Test queries searched exactly per fold to measure it.
SEARCH_RECALL_SAMPLES = 200


def _search_recall(graphs, X_tr, X_te, width, seed, fold):
    """Recall of an approximate fold search on a sample of the test queries (None if exact)."""
    from ..neighbors import estimate_recall, is_exact

    index, _, g_te = graphs
    if index is None or is_exact(index) or g_te is None:
        return None
    return estimate_recall(index, X_tr, X_te, n_neighbors=width, n_samples=SEARCH_RECALL_SAMPLES,
                           random_state=(int(seed) + 7919 * int(fold.repeat) + int(fold.fold)) % 2**32,
                           approx_indices=g_te.indices)


def _run_fold_job(task, X, Y):
    return task, run_fold(task, X, Y)


# ----------------------------------------------------------------- planning
def cell_key(dataset, spec, prep_key, search_key, protocol_key, repeat, fold):
    return (dataset, spec.name, spec.key(), prep_key, search_key, protocol_key, int(repeat), int(fold))


def count_cells(config, db):
    """(total, done) cells of ``config`` in ``db`` (without loading any data)."""
    specs = config.specs()
    n_folds = config.protocol.n_folds()
    total = len(config.datasets) * len(specs) * n_folds
    done_set = db.done_cells(config.datasets)
    protocol_key, search_key = config.protocol.key(), config.search_key()
    wanted = {(s.name, s.key()) for s in specs}
    sp = config.protocol.splitter().params()
    n_rep, n_fold = sp["n_repeats"], sp.get("n_splits", 1)
    done = 0
    for c in done_set:
        ds, alg, params, prep, search, proto, rep, fold = c
        if (
            rep < n_rep
            and fold < n_fold
            and ds in config.datasets
            and (alg, params) in wanted
            and prep == config.preprocessing_for(ds).key()
            and search == search_key
            and proto == protocol_key
        ):
            done += 1
    return total, done


class _NullProgress:
    def start(self, total, done):
        pass

    def advance(self, n):
        pass

    def message(self, text):
        pass


def run_experiment(config, db, *, n_jobs=1, progress=None, data=None, data_home=None, executor=None):
    """Run (or complete) an experiment.

    Parameters
    ----------
    config : ExperimentConfig
    db : ResultsDB or str or path-like
    n_jobs : int, default=1
        Fold tasks computed in parallel (joblib); results are written by this
        process only.
    progress : object with ``start(total, done)``, ``advance(n)``, ``message(text)``, optional
    data : mapping of dataset name -> (X, Y), optional
        In-memory datasets (take precedence over loading by name).
    data_home : str, optional
        Dataset folder (default ``$MLKNN_DATA``).
    executor : object with ``run_folds(fn, tasks, X, Y)``, optional
        Runs the fold tasks elsewhere instead of joblib (e.g.
        :class:`mlknn.distributed.DaskExecutor` on a Dask cluster): it must yield
        ``fn(task, X, Y)`` for every task exactly once, in any order, as they
        finish. This process still writes every result (``n_jobs`` is then unused).

    Returns
    -------
    dict
        ``total`` cells, ``done_before``, ``computed`` cells, ``rows_written``.
    """
    own_db = not isinstance(db, ResultsDB)
    if own_db:
        db = ResultsDB(db)
    progress = progress or _NullProgress()
    try:
        specs = config.specs()
        total, done_before = count_cells(config, db)
        progress.start(total, done_before)
        protocol_key, search_key = config.protocol.key(), config.search_key()
        splitter = config.protocol.splitter()
        done = db.done_cells(config.datasets)
        computed = written = 0

        def tasks_for(dataset):
            prep = config.preprocessing_for(dataset)
            prep_key = prep.key()
            prefilter = prep.dataset_level()
            if data is not None and dataset in data:
                X, Y = data[dataset]
            else:
                X, Y = load_dataset(dataset, data_home)
            X, Y = apply_prefilter(X, np.asarray(Y), prefilter)
            folds = list(splitter.split(X, Y))
            db.record_folds(dataset, protocol_key, canonical_json(prefilter), folds, X.shape[0])
            out = []
            for f in folds:
                missing = [
                    s for s in specs
                    if cell_key(dataset, s, prep_key, search_key, protocol_key, f.repeat, f.fold) not in done
                ]  # fmt: skip
                if missing:
                    out.append(FoldTask(dataset, f, missing, prep, config.search(), protocol_key, config.protocol.seed))
            return X, Y, out

        for dataset in config.datasets:
            X, Y, tasks = tasks_for(dataset)
            if not tasks:
                continue
            progress.message(f"{dataset}: {len(tasks)} fold(s) to compute")
            if executor is not None:
                results = executor.run_folds(_run_fold_job, tasks, X, Y)
            elif n_jobs == 1 or len(tasks) == 1:
                results = (_run_fold_job(t, X, Y) for t in tasks)
            else:
                from joblib import Parallel, delayed

                results = Parallel(n_jobs=n_jobs, return_as="generator_unordered")(
                    delayed(_run_fold_job)(t, X, Y) for t in tasks
                )
            for task, rows in results:
                written += db.write_cells(rows)
                computed += len(task.specs)
                progress.advance(len(task.specs))
        return {"total": total, "done_before": done_before, "computed": computed, "rows_written": written}
    finally:
        if own_db:
            db.close()
