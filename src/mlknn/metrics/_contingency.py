"""The label contingency matrix of Younes et al. (2011), section 3.2 and Figure 1."""

import warnings

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray
from sklearn.exceptions import UndefinedMetricWarning

from ..utils._typing import MatrixLike
from ..utils._validation import check_label_matrix

__all__ = ["label_contingency"]

#: Largest q for which the dense (q, q) matrix is built (8 bytes per entry: 800 MB).
_MAX_LABELS = 10_000


def label_contingency(Y: MatrixLike) -> NDArray[np.float64]:
    r"""Second-order label dependencies: ``mat[q, r] = Pr(H_1^q | H_1^r)``, ``mat[q, q] = Pr(H_1^q)``.

    Younes et al. (2011), section 3.2 and Figure 1: for labels q != r, the fraction of the
    instances having label r that also have label q; on the diagonal, the
    frequency of label q in the dataset. Columns are conditioned on r, so the
    matrix is not symmetric (``mat[q, r] Pr(r) = mat[r, q] Pr(q)``).

    Computed as one product ``Y^T Y`` (sparse Y stays sparse; O(nnz(Y) x
    labels per row)), then divided column by column.

    Parameters
    ----------
    Y : array-like or sparse matrix of shape (n_samples, n_labels)
        0/1 label matrix, n_samples >= 1.

    Returns
    -------
    mat : ndarray of shape (n_labels, n_labels), float64
        Off-diagonal entries of a column r whose label never occurs are NaN
        (``Pr(. | H_1^r)`` is undefined), with an
        :class:`~sklearn.exceptions.UndefinedMetricWarning`.

    Raises
    ------
    ValueError
        If Y is not a 0/1 matrix with at least one row, or has more than
        10,000 labels (the dense (q, q) result would pass 800 MB).

    See Also
    --------
    mlknn.datasets.label_stats : Per-label frequencies and cardinality of a label matrix.
    mlknn.plots.LabelCooccurrenceDisplay : Plots this matrix.

    References
    ----------
    Z. Younes, F. Abdallah, T. Denoeux and H. Snoussi, "A Dependent Multilabel
    Classification Method Derived from the k-Nearest Neighbor Rule", EURASIP J.
    Adv. Signal Process., 2011, section 3.2 and Figure 1.

    Examples
    --------
    >>> import numpy as np
    >>> Y = np.array([[1, 1, 0], [1, 0, 0], [0, 1, 1], [1, 1, 0]])
    >>> label_contingency(Y)[0].round(3).tolist()  # Pr(label 0 | label r)
    [0.75, 0.667, 0.0]
    """
    Y = check_label_matrix(Y, name="Y", accept_sparse=True)
    n, q = Y.shape
    if n == 0:
        raise ValueError(f"Y must have at least one row; got shape (0, {q}).")
    if q > _MAX_LABELS:
        raise ValueError(
            f"label_contingency builds a dense (q, q) matrix; q = {q:,} labels exceeds {_MAX_LABELS:,} "
            f"({8 * q * q / 2**20:,.0f} MiB)."
        )
    if sp.issparse(Y):
        Yf = sp.csr_matrix(Y, dtype=np.float64)
        co = np.asarray((Yf.T @ Yf).toarray())
    else:
        Yf = np.asarray(Y, dtype=np.float64)
        co = Yf.T @ Yf  # co[q, r] = instances with both q and r (integers, exact)
    count = np.diag(co).copy()
    with np.errstate(invalid="ignore", divide="ignore"):
        mat = co / count[None, :]
    absent = count == 0
    if absent.any():
        warnings.warn(
            f"label_contingency: label(s) {np.flatnonzero(absent).tolist()[:10]} never occur in Y; "
            "their columns Pr(. | label) are undefined (NaN).",
            UndefinedMetricWarning,
            stacklevel=2,
        )
        mat[:, absent] = np.nan
    mat[np.arange(q), np.arange(q)] = count / n
    return mat
