"""The reproduce command's comparison table keeps bracketed readings (rich markup escaped)."""

from rich.console import Console

from mlknn.cli._experiments import comparison_table


def _render(rows):
    console = Console(width=400, record=True, color_system=None)
    console.print(comparison_table(rows, "t"))
    return console.export_text()


def test_bracketed_readings_survive_rendering():
    row = {
        "table": "3", "dataset": "yeast", "metric": "coverage[mulan]", "paper_algorithm": "MLKNN",
        "ours": "MLkNN [scikit-multilearn reading]", "paper_mean": 0.5, "paper_std": 0.01,
        "our_mean": 0.51, "our_std": 0.02, "n_folds": 10, "diff": 0.01, "z": 1.0,
        "sd_source": "paper", "within_2sd": True,
    }  # fmt: skip
    text = _render([row])
    assert "[scikit-multilearn reading]" in text
    assert "coverage[mulan]" in text
    assert "[posterior]" in _render([{**row, "ours": "DMLkNN [posterior]"}])
