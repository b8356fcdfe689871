"""A grid without dead ends: every cell checked before it starts, a failing cell recorded while the run goes on."""

import pytest
from test_cli import _run

from mlknn.experiments import ExperimentConfig, GridConfigurationError, ProtocolConfig, ResultsDB, run_experiment


def test_every_problem_is_reported_before_anything_runs(tmp_path, capsys):
    db = tmp_path / "r.db"
    code, out = _run(["run", "simulated2d", "--algorithms", "mlknn,brknn", "--k", "3,5000", "--param", "mlknn.smoothing=-1",
                      "--protocol", "5x2", "--repeats", "1", "--db", str(db)], capsys)  # fmt: skip
    assert code == 1
    assert "nothing was computed" in out and "Error: The grid cannot run as configured" in out
    # The bad smoothing (both mlknn cells), and k = 5000 of brknn, all in one message.
    assert out.count("'smoothing' parameter") == 2
    assert out.count("must be <= n_train - 1") == 1 and "brknn(k=5000)" in out
    with ResultsDB(db) as rdb:
        assert rdb.count() == 0


def test_failing_cell_is_recorded_and_the_run_goes_on(tmp_path, monkeypatch):
    from mlknn.experiments import _runner

    real = _runner.run_cell

    def flaky(est, data, *args, **kwargs):
        if type(est).__name__ == "BRkNN" and est.n_neighbors == 5:
            raise RuntimeError("the solver broke down")
        return real(est, data, *args, **kwargs)

    monkeypatch.setattr(_runner, "run_cell", flaky)
    from mlknn.datasets import make_multilabel

    toy = make_multilabel(n_samples=60, n_features=5, n_labels=3, random_state=0)
    config = ExperimentConfig(datasets=("toy",), algorithms=("mlknn", "brknn"), k=(3, 5),
                              protocol=ProtocolConfig("holdout", n_repeats=2))
    db = tmp_path / "r.db"
    info = run_experiment(config, db, data={"toy": (toy.X, toy.Y)})
    assert info["failed"] == 2 and info["computed"] == 6
    assert {e["message"] for e in info["errors"]} == {"the solver broke down"}
    with ResultsDB(db) as rdb:
        assert {(r["algorithm"], r["params"]) for r in rdb.rows()} == {
            ("mlknn", '{"n_neighbors":3}'), ("mlknn", '{"n_neighbors":5}'), ("brknn", '{"n_neighbors":3}')}
        errors = [w for w in rdb.warnings() if w["stage"] == "error"]
        assert len(errors) == 2 and errors[0]["category"] == "builtins.RuntimeError"
    # Rerun without the fault: only the failed cells are computed.
    monkeypatch.setattr(_runner, "run_cell", real)
    info = run_experiment(config, db, data={"toy": (toy.X, toy.Y)})
    assert info["failed"] == 0 and info["computed"] == 2 and info["done_before"] == 6


def test_cli_grid_with_a_failing_cell_exits_non_zero_with_a_summary(tmp_path, capsys, monkeypatch):
    from mlknn.experiments import _runner

    real = _runner.run_cell

    def flaky(est, data, *args, **kwargs):
        if type(est).__name__ == "BRkNN":
            raise ValueError("no neighbours left")
        return real(est, data, *args, **kwargs)

    monkeypatch.setattr(_runner, "run_cell", flaky)
    db = tmp_path / "r.db"
    code, out = _run(["run", "simulated2d", "--algorithms", "mlknn,brknn", "--k", "3", "--protocol", "5x2",
                      "--repeats", "1", "--db", str(db)], capsys)  # fmt: skip
    assert code == 1
    assert "2 cell(s) failed" in out and "no neighbours left" in out and "brknn" in out
    with ResultsDB(db) as rdb:
        assert {r["algorithm"] for r in rdb.rows()} == {"mlknn"}


def test_grid_header_says_the_protocol_that_runs(tmp_path, capsys):
    code, out = _run(["run", "simulated2d", "--k", "3", "--folds", "3", "--repeats", "1", "--db",
                      str(tmp_path / "r.db")], capsys)  # fmt: skip
    assert code == 0, out
    assert "1 x 3-fold cross-validation, seed 0" in out and "5x2" not in out


def test_grid_error_is_a_value_error_with_the_problems():
    err = GridConfigurationError(["a", "b"])
    assert isinstance(err, ValueError) and err.problems == ["a", "b"] and "2 problem(s)" in str(err)
    with pytest.raises(ValueError):
        raise err
