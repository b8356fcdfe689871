"""Data in and out on the command line and in the results database: export --wide, to_frame."""

import csv
import json
import math

import pytest
from test_cli import _run

from mlknn.experiments import ResultsDB


@pytest.fixture
def grid_db(tmp_path, capsys):
    db = tmp_path / "r.db"
    code, out = _run(["run", "simulated2d", "--algorithms", "mlknn,brknn", "--k", "3,5", "--protocol", "5x2",
                      "--repeats", "1", "--db", str(db)], capsys)  # fmt: skip
    assert code == 0, out
    return db


def test_export_wide_has_one_row_per_cell_and_the_long_values(grid_db, tmp_path, capsys):
    code, out = _run(["export", str(grid_db), "--wide", "--csv", str(tmp_path / "w.csv")], capsys)
    assert code == 0 and "8 cells" in out
    with open(tmp_path / "w.csv") as fh:
        wide = list(csv.DictReader(fh))
    assert len(wide) == 8  # 2 algorithms x 2 k x 2 folds
    assert {"n_neighbors", "hamming_loss", "macro_auc", "fit_seconds"} <= set(wide[0])
    assert {(r["algorithm"], r["n_neighbors"]) for r in wide} == {(a, k) for a in ("mlknn", "brknn") for k in ("3", "5")}
    with ResultsDB(grid_db) as rdb:
        long_rows = rdb.rows()
    by_cell = {(r["algorithm"], r["params"], r["fold"], r["metric"]): r["value"] for r in long_rows}
    for r in long_rows:
        match = [w for w in wide if w["algorithm"] == r["algorithm"] and int(w["fold"]) == r["fold"]
                 and json.loads(r["params"])["n_neighbors"] == int(w["n_neighbors"])]
        assert len(match) == 1
        cell = match[0][r["metric"]]
        assert (cell == "" and math.isnan(r["value"])) or float(cell) == pytest.approx(r["value"], rel=1e-15)
    assert len(by_cell) == 8 * len({r["metric"] for r in long_rows})


def test_export_wide_to_stdout(grid_db, capsys):
    code, out = _run(["export", str(grid_db), "--wide"], capsys)
    assert code == 0
    lines = out.strip().splitlines()
    assert lines[0].startswith("dataset,algorithm,") and len(lines) == 9


def test_to_frame_matches_wide_rows(grid_db):
    pd = pytest.importorskip("pandas")
    with ResultsDB(grid_db) as rdb:
        frame = rdb.to_frame()
        wide = rdb.wide_rows()
    assert isinstance(frame, pd.DataFrame) and len(frame) == 8
    assert list(frame.columns) == list(wide[0])
    means = frame.groupby(["algorithm", "n_neighbors"])["hamming_loss"].mean()
    assert means.shape == (4,)
