"""The stacking threshold model of Zhang and Zhou's (2014) review (Elisseeff and Weston 2002).

For real-valued scores ``f(x) = (f(x, y_1), ..., f(x, y_q))`` the threshold is a
linear function of the scores, ``t(x) = <w*, f(x)> + b*``, fitted by least squares
to per-instance target thresholds

    s(x_i) = argmin_a |{y_j in Y_i : f(x_i, y_j) <= a}| + |{y_k not in Y_i : f(x_i, y_k) >= a}|

and the bipartition is ``{y_j : f(x, y_j) > t(x)}``. Used by Rank-SVM (Zhang and Zhou 2014, section on Rank-SVM),
BP-MLL (Zhang and Zhou 2014, section on BP-MLL) and :class:`~mlknn.baselines.ThresholdCalibration`.

Choices the review leaves open (documented in docs/baselines.md):

* the argmin is searched over cut points strictly between consecutive distinct
  sorted scores of the instance, plus one cut below the smallest and one above
  the largest score, placed ``delta`` away, where ``delta`` is half the median
  positive gap between consecutive sorted scores over the training set (0.5 if
  there is no positive gap);
* when several cuts make the fewest errors, the middle one (lower median of the
  minimising cut indices) is taken;
* the least-squares problem is solved by ``numpy.linalg.lstsq`` (minimum-norm
  solution when the score columns are collinear).
"""

from typing import Any

import numpy as np

from ..utils._cuts import counts_below, middle_of_best, sorted_cuts
from ..utils._typing import NDArray


def threshold_targets(F: NDArray[Any], Y: NDArray[Any]) -> NDArray[np.float64]:
    """Target thresholds s(x_i) of the review's section on threshold calibration, one per row of ``F``.

    Parameters
    ----------
    F : ndarray of shape (n, q)
        Training scores.
    Y : ndarray of shape (n, q)
        0/1 relevance.

    Returns
    -------
    s : ndarray of shape (n,)
    """
    F = np.asarray(F, dtype=np.float64)
    Y = np.asarray(Y)
    order, cuts, valid = sorted_cuts(F)
    Ys = np.take_along_axis(Y, order, axis=1)
    n = F.shape[0]
    # Cut r puts the r smallest scores below the threshold.
    rel_below, irr_below = counts_below(Ys)
    errors = rel_below + (irr_below[:, -1:] - irr_below)
    errors = np.where(valid, errors, np.iinfo(np.int64).max)
    pick = middle_of_best(errors == errors.min(axis=1, keepdims=True))
    targets: NDArray[np.float64] = cuts[np.arange(n), pick]
    return targets


def fit_threshold_model(F: NDArray[Any], Y: NDArray[Any]) -> tuple[NDArray[np.float64], float]:
    """Least-squares ``(w*, b*)`` of the review's section on threshold calibration.

    Returns
    -------
    coef : ndarray of shape (q,)
    intercept : float
    """
    F = np.asarray(F, dtype=np.float64)
    s = threshold_targets(F, Y)
    A = np.hstack([F, np.ones((F.shape[0], 1))])
    sol, *_ = np.linalg.lstsq(A, s, rcond=None)
    return sol[:-1], float(sol[-1])


def apply_threshold(F: NDArray[Any], coef: NDArray[np.float64], intercept: float) -> NDArray[np.float64]:
    """t(x) = <w*, f(x)> + b* for each row of ``F``; shape (n,)."""
    return np.asarray(F, dtype=np.float64) @ coef + intercept


def threshold_margin(F: NDArray[Any], coef: NDArray[np.float64], intercept: float) -> NDArray[np.float64]:
    """``f(x, y_j) - t(x)`` for each row of ``F``: positive exactly where ``f > t``; shape (n, q).

    The decision score of the estimators that end in the review's threshold-calibration
    model (Rank-SVM, BP-MLL, ThresholdCalibration).
    """
    F = np.asarray(F, dtype=np.float64)
    return F - apply_threshold(F, coef, intercept)[:, None]
