"""Assemble the report: a results database -> sections of tables and figures -> Markdown and HTML.

The order is that of a paper's results section: the setup in words, one summary
table, the per-metric tables, the significance tests (only when there are enough
datasets for them to mean something), the per-dataset tables with fold-wise
tests, run times, the warnings the cells raised, then the figures (only those
with data).
"""

import json
import math
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypedDict

import numpy as np
from numpy.typing import NDArray

from ..utils._typing import LabelMatrix, MatrixLike
from ._decisions import decision_rows, decision_sections
from ._model import (
    Figure,
    Group,
    Row,
    Section,
    Table,
    dataset_label,
    fmt_p,
    png,
    prep_label,
    protocol_words,
    safe_name,
    test_train_ratio,
)
from ._prequential import is_prequential, prequential_figures
from ._render import render
from ._tables import (
    _gib,
    dataset_table,
    metric_table,
    split_columns,
    summary_table,
    ties_paragraph,
    time_table,
    warnings_table,
    wilcoxon_table,
)

#: Metrics shown in the per-dataset figures (Teng et al.'s (2025) six).
_CURVE_METRICS = ("macro_auc", "micro_auc", "ranking_loss", "macro_f1", "micro_f1", "hamming_loss")
#: Metrics of the BML-kNN paper's radius figures.
_RADIUS_METRICS = ("hamming_loss", "one_error", "coverage", "ranking_loss", "average_precision")
_SEARCH_RECALL = "search_recall"  # mlknn.experiments._runner.SEARCH_RECALL

#: Fewest datasets for the rank tests across datasets (Friedman / Iman-Davenport, Nemenyi,
#: pairwise Wilcoxon). Demsar (2006, sec. 3.2.2): the chi-square approximation of the
#: Friedman statistic needs "N > 10" datasets (and k > 5 classifiers); with fewer the
#: p-values are not reliable, and a Bonferroni-corrected Wilcoxon test over N < 6 datasets
#: cannot reject at all (its smallest one-sided p-value is 2**-N).
MIN_DATASETS_FOR_RANK_TESTS = 10

# Papers by author and year (the headings name them, not internal seed numbers).
_MLHIKNN = "Teng et al. (2025)"
_YOUNES = "Younes et al. (2011)"
_BMLKNN = "the BML-kNN paper (distance and quantity constraints)"

#: Measures equal to another one of the report, shown once: the other's name and why.
_SAME_AS = {
    "macro_accuracy": ("hamming_loss", "the mean over labels of (TP + TN) / n, which is 1 - hamming_loss"),
    "micro_accuracy": ("hamming_loss", "(TP + TN) / (n q) over all labels, which is 1 - hamming_loss"),
}

if TYPE_CHECKING:
    from ..experiments import ResultsDB


class ReportPaths(TypedDict):
    """What :func:`build_report` returns: the files it wrote."""

    markdown: Path
    html: Path
    figures: list[Path]


# --------------------------------------------------------------- sections
def _setup_section(idx: int, g: Group, recall_rows: Sequence[Row]) -> Section:
    words = protocol_words(g.protocol, g.n_repeats)
    s = Section(f"Experiment {idx + 1}: {words}")
    search = json.loads(g.search)
    s.paragraphs.append(
        f"{len(g.datasets)} dataset(s) x {len(g.configs)} configuration(s); protocol: {words}; "
        f"neighbour search: {search.get('neighbors', '?')} ({search.get('metric', 'euclidean')} distance), "
        "one search per fold shared by every kNN configuration."
    )
    preps = sorted({(dataset_label(d), prep_label(p)) for d, p in g.datasets})
    s.paragraphs.append("Preprocessing (fitted on each training part): " + "; ".join(f"{d}: {p}" for d, p in preps) + ".")
    if any(json.loads(p).get("scaling", "none") == "none" for _, p in g.datasets):
        s.paragraphs.append(
            "Raw features: distance-based methods are sensitive to the feature ranges (on emotions ML-kNN's "
            "macro AUC is 0.68-0.73 raw and about 0.84 min-max scaled); rerun with `--scaling minmax` to compare with "
            "published numbers, which are mostly on scaled features."
        )
    if g.hidden:
        s.paragraphs.append("Parameters shared by every configuration: " + ", ".join(f"{k} = {v}" for k, v in g.hidden.items()) + ".")
    if recall_rows:
        s.paragraphs.append(_search_recall_paragraph(recall_rows))
    return s


def _search_recall_paragraph(rows: Iterable[Row]) -> str:
    """One sentence: the approximate search's recall per dataset (mean and minimum over folds)."""
    per: dict[str, dict[tuple[int, int], float]] = {}
    for r in rows:  # one value per (dataset, repeat, fold): every kNN cell of a fold shares the graph
        per.setdefault(dataset_label(r["dataset"]), {})[(r["repeat"], r["fold"])] = r["value"]
    parts = [f"{d} {np.mean(list(v.values())):.4f} (min {min(v.values()):.4f})" for d, v in sorted(per.items())]
    return ("Approximate neighbour search: recall@k of the test queries' graph against exact search "
            "(200 sampled queries per fold; mean, min over folds): " + "; ".join(parts) + ".")


def _summary_section(g: Group) -> Section:
    s = Section("Summary", 3)
    s.paragraphs.append(
        ("Mean ± sd over the folds" if len(g.datasets) == 1 else
         f"Mean over the {len(g.datasets)} datasets of each dataset's mean over the folds, ± its sd over the datasets")
        + "; ↑ higher is better, ↓ lower is better; best per column in bold. avg rank: the configuration's rank "
        "(1 = best) averaged over the metrics and the datasets where every configuration has results."
    )
    s.items.extend(split_columns(summary_table(g), max_columns=7))
    return s


def _metric_section(g: Group, alpha: float) -> tuple[Section, dict[str, NDArray[np.float64]]]:
    s = Section(f"Results per metric (layout of the {_MLHIKNN}, Table 3)", 3)
    s.paragraphs.append(
        "Rows: datasets; cells: mean(rank) ± sd over the folds, • the top-ranked configuration on the dataset. "
        "average rank: over the datasets where every configuration has results. win/tie/loss: two-sided "
        f"Wilcoxon signed-rank tests over the folds between every pair, per dataset (alpha = {alpha})."
    )
    tables: dict[str, NDArray[np.float64]] = {}
    for m in g.metrics:
        table, T, _complete = metric_table(g, m, alpha)
        tables[m] = T
        s.items.extend(split_columns(table))
    return s, tables


def _significance_section(
    g: Group, tables: dict[str, NDArray[np.float64]], alpha: float, idx: int, min_datasets: int
) -> Section:
    """Friedman / Iman-Davenport, Nemenyi CD diagram and pairwise Wilcoxon, or why not."""
    from ..stats import friedman_test, nemenyi_cd

    s = Section("Significance across datasets (Demšar, 2006)", 3)
    n = min((T.shape[0] for T in tables.values()), default=0)
    if len(g.configs) < 2:
        s.paragraphs.append("One configuration: nothing to compare.")
        return s
    if n < min_datasets:
        s.paragraphs.append(
            f"Not run: the Friedman test (with Iman and Davenport's F), the Nemenyi post-hoc test and the pairwise "
            f"Wilcoxon tests compare configurations over datasets, and {n} dataset(s) have complete results here; "
            f"they are run from {min_datasets}. Demšar (2006) gives N > 10 datasets as the rule of thumb for the "
            "chi-square approximation of the Friedman statistic; with fewer datasets its p-values are not reliable, "
            "and with fewer than 6 a Bonferroni-corrected Wilcoxon test cannot reject at all. The per-dataset "
            "tables below test over the folds instead."
        )
        return s
    s.paragraphs.append(
        f"Over the {n} datasets with complete results: Friedman's chi² and Iman-Davenport's F_F with their critical "
        f"values at alpha = {alpha}, the Nemenyi critical difference (CD) and its diagram (configurations joined by a "
        "bar do not differ significantly), and one-sided pairwise Wilcoxon signed-rank tests with Bonferroni correction."
    )
    for m, T in tables.items():
        gib = _gib(m)
        fr = friedman_test(T, g.labels, gib, alpha)
        cd = nemenyi_cd(T.shape[1], T.shape[0], alpha)
        s.items.append(
            f"Friedman ({m}): chi²_F = {fr.chi2:.3f} (critical {fr.chi2_critical_value:.3f}), Iman-Davenport "
            f"F_F = {fr.F_F:.3f} with ({fr.df1}, {fr.df2}) d.f., critical value {fr.critical_value:.3f}, "
            f"p = {fmt_p(fr.pvalue)}: {'reject' if fr.reject else 'do not reject'} equal performance. Nemenyi CD = {cd:.3f}."
        )
        s.items.append(_cd_figure(g, m, T, alpha, idx))
        s.items.extend(split_columns(wilcoxon_table(g, m, T, alpha)))
    return s


def _dataset_section(g: Group, alpha: float) -> Section:
    proto = json.loads(g.protocol).get("protocol")
    cv_test: Literal["5x2cv", "corrected"] = "5x2cv" if proto == "5x2" else "corrected"
    cv_name = ("Dietterich's (1998) 5x2cv paired t-test" if cv_test == "5x2cv"
               else "the corrected resampled t-test of Nadeau and Bengio (2003)")  # fmt: skip
    s = Section(f"Results per dataset (layout of {_YOUNES}, Tables 4-9)", 3)
    s.paragraphs.append(
        "Rows: metrics (↑ higher / ↓ lower is better); cells: mean ± sd over the folds; bold: the best. Against the "
        f"best, two tests at alpha = {alpha}: • (◦) significant (not significant) by the plain two-tailed paired "
        f"t-test over the folds ({_YOUNES}'s test; it treats the folds as independent, which they are not, so it "
        f"rejects too often); † also significant by {cv_name}, designed for cross-validated scores. "
        "AvRank: the rank averaged over the metrics."
    )
    ratio = test_train_ratio(g.protocol)
    for i in range(len(g.datasets)):
        s.items.extend(split_columns(dataset_table(g, i, alpha, cv_test, ratio)))
    return s


def _warnings_section(g: Group, warnings: Sequence[Row]) -> Section | None:
    mine = [w for w in warnings if w["protocol"] == g.protocol and w["search"] == g.search]
    if not mine:
        return None
    labels = dict(zip(g.configs, g.labels))
    s = Section("Warnings", 3)
    s.paragraphs.append(
        "What fitting, predicting or evaluating raised, recorded with the cell (see ResultsDB.warnings). A "
        "FeatureScaleWarning means distances were dominated by a few wide features: `--scaling minmax`."
    )
    def label_of(w: Row) -> str:
        algorithm: str = w["algorithm"]
        return labels.get((algorithm, w["params"]), algorithm)

    s.items.append(warnings_table(mine, label_of))
    return s


def _figure_sections(g: Group, grows: Sequence[Row], idx: int) -> list[Section]:
    out: list[Section] = []
    if is_prequential(g.protocol):
        s = Section("Prequential: each measure against the instances seen", 3)
        s.items.extend(prequential_figures(g, idx, _CURVE_METRICS))
        out.append(s)
    figs = _curve_figures(g, idx, "n_neighbors", _CURVE_METRICS, "metric versus k")
    if figs:
        s = Section(f"Metric versus k (layout of the {_MLHIKNN}, Figures 2-7)", 3)
        s.items.extend(figs)
        out.append(s)
    radius_params = sorted({k for r in grows if r["algorithm"].startswith("bmlknn") for k in json.loads(r["params"]) if "radius" in k})
    figs = [f for rp in radius_params for f in _curve_figures(g, idx, rp, _RADIUS_METRICS, f"metric versus {rp}")]
    if figs:
        s = Section(f"Metric versus radius for BML-kNN (layout of the {_BMLKNN}, Figures 2-5)", 3)
        s.items.extend(figs)
        out.append(s)
    return out


# ------------------------------------------------------------------ figures
def _cd_figure(g: Group, metric: str, T: NDArray[np.float64], alpha: float, idx: int) -> Figure:
    from ..plots import CriticalDifferenceDisplay

    disp = CriticalDifferenceDisplay.from_results(
        T, g.labels, greater_is_better=_gib(metric), alpha=alpha, title=f"{metric}"
    ).plot()
    return Figure(f"g{idx}_cd_{safe_name(metric)}", f"Critical-difference diagram (Nemenyi, alpha = {alpha}) on {metric}.",
                  png(disp.figure_))  # fmt: skip


def _curve_figures(g: Group, idx: int, param: str, metrics: Sequence[str], what: str) -> list[Figure]:
    """One figure per dataset (and one of average ranks when there are several); only
    the figures where some configuration was run with >= 2 values of ``param``."""
    import matplotlib.pyplot as plt

    from ..plots import ParameterCurveDisplay

    figs: list[Figure] = []
    datasets = sorted({d for d, _ in g.datasets})
    ms = [m for m in metrics if m in g.metrics] or g.metrics[:6]
    for ds in ([None] + datasets if len(datasets) > 1 else datasets):
        panels = [ParameterCurveDisplay.from_results(g.rows, param=param, metric=m, dataset=ds) for m in ms]
        drawn = [(m, d) for m, d in zip(ms, panels) if d.curves]
        if not drawn:
            continue
        cols = min(3, len(drawn))
        rws = math.ceil(len(drawn) / cols)
        fig, axes = plt.subplots(rws, cols, figsize=(4.2 * cols, 3.3 * rws), squeeze=False, constrained_layout=True)
        for ax, (m, d) in zip(axes.ravel(), drawn):
            d.title = m
            d.plot(ax=ax)
        for ax in axes.ravel()[len(drawn):]:
            ax.set_axis_off()
        label = "average rank over the datasets" if ds is None else dataset_label(ds)
        fig.suptitle(f"{what}: {label}", fontsize=11)
        figs.append(Figure(f"g{idx}_{safe_name(param)}_{safe_name(ds) if ds else 'avgrank'}", f"{what} ({label}).", png(fig)))
    return figs


def _load_for_figures(
    ds: str, prep_json: str, data_home: str | os.PathLike[str] | None
) -> tuple[MatrixLike, LabelMatrix, list[str] | None]:
    from ..datasets import load
    from ..experiments import apply_prefilter, load_dataset
    from ..preprocessing import FoldPreprocessor, RareLabelFilter

    p = json.loads(prep_json)
    names: list[str] | None
    try:
        names = load(ds, data_home=data_home).label_names
    except Exception:  # noqa: BLE001 - label names are a nicety
        names = None
    X, Y = load_dataset(ds, data_home)
    if p.get("label_scope") == "dataset" and p.get("min_label_count", 0):
        keep = RareLabelFilter(p["min_label_count"]).fit(Y).support_
        X, Y = apply_prefilter(X, Y, {"min_label_count": p["min_label_count"], "drop_unlabelled": True})
        names = [names[i] for i in keep] if names is not None else None
    if p.get("scaling", "none") != "none" or p.get("feature_selection") is not None:
        X = FoldPreprocessor(
            p.get("scaling", "none"), p.get("feature_selection"), 0, chi2_rule=p.get("chi2_rule", "max")
        ).fit(X, Y).transform(X)
    return X, Y, names


def _dataset_figures(
    datasets: Iterable[tuple[str, str]], data_home: str | os.PathLike[str] | None, k: int, max_n: int
) -> tuple[list[Figure], list[str]]:
    """k-occurrence and label co-occurrence for every dataset that loads; (figures, notes)."""
    from ..plots import KOccurrenceDisplay, LabelCooccurrenceDisplay

    figs: list[Figure] = []
    missing: list[str] = []
    for ds, prep_json in datasets:
        label = dataset_label(ds)
        try:
            X, Y, names = _load_for_figures(ds, prep_json, data_home)
        except Exception as exc:  # noqa: BLE001 - a figure, not a result
            missing.append(f"{label} (cannot load the dataset: {type(exc).__name__})")
            continue
        if X.shape[0] > max_n:
            missing.append(f"{label} (k-occurrence skipped: n = {X.shape[0]} > {max_n})")
        else:
            d = KOccurrenceDisplay.from_data(X, k, name=label).plot()
            figs.append(Figure(f"kocc_{safe_name(ds)}", f"k-occurrence distribution of {label} (k = {k}, {prep_label(prep_json)}).",
                               png(d.figure_)))  # fmt: skip
        dc = LabelCooccurrenceDisplay.from_labels(Y, names, name=label).plot()
        figs.append(Figure(f"cooc_{safe_name(ds)}", f"Label co-occurrence P(q | r) of {label}.", png(dc.figure_)))
    return figs, missing


# ---------------------------------------------------------------- assemble
def _split_groups(
    rows: Iterable[Row], metrics: Sequence[str] | None
) -> list[tuple[str, str, list[Row], list[Row]]]:
    """{(protocol, search): (metric rows, search-recall rows)} in a stable order."""
    groups: dict[tuple[str, str], list[Row]] = {}
    for r in rows:
        groups.setdefault((r["protocol"], r["search"]), []).append(r)
    out: list[tuple[str, str, list[Row], list[Row]]] = []
    for (proto, search), grows in sorted(groups.items()):
        # The search's recall (approximate backends) describes the neighbour graph, not the
        # predictions: reported per dataset, kept out of the tables unless asked for by name.
        recall = [r for r in grows if r["metric"] == _SEARCH_RECALL]
        from ..experiments import is_decision_measure, is_tie_variant

        # The ranking measures under the other tie rules ("coverage[mulan]"...) likewise:
        # the default tables show the pessimistic reading, said in the setup section.
        # The tuned-rule, conformal and calibration measures have sections of their own.
        keep = [r for r in grows if (r["metric"] in metrics if metrics else
                                     r["metric"] != _SEARCH_RECALL and not is_tie_variant(r["metric"])
                                     and not is_decision_measure(r["metric"]))]
        if keep:
            out.append((proto, search, keep, recall))
    return out


def build_sections(rows: Sequence[Row], *, metrics: Sequence[str] | None = None, alpha: float = 0.05,
                   data_home: str | os.PathLike[str] | None = None, dataset_figures: bool = True,
                   k_occurrence: int = 10, max_n: int = 20000, warnings: Iterable[Row] = (),
                   min_datasets: int = MIN_DATASETS_FOR_RANK_TESTS) -> list[Section]:  # fmt: skip
    from ..metrics import METRIC_NAMES

    sections: list[Section] = []
    for idx, (proto, search, grows, recall) in enumerate(_split_groups(rows, metrics)):
        g = Group(proto, search, grows)
        g.metrics = [m for m in METRIC_NAMES if m in g.metrics] + [m for m in g.metrics if m not in METRIC_NAMES]
        shown_once = [m for m in g.metrics if m in _SAME_AS and _SAME_AS[m][0] in g.metrics]
        g.metrics = [m for m in g.metrics if m not in shown_once]
        sections.append(_setup_section(idx, g, recall))
        if shown_once:
            sections[-1].paragraphs.append(
                "Shown once: " + "; ".join(f"{m} is {_SAME_AS[m][1]}" for m in shown_once)
                + " (the results database keeps every measure; `mlknn export`)."
            )
        ties_text = ties_paragraph(g.metrics, {r["metric"] for r in rows})
        if ties_text:
            sections[-1].paragraphs.append(ties_text)
        sections.append(_summary_section(g))
        metric_sec, tables = _metric_section(g, alpha)
        sections.append(metric_sec)
        sections.append(_significance_section(g, tables, alpha, idx, min_datasets))
        sections.append(_dataset_section(g, alpha))
        st = Section("Run time", 3)
        st.items.extend(split_columns(time_table(g)))
        sections.append(st)
        decided = decision_rows([r for r in rows if r["protocol"] == proto and r["search"] == search])
        if decided:
            sections.extend(decision_sections(Group(proto, search, decided), g, idx))
        ws = _warnings_section(g, list(warnings))
        if ws is not None:
            sections.append(ws)
        sections.extend(_figure_sections(g, grows, idx))
    if dataset_figures:
        sections.extend(_datasets_section(rows, data_home, k_occurrence, max_n))
    return sections


def _datasets_section(
    rows: Iterable[Row], data_home: str | os.PathLike[str] | None, k: int, max_n: int
) -> list[Section]:
    seen: set[str] = set()
    uniq: list[tuple[str, str]] = []
    for d, p in sorted({(r["dataset"], r["preprocessing"]) for r in rows}):
        if d not in seen:
            seen.add(d)
            uniq.append((d, p))
    figs, missing = _dataset_figures(uniq, data_home, k, max_n)
    if not figs and not missing:
        return []
    sf = Section(f"Datasets: k-occurrence ({_MLHIKNN}, Figure 1) and label co-occurrence ({_YOUNES}, Figure 1)")
    sf.items.extend(figs)
    if missing:
        sf.paragraphs.append("No figure for: " + "; ".join(missing) + ".")
    return [sf]


def _comparison_section(stored: dict[str, Any]) -> Section:
    """The paper-versus-ours table that ``mlknn reproduce`` stored in the database."""
    rows = stored["rows"]

    def num(v: Any, digits: int = 3) -> str:
        return "-" if v is None or (isinstance(v, float) and not np.isfinite(v)) else f"{float(v):.{digits}f}"

    header = ["Table", "Dataset", "Metric", "Paper's column", "Ours", "Paper mean ± sd", "Our mean ± sd", "z",
              "Within 2 sd"]  # fmt: skip
    cells = [[str(r["table"]), dataset_label(str(r["dataset"])), str(r["metric"]), str(r["paper_algorithm"]),
              str(r["ours"]), f"{num(r['paper_mean'])} ± {num(r['paper_std'])}",
              f"{num(r['our_mean'])} ± {num(r['our_std'])}", num(r["z"], 2),
              "-" if r["within_2sd"] is None else ("yes" if r["within_2sd"] else "no")] for r in rows]  # fmt: skip
    scored = [r for r in rows if r["within_2sd"] is not None]
    s = Section(f"Paper versus ours: {stored.get('title', stored.get('preset', ''))}")
    s.paragraphs.append(
        f"{sum(1 for r in scored if r['within_2sd'])} of {len(scored)} published cells lie within 2 standard "
        "deviations of ours (z: the difference in units of the paper's sd, or of ours where the paper gives none). "
        "Written by `mlknn reproduce`, which stored this comparison in the database."
    )
    s.items.append(Table("Published cells and ours", header, cells, set(), "", wrap=True))
    return s


def build_report(db: "str | os.PathLike[str] | ResultsDB", out_dir: str | os.PathLike[str] = "report", *,
                 metrics: Sequence[str] | None = None, alpha: float = 0.05,
                 data_home: str | os.PathLike[str] | None = None, dataset_figures: bool = True,
                 k_occurrence: int = 10, max_dataset_size: int = 20000, title: str | None = None,
                 min_datasets: int = MIN_DATASETS_FOR_RANK_TESTS) -> ReportPaths:  # fmt: skip
    """Write ``report.md``, ``report.html`` and ``figures/*.png`` for a results database.

    Parameters
    ----------
    db : str, path-like or ResultsDB
        The results database (a path or an open ResultsDB).
    out_dir : str or path-like, default="report"
        Folder written with report.md, report.html and the figures (created if missing).
    metrics : sequence of str, optional
        Restrict to these metrics (default: every metric in the database).
    alpha : float, default=0.05
        Significance level of the tests in the report (Wilcoxon per dataset, Friedman
        and Nemenyi across datasets).
    data_home : str, optional
        Dataset folder for the dataset figures (default ``$MLKNN_DATA``).
    dataset_figures : bool, default=True
        Add each dataset's k-occurrence and label co-occurrence figures (needs the
        datasets).
    k_occurrence : int, default=10
        k of the k-occurrence figures (Teng et al. 2025 use 10).
    max_dataset_size : int, default=20000
        Larger datasets get no k-occurrence figure (a leave-one-out search).
    title : str, optional
        Title of the report; default "mlknn report: <database name>".
    min_datasets : int, default=10
        Fewest datasets with complete results for the rank tests across datasets
        (see :data:`MIN_DATASETS_FOR_RANK_TESTS`).

    Returns
    -------
    dict
        ``markdown``, ``html`` (paths) and ``figures`` (list of paths).

    See Also
    --------
    mlknn.experiments.run_experiment : Writes the results database.
    mlknn.stats : The tests of the significance sections.

    Examples
    --------
    >>> import tempfile, numpy as np
    >>> from pathlib import Path
    >>> from mlknn.experiments import ExperimentConfig, ProtocolConfig, run_experiment
    >>> from mlknn.report import build_report
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 3))
    >>> Y = (X[:, :2] > 0).astype(np.uint8)
    >>> tmp = Path(tempfile.mkdtemp())
    >>> cfg = ExperimentConfig(datasets=("toy",), algorithms=("mlknn",), k=(3,),
    ...                        protocol=ProtocolConfig("5x2", n_repeats=1, seed=0))
    >>> _ = run_experiment(cfg, tmp / "r.db", data={"toy": (X, Y)})
    >>> paths = build_report(tmp / "r.db", tmp / "report", metrics=["macro_auc"], dataset_figures=False)
    >>> paths["html"].name
    'report.html'
    """
    import matplotlib

    matplotlib.use("Agg")
    from ..experiments import ResultsDB

    own = not isinstance(db, ResultsDB)
    rdb = db if isinstance(db, ResultsDB) else ResultsDB(db)
    try:
        rows = rdb.rows()
        warnings = rdb.warnings() if hasattr(rdb, "warnings") else []
        name = Path(rdb.path).name
        from ..experiments import COMPARISON_META

        stored = rdb.get_meta(COMPARISON_META)
    finally:
        if own:
            rdb.close()
    if metrics:
        from ..experiments import TIE_VARIANTS, is_tie_variant, tie_rule_of
        from ..metrics import METRIC_NAMES

        bad = [m for m in metrics if m not in METRIC_NAMES
               and not (is_tie_variant(m) and tie_rule_of(m) in TIE_VARIANTS)]  # fmt: skip
        if bad:
            raise ValueError(
                f"Unknown metric(s) {bad}; the metrics are the keys of mlknn.metrics.evaluate: {', '.join(METRIC_NAMES)}, "
                f"and a ranking measure under a stored tie rule, e.g. coverage[mulan] (rules: {', '.join(TIE_VARIANTS)})."
            )
    if not rows:
        raise ValueError(f"The results database {str(db)!r} holds no results yet (run `mlknn run ... --db` first).")
    sections = build_sections(rows, metrics=metrics, alpha=alpha, data_home=data_home, dataset_figures=dataset_figures,
                              k_occurrence=k_occurrence, max_n=max_dataset_size, warnings=warnings,
                              min_datasets=min_datasets)  # fmt: skip
    if stored:
        sections.insert(0, _comparison_section(json.loads(stored)))
    md, ht, figures = render(sections, title or f"mlknn report: {name}")
    out = Path(out_dir)
    (out / "figures").mkdir(parents=True, exist_ok=True)
    paths: list[Path] = []
    for f in figures:
        p = out / "figures" / f"{f.name}.png"
        p.write_bytes(f.png)
        paths.append(p)
    (out / "report.md").write_text(md, encoding="utf-8")
    (out / "report.html").write_text(ht, encoding="utf-8")
    return {"markdown": out / "report.md", "html": out / "report.html", "figures": paths}
