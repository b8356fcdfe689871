"""The harness on the estimators' public API: aliases, recorded warnings, overrides."""

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from mlknn import MLkNN
from mlknn.experiments import (
    ExperimentConfig,
    ProtocolConfig,
    ResultsDB,
    run_experiment,
)

REFERENCE = Path(__file__).parent / "data" / "harness_reference.json"


def _tiny():
    # The `tiny` problem of test_experiments.py (the reference numbers were recorded on it).
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4))
    Y = (X @ rng.normal(size=(4, 3)) + 0.5 * rng.normal(size=(60, 3)) > 0.3).astype(np.uint8)
    return {"tiny": (X, Y)}


def _values(db):
    with ResultsDB(db) as rdb:
        return {f'{r["algorithm"]}|{r["params"]}|{r["repeat"]}|{r["fold"]}|{r["metric"]}': r["value"] for r in rdb.rows()}


# ------------------------------------------------------------------- aliases
def test_aliases_give_the_numbers_recorded_before_they_became_parameters(tmp_path):
    # tests/data/harness_reference.json: computed by the harness when mlknn:skml was
    # harness code (a self-including training graph and prior x likelihood recomputed
    # from prior_ / cond_prob_true_) and brknna:skml ran the registry's plain brknn.
    ref = json.loads(REFERENCE.read_text())["values"]
    cfg = ExperimentConfig(
        datasets=("tiny",),
        algorithms=("mlknn", "mlknn:skml", "brknna", "brknna:skml", "brknn"),
        k=(3, 5),
        params=(("mlknn:skml", "hubness", (None, "ls", "dsl", "mp-gauss")),),
        protocol=ProtocolConfig("5x2", n_repeats=1, seed=0),
    )
    run_experiment(cfg, tmp_path / "r.db", data=_tiny())
    got = _values(tmp_path / "r.db")
    # Measures added to evaluate after the recording (macro_/micro_accuracy) are not in it.
    recorded = {key.rsplit("|", 1)[1] for key in ref}
    got = {key: v for key, v in got.items() if key.rsplit("|", 1)[1] in recorded}
    assert set(got) == set(ref)
    for key, want in ref.items():
        if want is None:
            assert np.isnan(got[key]), key
        else:
            assert got[key] == pytest.approx(want, rel=1e-12, abs=1e-15), key
    # the skml reading differs from the paper's (the test could fail)
    plain = 'mlknn:skml|{"hubness":null,'
    assert any(got[k] != got[k.replace(plain, "mlknn|{")] for k in got if k.startswith(plain) and "ranking_loss" in k)
    with ResultsDB(tmp_path / "r.db") as rdb:
        est = {r["algorithm"]: r["estimator"] for r in rdb.rows("metric = 'hamming_loss'")}
    assert est["mlknn:skml"].startswith("MLkNN") and '"variant":"skmultilearn"' in est["mlknn:skml"]
    assert est["brknna:skml"].startswith("BRkNNa") and '"variant":"skmultilearn"' in est["brknna:skml"]


def test_an_alias_fixes_its_parameter():
    base = {"datasets": ("tiny",), "k": (3,)}
    with pytest.raises(ValueError, match="'mlknn:skml' fixes variant='skmultilearn'.*--param mlknn.variant"):
        ExperimentConfig(algorithms=("mlknn:skml",), params=(("mlknn:skml", "variant", ("paper",)),), **base).specs()
    # a grid-wide axis skips the alias: mlknn varies, mlknn:skml keeps its reading
    specs = ExperimentConfig(algorithms=("mlknn", "mlknn:skml"), params=(("*", "variant", ("paper", "mulan")),),
                             **base).specs()  # fmt: skip
    assert [(s.name, s.key()) for s in specs] == [
        ("mlknn", '{"n_neighbors":3,"variant":"paper"}'),
        ("mlknn", '{"n_neighbors":3,"variant":"mulan"}'),
        ("mlknn:skml", '{"n_neighbors":3}'),
    ]
    assert specs[2].estimator_params() == {"n_neighbors": 3, "variant": "skmultilearn"}


# ------------------------------------------------------------------ warnings
class WarningMLkNN(MLkNN):
    """MLkNN that warns: a ConvergenceWarning per label in fit, one UserWarning in predict."""

    def _fit_graph(self, graph, Y, X):
        for _ in range(Y.shape[1]):
            warnings.warn("lbfgs failed to converge (status=1)", ConvergenceWarning, stacklevel=2)
        return super()._fit_graph(graph, Y, X)

    def _predict_proba_graph(self, graph, X):
        warnings.warn("a deliberate prediction warning", UserWarning, stacklevel=2)
        return super()._predict_proba_graph(graph, X)


def test_warnings_are_recorded_with_their_cell(tmp_path, monkeypatch):
    from mlknn import _registry

    monkeypatch.setitem(_registry.ESTIMATORS, "warnknn", (__name__, "WarningMLkNN"))
    cfg = ExperimentConfig(datasets=("tiny",), algorithms=("warnknn", "mlknn"), k=(3,),
                           protocol=ProtocolConfig("5x2", n_repeats=1, seed=0))  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # none escapes the harness (none is printed either)
        run_experiment(cfg, tmp_path / "r.db", data=_tiny())
    with ResultsDB(tmp_path / "r.db") as db:
        rows = db.warnings(algorithm="warnknn")
        assert db.warnings(algorithm="mlknn") == []  # the plain cells raised nothing
        assert db.warnings(dataset="other") == []
        values = {(r["algorithm"], r["fold"], r["metric"]): r["value"] for r in db.rows()}
    fit = [r for r in rows if r["stage"] == "fit"]
    pred = [r for r in rows if r["stage"] == "predict"]
    assert [(r["fold"], r["category"], r["message"], r["count"]) for r in fit] == [
        (f, "sklearn.exceptions.ConvergenceWarning", "lbfgs failed to converge (status=1)", 3) for f in (0, 1)
    ]  # one row per distinct warning, counted: 3 labels
    assert [(r["fold"], r["category"], r["count"]) for r in pred] == [(0, "builtins.UserWarning", 1), (1, "builtins.UserWarning", 1)]
    assert all(r["params"] == '{"n_neighbors":3}' and r["dataset"] == "tiny" for r in rows)
    # warning does not change the numbers
    assert all(values[("warnknn", f, m)] == values[("mlknn", f, m)] for (a, f, m) in values if a == "mlknn")


def test_warnings_table_is_added_to_an_older_database(tmp_path):
    import sqlite3

    path = tmp_path / "old.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
    con.execute("INSERT INTO meta VALUES ('schema_version', '1')")
    con.commit()
    con.close()
    with ResultsDB(path) as db:
        assert db.warnings() == []
        assert db.conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == "2"


# ----------------------------------------------------------------- overrides
def test_with_overrides_is_the_one_merge():
    from mlknn.experiments import PreprocessingConfig

    cfg = ExperimentConfig(
        datasets=("emotions", "enron"), algorithms=("mlknn",), k=(10,),
        protocol=ProtocolConfig("kfold", n_splits=3, stratify=True, seed=4),
        preprocessing=PreprocessingConfig(scaling="minmax"),
        dataset_preprocessing=(("enron", PreprocessingConfig(feature_selection=0.2)),),
        params=(("*", "smoothing", (1.0,)),),
    )  # fmt: skip
    assert cfg.with_overrides() == cfg
    new = cfg.with_overrides(protocol="holdout", n_repeats=2, scaling="zscore", feature_selection="none",
                             add_params=("mlknn.hubness=ls",), k=[5], at_k=[1, 3])  # fmt: skip
    # a protocol name resets that protocol's own sizes, keeps stratify and the seed
    assert new.protocol == ProtocolConfig("holdout", n_repeats=2, stratify=True, seed=4)
    assert new.preprocessing == PreprocessingConfig(scaling="zscore")
    assert new.preprocessing_for("enron") == PreprocessingConfig(scaling="zscore")  # per-dataset too
    assert new.params == (("*", "smoothing", (1.0,)), ("mlknn", "hubness", ("ls",)))
    assert new.k == (5,) and new.at_k == (1, 3)
    assert cfg.with_overrides(feature_selection="184").preprocessing_for("enron").feature_selection == 184
    assert cfg.with_overrides(seed=9).protocol == ProtocolConfig("kfold", n_splits=3, stratify=True, seed=9)
    with pytest.raises(ValueError, match="Unknown setting.*'colour'"):
        cfg.with_overrides(colour="red")
    with pytest.raises(ValueError, match="'n_splits'.*>= 2.*1"):
        cfg.with_overrides(n_splits=1)
    with pytest.raises(ValueError, match="'scaling'.*'unit'"):
        cfg.with_overrides(scaling="unit")
    with pytest.raises(ValueError, match="'at_k'.*0"):
        cfg.with_overrides(at_k=(0,))
