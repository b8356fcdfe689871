"""The decision rules' searches: every candidate cut scored at once from sorted scores.

Each search sorts the scores once (:func:`mlknn.utils._cuts.sorted_cuts`, shared with the
stacking threshold model of Zhang and Zhou (2014), Knowl 6) and reads the confusion counts
of every cut off cumulative sums, so a measure is evaluated at every candidate threshold
in a few array operations; no loop calls a metric once per candidate.

Conventions are those of :mod:`mlknn.metrics`: an F1 whose denominator is empty (nothing
relevant, nothing predicted) is 1; ``"f1"`` over a whole matrix is the example-based F1
(mean of per-instance F1), as in :func:`mlknn.metrics.evaluate`. Among cuts that score
the same, the middle one is taken.
"""

from typing import Any

import numpy as np

from ..utils._cuts import counts_below, middle_of_best, sorted_cuts
from ..utils._typing import NDArray

#: Measures a search can maximise per label (each label's own value) ...
LABEL_SCORINGS = frozenset({"f1", "macro_f1", "hamming_loss"})
#: ... and over the whole matrix (global threshold, rank cut).
MATRIX_SCORINGS = frozenset({"f1", "macro_f1", "micro_f1", "hamming_loss"})
#: Losses: minimised, every other measure maximised.
LOSSES = frozenset({"hamming_loss"})

#: Summation of many per-cut increments leaves rounding of this order; cuts within it tie.
_TIE_TOLERANCE = 1e-12


def _f1(tp: NDArray[Any], relevant: NDArray[Any], predicted: NDArray[Any]) -> NDArray[np.float64]:
    """``2 TP / (|relevant| + |predicted|)``, 1 where both are empty."""
    total = relevant + predicted
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, 2.0 * tp / np.where(total > 0, total, 1), 1.0)


def label_f1(decisions: NDArray[Any], Y: NDArray[Any]) -> NDArray[np.float64]:
    """Each column's F1 of 0/1 ``decisions`` against ``Y`` (1 when both are empty)."""
    decisions, Yb = np.asarray(decisions, dtype=bool), np.asarray(Y, dtype=bool)
    return _f1((decisions & Yb).sum(axis=0), Yb.sum(axis=0), decisions.sum(axis=0))


def _pick(gain: NDArray[np.float64], valid: NDArray[np.bool_]) -> NDArray[np.intp]:
    """Per row, the middle of the valid cuts whose gain is within rounding of the best."""
    gain = np.where(valid, gain, -np.inf)
    best = gain.max(axis=1, keepdims=True)
    return middle_of_best(gain >= best - _TIE_TOLERANCE * np.maximum(1.0, np.abs(best)))


def _value(gain: NDArray[np.float64], scoring: str) -> NDArray[np.float64]:
    """The measure itself from the maximised gain (a loss is searched as its negative)."""
    return -gain if scoring in LOSSES else gain


def per_label_thresholds(
    P: NDArray[Any], Y: NDArray[Any], scoring: str
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """One threshold per label maximising that label's measure.

    Parameters
    ----------
    P : ndarray of shape (n, q)
        Out-of-sample scores.
    Y : ndarray of shape (n, q), 0/1
    scoring : {"f1", "macro_f1", "hamming_loss"}
        "f1" and "macro_f1": the label's F1 (their mean over labels is macro-F1);
        "hamming_loss": the label's error rate.

    Returns
    -------
    thresholds : ndarray of shape (q,)
        Label l is predicted where ``P[:, l] > thresholds[l]``.
    values : ndarray of shape (q,)
        Each label's measure at its threshold.
    """
    order, cuts, valid = sorted_cuts(np.asarray(P).T)
    rel_below, irr_below = counts_below(np.take_along_axis(np.asarray(Y).T, order, axis=1))
    relevant, irrelevant = rel_below[:, -1:], irr_below[:, -1:]
    n = P.shape[0]
    if scoring in LOSSES:
        gain = -(rel_below + irrelevant - irr_below) / n
    else:
        gain = _f1(relevant - rel_below, relevant, n - rel_below - irr_below)
    pick = _pick(gain, valid)
    rows = np.arange(cuts.shape[0])
    return cuts[rows, pick], _value(gain[rows, pick], scoring)


def _grouped_f1_gain(
    Ys: NDArray[Any], groups: NDArray[np.intp], n_groups: int
) -> NDArray[np.float64]:
    """Mean over groups of the group's F1 at every cut of one sorted row.

    ``Ys`` is the relevance of all entries sorted by score ascending and ``groups`` their
    group (instance or label). Moving cut r to r + 1 takes one entry out of its group's
    prediction, changing that group's F1 only: the per-cut increments, summed, give every
    cut's total.
    """
    Ys = Ys.astype(np.int64)
    size = np.bincount(groups, minlength=n_groups)
    relevant = np.bincount(groups, weights=Ys, minlength=n_groups).astype(np.int64)
    # Entries of each group in score order; how many of the group (and how many
    # relevant) are at or below each entry.
    by_group = np.argsort(groups, kind="stable")
    starts = np.concatenate([[0], np.cumsum(size)[:-1]])
    seen = np.empty_like(groups)
    seen[by_group] = np.arange(groups.size) - np.repeat(starts, size) + 1
    rel_cum = np.cumsum(Ys[by_group])
    rel_seen = np.empty_like(Ys)
    rel_seen[by_group] = rel_cum - np.repeat(rel_cum[starts] - Ys[by_group][starts], size)
    g_rel, g_size = relevant[groups], size[groups]
    after = _f1(g_rel - rel_seen, g_rel, g_size - seen)
    before = _f1(g_rel - rel_seen + Ys, g_rel, g_size - seen + 1)
    start = _f1(relevant, relevant, size).sum()
    return np.concatenate([[start], start + np.cumsum(after - before)]) / n_groups


def global_threshold(P: NDArray[Any], Y: NDArray[Any], scoring: str) -> tuple[float, float]:
    """One threshold for every label maximising a measure of the whole matrix.

    Parameters
    ----------
    P : ndarray of shape (n, q)
    Y : ndarray of shape (n, q), 0/1
    scoring : {"f1", "macro_f1", "micro_f1", "hamming_loss"}

    Returns
    -------
    threshold : float
    value : float
        The measure at that threshold.
    """
    P, Y = np.asarray(P), np.asarray(Y)
    n, q = P.shape
    order, cuts, valid = sorted_cuts(P.reshape(1, -1))
    Ys = Y.reshape(-1)[order[0]]
    if scoring in {"f1", "macro_f1"}:
        entries = order[0]
        groups = entries // q if scoring == "f1" else entries % q
        gain = _grouped_f1_gain(Ys, groups.astype(np.intp), n if scoring == "f1" else q)[None, :]
    else:
        rel_below, irr_below = counts_below(Ys[None, :])
        relevant, irrelevant = rel_below[:, -1:], irr_below[:, -1:]
        if scoring in LOSSES:
            gain = -(rel_below + irrelevant - irr_below) / (n * q)
        else:
            gain = _f1(relevant - rel_below, relevant, n * q - rel_below - irr_below)
    pick = int(_pick(gain, valid)[0])
    return float(cuts[0, pick]), float(_value(gain[0, pick : pick + 1], scoring)[0])


def top_order(P: NDArray[Any]) -> NDArray[np.intp]:
    """Labels of each row by decreasing score, equal scores by the lower label index."""
    return np.argsort(-np.asarray(P, dtype=np.float64), axis=1, kind="stable")


def rank_cut(P: NDArray[Any], Y: NDArray[Any], scoring: str) -> tuple[int, float]:
    """The number r of top labels per instance maximising a measure of the whole matrix.

    Parameters
    ----------
    P : ndarray of shape (n, q)
    Y : ndarray of shape (n, q), 0/1
    scoring : {"f1", "macro_f1", "micro_f1", "hamming_loss"}

    Returns
    -------
    r : int
        In ``0 .. q``.
    value : float
        The measure with the top r labels predicted.
    """
    P, Y = np.asarray(P), np.asarray(Y).astype(np.int64)
    n, q = P.shape
    order = top_order(P)
    zero = np.zeros((n, 1), dtype=np.int64)
    tp_rows = np.hstack([zero, np.cumsum(np.take_along_axis(Y, order, axis=1), axis=1)])  # (n, q + 1)
    r = np.arange(q + 1)
    relevant_rows = tp_rows[:, -1:]
    if scoring == "f1":
        gain = _f1(tp_rows, relevant_rows, r[None, :]).mean(axis=0)
    elif scoring == "macro_f1":
        # How often label l sits at rank j, and how often relevantly: cumulated over j.
        flat = order * q + np.arange(q)[None, :]
        at_rank = np.bincount(flat.ravel(), minlength=q * q).reshape(q, q)
        rel_at_rank = np.bincount(flat.ravel(), weights=np.take_along_axis(Y, order, axis=1).ravel(),
                                  minlength=q * q).reshape(q, q)
        zero_q = np.zeros((q, 1))
        predicted = np.hstack([zero_q, np.cumsum(at_rank, axis=1)])
        tp = np.hstack([zero_q, np.cumsum(rel_at_rank, axis=1)])
        gain = _f1(tp, Y.sum(axis=0)[:, None], predicted).mean(axis=0)
    else:
        tp = tp_rows.sum(axis=0)
        relevant = int(relevant_rows.sum())
        if scoring in LOSSES:
            gain = -((relevant - tp) + (n * r - tp)) / (n * q)
        else:
            gain = _f1(tp, np.full(q + 1, relevant), n * r)
    pick = int(_pick(gain[None, :], np.ones((1, q + 1), dtype=bool))[0])
    return pick, float(_value(gain[pick : pick + 1], scoring)[0])


def proportional_thresholds(P: NDArray[Any], Y: NDArray[Any]) -> NDArray[np.float64]:
    """Per label, the threshold predicting it for as many instances as it is relevant to.

    The proportional cut (Yang 2001): label l is predicted for the fraction of instances
    that matches its frequency in ``Y``; where equal scores make that count unreachable,
    the nearest reachable count is taken.

    Parameters
    ----------
    P : ndarray of shape (n, q)
    Y : ndarray of shape (n, q), 0/1

    Returns
    -------
    thresholds : ndarray of shape (q,)
    """
    P, Y = np.asarray(P), np.asarray(Y)
    n = P.shape[0]
    _, cuts, valid = sorted_cuts(P.T)
    target = n - np.count_nonzero(Y, axis=0)  # cut r leaves n - r predicted
    distance = np.abs(np.arange(n + 1)[None, :] - target[:, None]).astype(np.float64)
    pick = _pick(-distance, valid)
    return cuts[np.arange(cuts.shape[0]), pick]
