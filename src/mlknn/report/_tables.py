"""The report's tables (pure: a Group in, Table objects out)."""

import warnings
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from ._model import Group, Row, Table, fmt, fmt_p

#: Most value columns in one table: with 12-px cells of "0.812 ± 0.012 •" this keeps a
#: table inside a 1280-px window; wider tables are split into several.
MAX_COLUMNS = 6


def split_columns(table: Table, max_columns: int = MAX_COLUMNS) -> list[Table]:
    """The table as several, each with its first column and <= ``max_columns`` others."""
    n = len(table.header) - 1
    if n <= max_columns:
        return [table]
    parts: list[Table] = []
    n_parts = -(-n // max_columns)
    for p, start in enumerate(range(1, n + 1, max_columns)):
        cols = [0] + list(range(start, min(start + max_columns, n + 1)))
        where = {c: i for i, c in enumerate(cols)}
        bold = {(r, where[c]) for r, c in table.bold if c in where}
        rows = [[row[c] for c in cols] for row in table.rows]
        title = f"{table.title} ({p + 1}/{n_parts})"
        parts.append(Table(title, [table.header[c] for c in cols], rows, bold, table.note if p == n_parts - 1 else ""))
    return parts


def _gib(metric: str) -> bool:
    from ..experiments import base_metric
    from ..metrics import GREATER_IS_BETTER

    # "coverage[mulan]" (a tie rule's variant, mlknn.experiments._ties) goes the way of "coverage".
    return GREATER_IS_BETTER.get(base_metric(metric), True)


def _arrow(metric: str) -> str:
    return "↑" if _gib(metric) else "↓"


def ties_paragraph(shown: Sequence[str], stored: Iterable[str]) -> str:
    """Which tie rule the ranking measures of the tables use, and which other rules are stored."""
    from ..experiments import RANKING_METRICS, TIE_VARIANTS, base_metric, is_tie_variant

    variants = sorted({m for m in shown if is_tie_variant(m)})
    plain = [m for m in shown if m in RANKING_METRICS]
    stored_rules = [t for t in TIE_VARIANTS if any(m.endswith(f"[{t}]") for m in stored if is_tie_variant(m))]
    parts = []
    if plain:
        parts.append(f"{', '.join(plain)} rank tied labels pessimistically (`ties='pessimistic'`, "
                     "the largest rank of the tied group)")  # fmt: skip
    if variants:
        parts.append("a key `metric[rule]` is that measure under the tie rule `rule` ("
                     + ", ".join(f"{m}: `ties='{m[len(base_metric(m)) + 1:-1]}'`" for m in variants) + ")")
    if stored_rules and not variants:
        parts.append("the database also holds them under " + ", ".join(f"`{t}`" for t in stored_rules)
                     + " (keys such as `coverage[mulan]`; name them with `--metrics` to report them)")
    if not parts:
        return ""
    return "Ranking measures: " + "; ".join(parts) + "."


# ------------------------------------------------------------------ summary
def summary_table(g: Group) -> Table:
    """Configurations x metrics: mean ± sd, best in bold, average rank (last column).

    One dataset: mean ± sd over its folds. Several: the mean over the datasets of the
    per-dataset means ± their sd over the datasets (the average rank is over the
    datasets where every configuration has results, and over the metrics).
    """
    from ..stats import average_ranks

    header = ["Configuration"] + [f"{m} {_arrow(m)}" for m in g.metrics] + ["avg rank"]
    cells = [[lab] for lab in g.labels]
    unaveraged: list[str] = []
    bold: set[tuple[int, int]] = set()
    rank_sum, rank_n = np.zeros(len(g.configs)), 0
    for col, m in enumerate(g.metrics):
        T, _ = g.mean_table(m)
        if T.shape[0] == 1:
            v = [g.folds(0, j, m) for j in range(len(g.configs))]
            mean = np.array([np.nanmean(a) if a is not None else np.nan for a in v])
            sd = np.array([np.nanstd(a, ddof=1) if a is not None and a.size > 1 else np.nan for a in v])
        else:
            with warnings.catch_warnings():  # a configuration without results: an all-NaN column
                warnings.simplefilter("ignore", RuntimeWarning)
                mean = np.nanmean(T, axis=0)
                sd = np.nanstd(T, axis=0, ddof=1)
        if T.shape[0] > 1 and not averages_across_datasets(m):
            # Its scale depends on the dataset (coverage counts labels): the configurations'
            # average rank over the datasets instead of a mean and an sd over them.
            unaveraged.append(m)
            complete = ~np.any(np.isnan(T), axis=1)
            r = average_ranks(T[complete], _gib(m))[0].mean(axis=0) if complete.any() else mean * np.nan
            for j in range(len(g.configs)):
                cells[j].append("-" if not np.isfinite(r[j]) else f"rank {fmt(r[j], 2)}")
            best_rank = np.nanmin(r) if np.any(np.isfinite(r)) else np.nan
            bold.update((j, col + 1) for j in np.flatnonzero(np.isclose(r, best_rank)).tolist())
        for j in range(len(g.configs)):
            if m in unaveraged:
                continue
            cells[j].append("-" if not np.isfinite(mean[j]) else f"{fmt(mean[j])} ± {fmt(sd[j])}")
        if np.any(np.isfinite(mean)) and m not in unaveraged:
            best = np.nanmax(mean) if _gib(m) else np.nanmin(mean)
            for j in np.flatnonzero(np.isclose(mean, best, rtol=0, atol=5e-4)).tolist():
                bold.add((j, col + 1))
        complete = ~np.any(np.isnan(T), axis=1)
        if complete.any() and len(g.configs) > 1:
            ranks, _ = average_ranks(T[complete], _gib(m))
            rank_sum += ranks.sum(axis=0)
            rank_n += ranks.shape[0]
    avg = rank_sum / rank_n if rank_n else np.full(len(g.configs), np.nan)
    for j in range(len(g.configs)):
        cells[j].append(fmt(avg[j], 2))
    if rank_n:
        for j in np.flatnonzero(np.isclose(avg, np.nanmin(avg))).tolist():
            bold.add((j, len(header) - 1))
    note = ""
    if unaveraged:
        note = (f"{', '.join(unaveraged)}: its scale depends on the dataset (the number of labels), so no mean or sd "
                "over the datasets; the cell is the configuration's average rank over them (1 = best).")
    return Table("Summary", header, cells, bold, note)


def averages_across_datasets(metric: str) -> bool:
    """Whether a measure's mean over datasets means something: not for coverage (its scale is the
    number of labels, so datasets with many labels would dominate) in any tie reading."""
    return metric.split("[")[0] != "coverage"


# --------------------------------------------------------------- per metric
def metric_table(
    g: Group, metric: str, alpha: float
) -> tuple[Table, NDArray[np.float64], NDArray[np.bool_]]:
    """Rows datasets, columns configurations: mean(rank) ± sd, • on the best, average
    rank and win/tie/loss rows. Returns (table, complete table of means, mask)."""
    from ..stats import average_ranks, win_tie_loss

    gib = _gib(metric)
    T, S = g.mean_table(metric)
    complete = ~np.any(np.isnan(T), axis=1)
    ranks = np.full_like(T, np.nan)
    if complete.any():
        ranks[complete], _ = average_ranks(T[complete], gib)
    rows: list[list[str]] = []
    bold: set[tuple[int, int]] = set()
    for i, label in enumerate(g.row_labels):
        cells = [label]
        for j in range(len(g.configs)):
            if np.isnan(T[i, j]):
                cells.append("-")
                continue
            rk = "" if np.isnan(ranks[i, j]) else f"({ranks[i, j]:g})"
            best = complete[i] and ranks[i, j] == np.nanmin(ranks[i])
            cells.append(f"{fmt(T[i, j])}{rk} ± {fmt(S[i, j])}" + (" •" if best else ""))
        rows.append(cells)
    if complete.any():
        avg = ranks[complete].mean(axis=0)
        rows.append(["average rank"] + [f"{a:.2f}" for a in avg])
        for j in np.flatnonzero(np.isclose(avg, avg.min())).tolist():
            bold.add((len(rows) - 1, j + 1))
        scores: list[NDArray[np.float64]] = []
        for i in np.flatnonzero(complete).tolist():
            # A complete dataset has folds for every configuration (its means are not NaN).
            folds = [g.folds(i, j, metric) for j in range(len(g.configs))]
            # Keeping the configurations aligned with g.labels: a missing one is a bug here.
            arrs = [a for a in folds if a is not None]
            assert len(arrs) == len(folds), "a complete dataset lacks a configuration's folds"
            n = min(len(a) for a in arrs)
            scores.append(np.vstack([a[:n] for a in arrs]))
        wtl = win_tie_loss(scores, g.labels, gib, alpha)
        rows.append(["win/tie/loss"] + [f"{w}/{t}/{lo}" for w, t, lo in zip(wtl.wins, wtl.ties, wtl.losses)])
    title = f"{metric} ({'higher' if gib else 'lower'} is better)"
    return Table(title, ["Dataset"] + g.labels, rows, bold, ""), T[complete], complete


def wilcoxon_table(g: Group, metric: str, T_complete: NDArray[np.float64], alpha: float) -> Table:
    from ..stats import pairwise_wilcoxon

    res = pairwise_wilcoxon(T_complete, g.labels, _gib(metric), alpha)
    rows: list[list[str]] = []
    bold: set[tuple[int, int]] = set()
    for i, name in enumerate(g.labels):
        cells = [name]
        for j in range(len(g.labels)):
            if i == j:
                cells.append("-")
            else:
                cells.append(fmt_p(res.pvalues[i, j]))
                if res.significant[i, j]:
                    bold.add((i, j + 1))
        rows.append(cells)
    note = (
        f"Entry (i, j): p-value of the one-sided Wilcoxon signed-rank test over the {res.n_datasets} "
        f"datasets whose alternative is that i is better than j. Bonferroni-corrected level "
        f"{alpha} / {res.n_comparisons} = {res.corrected_alpha:.3g}; significant p-values in bold."
    )
    return Table(f"pairwise Wilcoxon: {metric}", [metric] + g.labels, rows, bold, note)


# -------------------------------------------------------------- per dataset
def dataset_table(
    g: Group, row: int, alpha: float, cv_test: Literal["5x2cv", "corrected"], ratio: float
) -> Table:
    """Rows metrics, columns configurations (transposed so that 20 metrics fit):
    mean ± sd, bold best, ◦/• the fold-wise paired t-test against the best and †
    the cross-validation t-test (``cv_test``: '5x2cv' or 'corrected')."""
    from ..stats import average_ranks, cv_ttest_vs_best, ttest_markers

    n = len(g.configs)
    rows: list[list[str]] = []
    bold: set[tuple[int, int]] = set()
    m_ranks: list[NDArray[np.float64]] = []
    for m in g.metrics:
        gib = _gib(m)
        arrs = [g.folds(row, j, m) for j in range(n)]
        present = {j: a for j, a in enumerate(arrs) if a is not None and np.all(np.isfinite(a))}
        markers = None
        # The tests name the configurations by their column index, as a str.
        cvp: dict[str, float] = {}
        if len(present) >= 2:
            k = min(len(a) for a in present.values())
            if k >= 2:
                sc = {str(j): a[:k] for j, a in present.items()}
                markers = ttest_markers(sc, gib, alpha)
                if not (cv_test == "5x2cv" and k % 2):  # 5x2cv needs whole 2-fold repetitions
                    _, cvp = cv_ttest_vs_best(sc, gib, alpha, test=cv_test, test_train_ratio=ratio)
        cells = [f"{m} {_arrow(m)}"]
        means = np.full(n, np.nan)
        for j, a in enumerate(arrs):
            if a is None or not np.any(np.isfinite(a)):
                cells.append("-")
                continue
            means[j] = np.nanmean(a)
            sd = np.nanstd(a, ddof=1) if np.sum(np.isfinite(a)) > 1 else 0.0
            mark = ""
            if markers is not None and str(j) in markers.markers:
                mark = markers.symbol(str(j))
                if markers.markers[str(j)] == "best":
                    bold.add((len(rows), j + 1))
                elif cvp.get(str(j), 1.0) < alpha:
                    mark += "†"
            cells.append(f"{fmt(means[j])} ± {fmt(sd)}{mark}")
        rows.append(cells)
        if np.all(np.isfinite(means)):
            r, _ = average_ranks(means[None, :], gib)
            m_ranks.append(r[0])
    av = np.mean(m_ranks, axis=0) if m_ranks else np.full(n, np.nan)
    rows.append(["AvRank (over the metrics)"] + [fmt(a, 1) for a in av])
    return Table(f"{g.row_labels[row]}", ["Metric"] + g.labels, rows, bold, "")


def time_table(g: Group) -> Table:
    header = ["Dataset"] + g.labels
    rows: list[list[str]] = []
    for i, lab in enumerate(g.row_labels):
        cells = [lab]
        for c in g.configs:
            t = g.times.get((g.datasets[i], c))
            if not t:
                cells.append("-")
                continue
            arr = np.array([v for v in t.values()], dtype=float)
            fit, pred, srch = np.nanmedian(arr, axis=0)
            cells.append(f"{fit:.3f} / {pred:.3f} / {srch:.3f}")
        rows.append(cells)
    note = (
        "median seconds per fold: fit / predict / neighbour search. The median, not the mean: the first fold each "
        "worker process runs also pays one-off costs (imports, compiling the search kernel), which would dominate "
        "a mean over a few folds. The search is done once per fold for all kNN configurations (shared), so it is "
        "not part of their fit or predict time."
    )
    return Table("run time (s)", header, rows, set(), note)


def warnings_table(warnings: Iterable[Row], label_of: Callable[[Row], str]) -> Table:
    """One row per (dataset, configuration, stage, category, message): cells and count."""
    groups: dict[tuple[str, str, str, str, str], list[Any]] = {}  # key -> [folds, count]
    for w in warnings:
        key = (w["dataset"], label_of(w), w["stage"], w["category"], " ".join(str(w["message"]).split()))
        cell = (w["repeat"], w["fold"])
        entry = groups.setdefault(key, [set(), 0])
        entry[0].add(cell)
        entry[1] += int(w.get("count", 1) or 1)
    rows: list[list[str]] = []
    for (ds, cfg, stage, cat, msg), (cells, count) in sorted(groups.items()):
        short = msg if len(msg) <= 160 else msg[:155] + " [...]"
        rows.append([ds, cfg, stage, cat, str(len(cells)), str(count), short])
    header = ["Dataset", "Configuration", "Stage", "Warning", "Folds", "Times", "Message"]
    return Table("Warnings raised while the cells ran", header, rows, set(), "", wrap=True)
