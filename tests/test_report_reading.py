"""The report as a reader meets it: measures shown once, no sd over datasets for coverage, median run time."""

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from mlknn.experiments import ExperimentConfig, ProtocolConfig, run_experiment  # noqa: E402
from mlknn.report import build_report  # noqa: E402
from mlknn.report._tables import averages_across_datasets  # noqa: E402


def _data(seed, n=50, q=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    Y = (X @ rng.normal(size=(3, q)) + 0.5 * rng.normal(size=(n, q)) > 0).astype(np.uint8)
    return X, Y


@pytest.fixture(scope="module")
def two_dataset_db(tmp_path_factory):
    path = tmp_path_factory.mktemp("rep") / "r.db"
    cfg = ExperimentConfig(datasets=("d1", "d2"), algorithms=("mlknn", "brknn"), k=(3,),
                           protocol=ProtocolConfig("5x2", n_repeats=1, seed=0))
    run_experiment(cfg, path, data={"d1": _data(1, q=3), "d2": _data(2, q=6)})
    return path


def test_equal_measures_are_shown_once_with_a_note(two_dataset_db, tmp_path):
    md = build_report(two_dataset_db, tmp_path / "a", dataset_figures=False)["markdown"].read_text()
    assert "Shown once: macro_accuracy is" in md and "micro_accuracy is" in md and "1 - hamming_loss" in md
    assert "macro_accuracy ↑" not in md and "hamming_loss ↓" in md


def test_coverage_is_ranked_not_averaged_over_datasets(two_dataset_db, tmp_path):
    md = build_report(two_dataset_db, tmp_path / "b", metrics=["coverage", "hamming_loss"],
                      dataset_figures=False)["markdown"].read_text()
    summary = md[md.index("Summary"):md.index("Results per metric")]
    assert "rank 1.00" in summary or "rank 1.50" in summary
    assert "coverage: its scale depends on the dataset" in summary
    assert not averages_across_datasets("coverage[mulan]") and averages_across_datasets("ranking_loss")


def test_run_time_is_the_median_over_folds(two_dataset_db, tmp_path):
    md = build_report(two_dataset_db, tmp_path / "c", metrics=["hamming_loss"], dataset_figures=False)["markdown"].read_text()
    assert "median seconds per fold" in md and "one-off costs" in md


def test_metric_versus_k_has_error_bars_of_the_folds():
    import matplotlib.pyplot as plt

    from mlknn.plots import ParameterCurveDisplay

    rows = [{"metric": "macro_auc", "algorithm": "mlknn", "params": f'{{"n_neighbors": {k}}}', "dataset": "d",
             "value": v, "fold": f} for k, vs in ((5, (0.78, 0.82)), (10, (0.80, 0.86))) for f, v in enumerate(vs)]
    d = ParameterCurveDisplay.from_results(rows, dataset="d").plot()
    np.testing.assert_allclose(d.curves["mlknn"][1], [0.80, 0.83])
    np.testing.assert_allclose(d.errors["mlknn"], [np.std([0.78, 0.82], ddof=1), np.std([0.80, 0.86], ddof=1)])
    assert len(d.ax_.containers) == 1  # one ErrorbarContainer
    assert "sd over folds" in d.title
    plt.close(d.figure_)


def test_report_of_a_reproduce_database_has_the_paper_versus_ours_table(tmp_path, data_dir, monkeypatch):
    from mlknn.experiments import reproduce

    monkeypatch.setenv("MLKNN_DATA", str(data_dir))
    out = reproduce("bmlknn", datasets=["emotions"], quick=True, out_dir=tmp_path / "repro")
    md = build_report(out["db"], tmp_path / "rep", dataset_figures=False)["markdown"].read_text()
    assert "Paper versus ours" in md and "published cells lie within 2 standard deviations" in md
    scored = [r for r in out["rows"] if r["within_2sd"] is not None]
    n_ok = sum(1 for r in scored if r["within_2sd"])
    assert f"{n_ok} of {len(scored)} published cells" in md
    assert md.count("| Table ") >= 1 and "BML-kNN" in md
