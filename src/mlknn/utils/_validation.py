"""Input checks shared by every estimator and public function."""

import numpy as np
import scipy.sparse as sp


def check_label_matrix(Y, *, name="Y", n_samples=None):
    """Check that ``Y`` is a 2-D 0/1 indicator matrix and return it as uint8.

    A single label (shape ``(n, 1)``) is accepted: scikit-learn's
    ``type_of_target`` calls that "binary", but for mlknn it is a multi-label
    problem with q = 1.

    Parameters
    ----------
    Y : array-like or sparse matrix of shape (n_samples, n_labels)
    name : str
        The parameter name used in error messages.
    n_samples : int, optional
        Expected number of rows.

    Returns
    -------
    Y : ndarray of shape (n_samples, n_labels), dtype uint8
    """
    if sp.issparse(Y):
        Y = Y.toarray()
    try:
        Y = np.asarray(Y)
    except Exception as exc:  # ragged lists and the like
        raise ValueError(
            f"{name} must be a 2-D binary indicator array of shape (n_samples, n_labels); "
            f"it could not be converted to an array ({exc})."
        ) from exc
    if Y.dtype.kind not in "biuf":
        raise ValueError(
            f"Unknown label type: {name} must contain only the values 0 and 1; got "
            f"dtype {Y.dtype}."
        )
    if Y.size:
        bad = (Y != 0) & (Y != 1)
        if bad.any():
            value = Y[bad].flat[0].item()
            if Y.dtype.kind == "f" and np.any(Y != np.round(Y)):
                raise ValueError(
                    f"Unknown label type: continuous. {name} must be a binary indicator "
                    f"matrix containing only 0 and 1; found the value {value!r}."
                )
            # The second sentence is the wording scikit-learn's common checks look
            # for in a classifier that rejects multiclass targets.
            raise ValueError(
                f"Unknown label type: {name} must be a binary indicator matrix "
                f"containing only the values 0 and 1; found the value {value!r}. "
                "Only binary classification is supported (per label)."
            )
    if Y.ndim != 2:
        raise ValueError(
            f"{name} must be a 2-D binary indicator array of shape (n_samples, n_labels); "
            f"got an array with shape {Y.shape}. For a single label pass Y.reshape(-1, 1)."
        )
    if Y.shape[1] == 0:
        raise ValueError(f"{name} must have at least one label column; got shape {Y.shape}.")
    if n_samples is not None and Y.shape[0] != n_samples:
        raise ValueError(
            f"{name} has {Y.shape[0]} rows but X has {n_samples} samples; they must match."
        )
    return Y.astype(np.uint8, copy=False)


class NonNumericInputError(TypeError, ValueError):
    """X holds values that are not numbers (a TypeError for numpy, a ValueError for users)."""


def validate_features(estimator, X, reset=True, accept_sparse="csr", dtype=(np.float64, np.float32)):
    """scikit-learn's ``validate_data`` for X (dense or sparse, float64/float32).

    A non-numeric X (strings, arbitrary objects) makes numpy raise a TypeError
    deep inside the conversion; turn it into an error naming X and the rule.
    """
    from sklearn.utils.validation import validate_data

    try:
        return validate_data(estimator, X, accept_sparse=accept_sparse, dtype=list(dtype), reset=reset)
    except TypeError as exc:
        raise NonNumericInputError(
            f"X must be a numeric array or sparse matrix (dtype convertible to float); "
            f"could not convert it: {exc}"
        ) from exc


def input_dtype(Y):
    """The dtype ``predict`` returns for a target ``Y``: Y's own numeric dtype, else int64."""
    dtype = getattr(Y, "dtype", None)
    if dtype is None or dtype.kind not in "biuf":
        return np.dtype(np.int64)
    return np.dtype(dtype)


def label_classes(n_labels):
    """``classes_`` of a multi-label classifier: one ``[0, 1]`` array per label.

    The form scikit-learn's multi-label classifiers (e.g. KNeighborsClassifier)
    report.
    """
    return [np.array([0, 1]) for _ in range(n_labels)]


def validate_fit_data(estimator, X, Y, **kwargs):
    """The checks every ``fit(X, Y)`` of mlknn starts with.

    Parameters
    ----------
    estimator : estimator
        Its name is used in messages; ``validate_data`` sets its
        ``n_features_in_``.
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
    Y : array-like or sparse matrix of shape (n_samples, n_labels)
    **kwargs
        Passed to :func:`validate_features` (``accept_sparse``, ``dtype``).

    Returns
    -------
    X : validated features
    Y : ndarray of shape (n_samples, n_labels), uint8
    y_dtype : numpy dtype
        What ``predict`` returns (:func:`input_dtype` of the Y given).
    """
    if Y is None:
        raise ValueError(
            f"{type(estimator).__name__} requires y to be passed, but the target y is None "
            "(Y, the (n_samples, n_labels) indicator matrix, is required)."
        )
    X = validate_features(estimator, X, **kwargs)
    y_dtype = input_dtype(Y)
    Y = check_label_matrix(Y, n_samples=X.shape[0])
    return X, Y, y_dtype
