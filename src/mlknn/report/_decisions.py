"""The report's decision sections: tuned thresholds, calibration, conformal coverage.

Drawn from the measures :mod:`mlknn.experiments._decisions` stores when a grid asks
for ``threshold``, ``conformal`` or ``calibration``: the bipartition measures under
each tuned rule beside the default rule's, the expected calibration error per
configuration and dataset with a reliability figure (the pooled bins of every fold
summed), and the empirical coverage and size of the conformal label sets against
their target 1 - alpha.
"""

import re
from collections.abc import Sequence

import numpy as np

from ._model import Figure, Group, Row, Section, Table, dataset_label, fmt, png, safe_name

#: Bipartition measures shown under each tuned rule.
_TUNED_METRICS = ("macro_f1", "micro_f1", "f1", "hamming_loss")
_THRESHOLD = re.compile(r"^(?P<metric>[a-z0-9_]+)\[threshold=(?P<strategy>[a-z-]+)\]$")
_CONFORMAL = re.compile(r"^conformal_coverage\[(?P<setting>[a-z]+:[0-9.e-]+)\]$")
_BIN = re.compile(r"^reliability_count\[(?P<b>[0-9]+)\]$")

#: What the stored coverage is, per guarantee (mlknn.experiments._decisions).
_COVERAGE_WORDS = {
    "set": "the fraction of test instances whose whole label set is in the predicted set",
    "fnr": "one minus the mean instance false-negative rate",
    "label": "each label's share of its relevant test instances that the set covers, averaged over the labels",
}


def _cell(values: np.ndarray | None) -> str:
    if values is None or not np.any(np.isfinite(values)):
        return "-"
    sd = np.nanstd(values, ddof=1) if np.sum(np.isfinite(values)) > 1 else 0.0
    return f"{fmt(np.nanmean(values))} ± {fmt(sd)}"


def decision_sections(g: Group, default: Group, idx: int) -> list[Section]:
    """The sections for one group of decision measures (empty when none are stored).

    Parameters
    ----------
    g : Group
        The rows of the decision measures of one (protocol, search).
    default : Group
        The same experiment's default measures (the rule-free column of the tuned tables).
    idx : int
        The experiment's index (figure names).

    Returns
    -------
    list of Section
    """
    out = [s for s in (_tuned_section(g, default), _calibration_section(g, idx), _conformal_section(g)) if s]
    return out


def _pairs(g: Group) -> list[tuple[int, int, str]]:
    """(dataset row, config column, "dataset / configuration") of every pair with results."""
    return [(i, j, f"{g.row_labels[i]} / {g.labels[j]}") for i in range(len(g.datasets)) for j in range(len(g.configs))
            if any(g.folds(i, j, m) is not None for m in g.metrics)]


def _tuned_section(g: Group, default: Group) -> Section | None:
    found = [m.groupdict() for m in map(_THRESHOLD.match, g.metrics) if m]
    strategies = sorted({f["strategy"] for f in found})
    if not strategies:
        return None
    s = Section("Tuned decision rules (mlknn.decision.TunedThresholds)", 3)
    s.paragraphs.append(
        "The bipartition measures under the default rule (0.5, or the estimator's MAP decision) and under each tuned "
        "rule, chosen on the out-of-sample posteriors of each training part (exact leave-one-out where the estimator "
        "has it) to maximise the example-based F1 (per-label: each label's F1), then applied to the test part; mean ± "
        "sd over the folds. The ranking and AUC measures do not depend on the rule."
    )
    for metric in _TUNED_METRICS:
        if not any(f["metric"] == metric for f in found):
            continue
        rows = []
        for i, j, label in _pairs(g):
            d_i = default.datasets.index(g.datasets[i]) if g.datasets[i] in default.datasets else None
            d_j = default.configs.index(g.configs[j]) if g.configs[j] in default.configs else None
            base = default.folds(d_i, d_j, metric) if d_i is not None and d_j is not None else None
            rows.append([label, _cell(base), *(_cell(g.folds(i, j, f"{metric}[threshold={st}]")) for st in strategies)])
        arrow = "↓" if metric == "hamming_loss" else "↑"
        s.items.append(Table(f"{metric} {arrow}", ["dataset / configuration", "default", *strategies], rows))
    return s


def _calibration_section(g: Group, idx: int) -> Section | None:
    if "ece" not in g.metrics:
        return None
    s = Section("Calibration of the posteriors", 3)
    s.paragraphs.append(
        "Expected calibration error (10 equal-width bins; Naeini et al. 2015, Guo et al. 2017) of the test "
        "posteriors: macro, the mean over labels of each label's ECE, and micro, every (instance, label) entry pooled; "
        "mean ± sd over the folds, 0 is perfectly calibrated. The figure shows the pooled reliability curve of each "
        "configuration over the folds' test parts (bins summed), with its micro ECE; a calibrated posterior lies on "
        "the diagonal. `mlknn.decision.CalibratedProba` recalibrates."
    )
    for metric, words in (("ece", "macro"), ("ece_micro", "micro")):
        rows = [[g.row_labels[i], *(_cell(g.folds(i, j, metric)) for j in range(len(g.configs)))]
                for i in range(len(g.datasets))]
        s.items.append(Table(f"ECE ({words}) ↓", ["dataset", *g.labels], rows))
    s.items.extend(_reliability_figures(g, idx))
    return s


def _reliability_figures(g: Group, idx: int) -> list[Figure]:
    import matplotlib.pyplot as plt

    from ..plots import ReliabilityDisplay

    bins = sorted(int(m.group("b")) for m in map(_BIN.match, g.metrics) if m)
    figs: list[Figure] = []
    for i in range(len(g.datasets)):
        curves, ece = {}, {}
        for j, label in enumerate(g.labels):
            found = [g.folds(i, j, f"reliability_{what}[{b}]") for what in ("count", "proba", "relevant") for b in bins]
            parts = [p for p in found if p is not None]
            if not bins or len(parts) < len(found):
                continue
            # (bins, folds) each: the pooled bins of every fold.
            count, proba, relevant = (np.vstack(parts[k * len(bins):(k + 1) * len(bins)]) for k in range(3))
            total = count.sum(axis=1)  # per bin, over the folds
            seen = total > 0
            mean_p = (count * proba).sum(axis=1)[seen] / total[seen]
            frac = (count * relevant).sum(axis=1)[seen] / total[seen]
            curves[label] = (mean_p, frac)
            ece[label] = float((total[seen] * np.abs(frac - mean_p)).sum() / total.sum())
        if not curves:
            continue
        fig, ax = plt.subplots(figsize=(4.6, 4.2), constrained_layout=True)
        ReliabilityDisplay(curves, ece, title=f"reliability: {dataset_label(g.datasets[i][0])}").plot(ax=ax)
        name = f"g{idx}_reliability_{safe_name(g.datasets[i][0])}"
        figs.append(Figure(name, f"Reliability of the test posteriors, pooled over labels and folds "
                                 f"({g.row_labels[i]}).", png(fig)))
    return figs


def _conformal_section(g: Group) -> Section | None:
    settings = sorted({m.group("setting") for m in map(_CONFORMAL.match, g.metrics) if m},
                      key=lambda t: (t.split(":")[0], float(t.split(":")[1])))
    if not settings:
        return None
    s = Section("Conformal label sets (mlknn.decision.ConformalLabelSets)", 3)
    s.paragraphs.append(
        "Split conformal sets (the estimator fitted on 70 % of each training part, the thresholds calibrated on the "
        "other 30 %) on the test parts: the empirical coverage against its target 1 - alpha, and the mean set size; "
        "mean ± sd and minimum over the folds. Coverage is, per guarantee: "
        + "; ".join(f"{k}: {v}" for k, v in _COVERAGE_WORDS.items() if any(t.startswith(k + ":") for t in settings))
        + ". The guarantee is on average over calibration draws, so single folds may fall below the target."
    )
    rows = []
    for i, j, label in _pairs(g):
        for t in settings:
            cov = g.folds(i, j, f"conformal_coverage[{t}]")
            if cov is None:
                continue
            size = g.folds(i, j, f"conformal_set_size[{t}]")
            target = 1.0 - float(t.split(":")[1])
            rows.append([label, t, fmt(target), _cell(cov), fmt(float(np.nanmin(cov))), _cell(size)])
    s.items.append(Table("conformal coverage", ["dataset / configuration", "guarantee:alpha", "target",
                                                "coverage", "min", "mean set size"], rows))
    return s


def decision_rows(rows: Sequence[Row]) -> list[Row]:
    """The rows of the measures this module reports."""
    from ..experiments import is_decision_measure

    return [r for r in rows if is_decision_measure(r["metric"])]
