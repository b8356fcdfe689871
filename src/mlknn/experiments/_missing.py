"""Hiding a seeded fraction of the training labels (the ``missing_labels`` setting).

Every method's robustness to incomplete annotations is measured on the same
hidden entries: a generator seeded by the protocol's seed and the repetition
draws each label entry of the dataset independently (hidden with probability
``fraction``: missing completely at random, the assumption of
docs/incomplete_labels.md), and a training part hides the entries of its rows.
A row's hidden entries are therefore the same in every fold of a repetition
(and in every batch of the prequential protocol), for a given label set. The
test part is never touched.
"""

import numpy as np
import scipy.sparse as sp

from ..utils._typing import LabelMatrix, MatrixLike, NDArray
from ..utils._validation import check_dense_label_budget

#: Uniform numbers drawn at once: the draw's memory, whatever the size of the label space.
_DRAW_PIECE = 1 << 18


def hidden_entries(n_draw: int, q: int, fraction: float, rng: np.random.RandomState,
                   rows: NDArray[np.intp]) -> sp.csr_array:
    """The hidden entries of ``rows`` as a uint8 CSR mask of shape ``(len(rows), q)``.

    Entry ``(i, j)`` of the dataset is hidden when the ``(i * q + j)``-th number of
    ``rng``'s uniform stream is below ``fraction``: the entries of
    ``rng.random_sample((n_draw, q)) < fraction``, drawn ``_DRAW_PIECE`` numbers at a
    time (the legacy generator's uniform stream does not depend on how it is cut).

    Parameters
    ----------
    n_draw : int
        Dataset rows covered by the draw (at least ``rows.max() + 1``).
    q : int
        Number of labels.
    fraction : float in (0, 1)
    rng : numpy.random.RandomState
    rows : ndarray of intp
        Dataset rows to return, in this order (repeats allowed).

    Returns
    -------
    csr_array of uint8
    """
    wanted = np.zeros(n_draw, dtype=bool)
    wanted[rows] = True
    index_dtype = np.int32 if max(n_draw, q) < np.iinfo(np.int32).max else np.int64
    row_parts, col_parts = [], []
    total = n_draw * q
    for start in range(0, total, _DRAW_PIECE):
        flat = np.flatnonzero(rng.random_sample(min(total, start + _DRAW_PIECE) - start) < fraction) + start
        row_of, col_of = np.divmod(flat, q)
        keep = wanted[row_of]
        row_parts.append(row_of[keep].astype(index_dtype))
        col_parts.append(col_of[keep].astype(index_dtype))
    row_of = np.concatenate(row_parts) if row_parts else np.zeros(0, dtype=index_dtype)
    del row_parts
    indptr = np.zeros(n_draw + 1, dtype=index_dtype if row_of.size < np.iinfo(np.int32).max else np.int64)
    np.cumsum(np.bincount(row_of, minlength=n_draw), out=indptr[1:])
    del row_of
    col_of = np.concatenate(col_parts) if col_parts else np.zeros(0, dtype=index_dtype)
    mask = sp.csr_array((np.ones(col_of.size, dtype=np.uint8), col_of, indptr), shape=(n_draw, q))
    return mask[rows]


def hide_labels(
    Y: LabelMatrix, fraction: float, seed: int, repeat: int = 0, rows: NDArray[np.intp] | None = None
) -> tuple[LabelMatrix, MatrixLike | None]:
    """``(Y with the hidden entries set to 0, the hidden entries)``.

    Parameters
    ----------
    Y : ndarray or csr_array of shape (n, q), 0/1
        A training part's labels.
    fraction : float in [0, 1)
        Probability that an entry is hidden; 0 returns ``(Y, None)``.
    seed, repeat : int
        Identify the generator (the same entries are hidden in every run and
        for every method).
    rows : ndarray of int, optional
        The dataset rows of Y's rows (default ``0 .. n - 1``): a row's hidden
        entries depend on the row, not on the fold it is in.

    Returns
    -------
    Y : same container as given
    hidden : uint8 ndarray, or uint8 csr_array for a sparse Y (no (n, q) array is made
        for it); None when fraction is 0
    """
    if fraction <= 0:
        return Y, None
    n, q = Y.shape
    rows = np.arange(n, dtype=np.intp) if rows is None else np.asarray(rows, dtype=np.intp)
    n_draw = int(rows.max(initial=-1)) + 1
    rng = np.random.RandomState((int(seed) * 1_000_003 + 7919 * int(repeat)) % 2**32)
    if sp.issparse(Y):
        mask = hidden_entries(n_draw, q, fraction, rng, rows)
        kept = sp.csr_array(Y - sp.csr_array(Y).multiply(mask))
        kept.eliminate_zeros()
        return kept, mask
    check_dense_label_budget(n, q, estimator="missing_labels", itemsize=1, what="the hidden-entry mask")
    hidden = hidden_entries(n_draw, q, fraction, rng, rows).toarray()
    return np.where(hidden == 1, 0, Y).astype(Y.dtype), hidden
