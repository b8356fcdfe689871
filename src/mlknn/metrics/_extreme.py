"""Ranking measures of extreme multi-label classification: P@k, R@k, nDCG@k, PSP@k, PSnDCG@k.

These are the measures of the Extreme Classification Repository (Bhatia et al.,
http://manikvarma.org/downloads/XC/XMLRepository.html) and of Jain, Prabhu and
Varma, "Extreme Multi-label Loss Functions for Recommendation, Tagging,
Ranking & Other Missing Label Applications", KDD 2016 (propensity-scored
variants, section 3). The normalisations are those of the repository's tables
as computed by pyxclib (``xclib/evaluation/xc_metrics.py``) and napkinXC
(``napkinxc/measures.py``); where those two differ (nDCG's ideal DCG) we follow
the repository's written definition, which is pyxclib's.

Inputs
------
``Y_true``
    0/1 indicator matrix (n, q), dense or scipy sparse. It is converted to
    CSR; a dense (n, q) array is never made from a sparse one.
``Y_score``, one of
    * a dense (n, q) array of finite scores: every label is ranked;
    * a scipy sparse (n, q) matrix: only the *stored* entries of a row are its
      predictions (an absent label is not predicted at all, it does not score
      0), so a row with fewer than k stored entries has empty slots that count
      as misses (pyxclib's convention);
    * the pair ``(labels, scores)`` returned by ``predict_topk``: a tuple of
      two 2-D ndarrays of shape (n, m), ``labels`` of integer dtype with values
      in ``[0, q)`` or ``-1`` for an empty slot, ``m >= k``.

Ranking rule: decreasing score, ties broken by the lower label index - the
rule of ``predict_topk``, so the three representations of the same scores
give the same value.

Conventions (rows with fewer than k or no true labels)
------------------------------------------------------
Every test row counts in every mean, as in the repository's tables:

* ``P@k`` divides by k even when the row has fewer than k true labels (so its
  best achievable value is below 1); a row without true labels scores 0.
* ``R@k`` divides by the row's number of true labels; a row without true
  labels scores 0 (napkinXC's ``zero_division=0``, pyxclib).
* ``nDCG@k`` divides by the DCG of an ideal ranking of the row's own labels,
  ``sum_{l=1}^{min(k, |y_i|)} 1/log2(l+1)``; a row without true labels
  scores 0.
* ``PSP@k`` and ``PSnDCG@k`` are ratios of sums over all rows; rows without
  true labels add 0 above and below. If no row has a true label (denominator
  0) the value is NaN with an :class:`~sklearn.exceptions.UndefinedMetricWarning`.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.exceptions import UndefinedMetricWarning

from ..utils._docstrings import fill_doc
from ..utils._param_validation import Integral, Interval, Real, validate_params
from ..utils._typing import MatrixLike, SparseMatrix
from ._extreme_inputs import check_true, hits, ranked_labels

__all__ = [
    "inverse_propensity",
    "ndcg_at_k",
    "precision_at_k",
    "psndcg_at_k",
    "psprecision_at_k",
    "recall_at_k",
]

_Y_TRUE: list[Any] = ["array-like", "sparse matrix"]
_Y_SCORE: list[Any] = ["array-like", "sparse matrix", tuple]
_K: list[Any] = [Interval(Integral, 1, None, closed="left")]


def _check_inv_propensity(inv_propensity: ArrayLike, q: int) -> NDArray[np.float64]:
    w = np.asarray(inv_propensity, dtype=np.float64)
    if w.shape != (q,):
        raise ValueError(
            f"inv_propensity must have shape (n_labels,) = ({q},); got shape {w.shape}."
        )
    if not np.isfinite(w).all() or np.any(w < 0):
        raise ValueError("inv_propensity must contain only finite non-negative values.")
    return w


def _discounts(k: int) -> NDArray[np.float64]:
    return 1.0 / np.log2(np.arange(2, k + 2, dtype=np.float64))


def _best_weights(Y: SparseMatrix, w: NDArray[np.float64], k: int) -> NDArray[np.float64]:
    """(n, k): the k largest weights among each row's true labels, 0-padded."""
    n = Y.shape[0]
    counts = np.diff(Y.indptr)
    rows = np.repeat(np.arange(n), counts)
    wt = w[Y.indices]
    order = np.lexsort((-wt, rows))
    rank = np.arange(order.size) - np.repeat(Y.indptr[:-1], counts)
    keep = rank < k
    out = np.zeros((n, k))
    out[rows[keep], rank[keep]] = wt[order[keep]]
    return out


def _ideal_dcg(Y: SparseMatrix, k: int) -> NDArray[np.float64]:
    """Per row: sum_{l=1}^{min(k, |y_i|)} 1/log2(l+1) (0 for a row without labels)."""
    cum = np.concatenate([[0.0], np.cumsum(_discounts(k))])
    ideal: NDArray[np.float64] = cum[np.minimum(np.diff(Y.indptr), k)]  # scipy is untyped: Any index
    return ideal


def _ratio(num: float, den: float, metric: str) -> float:
    if den == 0:
        warnings.warn(
            f"{metric} is undefined: no row of Y_true has a true label. Returning NaN.",
            UndefinedMetricWarning,
            stacklevel=3,
        )
        return float("nan")
    return float(num / den)


def _prepare(
    Y_true: MatrixLike, Y_score: MatrixLike, k: int
) -> tuple[SparseMatrix, NDArray[np.int64], NDArray[np.bool_]]:
    """Validated CSR ``Y_true``, the (n, k) ranking and its (n, k) hit matrix."""
    Y = check_true(Y_true)
    L = ranked_labels(Y_score, Y.shape, k)
    return Y, L, hits(Y, L)


# Each takes the first k columns of a ranking/hit matrix computed for k or more,
# so evaluate(at_k=(1, 3, 5)) ranks once.


def _precision(Y: SparseMatrix, L: NDArray[np.int64], H: NDArray[np.bool_], k: int) -> float:
    return float(H[:, :k].sum(axis=1).mean() / k)


def _recall(Y: SparseMatrix, L: NDArray[np.int64], H: NDArray[np.bool_], k: int) -> float:
    n_true = np.diff(Y.indptr)
    per_row = np.divide(
        H[:, :k].sum(axis=1), n_true, out=np.zeros(Y.shape[0]), where=n_true > 0
    )
    return float(per_row.mean())


def _ndcg(Y: SparseMatrix, L: NDArray[np.int64], H: NDArray[np.bool_], k: int) -> float:
    ideal = _ideal_dcg(Y, k)
    dcg = H[:, :k] @ _discounts(k)
    return float(
        np.divide(dcg, ideal, out=np.zeros(Y.shape[0]), where=ideal > 0).mean()
    )


def _gains(L: NDArray[np.int64], H: NDArray[np.bool_], w: NDArray[np.float64], k: int) -> NDArray[np.float64]:
    return np.where(H[:, :k], w[np.maximum(L[:, :k], 0)], 0.0)


def _psprecision(Y: SparseMatrix, L: NDArray[np.int64], H: NDArray[np.bool_], k: int, w: NDArray[np.float64]) -> float:
    return _ratio(
        _gains(L, H, w, k).sum(), _best_weights(Y, w, k).sum(), "psprecision_at_k"
    )


def _psndcg(Y: SparseMatrix, L: NDArray[np.int64], H: NDArray[np.bool_], k: int, w: NDArray[np.float64]) -> float:
    disc = _discounts(k)
    ideal = _ideal_dcg(Y, k)
    scale = np.divide(1.0, ideal, out=np.zeros(Y.shape[0]), where=ideal > 0)
    got = (_gains(L, H, w, k) @ disc) * scale
    best = (_best_weights(Y, w, k) @ disc) * scale
    return _ratio(got.sum(), best.sum(), "psndcg_at_k")


# --------------------------------------------------------------------------
# The measures
# --------------------------------------------------------------------------

_COMMON: dict[str, list[Any]] = {"Y_true": _Y_TRUE, "Y_score": _Y_SCORE, "k": _K}
_PS: dict[str, list[Any]] = {**_COMMON, "inv_propensity": ["array-like"]}


@validate_params(_COMMON, prefer_skip_nested_validation=True)
@fill_doc
def precision_at_k(Y_true: MatrixLike, Y_score: MatrixLike, k: int = 5) -> float:
    """Precision at k: the mean over rows of (true labels among the top k) / k.

    ``P@k = 1/n sum_i 1/k sum_{l in top_k(i)} y_il``, the Extreme
    Classification Repository's P@k. Not renormalised for rows with fewer
    than k true labels (their best value is ``|y_i| / k``); rows without true
    labels score 0.

    Parameters
    ----------
    {Y_true}
    Y_score : array-like, sparse matrix or tuple
        Dense scores (n_samples, n_labels), sparse scores (only stored
        entries are predictions) or the ``(labels, scores)`` pair of
        ``predict_topk`` with at least k columns. Ties: lower label first.
    k : int, default=5
        Cut-off, >= 1.

    Returns
    -------
    value : float

    See Also
    --------
    recall_at_k, ndcg_at_k : The other top-k measures.
    psprecision_at_k : The propensity-scored precision at k.

    References
    ----------
    K. Bhatia et al., The Extreme Classification Repository,
    http://manikvarma.org/downloads/XC/XMLRepository.html.

    Examples
    --------
    >>> import numpy as np
    >>> Y = np.array([[1, 0, 1, 0], [0, 1, 0, 0]])
    >>> S = np.array([[0.9, 0.8, 0.1, 0.0], [0.2, 0.7, 0.3, 0.1]])
    >>> precision_at_k(Y, S, k=1), precision_at_k(Y, S, k=2)
    (1.0, 0.5)
    """
    return _precision(*_prepare(Y_true, Y_score, k), k)


@validate_params(_COMMON, prefer_skip_nested_validation=True)
@fill_doc
def recall_at_k(Y_true: MatrixLike, Y_score: MatrixLike, k: int = 5) -> float:
    """Recall at k: the mean over rows of (true labels among the top k) / (true labels).

    ``R@k = 1/n sum_i |top_k(i) & y_i| / |y_i|``; a row without true labels
    scores 0 (and still counts in the mean).

    Parameters
    ----------
    {Y_true}
    Y_score : array-like, sparse matrix or tuple
        As in :func:`precision_at_k`.
    k : int, default=5
        Cut-off, >= 1.

    Returns
    -------
    value : float

    See Also
    --------
    precision_at_k, ndcg_at_k : The other top-k measures.

    References
    ----------
    K. Bhatia et al., The Extreme Classification Repository,
    http://manikvarma.org/downloads/XC/XMLRepository.html.

    Examples
    --------
    >>> import numpy as np
    >>> Y = np.array([[1, 0, 1, 0], [0, 1, 0, 0]])
    >>> S = np.array([[0.9, 0.8, 0.1, 0.0], [0.2, 0.7, 0.3, 0.1]])
    >>> recall_at_k(Y, S, k=1)
    0.75
    """
    return _recall(*_prepare(Y_true, Y_score, k), k)


@validate_params(_COMMON, prefer_skip_nested_validation=True)
@fill_doc
def ndcg_at_k(Y_true: MatrixLike, Y_score: MatrixLike, k: int = 5) -> float:
    """Normalised discounted cumulative gain at k.

    ``nDCG@k = 1/n sum_i DCG_i / IDCG_i`` with ``DCG_i = sum_{r=1}^{k}
    y_{i,l_r} / log2(r+1)`` over the ranked labels ``l_1..l_k`` and
    ``IDCG_i = sum_{r=1}^{min(k, |y_i|)} 1/log2(r+1)``, the DCG of a perfect
    ranking of the row's own labels (the repository's definition; pyxclib).
    A row without true labels scores 0.

    Parameters
    ----------
    {Y_true}
    Y_score : array-like, sparse matrix or tuple
        As in :func:`precision_at_k`.
    k : int, default=5
        Cut-off, >= 1.

    Returns
    -------
    value : float

    See Also
    --------
    precision_at_k, recall_at_k : The other top-k measures.
    psndcg_at_k : The propensity-scored nDCG at k.

    References
    ----------
    K. Bhatia et al., The Extreme Classification Repository,
    http://manikvarma.org/downloads/XC/XMLRepository.html.

    Examples
    --------
    >>> import numpy as np
    >>> Y = np.array([[1, 0, 1, 0]])
    >>> S = np.array([[0.9, 0.8, 0.1, 0.0]])
    >>> round(ndcg_at_k(Y, S, k=2), 6)  # 1 / (1 + 1/log2(3))
    0.613147
    """
    return _ndcg(*_prepare(Y_true, Y_score, k), k)


@validate_params(_PS, prefer_skip_nested_validation=True)
@fill_doc
def psprecision_at_k(Y_true: MatrixLike, Y_score: MatrixLike, inv_propensity: ArrayLike, k: int = 5) -> float:
    """Propensity-scored precision at k, normalised by the best achievable PSP@k.

    Jain, Prabhu and Varma (KDD 2016), eq. 3 with weights ``w_l = 1/p_l``:
    ``PSP@k = sum_i sum_{l in top_k(i)} w_l y_il / sum_i sum_{l in best_k(i)} w_l``
    where ``best_k(i)`` are the (at most k) true labels of row i with the
    largest weights. Numerator and denominator are both sums over all rows
    (the 1/(nk) factors cancel), as in pyxclib's ``psprecision`` and
    napkinXC's ``psprecision_at_k``, which the repository's tables report; so
    1.0 is a perfect ranking. NaN (with an ``UndefinedMetricWarning``) when
    no row has a true label.

    Parameters
    ----------
    {Y_true}
    Y_score : array-like, sparse matrix or tuple
        As in :func:`precision_at_k`.
    inv_propensity : array-like of shape (n_labels,)
        Non-negative inverse propensities ``1/p_l``, e.g. from
        :func:`inverse_propensity` on the training labels.
    k : int, default=5
        Cut-off, >= 1.

    Returns
    -------
    value : float

    See Also
    --------
    inverse_propensity : The weights this measure takes.
    precision_at_k : The unweighted measure.

    References
    ----------
    H. Jain, Y. Prabhu and M. Varma, "Extreme Multi-label Loss Functions for
    Recommendation, Tagging, Ranking & Other Missing Label Applications", KDD 2016,
    section 3.

    K. Bhatia et al., The Extreme Classification Repository,
    http://manikvarma.org/downloads/XC/XMLRepository.html.

    Examples
    --------
    >>> import numpy as np
    >>> Y = np.array([[1, 0, 1]])
    >>> S = np.array([[0.9, 0.5, 0.1]])
    >>> psprecision_at_k(Y, S, [1.0, 1.0, 3.0], k=1)  # got w=1, best was w=3
    0.3333333333333333
    """
    Y, L, H = _prepare(Y_true, Y_score, k)
    return _psprecision(Y, L, H, k, _check_inv_propensity(inv_propensity, Y.shape[1]))


@validate_params(_PS, prefer_skip_nested_validation=True)
@fill_doc
def psndcg_at_k(Y_true: MatrixLike, Y_score: MatrixLike, inv_propensity: ArrayLike, k: int = 5) -> float:
    """Propensity-scored nDCG at k, normalised by the best achievable value.

    Per row, ``PSDCG_i = sum_{r=1}^{k} w_{l_r} y_{i,l_r} / log2(r+1)`` and
    the same sum for the ideal ranking of the row's labels by decreasing
    weight; each is divided by the row's ``IDCG_i`` of :func:`ndcg_at_k`, and
    the value is ``sum_i PSDCG_i / IDCG_i`` over ``sum_i bestPSDCG_i / IDCG_i``
    (pyxclib's ``psndcg``). Rows without true labels add 0 to both sums; NaN
    (with an ``UndefinedMetricWarning``) when no row has a true label.

    Parameters
    ----------
    {Y_true}
    Y_score : array-like, sparse matrix or tuple
        As in :func:`precision_at_k`.
    inv_propensity : array-like of shape (n_labels,)
        Non-negative inverse propensities, see :func:`psprecision_at_k`.
    k : int, default=5
        Cut-off, >= 1.

    Returns
    -------
    value : float

    See Also
    --------
    inverse_propensity : The weights this measure takes.
    ndcg_at_k : The unweighted measure.

    References
    ----------
    H. Jain, Y. Prabhu and M. Varma, "Extreme Multi-label Loss Functions for
    Recommendation, Tagging, Ranking & Other Missing Label Applications", KDD 2016,
    section 3.

    K. Bhatia et al., The Extreme Classification Repository,
    http://manikvarma.org/downloads/XC/XMLRepository.html.

    Examples
    --------
    >>> import numpy as np
    >>> Y = np.array([[1, 0, 1]])
    >>> psndcg_at_k(Y, np.array([[0.5, 0.1, 0.9]]), [1.0, 1.0, 3.0], k=2)  # labels 2, 0: ideal
    1.0
    >>> round(psndcg_at_k(Y, np.array([[0.1, 0.5, 0.9]]), [1.0, 1.0, 3.0], k=2), 4)
    0.8262
    """
    Y, L, H = _prepare(Y_true, Y_score, k)
    return _psndcg(Y, L, H, k, _check_inv_propensity(inv_propensity, Y.shape[1]))


@validate_params(
    {
        "Y_train": _Y_TRUE,
        "A": [Interval(Real, 0, None, closed="neither")],
        "B": [Interval(Real, 0, None, closed="neither")],
    },
    prefer_skip_nested_validation=True,
)
def inverse_propensity(Y_train: MatrixLike, A: float = 0.55, B: float = 1.5) -> NDArray[np.float64]:
    """Inverse label propensities ``1/p_l`` of Jain, Prabhu and Varma (KDD 2016).

    ``1/p_l = 1 + C (N_l + B)^(-A)`` with ``C = (ln N - 1)(B + 1)^A``, N the
    number of training rows and N_l the number of those carrying label l
    (section 3 of the paper; pyxclib's ``compute_inv_propesity``, napkinXC's
    ``inverse_propensity``). A label never seen in training gets the largest
    weight, ``1 + C B^(-A)``. For N < e (fewer than 3 rows) C is negative and
    the weights drop below 1; the formula is meant for real training sets.

    Parameters
    ----------
    Y_train : array-like or sparse matrix of shape (n_samples, n_labels)
        Training 0/1 indicator matrix (kept sparse).
    A : float, default=0.55
        Exponent; the paper uses 0.5 for WikiLSHTC-325K, 0.6 for Amazon-670K
        and 0.55 elsewhere.
    B : float, default=1.5
        Offset; 0.4 for WikiLSHTC-325K, 2.6 for Amazon-670K, 1.5 elsewhere.

    Returns
    -------
    inv_propensity : ndarray of shape (n_labels,), dtype float64

    See Also
    --------
    psprecision_at_k, psndcg_at_k : The measures that take these weights.

    References
    ----------
    H. Jain, Y. Prabhu and M. Varma, "Extreme Multi-label Loss Functions for
    Recommendation, Tagging, Ranking & Other Missing Label Applications", KDD 2016,
    section 3.

    K. Bhatia et al., The Extreme Classification Repository,
    http://manikvarma.org/downloads/XC/XMLRepository.html.

    Examples
    --------
    >>> import numpy as np
    >>> w = inverse_propensity(np.array([[1, 0], [1, 0], [1, 1], [1, 0]] * 25))
    >>> bool(w[1] > w[0] > 1.0)
    True
    """
    Y = check_true(Y_train, name="Y_train")
    n = Y.shape[0]
    freq = np.bincount(Y.indices, minlength=Y.shape[1]).astype(np.float64)
    C = (np.log(n) - 1.0) * (B + 1.0) ** A
    w: NDArray[np.float64] = 1.0 + C * (freq + B) ** (-A)  # n is Any (scipy is untyped)
    return w
