"""Assemble the report: tables and figures -> Markdown and HTML."""

import base64
import html
import io
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

#: Metrics shown in the per-dataset figures (seed 001's six).
_CURVE_METRICS = ("macro_auc", "micro_auc", "ranking_loss", "macro_f1", "micro_f1", "hamming_loss")
#: Metrics of seed 002's radius figures.
_RADIUS_METRICS = ("hamming_loss", "one_error", "coverage", "ranking_loss", "average_precision")


# ------------------------------------------------------------------ model
@dataclass
class Table:
    title: str
    header: list
    rows: list  # list of list of str
    bold: set = field(default_factory=set)  # (row, col) cells in bold
    note: str = ""


@dataclass
class Figure:
    name: str
    caption: str
    png: bytes


@dataclass
class Section:
    title: str
    level: int = 2
    paragraphs: list = field(default_factory=list)
    items: list = field(default_factory=list)  # Table or Figure, in order


def _fmt(v, digits=3):
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    return f"{v:.{digits}f}"


def _fmt_p(p):
    if p is None or not math.isfinite(p):
        return "-"
    if p < 1e-3:
        return f"{p:.2e}"
    return f"{p:.3f}"


def _png(fig):
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return buf.getvalue()


# ------------------------------------------------------------ data model
def _config_label(algorithm, params, hide):
    from ..experiments import AlgorithmSpec

    spec = AlgorithmSpec(algorithm, tuple(sorted(json.loads(params).items())))
    return spec.label(hide=hide)


def _prep_label(prep_json):
    p = json.loads(prep_json)
    parts = []
    if p.get("scaling", "none") != "none":
        parts.append(p["scaling"])
    if p.get("feature_selection") is not None:
        fs = p["feature_selection"]
        parts.append(f"chi2 {fs:g}" if isinstance(fs, float) else f"chi2 {fs} features")
    if p.get("min_label_count", 0):
        parts.append(f"labels >= {p['min_label_count']} ({p.get('label_scope', 'train')})")
    return ", ".join(parts) or "no preprocessing"


class _Group:
    """Rows of one protocol + search, indexed for tables."""

    def __init__(self, protocol, search, rows):
        self.protocol, self.search = protocol, search
        configs = sorted({(r["algorithm"], r["params"]) for r in rows})
        all_params = [json.loads(p) for _, p in configs]
        keys = set().union(*all_params) if all_params else set()
        hide = {
            k for k in keys
            if all(k in p for p in all_params) and len({json.dumps(p[k]) for p in all_params}) == 1
        }  # fmt: skip
        self.hidden = {k: all_params[0][k] for k in sorted(hide)} if all_params else {}
        self.configs = configs
        self.labels = [_config_label(a, p, hide) for a, p in configs]
        dsp = sorted({(r["dataset"], r["preprocessing"]) for r in rows})
        multi = {d for d, _ in dsp if sum(1 for d2, _ in dsp if d2 == d) > 1}
        self.datasets = dsp
        self.row_labels = [d if d not in multi else f"{d} [{_prep_label(p)}]" for d, p in dsp]
        self.metrics = []
        vals, times = {}, {}
        for r in rows:
            key = (r["dataset"], r["preprocessing"])
            c = (r["algorithm"], r["params"])
            vals.setdefault((key, c, r["metric"]), []).append((r["repeat"], r["fold"], r["value"]))
            if r["metric"] not in self.metrics:
                self.metrics.append(r["metric"])
            times.setdefault((key, c), {})[(r["repeat"], r["fold"])] = (
                r["fit_seconds"], r["predict_seconds"], r["search_seconds"]
            )
        self.values = {k: np.array([v for _, _, v in sorted(x)], dtype=float) for k, x in vals.items()}
        self.times = times
        self.rows = rows

    def folds(self, row, config, metric):
        return self.values.get((self.datasets[row], self.configs[config], metric))

    def mean_table(self, metric):
        T = np.full((len(self.datasets), len(self.configs)), np.nan)
        S = np.full_like(T, np.nan)
        for i in range(len(self.datasets)):
            for j in range(len(self.configs)):
                v = self.folds(i, j, metric)
                if v is not None and np.any(np.isfinite(v)):
                    T[i, j], S[i, j] = np.nanmean(v), np.nanstd(v, ddof=1) if np.sum(np.isfinite(v)) > 1 else 0.0
        return T, S


# ------------------------------------------------------------------ tables
def _metric_table(g, metric, alpha):
    from ..metrics import GREATER_IS_BETTER
    from ..stats import average_ranks, win_tie_loss

    gib = GREATER_IS_BETTER.get(metric, True)
    T, S = g.mean_table(metric)
    complete = ~np.any(np.isnan(T), axis=1)
    ranks = np.full_like(T, np.nan)
    if complete.any():
        ranks[complete], _ = average_ranks(T[complete], gib)
    rows, bold = [], set()
    for i, label in enumerate(g.row_labels):
        cells = [label]
        for j in range(len(g.configs)):
            if np.isnan(T[i, j]):
                cells.append("-")
                continue
            rk = "" if np.isnan(ranks[i, j]) else f"({ranks[i, j]:g})"
            best = complete[i] and ranks[i, j] == np.nanmin(ranks[i])
            cells.append(f"{_fmt(T[i, j])}{rk} ± {_fmt(S[i, j])}" + (" •" if best else ""))
        rows.append(cells)
    n_complete = int(complete.sum())
    if n_complete:
        avg = ranks[complete].mean(axis=0)
        rows.append(["average rank"] + [f"{a:.2f}" for a in avg])
        best = np.flatnonzero(np.isclose(avg, avg.min()))
        for j in best:
            bold.add((len(rows) - 1, j + 1))
        scores = []
        for i in np.flatnonzero(complete):
            arrs = [g.folds(i, j, metric) for j in range(len(g.configs))]
            n = min(len(a) for a in arrs)
            scores.append(np.vstack([a[:n] for a in arrs]))
        wtl = win_tie_loss(scores, g.labels, gib, alpha)
        rows.append(["win/tie/loss"] + [f"{w}/{t}/{l}" for w, t, l in zip(wtl.wins, wtl.ties, wtl.losses)])
    arrow = "higher is better" if gib else "lower is better"
    note = (
        f"mean(rank) ± std over the folds; • = top-ranked on the dataset; {arrow}. Average rank over the "
        f"{n_complete} dataset(s) where every configuration has results; win/tie/loss from two-sided "
        f"Wilcoxon signed-rank tests over the folds (alpha = {alpha}) between every pair, per dataset."
    )
    return Table(f"{metric}", ["Dataset"] + g.labels, rows, bold, note), T[complete], complete


def _wilcoxon_table(g, metric, T_complete, alpha):
    from ..metrics import GREATER_IS_BETTER
    from ..stats import pairwise_wilcoxon

    res = pairwise_wilcoxon(T_complete, g.labels, GREATER_IS_BETTER.get(metric, True), alpha)
    rows, bold = [], set()
    for i, name in enumerate(g.labels):
        cells = [name]
        for j in range(len(g.labels)):
            if i == j:
                cells.append("-")
            else:
                cells.append(_fmt_p(res.pvalues[i, j]))
                if res.significant[i, j]:
                    bold.add((i, j + 1))
        rows.append(cells)
    note = (
        f"Entry (i, j): p-value of the one-sided Wilcoxon signed-rank test over the {res.n_datasets} "
        f"datasets whose alternative is that i is better than j. Bonferroni-corrected level "
        f"{alpha} / {res.n_comparisons} = {res.corrected_alpha:.3g}; significant p-values in bold."
    )
    return Table(f"pairwise Wilcoxon: {metric}", [metric] + g.labels, rows, bold, note)


def _dataset_table(g, row, metrics, alpha):
    from ..metrics import GREATER_IS_BETTER
    from ..stats import average_ranks, ttest_markers

    header = ["Algorithm"] + [m + ("+" if GREATER_IS_BETTER.get(m, True) else "−") for m in metrics] + ["AvRank"]
    m_ranks = []
    cells = [[lab] for lab in g.labels]
    bold = set()
    for col, m in enumerate(metrics):
        gib = GREATER_IS_BETTER.get(m, True)
        arrs = [g.folds(row, j, m) for j in range(len(g.configs))]
        present = [j for j, a in enumerate(arrs) if a is not None and np.all(np.isfinite(a))]
        markers = None
        if len(present) >= 2:
            n = min(len(arrs[j]) for j in present)
            if n >= 2:
                markers = ttest_markers({j: arrs[j][:n] for j in present}, gib, alpha)
        means = np.full(len(g.configs), np.nan)
        for j, a in enumerate(arrs):
            if a is None or not np.any(np.isfinite(a)):
                cells[j].append("-")
                continue
            means[j] = np.nanmean(a)
            sd = np.nanstd(a, ddof=1) if np.sum(np.isfinite(a)) > 1 else 0.0
            mark = ""
            if markers is not None and j in markers.markers:
                mark = markers.symbol(j)
                if markers.markers[j] == "best":
                    bold.add((j, col + 1))
            cells[j].append(f"{_fmt(means[j])} ± {_fmt(sd)}{mark}")
        if np.all(np.isfinite(means)):
            r, _ = average_ranks(means[None, :], gib)
            m_ranks.append(r[0])
    if m_ranks:
        av = np.mean(m_ranks, axis=0)
        for j in range(len(g.configs)):
            cells[j].append(f"{av[j]:.1f}")
    else:
        for j in range(len(g.configs)):
            cells[j].append("-")
    note = (
        "mean ± std over the folds; bold = best; • (◦): significant (non-significant) difference from the "
        f"best by a two-tailed paired t-test at {alpha:g}; AvRank = rank averaged over the metrics (seed 000 layout)."
    )
    return Table(f"{g.row_labels[row]}", header, cells, bold, note)


def _time_table(g):
    header = ["Dataset"] + g.labels
    rows = []
    for i, lab in enumerate(g.row_labels):
        cells = [lab]
        for c in g.configs:
            t = g.times.get((g.datasets[i], c))
            if not t:
                cells.append("-")
                continue
            arr = np.array([v for v in t.values()], dtype=float)
            fit, pred, srch = np.nanmean(arr, axis=0)
            cells.append(f"{fit:.3f} / {pred:.3f} / {srch:.3f}")
        rows.append(cells)
    note = (
        "mean seconds per fold: fit / predict / neighbour search. The search is done once per fold for all "
        "kNN configurations (shared), so it is not part of their fit or predict time."
    )
    return Table("run time (s)", header, rows, set(), note)


# ------------------------------------------------------------------ figures
def _cd_figure(g, metric, T, alpha, idx):
    from ..metrics import GREATER_IS_BETTER
    from ..plots import CriticalDifferenceDisplay

    disp = CriticalDifferenceDisplay.from_results(
        T, g.labels, greater_is_better=GREATER_IS_BETTER.get(metric, True), alpha=alpha, title=f"{metric}"
    ).plot()
    return Figure(f"g{idx}_cd_{metric}", f"Critical-difference diagram (Nemenyi, alpha = {alpha}) on {metric}.", _png(disp.figure_))


def _curve_figures(g, idx, param, metrics, what):
    import matplotlib.pyplot as plt

    from ..plots import ParameterCurveDisplay

    figs = []
    datasets = sorted({d for d, _ in g.datasets})
    ms = [m for m in metrics if m in g.metrics] or g.metrics[:6]
    targets = [None] + datasets if len(datasets) > 1 else datasets
    any_curve = False
    for ds in targets:
        n = len(ms)
        cols = min(3, n)
        rws = math.ceil(n / cols)
        fig, axes = plt.subplots(rws, cols, figsize=(4.6 * cols, 3.6 * rws), squeeze=False, constrained_layout=True)
        drawn = False
        for ax, m in zip(axes.ravel(), ms):
            d = ParameterCurveDisplay.from_results(g.rows, param=param, metric=m, dataset=ds)
            d.title = m
            d.plot(ax=ax)
            drawn = drawn or bool(d.curves)
        for ax in axes.ravel()[n:]:
            ax.set_axis_off()
        label = "average rank over the datasets" if ds is None else ds
        fig.suptitle(f"{what}: {label}", fontsize=11)
        if drawn:
            any_curve = True
            figs.append(Figure(f"g{idx}_{param}_{ds or 'avgrank'}", f"{what} ({label}).", _png(fig)))
        else:
            plt.close(fig)
    return figs, any_curve


def _placeholder(name, title, why):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 1.6))
    ax.set_axis_off()
    ax.text(0.5, 0.5, f"{title}\nno data: {why}", ha="center", va="center", color="0.35")
    return Figure(name, f"{title}: no data ({why}).", _png(fig))


def _dataset_figures(datasets, data_home, k, max_n):
    """k-occurrence and label co-occurrence for every dataset that loads."""
    from ..experiments._runner import apply_prefilter, load_dataset
    from ..plots import KOccurrenceDisplay, LabelCooccurrenceDisplay
    from ..preprocessing import FoldPreprocessor

    figs = []
    for ds, prep_json in datasets:
        p = json.loads(prep_json)
        try:
            from ..datasets import load

            try:
                names = load(ds, data_home=data_home).label_names
            except Exception:
                names = None
            X, Y = load_dataset(ds, data_home)
            pre = None
            if p.get("label_scope") == "dataset" and p.get("min_label_count", 0):
                from ..preprocessing import RareLabelFilter

                keep = RareLabelFilter(p["min_label_count"]).fit(Y).support_
                X, Y = apply_prefilter(X, Y, {"min_label_count": p["min_label_count"], "drop_unlabelled": True})
                names = [names[i] for i in keep] if names is not None else None
            if p.get("scaling", "none") != "none" or p.get("feature_selection") is not None:
                pre = FoldPreprocessor(p.get("scaling", "none"), p.get("feature_selection"), 0).fit(X, Y)
                X = pre.transform(X)
        except Exception as exc:  # noqa: BLE001 - a figure, not a result
            figs.append(_placeholder(f"kocc_{ds}", f"k-occurrence: {ds}", f"cannot load the dataset ({type(exc).__name__})"))
            figs.append(_placeholder(f"cooc_{ds}", f"label co-occurrence: {ds}", "cannot load the dataset"))
            continue
        if X.shape[0] > max_n:
            figs.append(_placeholder(f"kocc_{ds}", f"k-occurrence: {ds}", f"n = {X.shape[0]} > {max_n} (skipped)"))
        else:
            d = KOccurrenceDisplay.from_data(X, k, name=ds).plot()
            figs.append(Figure(f"kocc_{ds}", f"k-occurrence distribution of {ds} (k = {k}, {_prep_label(prep_json)}).", _png(d.figure_)))
        d = LabelCooccurrenceDisplay.from_labels(Y, names, name=ds).plot()
        figs.append(Figure(f"cooc_{ds}", f"Label co-occurrence P(q | r) of {ds}.", _png(d.figure_)))
    return figs


# ---------------------------------------------------------------- assemble
_SEARCH_RECALL = "search_recall"  # mlknn.experiments._runner.SEARCH_RECALL


def _search_recall_paragraph(rows):
    """One sentence: the approximate search's recall per dataset (mean and minimum over folds)."""
    per = {}
    for r in rows:  # one value per (dataset, repeat, fold): every kNN cell of a fold shares the graph
        per.setdefault(r["dataset"], {})[(r["repeat"], r["fold"])] = r["value"]
    parts = [f"{d} {np.mean(list(v.values())):.4f} (min {min(v.values()):.4f})" for d, v in sorted(per.items())]
    return ("Approximate neighbour search: recall@k of the test queries' graph against exact search "
            "(200 sampled queries per fold; mean, min over folds): " + "; ".join(parts) + ".")


def build_sections(rows, *, metrics=None, alpha=0.05, data_home=None, dataset_figures=True, k_occurrence=10, max_n=20000):
    from ..metrics import METRIC_NAMES

    groups = {}
    for r in rows:
        groups.setdefault((r["protocol"], r["search"]), []).append(r)
    sections = []
    for idx, ((proto, search), grows) in enumerate(sorted(groups.items())):
        # The search's recall (approximate backends) describes the neighbour graph,
        # not the predictions: reported per dataset, kept out of the metric tables
        # and ranks unless asked for by name.
        recall_rows = [r for r in grows if r["metric"] == _SEARCH_RECALL]
        if metrics:
            grows = [r for r in grows if r["metric"] in metrics]
        else:
            grows = [r for r in grows if r["metric"] != _SEARCH_RECALL]
        if not grows:
            continue
        g = _Group(proto, search, grows)
        order = [m for m in METRIC_NAMES if m in g.metrics] + [m for m in g.metrics if m not in METRIC_NAMES]
        g.metrics = order
        s = Section(f"Experiment {idx + 1}")
        p = json.loads(proto)
        s.paragraphs.append(f"Protocol: `{proto}`. Neighbour search: `{search}`.")
        if g.hidden:
            s.paragraphs.append("Parameters shared by every configuration: " + ", ".join(f"{k} = {v}" for k, v in g.hidden.items()) + ".")
        preps = sorted({(d, pr) for d, pr in g.datasets})
        s.paragraphs.append("Preprocessing: " + "; ".join(f"{d}: {_prep_label(pr)}" for d, pr in preps) + ".")
        if recall_rows:
            s.paragraphs.append(_search_recall_paragraph(recall_rows))
        n_folds = {len(v) for v in g.values.values()}
        s.paragraphs.append(
            f"{len(g.datasets)} dataset(s), {len(g.configs)} configuration(s), folds per cell: "
            f"{', '.join(map(str, sorted(n_folds)))} ({p.get('protocol')})."
        )
        sections.append(s)

        sm = Section("Results per metric (seed 001 layout)", 3)
        for m in g.metrics:
            table, T, complete = _metric_table(g, m, alpha)
            sm.items.append(table)
            if T.shape[0] >= 2 and T.shape[1] >= 2:
                from ..metrics import GREATER_IS_BETTER
                from ..stats import friedman_test, nemenyi_cd

                fr = friedman_test(T, g.labels, GREATER_IS_BETTER.get(m, True), alpha)
                cd = nemenyi_cd(T.shape[1], T.shape[0], alpha)
                sm.items.append(
                    f"Friedman ({m}): chi²_F = {fr.chi2:.3f} (critical {fr.chi2_critical_value:.3f}), "
                    f"Iman-Davenport F_F = {fr.F_F:.3f} with ({fr.df1}, {fr.df2}) d.f., critical value "
                    f"{fr.critical_value:.3f}, p = {_fmt_p(fr.pvalue)}: "
                    f"{'reject' if fr.reject else 'do not reject'} equal performance. Nemenyi CD = {cd:.3f}."
                )
                sm.items.append(_cd_figure(g, m, T, alpha, idx))
                sm.items.append(_wilcoxon_table(g, m, T, alpha))
            else:
                sm.items.append(f"({m}: Friedman test, CD diagram and pairwise Wilcoxon tests need >= 2 complete datasets and >= 2 configurations.)")
        sections.append(sm)

        sd = Section("Results per dataset (seed 000 layout)", 3)
        for i in range(len(g.datasets)):
            sd.items.append(_dataset_table(g, i, g.metrics, alpha))
        sections.append(sd)

        st = Section("Run time", 3)
        st.items.append(_time_table(g))
        sections.append(st)

        sk = Section("Metric versus k (seed 001 Figures 2-7)", 3)
        figs, ok = _curve_figures(g, idx, "n_neighbors", _CURVE_METRICS, "metric versus k")
        sk.items.extend(figs if ok else [_placeholder(f"g{idx}_k_none", "metric versus k", "no configuration was run with >= 2 values of k")])
        sections.append(sk)

        sr = Section("Metric versus radius for BML-kNN (seed 002 Figures 2-5)", 3)
        radius_params = sorted({k for r in grows if r["algorithm"].startswith("bmlknn") for k in json.loads(r["params"]) if "radius" in k})
        figs = []
        for rp in radius_params:
            f, ok = _curve_figures(g, idx, rp, _RADIUS_METRICS, f"metric versus {rp}")
            figs.extend(f if ok else [])
        sr.items.extend(figs or [_placeholder(f"g{idx}_radius_none", "metric versus radius", "no bmlknn results with several radii in this database")])
        sections.append(sr)

    if dataset_figures:
        sf = Section("Datasets: k-occurrence (seed 001 Figure 1) and label co-occurrence (seed 000 Figure 1)")
        dsp = sorted({(r["dataset"], r["preprocessing"]) for r in rows})
        seen, uniq = set(), []
        for d, p in dsp:
            if d not in seen:
                seen.add(d)
                uniq.append((d, p))
        sf.items.extend(_dataset_figures(uniq, data_home, k_occurrence, max_n))
        sections.append(sf)
    return sections


def _md_table(t):
    def cell(i, j, v):
        v = str(v).replace("|", "\\|")
        return f"**{v}**" if (i, j) in t.bold else v

    out = [f"**{t.title}**", "", "| " + " | ".join(t.header) + " |", "|" + "---|" * len(t.header)]
    for i, r in enumerate(t.rows):
        out.append("| " + " | ".join(cell(i, j, v) for j, v in enumerate(r)) + " |")
    if t.note:
        out += ["", f"_{t.note}_"]
    return "\n".join(out)


def _html_table(t):
    parts = [f"<table><caption>{html.escape(t.title)}</caption><thead><tr>"]
    parts += [f"<th>{html.escape(str(h))}</th>" for h in t.header]
    parts.append("</tr></thead><tbody>")
    for i, r in enumerate(t.rows):
        parts.append("<tr>")
        for j, v in enumerate(r):
            tag = "th" if j == 0 else "td"
            v = html.escape(str(v))
            if (i, j) in t.bold:
                v = f"<b>{v}</b>"
            parts.append(f"<{tag}>{v}</{tag}>")
        parts.append("</tr>")
    parts.append("</tbody></table>")
    if t.note:
        parts.append(f'<p class="note">{html.escape(t.note)}</p>')
    return "".join(parts)


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2em auto;max-width:1400px;color:#222;padding:0 1em}
table{border-collapse:collapse;margin:1em 0;font-size:12px}caption{font-weight:bold;text-align:left;padding:4px 0}
th,td{border:1px solid #ccc;padding:3px 6px;text-align:right;white-space:nowrap}thead th{background:#f2f2f2}
tbody th{text-align:left;background:#fafafa}p.note{font-size:11px;color:#555;margin-top:-0.6em}
figure{display:inline-block;margin:0.5em;vertical-align:top}figcaption{font-size:11px;color:#555;max-width:640px}
img{max-width:100%}code{background:#f4f4f4;padding:1px 3px;font-size:11px}
"""


def render(sections, title, fig_dir_name="figures"):
    """(markdown, html, figures) of a list of sections."""
    md = [f"# {title}", ""]
    ht = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title><style>{_CSS}</style></head><body>",
          f"<h1>{html.escape(title)}</h1>"]  # fmt: skip
    figures = []
    for s in sections:
        md += ["#" * s.level + " " + s.title, ""]
        ht.append(f"<h{s.level}>{html.escape(s.title)}</h{s.level}>")
        for p in s.paragraphs:
            md += [p, ""]
            ht.append(f"<p>{_inline_code(p)}</p>")
        for it in s.items:
            if isinstance(it, Table):
                md += [_md_table(it), ""]
                ht.append(_html_table(it))
            elif isinstance(it, Figure):
                figures.append(it)
                md += [f"![{it.caption}]({fig_dir_name}/{it.name}.png)", "", f"_{it.caption}_", ""]
                b64 = base64.b64encode(it.png).decode("ascii")
                ht.append(
                    f"<figure><img alt='{html.escape(it.caption)}' src='data:image/png;base64,{b64}'>"
                    f"<figcaption>{html.escape(it.caption)}</figcaption></figure>"
                )
            else:
                md += [str(it), ""]
                ht.append(f"<p>{_inline_code(str(it))}</p>")
    ht.append("</body></html>")
    return "\n".join(md) + "\n", "\n".join(ht) + "\n", figures


def _inline_code(text):
    parts = html.escape(text).split("`")
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts))


def build_report(db, out_dir="report", *, metrics=None, alpha=0.05, data_home=None, dataset_figures=True,
                 k_occurrence=10, max_dataset_size=20000, title=None):  # fmt: skip
    """Write ``report.md``, ``report.html`` and ``figures/*.png`` for a results database.

    Parameters
    ----------
    db : str, path-like or ResultsDB
    out_dir : str or path-like, default="report"
    metrics : sequence of str, optional
        Restrict to these metrics (default: every metric in the database).
    alpha : float, default=0.05
    data_home : str, optional
        Dataset folder for the dataset figures (default ``$MLKNN_DATA``).
    dataset_figures : bool, default=True
    k_occurrence : int, default=10
        k of the k-occurrence figures (seed 001 uses 10).
    max_dataset_size : int, default=20000
        Larger datasets get no k-occurrence figure (a leave-one-out search).
    title : str, optional

    Returns
    -------
    dict
        ``markdown``, ``html`` (paths) and ``figures`` (list of paths).
    """
    import matplotlib

    matplotlib.use("Agg")
    from ..experiments import ResultsDB

    own = not isinstance(db, ResultsDB)
    rdb = ResultsDB(db) if own else db
    try:
        rows = rdb.rows()
        name = Path(rdb.path).name
    finally:
        if own:
            rdb.close()
    if metrics:
        from ..metrics import METRIC_NAMES

        bad = [m for m in metrics if m not in METRIC_NAMES]
        if bad:
            raise ValueError(f"Unknown metric(s) {bad}; the metrics are the keys of mlknn.metrics.evaluate: {', '.join(METRIC_NAMES)}.")
    if not rows:
        raise ValueError(f"The results database {str(db)!r} holds no results yet (run `mlknn run ... --db` first).")
    sections = build_sections(rows, metrics=metrics, alpha=alpha, data_home=data_home, dataset_figures=dataset_figures,
                              k_occurrence=k_occurrence, max_n=max_dataset_size)  # fmt: skip
    md, ht, figures = render(sections, title or f"mlknn report: {name}")
    out = Path(out_dir)
    (out / "figures").mkdir(parents=True, exist_ok=True)
    paths = []
    for f in figures:
        p = out / "figures" / f"{f.name}.png"
        p.write_bytes(f.png)
        paths.append(p)
    (out / "report.md").write_text(md, encoding="utf-8")
    (out / "report.html").write_text(ht, encoding="utf-8")
    return {"markdown": out / "report.md", "html": out / "report.html", "figures": paths}
