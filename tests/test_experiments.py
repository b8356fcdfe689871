"""The experiment harness: configs, runner, results DB, resume after kill -9, presets."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import numpy as np
import pytest

from mlknn.experiments import (
    AlgorithmSpec,
    ExperimentConfig,
    FoldMismatchError,
    PreprocessingConfig,
    ProtocolConfig,
    ResultsDB,
    config_from_dict,
    count_cells,
    get_preset,
    parse_param_option,
    run_experiment,
)
from mlknn.metrics import METRIC_NAMES, evaluate
from mlknn.model_selection import make_protocol

N_METRICS = len(METRIC_NAMES)


@pytest.fixture
def tiny():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4))
    Y = (X @ rng.normal(size=(4, 3)) + 0.5 * rng.normal(size=(60, 3)) > 0.3).astype(np.uint8)
    return {"tiny": (X, Y)}


def _cfg(**kw):
    base = {"datasets": ("tiny",), "algorithms": ("mlknn", "brknn"), "k": (3, 5), "protocol": ProtocolConfig("5x2", seed=0)}
    base.update(kw)
    return ExperimentConfig(**base)


# --------------------------------------------------------------------- config
def test_grid_expansion_and_param_scopes():
    cfg = _cfg(params=(("*", "smoothing", (0.5, 1)), ("brknn", "hubness", (None,))))
    specs = cfg.specs()
    keys = [(s.name, s.key()) for s in specs]
    assert ("mlknn", '{"n_neighbors":3,"smoothing":0.5}') in keys
    assert ("mlknn", '{"n_neighbors":5,"smoothing":1.0}') in keys  # int 1 coerced to the float default
    assert ("brknn", '{"hubness":null,"n_neighbors":5}') in keys
    assert len(specs) == 4 + 2
    assert AlgorithmSpec("mlknn", (("n_neighbors", 3), ("smoothing", 0.5))).label() == "mlknn(k=3, smoothing=0.5)"


def test_config_errors_name_the_parameter():
    with pytest.raises(ValueError, match="'nope'.*not a parameter of any"):
        _cfg(params=(("*", "nope", (1,)),)).specs()
    with pytest.raises(ValueError, match="Unknown parameter 'nope' for algorithm 'mlknn'"):
        _cfg(params=(("mlknn", "nope", (1,)),)).specs()
    with pytest.raises(ValueError, match="Unknown algorithm"):
        _cfg(algorithms=("nosuch",)).specs()
    with pytest.raises(ValueError, match="variant 'mlknn:foo'"):
        _cfg(algorithms=("mlknn:foo",))
    with pytest.raises(ValueError, match="'k'.*0"):
        _cfg(k=(0,))
    with pytest.raises(ValueError, match="'scaling'.*'unit'"):
        PreprocessingConfig(scaling="unit")
    with pytest.raises(ValueError, match="'feature_selection'.*1.5"):
        PreprocessingConfig(feature_selection=1.5)
    with pytest.raises(ValueError, match="'label_scope'"):
        PreprocessingConfig(label_scope="all")
    with pytest.raises(ValueError, match="--param"):
        parse_param_option("smoothing")
    assert parse_param_option("mlhiknn.fuzziness=3,inf") == ("mlhiknn", "fuzziness", (3, float("inf")))


def test_config_from_toml(tmp_path):
    from mlknn.experiments import load_config

    path = tmp_path / "exp.toml"
    path.write_text(
        'datasets = ["emotions", "enron"]\nalgorithms = ["mlknn"]\nk = [10, 20]\n'
        '[protocol]\nname = "holdout"\nn_repeats = 3\nseed = 2\n'
        '[preprocessing]\nscaling = "minmax"\n'
        "[preprocessing.datasets.enron]\nfeature_selection = 0.2\n"
        "[params.mlknn]\nsmoothing = [0.5, 1.0]\n"
    )
    cfg = config_from_dict(load_config(path))
    assert cfg.datasets == ("emotions", "enron") and cfg.k == (10, 20)
    assert cfg.protocol.name == "holdout" and cfg.protocol.n_folds() == 3
    assert cfg.preprocessing_for("enron").feature_selection == 0.2
    assert cfg.preprocessing_for("enron").scaling == "minmax"
    assert cfg.preprocessing_for("emotions").feature_selection is None
    assert len(cfg.specs()) == 4
    bad = tmp_path / "bad.toml"
    bad.write_text("datasets = [\n")
    with pytest.raises(ValueError, match="not valid TOML"):
        load_config(bad)
    with pytest.raises(ValueError, match="Unknown key"):
        config_from_dict({"datasets": ["a"], "algorithms": ["mlknn"], "colour": 1})


# --------------------------------------------------------------------- runner
def test_run_writes_one_row_per_cell_and_metric_and_resumes(tmp_path, tiny):
    db = tmp_path / "r.db"
    cfg = _cfg()
    info = run_experiment(cfg, db, data=tiny)
    expected = 1 * 4 * 10 * N_METRICS  # datasets x configs x folds x metrics
    assert info["total"] == 40 and info["computed"] == 40 and info["rows_written"] == expected
    again = run_experiment(cfg, db, data=tiny)
    assert again["computed"] == 0 and again["done_before"] == 40 and again["rows_written"] == 0
    with ResultsDB(db) as rdb:
        assert rdb.count() == expected
        rows = rdb.rows()
        assert {r["metric"] for r in rows} == set(METRIC_NAMES)
        assert all(r["version"] and r["fit_seconds"] >= 0 and r["predict_seconds"] >= 0 for r in rows)
        # the exact folds are stored and match the splitter
        folds = rdb.folds("tiny")
        assert len(folds) == 10
        X, Y = tiny["tiny"]
        for stored, f in zip(folds, make_protocol("5x2", random_state=0).split(X, Y)):
            assert np.array_equal(stored["train"], f.train) and np.array_equal(stored["test"], f.test)
        # duplicates are ignored by the UNIQUE constraint
        assert rdb.write_cells([{k: v for k, v in rows[0].items() if k not in ("version", "created")}]) == 0


def test_search_once_equals_fitting_each_estimator(tmp_path, tiny):
    from mlknn import MLkNN
    from mlknn._registry import get_estimator_class

    db = tmp_path / "r.db"
    run_experiment(_cfg(), db, data=tiny)
    X, Y = tiny["tiny"]
    f = next(iter(make_protocol("5x2", random_state=0).split(X, Y)))
    with ResultsDB(db) as rdb:
        rows = rdb.rows("repeat = 0 AND fold = 0")
    got = {(r["algorithm"], r["params"], r["metric"]): r["value"] for r in rows}
    for name, cls in (("mlknn", MLkNN), ("brknn", get_estimator_class("brknn"))):
        for k in (3, 5):
            est = cls(n_neighbors=k).fit(X[f.train], Y[f.train])
            ref = evaluate(Y[f.test], est.predict(X[f.test]), est.predict_proba(X[f.test]))
            for m in METRIC_NAMES:
                v = got[(name, json.dumps({"n_neighbors": k}, separators=(",", ":")), m)]
                assert v == pytest.approx(ref[m], nan_ok=True), (name, k, m)


def test_more_repeats_complete_fewer(tmp_path, tiny):
    db = tmp_path / "r.db"
    quick = _cfg(protocol=ProtocolConfig("holdout", n_repeats=2, seed=1))
    full = _cfg(protocol=ProtocolConfig("holdout", n_repeats=3, seed=1))
    run_experiment(quick, db, data=tiny)
    info = run_experiment(full, db, data=tiny)
    assert info["done_before"] == 8 and info["computed"] == 4
    with ResultsDB(db) as rdb:
        assert count_cells(quick, rdb) == (8, 8)


def test_preprocessing_is_recorded_and_dataset_prefilter(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.random((80, 6))
    Y = np.zeros((80, 3), dtype=np.uint8)
    Y[:40, 0] = 1
    Y[20:70, 1] = 1
    Y[:3, 2] = 1  # a rare label (its instances also have label 0)
    Y[75:, 2] = 1  # 5 instances whose only label is the rare one: unlabelled after filtering
    prep = PreprocessingConfig(scaling="minmax", feature_selection=0.5, min_label_count=10, label_scope="dataset")
    cfg = _cfg(datasets=("d",), algorithms=("mlknn",), k=(3,), preprocessing=prep)
    db = tmp_path / "r.db"
    run_experiment(cfg, db, data={"d": (X, Y)})
    with ResultsDB(db) as rdb:
        rows = rdb.rows()
        assert {r["n_labels"] for r in rows} == {2} and {r["n_features"] for r in rows} == {3}
        # rows 70-79 are left without a label (70-74 never had one): dropped before splitting
        assert {r["n_train"] + r["n_test"] for r in rows} == {70}
        assert json.loads(rows[0]["preprocessing"]) == prep.params()
        assert rdb.folds("d")[0]["prefilter"] == '{"drop_unlabelled":true,"min_label_count":10}'


def test_changed_data_is_refused(tmp_path, tiny):
    db = tmp_path / "r.db"
    run_experiment(_cfg(algorithms=("mlknn",), k=(3,)), db, data=tiny)
    X, Y = tiny["tiny"]
    with pytest.raises(FoldMismatchError, match="differ"):
        run_experiment(_cfg(algorithms=("mlknn",), k=(3,)), db, data={"tiny": (X[:50], Y[:50])})


def test_k_too_large_names_the_parameter(tmp_path, tiny):
    with pytest.raises(ValueError, match="'n_neighbors'.*<= n_train - 1 = 29.*40"):
        run_experiment(_cfg(algorithms=("mlknn",), k=(40,)), tmp_path / "r.db", data=tiny)


def test_skml_reading_of_mlknn(tmp_path, tiny):
    from mlknn import MLkNN
    from mlknn.algorithms._kernels import neighbor_label_counts
    from mlknn.neighbors import NeighborGraph, build_graph, get_backend

    db = tmp_path / "r.db"
    run_experiment(_cfg(algorithms=("mlknn:skml",), k=(4,)), db, data=tiny)
    X, Y = tiny["tiny"]
    f = next(iter(make_protocol("5x2", random_state=0).split(X, Y)))
    Xtr, Ytr, Xte, Yte = X[f.train], Y[f.train], X[f.test], Y[f.test]
    index = get_backend("brute").fit(Xtr)
    loo = build_graph(index, None, 3)
    n = Xtr.shape[0]
    # scikit-multilearn: each training point is its own first neighbour
    self_graph = NeighborGraph(np.hstack([np.arange(n)[:, None], loo.indices]), np.hstack([np.zeros((n, 1)), loo.distances]), loo=True)
    est = MLkNN(n_neighbors=4).fit_from_graph(self_graph, Ytr)
    counts = neighbor_label_counts(build_graph(index, Xte, 4), Ytr)
    scores = est.prior_ * est.cond_prob_true_[counts, np.arange(Y.shape[1])]
    ref = evaluate(Yte, est.predict_from_graph(build_graph(index, Xte, 4)), scores)
    with ResultsDB(db) as rdb:
        got = {r["metric"]: r["value"] for r in rdb.rows("repeat = 0 AND fold = 0")}
    assert got["macro_auc"] == pytest.approx(ref["macro_auc"])
    assert got["hamming_loss"] == pytest.approx(ref["hamming_loss"])


@pytest.mark.parametrize("method", ["ls", "dsl"])
def test_skml_reading_with_hubness_keeps_loo(tmp_path, tiny, method):
    # mlknn:skml with hubness=: the reduced leave-one-out training graph (no
    # self-counting) and the unnormalised prior x likelihood on the reduced test graph.
    from mlknn import MLkNN
    from mlknn.algorithms._kernels import neighbor_label_counts

    db = tmp_path / "r.db"
    run_experiment(_cfg(algorithms=("mlknn:skml",), k=(4,), params=(("*", "hubness", (method,)),)), db, data=tiny)
    X, Y = tiny["tiny"]
    f = next(iter(make_protocol("5x2", random_state=0).split(X, Y)))
    Xtr, Ytr, Xte, Yte = X[f.train], Y[f.train], X[f.test], Y[f.test]
    est = MLkNN(n_neighbors=4, hubness=method).fit(Xtr, Ytr)
    reduced, _ = est.query_graph(Xte)
    counts = neighbor_label_counts(reduced, Ytr)
    scores = est.prior_ * est.cond_prob_true_[counts, np.arange(Y.shape[1])]
    ref = evaluate(Yte, est.predict(Xte), scores)
    with ResultsDB(db) as rdb:
        got = {r["metric"]: r["value"] for r in rdb.rows("repeat = 0 AND fold = 0")}
    assert got["macro_auc"] == pytest.approx(ref["macro_auc"])
    assert got["hamming_loss"] == pytest.approx(ref["hamming_loss"])
    # ... and differs from the posterior (what plain mlknn with hubness scores).
    assert not np.allclose(scores, est.predict_proba(Xte))


def test_approximate_search_records_its_recall(tmp_path, tiny, monkeypatch):
    # An "approximate" fold search that misses exactly one of the k true neighbours
    # of every test query: search_recall must be (k - 1) / k, on kNN cells only, and
    # the report shows it in a sentence, not in the metric tables.
    from mlknn.experiments import _runner
    from mlknn.neighbors import NeighborGraph

    real = _runner.search_graphs

    class Approx:  # the brute index, declared approximate
        exact = False

        def __init__(self, index):
            self._index, self.metric = index, index.metric

        def kneighbors(self, X=None, n_neighbors=10, return_distance=True):
            return self._index.kneighbors(X, n_neighbors, return_distance)

    def lossy(X_train, X_test, width, **kw):
        index, g_tr, g_te = real(X_train, X_test, width, **kw)
        ind = g_te.indices.copy()
        ind[:, -1] = [next(j for j in range(X_train.shape[0]) if j not in row) for row in ind]
        return Approx(index), g_tr, NeighborGraph(ind, g_te.distances, loo=False)

    monkeypatch.setattr(_runner, "search_graphs", lossy)
    db = tmp_path / "r.db"
    run_experiment(_cfg(algorithms=("mlknn", "br"), k=(4,)), db, data=tiny)
    with ResultsDB(db) as rdb:
        rows = [r for r in rdb.rows() if r["metric"] == "search_recall"]
    assert {r["algorithm"] for r in rows} == {"mlknn"}
    assert len(rows) == 10 and all(r["value"] == pytest.approx(3 / 4) for r in rows)

    from mlknn.report import build_report

    md = build_report(db, tmp_path / "rep", dataset_figures=False)["markdown"].read_text()
    assert "recall@k of the test queries' graph against exact search" in md
    assert "tiny 0.7500 (min 0.7500)" in md
    assert "search_recall" not in md  # not a metric column, row or ranked table
    # An exact search records nothing.
    monkeypatch.setattr(_runner, "search_graphs", real)
    db2 = tmp_path / "r2.db"
    run_experiment(_cfg(algorithms=("mlknn",), k=(4,)), db2, data=tiny)
    with ResultsDB(db2) as rdb:
        assert not [r for r in rdb.rows() if r["metric"] == "search_recall"]


def test_parallel_run_equals_serial(tmp_path, tiny):
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    cfg = _cfg(algorithms=("mlknn",), k=(3,), protocol=ProtocolConfig("5x2", n_repeats=2, seed=0))
    run_experiment(cfg, a, data=tiny, n_jobs=1)
    run_experiment(cfg, b, data=tiny, n_jobs=2)
    with ResultsDB(a) as ra, ResultsDB(b) as rb:
        va = [(r["repeat"], r["fold"], r["metric"], r["value"]) for r in ra.rows()]
        vb = [(r["repeat"], r["fold"], r["metric"], r["value"]) for r in rb.rows()]
    assert [x[:3] for x in va] == [x[:3] for x in vb]
    np.testing.assert_allclose([x[3] for x in va], [x[3] for x in vb], equal_nan=True)


def test_export_csv(tmp_path, tiny):
    import csv

    db = tmp_path / "r.db"
    run_experiment(_cfg(algorithms=("mlknn",), k=(3,), protocol=ProtocolConfig("holdout", n_repeats=1)), db, data=tiny)
    with ResultsDB(db) as rdb:
        n = rdb.to_csv(tmp_path / "r.csv")
    with open(tmp_path / "r.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert n == len(rows) == N_METRICS
    assert rows[0]["dataset"] == "tiny" and "fit_seconds" in rows[0]


# ------------------------------------------------- interruption and concurrency
GRID = ["simulated2d", "--algorithms", "mlknn,brknn", "--k", "3,5", "--protocol", "kfold", "--repeats", "2"]
EXPECTED_ROWS = 1 * 4 * 20 * N_METRICS  # dataset x configs x (2 x 10 folds) x metrics


def _cli(db, extra_env=None):
    env = {**os.environ, **(extra_env or {})}
    # A shell that starts jobs in the background ignores SIGINT, and the child would
    # inherit that; restore the default so that Python turns SIGINT into KeyboardInterrupt.
    return subprocess.Popen([sys.executable, "-m", "mlknn", "run", *GRID, "--db", str(db)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # noqa: PLW1509  # fmt: skip


def _rows(db):
    if not db.exists():
        return 0
    con = sqlite3.connect(db, timeout=30)
    try:
        return con.execute("SELECT COUNT(*) FROM results").fetchone()[0]
    except sqlite3.OperationalError:
        return 0
    finally:
        con.close()


def _wait_for_rows(db, proc, polls=2400):
    # A bounded wait for the subprocess's first row (a hang guard, not a speed check):
    # at most ``polls`` looks, 0.05 s apart.
    for _ in range(polls):
        n = _rows(db)
        if n > 0:
            return n
        if proc.poll() is not None:
            pytest.fail(f"the run ended before any row was written: {proc.stderr.read().decode()}")
        time.sleep(0.05)
    pytest.fail("no row written in time")


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT])
def test_killed_run_resumes_to_exactly_the_expected_rows(tmp_path, sig):
    db = tmp_path / "r.db"
    proc = _cli(db, {"MLKNN_FOLD_DELAY": "0.25"})  # 20 folds x 0.25 s: we kill it mid-run
    _wait_for_rows(db, proc)
    proc.send_signal(sig)
    proc.wait(timeout=60)
    partial = _rows(db)
    assert 0 < partial < EXPECTED_ROWS
    assert partial % (4 * N_METRICS) == 0  # whole folds only: one transaction per fold
    if sig == signal.SIGINT:
        assert proc.returncode == 130
    done = _cli(db)
    assert done.wait(timeout=300) == 0, done.stderr.read().decode()
    assert _rows(db) == EXPECTED_ROWS
    con = sqlite3.connect(db)
    dup = con.execute(
        "SELECT COUNT(*) FROM (SELECT dataset, algorithm, params, repeat, fold, metric, COUNT(*) c FROM results "
        "GROUP BY 1,2,3,4,5,6 HAVING c > 1)"
    ).fetchone()[0]
    con.close()
    assert dup == 0


def test_two_runs_writing_at_once(tmp_path):
    db = tmp_path / "r.db"
    a = _cli(db, {"MLKNN_FOLD_DELAY": "0.02"})
    b = _cli(db, {"MLKNN_FOLD_DELAY": "0.02"})
    assert a.wait(timeout=300) == 0, a.stderr.read().decode()
    assert b.wait(timeout=300) == 0, b.stderr.read().decode()
    assert _rows(db) == EXPECTED_ROWS
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    con.close()


# -------------------------------------------------------------------- presets
@pytest.mark.parametrize("name", ["mlhiknn2025", "dmlknn2011", "bmlknn"])
def test_presets_load_their_published_tables(name):
    p = get_preset(name)
    rows = p.published_rows()
    assert rows and all(r["dataset"] in p.datasets for r in rows)
    assert set(p.default_tables) <= set(p.table_ids())


def test_published_values_spot_checks():
    t3 = {(r["dataset"], r["algorithm"]): r for r in get_preset("mlhiknn2025").published_rows() if r["table"] == "Table 3"}
    assert (t3[("emotions", "MLHiKNN")]["mean"], t3[("emotions", "MLHiKNN")]["std"]) == (0.846, 0.005)
    assert (t3[("yeast", "MLKNN")]["mean"], t3[("yeast", "MLKNN")]["std"]) == (0.583, 0.006)
    assert t3[("tmc2007-500", "IBLR")]["mean"] == 0.891
    d = {(r["table"], r["algorithm"], r["metric"]): r for r in get_preset("dmlknn2011").published_rows()}
    assert (d[("Table 4", "DMLkNN", "hamming_loss")]["mean"], d[("Table 4", "DMLkNN", "hamming_loss")]["std"]) == (0.189, 0.015)
    assert d[("Table 8", "MLkNN", "coverage")]["mean"] == 13.507
    b = {(r["dataset"], r["algorithm"], r["metric"]): r["mean"] for r in get_preset("bmlknn").published_rows()}
    assert b[("yeast", "BML-kNN", "hamming_loss")] == 0.21 and b[("corel5k", "ML-kNN", "coverage")] == 115


def test_preset_config_and_comparison(tmp_path, tiny):
    p = get_preset("mlhiknn2025")
    cfg, cols = p.config(("emotions",), quick=True, available={"mlknn", "brknna", "brknn"})
    assert cfg.protocol.n_folds() == 4 and cfg.preprocessing.label_scope == "dataset"
    names = sorted({s.name for s in cfg.specs()})
    assert names == ["brknna", "brknna:skml", "mlknn", "mlknn:skml"]
    # comparison against fake results: our mean 0.84 +- ... vs paper 0.834 +- 0.005
    spec = next(s for s in cfg.specs() if s.name == "brknna")
    rows = [{"dataset": "emotions", "algorithm": "brknna", "params": spec.key(),
             "preprocessing": cfg.preprocessing_for("emotions").key(), "protocol": cfg.protocol.key(),
             "metric": "macro_auc", "value": v} for v in (0.83, 0.85)]  # fmt: skip
    comp = [c for c in p.compare(rows, cfg, cols) if c["ours"].startswith("brknna [")]
    assert len(comp) == 1
    c = comp[0]
    assert c["paper_mean"] == 0.834 and c["our_mean"] == pytest.approx(0.84)
    assert c["z"] == pytest.approx((0.84 - 0.834) / 0.005) and c["within_2sd"]
    assert c["n_folds"] == 2


def _open_fresh_db(path, barrier, results):
    barrier.wait()
    try:
        ResultsDB(path).close()
        results.put("ok")
    except Exception as exc:  # reported to the parent, which asserts on it
        results.put(repr(exc))


def test_two_processes_opening_one_new_database_at_once(tmp_path):
    # Switching a new database to WAL meets the other process's lock; before the retry
    # most of these pairs failed with "database is locked".
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    outcomes = []
    for i in range(12):
        barrier, results = ctx.Barrier(2), ctx.Queue()
        procs = [ctx.Process(target=_open_fresh_db, args=(tmp_path / f"r{i}.db", barrier, results))
                 for _ in range(2)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(timeout=60)
        outcomes += [results.get(timeout=5), results.get(timeout=5)]
    assert outcomes == ["ok"] * 24
