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
    hidden : uint8 ndarray, or uint8 csr_array for a sparse Y; None when fraction is 0
    """
    if fraction <= 0:
        return Y, None
    n, q = Y.shape
    rows = np.arange(n, dtype=np.intp) if rows is None else np.asarray(rows, dtype=np.intp)
    n_draw = int(rows.max(initial=-1)) + 1
    rng = np.random.RandomState((int(seed) * 1_000_003 + 7919 * int(repeat)) % 2**32)
    # The draw covers every (row, label) entry, observed zeros included: dense by nature.
    check_dense_label_budget(n_draw, q, estimator="missing_labels", itemsize=8, what="the hidden-entry draw")
    hidden = (rng.random_sample((n_draw, q))[rows] < fraction).astype(np.uint8)
    if sp.issparse(Y):
        mask = sp.csr_array(hidden)
        kept = sp.csr_array(Y - sp.csr_array(Y).multiply(mask))
        kept.eliminate_zeros()
        return kept, mask
    return np.where(hidden == 1, 0, Y).astype(Y.dtype), hidden
