"""All metrics at once: :func:`evaluate` (the table of names in ``_all_metrics.py``)."""

from collections.abc import Sequence

from numpy.typing import ArrayLike

from ..utils._docstrings import fill_doc
from ..utils._typing import MatrixLike
from ._all_metrics import all_metrics
from ._evaluate_at_k import evaluate_at_k
from ._ranking import TieRule, _check_ties

__all__ = ["evaluate"]


@fill_doc
def evaluate(
    Y_true: MatrixLike,
    Y_pred: MatrixLike | None,
    Y_score: MatrixLike | None,
    *,
    ties: TieRule = "pessimistic",
    at_k: int | Sequence[int] | None = None,
    inv_propensity: ArrayLike | None = None,
) -> dict[str, float]:
    """Compute every metric of :data:`METRIC_NAMES` in one pass.

    ``accuracy``, ``precision``, ``recall`` and ``f1`` are the example-based
    measures (:func:`example_accuracy` and so on); ``macro_accuracy`` and
    ``micro_accuracy`` the label-based accuracy of Zhang and Zhou's (2014) label-based metrics (both
    equal ``1 - hamming_loss`` up to rounding, see :func:`macro_accuracy`). The inputs are validated
    once, and the rankings used by the four ranking metrics are computed once.

    Parameters
    ----------
    {Y_true}
    Y_pred : array-like or sparse matrix of shape (n_samples, n_labels)
        Predicted 0/1 indicator matrix (the bipartition ``h``).
    Y_score : array-like, sparse matrix or None
        Real-valued scores of shape (n_samples, n_labels) (the ranking function
        ``f``), higher meaning more relevant; must be finite. This argument is
        required. Passing ``None`` explicitly uses ``Y_pred`` as the scores:
        the ranking metrics and AUCs then rate a two-level ranking whose ties
        are resolved against the ranker (see the convention table), which is
        usually much worse than rating real scores.
    ties : {"pessimistic", "average", "optimistic", "mulan"}, default="pessimistic"
        How the four ranking measures rank labels with equal scores (see
        :func:`one_error` and ``docs/metrics.md``).
    at_k : int or sequence of int, default=None
        Also return ``precision@k``, ``recall@k`` and ``ndcg@k`` for each k
        (see :mod:`mlknn.metrics._extreme`). ``Y_true``/``Y_pred`` may then be
        sparse at any q, ``Y_pred`` None and ``Y_score`` the ``(labels,
        scores)`` pair of ``predict_topk``; the measures above that this
        makes too costly or impossible are left out, named with their reason
        in a ``MetricSkippedWarning`` and in the result's ``skipped`` dict
        (:mod:`mlknn.metrics._evaluate_at_k`).
    inv_propensity : array-like of shape (n_labels,), default=None
        Also return ``psprecision@k`` and ``psndcg@k`` (implies
        ``at_k=(1, 3, 5)`` when ``at_k`` is None).

    Returns
    -------
    results : dict of str to float
        Exactly the keys of :data:`METRIC_NAMES`, in that order, each a Python
        float. A metric that is undefined on this input (see the convention
        table: no non-degenerate instance for the ranking metrics, no label
        with both classes for ``macro_auc``, a constant ``Y_true`` for
        ``micro_auc``) is NaN, with an
        :class:`~sklearn.exceptions.UndefinedMetricWarning`.

    Raises
    ------
    ValueError
        If an input is not a 2-D array of the right kind and shape.

    See Also
    --------
    METRIC_NAMES : The keys of the result, in order.
    hamming_loss, example_f1, macro_f1, micro_f1, one_error, coverage, ranking_loss, average_precision : The single measures.
    precision_at_k, ndcg_at_k : The top-k measures that ``at_k`` adds.

    References
    ----------
    M.-L. Zhang and Z.-H. Zhou, "A Review on Multi-Label Learning Algorithms",
    IEEE Transactions on Knowledge and Data Engineering, 2014, example-based and label-based metrics.

    Z. Younes, F. Abdallah, T. Denoeux and H. Snoussi, "A Dependent Multilabel
    Classification Method Derived from the k-Nearest Neighbor Rule", EURASIP J.
    Adv. Signal Process., 2011, section 5.1.

    Examples
    --------
    >>> import numpy as np
    >>> Y = np.array([[1, 0, 1], [0, 1, 0]])
    >>> res = evaluate(Y, Y, Y * 0.9 + 0.05)
    >>> res["hamming_loss"], res["ranking_loss"], res["macro_auc"]
    (0.0, 0.0, 1.0)
    """
    _check_ties(ties)
    if at_k is not None or inv_propensity is not None:
        if ties != "pessimistic":
            raise ValueError(
                f"evaluate(..., ties={ties!r}) with at_k or inv_propensity is not supported yet; "
                "compute the ranking measures with a separate evaluate(..., ties=...) call."
            )
        return evaluate_at_k(Y_true, Y_pred, Y_score, at_k=at_k, inv_propensity=inv_propensity)
    return all_metrics(Y_true, Y_pred, Y_score, ties)
