"""The prequential protocol: test-then-train over a stream, one stored fold per batch."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import numpy as np
import pytest
import scipy.sparse as sp
from test_experiments import _rows

from mlknn import MLkNN, config_context
from mlknn.datasets import make_multilabel
from mlknn.experiments import (
    ExperimentConfig,
    PreprocessingConfig,
    ProtocolConfig,
    ResultsDB,
    _runner,
    count_cells,
    run_experiment,
)
from mlknn.metrics import evaluate
from mlknn.model_selection._prequential import PrequentialSplit


def test_batches_cover_the_stream_after_the_first():
    X = np.zeros((23, 1))
    folds = list(PrequentialSplit(batch_size=5).split(X))
    assert [f.fold for f in folds] == [0, 1, 2, 3] and {f.repeat for f in folds} == {0}
    assert np.array_equal(np.concatenate([f.test for f in folds]), np.arange(5, 23))
    for f in folds:  # trained on exactly everything before the batch
        assert np.array_equal(f.train, np.arange(f.test[0]))
    shuffled = list(PrequentialSplit(batch_size=5, shuffle=True, random_state=3).split(X))
    order = np.random.RandomState(3).permutation(23)
    assert np.array_equal(shuffled[1].train, order[:10]) and np.array_equal(shuffled[1].test, order[10:15])
    with pytest.raises(ValueError, match="more than n_initial = 30"):
        list(PrequentialSplit(batch_size=30).split(X))


def test_protocol_settings_checked():
    with pytest.raises(ValueError, match="do not apply to protocol 'prequential'"):
        ProtocolConfig("prequential", n_splits=3).splitter()
    with pytest.raises(ValueError, match="for protocol 'prequential'"):
        ProtocolConfig("5x2", batch=10).splitter()
    assert ProtocolConfig("5x2").key() == ProtocolConfig("5x2", batch=None, shuffle=False).key()


@pytest.mark.parametrize("shuffle", [False, True])
def test_cells_are_test_then_train(tmp_path, shuffle):
    toy = make_multilabel(n_samples=130, n_features=4, n_labels=4, random_state=1)
    X = np.round(toy.X, 1)  # ties: the training order decides them, as in a stream
    config = ExperimentConfig(datasets=("toy",), algorithms=("mlknn",), k=(5,),
                              protocol=ProtocolConfig("prequential", batch=40, shuffle=shuffle, seed=2))
    db = ResultsDB(tmp_path / "r.db")
    summary = run_experiment(config, db, data={"toy": (X, toy.Y)})
    assert summary["total"] == 3 and count_cells(config, db, {"toy": 130}) == (3, 3)
    order = PrequentialSplit(40, shuffle=shuffle, random_state=2).order(130)
    rows = db.rows("metric = ?", ("macro_auc",))
    assert [r["fold"] for r in rows] == [0, 1, 2]
    for r in rows:
        start = 40 + 40 * r["fold"]
        seen, batch = order[:start], order[start:start + 40]
        est = MLkNN(5).fit(X[seen], toy.Y[seen])
        expected = evaluate(toy.Y[batch], est.predict(X[batch]), est.predict_proba(X[batch]))["macro_auc"]
        assert r["value"] == expected and r["n_train"] == start and r["n_test"] == len(batch)
    assert json.loads(rows[0]["protocol"])["protocol"] == "prequential"


GRID = ["simulated2d", "--algorithms", "mlknn,brknn", "--k", "5", "--protocol", "prequential", "--batch", "100"]
N_BATCHES = 10  # (1019 - 100) / 100, rounded up


def test_killed_run_resumes(tmp_path):
    """kill -9 in the middle of the stream; the rerun computes only the missing batches."""
    db = tmp_path / "r.db"
    cmd = [sys.executable, "-m", "mlknn", "run", *GRID, "--db", str(db)]
    proc = subprocess.Popen(cmd, env={**os.environ, "MLKNN_FOLD_DELAY": "0.25"}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    for _ in range(2400):  # a bounded wait for the first batch (a hang guard, not a speed check)
        if _rows(db) or proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    partial = _rows(db)
    done = subprocess.run(cmd, env=os.environ, capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr.decode()
    total = _rows(db)
    assert 0 < partial < total and total % (2 * N_BATCHES) == 0
    con = sqlite3.connect(db)
    folds = con.execute("SELECT COUNT(DISTINCT fold), COUNT(*) FROM results WHERE algorithm = 'mlknn' "
                        "AND metric = 'macro_auc'").fetchone()
    con.close()
    assert folds == (N_BATCHES, N_BATCHES)


def test_cli_options_and_toml_reach_the_config():
    from mlknn.cli._run import build_config
    from mlknn.experiments import config_from_dict

    cfg = build_config(["emotions"], protocol="prequential", batch=250, shuffle=True, seed=3, missing_labels=0.3)
    assert (cfg.protocol.name, cfg.protocol.batch, cfg.protocol.shuffle) == ("prequential", 250, True)
    assert cfg.preprocessing.missing_labels == 0.3
    split = cfg.protocol.splitter()
    assert (split.batch_size, split.shuffle, split.random_state) == (250, True, 3)
    toml = config_from_dict({"datasets": ["emotions"], "algorithms": ["mlknn"],
                             "protocol": {"name": "prequential", "batch": 100},
                             "preprocessing": {"missing_labels": 0.1}})
    assert toml.protocol.batch == 100 and toml.preprocessing.missing_labels == 0.1


def _stored(db):
    """Every stored measure and cell column but the timings, and the warnings, keyed by cell and measure."""
    timing = {"fit_seconds", "predict_seconds", "search_seconds", "created"}
    values = {(r["algorithm"], r["params"], r["fold"], r["metric"]): {k: r[k] for k in r.keys() if k not in timing}
              for r in db.rows()}
    warned = sorted((w["algorithm"], w["params"], w["fold"], w["stage"], w["category"], w["message"], w["count"])
                    for w in db.warnings())
    return values, warned


@pytest.mark.parametrize("missing", [0.0, 0.3])
def test_partial_fit_path_stores_the_refit_values(tmp_path, monkeypatch, missing):
    """Carrying MLkNN / BRkNN by partial_fit from batch to batch stores exactly what refitting stores
    (emotions, in file order and shuffled, with and without hidden labels); MLHiKNN, whose
    regressions only reach a refit to the solver's tolerance, is refitted in the same grid."""
    from mlknn.datasets import load

    data = load("emotions")
    X, Y = data.X, data.Y
    algorithms = ("mlknn", "brknn") if missing else ("mlknn", "brknn", "mlhiknn")
    config = ExperimentConfig(datasets=("emotions",), algorithms=algorithms, k=(5, 10),
                              protocol=ProtocolConfig("prequential", batch=100, shuffle=bool(missing), seed=1),
                              preprocessing=PreprocessingConfig(missing_labels=missing))
    stored = []
    # The third run carries nothing: the models would not fit in the memory allowed.
    for run, (incremental, per_model) in enumerate(((True, None), (False, None), (True, 2e9))):
        db = ResultsDB(tmp_path / f"r{run}.db")
        with config_context(max_memory="1GB" if per_model else None):
            if per_model:
                monkeypatch.setattr(_runner, "carried_bytes", lambda X, Y, width: per_model)
            run_experiment(config, db, data={"emotions": (X, Y)}, incremental=incremental)
        stored.append(_stored(db))
        carried = {r["algorithm"] for r in db.rows() if r["search_seconds"] == 0}
        assert carried == ({"mlknn", "brknn"} if run == 0 else set())  # the grid's search not used
    assert stored[2] == stored[1]
    (values, warned), (refit_values, refit_warned) = stored[:2]
    assert len(values) == len(refit_values) > 0 and values.keys() == refit_values.keys()
    for key, row in values.items():
        assert row == refit_values[key] or all(
            a == b or (isinstance(a, float) and np.isnan(a) and np.isnan(b))
            for a, b in zip(row.values(), refit_values[key].values())), key
    assert warned == refit_warned


def test_carrying_follows_each_estimators_own_max_memory(tmp_path, monkeypatch):
    """A cell is carried by partial_fit only when the carried models fit the limit its
    estimator's guards use: its own ``max_memory`` when set (either way), else the global one."""
    toy = make_multilabel(n_samples=300, n_features=5, n_labels=4, random_state=0)
    X, Y = toy.X, toy.Y
    monkeypatch.setattr(_runner, "carried_bytes", lambda X, Y, width: 2e9)  # 4 GB for the two models

    def carried(max_memory, globally):
        config = ExperimentConfig(datasets=("toy",), algorithms=("mlknn", "brknn"), k=(5,),
                                  params=(("mlknn", "max_memory", (max_memory,)),),
                                  protocol=ProtocolConfig("prequential", batch=100))
        db = ResultsDB(tmp_path / f"{max_memory}-{globally}.db")
        with config_context(max_memory=globally):
            run_experiment(config, db, data={"toy": (X, Y)})
        return {r["algorithm"] for r in db.rows() if r["search_seconds"] == 0}

    assert carried("64GB", "1GB") == {"mlknn"}  # its own limit is larger than the global one
    assert carried("1GB", "64GB") == {"brknn"}  # and smaller
    assert carried(None, "64GB") == {"mlknn", "brknn"}


def test_carried_bytes_counts_rows_labels_and_lists():
    from mlknn.experiments._stream import carried_bytes

    X, Y = np.zeros((10, 3), dtype=np.float32), np.zeros((10, 2), dtype=np.uint8)
    # the rows as float64 twice (validated rows, the index's copy), the labels, 16 bytes per list slot
    assert carried_bytes(X, Y, 4) == 2 * 10 * 3 * 8 + 20 + 16 * 10 * 6
    assert carried_bytes(sp.csr_array(X.astype(np.float64)), sp.csr_array(Y), 4) == 2 * 11 * 4 + (11 * 4) + 16 * 10 * 6
