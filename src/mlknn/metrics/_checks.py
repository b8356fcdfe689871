"""Input checks shared by every metric module, and the undefined-metric warning rule."""

import numbers
import warnings

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray
from sklearn.exceptions import UndefinedMetricWarning

from ..utils._typing import MatrixLike
from ..utils._validation import check_label_matrix


def _check_indicator(Y: MatrixLike, name: str) -> NDArray[np.bool_]:
    """Return ``Y`` as a dense boolean (n_samples, n_labels) array.

    Parameters
    ----------
    Y : array-like or scipy sparse matrix
        Candidate 0/1 indicator matrix.
    name : str
        Parameter name used in error messages.

    Returns
    -------
    Y : ndarray of shape (n_samples, n_labels), dtype bool

    Raises
    ------
    ValueError
        If ``Y`` is not 2-D, holds a value other than 0 and 1, or has no row
        or no column.
    """
    dense: NDArray[np.uint8] = check_label_matrix(Y, name=name)  # dense without accept_sparse
    if dense.shape[0] == 0:
        raise ValueError(
            f"{name} must be a 2-D binary indicator array of shape (n_samples, n_labels) "
            f"with at least one sample; got shape {dense.shape}."
        )
    return dense.astype(bool, copy=False)


def _check_targets(Y_true: MatrixLike, Y_pred: MatrixLike) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """Validate a pair of indicator matrices of the same shape.

    Parameters
    ----------
    Y_true, Y_pred : array-like or scipy sparse matrix of shape (n_samples, n_labels)

    Returns
    -------
    Y_true, Y_pred : ndarray of shape (n_samples, n_labels), dtype bool
    """
    yt = _check_indicator(Y_true, "Y_true")
    yp = _check_indicator(Y_pred, "Y_pred")
    if yp.shape != yt.shape:
        raise ValueError(
            f"Y_pred must have the same shape as Y_true {yt.shape}; got shape {yp.shape}."
        )
    return yt, yp


def _check_scores(Y_score: MatrixLike, shape: tuple[int, ...], name: str = "Y_score") -> NDArray[np.float64]:
    """Return ``Y_score`` as a finite float64 array of the given shape.

    Parameters
    ----------
    Y_score : array-like or scipy sparse matrix
        Real-valued label scores (higher means more relevant).
    shape : tuple of int
        Required shape, that of ``Y_true``.
    name : str, default="Y_score"
        Parameter name used in error messages.

    Returns
    -------
    Y_score : ndarray of shape ``shape``, dtype float64

    Raises
    ------
    ValueError
        If ``Y_score`` is missing, not numeric, not of shape ``shape`` or not
        finite.
    """
    if Y_score is None:
        raise ValueError(
            f"{name} is required: a 2-D array of real-valued scores of shape "
            f"(n_samples, n_labels) = {shape}; got None."
        )
    if sp.issparse(Y_score):
        Y_score = Y_score.toarray()
    try:
        S = np.asarray(Y_score)
    except Exception as exc:  # ragged lists and the like
        raise ValueError(
            f"{name} must be a 2-D array of real-valued scores of shape (n_samples, n_labels); "
            f"it could not be converted to an array ({exc})."
        ) from exc
    if S.dtype.kind not in "biuf":
        raise ValueError(
            f"{name} must be a 2-D array of real-valued scores of shape (n_samples, n_labels); "
            f"got dtype {S.dtype}."
        )
    if S.ndim != 2:
        raise ValueError(
            f"{name} must be a 2-D array of real-valued scores of shape (n_samples, n_labels); "
            f"got shape {S.shape}."
        )
    if S.shape != tuple(shape):
        raise ValueError(
            f"{name} must have the same shape as Y_true {tuple(shape)}; got shape {S.shape}."
        )
    S64 = S.astype(np.float64, copy=False)
    finite = np.isfinite(S64)
    if not finite.all():
        i, j = np.argwhere(~finite)[0]
        raise ValueError(
            f"{name} must contain only finite values; got {float(S64[i, j])!r} at row {i}, column {j}."
        )
    return S64


def _check_true_and_scores(
    Y_true: MatrixLike, Y_score: MatrixLike
) -> tuple[NDArray[np.bool_], NDArray[np.float64]]:
    """``Y_true`` as a boolean indicator matrix and ``Y_score`` as finite floats of its shape."""
    yt = _check_indicator(Y_true, "Y_true")
    return yt, _check_scores(Y_score, yt.shape)


def _check_beta(beta: float) -> float:
    """Check the F-measure weight ``beta`` (a positive finite real)."""
    if (
        isinstance(beta, bool)
        or not isinstance(beta, numbers.Real)
        or not np.isfinite(beta)
        or beta <= 0
    ):
        raise ValueError(f"beta must be a positive finite real number; got {beta!r}.")
    return float(beta)


def _undefined(metric: str, reason: str) -> float:
    """Warn that ``metric`` is undefined on this input and return NaN."""
    warnings.warn(
        f"{metric} is undefined: {reason}. Returning NaN.",
        UndefinedMetricWarning,
        stacklevel=3,
    )
    return float("nan")


# --------------------------------------------------------------------------
# Counting and the 0/0 convention
# --------------------------------------------------------------------------
