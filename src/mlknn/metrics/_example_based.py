"""Example-based classification metrics, and the confusion counts of :mod:`mlknn.metrics`.

The metrics follow Zhang & Zhou, "A Review on Multi-Label Learning Algorithms"
(IEEE TKDE 2014), the review's section on example-based metrics, and Younes et al. (EURASIP J. Adv. Signal Process.
2011), section 5.1.1. Edge cases (instances with an empty true or predicted
label set) follow the convention table in the docstring of
:mod:`mlknn.metrics` and in ``docs/metrics.md``: a ratio ``0/0`` is 1 when the
prediction is exactly right for that instance (both sets empty) and the usual
value otherwise (MULAN's ``InformationRetrievalMeasures``).

The input checks every metric module shares live in ``_checks.py``.
"""


import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..utils._docstrings import fill_doc
from ..utils._typing import MatrixLike
from ._checks import _check_beta, _check_targets

__all__ = [
    "hamming_loss",
    "subset_accuracy",
    "example_accuracy",
    "example_precision",
    "example_recall",
    "example_f1",
    "example_f_of_means",
]


# --------------------------------------------------------------------------
# Confusion counts shared by the metrics subpackage
# --------------------------------------------------------------------------


def _prf_from_counts(
    tp: ArrayLike, fp: ArrayLike, fn: ArrayLike, beta: float = 1.0
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Precision, recall, F-beta and Jaccard from confusion counts.

    Works elementwise on arrays (one entry per instance or per label) and on
    scalars (micro-averaging). The ``0/0`` cases follow MULAN:

    * precision ``tp/(tp+fp)``: if nothing is predicted it is 1 when nothing
      is relevant either (``fn == 0``), else 0;
    * recall ``tp/(tp+fn)``: if nothing is relevant it is 1 when nothing is
      predicted either (``fp == 0``), else 0;
    * F-beta ``(1+b^2) tp / ((1+b^2) tp + b^2 fn + fp)`` and Jaccard
      ``tp/(tp+fp+fn)``: 1 when ``tp + fp + fn == 0``.

    Parameters
    ----------
    tp, fp, fn : array-like of int
        True positives, false positives and false negatives.
    beta : float, default=1.0
        Weight of recall in the F-measure.

    Returns
    -------
    precision, recall, fbeta, jaccard : ndarray of float64
    """
    tp = np.asarray(tp, dtype=np.float64)
    fp = np.asarray(fp, dtype=np.float64)
    fn = np.asarray(fn, dtype=np.float64)
    b2 = beta * beta
    n_pred = tp + fp
    n_true = tp + fn
    f_den = (1.0 + b2) * tp + b2 * fn + fp
    union = tp + fp + fn
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.where(n_pred > 0, tp / n_pred, (fn == 0).astype(np.float64))
        recall = np.where(n_true > 0, tp / n_true, (fp == 0).astype(np.float64))
        fbeta = np.where(f_den > 0, (1.0 + b2) * tp / f_den, 1.0)
        jaccard = np.where(union > 0, tp / union, 1.0)
    return precision, recall, fbeta, jaccard


def _confusion_counts(
    yt: NDArray[np.bool_], yp: NDArray[np.bool_], axis: int
) -> tuple[NDArray[np.intp], NDArray[np.intp], NDArray[np.intp]]:
    """True positives, false positives and false negatives along ``axis``.

    ``axis=1``: one count per instance (example-based measures); ``axis=0``: one
    per label (label-based measures).
    """
    tp = np.count_nonzero(yt & yp, axis=axis)
    fp = np.count_nonzero(yp & ~yt, axis=axis)
    fn = np.count_nonzero(yt & ~yp, axis=axis)
    return tp, fp, fn


def _example_prf(
    yt: NDArray[np.bool_], yp: NDArray[np.bool_], beta: float = 1.0
) -> tuple[float, float, float, float]:
    """Mean example-based precision, recall, F-beta and accuracy (Jaccard)."""
    p, r, f, j = _prf_from_counts(*_confusion_counts(yt, yp, axis=1), beta=beta)
    return float(p.mean()), float(r.mean()), float(f.mean()), float(j.mean())


# hamming_loss and subset_accuracy equal scikit-learn's hamming_loss and
# accuracy_score on every input (tested); counting directly avoids their target
# type detection, which costs np.unique and a CSR copy of both matrices.


def _hamming_loss(yt: NDArray[np.bool_], yp: NDArray[np.bool_]) -> float:
    return float(np.count_nonzero(yt != yp) / yt.size)


def _subset_accuracy(yt: NDArray[np.bool_], yp: NDArray[np.bool_]) -> float:
    return float(np.count_nonzero((yt == yp).all(axis=1)) / yt.shape[0])


# --------------------------------------------------------------------------
# Public metrics
# --------------------------------------------------------------------------


@fill_doc
def hamming_loss(Y_true: MatrixLike, Y_pred: MatrixLike) -> float:
    r"""Hamming loss: the fraction of wrong instance-label pairs.

    .. math:: \mathrm{hloss}(h) = \frac{1}{p}\sum_{i=1}^{p}\frac{1}{q}|h(x_i)\,\Delta\,Y_i|

    Equals :func:`sklearn.metrics.hamming_loss` on every input (there is no
    ``0/0`` case).

    Parameters
    ----------
    {Y_true}
    {Y_pred}

    Returns
    -------
    loss : float
        In [0, 1]; 0 is best.

    See Also
    --------
    subset_accuracy : The fraction of instances whose label set is predicted exactly.
    sklearn.metrics.hamming_loss : scikit-learn's equal measure.
    evaluate : Every measure of the paper at once (key ``"hamming_loss"``).

    References
    ----------
    M.-L. Zhang and Z.-H. Zhou, "A Review on Multi-Label Learning Algorithms",
    IEEE Transactions on Knowledge and Data Engineering, 2014, section on example-based metrics.

    Z. Younes, F. Abdallah, T. Denoeux and H. Snoussi, "A Dependent Multilabel
    Classification Method Derived from the k-Nearest Neighbor Rule", EURASIP J.
    Adv. Signal Process., 2011, section 5.1.1.

    Examples
    --------
    >>> hamming_loss([[1, 0], [0, 1]], [[1, 1], [0, 1]])
    0.25
    """
    yt, yp = _check_targets(Y_true, Y_pred)
    return _hamming_loss(yt, yp)


@fill_doc
def subset_accuracy(Y_true: MatrixLike, Y_pred: MatrixLike) -> float:
    r"""Subset accuracy (exact match ratio).

    .. math:: \mathrm{subsetacc}(h) = \frac{1}{p}\sum_{i=1}^{p}[\![h(x_i) = Y_i]\!]

    Equals :func:`sklearn.metrics.accuracy_score` on every input. An instance
    with no true label is matched exactly by an empty prediction.

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
    hamming_loss : The fraction of wrong instance-label pairs.
    example_accuracy : The mean Jaccard index, a softer exact-match measure.

    References
    ----------
    M.-L. Zhang and Z.-H. Zhou, "A Review on Multi-Label Learning Algorithms",
    IEEE Transactions on Knowledge and Data Engineering, 2014, section on example-based metrics.

    Z. Younes, F. Abdallah, T. Denoeux and H. Snoussi, "A Dependent Multilabel
    Classification Method Derived from the k-Nearest Neighbor Rule", EURASIP J.
    Adv. Signal Process., 2011, section 5.1.1.

    Examples
    --------
    >>> from mlknn.metrics import subset_accuracy
    >>> Y_true = [[1, 0, 1], [0, 1, 0], [0, 0, 0]]
    >>> Y_pred = [[1, 0, 0], [0, 1, 1], [0, 0, 0]]
    >>> round(subset_accuracy(Y_true, Y_pred), 4)
    0.3333
    """
    yt, yp = _check_targets(Y_true, Y_pred)
    return _subset_accuracy(yt, yp)


@fill_doc
def example_accuracy(Y_true: MatrixLike, Y_pred: MatrixLike) -> float:
    r"""Example-based accuracy (mean Jaccard index of the label sets).

    .. math:: \mathrm{Acc}_{exam}(h) = \frac{1}{p}\sum_{i=1}^{p}
              \frac{|Y_i \cap h(x_i)|}{|Y_i \cup h(x_i)|}

    An instance whose true and predicted sets are both empty scores 1.
    Equals ``sklearn.metrics.jaccard_score(average="samples", zero_division=1)``.

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
    example_precision, example_recall, example_f1 : The other example-based measures.
    subset_accuracy : The exact-match ratio.

    References
    ----------
    M.-L. Zhang and Z.-H. Zhou, "A Review on Multi-Label Learning Algorithms",
    IEEE Transactions on Knowledge and Data Engineering, 2014, section on example-based metrics.

    Z. Younes, F. Abdallah, T. Denoeux and H. Snoussi, "A Dependent Multilabel
    Classification Method Derived from the k-Nearest Neighbor Rule", EURASIP J.
    Adv. Signal Process., 2011, section 5.1.1.

    Examples
    --------
    >>> from mlknn.metrics import example_accuracy
    >>> Y_true = [[1, 0, 1], [0, 1, 0], [0, 0, 0]]
    >>> Y_pred = [[1, 0, 0], [0, 1, 1], [0, 0, 0]]
    >>> round(example_accuracy(Y_true, Y_pred), 4)
    0.6667
    """
    yt, yp = _check_targets(Y_true, Y_pred)
    return _example_prf(yt, yp)[3]


@fill_doc
def example_precision(Y_true: MatrixLike, Y_pred: MatrixLike) -> float:
    r"""Example-based precision.

    .. math:: \mathrm{Precision}_{exam}(h) = \frac{1}{p}\sum_{i=1}^{p}
              \frac{|Y_i \cap h(x_i)|}{|h(x_i)|}

    An empty prediction scores 1 if the true set is empty too, else 0 (MULAN).
    scikit-learn's ``precision_score(average="samples", zero_division=1)``
    gives 1 to every empty prediction; the two differ by the fraction of
    instances with an empty prediction and a non-empty true set.

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
    example_recall : The example-based recall.
    example_f1 : The mean per-instance F-measure.
    macro_precision, micro_precision : The label-based precisions.

    References
    ----------
    M.-L. Zhang and Z.-H. Zhou, "A Review on Multi-Label Learning Algorithms",
    IEEE Transactions on Knowledge and Data Engineering, 2014, section on example-based metrics.

    Z. Younes, F. Abdallah, T. Denoeux and H. Snoussi, "A Dependent Multilabel
    Classification Method Derived from the k-Nearest Neighbor Rule", EURASIP J.
    Adv. Signal Process., 2011, section 5.1.1.

    Examples
    --------
    >>> from mlknn.metrics import example_precision
    >>> Y_true = [[1, 0, 1], [0, 1, 0], [0, 0, 0]]
    >>> Y_pred = [[1, 0, 0], [0, 1, 1], [0, 0, 0]]
    >>> round(example_precision(Y_true, Y_pred), 4)
    0.8333
    """
    yt, yp = _check_targets(Y_true, Y_pred)
    return _example_prf(yt, yp)[0]


@fill_doc
def example_recall(Y_true: MatrixLike, Y_pred: MatrixLike) -> float:
    r"""Example-based recall.

    .. math:: \mathrm{Recall}_{exam}(h) = \frac{1}{p}\sum_{i=1}^{p}
              \frac{|Y_i \cap h(x_i)|}{|Y_i|}

    An instance with no true label scores 1 if nothing is predicted for it,
    else 0 (MULAN). scikit-learn's ``recall_score(average="samples",
    zero_division=1)`` gives 1 to every instance with no true label.

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
    example_precision : The example-based precision.
    example_f1 : The mean per-instance F-measure.
    macro_recall, micro_recall : The label-based recalls.

    References
    ----------
    M.-L. Zhang and Z.-H. Zhou, "A Review on Multi-Label Learning Algorithms",
    IEEE Transactions on Knowledge and Data Engineering, 2014, section on example-based metrics.

    Z. Younes, F. Abdallah, T. Denoeux and H. Snoussi, "A Dependent Multilabel
    Classification Method Derived from the k-Nearest Neighbor Rule", EURASIP J.
    Adv. Signal Process., 2011, section 5.1.1.

    Examples
    --------
    >>> from mlknn.metrics import example_recall
    >>> Y_true = [[1, 0, 1], [0, 1, 0], [0, 0, 0]]
    >>> Y_pred = [[1, 0, 0], [0, 1, 1], [0, 0, 0]]
    >>> round(example_recall(Y_true, Y_pred), 4)
    0.8333
    """
    yt, yp = _check_targets(Y_true, Y_pred)
    return _example_prf(yt, yp)[1]


@fill_doc
def example_f1(Y_true: MatrixLike, Y_pred: MatrixLike, *, beta: float = 1.0) -> float:
    r"""Example-based F-measure: the mean over instances of the per-instance F-beta.

    .. math:: F^{\beta}_{exam}(h) = \frac{1}{p}\sum_{i=1}^{p}
              \frac{(1+\beta^2)\,|Y_i \cap h(x_i)|}{\beta^2 |Y_i| + |h(x_i)|}

    This is eq. (23) of Younes et al. (2011), MULAN's and scikit-learn's
    ``f1_score(average="samples", zero_division=1)``, with which it agrees on
    every input. Note that Zhang & Zhou's review writes the example-based F as
    the harmonic mean of the *averaged* precision and recall, which is a
    different number: :func:`example_f_of_means`. An instance with empty true
    and predicted sets scores 1.

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
    example_f_of_means : The review's harmonic mean of the averaged precision and recall.
    example_precision, example_recall : The two averages.
    macro_f1, micro_f1 : The label-based F-measures.

    References
    ----------
    Z. Younes, F. Abdallah, T. Denoeux and H. Snoussi, "A Dependent Multilabel
    Classification Method Derived from the k-Nearest Neighbor Rule", EURASIP J.
    Adv. Signal Process., 2011, eq. 23.

    M.-L. Zhang and Z.-H. Zhou, "A Review on Multi-Label Learning Algorithms",
    IEEE Transactions on Knowledge and Data Engineering, 2014, section on example-based metrics.

    Examples
    --------
    >>> from mlknn.metrics import example_f1
    >>> Y_true = [[1, 0, 1], [0, 1, 0], [0, 0, 0]]
    >>> Y_pred = [[1, 0, 0], [0, 1, 1], [0, 0, 0]]
    >>> round(example_f1(Y_true, Y_pred), 4)
    0.7778
    >>> round(example_f1(Y_true, Y_pred, beta=2.0), 4)
    0.7963
    """
    beta = _check_beta(beta)
    yt, yp = _check_targets(Y_true, Y_pred)
    return _example_prf(yt, yp, beta=beta)[2]


@fill_doc
def example_f_of_means(Y_true: MatrixLike, Y_pred: MatrixLike, *, beta: float = 1.0) -> float:
    r"""The review's example-based F-beta: the weighted harmonic mean of the averaged precision and recall.

    .. math:: F^{\beta}_{exam}(h) = \frac{(1+\beta^2)\,\mathrm{Precision}_{exam}(h)\,
              \mathrm{Recall}_{exam}(h)}{\beta^2\,\mathrm{Precision}_{exam}(h)
              + \mathrm{Recall}_{exam}(h)}

    (Zhang & Zhou 2014, the review's section on example-based metrics), with :func:`example_precision` and
    :func:`example_recall` (their 0/0 rules included). This is not
    :func:`example_f1`, the mean of per-instance F (Younes et al. eq. 23,
    MULAN, scikit-learn), which the ``f1`` key of :func:`evaluate` reports: the
    harmonic mean of two means is at least the mean of the harmonic means
    (e.g. instances with P, R = (1, 0) and (0, 1): this gives 0.5, the
    per-instance mean 0). When both averages are 0 it is 0.

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
    example_f1 : The mean of the per-instance F-measures (the ``f1`` key of :func:`evaluate`).
    example_precision, example_recall : The two averages combined here.

    References
    ----------
    M.-L. Zhang and Z.-H. Zhou, "A Review on Multi-Label Learning Algorithms",
    IEEE Transactions on Knowledge and Data Engineering, 2014, section on example-based metrics.

    Z. Younes, F. Abdallah, T. Denoeux and H. Snoussi, "A Dependent Multilabel
    Classification Method Derived from the k-Nearest Neighbor Rule", EURASIP J.
    Adv. Signal Process., 2011, section 5.1.1.

    Examples
    --------
    >>> from mlknn.metrics import example_f_of_means
    >>> Y_true = [[1, 0, 1], [0, 1, 0], [0, 0, 0]]
    >>> Y_pred = [[1, 0, 0], [0, 1, 1], [0, 0, 0]]
    >>> round(example_f_of_means(Y_true, Y_pred), 4)
    0.8333
    >>> round(example_f1(Y_true, Y_pred), 4)  # the mean of per-instance F differs
    0.7778
    """
    beta = _check_beta(beta)
    yt, yp = _check_targets(Y_true, Y_pred)
    p, r, _, _ = _example_prf(yt, yp)
    b2 = beta * beta
    den = b2 * p + r
    return float((1.0 + b2) * p * r / den) if den > 0 else 0.0
