"""Display objects (from_* / plot(ax=None)): the helpers shared by all, and the displays of
experiment results (critical-difference diagram, parameter curves).

The displays of one dataset or graph are in :mod:`mlknn.plots._data_displays`.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Self, TypeAlias

import numpy as np
from numpy.typing import ArrayLike, NDArray

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure, SubFigure

#: One curve of :class:`ParameterCurveDisplay`: x values and y values.
Curve: TypeAlias = tuple[NDArray[np.float64], NDArray[np.float64]]
#: {(dataset, line, x): mean metric over the folds} (see :func:`_curve_means`).
_Means: TypeAlias = dict[tuple[str, str, float], float]


def _axes(ax: Axes | None, figsize: tuple[float, float]) -> tuple[Figure | SubFigure, Axes]:
    import matplotlib.pyplot as plt  # on first use: importing mlknn.plots stays cheap

    fig: Figure | SubFigure
    if ax is None:
        fig, ax = plt.subplots(figsize=figsize)
    else:
        fig = ax.figure
    return fig, ax


def _no_data(ax: Axes, title: str, why: str) -> None:
    ax.set_axis_off()
    ax.set_title(title)
    ax.text(0.5, 0.5, f"no data: {why}", ha="center", va="center", transform=ax.transAxes, color="0.4")


def shorten_label(text: object, width: int = 14) -> str:
    """``text`` cut to ``width`` characters, the cut marked by an ellipsis."""
    text = str(text)
    return text if len(text) <= width else text[: width - 1] + "…"


def _natural_key(text: str) -> list[tuple[int, float, str]]:
    """Sort "k=5" before "k=10"."""
    import re

    return [(0, float(t), "") if re.fullmatch(r"\d+(?:\.\d+)?", t) else (1, 0.0, t) for t in re.split(r"(\d+(?:\.\d+)?)", text) if t]


# ------------------------------------------------------------- CD diagram
class CriticalDifferenceDisplay:
    """Critical-difference diagram (Demsar 2006, Figure 1).

    Parameters
    ----------
    average_ranks : array-like of shape (k,)
        Average rank of each algorithm over the datasets (1 = best).
    names : sequence of str
        The algorithms, in the order of ``average_ranks``.
    cd : float
        Nemenyi critical difference.
    n_datasets : int
        Number of datasets the ranks average over.
    title : str, optional
        Title of the figure.

    Attributes
    ----------
    cliques_ : list of tuple of int
        Maximal groups of algorithms whose average ranks differ by less than cd.

    See Also
    --------
    mlknn.stats.nemenyi_cd : The critical difference drawn here.
    mlknn.stats.friedman_test : The omnibus test that should reject first.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from mlknn.plots import CriticalDifferenceDisplay
    >>> table = [[0.80, 0.78, 0.70], [0.91, 0.90, 0.85], [0.66, 0.67, 0.60], [0.75, 0.74, 0.71]]
    >>> d = CriticalDifferenceDisplay.from_results(table, ["A", "B", "C"]).plot()
    >>> [round(float(r), 2) for r in d.average_ranks]
    [1.25, 1.75, 3.0]
    """

    figure_: Figure | SubFigure
    ax_: Axes
    cliques_: list[tuple[int, ...]]

    def __init__(
        self, average_ranks: ArrayLike, names: Iterable[str], cd: float, n_datasets: int, title: str | None = None
    ) -> None:
        self.average_ranks = np.asarray(average_ranks, dtype=float)
        self.names = list(names)
        self.cd = float(cd)
        self.n_datasets = int(n_datasets)
        self.title = title

    @classmethod
    def from_results(
        cls,
        table: ArrayLike,
        names: Sequence[str],
        *,
        greater_is_better: bool = True,
        alpha: float = 0.05,
        title: str | None = None,
    ) -> Self:
        """From a (n_datasets, n_algorithms) table of mean scores.

        Parameters
        ----------
        table : array-like of shape (n_datasets, n_algorithms)
            Mean score of each algorithm on each dataset.
        names : sequence of str
            The algorithms.
        greater_is_better : bool, default=True
            Whether higher scores rank better.
        alpha : float, default=0.05
            Significance level of the Nemenyi critical difference.
        title : str, default=None
            Title of the figure.

        Returns
        -------
        CriticalDifferenceDisplay
            Not drawn yet: call :meth:`plot`.
        """
        from ..stats import average_ranks, nemenyi_cd

        T = np.asarray(table, dtype=float)
        if T.ndim != 2 or T.shape[0] == 0 or T.shape[1] < 2:
            return cls(np.full(len(names), np.nan), names, float("nan"), 0, title)
        _, avg = average_ranks(T, greater_is_better)
        return cls(avg, names, nemenyi_cd(T.shape[1], T.shape[0], alpha), T.shape[0], title)

    def _cliques(self) -> list[tuple[int, ...]]:
        order = np.argsort(self.average_ranks, kind="stable")
        r = self.average_ranks[order]
        cliques: list[tuple[int, ...]] = []
        for i in range(len(r)):
            j = i
            while j + 1 < len(r) and r[j + 1] - r[i] < self.cd:
                j += 1
            if j > i:
                group = tuple(int(x) for x in order[i : j + 1])
                if not any(set(group) <= set(c) for c in cliques):
                    cliques.append(group)
        return cliques

    def plot(self, ax: Axes | None = None) -> Self:
        """Draw the diagram: rank axis on top (1 = best, on the left), the better
        half labelled on the left and the other half on the right, thick bars
        joining the groups whose ranks differ by less than the CD.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Where to draw; None creates a figure.

        Returns
        -------
        self
            With ``figure_`` and ``ax_`` set. and ``cliques_``.
        """
        k = len(self.names)
        title = self.title or "critical difference"
        fig, ax = _axes(ax, (7.5, 1.6 + 0.3 * max(k, 2)))
        if k < 2 or not np.all(np.isfinite(self.average_ranks)) or self.n_datasets < 2:
            _no_data(ax, title, "needs >= 2 algorithms and >= 2 datasets")
            self.figure_, self.ax_, self.cliques_ = fig, ax, []
            return self
        self.cliques_ = self._cliques()
        lo, hi = 1, k
        span = hi - lo
        margin = 0.45 * span + 0.5
        step = 0.55
        top_cliques = 0.35
        first = top_cliques + 0.25 * len(self.cliques_) + 0.35
        half = math.ceil(k / 2)
        n_side = max(half, k - half)
        ax.set_xlim(lo - margin, hi + margin)
        ax.set_ylim(-(first + step * n_side + 0.2), 1.5)
        ax.hlines(0, lo, hi, color="k", lw=1)
        for t in range(lo, hi + 1):
            ax.vlines(t, 0, 0.12, color="k", lw=1)
            ax.text(t, 0.18, str(t), ha="center", va="bottom", fontsize=8)
        if math.isfinite(self.cd):
            length = min(self.cd, span)
            ax.hlines(1.05, lo, lo + length, color="k", lw=2)
            ax.vlines([lo, lo + length], 0.97, 1.13, color="k", lw=1)
            extra = "" if self.cd <= span else " (wider than the rank range)"
            ax.text(lo + length / 2, 1.16, f"CD = {self.cd:.3f}{extra}", ha="center", va="bottom", fontsize=8)
        order = np.argsort(self.average_ranks, kind="stable")
        for pos, idx in enumerate(order):
            r = self.average_ranks[idx]
            if pos < half:
                y, x_end, ha = -(first + step * pos), lo - 0.25, "right"
            else:
                y, x_end, ha = -(first + step * (k - 1 - pos)), hi + 0.25, "left"
            ax.vlines(r, y, 0, color="0.3", lw=0.8)
            ax.hlines(y, min(r, x_end), max(r, x_end), color="0.3", lw=0.8)
            ax.text(x_end + (-0.05 if ha == "right" else 0.05), y, f"{self.names[idx]} ({r:.2f})",
                    ha=ha, va="center", fontsize=8)  # fmt: skip
        for c, group in enumerate(self.cliques_):
            rs = self.average_ranks[list(group)]
            y = -(top_cliques + 0.25 * c)
            ax.hlines(y, rs.min() - 0.03, rs.max() + 0.03, color="k", lw=3.5)
        ax.set_axis_off()
        ax.set_title(f"{title} (N = {self.n_datasets} datasets)", fontsize=10)
        self.figure_, self.ax_ = fig, ax
        return self


# --------------------------------------------------------- parameter curves
class ParameterCurveDisplay:
    """A metric (or an average rank) versus one parameter, one line per algorithm.

    Parameters
    ----------
    curves : dict of str -> (x values, y values)
        Line name -> (x values, y values), one line per algorithm or configuration.
    param : str
        The parameter on the x axis (``n_neighbors`` for k).
    ylabel : str
        Label of the y axis (the metric, or its average rank).
    title : str
        Title of the figure.
    errors : dict of str -> y errors, optional
        Error bars per curve (``from_results`` of one dataset: the sd over the folds).

    See Also
    --------
    mlknn.report.build_report : Draws these curves for every grid over k or the radius.
    mlknn.stats.average_ranks : The ranks of the all-datasets curves.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from mlknn.plots import ParameterCurveDisplay
    >>> rows = [{"metric": "macro_auc", "algorithm": "mlknn", "params": '{"n_neighbors": %d}' % k,
    ...          "dataset": "d", "value": v} for k, v in ((5, 0.80), (10, 0.82))]
    >>> d = ParameterCurveDisplay.from_results(rows, dataset="d").plot()
    >>> d.curves["mlknn"][1].tolist()
    [0.8, 0.82]
    """

    figure_: Figure | SubFigure
    ax_: Axes

    def __init__(self, curves: Mapping[str, Curve], param: str, ylabel: str, title: str = "",
                 errors: Mapping[str, NDArray[np.float64]] | None = None) -> None:  # fmt: skip
        self.curves = dict(curves)
        self.param = param
        self.ylabel = ylabel
        self.title = title
        self.errors = dict(errors) if errors is not None else {}

    @classmethod
    def from_results(cls, rows: Iterable[Mapping[str, Any]], *, param: str = "n_neighbors",
                     metric: str = "macro_auc", dataset: str | None = None,
                     algorithms: Collection[str] | None = None, greater_is_better: bool | None = None,
                     title: str | None = None) -> Self:  # fmt: skip
        """From result rows (dicts of :meth:`mlknn.experiments.ResultsDB.rows`).

        Parameters
        ----------
        rows : list of dict
            Result rows as :meth:`mlknn.experiments.ResultsDB.rows` returns them (keys
            ``metric``, ``algorithm``, ``params``, ``dataset``, ``value``).
        param : str
            The parameter on the x axis (``n_neighbors`` for k).
        metric : str
            The measure on the y axis (a key of :data:`mlknn.metrics.METRIC_NAMES`).
        dataset : str, optional
            One dataset: the mean metric over folds. None: the average rank over
            the datasets of every (algorithm, value) combination among all
            combinations (Teng et al. 2025, Figures 2-7).
        algorithms : sequence of str, optional
            Only these algorithms; default every algorithm in the rows.
        greater_is_better : bool, optional
            Default from :data:`mlknn.metrics.GREATER_IS_BETTER`.
        title : str, optional
            Title of the figure.
        """
        from ..metrics import GREATER_IS_BETTER

        gib = GREATER_IS_BETTER.get(metric, True) if greater_is_better is None else greater_is_better
        rows = list(rows)  # read twice: the means, then the sds of one dataset's curves
        means = _curve_means(rows, param, metric, algorithms)
        lines = sorted({k[1] for k in means}, key=_natural_key)
        errors: dict[str, NDArray[np.float64]] = {}
        if dataset is not None:
            curves = _dataset_curves(means, lines, dataset)
            sds = _curve_sds(rows, param, metric, algorithms)
            errors = {line: np.array([sds.get((dataset, line, x), np.nan) for x in xs]) for line, (xs, _) in curves.items()}
            ylabel, ttl = metric, title or f"{metric} versus {param}: {dataset} (bars: ± sd over folds)"
        else:
            curves, n = _rank_curves(means, lines, gib)
            ylabel = f"average rank ({metric})"
            ttl = title or f"average rank on {metric} versus {param} ({n} datasets)"
        curves = {k: v for k, v in curves.items() if len(v[0]) >= 2}
        return cls(curves, param, ylabel, ttl, errors={k: v for k, v in errors.items() if k in curves})

    def plot(self, ax: Axes | None = None) -> Self:
        """Draw one line per algorithm (an infinite value one step right of the largest).

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Where to draw; None creates a figure.

        Returns
        -------
        self
            With ``figure_`` and ``ax_`` set.
        """
        fig, ax = _axes(ax, (5, 3.5))
        if not self.curves:
            _no_data(ax, self.title, f"no algorithm was run with >= 2 values of {self.param}")
            self.figure_, self.ax_ = fig, ax
            return self
        # An infinite value (e.g. radius=inf, plain ML-kNN) is drawn one step
        # right of the largest finite value, with an "inf" tick.
        finite = np.concatenate([x[np.isfinite(x)] for x, _ in self.curves.values()])
        has_inf = any(np.isinf(x).any() for x, _ in self.curves.values())
        inf_at = None
        if has_inf and finite.size:
            u = np.unique(finite)
            step = np.min(np.diff(u)) if u.size > 1 else max(abs(u[0]), 1.0)
            inf_at = u.max() + step
        for name, (x, y) in self.curves.items():
            x = np.where(np.isinf(x), inf_at if inf_at is not None else np.nan, x)
            err = self.errors.get(name)
            if err is not None and np.isfinite(err).any():
                ax.errorbar(x, y, yerr=np.nan_to_num(err), fmt="o-", ms=3, lw=1.2, capsize=2, elinewidth=0.8,
                            label=name)  # fmt: skip
            else:
                ax.plot(x, y, "o-", ms=3, lw=1.2, label=name)
        if inf_at is not None:
            ticks = list(np.unique(finite)) + [inf_at]
            ax.set_xticks(ticks, [f"{t:g}" for t in ticks[:-1]] + ["inf"])
        ax.set_xlabel("k" if self.param == "n_neighbors" else self.param)
        ax.set_ylabel(self.ylabel)
        if self.ylabel.startswith("average rank"):
            ax.invert_yaxis()
        ax.legend(fontsize=7)
        ax.set_title(self.title, fontsize=10)
        ax.grid(alpha=0.3)
        self.figure_, self.ax_ = fig, ax
        return self


# ---------------------------------------------- steps of ParameterCurveDisplay.from_results
def _curve_means(
    rows: Iterable[Mapping[str, Any]], param: str, metric: str, algorithms: Collection[str] | None
) -> _Means:
    """{(dataset, line, x): mean over folds}; a line is an algorithm with its other parameters."""
    by = _curve_values(rows, param, metric, algorithms)
    return {key: float(np.nanmean(v)) if np.any(np.isfinite(v)) else np.nan for key, v in by.items()}


def _curve_sds(
    rows: Iterable[Mapping[str, Any]], param: str, metric: str, algorithms: Collection[str] | None
) -> _Means:
    """{(dataset, line, x): sd over folds} (NaN with fewer than two finite values)."""
    by = _curve_values(rows, param, metric, algorithms)
    return {key: float(np.nanstd(v, ddof=1)) if np.isfinite(v).sum() > 1 else np.nan for key, v in by.items()}


def _curve_values(
    rows: Iterable[Mapping[str, Any]], param: str, metric: str, algorithms: Collection[str] | None
) -> dict[tuple[str, str, float], list[float]]:
    """{(dataset, line, x): the values over folds}."""
    import json

    by: dict[tuple[str, str, float], list[float]] = {}
    for r in rows:
        if r["metric"] != metric or (algorithms is not None and r["algorithm"] not in algorithms):
            continue
        params = json.loads(r["params"])
        x = params.get(param)
        if x is None or not isinstance(x, (int, float)) or isinstance(x, bool):
            continue
        rest = tuple(sorted(("k" if k == "n_neighbors" else k, str(v)) for k, v in params.items() if k != param))
        line = r["algorithm"] + ("" if not rest else "(" + ", ".join(f"{k}={v}" for k, v in rest) + ")")
        by.setdefault((r["dataset"], line, float(x)), []).append(r["value"])
    return by


def _dataset_curves(means: _Means, lines: list[str], dataset: str) -> dict[str, Curve]:
    """One dataset: the mean metric of every line at each x."""
    curves: dict[str, Curve] = {}
    for line in lines:
        xs = sorted(x for (d, ln, x) in means if d == dataset and ln == line)
        if xs:
            curves[line] = (np.array(xs), np.array([means[(dataset, line, x)] for x in xs]))
    return curves


def _rank_curves(means: _Means, lines: list[str], gib: bool) -> tuple[dict[str, Curve], int]:
    """Every dataset: the average rank of every (line, x) among all combinations
    (Teng et al. 2025, Figures 2-7); returns (curves, number of datasets ranked)."""
    combos = sorted({(ln, x) for (_, ln, x) in means})
    datasets = sorted({d for (d, _, _) in means})
    table = np.array([[means.get((d, ln, x), np.nan) for (ln, x) in combos] for d in datasets])
    full = ~np.any(np.isnan(table), axis=1) if table.size else np.array([], bool)
    curves: dict[str, Curve] = {}
    if table.size and full.any():
        from ..stats import average_ranks

        _, avg = average_ranks(table[full], gib)
        for line in lines:
            idx = [i for i, (ln, _) in enumerate(combos) if ln == line]
            curves[line] = (np.array([combos[i][1] for i in idx]), avg[idx])
    return curves, int(full.sum()) if table.size else 0
