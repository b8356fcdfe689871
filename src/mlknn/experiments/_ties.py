"""The ranking measures of a cell under several tie rules, stored beside the default.

:func:`mlknn.metrics.evaluate` ranks tied labels pessimistically by default
(``ties="pessimistic"``). Published tables were computed with other rules: the
Matlab evaluation of Younes et al. (2011) mixes three (docs/reproduction.md), MULAN ranks by
Weka's stable sort. A cell therefore also stores each measure that takes
``ties=`` under every rule of :data:`TIE_VARIANTS`, as ``"<metric>[<rule>]"``
(e.g. ``"coverage[mulan]"``). The default rule keeps the plain key, so the keys
of earlier databases are unchanged; their cells simply lack the variants.

An experiment asks for them with ``ExperimentConfig.ties`` (the reproduction
presets ask for every rule). The rules are those of :func:`mlknn.metrics.evaluate` (``"average"``,
``"optimistic"``, ``"mulan"``) and one the harness adds:

``"mulan-reversed"``
    ``ties="mulan"`` on the labels in reverse order: among labels whose scores
    are within 1e-6 the *lower* label index ranks higher. For one-error this is
    the label that Matlab's ``[~, i] = max(f)`` returns (the first maximum),
    the reading of Younes et al.'s (2011) One_error.m that docs/reproduction.md found.
"""

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..utils._typing import LabelMatrix, MatrixLike

__all__ = ["RANKING_METRICS", "TIE_READINGS", "TIE_VARIANTS", "base_metric", "is_tie_variant", "tie_rule_of",
           "tie_variant_values", "variant_key"]

#: The :func:`~mlknn.metrics.evaluate` keys that take ``ties=``.
RANKING_METRICS = ("one_error", "coverage", "ranking_loss", "average_precision")

#: The tie rules stored besides the default ``"pessimistic"`` (plain keys).
TIE_VARIANTS = ("average", "optimistic", "mulan", "mulan-reversed")

#: Every rule a paper column may name for a ranking measure.
TIE_READINGS = ("pessimistic",) + TIE_VARIANTS


def variant_key(metric: str, rule: str) -> str:
    """The stored key of ``metric`` under tie rule ``rule`` (the plain key for ``"pessimistic"``)."""
    return metric if rule == "pessimistic" else f"{metric}[{rule}]"


def base_metric(key: str) -> str:
    """``"coverage[mulan]"`` -> ``"coverage"``; any other key unchanged."""
    return key.split("[", 1)[0] if key.endswith("]") and "[" in key else key


def tie_rule_of(key: str) -> str | None:
    """The tie rule of a stored key: the bracketed rule, ``"pessimistic"`` for a
    plain ranking measure, None for a measure without ties."""
    base = base_metric(key)
    if base != key:
        return key[len(base) + 1 : -1]
    return "pessimistic" if key in RANKING_METRICS else None


def is_tie_variant(key: str) -> bool:
    """Whether ``key`` is a ranking measure under a non-default tie rule."""
    return base_metric(key) != key and base_metric(key) in RANKING_METRICS


def tie_variant_values(
    Y_true: LabelMatrix, Y_pred: MatrixLike, Y_score: Any, rules: Sequence[str] = TIE_VARIANTS
) -> dict[str, float]:
    """The ranking measures under tie rules of :data:`TIE_VARIANTS`.

    Parameters
    ----------
    Y_true, Y_pred : array-like or sparse matrix of shape (n, q)
    Y_score : ndarray of shape (n, q) or None
        The dense scores the cell evaluated (None: ``Y_pred`` is the ranking,
        as in :func:`~mlknn.metrics.evaluate`).
    rules : sequence of str, default=TIE_VARIANTS

    Returns
    -------
    dict of str to float
        ``variant_key(metric, rule)`` for every metric of :data:`RANKING_METRICS`
        and rule of ``rules``; each equals
        ``evaluate(Y_true, Y_pred, Y_score, ties=rule)[metric]`` (``"mulan"`` on
        the columns in reverse order for ``"mulan-reversed"``).
    """
    from ..metrics import evaluate

    out: dict[str, float] = {}
    q = Y_true.shape[1]
    reverse = np.arange(q - 1, -1, -1)
    # An undefined ranking measure (no non-degenerate instance) is undefined under every
    # rule, and the default evaluation has already recorded that warning: not repeated.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for rule in rules:
            if rule == "mulan-reversed":
                S = None if Y_score is None else np.asarray(Y_score)[:, reverse]
                values = evaluate(Y_true[:, reverse], Y_pred[:, reverse], S, ties="mulan")
            else:
                values = evaluate(Y_true, Y_pred, Y_score, ties=rule)  # type: ignore[arg-type]
            for m in RANKING_METRICS:
                out[variant_key(m, rule)] = values[m]
    return out
