"""Label counts of a dense or sparse (CSR) label matrix, in O(nnz) for CSR."""

import numpy as np
import scipy.sparse as sp

from ..utils._typing import BoolArray, LabelMatrix, MatrixLike, NDArray
from ..utils._validation import check_label_matrix


def _labels(Y: MatrixLike) -> LabelMatrix:
    """Y as a canonical CSR array when sparse (never densified), else a uint8 ndarray."""
    return check_label_matrix(Y, accept_sparse=True)


def label_counts(Y: MatrixLike) -> NDArray[np.int64]:
    """Positive instances of every label: (n_labels,) int64, O(nnz) for a sparse Y.

    Parameters
    ----------
    Y : {array-like, sparse matrix} of shape (n_samples, n_labels)
        0/1 label matrix.

    Returns
    -------
    ndarray of shape (n_labels,), int64
        Positive instances of every label.

    See Also
    --------
    labelled_rows : The rows with at least one label.
    RareLabelFilter : Drops the labels with too few positives.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from mlknn.preprocessing import label_counts
    >>> label_counts(sp.csr_matrix([[1, 0, 1], [1, 0, 0]])).tolist()
    [2, 0, 1]
    """
    Y = _labels(Y)
    if sp.issparse(Y):
        counts: NDArray[np.int64] = np.bincount(Y.indices, minlength=Y.shape[1]).astype(np.int64)
        return counts
    dense: NDArray[np.int64] = Y.sum(axis=0, dtype=np.int64)
    return dense


def labelled_rows(Y: MatrixLike) -> BoolArray:
    """Boolean mask of the rows with at least one label, O(nnz) for a sparse Y.

    Parameters
    ----------
    Y : {array-like, sparse matrix} of shape (n_samples, n_labels)
        0/1 label matrix.

    Returns
    -------
    ndarray of shape (n_samples,), dtype bool
        True for the rows with at least one label.

    See Also
    --------
    label_counts : Positive instances of every label.

    Examples
    --------
    >>> from mlknn.preprocessing import labelled_rows
    >>> labelled_rows([[1, 0], [0, 0], [0, 1]]).tolist()
    [True, False, True]
    """
    Y = _labels(Y)
    if sp.issparse(Y):
        nonempty: BoolArray = np.diff(Y.indptr) > 0
        return nonempty
    anyrow: BoolArray = Y.any(axis=1)
    return anyrow
