"""The mlknn command line: single run, grid run, export, report, reproduce."""

import csv
import sqlite3

import pytest

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
    assert "MLkNN(n_neighbors=10) on simulated-2d" in out and "hamming_loss" in out and "macro_auc" in out


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
    assert html.count("data:image/png;base64,") >= 4  # metric vs k, radius placeholder, k-occurrence, co-occurrence
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
    code, out = _run(["report", str(db), "--out", str(tmp_path / "rep"), "--metrics", "macro_auc"], capsys)
    assert code == 0, out
    html = (tmp_path / "rep" / "report.html").read_text()
    for caption in ("Critical-difference diagram", "metric versus k", "metric versus radius",
                    "k-occurrence distribution of emotions", "Label co-occurrence P(q | r) of yeast"):  # fmt: skip
        assert caption in html
