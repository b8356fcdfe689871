"""Input checks shared by every estimator and public function."""

import os
from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp

from ._typing import Estimator, LabelMatrix, MatrixLike, NDArray, SparseMatrix


def check_label_matrix(
    Y: MatrixLike,
    *,
    name: str = "Y",
    n_samples: int | None = None,
    accept_sparse: bool = False,
) -> LabelMatrix:
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
    accept_sparse : bool, default=False
        True: a scipy sparse ``Y`` (matrix or array, any format) stays sparse and
        comes back as a canonical :class:`scipy.sparse.csr_array` (uint8, sorted
        indices, no explicit zeros, no duplicates; duplicates are summed first, as
        scipy defines them). False: a sparse ``Y`` is densified (the caller has
        checked that it fits, see :func:`check_dense_label_budget`).

    Returns
    -------
    Y : ndarray or csr_array of shape (n_samples, n_labels), dtype uint8
    """
    if sp.issparse(Y):
        if accept_sparse:
            return _check_sparse_labels(Y, name=name, n_samples=n_samples)
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
    if Y.dtype.kind == "f" and Y.size and np.isnan(Y).any():
        from ._missing_labels import MISSING_LABEL_ESTIMATORS

        raise ValueError(
            f"{name} has NaN entries (unknown labels), which this estimator cannot learn from. "
            f"Estimators that do (missing_labels='ignore'): {', '.join(sorted(MISSING_LABEL_ESTIMATORS))}; "
            "or fill the unknown entries first (docs/incomplete_labels.md)."
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
    _check_label_shape(Y.shape, name, n_samples)
    return Y.astype(np.uint8, copy=False)


def _check_label_shape(shape: tuple[int, ...], name: str, n_samples: int | None) -> None:
    if shape[1] == 0:
        raise ValueError(f"{name} must have at least one label column; got shape {shape}.")
    if n_samples is not None and shape[0] != n_samples:
        raise ValueError(
            f"{name} has {shape[0]} rows but X has {n_samples} samples; they must match."
        )


def _check_sparse_labels(Y: SparseMatrix, *, name: str, n_samples: int | None) -> SparseMatrix:
    """The sparse branch of :func:`check_label_matrix`: O(nnz(Y)), never densifies."""
    if Y.ndim != 2:
        raise ValueError(
            f"{name} must be a 2-D binary indicator matrix of shape (n_samples, n_labels); "
            f"got a sparse array with shape {Y.shape}."
        )
    if Y.dtype.kind not in "biuf":
        raise ValueError(
            f"Unknown label type: {name} must contain only the values 0 and 1; got dtype {Y.dtype}."
        )
    Y = sp.csr_array(Y, copy=True)
    Y.sum_duplicates()  # also sorts the indices
    Y.eliminate_zeros()
    bad = Y.data != 1
    if bad.any():
        value = Y.data[bad][0].item()
        kind = "continuous" if Y.dtype.kind == "f" and value != round(value) else "non-binary"
        raise ValueError(
            f"Unknown label type: {kind}. {name} must be a binary indicator matrix containing "
            f"only the values 0 and 1; found the value {value!r} (duplicate entries are summed). "
            "Only binary classification is supported (per label)."
        )
    _check_label_shape(Y.shape, name, n_samples)
    out = sp.csr_array((Y.data.astype(np.uint8), Y.indices, Y.indptr), shape=Y.shape)
    out.has_canonical_format = True
    return out


class LabelSpaceTooLargeError(MemoryError, ValueError):
    """A dense (n, q) label array would not fit in the memory budget.

    A ``MemoryError`` (nothing was allocated: the check runs before) and a
    ``ValueError`` (the input is valid, but too large for this path).
    """


#: Environment variable overriding the byte budget of dense (n, q) label arrays.
DENSE_LABEL_BUDGET_ENV = "MLKNN_DENSE_LABEL_BUDGET"


def dense_label_budget() -> int:
    """Bytes a dense (n, q) label or score array may take.

    ``$MLKNN_DENSE_LABEL_BUDGET`` (bytes) when set, else a quarter of the
    physical memory (a dense estimator holds a few such arrays at once: labels,
    counts, scores), or 4 GiB where the memory size is unknown.
    """
    value = os.environ.get(DENSE_LABEL_BUDGET_ENV)
    if value:
        try:
            return int(float(value))
        except ValueError as exc:
            raise ValueError(
                f"${DENSE_LABEL_BUDGET_ENV} must be a number of bytes; got {value!r}."
            ) from exc
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 4
    except (ValueError, OSError, AttributeError):
        return 4 * 2**30


#: Names of the estimator classes that keep sparse labels sparse, filled by
#: :class:`mlknn.base.KNNMultiLabelBase` as they are defined (utils may not
#: import the estimators: see the layer rule in tests/test_layers.py).
SPARSE_LABEL_ESTIMATORS: set[str] = set()


def _sparse_label_estimators() -> list[str]:
    """Names of the (imported) estimators that keep Y sparse, for messages."""
    return sorted(SPARSE_LABEL_ESTIMATORS)


def check_dense_label_budget(n_rows: int, n_labels: int, *, estimator: Estimator | str | None = None,
                             itemsize: int = 8, what: str = "a dense label matrix",
                             alternative: str | None = None, limit: int | None = None) -> int:
    """Refuse, before allocating, a dense (n_rows, n_labels) array over the budget.

    Parameters
    ----------
    n_rows, n_labels : int
    estimator : estimator or str, optional
        Named in the message.
    itemsize : int, default=8
        Bytes per entry of the largest dense array the path makes (float64 scores
        or int64 counts).
    what : str
        What would be allocated, for the message.
    alternative : str, optional
        What to use instead; default: the estimators that keep Y sparse.
    limit : int, optional
        Bytes; default :func:`dense_label_budget`.

    Raises
    ------
    LabelSpaceTooLargeError
        Naming the bytes needed, the limit and the alternative.
    """
    limit = dense_label_budget() if limit is None else int(limit)
    need = int(n_rows) * int(n_labels) * int(itemsize)
    if need <= limit:
        return need
    who = estimator if isinstance(estimator, str) else type(estimator).__name__ if estimator is not None else "This path"
    if alternative is None:
        names = _sparse_label_estimators()
        alternative = ("an estimator that keeps sparse labels sparse (knn_capabilities()['sparse_labels'], "
                       f"docs/sparse_labels.md){': ' + ', '.join(names) if names else ''}")
    raise LabelSpaceTooLargeError(
        f"{who} would need {what} of shape ({n_rows}, {n_labels}): {need:,} bytes "
        f"({need / 2**30:.2f} GiB), over the limit of {limit:,} bytes ({limit / 2**30:.2f} GiB; "
        f"set ${DENSE_LABEL_BUDGET_ENV} to change it). Use {alternative}."
    )


class NonNumericInputError(TypeError, ValueError):
    """X holds values that are not numbers (a TypeError for numpy, a ValueError for users)."""


def validate_features(
    estimator: Estimator,
    X: MatrixLike,
    reset: bool = True,
    accept_sparse: str | bool | Sequence[str] = "csr",
    dtype: Sequence[Any] = (np.float64, np.float32),
) -> MatrixLike:
    """scikit-learn's ``validate_data`` for X (dense or sparse, float64/float32).

    A non-numeric X (strings, arbitrary objects) makes numpy raise a TypeError
    deep inside the conversion; turn it into an error naming X and the rule.
    """
    if _plain_valid_array(estimator, X, reset, dtype):
        # What validate_data would conclude, without its cost (a fifth of a small
        # fit + predict's bookkeeping): the array as it is.
        if reset:
            estimator.n_features_in_ = X.shape[1]
        return X
    from sklearn.utils.validation import validate_data

    try:
        return validate_data(estimator, X, accept_sparse=accept_sparse, dtype=list(dtype), reset=reset)
    except TypeError as exc:
        raise NonNumericInputError(
            f"X must be a numeric array or sparse matrix (dtype convertible to float); "
            f"could not convert it: {exc}"
        ) from exc


def _plain_valid_array(estimator: Estimator, X: object, reset: bool, dtype: Sequence[Any]) -> bool:
    """Whether ``validate_data`` would return X unchanged and only set (or check) ``n_features_in_``.

    A 2-D ``np.ndarray`` (not a subclass) of an accepted dtype, with at least one
    row and one column and a finite sum (so every value is finite: NaN and
    infinities propagate; a sum that overflows sends X down the full check), for
    an estimator without feature names; when not resetting, X has the fitted
    number of features. Everything else (errors included) takes ``validate_data``.
    """
    if type(X) is not np.ndarray or X.ndim != 2 or X.dtype not in dtype or 0 in X.shape:
        return False
    if getattr(estimator, "feature_names_in_", None) is not None:
        return False
    if not reset and getattr(estimator, "n_features_in_", X.shape[1]) != X.shape[1]:
        return False
    with np.errstate(over="ignore", invalid="ignore"):
        return bool(np.isfinite(X.sum()))


def input_dtype(Y: object) -> np.dtype[Any]:
    """The dtype ``predict`` returns for a target ``Y``: Y's own numeric dtype, else int64."""
    dtype = getattr(Y, "dtype", None)
    if dtype is None or dtype.kind not in "biuf":
        return np.dtype(np.int64)
    own: np.dtype[Any] = np.dtype(dtype)
    return own


def label_classes(n_labels: int) -> list[NDArray[np.int_]]:
    """``classes_`` of a multi-label classifier: one ``[0, 1]`` array per label.

    The form scikit-learn's multi-label classifiers (e.g. KNeighborsClassifier)
    report.
    """
    return [np.array([0, 1]) for _ in range(n_labels)]


def validate_fit_data(
    estimator: Estimator,
    X: MatrixLike,
    Y: MatrixLike | None,
    *,
    sparse_labels: bool = False,
    **kwargs: Any,
) -> tuple[MatrixLike, LabelMatrix, np.dtype[Any]]:
    """The checks every ``fit(X, Y)`` of mlknn starts with.

    Parameters
    ----------
    estimator : estimator
        Its name is used in messages; ``validate_data`` sets its
        ``n_features_in_``.
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
    Y : array-like or sparse matrix of shape (n_samples, n_labels)
    sparse_labels : bool, default=False
        Keep a sparse Y sparse (``accept_sparse`` of :func:`check_label_matrix`).
    **kwargs
        Passed to :func:`validate_features` (``accept_sparse``, ``dtype``).

    Returns
    -------
    X : validated features
    Y : ndarray (or csr_array with ``sparse_labels``) of shape (n_samples, n_labels), uint8
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
    Y = check_label_matrix(Y, n_samples=X.shape[0], accept_sparse=sparse_labels)
    return X, Y, y_dtype


class FeatureScaleWarning(UserWarning):
    """The features' ranges differ by orders of magnitude (distances are dominated by a few).

    Silence it with ``warnings.simplefilter("ignore", mlknn.FeatureScaleWarning)``.
    """


#: Ratio of the largest to the smallest non-zero feature range above which
#: :func:`warn_if_unscaled` warns (three orders of magnitude).
FEATURE_SCALE_RATIO = 1e3


def warn_if_unscaled(
    X: MatrixLike, estimator: Estimator | None = None, *, ratio: float = FEATURE_SCALE_RATIO
) -> float:
    """Warn once (a :class:`FeatureScaleWarning`) when feature ranges differ by > ``ratio``.

    Costs one pass over X (column min and max, also for CSR X, where the
    implicit zeros count). Constant columns are ignored.

    Returns
    -------
    float
        The ratio found (1.0 when X has fewer than two non-constant columns).
    """
    if X.shape[0] == 0 or X.shape[1] < 2:
        return 1.0
    if sp.issparse(X):
        span = _dense_row(X.max(axis=0)) - _dense_row(X.min(axis=0))
    else:
        span = np.ptp(np.asarray(X), axis=0).astype(np.float64)
    span = span[np.isfinite(span) & (span > 0)]
    if span.size < 2:
        return 1.0
    found = float(span.max() / span.min())
    if found > ratio:
        import warnings

        who = type(estimator).__name__ if estimator is not None else "fit"
        warnings.warn(
            f"{who}: the feature ranges differ by a factor of {found:.3g} (largest / smallest "
            "non-zero max - min): distances are dominated by the widest features. Scale X first, "
            "e.g. sklearn.preprocessing.MinMaxScaler in a pipeline (the CLI's --scaling minmax). "
            "Silence with warnings.simplefilter('ignore', mlknn.FeatureScaleWarning).",
            FeatureScaleWarning,
            stacklevel=4,  # warn_if_unscaled < fit < scikit-learn's _fit_context < the caller
        )
    return found


def _dense_row(v: MatrixLike) -> NDArray[np.float64]:
    return np.asarray(v.toarray() if sp.issparse(v) else v, dtype=np.float64).ravel()
