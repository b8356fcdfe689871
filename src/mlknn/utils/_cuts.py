"""Every cut of sorted scores at once: the search shared by threshold rules.

A row of scores sorted ascending has one cut below its smallest score, one between
each pair of consecutive distinct scores and one above its largest; cut ``r`` puts
the ``r`` smallest scores below the threshold. Cumulative sums of the sorted 0/1
relevance give the relevant and irrelevant counts below every cut, so a measure
built from those counts is evaluated at every cut with no loop over candidate
thresholds. Used by the instance thresholds of the stacking threshold model
(Elisseeff and Weston 2002; Zhang and Zhou 2014, Knowl 6) and by the label,
global and rank cuts of :class:`mlknn.decision.TunedThresholds`.
"""

from typing import Any

import numpy as np

from ._typing import NDArray


def sorted_cuts(F: NDArray[Any]) -> tuple[NDArray[np.intp], NDArray[np.float64], NDArray[np.bool_]]:
    """Sort each row of ``F``; its candidate thresholds and which cuts are valid.

    The inner cuts are the midpoints of consecutive sorted scores; the outer two lie
    ``delta`` below the smallest and above the largest score, ``delta`` being half the
    median positive gap between consecutive sorted scores over all rows (0.5 if there
    is none). An inner cut between two equal scores is not valid: no threshold
    separates them.

    Parameters
    ----------
    F : ndarray of shape (n_rows, m)
        Scores, one search per row.

    Returns
    -------
    order : ndarray of shape (n_rows, m)
        Stable ascending argsort of each row.
    cuts : ndarray of shape (n_rows, m + 1)
        Threshold of cut r (r scores below it).
    valid : ndarray of shape (n_rows, m + 1), bool
    """
    F = np.asarray(F, dtype=np.float64)
    order = np.argsort(F, axis=1, kind="stable")
    Fs = np.take_along_axis(F, order, axis=1)
    gaps = np.diff(Fs, axis=1)
    positive = gaps[gaps > 0]
    delta = 0.5 * float(np.median(positive)) if positive.size else 0.5
    n, m = F.shape
    cuts = np.empty((n, m + 1))
    cuts[:, 0] = Fs[:, 0] - delta
    cuts[:, m] = Fs[:, -1] + delta
    cuts[:, 1:m] = 0.5 * (Fs[:, :-1] + Fs[:, 1:])
    valid = np.ones((n, m + 1), dtype=bool)
    valid[:, 1:m] = gaps > 0
    return order, cuts, valid


def counts_below(Ys: NDArray[Any]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Relevant and irrelevant counts below every cut of rows sorted ascending.

    Parameters
    ----------
    Ys : ndarray of shape (n_rows, m)
        0/1 relevance in the sorted order of each row.

    Returns
    -------
    relevant_below, irrelevant_below : ndarray of shape (n_rows, m + 1), int64
        Column r counts the r smallest scores of the row.
    """
    Ys = np.asarray(Ys).astype(np.int64)
    zero = np.zeros((Ys.shape[0], 1), dtype=np.int64)
    return np.hstack([zero, np.cumsum(Ys, axis=1)]), np.hstack([zero, np.cumsum(1 - Ys, axis=1)])


def middle_of_best(is_best: NDArray[np.bool_]) -> NDArray[np.intp]:
    """Per row, the lower median of the column indices where ``is_best`` holds.

    A measure is often flat over several cuts; the middle one of the best keeps the
    threshold away from the scores on either side.

    Parameters
    ----------
    is_best : ndarray of shape (n_rows, m), bool
        At least one True per row.

    Returns
    -------
    ndarray of shape (n_rows,)
    """
    rank = np.cumsum(is_best, axis=1)
    target = (is_best.sum(axis=1, keepdims=True) - 1) // 2
    pick: NDArray[np.intp] = np.argmax(is_best & (rank == target + 1), axis=1)
    return pick
