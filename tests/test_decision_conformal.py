"""mlknn.decision.ConformalLabelSets: hand-worked quantiles, bad input, coverage on real data.

The coverage tests fit ML-kNN once per dataset on a random half and score the other half
(the pool) once; each of the 200 repetitions then draws a random calibration/test split of
the pool. Conditional on the fitted model the pool's instances are exchangeable, and a
uniformly random split of them keeps the calibration and test instances exchangeable, which
is all the split conformal and conformal risk control arguments use: each guarantee holds
for the mean over random splits of a fixed pool. So the posteriors are computed once and
only the split is redrawn. The tolerance is four binomial standard errors of the mean over
the repetitions (the per-split coverage of a calibration set of size m varies like
alpha (1 - alpha) / (m + 2), the test mean adds alpha (1 - alpha) / n_test).
"""

import os

import numpy as np
import pytest

from mlknn import MLkNN
from mlknn.datasets import make_multilabel
from mlknn.decision import ConformalLabelSets, UncertifiedLabelWarning
from mlknn.decision._conformal_quantiles import fnr_threshold, label_thresholds, set_threshold

needs_data = pytest.mark.skipif(not os.environ.get("MLKNN_DATA"), reason="MLKNN_DATA is not set")

ALPHA = 0.1
REPEATS = 200


# ------------------------------------------------------------------ hand-worked
def test_set_threshold_by_hand():
    # Smallest relevant posterior per instance: 0.9, 0.5, 0.2, 0.7 (and +inf for the
    # instance with no label). n = 5, alpha = 0.4: floor(6 * 0.4) = 2nd smallest = 0.5.
    P = np.array([[0.9, 0.1], [0.5, 0.8], [0.3, 0.2], [0.7, 0.7], [0.4, 0.4]])
    Y = np.array([[1, 0], [1, 1], [0, 1], [1, 1], [0, 0]])
    assert set_threshold(P, Y, 0.4) == 0.5
    # alpha = 0.2: floor(1.2) = 1: the smallest, 0.2.
    assert set_threshold(P, Y, 0.2) == 0.2


def test_fnr_threshold_by_hand():
    # Relevant posteriors: instance 0 {0.9}, instance 1 {0.5, 0.8}, instance 2 {0.2}.
    # Mean FNR at t: t = 0.2 -> 0; t = 0.5 -> 1/3 (instance 2); t = 0.8 -> (1/2 + 1) / 3 = 1/2;
    # t = 0.9 -> (1 + 1) / 3 = 2/3; t = +inf -> 1. Budget (alpha (n + 1) - 1) / n with
    # alpha = 0.5, n = 3: (2 - 1) / 3 = 1/3: the largest t within it is 0.5.
    P = np.array([[0.9, 0.1], [0.5, 0.8], [0.3, 0.2]])
    Y = np.array([[1, 0], [1, 1], [0, 1]])
    assert fnr_threshold(P, Y, 0.5) == 0.5
    assert fnr_threshold(P, Y, 0.25) == 0.2  # budget 0: nothing may be missed


def _loop_fnr_threshold(P, Y, alpha):
    """Every calibration posterior (and +inf) tried as t, the risk summed instance by instance."""
    n = P.shape[0]
    best = None
    for t in sorted(set(P[Y == 1].tolist()) | {np.inf}):
        risk = 0.0
        for i in range(n):
            relevant = [P[i, j] for j in range(P.shape[1]) if Y[i, j]]
            if relevant:
                risk += sum(p < t for p in relevant) / len(relevant)
        if (risk + 1) / (n + 1) <= alpha + 1e-12:
            best = t
    return best


@pytest.mark.parametrize("seed", range(5))
def test_fnr_threshold_against_a_loop(seed):
    rng = np.random.default_rng(seed)
    Y = (rng.random((30, 4)) < 0.4).astype(int)
    P = (0.3 * Y + 0.7 * rng.random(Y.shape)).round(1)  # many ties
    for alpha in (0.05, 0.1, 0.3):
        assert fnr_threshold(P, Y, alpha) == _loop_fnr_threshold(P, Y, alpha)


def test_label_thresholds_by_hand():
    # Label 0 relevant to 4 instances (posteriors 0.2, 0.6, 0.7, 0.9): alpha = 0.4 gives
    # floor(5 * 0.4) = 2nd smallest, 0.6. Label 1 has one relevant instance: floor(2 * 0.4) = 0,
    # not certifiable, always predicted.
    P = np.array([[0.2, 0.5], [0.6, 0.1], [0.7, 0.3], [0.9, 0.2], [0.1, 0.9]])
    Y = np.array([[1, 0], [1, 0], [1, 0], [1, 0], [0, 1]])
    t, certified = label_thresholds(P, Y, 0.4)
    assert t[0] == 0.6 and t[1] == -np.inf
    assert certified.tolist() == [True, False]


# ------------------------------------------------------------------ the estimator
@pytest.fixture(scope="module")
def data():
    return make_multilabel(n_samples=300, n_features=6, n_labels=4, random_state=1)


@pytest.mark.parametrize("guarantee", ["set", "fnr", "label"])
def test_split_thresholds_are_the_calibration_quantiles(data, guarantee):
    from sklearn.model_selection import train_test_split

    sets = ConformalLabelSets(MLkNN(n_neighbors=5), guarantee=guarantee, random_state=0).fit(data.X, data.Y)
    X_fit, X_cal, Y_fit, Y_cal = train_test_split(data.X, data.Y, test_size=90, random_state=0)
    P_cal = MLkNN(n_neighbors=5).fit(X_fit, Y_fit).predict_proba(X_cal)
    assert sets.n_calibration_ == 90
    np.testing.assert_array_equal(sets.calibration_proba_, P_cal)
    expected = {"set": lambda: set_threshold(P_cal, Y_cal, 0.1), "fnr": lambda: fnr_threshold(P_cal, Y_cal, 0.1),
                "label": lambda: label_thresholds(P_cal, Y_cal, 0.1)[0]}[guarantee]()
    np.testing.assert_array_equal(sets.thresholds_, np.broadcast_to(expected, (4,)))
    P = sets.predict_proba(data.X[:30])
    np.testing.assert_array_equal(sets.predict(data.X[:30]), (P >= sets.thresholds_).astype(np.uint8))


def test_loo_method_calibrates_on_the_leave_one_out_posteriors(data):
    from mlknn.model_selection import loo_predict_proba

    sets = ConformalLabelSets(MLkNN(n_neighbors=5), method="loo").fit(data.X, data.Y)
    P = loo_predict_proba(MLkNN(n_neighbors=5), data.X, data.Y)
    np.testing.assert_array_equal(sets.calibration_proba_, P)
    assert sets.n_calibration_ == 300 and sets.thresholds_[0] == set_threshold(P, data.Y, 0.1)


def test_alpha_outside_the_unit_interval_is_refused(data):
    for alpha in (0, 1, -0.1, 1.5):
        with pytest.raises(ValueError, match="'alpha' parameter of ConformalLabelSets"):
            ConformalLabelSets(MLkNN(), alpha=alpha).fit(data.X, data.Y)


def test_alpha_too_small_names_the_smallest_certifiable(data):
    # 30 calibration rows certify alpha >= 1/31.
    with pytest.raises(ValueError, match=r">= 1 / \(n_calibration \+ 1\) = 0.03226 with 30 calibration"):
        ConformalLabelSets(MLkNN(n_neighbors=5), alpha=0.02, calibration_size=30).fit(data.X, data.Y)
    ConformalLabelSets(MLkNN(n_neighbors=5), alpha=1 / 31, calibration_size=30).fit(data.X, data.Y)


def test_bad_calibration_size_is_named(data):
    with pytest.raises(ValueError, match="'calibration_size' parameter"):
        ConformalLabelSets(MLkNN(), calibration_size=300).fit(data.X, data.Y)
    with pytest.raises(ValueError, match="calibration_size"):
        ConformalLabelSets(MLkNN(), calibration_size=1.5).fit(data.X, data.Y)


def test_label_without_a_positive_is_always_predicted(data):
    Y = data.Y.copy()
    Y[:, 2] = 0
    Y[0, 2] = 1  # one positive: its calibration part has at most one
    with pytest.warns(UncertifiedLabelWarning, match="always predicted"):
        sets = ConformalLabelSets(MLkNN(n_neighbors=5), guarantee="label", random_state=0).fit(data.X, Y)
    assert not sets.certified_[2] and sets.thresholds_[2] == -np.inf
    assert not np.isnan(sets.thresholds_).any()
    assert (sets.predict(data.X)[:, 2] == 1).all()


# ------------------------------------------------------------------ coverage on real data
@pytest.fixture(scope="module", params=["emotions", "yeast"])
def pool(request):
    from sklearn.preprocessing import MinMaxScaler

    from mlknn.datasets import load

    data = load(request.param)
    X = MinMaxScaler().fit_transform(data.X)
    order = np.random.default_rng(0).permutation(X.shape[0])
    fit, rest = order[: X.shape[0] // 2], order[X.shape[0] // 2:]
    model = MLkNN(n_neighbors=10).fit(X[fit], data.Y[fit])
    return model.predict_proba(X[rest]), data.Y[rest].astype(bool)


def _splits(n, seed=1):
    rng = np.random.default_rng(seed)
    for _ in range(REPEATS):
        perm = rng.permutation(n)
        yield perm[: n // 2], perm[n // 2:]


def _tolerance(n_cal, n_test, alpha=ALPHA):
    return 4 * np.sqrt(alpha * (1 - alpha) * (1 / (n_cal + 2) + 1 / n_test) / REPEATS)


@needs_data
def test_set_coverage_over_random_splits(pool):
    P, Y = pool
    covered = []
    for cal, test in _splits(len(P)):
        t = set_threshold(P[cal], Y[cal], ALPHA)
        covered.append(np.mean(np.all((P[test] >= t) | ~Y[test], axis=1)))
    assert np.mean(covered) >= 1 - ALPHA - _tolerance(len(P) // 2, len(P) - len(P) // 2)


@needs_data
def test_fnr_over_random_splits(pool):
    P, Y = pool
    risks = []
    for cal, test in _splits(len(P)):
        t = fnr_threshold(P[cal], Y[cal], ALPHA)
        missed = (Y[test] & (P[test] < t)).sum(axis=1)
        risks.append(np.mean(missed / np.maximum(Y[test].sum(axis=1), 1)))
    assert np.mean(risks) <= ALPHA + _tolerance(len(P) // 2, len(P) - len(P) // 2)


@needs_data
def test_per_label_coverage_over_random_splits(pool):
    P, Y = pool
    hits = np.zeros(Y.shape[1])
    relevant = np.zeros(Y.shape[1])
    for cal, test in _splits(len(P)):
        t, _ = label_thresholds(P[cal], Y[cal], ALPHA)
        hits += (Y[test] & (P[test] >= t)).sum(axis=0)
        relevant += Y[test].sum(axis=0)
    per_label = Y.sum(axis=0) / 2  # relevant instances per part, on average
    enough = per_label >= 5
    tolerance = _tolerance(per_label[enough], per_label[enough])
    assert (hits[enough] / relevant[enough] >= 1 - ALPHA - tolerance).all()


@needs_data
def test_loo_method_coverage_is_measured():
    # The jackknife has no finite-sample guarantee; on emotions its coverage is checked
    # against the jackknife+ bound 1 - 2 alpha (Barber et al. 2021) as a sanity floor, and
    # measured in docs/decisions.md.
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import MinMaxScaler

    from mlknn.datasets import load

    data = load("emotions")
    X = MinMaxScaler().fit_transform(data.X)
    coverage = []
    for seed in range(10):
        X_tr, X_te, Y_tr, Y_te = train_test_split(X, data.Y, test_size=0.3, random_state=seed)
        pred = ConformalLabelSets(MLkNN(n_neighbors=10), method="loo").fit(X_tr, Y_tr).predict(X_te)
        coverage.append(np.mean(np.all((pred == 1) | (Y_te == 0), axis=1)))
    assert np.mean(coverage) >= 1 - 2 * ALPHA
