"""The command line without dead ends: the algorithm list, did-you-mean, hubness scaling, data listing, --labels."""

import pytest
from test_cli import _run


def test_algorithms_lists_names_aliases_and_descriptions(capsys):
    code, out = _run(["algorithms"], capsys)
    assert code == 0
    for name in ("mlknn", "dmlknn", "mlhiknn", "bmlknn", "nc", "brknna", "iblr", "br", "rakeld", "thresholdcalibration"):
        assert f"\n  {name} " in out
    assert "mlknn:skml" in out and "brknna:skml" in out and "variant='skmultilearn'" in out
    assert "MLkNN: Multi-label k-nearest neighbours" in out  # the one-line description
    assert "(Zhang and Zhou 2014" not in out  # citations left to the docs


def test_run_help_points_to_the_algorithm_list(capsys):
    code, out = _run(["run", "--help"], capsys)
    assert code == 0 and "mlknn algorithms" in out


@pytest.mark.parametrize("argv", [
    ["run", "--algorithm", "mlknnn"],
    ["run", "simulated2d", "--algorithms", "mlknn,dmlkn", "--db", "unused.db"],
])
def test_unknown_algorithm_gets_a_did_you_mean_on_every_path(argv, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out = _run(argv, capsys)
    assert code == 1 and "did you mean" in out.lower()
    assert "ValueError" not in out


def test_hubness_scaling_and_the_raw_feature_warning(capsys, data_dir, monkeypatch):
    monkeypatch.setenv("MLKNN_DATA", str(data_dir))
    code, raw = _run(["hubness", "emotions"], capsys)
    assert code == 0 and "Warning: the feature ranges differ" in raw and "--scaling minmax" in raw
    code, scaled = _run(["hubness", "emotions", "--scaling", "minmax"], capsys)
    assert code == 0 and "Warning" not in scaled and "minmax scaled" in scaled
    # The report's figure for emotions (min-max): S_k 1.77; raw features give 0.17.
    assert "1.77" in scaled and "0.17" in raw
    code, out = _run(["hubness", "emotions", "--scaling", "minmx"], capsys)
    assert code == 1 and "Did you mean 'minmax'?" in out


def test_datasets_list_without_a_data_folder_shows_what_can_be_fetched(capsys, tmp_path, monkeypatch):
    monkeypatch.delenv("MLKNN_DATA", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # an empty user cache
    monkeypatch.setenv("HOME", str(tmp_path))
    code, out = _run(["datasets", "list"], capsys)
    assert code == 0, out
    assert "datasets that can be fetched" in out and "emotions" in out and "mlknn datasets fetch NAME" in out


def test_single_run_on_a_csv_with_labels(capsys, tmp_path):
    import numpy as np

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    Y = (X[:, :2] > 0).astype(int)
    lines = ["a,b,c,up,right"] + [",".join([*map(repr, map(float, x)), *map(str, y)]) for x, y in zip(X, Y)]
    (tmp_path / "t.csv").write_text("\n".join(lines) + "\n")
    code, out = _run(["run", "--data", str(tmp_path / "t.csv"), "--labels", "up,right", "--k", "5"], capsys)
    assert code == 0 and "hamming_loss" in out, out
    code, out = _run(["run", "--data", str(tmp_path / "t.csv"), "--labels", "-2", "--k", "5"], capsys)
    assert code == 0 and "train 30 x 3, test 30, 2 labels" in out
    code, out = _run(["run", "--data", str(tmp_path / "t.csv"), "--k", "5"], capsys)
    assert code == 1 and "--labels" in out


def test_the_command_line_starts_without_scikit_learn():
    """--help answers quickly because nothing heavy is imported until a command runs."""
    import subprocess
    import sys

    code = "import sys, mlknn.cli._main; print(sorted(m for m in ('sklearn', 'mlknn.algorithms', 'mlknn.hubness') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"
