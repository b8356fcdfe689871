"""The mlknn command line: single run, grid run, export, report, reproduce."""

import csv
import sqlite3

import pytest

import mlknn
from mlknn.cli._main import main
from mlknn.metrics import METRIC_NAMES


def _run(argv, capsys):
    try:
        main(argv)
        code = 0
    except SystemExit as exc:
        code = exc.code
    out = capsys.readouterr()
    return code, out.out + out.err


def _count(db):
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT COUNT(*) FROM results").fetchone()[0]
    finally:
        con.close()


def test_no_arguments_runs_the_default_single_run(capsys):
    code, out = _run([], capsys)
    assert code == 0
    assert "MLkNN(n_neighbors=10" in out and "simulated-2d" in out and "hamming_loss" in out and "macro_auc" in out


def test_run_without_datasets_is_the_single_run(capsys):
    code, out = _run(["run", "--algorithm", "brknn", "--k", "5"], capsys)
    assert code == 0 and "n_neighbors=5" in out


def test_single_run_on_a_named_dataset(capsys, data_dir, monkeypatch):
    monkeypatch.setenv("MLKNN_DATA", str(data_dir))
    code, out = _run(["run", "--data", "emotions", "--algorithm", "mlknn", "--k", "10"], capsys)
    assert code == 0 and "train 391 x 72, test 202, 6 labels" in out


def test_grid_run_and_resume(tmp_path, capsys):
    db = tmp_path / "r.db"
    argv = ["run", "simulated2d", "--algorithms", "mlknn,brknn", "--k", "3,5", "--protocol", "holdout",
            "--repeats", "2", "--db", str(db)]  # fmt: skip
    code, out = _run(argv, capsys)
    assert code == 0, out
    assert "4 configuration(s)" in out and "8 cells: 0 already" in out
    assert _count(db) == 8 * len(METRIC_NAMES)
    code, out = _run(argv, capsys)
    assert code == 0 and "8 already" in out and "0 computed now" in out
    assert _count(db) == 8 * len(METRIC_NAMES)


def test_grid_with_config_file_params_and_jobs(tmp_path, capsys):
    cfg = tmp_path / "exp.toml"
    cfg.write_text(
        'datasets = ["simulated2d"]\nalgorithms = ["mlknn"]\nk = [3]\n'
        '[protocol]\nname = "5x2"\nn_repeats = 1\n[preprocessing]\nscaling = "zscore"\n'
    )
    db = tmp_path / "r.db"
    code, out = _run(["run", "--config", str(cfg), "--param", "smoothing=0.5,1", "--jobs", "2", "--db", str(db)], capsys)
    assert code == 0, out
    assert _count(db) == 2 * 2 * len(METRIC_NAMES)  # 2 configurations x 2 folds
    con = sqlite3.connect(db)
    preps = {r[0] for r in con.execute("SELECT DISTINCT preprocessing FROM results")}
    con.close()
    assert preps == {'{"feature_selection":null,"label_scope":"train","min_label_count":0,"scaling":"zscore"}'}


def test_cli_errors_are_one_line_and_name_the_option(tmp_path, capsys):
    code, out = _run(["run", "simulated2d", "--algorithms", "mlknn"], capsys)
    assert code == 1 and "'--db' option is required" in out
    code, out = _run(["run", "--k", "3,5"], capsys)
    assert code == 1 and "single run must be one int" in out
    code, out = _run(["run", "simulated2d", "--db", str(tmp_path / "x.db"), "--protocol", "bogus"], capsys)
    assert code == 1 and "'protocol' parameter must be one of" in out and "'bogus'" in out
    code, out = _run(["run", "--algorithms", "mlknn"], capsys)
    assert code == 1 and "--algorithms need DATASET arguments" in out
    code, out = _run(["run", "simulated2d", "--db", str(tmp_path / "x.db"), "--param", "nope=1"], capsys)
    assert code == 1 and "'nope'" in out
    code, out = _run(["run", "simulated2d", "--db", str(tmp_path / "x.db"), "--k", "x"], capsys)
    assert code == 1 and "'--k' option" in out
    code, out = _run(["report", str(tmp_path / "missing.db")], capsys)
    assert code == 1 and "does not exist" in out
    code, out = _run(["reproduce", "nosuch"], capsys)
    assert code == 1 and "Unknown preset 'nosuch'" in out


def test_export_and_report(tmp_path, capsys):
    db = tmp_path / "r.db"
    code, _ = _run(["run", "simulated2d", "--algorithms", "mlknn,brknn", "--k", "3,5", "--protocol", "5x2",
                    "--repeats", "1", "--db", str(db)], capsys)  # fmt: skip
    assert code == 0
    code, out = _run(["export", str(db), "--csv", str(tmp_path / "r.csv")], capsys)
    assert code == 0 and f"{8 * len(METRIC_NAMES)} rows" in out
    with open(tmp_path / "r.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 8 * len(METRIC_NAMES) and {r["algorithm"] for r in rows} == {"mlknn", "brknn"}
    out_dir = tmp_path / "rep"
    code, out = _run(["report", str(db), "--out", str(out_dir), "--metrics", "macro_auc,hamming_loss"], capsys)
    assert code == 0, out
    html = (out_dir / "report.html").read_text()
    assert html.count("data:image/png;base64,") >= 3  # metric vs k, k-occurrence, co-occurrence (no placeholders)
    assert "k-occurrence" in html and "label co-occurrence" in html.lower()


def test_reproduce_quick(tmp_path, capsys, data_dir, monkeypatch):
    monkeypatch.setenv("MLKNN_DATA", str(data_dir))
    out_dir = tmp_path / "repro"
    code, out = _run(["reproduce", "bmlknn", "--datasets", "emotions", "--quick", "--out", str(out_dir)], capsys)
    assert code == 0, out
    text = (out_dir / "comparison.csv").read_text()
    rows = list(csv.DictReader(text.splitlines()))
    assert {r["paper_algorithm"] for r in rows} == {"ML-kNN", "NC", "BML-kNN"}
    assert {r["metric"] for r in rows} == {"hamming_loss", "one_error", "coverage", "average_precision", "ranking_loss"}
    assert all(r["n_folds"] == "3" for r in rows)
    assert "published cells within 2 sd" in out
    with pytest.raises(SystemExit):
        main(["reproduce", "bmlknn", "--datasets", "imdb"])


def test_grid_on_benchmark_data_then_report(tmp_path, capsys, data_dir, monkeypatch):
    # The acceptance command, with one repetition to stay fast.
    monkeypatch.setenv("MLKNN_DATA", str(data_dir))
    db = tmp_path / "r.db"
    code, out = _run(["run", "emotions", "yeast", "--algorithms", "mlknn,dmlknn", "--protocol", "5x2",
                      "--repeats", "1", "--db", str(db)], capsys)  # fmt: skip
    assert code == 0, out
    assert _count(db) == 2 * 2 * 2 * len(METRIC_NAMES)
    # raw emotions: the run says so and names the option (issue 14 point 6)
    assert "emotions: the feature ranges differ by a factor of" in out and "--scaling minmax" in out
    assert "yeast: the feature ranges" not in out
    code, out = _run(["report", str(db), "--out", str(tmp_path / "rep"), "--metrics", "macro_auc"], capsys)
    assert code == 0, out
    html = (tmp_path / "rep" / "report.html").read_text()
    for caption in ("k-occurrence distribution of emotions", "Label co-occurrence P(q | r) of yeast",
                    "emotions: raw features (no scaling)", "they are run from 10"):  # fmt: skip
        assert caption in html
    # two datasets, one k, no bmlknn: no CD diagram, no curves, no placeholders
    for absent in ("Critical-difference diagram", "metric versus k", "metric versus radius", "no data"):
        assert absent not in html
    code, out = _run(["report", str(db), "--out", str(tmp_path / "rep2"), "--metrics", "macro_auc",
                      "--no-dataset-figures", "--min-datasets", "2"], capsys)  # fmt: skip
    assert code == 0, out
    html = (tmp_path / "rep2" / "report.html").read_text()
    assert "Friedman (macro_auc)" in html and "Critical-difference diagram" in html


# ----------------------------------------------------------------- issue 14
def test_version(capsys):
    from mlknn import __version__

    code, out = _run(["--version"], capsys)
    assert code == 0 and out.strip() == f"mlknn {__version__}"


def test_help_keeps_bracketed_text(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    code, out = _run(["run", "--help"], capsys)
    assert code == 0 and "Needs mlknn[dask]." in out


def test_one_error_form(capsys, tmp_path):
    # ours (a library error) and click's (a usage error) both start with "Error:".
    code, out = _run(["report", str(tmp_path / "missing.db")], capsys)
    assert code == 1 and out.startswith("Error: ") and "FileNotFoundError" not in out
    code, out = _run(["run", "--no-such-option"], capsys)
    assert code == 2 and "Error:" in out and "error:" not in out


def test_warnings_print_as_one_line_without_library_paths(capsys, tmp_path):
    import warnings

    from mlknn.cli import _main

    def boom():
        warnings.warn("first line\nsecond line", UserWarning, stacklevel=2)

    with warnings.catch_warnings():
        warnings.showwarning = _main._show_warning
        boom()
    err = capsys.readouterr().err
    assert err.strip() == "Warning: UserWarning: first line second line"
    assert ".py:" not in err


def test_single_run_takes_the_preprocessing_options(capsys, data_dir, monkeypatch):
    monkeypatch.setenv("MLKNN_DATA", str(data_dir))
    monkeypatch.setenv("COLUMNS", "250")
    code, raw = _run(["run", "--data", "emotions", "--k", "10"], capsys)
    assert code == 0 and "raw features" in raw
    assert "FeatureScaleWarning" in raw and "--scaling minmax" in raw  # emotions' ranges differ by ~1e4
    code, out = _run(["run", "--data", "emotions", "--scaling", "minmax", "--feature-selection", "0.5",
                      "--neighbors", "brute", "--param", "smoothing=0.5"], capsys)  # fmt: skip
    assert code == 0, out
    assert "minmax, chi2 0.5 (fitted on the training part)" in out and "smoothing=0.5" in out
    assert "train 391 x 36" in out and "FeatureScaleWarning" not in out


def test_single_run_with_a_fixed_split_by_paths(capsys, data_dir, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")
    train = data_dir / "emotions" / "emotions-train.arff"
    test = data_dir / "emotions" / "emotions-test.arff"
    code, out = _run(["run", "--data", str(train), "--test", str(test), "--scaling", "minmax"], capsys)
    assert code == 0, out
    flat = " ".join(out.split())  # the table title wraps at the table's width
    assert "emotions-train + emotions-test (train/test files)" in flat and "train 391 x 72, test 202" in out
    code, out = _run(["run", "--test", str(test)], capsys)
    assert code == 1 and "'--test' option needs '--data'" in out


def test_single_run_refuses_grid_options_only(capsys):
    code, out = _run(["run", "--protocol", "5x2"], capsys)
    assert code == 1 and "--protocol need DATASET arguments" in out
    code, out = _run(["run", "--param", "nope=1"], capsys)
    assert code == 1 and "'--param' option of a single run" in out
    code, out = _run(["run", "--algorithm", "mlknnn"], capsys)
    assert code == 1 and "did you mean 'mlknn'" in out


def test_export_writes_csv_to_stdout(tmp_path, capsys):
    db = tmp_path / "r.db"
    code, _ = _run(["run", "simulated2d", "--algorithms", "mlknn", "--k", "3", "--protocol", "holdout",
                    "--repeats", "1", "--db", str(db)], capsys)  # fmt: skip
    assert code == 0
    code, out = _run(["export", str(db)], capsys)
    assert code == 0
    rows = list(csv.DictReader(out.splitlines()))
    assert len(rows) == len(METRIC_NAMES) and {r["algorithm"] for r in rows} == {"mlknn"}


def test_grid_log_lines_carry_no_source_location(capsys):
    from rich.console import Console

    from mlknn.cli._run import RichProgress

    console = Console(width=200, force_terminal=False)
    with RichProgress(console, "grid") as progress:
        progress.start(1, 0)
        progress.message("fold 1 of 1 done")
    out = capsys.readouterr().out
    assert "fold 1 of 1 done" in out and "_run.py" not in out


def test_single_run_passes_max_memory_to_the_resource_guards(capsys):
    code, out = _run(["run", "--k", "5", "--param", "max_memory=1KB"], capsys)
    flat = " ".join(out.split())
    assert code == 1 and "MLkNN.fit refused" in flat and "MLkNN's max_memory='1KB'" in flat, out
    with mlknn.config_context(max_memory="1KB"):
        code, out = _run(["run", "--k", "5", "--param", "max_memory=off"], capsys)
    assert code == 0 and "max_memory=off" in " ".join(out.split()), out
