"""Extreme-classification measures (issue 12 point 3): P@k, R@k, nDCG@k, PSP@k, PSnDCG@k.

Checked against the loop reference ``tests/reference_extreme.py``, hand-worked
examples (rows with fewer than k and with no true labels), scikit-learn's
``ndcg_score``, and invariance over the three score representations (dense,
CSR, the ``(labels, scores)`` pair of ``predict_topk``) and the Y_true
containers.
"""

import math
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics import ndcg_score

from mlknn.metrics import (
    METRIC_NAMES,
    MetricSkippedWarning,
    UndefinedMetricWarning,
    _evaluate_at_k,
    evaluate,
    inverse_propensity,
    ndcg_at_k,
    precision_at_k,
    psndcg_at_k,
    psprecision_at_k,
    recall_at_k,
)
from mlknn.utils._param_validation import InvalidParameterError

sys.path.insert(0, str(Path(__file__).parent))
import reference_extreme as R  # noqa: E402

PLAIN = {"precision": precision_at_k, "recall": recall_at_k, "ndcg": ndcg_at_k}
PS = {"psprecision": psprecision_at_k, "psndcg": psndcg_at_k}
REF = {
    "precision": R.ref_precision,
    "recall": R.ref_recall,
    "ndcg": R.ref_ndcg,
    "psprecision": R.ref_psprecision,
    "psndcg": R.ref_psndcg,
}


def topk_pair(S, m):
    """(labels, scores) of the top m of dense S, with the predict_topk rule."""
    order = np.lexsort((np.broadcast_to(np.arange(S.shape[1]), S.shape), -S), axis=1)[:, :m]
    return order.astype(np.int64), np.take_along_axis(S, order, axis=1)


# --------------------------------------------------------------------------
# Hand-worked example
# --------------------------------------------------------------------------
# Four labels, three rows, k = 2. Rankings (decreasing score):
#   row 0: true {0, 2}, scores .9 .8 .1 0   -> ranked 0, 1     hits 1, 0
#   row 1: true {1},    scores .2 .7 .3 .1  -> ranked 1, 2     hits 1, 0  (fewer than k true)
#   row 2: true {},     scores .5 .5 .5 .5  -> ranked 0, 1     (tie: lower labels), no hits
# P@2 = (1/2 + 1/2 + 0) / 3 = 1/3
# R@2 = (1/2 + 1/1 + 0) / 3 = 1/2
# nDCG@2: row 0 1/(1 + 1/log2 3), row 1 1/1, row 2 0
# weights w = (1, 2, 4, 8):
# PSP@2 = (w0 + w1 + 0) / (w2 + w0 [best two of {0,2}] + w1 [best of {1}] + 0) = 3 / 7
# PSnDCG@2: row 0 got w0 = 1, best (4 + 1/log2 3), ideal 1 + 1/log2 3
#           row 1 got w1 = 2, best 2, ideal 1
Y_HAND = np.array([[1, 0, 1, 0], [0, 1, 0, 0], [0, 0, 0, 0]])
S_HAND = np.array([[0.9, 0.8, 0.1, 0.0], [0.2, 0.7, 0.3, 0.1], [0.5, 0.5, 0.5, 0.5]])
W_HAND = np.array([1.0, 2.0, 4.0, 8.0])
_I0 = 1 + 1 / math.log2(3)
HAND = {
    "precision": 1 / 3,
    "recall": 1 / 2,
    "ndcg": (1 / _I0 + 1) / 3,
    "psprecision": 3 / 7,
    "psndcg": (1 / _I0 + 2) / ((4 + 1 / math.log2(3)) / _I0 + 2),
}


@pytest.mark.parametrize("name", list(HAND))
def test_hand_example(name):
    if name in PS:
        got = PS[name](Y_HAND, S_HAND, W_HAND, k=2)
        ref = REF[name](Y_HAND.tolist(), S_HAND.tolist(), W_HAND.tolist(), 2)
    else:
        got = PLAIN[name](Y_HAND, S_HAND, k=2)
        ref = REF[name](Y_HAND.tolist(), S_HAND.tolist(), 2)
    assert got == pytest.approx(HAND[name], abs=1e-12)
    assert ref == pytest.approx(HAND[name], abs=1e-12)


def test_hand_k1_and_perfect_ranking():
    # k = 1: rows 0 and 1 hit, row 2 has no labels.
    assert precision_at_k(Y_HAND, S_HAND, k=1) == pytest.approx(2 / 3)
    # Scoring the true labels highest is perfect for PSP/PSnDCG/nDCG on labelled rows.
    S = Y_HAND * 10.0 + W_HAND / 100
    assert psprecision_at_k(Y_HAND, S, W_HAND, k=3) == pytest.approx(1.0)
    assert psndcg_at_k(Y_HAND, S, W_HAND, k=3) == pytest.approx(1.0)
    assert ndcg_at_k(Y_HAND, S, k=3) == pytest.approx(2 / 3)  # the empty row scores 0


def test_ties_go_to_the_lower_label():
    Y = np.array([[0, 0, 1, 1]])
    S = np.zeros((1, 4))
    assert precision_at_k(Y, S, k=2) == 0.0  # ranked 0, 1
    assert precision_at_k(Y, S, k=3) == pytest.approx(1 / 3)
    # A reversed order among equal scores in the pair is re-ranked by label.
    pair = (np.array([[3, 2, 1, 0]]), np.zeros((1, 4)))
    assert precision_at_k(Y, pair, k=2) == 0.0


def test_no_true_label_anywhere():
    Y = np.zeros((2, 3), dtype=int)
    S = np.ones((2, 3))
    assert precision_at_k(Y, S, k=2) == 0.0
    assert recall_at_k(Y, S, k=2) == 0.0
    assert ndcg_at_k(Y, S, k=2) == 0.0
    for f in PS.values():
        with pytest.warns(UndefinedMetricWarning, match="no row of Y_true has a true label"):
            assert math.isnan(f(Y, S, np.ones(3), k=2))


# --------------------------------------------------------------------------
# Random cases against the loop reference
# --------------------------------------------------------------------------


def random_case(seed, n=40, q=12, density=0.15, levels=5):
    rng = np.random.default_rng(seed)
    Y = (rng.random((n, q)) < density).astype(np.uint8)
    Y[0] = 0  # a row without labels
    S = rng.integers(0, levels, size=(n, q)) / levels  # many ties
    w = inverse_propensity(Y)
    return Y, S, w


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("k", [1, 3, 5, 12, 15])
def test_dense_matches_reference(seed, k):
    Y, S, w = random_case(seed)
    Yl, Sl, wl = Y.tolist(), S.tolist(), w.tolist()
    for name, f in PLAIN.items():
        assert f(Y, S, k=k) == pytest.approx(REF[name](Yl, Sl, k), abs=1e-12), name
    for name, f in PS.items():
        assert f(Y, S, w, k=k) == pytest.approx(REF[name](Yl, Sl, wl, k), abs=1e-12), name


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("k", [1, 4, 8])
def test_sparse_scores_match_reference(seed, k):
    """Only stored entries are predictions; negative and zero stored scores included."""
    Y, S, w = random_case(seed)
    rng = np.random.default_rng(100 + seed)
    stored = rng.random(S.shape) < 0.4
    S = S - 0.5  # stored entries may be negative or exactly zero...
    rows, cols = np.nonzero(stored)
    Ssp = sp.csr_array((S[rows, cols], (rows, cols)), shape=S.shape)
    Sl = [[float(S[i, j]) if stored[i, j] else None for j in range(S.shape[1])] for i in range(S.shape[0])]
    Yl, wl = Y.tolist(), w.tolist()
    for name, f in PLAIN.items():
        assert f(Y, Ssp, k=k) == pytest.approx(REF[name](Yl, Sl, k), abs=1e-12), name
    for name, f in PS.items():
        assert f(Y, Ssp, w, k=k) == pytest.approx(REF[name](Yl, Sl, wl, k), abs=1e-12), name


@pytest.mark.parametrize("seed", range(4))
def test_representation_invariance(seed):
    Y, S, w = random_case(seed)
    S = S + np.random.default_rng(seed).random(S.shape) * 1e-3 + 0.01  # all stored, positive
    forms_true = [Y, sp.csr_matrix(Y), sp.csr_array(Y), sp.coo_array(Y), Y.astype(bool).tolist()]
    forms_score = [S, sp.csr_matrix(S), sp.csr_array(S), topk_pair(S, 5), topk_pair(S, 12)]
    for k in (1, 3, 5):
        for name, f in {**PLAIN, **PS}.items():
            args = (w,) if name in PS else ()
            vals = {f(yt, s, *args, k=k) for yt in forms_true for s in forms_score}
            assert len(vals) == 1, (name, k, vals)


def test_pair_with_empty_slots_matches_sparse():
    Y, S, w = random_case(3)
    stored = np.random.default_rng(0).random(S.shape) < 0.2
    Ssp = sp.csr_array(np.where(stored, S + 1, 0))
    L = np.full((S.shape[0], 6), -1)
    V = np.zeros((S.shape[0], 6))
    for i in range(S.shape[0]):
        r = R.ranking([float(S[i, j] + 1) if stored[i, j] else None for j in range(S.shape[1])], 6)
        L[i, : len(r)] = r
        V[i, : len(r)] = S[i, r] + 1
    for k in (1, 3, 6):
        assert precision_at_k(Y, (L, V), k=k) == precision_at_k(Y, Ssp, k=k)
        assert psndcg_at_k(Y, (L, V), w, k=k) == psndcg_at_k(Y, Ssp, w, k=k)


@pytest.mark.parametrize("seed", range(3))
def test_ndcg_matches_sklearn(seed):
    rng = np.random.default_rng(seed)
    Y = (rng.random((50, 20)) < 0.2).astype(int)
    S = rng.random((50, 20))  # distinct scores: sklearn's tie averaging does not matter
    for k in (1, 3, 5, 10):
        assert ndcg_at_k(Y, S, k=k) == pytest.approx(ndcg_score(Y, S, k=k), abs=1e-12)


def test_psp_with_unit_weights_is_precision_over_best_precision():
    Y, S, _ = random_case(7)
    ones = np.ones(Y.shape[1])
    for k in (1, 3, 5):
        best = np.minimum(Y.sum(axis=1), k).mean() / k
        assert psprecision_at_k(Y, S, ones, k=k) == pytest.approx(precision_at_k(Y, S, k=k) / best)


def test_inverse_propensity_matches_reference_and_formula():
    Y, _, _ = random_case(2, n=60, q=9)
    Y[:, 4] = 0  # a label never seen: the largest weight
    for A, B in [(0.55, 1.5), (0.5, 0.4), (0.6, 2.6)]:
        got = inverse_propensity(sp.csr_matrix(Y), A=A, B=B)
        assert got.shape == (9,)
        np.testing.assert_allclose(got, R.ref_inverse_propensity(Y.tolist(), A, B), rtol=1e-13)
    w = inverse_propensity(Y)
    C = (math.log(60) - 1) * 2.5**0.55
    assert w[4] == pytest.approx(1 + C * 1.5**-0.55)
    assert w[4] == w.max()


def test_never_densifies_a_huge_label_space():
    """n x q = 5 * 10^10: a dense (n, q) array (50 GB even as uint8) cannot be allocated."""
    n, q = 5000, 10**7
    rng = np.random.default_rng(0)
    rows = np.repeat(np.arange(n), 3)
    cols = rng.choice(q, size=3 * n, replace=False)
    Y = sp.csr_array((np.ones(3 * n, np.uint8), (rows, cols)), shape=(n, q))
    labels = cols.reshape(n, 3)[:, [0, 2, 1]].copy()
    labels[:, 1] = rng.integers(0, q, size=n)  # one likely miss per row
    pair = (labels, np.tile([3.0, 2.0, 1.0], (n, 1)))
    assert precision_at_k(Y, pair, k=1) == 1.0
    assert recall_at_k(Y, pair, k=3) == pytest.approx(2 / 3)
    Ssp = sp.csr_array((np.tile([3.0, 2.0, 1.0], n), (rows, labels.ravel())), shape=(n, q))
    assert ndcg_at_k(Y, Ssp, k=3) == ndcg_at_k(Y, pair, k=3)
    w = inverse_propensity(Y)
    assert w.shape == (q,)
    assert 0 < psprecision_at_k(Y, pair, w, k=3) < 1
    with pytest.warns(MetricSkippedWarning, match="cells exceeds DENSE_METRICS_MAX_CELLS"):
        res = evaluate(Y, None, pair, at_k=(1, 3), inv_propensity=w)
    assert res["precision@1"] == 1.0
    assert set(res.skipped) == set(METRIC_NAMES)


# --------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------


@pytest.mark.parametrize("f", [precision_at_k, recall_at_k, ndcg_at_k])
def test_k_must_be_positive_int(f):
    with pytest.raises(InvalidParameterError, match=r"'k' parameter of .* must be an int in the range \[1, inf\)\. Got 0"):
        f(Y_HAND, S_HAND, k=0)
    with pytest.raises(InvalidParameterError, match="'k' parameter"):
        f(Y_HAND, S_HAND, k=1.5)


@pytest.mark.parametrize(
    ("Y_score", "match"),
    [
        (S_HAND[:2], r"Y_score must have the shape of Y_true \(3, 4\); got \(2, 4\)"),
        (np.where(S_HAND > 0.6, np.nan, S_HAND), "finite values; got nan at row 0, column 0"),
        (sp.csr_array(S_HAND[:, :3]), "shape of Y_true"),
        ((np.zeros((3, 1), int), np.zeros((3, 1))), r"k must be <= the 1 columns .* got k=2"),
        ((np.full((3, 2), 4), np.zeros((3, 2))), r"must lie in \[0, 4\) or be -1; got 4"),
        ((np.array([[0, 1], [2, 2], [0, 1]]), np.zeros((3, 2))), "repeat a label in row 1"),
        ((np.zeros((3, 2), int), np.zeros((3, 3))), "two arrays of the same shape"),
        ((np.zeros((2, 2), int), np.zeros((2, 2))), "Y_score has 2 rows but Y_true has 3"),
    ],
)
def test_bad_scores(Y_score, match):
    with pytest.raises(ValueError, match=match):
        precision_at_k(Y_HAND, Y_score, k=2)


@pytest.mark.parametrize(
    ("Y_true", "match"),
    [
        (Y_HAND * 2, "found the value 2"),
        (sp.csr_array(Y_HAND * 3), "found the value 3"),
        (Y_HAND[0], r"2-D .* with shape \(4,\)"),
        (np.zeros((0, 4)), "at least one row"),
    ],
)
def test_bad_true(Y_true, match):
    with pytest.raises(ValueError, match=match):
        precision_at_k(Y_true, S_HAND, k=2)


def test_bad_propensities():
    with pytest.raises(ValueError, match=r"inv_propensity must have shape \(n_labels,\) = \(4,\); got shape \(3,\)"):
        psprecision_at_k(Y_HAND, S_HAND, [1, 2, 3], k=2)
    with pytest.raises(ValueError, match="finite non-negative"):
        psndcg_at_k(Y_HAND, S_HAND, [1, -2, 3, 4], k=2)
    with pytest.raises(InvalidParameterError, match="'A' parameter of inverse_propensity"):
        inverse_propensity(Y_HAND, A=0)
    with pytest.raises(InvalidParameterError, match="'B' parameter of inverse_propensity"):
        inverse_propensity(Y_HAND, B=-1.0)


# --------------------------------------------------------------------------
# evaluate(..., at_k=...)
# --------------------------------------------------------------------------


def test_evaluate_without_at_k_is_unchanged():
    Y, S, _ = random_case(1)
    res = evaluate(Y, (S > 0.5).astype(int), S)
    assert tuple(res) == METRIC_NAMES
    assert type(res) is dict


def test_evaluate_at_k_keys_equal_the_functions():
    Y, S, w = random_case(4)
    P = (S > 0.5).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("error", MetricSkippedWarning)
        res = evaluate(Y, P, S, at_k=(1, 3, 5), inv_propensity=w)
    base = evaluate(Y, P, S)
    assert {k: res[k] for k in METRIC_NAMES} == base
    assert res.skipped == {}
    for k in (1, 3, 5):
        assert res[f"precision@{k}"] == precision_at_k(Y, S, k=k)
        assert res[f"recall@{k}"] == recall_at_k(Y, S, k=k)
        assert res[f"ndcg@{k}"] == ndcg_at_k(Y, S, k=k)
        assert res[f"psprecision@{k}"] == psprecision_at_k(Y, S, w, k=k)
        assert res[f"psndcg@{k}"] == psndcg_at_k(Y, S, w, k=k)
    assert "psprecision@1" not in evaluate(Y, P, S, at_k=1)


def test_evaluate_pair_skips_the_score_measures_with_reason():
    Y, S, _ = random_case(5)
    P = (S > 0.5).astype(int)
    with pytest.warns(MetricSkippedWarning, match=r"one_error, coverage.*need every label's score"):
        res = evaluate(sp.csr_array(Y), P, topk_pair(S, 5), at_k=(1, 5))
    assert set(res.skipped) == {"one_error", "coverage", "ranking_loss", "average_precision", "macro_auc", "micro_auc"}
    assert res["hamming_loss"] == evaluate(Y, P, S)["hamming_loss"]
    assert res["precision@5"] == precision_at_k(Y, S, k=5)
    assert "coverage" not in res


def test_evaluate_large_q_skips_dense_measures(monkeypatch):
    monkeypatch.setattr(_evaluate_at_k, "DENSE_METRICS_MAX_CELLS", 100)
    Y, S, _ = random_case(6)  # 40 x 12 = 480 cells
    with pytest.warns(MetricSkippedWarning, match=r"40 x 12 = 480 cells exceeds DENSE_METRICS_MAX_CELLS = 100"):
        res = evaluate(sp.csr_array(Y), sp.csr_array((S > 0.5).astype(int)), S, at_k=3)
    assert set(res.skipped) == set(METRIC_NAMES)
    assert set(res) == {"precision@3", "recall@3", "ndcg@3"}


def test_evaluate_without_y_pred():
    Y, S, _ = random_case(8)
    with pytest.warns(MetricSkippedWarning, match=r"hamming_loss.*\(Y_pred is None\)"):
        res = evaluate(Y, None, S, at_k=2)
    assert res["coverage"] == evaluate(Y, Y, S)["coverage"]
    assert "hamming_loss" not in res


@pytest.mark.parametrize("at_k", [0, (1, 0), (), "3", (2.5,), True])
def test_evaluate_bad_at_k(at_k):
    with pytest.raises(ValueError, match="at_k must"):
        evaluate(Y_HAND, Y_HAND, S_HAND, at_k=at_k)
