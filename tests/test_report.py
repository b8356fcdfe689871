"""mlknn.report and mlknn.plots on tiny results databases."""

import base64
import re

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from mlknn.experiments import ExperimentConfig, ProtocolConfig, ResultsDB, run_experiment  # noqa: E402
from mlknn.plots import (  # noqa: E402
    CriticalDifferenceDisplay,
    KOccurrenceDisplay,
    LabelCooccurrenceDisplay,
    ParameterCurveDisplay,
)
from mlknn.report import build_report  # noqa: E402


def _data(seed, n=50):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    Y = (X @ rng.normal(size=(3, 3)) + 0.5 * rng.normal(size=(n, 3)) > 0).astype(np.uint8)
    return X, Y


@pytest.fixture(scope="module")
def small_db(tmp_path_factory):
    path = tmp_path_factory.mktemp("rep") / "r.db"
    cfg = ExperimentConfig(
        datasets=("d1", "d2", "d3"),
        algorithms=("mlknn", "brknn"),
        k=(3, 5),
        protocol=ProtocolConfig("5x2", n_repeats=1, seed=0),
    )
    run_experiment(cfg, path, data={"d1": _data(1), "d2": _data(2), "d3": _data(3)})
    return path


def test_report_writes_markdown_and_self_contained_html(small_db, tmp_path):
    out = tmp_path / "report"
    paths = build_report(small_db, out, metrics=["macro_auc", "hamming_loss"], dataset_figures=False)
    html = paths["html"].read_text()
    md = paths["markdown"].read_text()
    # every figure is embedded (no external file needed) and saved as PNG for the Markdown
    imgs = re.findall(r"src='data:image/png;base64,([A-Za-z0-9+/=]+)'", html)
    assert len(imgs) == len(paths["figures"]) >= 4
    assert base64.b64decode(imgs[0])[:8] == b"\x89PNG\r\n\x1a\n"
    assert "<img src=\"http" not in html and "figures/" not in html
    for p in paths["figures"]:
        assert p.exists() and f"figures/{p.name}" in md
    # the seed 001 layout: mean(rank) +- std, bullet, average rank and win/tie/loss rows
    assert "average rank" in md and "win/tie/loss" in md and " •" in md
    assert re.search(r"\d\.\d{3}\(\d(\.5)?\) ± \d\.\d{3}", md)
    # the seed 000 layout with t-test markers and AvRank
    assert "AvRank" in md and ("◦" in md or "•" in md)
    # 3 datasets: the rank tests across datasets are not run, and the report says why
    assert "Friedman (macro_auc)" not in md and "3 dataset(s) have complete results here; they are run from 10" in md
    # metric versus k (the grid has k = 3, 5); no radius figure (no bmlknn results), no placeholder
    assert "metric versus k" in md and "metric versus radius" not in md and "no data" not in md
    assert "run time (s)" in md
    # a paper's results section: setup in words, then one summary table first
    assert "{" not in md.split("**Summary**")[0]  # no raw JSON before the numbers
    assert md.index("**Summary**") < md.index("**macro_auc (higher is better)**")
    assert "Younes et al. (2011)" in md and "seed 00" not in md
    assert "Dietterich's (1998) 5x2cv paired t-test" in md


def test_report_runs_the_rank_tests_with_enough_datasets(small_db, tmp_path):
    paths = build_report(small_db, tmp_path / "r", metrics=["macro_auc"], dataset_figures=False, min_datasets=3)
    md = paths["markdown"].read_text()
    assert "Friedman (macro_auc)" in md and "Nemenyi CD" in md and "pairwise Wilcoxon" in md
    assert any(p.name.startswith("g0_cd_") for p in paths["figures"])


def test_report_dataset_figures_left_out_for_unloadable_data(small_db, tmp_path):
    paths = build_report(small_db, tmp_path / "rep", metrics=["macro_auc"])
    names = {p.stem for p in paths["figures"]}
    assert not any(n.startswith(("kocc_", "cooc_")) for n in names)  # "d1" is not a dataset on disk
    assert "No figure for: d1 (cannot load the dataset" in paths["markdown"].read_text()


def test_report_with_real_dataset_figures(tmp_path, data_dir):
    path = tmp_path / "r.db"
    cfg = ExperimentConfig(datasets=("emotions",), algorithms=("mlknn",), k=(5,),
                           protocol=ProtocolConfig("holdout", n_repeats=2, seed=0))  # fmt: skip
    run_experiment(cfg, path)
    paths = build_report(path, tmp_path / "rep", metrics=["macro_auc"])
    md = paths["markdown"].read_text()
    assert "k-occurrence distribution of emotions" in md and "Label co-occurrence P(q | r) of emotions" in md


def test_report_errors(tmp_path):
    empty = tmp_path / "e.db"
    ResultsDB(empty).close()
    with pytest.raises(ValueError, match="holds no results"):
        build_report(empty, tmp_path / "x")


def test_critical_difference_display():
    d = CriticalDifferenceDisplay([3.143, 2.0, 2.893, 1.964], ["a", "b", "c", "d"], 1.25, 14).plot()
    assert d.cliques_ == [(3, 1, 2, 0)]  # all within CD = 1.25 of the best
    fig, ax = plt.subplots()
    d2 = CriticalDifferenceDisplay([1.0, 2.0, 3.5, 4.0], list("abcd"), 1.2, 20).plot(ax=ax)
    assert d2.ax_ is ax and d2.cliques_ == [(0, 1), (2, 3)]
    T = np.array([[0.9, 0.8, 0.7], [0.85, 0.8, 0.6], [0.95, 0.7, 0.75]])
    d3 = CriticalDifferenceDisplay.from_results(T, ["x", "y", "z"])
    np.testing.assert_allclose(d3.average_ranks, [1, 7 / 3, 8 / 3])
    empty = CriticalDifferenceDisplay.from_results(np.empty((0, 2)), ["x", "y"]).plot()
    assert empty.cliques_ == []
    plt.close("all")


def test_k_occurrence_and_cooccurrence_displays():
    X, Y = _data(0, 80)
    d = KOccurrenceDisplay.from_data(X, n_neighbors=5, name="toy").plot()
    assert d.occurrence.sum() == 80 * 5 and d.skewness is not None
    Y = np.array([[1, 1, 0], [1, 0, 0], [0, 1, 1], [1, 1, 1]])
    c = LabelCooccurrenceDisplay.from_labels(Y, ["a", "b", "c"]).plot()
    # P(a | b) = #(a and b) / #b = 2 / 3; diagonal 1
    assert c.matrix[0, 1] == pytest.approx(2 / 3) and np.allclose(np.diag(c.matrix), 1)
    assert c.matrix[2, 0] == pytest.approx(1 / 3)
    plt.close("all")


def test_parameter_curve_display(small_db):
    with ResultsDB(small_db) as rdb:
        rows = rdb.rows()
    one = ParameterCurveDisplay.from_results(rows, param="n_neighbors", metric="macro_auc", dataset="d1")
    assert set(one.curves) == {"mlknn", "brknn"}
    x, y = one.curves["mlknn"]
    assert x.tolist() == [3.0, 5.0] and np.all((0 <= y) & (y <= 1))
    avg = ParameterCurveDisplay.from_results(rows, param="n_neighbors", metric="hamming_loss")
    ranks = np.concatenate([v[1] for v in avg.curves.values()])
    assert ranks.mean() == pytest.approx(2.5)  # average ranks of 4 combinations
    none = ParameterCurveDisplay.from_results(rows, param="radius", metric="macro_auc").plot()
    assert none.curves == {}
    plt.close("all")


def test_report_on_a_dataset_given_by_an_odd_path(tmp_path, data_dir):
    """Issue 14 point 1: a path (with a space and unicode) as the dataset name gave
    FileNotFoundError for figures/kocc_/path/...png; tables show the file stem."""
    import shutil

    folder = tmp_path / "my data"
    folder.mkdir()
    arff = folder / "émotions set.arff"
    shutil.copy(data_dir / "emotions" / "emotions.arff", arff)
    shutil.copy(data_dir / "emotions" / "emotions.xml", folder / "émotions set.xml")
    db = tmp_path / "p.db"
    cfg = ExperimentConfig(datasets=(str(arff),), algorithms=("mlknn",), k=(5,),
                           protocol=ProtocolConfig("holdout", n_repeats=2, seed=0))  # fmt: skip
    run_experiment(cfg, db)
    paths = build_report(db, tmp_path / "rep", metrics=["macro_auc", "hamming_loss"])
    md = paths["markdown"].read_text()
    names = [p.name for p in paths["figures"]]
    assert any(n.startswith("kocc_") for n in names) and any(n.startswith("cooc_") for n in names)
    assert all(re.fullmatch(r"[A-Za-z0-9._-]+\.png", n) for n in names), names
    assert "k-occurrence distribution of émotions set" in md
    assert str(folder) not in md.split("## Datasets")[0].replace(str(arff), "")  # tables show the stem
    assert "| émotions set |" in md
    assert "Preprocessing (fitted on each training part): émotions set: raw features" in md


def test_safe_names_differ_for_different_datasets():
    from mlknn.report._model import dataset_label, safe_name

    names = ["/a/b c/x.arff", "/a/b_c/x.arff", "émotions", "emotions"]
    slugs = [safe_name(n) for n in names]
    assert len(set(slugs)) == 4 and all(re.fullmatch(r"[A-Za-z0-9._-]+", s) for s in slugs)
    assert safe_name("emotions") == "emotions"
    assert dataset_label("/data/yeast-train.arff.gz") == "yeast-train" and dataset_label("yeast") == "yeast"


def test_cooccurrence_shows_full_label_names():
    from mlknn.plots._displays import shorten_label

    assert shorten_label("short") == "short"
    assert shorten_label("amazed-suprised") == "amazed-supris…" and len(shorten_label("x" * 40)) == 14
    Y = np.array([[1, 0, 1], [1, 1, 0], [0, 1, 1]])
    d = LabelCooccurrenceDisplay.from_labels(Y, ["amazed-suprised", "b", "y" * 60]).plot()
    ticks = [t.get_text() for t in d.ax_.get_xticklabels()]
    # Full names (emotions' "amazed-suprised" was cut before); only a name past 40 characters is cut.
    assert ticks[:2] == ["amazed-suprised", "b"] and ticks[2].endswith("…") and len(ticks[2]) == 40
    plt.close(d.figure_)


def test_report_shows_the_cells_warnings(small_db):
    from mlknn.report._build import build_sections
    from mlknn.report._render import render

    with ResultsDB(small_db) as rdb:
        rows = rdb.rows()
    r0 = next(r for r in rows if r["metric"] == "macro_auc")
    cell = {k: r0[k] for k in ("dataset", "algorithm", "params", "preprocessing", "search", "protocol", "repeat", "fold")}
    ws = [dict(cell, stage="fit", category="ConvergenceWarning", message="did not converge\nafter 10 steps", count=3)]
    md, _, _ = render(build_sections(rows, metrics=["macro_auc"], dataset_figures=False, warnings=ws), "t")
    assert "Warnings raised while the cells ran" in md
    assert "| d1 |" in md and "ConvergenceWarning" in md and "did not converge after 10 steps" in md
    md, _, _ = render(build_sections(rows, metrics=["macro_auc"], dataset_figures=False), "t")
    assert "Warnings raised" not in md
