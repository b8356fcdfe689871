"""Label-based ranking metrics: macro- and micro-averaged area under the ROC curve.

Zhang & Zhou (IEEE TKDE 2014), the review's section on label-based metrics; the thresholded label-based metrics are in
:mod:`mlknn.metrics._label_based`. The undefined cases (no label, or no pair, with both a
relevant and an irrelevant instance) follow the convention table in :mod:`mlknn.metrics`.
"""

import numpy as np
from numpy.typing import NDArray

from ..utils._docstrings import fill_doc
from ..utils._typing import MatrixLike
from ._checks import _check_true_and_scores, _undefined
from ._ranking import _row_blocks, _sort_rows

__all__ = [
    "macro_auc",
    "micro_auc",
]


def _auc_rows(Y: NDArray[np.bool_], A: NDArray[np.float64]) -> NDArray[np.float64]:
    """Mann-Whitney AUC of each row of ``A`` against the 0/1 row of ``Y``.

    Every row must hold at least one positive and one negative. In each sorted
    row a positive beats the negatives before its group of tied scores and
    ties (1/2) with the negatives inside it; the pair count is kept in
    integers (doubled) until the final division.
    """
    Ys, first, last = _sort_rows(A, Y)
    neg = ~Ys
    neg_incl = np.cumsum(neg, axis=1)
    neg_excl: NDArray[np.intp] = neg_incl - neg
    below: NDArray[np.intp] = np.take_along_axis(neg_excl, first, axis=1)
    tied = np.take_along_axis(neg_incl, last, axis=1) - below
    twice_u = np.where(Ys, 2 * below + tied, 0).sum(axis=1)
    n_pos = np.count_nonzero(Ys, axis=1)
    n_neg = Ys.shape[1] - n_pos
    auc: NDArray[np.float64] = twice_u / (2.0 * n_pos * n_neg)  # numpy's stubs lose the dtype here
    return auc


def _macro_auc(yt: NDArray[np.bool_], S: NDArray[np.float64]) -> float:
    n_pos = np.count_nonzero(yt, axis=0)
    valid = (n_pos > 0) & (n_pos < yt.shape[0])
    if not valid.any():
        return _undefined(
            "macro_auc", "no label has both a positive and a negative instance in Y_true"
        )
    # One row per usable label, contiguous, processed in blocks of labels.
    Yl = np.ascontiguousarray(yt[:, valid].T)
    Sl = np.ascontiguousarray(S[:, valid].T)
    aucs = np.concatenate([_auc_rows(Yl[b], Sl[b]) for b in _row_blocks(*Yl.shape)])
    return float(aucs.mean())


def _micro_auc(yt: NDArray[np.bool_], S: NDArray[np.float64]) -> float:
    pos = np.sort(S[yt])
    neg = np.sort(S[~yt])
    if pos.size == 0 or neg.size == 0:
        return _undefined(
            "micro_auc",
            "Y_true needs at least one relevant and one irrelevant instance-label pair",
        )
    below = np.searchsorted(neg, pos, side="left")
    not_above = np.searchsorted(neg, pos, side="right")
    twice_u = 2 * int(below.sum()) + int((not_above - below).sum())
    return float(twice_u / (2.0 * pos.size * neg.size))




@fill_doc
def macro_auc(Y_true: MatrixLike, Y_score: MatrixLike) -> float:
    r"""Macro-averaged area under the ROC curve.

    For each label ``j`` with positives :math:`Z_j` and negatives
    :math:`\bar Z_j` in ``Y_true``, the AUC is the fraction of
    (positive, negative) instance pairs that the label's scores order
    correctly, a tie counting 1/2 (Mann-Whitney; scikit-learn's
    :func:`~sklearn.metrics.roc_auc_score`). The review (Zhang and Zhou 2014, section on label-based metrics) writes
    :math:`f(x', y_j) \ge f(x'', y_j)`, which would give a constant scorer an
    AUC of 1; we count ties as 1/2 instead.

    Labels with no positive or no negative instance in ``Y_true`` have no AUC
    and are left out of the mean. If no label is left, the result is NaN and an
    :class:`~sklearn.exceptions.UndefinedMetricWarning` is issued.

    Parameters
    ----------
    {Y_true}
    {Y_score}

    Returns
    -------
    score : float
        In [0, 1]; 1 is best; NaN if undefined.

    See Also
    --------
    micro_auc : The AUC of all instance-label pairs pooled.
    sklearn.metrics.roc_auc_score : scikit-learn's AUC (``average="macro"``).

    References
    ----------
    M.-L. Zhang and Z.-H. Zhou, "A Review on Multi-Label Learning Algorithms",
    IEEE Transactions on Knowledge and Data Engineering, 2014, section on label-based metrics.

    Examples
    --------
    >>> from mlknn.metrics import macro_auc
    >>> Y_true = [[1, 0, 1], [0, 1, 0], [1, 1, 0]]
    >>> Y_score = [[0.9, 0.2, 0.4], [0.3, 0.8, 0.6], [0.7, 0.5, 0.6]]
    >>> round(macro_auc(Y_true, Y_score), 4)
    0.6667
    """
    yt, S = _check_true_and_scores(Y_true, Y_score)
    return _macro_auc(yt, S)


@fill_doc
def micro_auc(Y_true: MatrixLike, Y_score: MatrixLike) -> float:
    r"""Micro-averaged area under the ROC curve.

    The AUC of all instance-label pairs pooled: the fraction of
    (relevant pair, irrelevant pair) couples ordered correctly by the scores, a
    tie counting 1/2. Equals ``roc_auc_score(Y_true, Y_score, average="micro")``.
    NaN (with an :class:`~sklearn.exceptions.UndefinedMetricWarning`) when
    ``Y_true`` is all zeros or all ones.

    Parameters
    ----------
    {Y_true}
    {Y_score}

    Returns
    -------
    score : float
        In [0, 1]; 1 is best; NaN if undefined.

    See Also
    --------
    macro_auc : The mean of the per-label AUCs.
    ranking_loss : The per-instance counterpart (pairs within an instance).

    References
    ----------
    M.-L. Zhang and Z.-H. Zhou, "A Review on Multi-Label Learning Algorithms",
    IEEE Transactions on Knowledge and Data Engineering, 2014, section on label-based metrics.

    Examples
    --------
    >>> from mlknn.metrics import micro_auc
    >>> Y_true = [[1, 0, 1], [0, 1, 0], [1, 1, 0]]
    >>> Y_score = [[0.9, 0.2, 0.4], [0.3, 0.8, 0.6], [0.7, 0.5, 0.6]]
    >>> round(micro_auc(Y_true, Y_score), 4)
    0.8
    """
    yt, S = _check_true_and_scores(Y_true, Y_score)
    return _micro_auc(yt, S)
