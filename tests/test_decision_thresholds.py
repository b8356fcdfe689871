"""mlknn.decision.TunedThresholds: hand-worked cuts, a brute-force reference, the fixed rule."""

import os

import numpy as np
import pytest
from reference_decision import MEASURES, best_global_value, best_label_values, best_rank_value
from sklearn.base import clone

from mlknn import MLHiKNN, MLkNN
from mlknn.datasets import make_multilabel
from mlknn.decision import TunedThresholds
from mlknn.decision._search import global_threshold, per_label_thresholds, proportional_thresholds, rank_cut
from mlknn.metrics import evaluate, macro_f1

needs_data = pytest.mark.skipif(not os.environ.get("MLKNN_DATA"), reason="MLKNN_DATA is not set")


# ------------------------------------------------------------------ hand-worked
def test_per_label_f1_by_hand():
    # Sorted: 0.2 (irrelevant), 0.3 (relevant), 0.8 (irrelevant), 0.9 (relevant).
    # Predicting {0.3, 0.8, 0.9} (threshold 0.25) gives TP 2, FP 1: F1 = 4/5, the best.
    P = np.array([[0.9], [0.8], [0.3], [0.2]])
    Y = np.array([[1], [0], [1], [0]])
    t, value = per_label_thresholds(P, Y, "f1")
    assert t[0] == pytest.approx(0.25) and value[0] == pytest.approx(0.8)


def test_per_label_hamming_by_hand_takes_the_middle_of_equal_cuts():
    # One error at threshold 0.25 and at 0.85 (and two elsewhere): the lower middle is 0.25.
    P = np.array([[0.9], [0.8], [0.3], [0.2]])
    Y = np.array([[1], [0], [1], [0]])
    t, value = per_label_thresholds(P, Y, "hamming_loss")
    assert t[0] == pytest.approx(0.25) and value[0] == pytest.approx(0.25)


def test_global_by_hand():
    # Sorted entries 0.2, 0.4 (irrelevant), 0.6, 0.9 (relevant): 0.5 separates them.
    P = np.array([[0.9, 0.4], [0.6, 0.2]])
    Y = np.array([[1, 0], [1, 0]])
    for scoring in ("micro_f1", "f1", "macro_f1"):
        t, value = global_threshold(P, Y, scoring)
        assert t == pytest.approx(0.5) and value == pytest.approx(1.0)
    # Micro-F1 when the relevant entries are 0.2, 0.6, 0.9: predicting all of them
    # (TP 3, FP 1) gives 6/7, better than cutting at 0.5 (4/5).
    t, value = global_threshold(P, np.array([[1, 0], [1, 1]]), "micro_f1")
    assert t < 0.2 and value == pytest.approx(6 / 7)


def test_rcut_by_hand():
    P = np.array([[0.9, 0.5, 0.1], [0.2, 0.7, 0.6]])
    Y = np.array([[1, 1, 0], [0, 1, 1]])
    assert rank_cut(P, Y, "f1") == (2, pytest.approx(1.0))
    # Hamming loss: r = 1 makes 2 errors, r = 2 none, r = 3 two.
    assert rank_cut(P, Y, "hamming_loss") == (2, pytest.approx(0.0))


def test_pcut_by_hand():
    # Relevant to 2 of 4 instances: predicted for the 2 highest scores, cut between 0.35 and 0.4.
    P = np.array([[0.1], [0.4], [0.35], [0.8]])
    Y = np.array([[0], [1], [0], [1]])
    assert proportional_thresholds(P, Y)[0] == pytest.approx(0.375)


def test_pcut_with_ties_takes_the_nearest_reachable_count():
    # Three equal scores: 2 of 4 predicted is unreachable; 1 (above 0.5) and 4 are reachable.
    P = np.array([[0.5], [0.5], [0.5], [0.9]])
    Y = np.array([[1], [0], [0], [1]])
    t = proportional_thresholds(P, Y)[0]
    assert 0.5 < t < 0.9


# ------------------------------------------------------- against brute force
def _random_scores(seed, n=40, q=5, decimals=1):
    rng = np.random.default_rng(seed)
    Y = (rng.random((n, q)) < 0.3).astype(np.uint8)
    # Scores that lean towards the truth, rounded so that many tie.
    P = np.clip(0.35 * Y + rng.random((n, q)) * 0.7, 0, 1).round(decimals)
    return P, Y


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("scoring", ["f1", "hamming_loss"])
def test_per_label_search_finds_the_best_threshold(seed, scoring):
    P, Y = _random_scores(seed)
    t, values = per_label_thresholds(P, Y, scoring)
    np.testing.assert_allclose(values, best_label_values(P, Y, scoring), atol=1e-12)
    # The returned thresholds realise those values under the rule p > t.
    pred = (P > t).astype(int)
    for j in range(P.shape[1]):
        if scoring == "f1":
            assert macro_f1(Y[:, j:j + 1], pred[:, j:j + 1]) == pytest.approx(values[j], abs=1e-12)
        else:
            assert np.mean(Y[:, j] != pred[:, j]) == pytest.approx(values[j], abs=1e-12)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("scoring", sorted(MEASURES))
def test_global_search_finds_the_best_threshold(seed, scoring):
    P, Y = _random_scores(seed, decimals=2 if seed % 2 else 1)
    t, value = global_threshold(P, Y, scoring)
    assert value == pytest.approx(best_global_value(P, Y, scoring), abs=1e-10)
    assert MEASURES[scoring](Y, (P > t).astype(int)) == pytest.approx(value, abs=1e-10)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("scoring", sorted(MEASURES))
def test_rank_cut_finds_the_best_r(seed, scoring):
    P, Y = _random_scores(seed)
    r, value = rank_cut(P, Y, scoring)
    assert value == pytest.approx(best_rank_value(P, Y, scoring), abs=1e-12)


# --------------------------------------------------------------- the estimator
@pytest.fixture(scope="module")
def data():
    return make_multilabel(n_samples=150, n_features=6, n_labels=4, random_state=3)


@pytest.mark.parametrize("strategy", ["per-label", "global", "rcut", "pcut"])
def test_rule_is_chosen_on_the_out_of_sample_posteriors(data, strategy):
    clf = TunedThresholds(MLkNN(n_neighbors=5), strategy=strategy, cv="loo").fit(data.X, data.Y)
    P = clf.oof_proba_
    assert P.shape == data.Y.shape
    if strategy in ("per-label", "pcut"):
        expected = {"per-label": per_label_thresholds(P, data.Y, "f1")[0],
                    "pcut": proportional_thresholds(P, data.Y)}[strategy]
        np.testing.assert_array_equal(clf.thresholds_, expected)
    elif strategy == "global":
        assert np.all(clf.thresholds_ == global_threshold(P, data.Y, "f1")[0])
    else:
        assert clf.thresholds_ is None and clf.n_top_labels_ == rank_cut(P, data.Y, "f1")[0]
    # predict applies the rule to the fitted estimator's posteriors.
    proba = clf.predict_proba(data.X[:20])
    np.testing.assert_array_equal(proba, MLkNN(n_neighbors=5).fit(data.X, data.Y).predict_proba(data.X[:20]))
    pred = clf.predict(data.X[:20])
    if clf.thresholds_ is not None:
        np.testing.assert_array_equal(pred, (proba > clf.thresholds_).astype(pred.dtype))
    else:
        assert (pred.sum(axis=1) == clf.n_top_labels_).all()


def test_best_score_is_the_out_of_sample_measure(data):
    for strategy, scoring in [("per-label", "f1"), ("global", "micro_f1"), ("rcut", "hamming_loss")]:
        clf = TunedThresholds(MLkNN(n_neighbors=5), strategy=strategy, scoring=scoring, cv="loo").fit(data.X, data.Y)
        P = clf.oof_proba_
        pred = clf._decide(P)
        key = "macro_f1" if strategy == "per-label" else scoring
        assert evaluate(data.Y, pred, P)[key] == pytest.approx(clf.best_score_, abs=1e-12)


def test_min_labels_one_gives_every_instance_its_top_label(data):
    base = TunedThresholds(MLkNN(n_neighbors=5), strategy="fixed", threshold=0.9).fit(data.X, data.Y)
    clf = clone(base).set_params(min_labels=1).fit(data.X, data.Y)
    plain, forced = base.predict(data.X), clf.predict(data.X)
    empty = plain.sum(axis=1) == 0
    assert empty.any() and (forced.sum(axis=1) >= 1).all()
    np.testing.assert_array_equal(forced[~empty], plain[~empty])
    top = np.argmax(clf.predict_proba(data.X), axis=1)  # argmax: the lower index among equal scores
    assert (forced[empty].sum(axis=1) == 1).all()
    np.testing.assert_array_equal(np.argmax(forced[empty], axis=1), top[empty])


def test_min_labels_is_added_after_rcut(data):
    clf = TunedThresholds(MLkNN(n_neighbors=5), strategy="rcut", scoring="hamming_loss", cv="loo", min_labels=3)
    pred = clf.fit(data.X, data.Y).predict(data.X)
    assert (pred.sum(axis=1) == max(3, clf.n_top_labels_)).all()


def test_fixed_half_reproduces_predict_on_synthetic_data(data):
    for est in (MLkNN(n_neighbors=5), MLHiKNN(n_neighbors=5)):
        clf = TunedThresholds(est, strategy="fixed").fit(data.X, data.Y)
        assert clf.oof_proba_ is None
        np.testing.assert_array_equal(clf.predict(data.X), clone(est).fit(data.X, data.Y).predict(data.X))


@needs_data
@pytest.mark.parametrize("name", ["emotions", "yeast"])
def test_fixed_half_reproduces_mlknn_predict_on_real_data(name):
    from sklearn.preprocessing import MinMaxScaler

    from mlknn.datasets import load

    train, test = load(name, split="train"), load(name, split="test")
    scaler = MinMaxScaler().fit(train.X)
    train.X, test.X = scaler.transform(train.X), scaler.transform(test.X)
    est = MLkNN(n_neighbors=10).fit(train.X, train.Y)
    clf = TunedThresholds(MLkNN(n_neighbors=10), strategy="fixed", threshold=0.5).fit(train.X, train.Y)
    np.testing.assert_array_equal(clf.predict(test.X), est.predict(test.X))


def test_predict_keeps_the_label_dtype(data):
    Y = data.Y.astype(np.int32)
    pred = TunedThresholds(MLkNN(n_neighbors=5), strategy="global", cv="loo").fit(data.X, Y).predict(data.X)
    assert pred.dtype == np.int32


def test_predict_topk_is_the_estimators(data):
    clf = TunedThresholds(MLkNN(n_neighbors=5), strategy="fixed").fit(data.X, data.Y)
    labels, scores = clf.predict_topk(data.X[:5], 2)
    ref = MLkNN(n_neighbors=5).fit(data.X, data.Y).predict_topk(data.X[:5], 2)
    np.testing.assert_array_equal(labels, ref[0])
    np.testing.assert_array_equal(scores, ref[1])


def test_bad_parameters_are_named(data):
    with pytest.raises(ValueError, match="'scoring' parameter of TunedThresholds.*per-label.*micro_f1"):
        TunedThresholds(MLkNN(), scoring="micro_f1").fit(data.X, data.Y)
    with pytest.raises(ValueError, match="strategy"):
        TunedThresholds(MLkNN(), strategy="best").fit(data.X, data.Y)
    with pytest.raises(ValueError, match="min_labels"):
        TunedThresholds(MLkNN(), min_labels=-1).fit(data.X, data.Y)
    with pytest.raises(ValueError, match="estimator"):
        TunedThresholds(object()).fit(data.X, data.Y)


def test_oof_proba_is_the_exact_leave_one_out_posterior(data):
    from mlknn.model_selection import loo_predict_proba

    clf = TunedThresholds(MLkNN(n_neighbors=5)).fit(data.X, data.Y)
    np.testing.assert_array_equal(clf.oof_proba_, loo_predict_proba(MLkNN(n_neighbors=5), data.X, data.Y))


def test_a_baseline_with_cross_fitting(data):
    from mlknn.baselines import BinaryRelevance

    clf = TunedThresholds(BinaryRelevance(random_state=0), strategy="global", scoring="micro_f1", cv=3,
                          random_state=0).fit(data.X, data.Y)
    assert clf.oof_proba_.shape == data.Y.shape and clf.predict(data.X).shape == data.Y.shape


def test_fallback_below_keeps_the_fixed_threshold_for_hopeless_labels():
    # Label 1 has one positive whose posterior ties with every negative: the best F1 cut
    # predicts it for all 40 instances (F1 = 2 / 41), below the fallback of 0.5.
    X = np.arange(40.0).reshape(-1, 1)  # row numbers: the posteriors are looked up by them
    Y = np.zeros((40, 2), dtype=np.uint8)
    Y[:20, 0] = 1
    Y[7, 1] = 1

    class Fixed:
        """An estimator whose posteriors are given, row by row, whatever it is fitted on."""

        def __init__(self, P=None):
            self.P = P

        def get_params(self, deep=True):
            return {"P": self.P}

        def set_params(self, **params):
            self.P = params.get("P", self.P)
            return self

        def fit(self, X, Y):
            return self

        def predict_proba(self, X):
            return self.P[np.asarray(X)[:, 0].astype(int)]

    P = np.column_stack([np.r_[np.full(20, 0.8), np.full(20, 0.3)], np.full(40, 0.2)])
    plain = TunedThresholds(Fixed(P), cv=2).fit(X, Y)
    assert plain.thresholds_[1] < 0.2  # predicts label 1 everywhere
    fallback = TunedThresholds(Fixed(P), cv=2, fallback_below=0.5).fit(X, Y)
    assert fallback.fallback_labels_.tolist() == [False, True]
    assert fallback.thresholds_[1] == 0.5 and fallback.thresholds_[0] == plain.thresholds_[0]
    # best_score_ is the out-of-sample macro-F1 of the rule actually kept.
    assert fallback.best_score_ == pytest.approx(macro_f1(Y, fallback._decide(P)))
    with pytest.raises(ValueError, match="'fallback_below' parameter"):
        TunedThresholds(Fixed(P), strategy="global", fallback_below=0.1).fit(X, Y)


def test_sparse_labels_over_the_dense_budget_are_refused(data, monkeypatch):
    import scipy.sparse as sp

    from mlknn.utils._validation import DENSE_LABEL_BUDGET_ENV, LabelSpaceTooLargeError

    Y = sp.csr_array(data.Y)
    pred = TunedThresholds(MLkNN(n_neighbors=5), strategy="global").fit(data.X, Y).predict(data.X)
    assert pred.shape == data.Y.shape
    monkeypatch.setenv(DENSE_LABEL_BUDGET_ENV, "100")
    with pytest.raises(LabelSpaceTooLargeError, match="TunedThresholds would need dense out-of-sample posteriors"):
        TunedThresholds(MLkNN(n_neighbors=5)).fit(data.X, Y)
