"""Every measure of :data:`METRIC_NAMES` from one bipartition and one score matrix.

The table of names and directions, and the pass that fills it: shared by
:func:`~mlknn.metrics.evaluate` and by ``evaluate(..., at_k=...)``
(``_evaluate_at_k.py``), which both sit above this module.
"""

from numpy.typing import ArrayLike

from ..utils._typing import MatrixLike
from ._checks import _check_scores, _check_targets
from ._example_based import _example_prf, _hamming_loss, _subset_accuracy
from ._label_auc import _macro_auc, _micro_auc
from ._label_based import _label_accuracy, _macro_prf, _micro_prf
from ._ranking import TieRule, _average_precision, _coverage, _one_error, _rank_stats, _ranking_loss

#: Keys of the dict returned by :func:`~mlknn.metrics.evaluate`, in its order.
METRIC_NAMES = (
    "hamming_loss",
    "subset_accuracy",
    "accuracy",
    "precision",
    "recall",
    "f1",
    "one_error",
    "coverage",
    "ranking_loss",
    "average_precision",
    "macro_precision",
    "macro_recall",
    "macro_f1",
    "micro_precision",
    "micro_recall",
    "micro_f1",
    "macro_auc",
    "micro_auc",
    "macro_accuracy",
    "micro_accuracy",
)

#: For each name in :data:`METRIC_NAMES`: True if larger values are better.
GREATER_IS_BETTER = {
    "hamming_loss": False,
    "subset_accuracy": True,
    "accuracy": True,
    "precision": True,
    "recall": True,
    "f1": True,
    "one_error": False,
    "coverage": False,
    "ranking_loss": False,
    "average_precision": True,
    "macro_precision": True,
    "macro_recall": True,
    "macro_f1": True,
    "micro_precision": True,
    "micro_recall": True,
    "micro_f1": True,
    "macro_auc": True,
    "micro_auc": True,
    "macro_accuracy": True,
    "micro_accuracy": True,
}


def all_metrics(
    Y_true: MatrixLike, Y_pred: MatrixLike, Y_score: ArrayLike | None, ties: TieRule
) -> dict[str, float]:
    """Every measure of :data:`METRIC_NAMES`, in that order (``evaluate`` without ``at_k``).

    Parameters
    ----------
    Y_true, Y_pred : array-like or sparse matrix of shape (n_samples, n_labels)
        True and predicted 0/1 labels.
    Y_score : array-like of shape (n_samples, n_labels), or None
        Scores ranking the labels; None: ``Y_pred`` ranks them.
    ties : {"pessimistic", "optimistic", "average"}
        Tie rule of the ranking measures (checked by the caller).

    Returns
    -------
    dict
        Name -> Python float.
    """
    yt, yp = _check_targets(Y_true, Y_pred)
    if Y_score is None:
        S = yp.astype(float)
    else:
        S = _check_scores(Y_score, yt.shape)

    acc_p, acc_r, acc_f, acc_j = _example_prf(yt, yp)
    mac_p, mac_r, mac_f = _macro_prf(yt, yp)
    mic_p, mic_r, mic_f = _micro_prf(yt, yp)
    mac_acc, mic_acc = _label_accuracy(yt, yp)
    stats = _rank_stats(yt, S, ties)

    values = {
        "hamming_loss": _hamming_loss(yt, yp),
        "subset_accuracy": _subset_accuracy(yt, yp),
        "accuracy": acc_j,
        "precision": acc_p,
        "recall": acc_r,
        "f1": acc_f,
        "one_error": _one_error(stats),
        "coverage": _coverage(stats),
        "ranking_loss": _ranking_loss(stats),
        "average_precision": _average_precision(stats),
        "macro_precision": mac_p,
        "macro_recall": mac_r,
        "macro_f1": mac_f,
        "micro_precision": mic_p,
        "micro_recall": mic_r,
        "micro_f1": mic_f,
        "macro_auc": _macro_auc(yt, S),
        "micro_auc": _micro_auc(yt, S),
        "macro_accuracy": mac_acc,
        "micro_accuracy": mic_acc,
    }
    return {name: float(values[name]) for name in METRIC_NAMES}
