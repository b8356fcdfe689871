"""``mlknn datasets list|info`` against MANIFEST.tsv, and the hubness command."""

import csv

import pytest

from mlknn.cli._main import main


def run_cli(args, capsys):
    try:
        main(args)
        code = 0
    except SystemExit as exc:
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


def manifest(data_dir):
    with open(data_dir / "MANIFEST.tsv", newline="") as fh:
        return {row["name"]: row for row in csv.DictReader(fh, delimiter="\t")}


def test_list_shows_every_manifest_dataset(data_dir, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    code, out, _ = run_cli(["datasets", "list"], capsys)
    assert code == 0
    for name in manifest(data_dir):
        assert name in out


@pytest.mark.parametrize("name", ["emotions", "yeast", "medical"])
def test_info_matches_manifest(name, data_dir, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    code, out, _ = run_cli(["datasets", "info", name], capsys)
    assert code == 0
    row = manifest(data_dir)[name]
    line = next(l for l in out.splitlines() if l.startswith("│") and l.strip("│ ").startswith(name))
    cells = [c.strip() for c in line.strip("│").split("│")]
    # name, n, d, q, lcard, ldens, ldiv, pldiv, sparse
    assert cells[1:4] == [row["n"], row["d"], row["q"]]
    assert abs(float(cells[4]) - float(row["lcard"])) < 6e-4
    assert abs(float(cells[5]) - float(row["ldens"])) < 6e-4
    assert cells[6] == row["ldiv"]
    assert cells[8] == row["sparse"]


def test_unknown_dataset_is_one_line_and_nonzero(data_dir, capsys):
    code, out, err = run_cli(["datasets", "info", "no-such-set"], capsys)
    assert code == 1
    assert "unknown dataset 'no-such-set'" in err
    assert "Traceback" not in err


def test_list_is_readable_at_80_columns(data_dir, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = run_cli(["datasets", "list"], capsys)
    assert code == 0
    assert "…" not in out  # no name cut
    assert max(len(line.rstrip()) for line in out.splitlines()) <= 80
    for name in manifest(data_dir):
        assert any(line.split() and line.split()[0] == name for line in out.splitlines())
