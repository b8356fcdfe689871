"""Decision rules in the harness and the report: --threshold, --conformal, --calibration.

Every stored measure is recomputed here from the stored folds through the public
decision API (TunedThresholds, ConformalLabelSets, expected_calibration_error) and
by hand (coverage, set size), and the default measures must stay bit-identical.
"""

import numpy as np
import pytest
from test_cli import _run

from mlknn import MLkNN
from mlknn.datasets import make_multilabel
from mlknn.decision import ConformalLabelSets, TunedThresholds
from mlknn.experiments import ExperimentConfig, ProtocolConfig, ResultsDB, config_from_dict, run_experiment
from mlknn.experiments._decisions import DECISION_METRICS, RELIABILITY_BINS, is_decision_measure
from mlknn.metrics import METRIC_NAMES, evaluate, expected_calibration_error


@pytest.fixture(scope="module")
def toy():
    d = make_multilabel(n_samples=160, n_features=5, n_labels=4, random_state=1)
    return d.X, d.Y


def _config(**kw):
    return ExperimentConfig(datasets=("toy",), algorithms=("mlknn",), k=(5,),
                            protocol=ProtocolConfig("holdout", n_repeats=2, seed=3), **kw)


def _values(db):
    out = {}
    for r in db.rows():
        out[(r["repeat"], r["metric"])] = r["value"]
    return out


def test_settings_are_validated_and_canonical():
    cfg = _config(threshold=("Per-Label",), conformal=("SET:0.10",))
    assert cfg.threshold == ("per-label",) and cfg.conformal == ("set:0.1",)
    assert bool(cfg.decisions()) and not bool(_config().decisions())
    with pytest.raises(ValueError, match="'threshold' setting must be one of"):
        _config(threshold=("best",))
    for bad in ("set", "set:1.5", "cover:0.1", "set:x"):
        with pytest.raises(ValueError, match="'conformal' setting must be 'guarantee:alpha'"):
            _config(conformal=(bad,))
    toml = config_from_dict({"datasets": ["toy"], "algorithms": ["mlknn"], "threshold": ["global", "rcut"],
                             "conformal": "fnr:0.2", "calibration": True})
    assert toml.threshold == ("global", "rcut") and toml.conformal == ("fnr:0.2",) and toml.calibration
    with pytest.raises(ValueError, match="'calibration' key"):
        config_from_dict({"datasets": ["toy"], "algorithms": ["mlknn"], "calibration": "yes"})
    assert cfg.with_overrides(threshold=["pcut"]).threshold == ("pcut",)


def test_grid_stores_tuned_conformal_and_calibration_measures(toy, tmp_path):
    X, Y = toy
    cfg = _config(threshold=("per-label", "rcut"), conformal=("set:0.2", "fnr:0.2", "label:0.3"))
    db = ResultsDB(tmp_path / "d.db")
    run_experiment(cfg, db, data={"toy": (X, Y)})
    plain = ResultsDB(tmp_path / "p.db")
    run_experiment(_config(), plain, data={"toy": (X, Y)})
    got, base = _values(db), _values(plain)
    # The default measures are those of a run without decisions, to the bit.
    assert {k: v for k, v in got.items() if not is_decision_measure(k[1])} == base
    for fold in db.folds("toy"):
        r, tr, te = fold["repeat"], fold["train"], fold["test"]
        X_tr, Y_tr, X_te, Y_te = X[tr], Y[tr], X[te], Y[te]
        P = MLkNN(5, random_state=3).fit(X_tr, Y_tr).predict_proba(X_te)
        for strategy in ("per-label", "rcut"):
            rule = TunedThresholds(MLkNN(5, random_state=3), strategy=strategy, random_state=3).fit(X_tr, Y_tr)
            expected = evaluate(Y_te, rule.predict(X_te), P)
            for m in DECISION_METRICS:
                assert got[(r, f"{m}[threshold={strategy}]")] == pytest.approx(expected[m], abs=1e-12)
        for setting in ("set:0.2", "fnr:0.2", "label:0.3"):
            guarantee, alpha = setting.split(":")
            S = ConformalLabelSets(MLkNN(5, random_state=3), alpha=float(alpha), guarantee=guarantee,
                                   random_state=3).fit(X_tr, Y_tr).predict(X_te).astype(bool)
            if guarantee == "set":
                cov = np.mean([set(np.flatnonzero(y)) <= set(np.flatnonzero(s)) for y, s in zip(Y_te, S)])
            elif guarantee == "fnr":
                cov = 1 - np.mean([(y & ~s).sum() / y.sum() if y.sum() else 0.0 for y, s in zip(Y_te.astype(bool), S)])
            else:
                cov = np.mean([S[Y_te[:, l] == 1, l].mean() for l in range(Y.shape[1]) if Y_te[:, l].any()])
            assert got[(r, f"conformal_coverage[{setting}]")] == pytest.approx(cov, abs=1e-12)
            assert got[(r, f"conformal_set_size[{setting}]")] == pytest.approx(S.sum(axis=1).mean(), abs=1e-12)
        assert got[(r, "ece")] == pytest.approx(expected_calibration_error(Y_te, P), abs=1e-12)
        assert got[(r, "ece_micro")] == pytest.approx(expected_calibration_error(Y_te, P, average="micro"), abs=1e-12)
        counts = [got[(r, f"reliability_count[{b}]")] for b in range(RELIABILITY_BINS)]
        assert sum(counts) == Y_te.size


def test_calibration_alone_and_an_uncertifiable_alpha(toy, tmp_path):
    X, Y = toy
    db = ResultsDB(tmp_path / "c.db")
    run_experiment(_config(calibration=True, conformal=("set:0.001",)), db, data={"toy": (X, Y)})
    metrics = {r["metric"] for r in db.rows()}
    assert "ece" in metrics and not any(m.startswith("conformal") for m in metrics)
    assert any("set:0.001: not computed" in w["message"] and w["stage"] == "decide" for w in db.warnings())
    assert len(metrics) == len(METRIC_NAMES) + 2 + 3 * RELIABILITY_BINS


def test_cli_grid_with_threshold_and_conformal_and_the_report(tmp_path, capsys):
    db = tmp_path / "r.db"
    code, out = _run(["run", "simulated2d", "--algorithms", "mlknn,brknna", "--k", "5", "--protocol", "holdout",
                      "--repeats", "2", "--db", str(db), "--threshold", "per-label", "--threshold", "global",
                      "--conformal", "set:0.1"], capsys)  # fmt: skip
    assert code == 0, out
    with ResultsDB(db) as rdb:
        metrics = {r["metric"] for r in rdb.rows()}
    assert {"macro_f1[threshold=per-label]", "micro_f1[threshold=global]", "conformal_coverage[set:0.1]",
            "conformal_set_size[set:0.1]", "ece"} <= metrics
    code, out = _run(["report", str(db), "--out", str(tmp_path / "rep")], capsys)
    assert code == 0, out
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "Tuned decision rules" in md and "| default | global | per-label |" in md
    assert "Calibration of the posteriors" in md and "ECE (macro)" in md and "reliability_simulated" in md
    assert "Conformal label sets" in md and "| set:0.1 | 0.900 |" in md
    # The default tables do not list the decision measures as metrics of their own.
    assert "macro_f1[threshold" not in md.split("Tuned decision rules")[0]
    code, out = _run(["run", "--threshold", "per-label"], capsys)
    assert code == 1 and "--threshold" in out and "need DATASET arguments" in out
