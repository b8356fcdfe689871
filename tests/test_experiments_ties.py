"""Ranking measures under several tie rules, stored per cell, and the paper columns that pick one."""

import json
import math

import numpy as np
import pytest

from mlknn import BRkNN
from mlknn.experiments import ExperimentConfig, ProtocolConfig, ResultsDB, config_from_dict, run_experiment
from mlknn.experiments._cell import FoldData, FoldSearch, run_cell
from mlknn.experiments._preset_model import PaperColumn
from mlknn.experiments._presets import get_preset, write_comparison
from mlknn.experiments._runner import search_graphs
from mlknn.experiments._ties import (
    RANKING_METRICS,
    TIE_VARIANTS,
    base_metric,
    tie_rule_of,
    tie_variant_values,
    variant_key,
)
from mlknn.metrics import METRIC_NAMES, evaluate


def _tiny():
    # The `tiny` problem of test_experiments.py; BR-kNN's vote fractions at k = 3 tie often.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4))
    Y = (X @ rng.normal(size=(4, 3)) + 0.5 * rng.normal(size=(60, 3)) > 0.3).astype(np.uint8)
    return X, Y


def _cfg(**kw):
    return ExperimentConfig(datasets=("tiny",), algorithms=("brknn", "mlknn"), k=(3,),
                            protocol=ProtocolConfig("5x2", n_repeats=1, seed=0), **kw)  # fmt: skip


def _by_key(db):
    with ResultsDB(db) as rdb:
        return {(r["algorithm"], r["params"], r["preprocessing"], r["repeat"], r["fold"], r["metric"]): r["value"]
                for r in rdb.rows()}  # fmt: skip


# ------------------------------------------------------------ the stored values
def test_a_cell_stores_each_rule_equal_to_evaluate_with_that_rule():
    X, Y = _tiny()
    data = FoldData(X[:40], Y[:40], X[40:], Y[40:])
    search = FoldSearch(*search_graphs(X[:40], X[40:], 3), seconds=0.0)
    out = run_cell(BRkNN(n_neighbors=3), data, search, ties=TIE_VARIANTS)
    # The same predictions evaluated directly (BR-kNN outside the graph path: fit / predict).
    est = BRkNN(n_neighbors=3).fit(X[:40], Y[:40])
    P, S = est.predict(X[40:]), est.predict_proba(X[40:])
    assert len(np.unique(S)) < S.size / 2  # many ties: the rules can differ
    for rule in ("average", "optimistic", "mulan"):
        want = evaluate(Y[40:], P, S, ties=rule)
        for m in RANKING_METRICS:
            assert out.values[f"{m}[{rule}]"] == pytest.approx(want[m], abs=1e-12), (m, rule)
    rev = evaluate(Y[40:, ::-1], P[:, ::-1], S[:, ::-1], ties="mulan")
    for m in RANKING_METRICS:
        assert out.values[f"{m}[mulan-reversed]"] == pytest.approx(rev[m], abs=1e-12)
    # The plain keys are the default rule, unchanged.
    plain = evaluate(Y[40:], P, S)
    for m in METRIC_NAMES:
        assert out.values[m] == pytest.approx(plain[m], abs=1e-12, nan_ok=True), m
    # The rules do differ on these ties (the test could fail): some variant differs from the default.
    assert any(out.values[variant_key(m, r)] != out.values[m] for m in RANKING_METRICS for r in TIE_VARIANTS)


def test_mulan_reversed_one_error_is_the_first_maximum():
    # Hand-worked: row 0's top score is shared by labels 0 (irrelevant) and 2 (relevant): the first
    # maximum (label 0) is irrelevant, an error; "mulan" picks the higher index (label 2), no error.
    # Row 1: labels 1 (relevant) and 2 tie at the top: first maximum label 1, no error; mulan: label 2, error.
    Y = np.array([[0, 1, 1], [0, 1, 0]])
    S = np.array([[0.6, 0.2, 0.6], [0.1, 0.5, 0.5]])
    got = tie_variant_values(Y, Y, S, ("mulan", "mulan-reversed"))
    assert got["one_error[mulan-reversed]"] == 0.5  # row 0 only
    assert got["one_error[mulan]"] == 0.5  # row 1 only
    # Matlab's max() per row, a loop: the first index of the maximum.
    first = [int(np.flatnonzero(s == s.max())[0]) for s in S]
    assert np.mean([Y[i, j] == 0 for i, j in enumerate(first)]) == got["one_error[mulan-reversed]"]
    # Coverage, stable ascending sort (mulan): row 0 ranks 2 > 0 > 1, the relevant labels 2 and 1
    # are at ranks 1 and 3: coverage 2; row 1 ranks 2 > 1 > 0: label 1 at rank 2, coverage 1.
    assert got["coverage[mulan]"] == 1.5


def test_key_helpers():
    assert variant_key("coverage", "mulan") == "coverage[mulan]"
    assert variant_key("coverage", "pessimistic") == "coverage"
    assert base_metric("coverage[mulan-reversed]") == "coverage" and base_metric("precision@3") == "precision@3"
    assert tie_rule_of("coverage[mulan]") == "mulan"
    assert tie_rule_of("coverage") == "pessimistic" and tie_rule_of("hamming_loss") is None


# --------------------------------------------------------- databases and keys
def test_variants_leave_the_plain_keys_and_resume_an_old_database(tmp_path):
    X, Y = _tiny()
    old = tmp_path / "old.db"
    run_experiment(_cfg(), old, data={"tiny": (X, Y)})  # as every database before the variants
    before = _by_key(old)
    assert not any("[" in k[-1] for k in before)
    # Resuming it with the variants asked for: loads, computes nothing, changes nothing.
    info = run_experiment(_cfg(ties=TIE_VARIANTS), old, data={"tiny": (X, Y)})
    assert info["computed"] == 0 and _by_key(old) == before
    # A new database: the same keys with the same values, plus the variants.
    new = tmp_path / "new.db"
    run_experiment(_cfg(ties=TIE_VARIANTS), new, data={"tiny": (X, Y)})
    after = _by_key(new)
    assert {k: v for k, v in after.items() if "[" not in k[-1]}.keys() == before.keys()
    for k, v in before.items():
        assert after[k] == v or (math.isnan(v) and math.isnan(after[k])), k
    extra = {k[-1] for k in after} - {k[-1] for k in before}
    assert extra == {variant_key(m, r) for m in RANKING_METRICS for r in TIE_VARIANTS}


def test_ties_setting_is_validated_and_read_from_the_config_file():
    with pytest.raises(ValueError, match="'ties' parameter.*'random'"):
        _cfg(ties=("random",))
    cfg = config_from_dict({"datasets": ["tiny"], "algorithms": ["brknn"], "ties": ["mulan", "optimistic"]})
    assert cfg.ties == ("mulan", "optimistic")
    assert _cfg().with_overrides(ties=["mulan"]).ties == ("mulan",)


# ---------------------------------------------------------------- the presets
_MATLAB = {"one_error": "mulan-reversed", "coverage": "mulan", "ranking_loss": "pessimistic",
           "average_precision": "mulan"}  # fmt: skip


def test_seed_000_columns_read_the_matlab_evaluation():
    preset = get_preset("dmlknn2011")
    for c in preset.columns:
        assert {m: c.tie_rule(m) for m in RANKING_METRICS} == _MATLAB, c.label
        assert c.tie_rule("hamming_loss") is None
    cfg, _ = preset.config(["emotions"])
    assert cfg.ties == TIE_VARIANTS
    # Seed 002 keeps the default rule.
    assert all(c.tie_rule("coverage") == "pessimistic" for c in get_preset("bmlknn").columns)


def test_compare_picks_the_named_variant_and_says_which(tmp_path):
    preset = get_preset("dmlknn2011")
    cfg, cols = preset.config(["emotions"], quick=True)
    cols = [c for c in cols if c.label == "BRkNN"]
    spec = next(s for s in cfg.specs() if s.name == "brknn")
    base = {"dataset": "emotions", "algorithm": "brknn", "params": spec.key(),
            "preprocessing": cfg.preprocessing_for("emotions").key(), "protocol": cfg.protocol.key()}  # fmt: skip
    # Made-up stored values: the plain key 1.0 + fold, the variants 2.0, 3.0... + fold.
    rows = []
    for fold in range(3):
        for m in ("coverage", "one_error", "ranking_loss", "hamming_loss"):
            rows.append({**base, "metric": m, "value": 1.0 + fold})
            for i, r in enumerate(TIE_VARIANTS):
                if m in RANKING_METRICS:
                    rows.append({**base, "metric": variant_key(m, r), "value": 2.0 + i + fold})
    got = {c["metric"]: c for c in preset.compare(rows, cfg, cols)}
    i_mulan, i_rev = TIE_VARIANTS.index("mulan"), TIE_VARIANTS.index("mulan-reversed")
    assert got["coverage"]["our_mean"] == 2.0 + i_mulan + 1 and got["coverage"]["ties"] == "mulan"
    assert got["coverage"]["stored_metric"] == "coverage[mulan]"
    assert got["coverage"]["ours"].endswith(" (ties: mulan)")
    assert got["one_error"]["our_mean"] == 2.0 + i_rev + 1 and got["one_error"]["ties"] == "mulan-reversed"
    assert got["ranking_loss"]["our_mean"] == 2.0 and got["ranking_loss"]["ties"] == "pessimistic"
    assert "ties" not in got["ranking_loss"]["ours"]
    assert got["hamming_loss"]["ties"] is None and got["hamming_loss"]["our_mean"] == 2.0
    # An old database (no variants): the variant cells are empty, not an error.
    old = [r for r in rows if "[" not in r["metric"]]
    got_old = {c["metric"]: c for c in preset.compare(old, cfg, cols)}
    assert got_old["coverage"]["n_folds"] == 0 and math.isnan(got_old["coverage"]["our_mean"])
    assert got_old["ranking_loss"]["n_folds"] == 3
    csv_path, md_path = write_comparison(list(got.values()), tmp_path)
    head = csv_path.read_text().splitlines()[0].split(",")
    assert head[3] == "ties" and "| mulan |" in md_path.read_text()


def test_a_column_names_only_stored_rules():
    with pytest.raises(ValueError, match="'ties' parameter of column 'X'.*'hamming_loss'"):
        PaperColumn("X", "brknn", ties=(("hamming_loss", "mulan"),))
    with pytest.raises(ValueError, match="'ties' parameter of column 'X'.*'random'"):
        PaperColumn("X", "brknn", ties=(("coverage", "random"),))


def test_chi2_rule_per_dataset_in_the_presets():
    seed000, _ = get_preset("dmlknn2011").config(["emotions", "medical", "enron"])
    assert seed000.preprocessing_for("enron").chi2_rule == "presence-avg"
    assert seed000.preprocessing_for("medical").chi2_rule == "max"
    assert json.loads(seed000.preprocessing_for("enron").key())["chi2_rule"] == "presence-avg"
    seed001, _ = get_preset("mlhiknn2025").config(["bibtex", "llog", "enron"])
    assert seed001.preprocessing_for("bibtex").chi2_rule == "mean"
    assert seed001.preprocessing_for("llog").chi2_rule == "max"
    # Overrides keep the rule: --scaling and --feature-selection change only their own setting.
    other, _ = get_preset("mlhiknn2025").config(["bibtex"], scaling="minmax", feature_selection=100)
    p = other.preprocessing_for("bibtex")
    assert (p.chi2_rule, p.scaling, p.feature_selection) == ("mean", "minmax", 100)
    # The datasets without a rule keep the keys of earlier databases (no chi2_rule entry).
    assert "chi2_rule" not in json.loads(seed000.preprocessing_for("medical").key())


# ------------------------------------------------------------------- report
def test_report_shows_the_pessimistic_reading_and_reports_a_variant_when_named(tmp_path):
    from mlknn.report import build_report

    X, Y = _tiny()
    db = tmp_path / "r.db"
    run_experiment(_cfg(ties=("mulan",)), db, data={"tiny": (X, Y)})
    default = build_report(db, tmp_path / "a", dataset_figures=False)["markdown"].read_text()
    assert "coverage[mulan]" in default and "pessimistically" in default  # said, not tabulated
    assert "| coverage[mulan]" not in default and "coverage[mulan] ↓" not in default
    named = build_report(db, tmp_path / "b", metrics=["coverage", "coverage[mulan]"],
                         dataset_figures=False)["markdown"].read_text()  # fmt: skip
    assert "coverage[mulan] ↓" in named and "`ties='mulan'`" in named
    with pytest.raises(ValueError, match=r"coverage\[random\]"):
        build_report(db, tmp_path / "c", metrics=["coverage[random]"], dataset_figures=False)


def test_reproduce_warns_when_an_old_database_lacks_the_variants(tmp_path):
    from mlknn.experiments._presets import _warn_missing_tie_variants

    row = {"dataset": "emotions", "ties": "mulan", "n_folds": 0, "stored_metric": "coverage[mulan]"}
    with pytest.warns(UserWarning, match=r"'coverage\[mulan\]'.*does not hold.*new --out"):
        _warn_missing_tie_variants([row], tmp_path / "r.db")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _warn_missing_tie_variants([{**row, "n_folds": 10}, {**row, "ties": "pessimistic"},
                                    {**row, "ties": None}], tmp_path / "r.db")  # fmt: skip
