"""Multi-label evaluation measures.

Definitions follow Zhang & Zhou, "A Review on Multi-Label Learning
Algorithms", IEEE TKDE 2014 (its example-based and label-based metrics) and
Younes et al., EURASIP J. Adv. Signal Process. 2011, section 5.1. Inputs:
``Y_true`` and ``Y_pred`` are 0/1 indicator matrices of shape
(n_samples, n_labels) (dense or scipy sparse); ``Y_score`` is a finite real
matrix of the same shape, higher meaning more relevant. Every function returns
a Python float. :func:`evaluate` returns all of :data:`METRIC_NAMES` at once;
:data:`GREATER_IS_BETTER` says which direction is better for each.

Edge-case conventions
---------------------
The papers' formulas are undefined (0/0, or a max over an empty set) on some
inputs and ambiguous when scores tie. mlknn uses the conventions below; the
same table is in ``docs/metrics.md``. "Degenerate instance": one with no
relevant label or with every label relevant. "Pessimistic rank":
``rank(y) = |{y' : f(y') >= f(y)}|``, i.e. ties are resolved against the
ranker. "NaN+W": the value is NaN and an
``sklearn.exceptions.UndefinedMetricWarning`` is issued.

==================  ========================================  ====================================  ==========================================
key                 empty sets / undefined cases              ties in Y_score                       differs from scikit-learn
==================  ========================================  ====================================  ==========================================
hamming_loss        none (no 0/0)                             n/a                                   no (sklearn's ``hamming_loss``)
subset_accuracy     empty prediction matches empty truth      n/a                                   no (``accuracy_score``)
accuracy            |Y|=|h|=0 -> 1                            n/a                                   no (``jaccard_score(samples, zd=1)``)
precision           |h|=0 -> 1 if |Y|=0 else 0                n/a                                   sklearn zd=1 gives 1 whenever |h|=0
recall              |Y|=0 -> 1 if |h|=0 else 0                n/a                                   sklearn zd=1 gives 1 whenever |Y|=0
f1                  mean of per-instance F; |Y|=|h|=0 -> 1    n/a                                   no (``f1_score(samples, zd=1)``)
one_error           degenerate instances left out; NaN+W      error if any top-tied label is        sklearn has none; LIFT code: error only
                    if none is left                           irrelevant                            if all top-tied labels are irrelevant
coverage            degenerate instances left out; NaN+W      pessimistic rank                      = ``coverage_error - 1`` on kept instances
ranking_loss        degenerate instances left out; NaN+W      tied rel/irrel pair = mis-ordered     sklearn scores degenerate instances 0
average_precision   degenerate instances left out; NaN+W      pessimistic rank                      sklearn scores degenerate instances 1
macro_precision     label never predicted -> 1 if never       n/a                                   sklearn zd=1 gives 1 to every label
                    relevant else 0                                                                 never predicted
macro_recall        label never relevant -> 1 if never        n/a                                   sklearn zd=1 gives 1 to every label
                    predicted else 0                                                                never relevant
macro_f1            mean of per-label F; TP+FP+FN=0 -> 1      n/a                                   no (``f1_score(macro, zd=1)``)
micro_precision     nothing predicted -> 1 if nothing         n/a                                   sklearn zd=1 gives 1 if nothing predicted
                    relevant else 0
micro_recall        nothing relevant -> 1 if nothing          n/a                                   sklearn zd=1 gives 1 if nothing relevant
                    predicted else 0
micro_f1            TP+FP+FN=0 -> 1                           n/a                                   no (``f1_score(micro, zd=1)``)
macro_auc           labels with one class in Y_true left      counts 1/2 (the review's ``>=``       sklearn's macro is NaN if any label has
                    out; NaN+W if none is left                would count 1)                        one class
micro_auc           Y_true all 0 or all 1: NaN+W              counts 1/2                            no (``roc_auc_score(micro)``)
macro_accuracy      none (every label has p instances)        n/a                                   sklearn has none; = 1 - hamming_loss
micro_accuracy      none                                      n/a                                   sklearn has none; = 1 - hamming_loss
==================  ========================================  ====================================  ==========================================

Notes
-----
* The 0/0 rule for precision, recall, F and accuracy (example- and label-based)
  is MULAN's: a ratio with an empty denominator is 1 exactly when the
  prediction is right (both sets empty) and 0 otherwise.
* Leaving degenerate instances out of the ranking metrics is the rule of
  Zhang's evaluation code (ML-kNN / LIFT MATLAB toolbox) for one-error,
  ranking loss and average precision; coverage follows it too so that the four
  share one denominator. On such instances these metrics are either undefined
  or independent of the scores.
* ``f1`` is the mean of per-instance F1 (Younes et al. eq. 23, MULAN,
  scikit-learn), not the harmonic mean of ``precision`` and ``recall``;
  ``macro_f1`` is the mean of per-label F1 (the review's B_macro).
* Scores are compared exactly: two labels tie only if their float64 scores are
  equal (except with ``ties="mulan"``, where scores within 1e-6 tie, as in
  Weka 3.7.12's ``stableSort``).
* The ranking measures and :func:`evaluate` take ``ties=`` ("pessimistic",
  the default of the table, "average", "optimistic", "mulan"); see
  ``docs/metrics.md``.
* :func:`example_f_of_means` is the review's F-beta of the averaged precision
  and recall; :func:`label_contingency` is Younes et al.'s (2011) label contingency
  matrix (Figure 1).
* The extreme-classification measures (``precision_at_k``, ``recall_at_k``,
  ``ndcg_at_k``, ``psprecision_at_k``, ``psndcg_at_k``, ``inverse_propensity``;
  ``evaluate(..., at_k=...)``) keep their own conventions, documented in
  :mod:`mlknn.metrics._extreme` and ``docs/extreme.md``.
* The calibration measures (``brier_score``, ``log_loss``,
  ``expected_calibration_error``, ``calibration_bins``) score posteriors per label,
  ``average=None``, ``"macro"`` or ``"micro"``; see ``docs/decisions.md``.
"""

from sklearn.exceptions import UndefinedMetricWarning

from ._all_metrics import GREATER_IS_BETTER, METRIC_NAMES
from ._calibration import brier_score, calibration_bins, expected_calibration_error, log_loss
from ._contingency import label_contingency
from ._evaluate import evaluate
from ._evaluate_at_k import EvaluationResult, MetricSkippedWarning
from ._example_based import (
    example_accuracy,
    example_f1,
    example_f_of_means,
    example_precision,
    example_recall,
    hamming_loss,
    subset_accuracy,
)
from ._extreme import (
    inverse_propensity,
    ndcg_at_k,
    precision_at_k,
    psndcg_at_k,
    psprecision_at_k,
    recall_at_k,
)
from ._label_auc import macro_auc, micro_auc
from ._label_based import (
    macro_accuracy,
    macro_f1,
    macro_precision,
    macro_recall,
    micro_accuracy,
    micro_f1,
    micro_precision,
    micro_recall,
)
from ._ranking import average_precision, coverage, one_error, ranking_loss

__all__ = [
    "evaluate",
    "METRIC_NAMES",
    "GREATER_IS_BETTER",
    "UndefinedMetricWarning",
    "hamming_loss",
    "subset_accuracy",
    "example_accuracy",
    "example_precision",
    "example_recall",
    "example_f1",
    "example_f_of_means",
    "macro_accuracy",
    "micro_accuracy",
    "label_contingency",
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
    # extreme classification (mlknn.metrics._extreme)
    "precision_at_k",
    "recall_at_k",
    "ndcg_at_k",
    "psprecision_at_k",
    "psndcg_at_k",
    "inverse_propensity",
    "EvaluationResult",
    "MetricSkippedWarning",
    # calibration of posteriors (mlknn.metrics._calibration)
    "brier_score",
    "log_loss",
    "expected_calibration_error",
    "calibration_bins",
]
