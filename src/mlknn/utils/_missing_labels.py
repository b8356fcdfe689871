"""Incomplete label matrices: the unknown entries of Y, as NaN or as a separate mask.

A dense Y marks an unknown entry with NaN; a sparse Y cannot hold NaN in its
implicit zeros, so its unknown entries come as a separate 0/1 matrix
``Y_missing`` of the same shape (CSR when sparse: the unknown entries are
stored, the observed ones implicit). Both forms may be combined for a dense Y.
This module turns either into a complete 0/1 label matrix (unknown entries set
to 0) plus the mask of unknown entries, before the ordinary label checks run.
"""

from typing import Any

import numpy as np
import scipy.sparse as sp

from ._typing import Estimator, LabelMatrix, MatrixLike

#: Names of the estimator classes that learn from the observed entries only: mlknn's
#: own, and any other class with a ``missing_labels`` parameter, added by
#: :class:`mlknn.base.KNNMultiLabelBase` as it is defined (utils may not import them;
#: the names are listed up front so that a message is complete before they are imported).
MISSING_LABEL_ESTIMATORS: set[str] = {
    "MLkNN", "DMLkNN", "BMLkNN", "NeighborhoodClassifier", "BRkNN", "BRkNNa", "BRkNNb",
}  # fmt: skip

#: The values of the ``missing_labels`` parameter.
MISSING_LABEL_POLICIES = ("ignore", "negative")


def split_unknown_labels(
    estimator: Estimator, Y: MatrixLike, Y_missing: MatrixLike | None
) -> tuple[MatrixLike, MatrixLike | None]:
    """``(Y with every unknown entry set to 0, the unknown entries or None)``.

    Parameters
    ----------
    estimator : estimator
        Its ``missing_labels`` parameter decides: ``"ignore"`` returns the mask,
        ``"negative"`` reads the unknown entries as 0 and returns None; an
        estimator without the parameter refuses unknown entries.
    Y : array-like or sparse matrix of shape (n_samples, n_labels)
        NaN marks an unknown entry of a dense Y.
    Y_missing : array-like or sparse matrix of shape (n_samples, n_labels), optional
        1 marks an unknown entry (whatever Y holds there).

    Returns
    -------
    Y : array-like or sparse matrix
        Unchanged when nothing is unknown (so a complete Y takes exactly the
        path it took before).
    unknown : bool ndarray or uint8 csr_array of the shape of Y, or None
        None when no entry is unknown, or when they are read as negative.
    """
    unknown: MatrixLike | None = None
    if not sp.issparse(Y):
        values = np.asarray(Y) if not isinstance(Y, np.ndarray) else Y
        if values.dtype.kind == "f" and values.size and np.isnan(values).any():
            unknown = np.isnan(values)
            Y = np.where(unknown, 0.0, values)
    if Y_missing is not None:
        unknown = _merge_mask(Y, Y_missing, unknown)
        if sp.issparse(Y):  # the entries marked unknown hold no value
            Y = sp.csr_array(Y)
            Y = Y - Y.multiply(unknown.astype(Y.dtype))
        else:
            Y = np.where(_dense(unknown), 0, np.asarray(Y))
    if unknown is None or not _any(unknown):
        return Y, None
    policy = getattr(estimator, "missing_labels", None)
    name = type(estimator).__name__
    if policy is None:
        raise ValueError(
            f"{name} does not learn from incomplete labels: Y has unknown entries (NaN, or "
            f"Y_missing). Estimators that do (missing_labels='ignore'): "
            f"{', '.join(sorted(MISSING_LABEL_ESTIMATORS))}; or fill the unknown entries first "
            "(docs/incomplete_labels.md)."
        )
    if policy == "negative":
        return Y, None
    n_unknown = unknown.nnz if sp.issparse(unknown) else int(np.count_nonzero(unknown))
    if n_unknown == int(np.prod(unknown.shape)):
        raise ValueError(
            f"{name}: every entry of Y is unknown (NaN, or marked in Y_missing): there is no "
            "observed label to learn from."
        )
    return Y, unknown


def _merge_mask(Y: MatrixLike, Y_missing: MatrixLike, unknown: MatrixLike | None) -> MatrixLike:
    shape = Y.shape if hasattr(Y, "shape") else np.shape(Y)
    if sp.issparse(Y_missing):
        mask = sp.csr_array(Y_missing, copy=True)
        mask.sum_duplicates()
        mask.eliminate_zeros()
        data = mask.data
    else:
        mask = np.asarray(Y_missing)
        data = mask
    if mask.ndim != 2 or tuple(mask.shape) != tuple(shape):
        raise ValueError(
            f"The 'Y_missing' parameter must have the shape of Y, {tuple(shape)}; got {tuple(mask.shape)}."
        )
    if mask.dtype.kind not in "biuf" or (data.size and not np.isin(data, (0, 1)).all()):
        raise ValueError(
            "The 'Y_missing' parameter must be a 0/1 (or boolean) matrix marking the unknown entries "
            f"of Y with 1; got dtype {mask.dtype} with values other than 0 and 1."
        )
    if sp.issparse(Y):
        out = sp.csr_array((np.ones(mask.nnz, dtype=np.uint8), mask.indices, mask.indptr), shape=mask.shape) \
            if sp.issparse(mask) else sp.csr_array(mask.astype(bool).astype(np.uint8))
        out.sort_indices()
        return out
    dense = _dense(mask)
    return dense if unknown is None else dense | unknown


def _dense(mask: MatrixLike) -> np.ndarray[Any, np.dtype[np.bool_]]:
    return np.asarray(mask.toarray() if sp.issparse(mask) else mask).astype(bool)


def _any(mask: MatrixLike) -> bool:
    return bool(mask.nnz if sp.issparse(mask) else np.asarray(mask).any())


def unknown_like(unknown: MatrixLike | None, Y: LabelMatrix) -> MatrixLike | None:
    """The unknown mask in Y's container after validation: uint8, CSR for a CSR Y, else an ndarray
    (the counting kernels count it as they count Y's labels)."""
    if unknown is None:
        return None
    if sp.issparse(Y):
        if sp.issparse(unknown):
            return unknown
        out = sp.csr_array(np.asarray(unknown).astype(np.uint8))
        out.sort_indices()
        return out
    return _dense(unknown).astype(np.uint8)
