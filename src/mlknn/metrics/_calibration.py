"""Calibration of multi-label posteriors: expected calibration error, Brier score, log loss.

Each label's posteriors are scored as a binary problem; ``average`` says how the labels are
combined: ``None`` gives one value per label, ``"macro"`` their mean, ``"micro"`` one value
over every (instance, label) entry pooled. With a full (n, q) matrix every label has n
entries, so the micro and macro Brier score and log loss coincide; the expected calibration
error differs (micro pools the entries into one set of bins).
"""

from typing import Any, cast

import numpy as np
from numpy.typing import NDArray
from scipy.special import xlogy

from ..utils._typing import MatrixLike
from ._checks import _check_true_and_scores

__all__ = ["brier_score", "calibration_bins", "expected_calibration_error", "log_loss"]

_AVERAGES = (None, "macro", "micro")


def _check_probabilities(Y_true: MatrixLike, Y_prob: MatrixLike, average: Any, caller: str
                         ) -> tuple[NDArray[np.bool_], NDArray[np.float64]]:
    if average not in _AVERAGES:
        raise ValueError(f"The 'average' parameter of {caller} must be one of None, 'macro', 'micro'; "
                         f"got {average!r}.")
    yt, P = _check_true_and_scores(Y_true, Y_prob)
    if P.size and (P.min() < 0 or P.max() > 1):
        i, j = np.argwhere((P < 0) | (P > 1))[0]
        raise ValueError(f"Y_prob must hold probabilities in [0, 1]; got {float(P[i, j])!r} at row {i}, column {j}.")
    return yt, P


def _combine(per_entry: NDArray[np.float64], average: str | None) -> float | NDArray[np.float64]:
    per_label: NDArray[np.float64] = per_entry.mean(axis=0)
    if average is None:
        return per_label
    return float(per_label.mean() if average == "macro" else per_entry.mean())


def brier_score(Y_true: MatrixLike, Y_prob: MatrixLike, *, average: str | None = "macro"
                ) -> float | NDArray[np.float64]:
    """Mean squared difference between the posterior and the 0/1 relevance.

    Per label it is scikit-learn's ``brier_score_loss(Y_true[:, l], Y_prob[:, l])``.

    Parameters
    ----------
    Y_true : array-like or sparse matrix of shape (n_samples, n_labels)
        0/1 relevance.
    Y_prob : array-like of shape (n_samples, n_labels)
        Posteriors P(label relevant), in [0, 1].
    average : {"macro", "micro"} or None, default="macro"
        None: one value per label.

    Returns
    -------
    float or ndarray of shape (n_labels,)
        Lower is better; 0 is perfect.

    See Also
    --------
    log_loss : The logarithmic score of the same posteriors.
    expected_calibration_error : Calibration alone, by bins.

    Examples
    --------
    >>> from mlknn.metrics import brier_score
    >>> brier_score([[1, 0], [0, 1]], [[0.8, 0.4], [0.2, 0.9]], average=None)
    array([0.04 , 0.085])
    """
    yt, P = _check_probabilities(Y_true, Y_prob, average, "brier_score")
    return _combine((P - yt) ** 2, average)


def log_loss(Y_true: MatrixLike, Y_prob: MatrixLike, *, average: str | None = "macro"
             ) -> float | NDArray[np.float64]:
    """Negative mean log-likelihood of the 0/1 relevance under the posteriors.

    Per label it is scikit-learn's ``log_loss(Y_true[:, l], Y_prob[:, l], labels=[0, 1])``,
    probabilities clipped to ``[eps, 1 - eps]`` (float64 machine epsilon) as there, so a
    confident wrong posterior costs about 36, never infinity.

    Parameters
    ----------
    Y_true : array-like or sparse matrix of shape (n_samples, n_labels)
        0/1 relevance.
    Y_prob : array-like of shape (n_samples, n_labels)
        Posteriors in [0, 1].
    average : {"macro", "micro"} or None, default="macro"
        None: one value per label.

    Returns
    -------
    float or ndarray of shape (n_labels,)
        In nats; lower is better.

    See Also
    --------
    brier_score : The quadratic score of the same posteriors.

    Examples
    --------
    >>> from mlknn.metrics import log_loss
    >>> round(log_loss([[1, 0], [0, 1]], [[0.8, 0.4], [0.2, 0.9]]), 4)
    0.2656
    """
    yt, P = _check_probabilities(Y_true, Y_prob, average, "log_loss")
    eps = np.finfo(np.float64).eps
    likelihood = xlogy(yt, np.clip(P, eps, 1 - eps)) + xlogy(~yt, np.clip(1 - P, eps, 1 - eps))
    return _combine(-likelihood, average)


def calibration_bins(
    Y_true: MatrixLike, Y_prob: MatrixLike, *, n_bins: int = 10, pooled: bool = False
) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.float64]]:
    """Per label (or pooled), the count, mean posterior and relevant fraction of each bin.

    The bins are scikit-learn's ``calibration_curve(strategy="uniform")``: ``n_bins``
    equal widths on [0, 1], a posterior on an inner edge going to the lower bin.

    Parameters
    ----------
    Y_true : array-like or sparse matrix of shape (n_samples, n_labels)
        0/1 relevance.
    Y_prob : array-like of shape (n_samples, n_labels)
        Posteriors in [0, 1].
    n_bins : int, default=10
        Number of bins (>= 1).
    pooled : bool, default=False
        True: one row over every (instance, label) entry.

    Returns
    -------
    count : ndarray of shape (n_labels or 1, n_bins), int64
    mean_proba : ndarray of shape (n_labels or 1, n_bins)
        The mean posterior in each bin (0 for an empty bin).
    fraction_relevant : ndarray of shape (n_labels or 1, n_bins)
        The fraction of relevant entries in each bin (0 for an empty bin).

    See Also
    --------
    expected_calibration_error : The count-weighted gap between the last two.
    mlknn.plots.ReliabilityDisplay : The reliability diagram of these bins.

    Examples
    --------
    >>> from mlknn.metrics import calibration_bins
    >>> count, mean_proba, fraction = calibration_bins([[1], [0], [1]], [[0.9], [0.1], [0.7]], n_bins=2)
    >>> count.tolist(), fraction.tolist()
    ([[1, 2]], [[0.0, 1.0]])
    """
    if isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer)) or n_bins < 1:
        raise ValueError(f"The 'n_bins' parameter must be an int >= 1; got {n_bins!r}.")
    yt, P = _check_probabilities(Y_true, Y_prob, "macro", "calibration_bins")
    if pooled:
        yt, P = yt.reshape(-1, 1), P.reshape(-1, 1)
    q = P.shape[1]
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    cell = np.searchsorted(edges[1:-1], P) + n_bins * np.arange(q)[None, :]
    count = np.bincount(cell.ravel(), minlength=q * n_bins).reshape(q, n_bins)
    sum_p = np.bincount(cell.ravel(), weights=P.ravel(), minlength=q * n_bins).reshape(q, n_bins)
    sum_y = np.bincount(cell.ravel(), weights=yt.ravel(), minlength=q * n_bins).reshape(q, n_bins)
    safe = np.maximum(count, 1)
    return count.astype(np.int64), sum_p / safe, sum_y / safe


def expected_calibration_error(
    Y_true: MatrixLike, Y_prob: MatrixLike, *, n_bins: int = 10, average: str | None = "macro"
) -> float | NDArray[np.float64]:
    """Expected calibration error: the count-weighted mean gap between posterior and frequency.

    ``ECE = sum_b (|B_b| / n) |mean relevance in B_b - mean posterior in B_b|`` over the
    equal-width bins of :func:`calibration_bins` (Naeini et al. 2015; Guo et al. 2017).

    Parameters
    ----------
    Y_true : array-like or sparse matrix of shape (n_samples, n_labels)
        0/1 relevance.
    Y_prob : array-like of shape (n_samples, n_labels)
        Posteriors in [0, 1].
    n_bins : int, default=10
        Number of equal-width bins on [0, 1].
    average : {"macro", "micro"} or None, default="macro"
        None: one value per label; "macro": their mean; "micro": the ECE of every
        (instance, label) entry pooled into one set of bins.

    Returns
    -------
    float or ndarray of shape (n_labels,)
        In [0, 1]; 0 is perfectly calibrated (at this binning).

    See Also
    --------
    calibration_bins : The bins themselves.
    brier_score : A proper score that also rewards sharpness.

    Examples
    --------
    >>> from mlknn.metrics import expected_calibration_error
    >>> expected_calibration_error([[1], [0], [1], [0]], [[0.9], [0.1], [0.6], [0.4]], n_bins=2)
    0.25
    """
    if average not in _AVERAGES:
        raise ValueError(f"The 'average' parameter of expected_calibration_error must be one of None, 'macro', "
                         f"'micro'; got {average!r}.")
    count, mean_p, frac = calibration_bins(Y_true, Y_prob, n_bins=n_bins, pooled=average == "micro")
    per_row = (count * np.abs(frac - mean_p)).sum(axis=1) / count.sum(axis=1)
    if average is None:
        return cast(NDArray[np.float64], per_row)
    return float(per_row.mean())
