"""``evaluate(..., at_k=...)``: the extreme-classification keys, and what is skipped at large q.

:func:`mlknn.metrics.evaluate` hands over to :func:`evaluate_at_k` when it is
given ``at_k`` or ``inv_propensity``. The ranking is computed once for the
largest k; the keys are ``precision@k``, ``recall@k``, ``ndcg@k`` for each k
and, with ``inv_propensity``, ``psprecision@k`` and ``psndcg@k``.

The measures of :data:`~mlknn.metrics.METRIC_NAMES` densify ``Y_true``,
``Y_pred`` and ``Y_score`` to (n, q) and sort every row of the scores. They are
skipped, with a :class:`MetricSkippedWarning` naming each and why, and listed
in the ``skipped`` attribute of the returned dict, when

* n x q exceeds :data:`DENSE_METRICS_MAX_CELLS` (too costly: dense copies of
  the label and score matrices; at that size the macro measures average over
  mostly absent labels anyway);
* ``Y_score`` is the ``(labels, scores)`` pair of ``predict_topk`` (the
  ranking measures and AUCs need every label's score);
* ``Y_pred`` is None (the bipartition measures need it).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..utils._typing import MatrixLike
from ._all_metrics import METRIC_NAMES, all_metrics
from ._extreme import (
    _check_inv_propensity,
    _ndcg,
    _precision,
    _psndcg,
    _psprecision,
    _recall,
)
from ._extreme_inputs import check_true, hits, is_topk_pair, ranked_labels

__all__ = [
    "DENSE_METRICS_MAX_CELLS",
    "EvaluationResult",
    "MetricSkippedWarning",
    "evaluate_at_k",
]

#: Largest n_samples x n_labels for which ``evaluate`` still computes the
#: dense measures when ``at_k`` is given (20 M cells: 160 MB per float64 copy).
DENSE_METRICS_MAX_CELLS = 20_000_000

# The measures of METRIC_NAMES that read the scores (the rest read Y_pred).
_SCORE_MEASURES = (
    "one_error",
    "coverage",
    "ranking_loss",
    "average_precision",
    "macro_auc",
    "micro_auc",
)


class MetricSkippedWarning(UserWarning):
    """:func:`~mlknn.metrics.evaluate` left measures out of its result.

    Issued by ``evaluate(..., at_k=...)`` when a measure is too costly at this
    n x q or cannot be computed from the inputs given; the message names each
    measure and the reason, and the result's ``skipped`` attribute holds the
    same as a dict.

    Attributes
    ----------
    args : tuple
        ``(message,)``.

    See Also
    --------
    EvaluationResult : the returned dict, with ``skipped``.

    References
    ----------
    .. [1] Bhatia et al., The Extreme Classification Repository,
       http://manikvarma.org/downloads/XC/XMLRepository.html

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from mlknn.metrics import evaluate
    >>> Y = np.array([[1, 0, 1], [0, 1, 0]])
    >>> pair = (np.array([[0, 1], [1, 0]]), np.array([[0.9, 0.2], [0.8, 0.1]]))
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     res = evaluate(Y, Y, pair, at_k=1)
    >>> w[0].category.__name__, res["precision@1"]
    ('MetricSkippedWarning', 1.0)
    """


class EvaluationResult(dict[str, float]):
    """The dict returned by ``evaluate(..., at_k=...)`` (name -> float), with ``skipped``.

    Parameters
    ----------
    values : dict of str to float
        The measures computed.
    skipped : dict of str to str
        The measures left out, each with its reason.

    Attributes
    ----------
    skipped : dict of str to str
        Each measure left out, with the reason (empty if none was).

    See Also
    --------
    MetricSkippedWarning : issued with the same information.

    References
    ----------
    .. [1] Bhatia et al., The Extreme Classification Repository,
       http://manikvarma.org/downloads/XC/XMLRepository.html

    Examples
    --------
    >>> res = EvaluationResult({"precision@1": 0.5}, {"coverage": "why"})
    >>> res["precision@1"], res.skipped
    (0.5, {'coverage': 'why'})
    """

    def __init__(self, values: Mapping[str, float], skipped: Mapping[str, str]) -> None:
        super().__init__(values)
        self.skipped: dict[str, str] = dict(skipped)


def _check_at_k(at_k: int | Sequence[int]) -> tuple[int, ...]:
    bad = ValueError(
        f"at_k must be a positive int or a sequence of positive ints; got {at_k!r}."
    )
    ks: tuple[int | np.integer[Any], ...]
    if isinstance(at_k, (int, np.integer)) and not isinstance(at_k, bool):
        ks = (at_k,)
    elif isinstance(at_k, (str, bytes, bool)) or not np.iterable(at_k):
        raise bad
    else:
        ks = tuple(at_k)
    if not ks or any(
        isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1 for k in ks
    ):
        raise bad
    return tuple(sorted({int(k) for k in ks}))


def evaluate_at_k(
    Y_true: MatrixLike,
    Y_pred: MatrixLike | None,
    Y_score: MatrixLike,
    *,
    at_k: int | Sequence[int] | None,
    inv_propensity: ArrayLike | None,
) -> EvaluationResult:
    """The body of :func:`~mlknn.metrics.evaluate` when ``at_k`` or ``inv_propensity`` is given.

    Parameters
    ----------
    Y_true, Y_pred, Y_score
        As in ``evaluate``; here ``Y_true`` and ``Y_pred`` may be sparse at any
        q, ``Y_pred`` may be None and ``Y_score`` may be the ``(labels,
        scores)`` pair of ``predict_topk``.
    at_k : int or sequence of int or None
        Cut-offs; None means (1, 3, 5).
    inv_propensity : array-like of shape (n_labels,) or None
        Adds ``psprecision@k`` and ``psndcg@k``.

    Returns
    -------
    results : EvaluationResult
    """
    ks = _check_at_k((1, 3, 5) if at_k is None else at_k)
    if Y_score is None:
        raise ValueError(
            "Y_score is required with at_k: dense scores, sparse scores or the "
            "(labels, scores) pair of predict_topk; got None."
        )
    Y = check_true(Y_true)
    n, q = Y.shape
    w = None if inv_propensity is None else _check_inv_propensity(inv_propensity, q)
    pair = is_topk_pair(Y_score)

    if n * q > DENSE_METRICS_MAX_CELLS:
        skip_all = (
            f"n_samples x n_labels = {n:,} x {q:,} = {n * q:,} cells exceeds "
            f"DENSE_METRICS_MAX_CELLS = {DENSE_METRICS_MAX_CELLS:,}: these measures "
            "densify Y_true, Y_pred and Y_score"
        )
    elif Y_pred is None and pair:
        skip_all = "Y_pred is None and Y_score is a top-k (labels, scores) pair"
    else:
        skip_all = None

    values: dict[str, float]
    skipped: dict[str, str]
    if skip_all is not None:
        values, skipped = {}, dict.fromkeys(METRIC_NAMES, skip_all)
    else:
        # A stand-in replaces what is missing; the measures it feeds are dropped.
        values = dict(
            all_metrics(
                Y_true, Y_true if Y_pred is None else Y_pred, None if pair else Y_score, "pessimistic"
            )
        )
        skipped = {}
        if pair:
            skipped.update(
                dict.fromkeys(
                    _SCORE_MEASURES,
                    "Y_score is a top-k (labels, scores) pair; these need every label's score",
                )
            )
        if Y_pred is None:
            skipped.update(
                {m: "Y_pred is None" for m in METRIC_NAMES if m not in _SCORE_MEASURES}
            )
        for name in skipped:
            del values[name]

    L = ranked_labels(Y_score, Y.shape, max(ks))
    H = hits(Y, L)
    for k in ks:
        values[f"precision@{k}"] = _precision(Y, L, H, k)
        values[f"recall@{k}"] = _recall(Y, L, H, k)
        values[f"ndcg@{k}"] = _ndcg(Y, L, H, k)
        if w is not None:
            values[f"psprecision@{k}"] = _psprecision(Y, L, H, k, w)
            values[f"psndcg@{k}"] = _psndcg(Y, L, H, k, w)
    if skipped:
        by_reason: dict[str, list[str]] = {}
        for name, why in skipped.items():
            by_reason.setdefault(why, []).append(name)
        msg = "; ".join(
            f"{', '.join(names)} ({why})" for why, names in by_reason.items()
        )
        warnings.warn(f"evaluate skipped {msg}.", MetricSkippedWarning, stacklevel=3)
    return EvaluationResult({k: float(v) for k, v in values.items()}, skipped)
