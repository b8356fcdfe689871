"""Label-based metrics: macro/micro accuracy, precision, recall and F-measure.

The label-based AUC is in :mod:`mlknn.metrics._label_auc`.

Zhang & Zhou (IEEE TKDE 2014), the review's section on label-based metrics. For a binary measure
``B(TP, FP, TN, FN)`` the macro average is the mean over labels of ``B`` on
each label's counts, the micro average is ``B`` on the counts summed over
labels. The ``0/0`` conventions are those of the example-based metrics
(MULAN), applied to a label's column instead of an instance's row; see the
convention table in :mod:`mlknn.metrics`.
"""

import numpy as np
from numpy.typing import NDArray

from ..utils._docstrings import fill_doc
from ..utils._typing import MatrixLike
from ._checks import _check_beta, _check_targets
from ._example_based import _confusion_counts, _prf_from_counts

__all__ = [
    "macro_accuracy",
    "micro_accuracy",
    "macro_precision",
    "macro_recall",
    "macro_f1",
    "micro_precision",
    "micro_recall",
    "micro_f1",
]


def _label_accuracy(yt: NDArray[np.bool_], yp: NDArray[np.bool_]) -> tuple[float, float]:
    """Macro and micro label-based accuracy ``(TP + TN) / (TP + FP + TN + FN)``."""
    n, q = yt.shape
    correct = n - np.count_nonzero(yt != yp, axis=0)  # TP_j + TN_j, per label
    return float(np.mean(correct / n)), float(correct.sum() / (n * q))


def _macro_prf(yt: NDArray[np.bool_], yp: NDArray[np.bool_], beta: float = 1.0) -> tuple[float, float, float]:
    p, r, f, _ = _prf_from_counts(*_confusion_counts(yt, yp, axis=0), beta=beta)
    return float(p.mean()), float(r.mean()), float(f.mean())


def _micro_prf(yt: NDArray[np.bool_], yp: NDArray[np.bool_], beta: float = 1.0) -> tuple[float, float, float]:
    tp, fp, fn = (c.sum() for c in _confusion_counts(yt, yp, axis=0))
    p, r, f, _ = _prf_from_counts(tp, fp, fn, beta=beta)
    return float(p), float(r), float(f)




@fill_doc
def macro_accuracy(Y_true: MatrixLike, Y_pred: MatrixLike) -> float:
    r"""Macro-averaged label-based accuracy (Zhang and Zhou 2014, section on label-based metrics, B = Accuracy).

    .. math:: \frac{1}{q}\sum_{j=1}^{q}\frac{TP_j + TN_j}{TP_j + FP_j + TN_j + FN_j}

    Every label has the same p instances (``TP_j + FP_j + TN_j + FN_j = p``),
    so this equals :func:`micro_accuracy` and ``1 - hamming_loss`` (up to
    rounding); it is given because the review lists it. Never 0/0 (p >= 1).

    Parameters
    ----------
    {Y_true}
    {Y_pred}

    Returns
    -------
    score : float
        In [0, 1]; 1 is best.

    See Also
    --------
    micro_accuracy : The micro-averaged label-based accuracy (the same value).
    hamming_loss : Equals ``1 - macro_accuracy`` up to rounding.

    References
    ----------
    M.-L. Zhang and Z.-H. Zhou, "A Review on Multi-Label Learning Algorithms",
    IEEE Transactions on Knowledge and Data Engineering, 2014, section on label-based metrics.

    Examples
    --------
    >>> from mlknn.metrics import macro_accuracy
    >>> Y_true = [[1, 0, 1], [0, 1, 0], [1, 1, 0]]
    >>> Y_pred = [[1, 0, 0], [0, 1, 1], [1, 1, 0]]
    >>> round(macro_accuracy(Y_true, Y_pred), 4)
    0.7778
    """
    return _label_accuracy(*_check_targets(Y_true, Y_pred))[0]


@fill_doc
def micro_accuracy(Y_true: MatrixLike, Y_pred: MatrixLike) -> float:
    r"""Micro-averaged label-based accuracy (Zhang and Zhou 2014, section on label-based metrics, B = Accuracy).

    .. math:: \frac{\sum_j (TP_j + TN_j)}{\sum_j (TP_j + FP_j + TN_j + FN_j)}

    Equal to :func:`macro_accuracy` and ``1 - hamming_loss`` (see there).

    Parameters
    ----------
    {Y_true}
    {Y_pred}

    Returns
    -------
    score : float
        In [0, 1]; 1 is best.

    See Also
    --------
    macro_accuracy : The macro-averaged label-based accuracy (the same value).
    hamming_loss : Equals ``1 - micro_accuracy`` up to rounding.

    References
    ----------
    M.-L. Zhang and Z.-H. Zhou, "A Review on Multi-Label Learning Algorithms",
    IEEE Transactions on Knowledge and Data Engineering, 2014, section on label-based metrics.

    Examples
    --------
    >>> from mlknn.metrics import micro_accuracy
    >>> Y_true = [[1, 0, 1], [0, 1, 0], [1, 1, 0]]
    >>> Y_pred = [[1, 0, 0], [0, 1, 1], [1, 1, 0]]
    >>> round(micro_accuracy(Y_true, Y_pred), 4)
    0.7778
    """
    return _label_accuracy(*_check_targets(Y_true, Y_pred))[1]


@fill_doc
def macro_precision(Y_true: MatrixLike, Y_pred: MatrixLike) -> float:
    r"""Macro-averaged precision: the mean over labels of ``TP_j / (TP_j + FP_j)``.

    A label predicted for no instance scores 1 if it is relevant to no
    instance either, else 0 (MULAN). scikit-learn's
    ``precision_score(average="macro", zero_division=1)`` scores every
    never-predicted label 1.

    Parameters
    ----------
    {Y_true}
    {Y_pred}

    Returns
    -------
    score : float
        In [0, 1]; 1 is best.

    See Also
    --------
    micro_precision : Precision of the pooled counts.
    macro_recall, macro_f1 : The other macro-averaged measures.
    example_precision : The example-based precision.

    References
    ----------
    M.-L. Zhang and Z.-H. Zhou, "A Review on Multi-Label Learning Algorithms",
    IEEE Transactions on Knowledge and Data Engineering, 2014, section on label-based metrics.

    Examples
    --------
    >>> from mlknn.metrics import macro_precision
    >>> Y_true = [[1, 0, 1], [0, 1, 0], [1, 1, 0]]
    >>> Y_pred = [[1, 0, 0], [0, 1, 1], [1, 1, 0]]
    >>> round(macro_precision(Y_true, Y_pred), 4)
    0.6667
    """
    yt, yp = _check_targets(Y_true, Y_pred)
    return _macro_prf(yt, yp)[0]


@fill_doc
def macro_recall(Y_true: MatrixLike, Y_pred: MatrixLike) -> float:
    r"""Macro-averaged recall: the mean over labels of ``TP_j / (TP_j + FN_j)``.

    A label relevant to no instance scores 1 if it is predicted for no
    instance either, else 0 (MULAN). scikit-learn's
    ``recall_score(average="macro", zero_division=1)`` scores every such
    label 1.

    Parameters
    ----------
    {Y_true}
    {Y_pred}

    Returns
    -------
    score : float
        In [0, 1]; 1 is best.

    See Also
    --------
    micro_recall : Recall of the pooled counts.
    macro_precision, macro_f1 : The other macro-averaged measures.
    example_recall : The example-based recall.

    References
    ----------
    M.-L. Zhang and Z.-H. Zhou, "A Review on Multi-Label Learning Algorithms",
    IEEE Transactions on Knowledge and Data Engineering, 2014, section on label-based metrics.

    Examples
    --------
    >>> from mlknn.metrics import macro_recall
    >>> Y_true = [[1, 0, 1], [0, 1, 0], [1, 1, 0]]
    >>> Y_pred = [[1, 0, 0], [0, 1, 1], [1, 1, 0]]
    >>> round(macro_recall(Y_true, Y_pred), 4)
    0.6667
    """
    yt, yp = _check_targets(Y_true, Y_pred)
    return _macro_prf(yt, yp)[1]


@fill_doc
def macro_f1(Y_true: MatrixLike, Y_pred: MatrixLike, *, beta: float = 1.0) -> float:
    r"""Macro-averaged F-measure: the mean over labels of each label's F-beta.

    ``F_j = (1 + b^2) TP_j / ((1 + b^2) TP_j + b^2 FN_j + FP_j)``, 1 for a
    label with ``TP_j + FP_j + FN_j = 0``. This is the review's
    :math:`B_{macro}` with :math:`B = F^\beta` (not the harmonic mean of macro
    precision and macro recall) and equals scikit-learn's
    ``fbeta_score(average="macro", zero_division=1)`` on every input.

    Parameters
    ----------
    {Y_true}
    {Y_pred}
    beta : float, default=1.0
        Weight of recall relative to precision (beta > 0).

    Returns
    -------
    score : float
        In [0, 1]; 1 is best.

    See Also
    --------
    micro_f1 : F-measure of the pooled counts.
    macro_precision, macro_recall : The other macro-averaged measures.
    example_f1 : The example-based F-measure.

    References
    ----------
    M.-L. Zhang and Z.-H. Zhou, "A Review on Multi-Label Learning Algorithms",
    IEEE Transactions on Knowledge and Data Engineering, 2014, section on label-based metrics.

    Examples
    --------
    >>> from mlknn.metrics import macro_f1
    >>> Y_true = [[1, 0, 1], [0, 1, 0], [1, 1, 0]]
    >>> Y_pred = [[1, 0, 0], [0, 1, 1], [1, 1, 0]]
    >>> round(macro_f1(Y_true, Y_pred), 4)
    0.6667
    """
    beta = _check_beta(beta)
    yt, yp = _check_targets(Y_true, Y_pred)
    return _macro_prf(yt, yp, beta=beta)[2]


@fill_doc
def micro_precision(Y_true: MatrixLike, Y_pred: MatrixLike) -> float:
    r"""Micro-averaged precision: ``sum_j TP_j / sum_j (TP_j + FP_j)``.

    If nothing at all is predicted it is 1 when nothing is relevant either,
    else 0.

    Parameters
    ----------
    {Y_true}
    {Y_pred}

    Returns
    -------
    score : float
        In [0, 1]; 1 is best.

    See Also
    --------
    macro_precision : The mean of the per-label precisions.
    micro_recall, micro_f1 : The other micro-averaged measures.

    References
    ----------
    M.-L. Zhang and Z.-H. Zhou, "A Review on Multi-Label Learning Algorithms",
    IEEE Transactions on Knowledge and Data Engineering, 2014, section on label-based metrics.

    Examples
    --------
    >>> from mlknn.metrics import micro_precision
    >>> Y_true = [[1, 0, 1], [0, 1, 0], [1, 1, 0]]
    >>> Y_pred = [[1, 0, 0], [0, 1, 1], [1, 1, 0]]
    >>> round(micro_precision(Y_true, Y_pred), 4)
    0.8
    """
    yt, yp = _check_targets(Y_true, Y_pred)
    return _micro_prf(yt, yp)[0]


@fill_doc
def micro_recall(Y_true: MatrixLike, Y_pred: MatrixLike) -> float:
    r"""Micro-averaged recall: ``sum_j TP_j / sum_j (TP_j + FN_j)``.

    If nothing at all is relevant it is 1 when nothing is predicted either,
    else 0.

    Parameters
    ----------
    {Y_true}
    {Y_pred}

    Returns
    -------
    score : float
        In [0, 1]; 1 is best.

    See Also
    --------
    macro_recall : The mean of the per-label recalls.
    micro_precision, micro_f1 : The other micro-averaged measures.

    References
    ----------
    M.-L. Zhang and Z.-H. Zhou, "A Review on Multi-Label Learning Algorithms",
    IEEE Transactions on Knowledge and Data Engineering, 2014, section on label-based metrics.

    Examples
    --------
    >>> from mlknn.metrics import micro_recall
    >>> Y_true = [[1, 0, 1], [0, 1, 0], [1, 1, 0]]
    >>> Y_pred = [[1, 0, 0], [0, 1, 1], [1, 1, 0]]
    >>> round(micro_recall(Y_true, Y_pred), 4)
    0.8
    """
    yt, yp = _check_targets(Y_true, Y_pred)
    return _micro_prf(yt, yp)[1]


@fill_doc
def micro_f1(Y_true: MatrixLike, Y_pred: MatrixLike, *, beta: float = 1.0) -> float:
    r"""Micro-averaged F-measure: F-beta of the counts summed over labels.

    1 if nothing is relevant and nothing is predicted. Equals scikit-learn's
    ``fbeta_score(average="micro", zero_division=1)``.

    Parameters
    ----------
    {Y_true}
    {Y_pred}
    beta : float, default=1.0
        Weight of recall relative to precision (beta > 0).

    Returns
    -------
    score : float
        In [0, 1]; 1 is best.

    See Also
    --------
    macro_f1 : The mean of the per-label F-measures.
    micro_precision, micro_recall : The other micro-averaged measures.

    References
    ----------
    M.-L. Zhang and Z.-H. Zhou, "A Review on Multi-Label Learning Algorithms",
    IEEE Transactions on Knowledge and Data Engineering, 2014, section on label-based metrics.

    Examples
    --------
    >>> from mlknn.metrics import micro_f1
    >>> Y_true = [[1, 0, 1], [0, 1, 0], [1, 1, 0]]
    >>> Y_pred = [[1, 0, 0], [0, 1, 1], [1, 1, 0]]
    >>> round(micro_f1(Y_true, Y_pred), 4)
    0.8
    """
    beta = _check_beta(beta)
    yt, yp = _check_targets(Y_true, Y_pred)
    return _micro_prf(yt, yp, beta=beta)[2]
