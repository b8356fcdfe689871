"""Tests for mlknn.metrics.

Four independent checks of every metric:
* a 4 x 3 example worked by hand (numbers in the comments);
* scikit-learn, where it defines the same quantity (with the documented
  differences applied explicitly);
* a slow pure-Python reference written from the formulas (tests/reference_metrics.py),
  on random data with ties and degenerate instances, and under hypothesis;
* invariances (instance / label permutations, monotone score transforms),
  optima and ranges.
"""

import math
import re
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import metrics as skm

import mlknn.metrics as M
from mlknn.metrics import GREATER_IS_BETTER, METRIC_NAMES, UndefinedMetricWarning, evaluate

sys.path.insert(0, str(Path(__file__).resolve().parent))
import reference_metrics as R  # noqa: E402

REPO = Path(__file__).resolve().parents[1]

RANKING_KEYS = ("one_error", "coverage", "ranking_loss", "average_precision")
SCORE_KEYS = RANKING_KEYS + ("macro_auc", "micro_auc")

# Public per-metric functions, keyed like evaluate(); second item: takes scores.
FUNCTIONS = {
    "hamming_loss": (M.hamming_loss, False),
    "subset_accuracy": (M.subset_accuracy, False),
    "accuracy": (M.example_accuracy, False),
    "precision": (M.example_precision, False),
    "recall": (M.example_recall, False),
    "f1": (M.example_f1, False),
    "one_error": (M.one_error, True),
    "coverage": (M.coverage, True),
    "ranking_loss": (M.ranking_loss, True),
    "average_precision": (M.average_precision, True),
    "macro_precision": (M.macro_precision, False),
    "macro_recall": (M.macro_recall, False),
    "macro_f1": (M.macro_f1, False),
    "micro_precision": (M.micro_precision, False),
    "micro_recall": (M.micro_recall, False),
    "micro_f1": (M.micro_f1, False),
    "macro_auc": (M.macro_auc, True),
    "micro_auc": (M.micro_auc, True),
    "macro_accuracy": (M.macro_accuracy, False),
    "micro_accuracy": (M.micro_accuracy, False),
}


def call(key, Yt, Yp, S):
    fn, scored = FUNCTIONS[key]
    return fn(Yt, S) if scored else fn(Yt, Yp)


def same(a, b, tol=1e-12):
    return R.same(a, b, tol)


def assert_results_equal(got, expected, tol=1e-12):
    bad = {k: (got[k], expected[k]) for k in expected if not same(got[k], expected[k], tol)}
    assert not bad, bad


# --------------------------------------------------------------------------
# The hand-worked example: 4 instances, 3 labels (a, b, c)
# --------------------------------------------------------------------------
#
#        Y_true     Y_pred     Y_score
#   i1   a . c      a . .      .9  .5  .2
#   i2   . b .      . b c      .6  .7  .6    (a, c tie)
#   i3   a b .      a b .      .8  .8  .1    (a, b tie at the top, both relevant)
#   i4   . . c      . . .      .3  .3  .3    (all tie)
#
# Pessimistic ranks r(y) = #{y' : f(y') >= f(y)}:
#   i1: a=1 b=2 c=3   i2: b=1 a=3 c=3   i3: a=2 b=2 c=3   i4: a=b=c=3

YT = np.array([[1, 0, 1], [0, 1, 0], [1, 1, 0], [0, 0, 1]])
YP = np.array([[1, 0, 0], [0, 1, 1], [1, 1, 0], [0, 0, 0]])
YS = np.array([[0.9, 0.5, 0.2], [0.6, 0.7, 0.6], [0.8, 0.8, 0.1], [0.3, 0.3, 0.3]])

HAND = {
    # wrong pairs: i1 c, i2 c, i4 c -> 3 / 12
    "hamming_loss": 3 / 12,
    # only i3 matches exactly
    "subset_accuracy": 1 / 4,
    # |Y & h| / |Y | h|: i1 1/2, i2 1/2, i3 2/2, i4 0/1
    "accuracy": (1 / 2 + 1 / 2 + 1 + 0) / 4,
    # |Y & h| / |h|: i1 1/1, i2 1/2, i3 2/2, i4 empty prediction, truth {c} -> 0
    "precision": (1 + 1 / 2 + 1 + 0) / 4,
    # |Y & h| / |Y|: i1 1/2, i2 1/1, i3 2/2, i4 0/1
    "recall": (1 / 2 + 1 + 1 + 0) / 4,
    # 2|Y & h| / (|Y| + |h|): i1 2/3, i2 2/3, i3 1, i4 0
    "f1": (2 / 3 + 2 / 3 + 1 + 0) / 4,
    # top: i1 {a} ok, i2 {b} ok, i3 {a, b} both relevant ok, i4 {a, b, c} has irrelevant -> error
    "one_error": 1 / 4,
    # max relevant rank - 1: i1 3-1=2, i2 1-1=0, i3 2-1=1, i4 3-1=2
    "coverage": (2 + 0 + 1 + 2) / 4,
    # mis-ordered (rel, irrel) pairs with f(rel) <= f(irrel):
    #   i1 (c,b) -> 1/2; i2 none -> 0; i3 none -> 0; i4 (c,a),(c,b) ties -> 2/2
    "ranking_loss": (1 / 2 + 0 + 0 + 1) / 4,
    # i1: a 1/1, c 2/3 -> 5/6; i2: b 1/1; i3: a 2/2, b 2/2 -> 1; i4: c 1/3
    "average_precision": (5 / 6 + 1 + 1 + 1 / 3) / 4,
    # per label (TP, FP, FN): a (2,0,0)  b (2,0,0)  c (0,1,2)
    "macro_precision": (1 + 1 + 0) / 3,
    "macro_recall": (1 + 1 + 0) / 3,
    "macro_f1": (1 + 1 + 0) / 3,
    # summed: TP 4, FP 1, FN 2
    "micro_precision": 4 / 5,
    "micro_recall": 4 / 6,
    "micro_f1": 8 / 11,
    # a: pos {.9,.8} neg {.6,.3} -> 4/4; b: pos {.7,.8} neg {.5,.3} -> 4/4;
    # c: pos {.2,.3} neg {.6,.1} -> (.2>.1, .3>.1) 2/4
    "macro_auc": (1 + 1 + 1 / 2) / 3,
    # 6 positives {.9,.2,.7,.8,.8,.3} vs 6 negatives {.5,.6,.6,.1,.3,.3}:
    # 6 + 1 + 6 + 6 + 6 + (1 + 2 * 1/2) = 27 of 36
    "micro_auc": 27 / 36,
    # label-based accuracy: per label (TP + TN) / 4: a 4/4, b 4/4, c 1/4 -> macro 3/4,
    # micro 9/12 (= 1 - hamming_loss)
    "macro_accuracy": (1 + 1 + 1 / 4) / 3,
    "micro_accuracy": 9 / 12,
}


@pytest.mark.parametrize("key", METRIC_NAMES)
def test_hand_example_single_functions(key):
    assert call(key, YT, YP, YS) == pytest.approx(HAND[key], abs=1e-12)


def test_hand_example_evaluate():
    assert_results_equal(evaluate(YT, YP, YS), HAND)


def test_hand_example_reference():
    # The slow reference agrees with the hand numbers too (it is itself tested).
    assert_results_equal(R.ref_evaluate(YT, YP, YS), HAND)


# --------------------------------------------------------------------------
# Random data
# --------------------------------------------------------------------------


def random_case(seed, n=60, q=6, density=0.3, levels=6, degenerate=True):
    """Random Y_true, Y_pred and tied scores, with degenerate instances."""
    rng = np.random.default_rng(seed)
    Yt = (rng.random((n, q)) < density).astype(np.int64)
    Yp = (rng.random((n, q)) < density).astype(np.int64)
    S = rng.integers(0, levels, size=(n, q)) / (levels - 1)  # many ties
    if degenerate:
        Yt[0] = 0  # no relevant label
        Yt[1] = 1  # every label relevant
        Yp[0] = 0  # both empty
        Yp[2] = 0  # empty prediction
        Yt[3] = 0  # empty truth
        Yp[3, 0] = 1  # ... with a non-empty prediction
        Yt[4, :] = 0
        Yt[4, 1] = 1
        S[4] = 0.5  # all scores tie
    return Yt, Yp, S


SEEDS = [0, 1, 2, 3, 4]


@pytest.mark.parametrize("seed", SEEDS)
def test_evaluate_matches_reference(seed):
    Yt, Yp, S = random_case(seed)
    assert_results_equal(evaluate(Yt, Yp, S), R.ref_evaluate(Yt, Yp, S))


@pytest.mark.parametrize("seed", SEEDS)
def test_single_functions_match_evaluate(seed):
    Yt, Yp, S = random_case(seed, n=40, q=5)
    res = evaluate(Yt, Yp, S)
    for key in METRIC_NAMES:
        assert same(call(key, Yt, Yp, S), res[key]), key


@pytest.mark.parametrize("beta", [0.5, 2.0])
def test_fbeta_matches_reference(beta):
    Yt, Yp, _ = random_case(7)
    assert same(M.example_f1(Yt, Yp, beta=beta), R.ref_example_f1(Yt, Yp, beta))
    assert same(M.macro_f1(Yt, Yp, beta=beta), R.ref_macro_f1(Yt, Yp, beta))
    assert same(M.micro_f1(Yt, Yp, beta=beta), R.ref_micro_f1(Yt, Yp, beta))


@pytest.mark.parametrize("block_entries", [1, 7, 40])
def test_blocked_computation_matches_reference(monkeypatch, block_entries):
    # Large inputs are processed in blocks of rows (instances for the ranking
    # metrics, labels for macro AUC); force many small blocks here.
    import mlknn.metrics._ranking as ranking

    monkeypatch.setattr(ranking, "_BLOCK_ENTRIES", block_entries)
    Yt, Yp, S = random_case(2, n=37, q=6)
    assert_results_equal(evaluate(Yt, Yp, S), R.ref_evaluate(Yt, Yp, S))


def test_continuous_scores_match_reference():
    # Few ties: scores drawn from a continuous distribution.
    rng = np.random.default_rng(11)
    Yt, Yp, _ = random_case(11, n=50, q=7)
    S = rng.normal(size=Yt.shape)
    assert_results_equal(evaluate(Yt, Yp, S), R.ref_evaluate(Yt, Yp, S))


# --------------------------------------------------------------------------
# scikit-learn, where it defines the same quantity
# --------------------------------------------------------------------------


def kept_mask(Yt):
    n_rel = Yt.sum(axis=1)
    return ((n_rel > 0) & (n_rel < Yt.shape[1])).astype(float)


@pytest.mark.parametrize("seed", SEEDS)
def test_classification_metrics_vs_sklearn(seed):
    Yt, Yp, _ = random_case(seed)
    zd = {"zero_division": 1.0}
    assert same(M.hamming_loss(Yt, Yp), skm.hamming_loss(Yt, Yp))
    assert same(M.subset_accuracy(Yt, Yp), skm.accuracy_score(Yt, Yp))
    assert same(M.example_accuracy(Yt, Yp), skm.jaccard_score(Yt, Yp, average="samples", **zd))
    assert same(M.example_f1(Yt, Yp), skm.f1_score(Yt, Yp, average="samples", **zd))
    assert same(M.example_f1(Yt, Yp, beta=2.0), skm.fbeta_score(Yt, Yp, beta=2.0, average="samples", **zd))
    assert same(M.macro_f1(Yt, Yp), skm.f1_score(Yt, Yp, average="macro", **zd))
    assert same(M.micro_f1(Yt, Yp), skm.f1_score(Yt, Yp, average="micro", **zd))

    # Documented differences: scikit-learn's zero_division=1 scores an empty
    # denominator 1 even when the prediction is wrong; mlknn (MULAN) scores it 0.
    n_true_i, n_pred_i = Yt.sum(1), Yp.sum(1)
    wrong_empty_pred = np.mean((n_pred_i == 0) & (n_true_i > 0))
    wrong_empty_true = np.mean((n_true_i == 0) & (n_pred_i > 0))
    assert wrong_empty_pred > 0 and wrong_empty_true > 0  # the case is exercised
    assert same(
        M.example_precision(Yt, Yp),
        skm.precision_score(Yt, Yp, average="samples", **zd) - wrong_empty_pred,
    )
    assert same(
        M.example_recall(Yt, Yp),
        skm.recall_score(Yt, Yp, average="samples", **zd) - wrong_empty_true,
    )
    n_true_j, n_pred_j = Yt.sum(0), Yp.sum(0)
    assert same(
        M.macro_precision(Yt, Yp),
        skm.precision_score(Yt, Yp, average="macro", **zd) - np.mean((n_pred_j == 0) & (n_true_j > 0)),
    )
    assert same(
        M.macro_recall(Yt, Yp),
        skm.recall_score(Yt, Yp, average="macro", **zd) - np.mean((n_true_j == 0) & (n_pred_j > 0)),
    )
    assert same(M.micro_precision(Yt, Yp), skm.precision_score(Yt, Yp, average="micro"))
    assert same(M.micro_recall(Yt, Yp), skm.recall_score(Yt, Yp, average="micro"))


def test_macro_precision_recall_vs_sklearn_with_silent_labels():
    # A label never predicted but relevant, and one never relevant but predicted.
    Yt = np.array([[1, 0, 0], [1, 0, 1], [0, 0, 1]])
    Yp = np.array([[0, 1, 0], [0, 0, 1], [0, 1, 1]])
    # label 0: TP0 FP0 FN2 -> P 0 (sklearn zd=1: 1), R 0
    # label 1: TP0 FP2 FN0 -> P 0, R 0 (sklearn zd=1: 1)
    # label 2: TP2 FP0 FN0 -> 1, 1
    assert M.macro_precision(Yt, Yp) == pytest.approx(1 / 3)
    assert M.macro_recall(Yt, Yp) == pytest.approx(1 / 3)
    assert skm.precision_score(Yt, Yp, average="macro", zero_division=1.0) == pytest.approx(2 / 3)
    assert skm.recall_score(Yt, Yp, average="macro", zero_division=1.0) == pytest.approx(2 / 3)


@pytest.mark.parametrize("seed", SEEDS)
def test_ranking_metrics_vs_sklearn(seed):
    Yt, _, S = random_case(seed)
    w = kept_mask(Yt)
    assert 0 < w.sum() < len(w)  # degenerate instances are present
    assert same(M.ranking_loss(Yt, S), skm.label_ranking_loss(Yt, S, sample_weight=w))
    assert same(
        M.average_precision(Yt, S),
        skm.label_ranking_average_precision_score(Yt, S, sample_weight=w),
    )
    assert same(M.coverage(Yt, S), skm.coverage_error(Yt, S, sample_weight=w) - 1)


def test_ranking_metrics_vs_sklearn_without_degenerate_instances():
    Yt, _, S = random_case(5, degenerate=False, density=0.5)
    keep = kept_mask(Yt).astype(bool)
    Yt, S = Yt[keep], S[keep]
    assert same(M.ranking_loss(Yt, S), skm.label_ranking_loss(Yt, S))
    assert same(M.average_precision(Yt, S), skm.label_ranking_average_precision_score(Yt, S))
    assert same(M.coverage(Yt, S), skm.coverage_error(Yt, S) - 1)


@pytest.mark.parametrize("seed", SEEDS)
def test_auc_vs_sklearn(seed):
    Yt, _, S = random_case(seed, n=30, q=6, density=0.15)
    Yt[:, 0] = 0  # a label with no positive: left out of the macro average
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        per_label = skm.roc_auc_score(Yt, S, average=None)
    assert np.isnan(per_label[0])
    assert same(M.macro_auc(Yt, S), float(np.nanmean(per_label)), tol=1e-10)
    assert same(M.micro_auc(Yt, S), skm.roc_auc_score(Yt, S, average="micro"), tol=1e-10)
    valid = ~np.isnan(per_label)
    assert same(M.macro_auc(Yt[:, valid], S[:, valid]), skm.roc_auc_score(Yt[:, valid], S[:, valid]), tol=1e-10)


# --------------------------------------------------------------------------
# Edge-case conventions (the table in docs/metrics.md)
# --------------------------------------------------------------------------


def test_all_empty_is_perfect_classification():
    Z = np.zeros((3, 4), dtype=int)
    for key in (
        "subset_accuracy", "accuracy", "precision", "recall", "f1",
        "macro_precision", "macro_recall", "macro_f1",
        "micro_precision", "micro_recall", "micro_f1",
    ):
        assert call(key, Z, Z, None) == 1.0, key
    assert M.hamming_loss(Z, Z) == 0.0


def test_empty_prediction_nonempty_truth_scores_zero():
    Yt, Yp = np.array([[1, 0, 1]]), np.array([[0, 0, 0]])
    assert M.example_precision(Yt, Yp) == 0.0
    assert M.example_recall(Yt, Yp) == 0.0
    assert M.example_f1(Yt, Yp) == 0.0
    assert M.example_accuracy(Yt, Yp) == 0.0
    assert M.micro_precision(Yt, Yp) == 0.0


def test_empty_truth_nonempty_prediction_scores_zero():
    Yt, Yp = np.array([[0, 0, 0]]), np.array([[0, 1, 0]])
    assert M.example_precision(Yt, Yp) == 0.0
    assert M.example_recall(Yt, Yp) == 0.0
    assert M.example_f1(Yt, Yp) == 0.0
    assert M.micro_recall(Yt, Yp) == 0.0
    # labels 0 and 2: nothing relevant, nothing predicted -> 1; label 1 -> 0
    assert M.macro_recall(Yt, Yp) == pytest.approx(2 / 3)
    assert M.macro_precision(Yt, Yp) == pytest.approx(2 / 3)


def test_degenerate_instances_are_left_out_of_ranking_metrics():
    extra_Y = np.array([[0, 0, 0], [1, 1, 1]])
    extra_S = np.array([[0.9, 0.1, 0.5], [0.1, 0.2, 0.3]])
    Yt = np.vstack([YT, extra_Y])
    S = np.vstack([YS, extra_S])
    for key in RANKING_KEYS:
        assert FUNCTIONS[key][0](Yt, S) == pytest.approx(HAND[key]), key


@pytest.mark.parametrize("key", RANKING_KEYS)
def test_ranking_metric_without_usable_instance_is_nan_with_warning(key):
    Yt = np.array([[0, 0, 0], [1, 1, 1]])
    S = np.array([[0.9, 0.1, 0.5], [0.1, 0.2, 0.3]])
    with pytest.warns(UndefinedMetricWarning, match=key):
        assert math.isnan(FUNCTIONS[key][0](Yt, S))


def test_one_error_ties_count_against_the_ranker():
    Yt = np.array([[1, 0, 0]])
    assert M.one_error(Yt, [[0.5, 0.5, 0.1]]) == 1.0  # top tie includes an irrelevant label
    assert M.one_error(Yt, [[0.6, 0.5, 0.1]]) == 0.0
    assert M.one_error([[1, 1, 0]], [[0.5, 0.5, 0.1]]) == 0.0  # top tie all relevant


def test_ranking_loss_and_coverage_ties_count_against_the_ranker():
    Yt = np.array([[1, 0, 0]])
    S = np.array([[0.5, 0.5, 0.1]])
    assert M.ranking_loss(Yt, S) == 0.5  # (a, b) tie is mis-ordered, (a, c) fine
    assert M.coverage(Yt, S) == 1.0  # a's rank is 2 (pessimistic)
    assert M.average_precision(Yt, S) == 0.5  # 1 relevant at rank 2
    assert M.ranking_loss(Yt, [[0.5, 0.4, 0.1]]) == 0.0


def test_constant_scores_are_worst_case_rankings():
    Yt, _, _ = random_case(3, degenerate=False)
    S = np.zeros(Yt.shape)
    keep = kept_mask(Yt).astype(bool)
    assert M.one_error(Yt, S) == 1.0
    assert M.ranking_loss(Yt, S) == 1.0
    assert M.coverage(Yt, S) == Yt.shape[1] - 1
    assert M.average_precision(Yt, S) == pytest.approx(np.mean(Yt[keep].sum(1) / Yt.shape[1]))
    assert M.macro_auc(Yt, S) == 0.5
    assert M.micro_auc(Yt, S) == 0.5


def test_auc_ties_count_half():
    assert M.macro_auc([[1], [0]], [[0.5], [0.5]]) == 0.5
    assert M.micro_auc([[1, 0]], [[0.5, 0.5]]) == 0.5


def test_macro_auc_leaves_out_single_class_labels():
    Yt = np.hstack([YT, np.zeros((4, 1), int), np.ones((4, 1), int)])
    S = np.hstack([YS, np.full((4, 1), 0.4), np.full((4, 1), 0.1)])
    assert M.macro_auc(Yt, S) == pytest.approx(HAND["macro_auc"])


def test_auc_undefined_is_nan_with_warning():
    Yt = np.array([[1, 0], [1, 0]])  # each label has one class only
    S = np.array([[0.1, 0.2], [0.3, 0.4]])
    with pytest.warns(UndefinedMetricWarning, match="macro_auc"):
        assert math.isnan(M.macro_auc(Yt, S))
    for Y in (np.zeros((2, 2), int), np.ones((2, 2), int)):
        with pytest.warns(UndefinedMetricWarning, match="micro_auc"):
            assert math.isnan(M.micro_auc(Y, S))


def test_evaluate_does_not_warn_on_ordinary_data():
    Yt, Yp, S = random_case(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        evaluate(Yt, Yp, S)


def test_single_label():
    # q = 1: every instance is degenerate for the ranking metrics.
    Yt = np.array([[1], [0], [1], [0]])
    Yp = np.array([[1], [1], [0], [0]])
    S = np.array([[0.9], [0.8], [0.1], [0.2]])
    with pytest.warns(UndefinedMetricWarning):
        res = evaluate(Yt, Yp, S)
    assert res["hamming_loss"] == 0.5
    assert res["subset_accuracy"] == 0.5
    # positives {.9, .1} vs negatives {.8, .2}: .9 beats both, .1 neither -> 2/4
    assert res["macro_auc"] == 0.5 and res["micro_auc"] == 0.5
    assert all(math.isnan(res[k]) for k in RANKING_KEYS)
    assert_results_equal(res, R.ref_evaluate(Yt, Yp, S))


def test_single_instance():
    # One instance: no label has both classes, so macro_auc is undefined.
    with pytest.warns(UndefinedMetricWarning, match="macro_auc"):
        res = evaluate([[1, 0, 1]], [[1, 0, 0]], [[0.3, 0.2, 0.1]])
    assert math.isnan(res["macro_auc"])
    assert res["coverage"] == 2.0
    assert res["ranking_loss"] == 0.5
    assert_results_equal(res, R.ref_evaluate([[1, 0, 1]], [[1, 0, 0]], [[0.3, 0.2, 0.1]]))


# --------------------------------------------------------------------------
# Invariances, optima, ranges
# --------------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_permuting_instances_leaves_results_unchanged(seed):
    Yt, Yp, S = random_case(seed)
    perm = np.random.default_rng(seed + 100).permutation(len(Yt))
    assert_results_equal(evaluate(Yt[perm], Yp[perm], S[perm]), evaluate(Yt, Yp, S))


@pytest.mark.parametrize("seed", SEEDS)
def test_permuting_labels_leaves_results_unchanged(seed):
    Yt, Yp, S = random_case(seed)
    perm = np.random.default_rng(seed + 200).permutation(Yt.shape[1])
    assert_results_equal(evaluate(Yt[:, perm], Yp[:, perm], S[:, perm]), evaluate(Yt, Yp, S))


def test_monotone_score_transform_leaves_results_unchanged():
    Yt, Yp, S = random_case(9)
    assert_results_equal(evaluate(Yt, Yp, 3.0 * S - 7.0), evaluate(Yt, Yp, S))


@pytest.mark.parametrize("seed", SEEDS)
def test_perfect_prediction_gives_the_optimum(seed):
    Yt, _, _ = random_case(seed)
    S = Yt * 0.8 + 0.1
    res = evaluate(Yt, Yt, S)
    keep = kept_mask(Yt).astype(bool)
    optimum = {k: (1.0 if GREATER_IS_BETTER[k] else 0.0) for k in METRIC_NAMES}
    optimum["coverage"] = float(np.mean(Yt[keep].sum(axis=1) - 1))  # the papers' optimum
    assert_results_equal(res, optimum)


@pytest.mark.parametrize("seed", SEEDS)
def test_ranges(seed):
    Yt, Yp, S = random_case(seed)
    res = evaluate(Yt, Yp, S)
    q = Yt.shape[1]
    for key, value in res.items():
        upper = q - 1 if key == "coverage" else 1.0
        assert 0.0 <= value <= upper, (key, value)


def test_worse_predictions_score_worse():
    # Flip more and more entries of a perfect prediction: every metric moves
    # (weakly) in its bad direction, and strictly from the perfect one.
    rng = np.random.default_rng(4)
    Yt = (rng.random((80, 6)) < 0.4).astype(int)
    flips = rng.permutation(Yt.size)
    previous = None
    for n_flip in (0, 60, 200):
        Yp = Yt.copy().ravel()
        Yp[flips[:n_flip]] ^= 1
        Yp = Yp.reshape(Yt.shape)
        res = evaluate(Yt, Yp, Yp * 0.8 + 0.1)
        if previous is not None:
            for key in METRIC_NAMES:
                if key == "coverage":
                    continue  # its optimum depends on |Y_i|, not a fixed number
                sign = 1 if GREATER_IS_BETTER[key] else -1
                assert sign * (previous[key] - res[key]) > 0, key
        previous = res


# --------------------------------------------------------------------------
# Property tests (hypothesis)
# --------------------------------------------------------------------------


@st.composite
def cases(draw):
    n = draw(st.integers(1, 7))
    q = draw(st.integers(1, 5))
    bits = st.lists(st.booleans(), min_size=n * q, max_size=n * q)
    Yt = np.array(draw(bits), dtype=int).reshape(n, q)
    Yp = np.array(draw(bits), dtype=int).reshape(n, q)
    # Few distinct score values: ties are the rule, not the exception.
    S = np.array(draw(st.lists(st.integers(0, 3), min_size=n * q, max_size=n * q)), float).reshape(n, q)
    return Yt, Yp, S


@settings(max_examples=120, deadline=None)
@given(cases())
def test_property_matches_reference(case):
    Yt, Yp, S = case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        got = evaluate(Yt, Yp, S)
    assert_results_equal(got, R.ref_evaluate(Yt, Yp, S))


@settings(max_examples=60, deadline=None)
@given(cases(), st.randoms(use_true_random=False))
def test_property_invariances_and_ranges(case, rnd):
    Yt, Yp, S = case
    n, q = Yt.shape
    rows = list(range(n))
    cols = list(range(q))
    rnd.shuffle(rows)
    rnd.shuffle(cols)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        base = evaluate(Yt, Yp, S)
        moved = evaluate(Yt[rows][:, cols], Yp[rows][:, cols], S[rows][:, cols])
    assert_results_equal(moved, base)
    for key, value in base.items():
        if not math.isnan(value):
            assert 0.0 <= value <= (q - 1 if key == "coverage" else 1.0), key


# --------------------------------------------------------------------------
# API and input validation
# --------------------------------------------------------------------------


def test_evaluate_keys_order_and_types():
    res = evaluate(YT, YP, YS)
    assert tuple(res) == METRIC_NAMES
    assert all(type(v) is float for v in res.values())
    assert METRIC_NAMES == (
        "hamming_loss", "subset_accuracy", "accuracy", "precision", "recall", "f1",
        "one_error", "coverage", "ranking_loss", "average_precision",
        "macro_precision", "macro_recall", "macro_f1",
        "micro_precision", "micro_recall", "micro_f1", "macro_auc", "micro_auc",
        "macro_accuracy", "micro_accuracy",
    )
    assert set(GREATER_IS_BETTER) == set(METRIC_NAMES)
    losses = {k for k, v in GREATER_IS_BETTER.items() if not v}
    assert losses == {"hamming_loss", "one_error", "coverage", "ranking_loss"}


@pytest.mark.parametrize("key", METRIC_NAMES)
def test_single_functions_return_python_float(key):
    assert type(call(key, YT, YP, YS)) is float


def test_public_names():
    for name in M.__all__:
        assert hasattr(M, name), name
    expected = {
        "evaluate", "METRIC_NAMES", "GREATER_IS_BETTER", "UndefinedMetricWarning",
        "hamming_loss", "subset_accuracy", "example_accuracy", "example_precision",
        "example_recall", "example_f1", "one_error", "coverage", "ranking_loss",
        "average_precision", "macro_precision", "macro_recall", "macro_f1",
        "micro_precision", "micro_recall", "micro_f1", "macro_auc", "micro_auc",
        # extreme classification (tests/test_extreme_metrics.py)
        "precision_at_k", "recall_at_k", "ndcg_at_k", "psprecision_at_k", "psndcg_at_k",
        "inverse_propensity", "EvaluationResult", "MetricSkippedWarning",
        # seed 003 Knowl 3-4 and seed 000 Figure 1 (tests/test_metrics_extra.py)
        "example_f_of_means", "macro_accuracy", "micro_accuracy", "label_contingency",
        # calibration of the scores (tests/test_decision_calibration_metrics.py)
        "brier_score", "log_loss", "expected_calibration_error", "calibration_bins",
    }
    assert set(M.__all__) == expected


def test_y_score_is_required():
    with pytest.raises(TypeError, match="Y_score"):
        evaluate(YT, YP)


def test_y_score_none_falls_back_to_y_pred():
    assert_results_equal(evaluate(YT, YP, None), evaluate(YT, YP, YP.astype(float)))
    assert_results_equal(evaluate(YT, YP, Y_score=None), R.ref_evaluate(YT, YP, YP))


def test_single_ranking_function_rejects_missing_scores():
    with pytest.raises(ValueError, match="Y_score is required"):
        M.ranking_loss(YT, None)


def test_sparse_and_list_inputs_equal_dense():
    dense = evaluate(YT, YP, YS)
    assert_results_equal(evaluate(sp.csr_matrix(YT), sp.csc_matrix(YP), sp.csr_matrix(YS)), dense)
    assert_results_equal(evaluate(YT.tolist(), YP.tolist(), YS.tolist()), dense)
    assert_results_equal(evaluate(YT.astype(bool), YP.astype(float), YS.astype(np.float32)), dense)


@pytest.mark.parametrize(
    "Y_true, Y_pred, message",
    [
        (YT, YP[0], r"Y_pred must be a 2-D binary indicator array.*\(3,\)"),
        (YT[0], YP, r"Y_true must be a 2-D binary indicator array.*\(3,\)"),
        (YT, YP[:, :2], r"Y_pred must have the same shape as Y_true \(4, 3\); got shape \(4, 2\)"),
        (YT, YP[:3], r"Y_pred must have the same shape as Y_true \(4, 3\); got shape \(3, 3\)"),
        (YT * 2, YP, r"Y_true .*0 and 1.*2"),
        (YT, YP - 1, r"Y_pred .*0 and 1.*-1"),
        (YT, YP * 0.5, r"Y_pred .*0 and 1.*0\.5"),
        (np.zeros((0, 3)), np.zeros((0, 3)), r"Y_true .*at least one sample.*\(0, 3\)"),
        (np.zeros((3, 0)), np.zeros((3, 0)), r"Y_true .*at least one label.*\(3, 0\)"),
        (np.array([["a", "b"]]), np.array([[0, 1]]), r"Y_true .*dtype"),
    ],
)
def test_invalid_indicators(Y_true, Y_pred, message):
    with pytest.raises(ValueError, match=message):
        evaluate(Y_true, Y_pred, None)


@pytest.mark.parametrize(
    "Y_score, message",
    [
        (YS[:, :2], r"Y_score must have the same shape as Y_true \(4, 3\); got shape \(4, 2\)"),
        (YS[0], r"Y_score must be a 2-D array .*got shape \(3,\)"),
        (np.where(YS == 0.1, np.nan, YS), r"Y_score must contain only finite values; got nan at row 2, column 2"),
        (np.where(YS == 0.9, np.inf, YS), r"Y_score must contain only finite values; got inf at row 0, column 0"),
        (YS.astype(str), r"Y_score must be a 2-D array .*dtype"),
        (YS.astype(complex), r"Y_score must be a 2-D array .*dtype"),
    ],
)
def test_invalid_scores(Y_score, message):
    with pytest.raises(ValueError, match=message):
        evaluate(YT, YP, Y_score)
    with pytest.raises(ValueError, match=message):
        M.coverage(YT, Y_score)
    with pytest.raises(ValueError, match=message):
        M.macro_auc(YT, Y_score)


@pytest.mark.parametrize("key", METRIC_NAMES)
def test_every_function_validates_y_true(key):
    with pytest.raises(ValueError, match="Y_true"):
        call(key, YT[0], YP, YS)


@pytest.mark.parametrize("fn", [M.example_f1, M.macro_f1, M.micro_f1])
@pytest.mark.parametrize("beta", [0, -1.0, float("nan"), float("inf"), "2", True])
def test_invalid_beta(fn, beta):
    with pytest.raises(ValueError, match="beta must be a positive finite real number"):
        fn(YT, YP, beta=beta)


# --------------------------------------------------------------------------
# Documentation
# --------------------------------------------------------------------------


def test_convention_table_lists_every_metric():
    doc_rows = (REPO / "docs" / "metrics.md").read_text(encoding="utf-8")
    table_keys = re.findall(r"^\| `(\w+)`", doc_rows, flags=re.M)
    assert table_keys == list(METRIC_NAMES)
    docstring_keys = re.findall(r"^(\w+)\s{2,}", M.__doc__, flags=re.M)
    assert [k for k in docstring_keys if k in GREATER_IS_BETTER] == list(METRIC_NAMES)
