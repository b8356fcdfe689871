"""Hiding a seeded fraction of the training labels (the ``missing_labels`` setting).

Every method's robustness to incomplete annotations is measured on the same
hidden entries: one generator per fold, seeded by the protocol's seed, the
repetition and the fold, draws each training label entry independently (hidden
with probability ``fraction``: missing completely at random, the assumption of
docs/incomplete_labels.md). The test part is never touched.
"""

import numpy as np
import scipy.sparse as sp

from ..utils._typing import LabelMatrix, MatrixLike
from ..utils._validation import check_dense_label_budget


def hide_labels(
    Y: LabelMatrix, fraction: float, seed: int, repeat: int = 0, fold: int = 0
) -> tuple[LabelMatrix, MatrixLike | None]:
    """``(Y with the hidden entries set to 0, the hidden entries)``.

    Parameters
    ----------
    Y : ndarray or csr_array of shape (n, q), 0/1
        A training part's labels.
    fraction : float in [0, 1)
        Probability that an entry is hidden; 0 returns ``(Y, None)``.
    seed, repeat, fold : int
        Identify the generator (the same fold gets the same hidden entries in
        every run and for every method).

    Returns
    -------
    Y : same container as given
    hidden : uint8 ndarray, or uint8 csr_array for a sparse Y; None when fraction is 0
    """
    if fraction <= 0:
        return Y, None
    n, q = Y.shape
    rng = np.random.RandomState((int(seed) * 1_000_003 + 7919 * int(repeat) + int(fold)) % 2**32)
    if sp.issparse(Y):
        # The draw covers every (row, label) entry, observed zeros included: dense by nature.
        check_dense_label_budget(n, q, estimator="missing_labels", itemsize=8, what="the hidden-entry draw")
    hidden = (rng.random_sample((n, q)) < fraction).astype(np.uint8)
    if sp.issparse(Y):
        mask = sp.csr_array(hidden)
        kept = sp.csr_array(Y - sp.csr_array(Y).multiply(mask))
        kept.eliminate_zeros()
        return kept, mask
    return np.where(hidden == 1, 0, Y).astype(Y.dtype), hidden
