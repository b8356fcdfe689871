"""The calibration step of conformal label sets: a threshold from calibration posteriors.

Every set has the form ``{l : p_l >= t_l}``. Working with the posteriors themselves (rather
than with scores ``1 - p``) keeps the comparison exact in floating point: each threshold is one
of the calibration posteriors.

* ``set_threshold``: the score of instance i is ``max_{l in Y_i} (1 - p_il)``; the true set is
  inside ``{l : p_l >= t}`` exactly when ``min_{l in Y_i} p_il >= t``. The split conformal
  quantile (Vovk et al. 2005; Angelopoulos and Bates 2023) is the ``floor((n + 1) alpha)``-th
  smallest of those minima.
* ``fnr_threshold``: conformal risk control (Angelopoulos et al. 2022) with the instance
  false-negative rate, a loss in [0, 1] that decreases as t decreases: the largest t with
  ``(n R_n(t) + 1) / (n + 1) <= alpha``.
* ``label_thresholds``: the first rule within each label's relevant calibration instances
  (class-conditional, "Mondrian", Vovk et al. 2005).
"""

import math
from typing import Any

import numpy as np

from ..utils._typing import NDArray


def smallest_alpha(n_calibration: int) -> float:
    """The smallest alpha a calibration set of this size can certify: ``1 / (n + 1)``."""
    return 1.0 / (n_calibration + 1)


def _rank(n: int, alpha: float) -> int:
    """``floor((n + 1) alpha)``: how many calibration values may fall below the threshold."""
    return math.floor((n + 1) * alpha)


def set_threshold(P: NDArray[Any], Y: NDArray[Any], alpha: float) -> float:
    """Threshold t with ``P(Y subset of {l : p_l >= t}) >= 1 - alpha``.

    Parameters
    ----------
    P : ndarray of shape (n, q)
        Calibration posteriors.
    Y : ndarray of shape (n, q), 0/1
    alpha : float
        At least ``1 / (n + 1)``.

    Returns
    -------
    float
        An instance with no relevant label counts as covered by any t (its minimum is
        +inf), so t may be +inf when most calibration instances have no label.
    """
    lowest_relevant = np.where(np.asarray(Y, dtype=bool), P, np.inf).min(axis=1)
    r = _rank(lowest_relevant.size, alpha)
    return float(np.partition(lowest_relevant, r - 1)[r - 1])


def fnr_threshold(P: NDArray[Any], Y: NDArray[Any], alpha: float) -> float:
    """Threshold t whose expected instance false-negative rate is at most alpha.

    ``FNR_i(t) = |{l in Y_i : p_il < t}| / |Y_i|`` (0 for an empty ``Y_i``); t is the
    largest calibration posterior (or +inf) with ``(n R_n(t) + 1) / (n + 1) <= alpha``,
    ``R_n`` the mean FNR over the n calibration instances.

    Parameters
    ----------
    P : ndarray of shape (n, q)
    Y : ndarray of shape (n, q), 0/1
    alpha : float
        At least ``1 / (n + 1)``.

    Returns
    -------
    float
    """
    Yb = np.asarray(Y, dtype=bool)
    n = Yb.shape[0]
    size = Yb.sum(axis=1)
    # Each relevant entry weighs 1 / (n |Y_i|) in R_n: the risk of t is the weight of
    # the relevant entries whose posterior is below t.
    values = np.asarray(P)[Yb]
    weights = np.repeat(1.0 / (n * np.maximum(size, 1)), size)
    order = np.argsort(values, kind="stable")
    values, cumulative = values[order], np.concatenate([[0.0], np.cumsum(weights[order])])
    budget = (alpha * (n + 1) - 1) / n
    # The risk at t = values[m] counts the entries strictly below it; at +inf, all of them.
    risk = np.append(cumulative[np.searchsorted(values, values, side="left")], cumulative[-1])
    candidates = np.append(values, np.inf)
    feasible = np.flatnonzero(risk <= budget + 1e-12)
    return float(candidates[feasible[-1]]) if feasible.size else float(values.min(initial=np.inf))


def label_thresholds(P: NDArray[Any], Y: NDArray[Any], alpha: float
                     ) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """Per label l, t_l with ``P(p_l >= t_l | l in Y) >= 1 - alpha``.

    Parameters
    ----------
    P : ndarray of shape (n, q)
    Y : ndarray of shape (n, q), 0/1
    alpha : float

    Returns
    -------
    thresholds : ndarray of shape (q,)
        ``-inf`` for a label with fewer than ``1 / alpha - 1`` relevant calibration
        instances (none included): too few to certify anything, so the label is always
        predicted, which covers it with probability 1.
    certified : ndarray of shape (q,), bool
        False for those labels.
    """
    Yb = np.asarray(Y, dtype=bool)
    n_relevant = Yb.sum(axis=0)
    ranks = np.floor((n_relevant + 1) * alpha).astype(np.int64)
    certified = ranks >= 1
    ordered = np.sort(np.where(Yb, P, np.inf), axis=0)
    picked = ordered[np.maximum(ranks - 1, 0), np.arange(Yb.shape[1])]
    return np.where(certified, picked, -np.inf), certified
