"""Problem-transformation baselines (seed 003, Knowl 6-10, 17) and what all
baselines share: output contract, constant labels, sparse input, errors, and the
emotions benchmark against the per-label majority predictor."""

import numpy as np
import pytest
import scipy.sparse as sp
from reference_baselines import (
    loop_classifier_chain,
    loop_clr,
    loop_min_threshold_errors,
    loop_rakel_vote,
    loop_threshold_errors,
)
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import KFold, train_test_split
from sklearn.multioutput import ClassifierChain as SkClassifierChain
from sklearn.multioutput import MultiOutputClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier

from mlknn import get_estimator_class
from mlknn.baselines import (
    BPMLL,
    CML,
    MLDT,
    MLLS,
    MLRBF,
    AdaBoostMH,
    BinaryRelevance,
    CalibratedLabelRanking,
    ClassifierChain,
    EnsembleClassifierChains,
    LabelPowerset,
    RAkEL,
    RAkELd,
    RankSVM,
    StackedBinaryRelevance,
    ThresholdCalibration,
)
from mlknn.baselines._base import LabelClassifier
from mlknn.baselines._threshold import fit_threshold_model, threshold_targets
from mlknn.utils._param_validation import InvalidParameterError


def tree():
    return DecisionTreeClassifier(random_state=0)


@pytest.fixture
def axis_problem():
    """Each label is a threshold on its own feature: trees learn it exactly.

    Label 0: x0 > 0; label 1: x1 > 0.3; label 2: x0 > 0 and x2 > 0; label 3:
    x3 < -0.2. Features are continuous, so thresholds fall between points.
    """
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, size=(240, 5))
    Y = np.column_stack([X[:, 0] > 0, X[:, 1] > 0.3, (X[:, 0] > 0) & (X[:, 2] > 0), X[:, 3] < -0.2]).astype(np.uint8)
    return X[:160], Y[:160], X[160:], Y[160:]


# ------------------------------------------------------------------ registry
REGISTERED = {
    "br": BinaryRelevance,
    "cc": ClassifierChain,
    "ecc": EnsembleClassifierChains,
    "lp": LabelPowerset,
    "rakel": RAkEL,
    "rakeld": RAkELd,
    "clr": CalibratedLabelRanking,
    "stacking": StackedBinaryRelevance,
    "thresholdcalibration": ThresholdCalibration,
    "adaboostmh": AdaBoostMH,
    "mldt": MLDT,
    "ranksvm": RankSVM,
    "bpmll": BPMLL,
    "mlrbf": MLRBF,
    "cml": CML,
    "mlls": MLLS,
}


@pytest.mark.parametrize("name", sorted(REGISTERED))
def test_registry_resolves_every_baseline(name):
    assert get_estimator_class(name) is REGISTERED[name]


# ------------------------------------------------ shared contract, every class
def small_instances():
    """Every baseline with parameters small enough for quick tests."""
    return [
        BinaryRelevance(random_state=0),
        ClassifierChain(random_state=0),
        EnsembleClassifierChains(n_estimators=3, random_state=0),
        LabelPowerset(random_state=0),
        RAkEL(random_state=0),
        RAkELd(random_state=0),
        CalibratedLabelRanking(random_state=0),
        StackedBinaryRelevance(cv=3, random_state=0),
        ThresholdCalibration(BinaryRelevance(random_state=0)),
        AdaBoostMH(n_estimators=10),
        MLDT(random_state=0),
        RankSVM(max_iter=50),
        BPMLL(max_iter=30, random_state=0),
        MLRBF(fraction=0.1, random_state=0),
        CML(max_iter=30),
        MLLS(),
    ]


def _id(est):
    return type(est).__name__


@pytest.mark.parametrize("est", small_instances(), ids=_id)
def test_output_contract(est, axis_problem):
    X, Y, Xq, _ = axis_problem
    for Ytype in (np.uint8, np.int64, np.float64, bool):
        fitted = clone(est).fit(X, Y.astype(Ytype))
        pred = fitted.predict(Xq)
        assert pred.shape == (len(Xq), Y.shape[1])
        assert pred.dtype == np.dtype(Ytype)
        assert set(np.unique(pred.astype(int)).tolist()) <= {0, 1}
    proba = fitted.predict_proba(Xq)
    assert isinstance(proba, np.ndarray) and proba.shape == (len(Xq), Y.shape[1])
    assert proba.dtype == np.float64
    assert np.all((proba >= 0) & (proba <= 1))
    assert fitted.n_labels_ == Y.shape[1] and fitted.n_features_in_ == X.shape[1]


@pytest.mark.parametrize("est", small_instances(), ids=_id)
def test_constant_labels_are_predicted(est, axis_problem):
    """A label never (or always) relevant in training is predicted as that constant
    (base classifiers cannot fit one class). Label 4 is always 0, label 5 always 1."""
    X, Y, Xq, _ = axis_problem
    Yc = np.hstack([Y, np.zeros((len(Y), 1), np.uint8), np.ones((len(Y), 1), np.uint8)])
    fitted = clone(est).fit(X, Yc)
    pred = fitted.predict(Xq)
    proba = fitted.predict_proba(Xq)
    assert np.all(pred[:, 4] == 0)
    assert np.all(pred[:, 5] == 1)
    assert np.all(proba[:, 5] >= proba[:, 4])


@pytest.mark.parametrize("est", small_instances(), ids=_id)
def test_sparse_input_matches_dense(est, axis_problem):
    X, Y, Xq, _ = axis_problem
    dense = clone(est).fit(X, Y)
    sparse = clone(est).fit(sp.csr_matrix(X), Y)
    np.testing.assert_array_equal(sparse.predict(sp.csr_matrix(Xq)), dense.predict(Xq))
    np.testing.assert_allclose(sparse.predict_proba(sp.csr_matrix(Xq)), dense.predict_proba(Xq), atol=1e-6)


@pytest.mark.parametrize("est", small_instances(), ids=_id)
def test_single_label(est, axis_problem):
    X, Y, Xq, Yq = axis_problem
    fitted = clone(est).fit(X, Y[:, :1])
    assert fitted.predict(Xq).shape == (len(Xq), 1)
    assert fitted.predict_proba(Xq).shape == (len(Xq), 1)


@pytest.mark.parametrize("est", small_instances(), ids=_id)
def test_decision_function_agrees_with_predict(est, axis_problem):
    """Where there is a decision_function: > 0 exactly for the predicted labels,
    and predict_proba ranks like it (scikit-learn's multi-output convention)."""
    if not hasattr(est, "decision_function"):
        pytest.skip("no decision_function")
    X, Y, Xq, _ = axis_problem
    fitted = clone(est).fit(X, Y)
    dec = fitted.decision_function(Xq)
    np.testing.assert_array_equal((dec > 0).astype(int), fitted.predict(Xq))
    proba = fitted.predict_proba(Xq)
    for j in range(Y.shape[1]):
        order = np.argsort(dec[:, j], kind="stable")
        assert np.all(np.diff(proba[order, j]) >= 0)


def test_errors_name_parameter_and_value(axis_problem):
    X, Y, _, _ = axis_problem
    with pytest.raises(InvalidParameterError, match=r"'labelset_size' parameter of RAkEL.*Got 0"):
        RAkEL(labelset_size=0).fit(X, Y)
    with pytest.raises(ValueError, match=r"'n_estimators' parameter of RAkEL must be <= .*C\(4, 3\) = 4.*got 5"):
        RAkEL(n_estimators=5).fit(X, Y)
    with pytest.raises(ValueError, match=r"'order' parameter of ClassifierChain.*range\(4\)"):
        ClassifierChain(order=[0, 1, 1, 2]).fit(X, Y)
    with pytest.raises(ValueError, match=r"'label_sets' parameter of CML.*n_labels = 13"):
        CML(label_sets="all").fit(X[:20], np.eye(20, 13, dtype=int))
    with pytest.raises(ValueError, match=r"'estimator' parameter of ThresholdCalibration must have"):
        ThresholdCalibration(DecisionTreeClassifier(), response_method="decision_function").fit(X, Y)
    with pytest.raises(ValueError, match="binary indicator"):
        BinaryRelevance().fit(X, Y * 2)
    with pytest.raises(ValueError, match="requires y to be passed"):
        MLDT().fit(X, None)


# --------------------------------------------------------------- LabelClassifier
def test_label_classifier_constant_and_two_columns():
    X = np.arange(10.0).reshape(-1, 1)
    lc = LabelClassifier(LogisticRegression()).fit(X, np.ones(10))
    assert lc.estimator_ is None and lc.constant_ == 1
    np.testing.assert_array_equal(lc.predict_proba(X), np.column_stack([np.zeros(10), np.ones(10)]))
    lc = LabelClassifier(DecisionTreeClassifier()).fit(X, (X.ravel() > 4).astype(int))
    assert lc.predict_proba(X).shape == (10, 2)
    np.testing.assert_array_equal(lc.predict(X), (X.ravel() > 4).astype(int))


# ------------------------------------------------------------------------- BR
def test_br_equals_multioutput_classifier(axis_problem):
    X, Y, Xq, Yq = axis_problem
    br = BinaryRelevance(tree()).fit(X, Y)
    ref = MultiOutputClassifier(tree()).fit(X, Y)
    np.testing.assert_array_equal(br.predict(Xq), ref.predict(Xq))
    np.testing.assert_allclose(br.predict_proba(Xq), np.column_stack([P[:, 1] for P in ref.predict_proba(Xq)]))
    # By construction every label is one axis threshold: learnt (almost) exactly.
    assert np.mean(br.predict(Xq) != Yq) < 0.05


def test_br_t_criterion_fills_empty_predictions(axis_problem):
    X, Y, Xq, _ = axis_problem
    plain = BinaryRelevance(tree()).fit(X, Y)
    t = BinaryRelevance(tree(), t_criterion=True).fit(X, Y)
    P, Pt = plain.predict(Xq), t.predict(Xq)
    empty = P.sum(axis=1) == 0
    assert empty.any()
    np.testing.assert_array_equal(Pt[~empty], P[~empty])
    assert np.all(Pt[empty].sum(axis=1) == 1)
    proba = plain.predict_proba(Xq[empty])
    np.testing.assert_array_equal(np.argmax(Pt[empty], axis=1), np.argmax(proba, axis=1))


# ------------------------------------------------------------------------- CC
def test_cc_equals_sklearn_chain_and_loop_reference(axis_problem):
    X, Y, Xq, _ = axis_problem
    order = [2, 0, 3, 1]
    cc = ClassifierChain(tree(), order=order).fit(X, Y)
    ref = SkClassifierChain(tree(), order=order).fit(X, Y)
    np.testing.assert_array_equal(cc.predict(Xq), ref.predict(Xq).astype(int))
    np.testing.assert_allclose(cc.predict_proba(Xq), ref.predict_proba(Xq))
    np.testing.assert_array_equal(cc.predict(Xq), loop_classifier_chain(X, Y, Xq, order, tree))
    np.testing.assert_array_equal(cc.order_, order)


def test_cc_uses_the_chain():
    """Label 1 is a copy of label 0, which depends on x0 only through a narrow band:
    a chain fitted on [x, y0] predicts y1 equal to its own y0 prediction."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y0 = (np.abs(X[:, 0]) < 0.5).astype(np.uint8)
    Y = np.column_stack([y0, y0])
    cc = ClassifierChain(LogisticRegression(), order=[0, 1]).fit(X, Y)
    P = cc.predict(X)
    np.testing.assert_array_equal(P[:, 1], P[:, 0])
    # The second model leans on the appended label, not on x.
    coef = cc.estimators_[1].estimator_.coef_.ravel()
    assert abs(coef[-1]) > 5 * np.abs(coef[:-1]).max()


def test_cc_random_order_is_seeded(axis_problem):
    X, Y, _, _ = axis_problem
    a = ClassifierChain(order="random", random_state=3).fit(X, Y).order_
    b = ClassifierChain(order="random", random_state=3).fit(X, Y).order_
    np.testing.assert_array_equal(a, b)
    assert sorted(a.tolist()) == [0, 1, 2, 3]


# ------------------------------------------------------------------------ ECC
def test_ecc_samples_and_votes(axis_problem):
    X, Y, Xq, Yq = axis_problem
    m = len(X)
    ecc = EnsembleClassifierChains(n_estimators=5, random_state=0).fit(X, Y)
    assert all(len(s) == m for s in ecc.samples_)  # bootstrap: |D(r)| = |D|
    assert any(len(np.unique(s)) < m for s in ecc.samples_)  # with replacement
    orders = {tuple(c.order_) for c in ecc.estimators_}
    assert len(orders) > 1  # random orders
    votes = np.mean([c.predict(Xq) for c in ecc.estimators_], axis=0)
    np.testing.assert_allclose(ecc.predict_proba(Xq), votes)
    np.testing.assert_array_equal(ecc.predict(Xq), (votes > 0.5).astype(int))
    assert np.mean(ecc.predict(Xq) != Yq) < 0.05

    sub = EnsembleClassifierChains(n_estimators=3, bootstrap=False, random_state=0).fit(X, Y)
    for s in sub.samples_:
        assert len(s) == round(0.67 * m) and len(np.unique(s)) == len(s)

    soft = EnsembleClassifierChains(n_estimators=4, voting="soft", random_state=0).fit(X, Y)
    mean_p = np.mean([c.predict_proba(Xq) for c in soft.estimators_], axis=0)
    np.testing.assert_allclose(soft.predict_proba(Xq), mean_p)


def test_ecc_one_chain_on_all_data_is_a_chain(axis_problem):
    X, Y, Xq, _ = axis_problem
    ecc = EnsembleClassifierChains(n_estimators=1, bootstrap=False, max_samples=1.0, random_state=0).fit(X, Y)
    chain = ecc.estimators_[0]
    np.testing.assert_array_equal(ecc.predict(Xq), chain.predict(Xq))


# ------------------------------------------------------------------------- LP
def test_label_powerset_marginals_never_exceed_one():
    # Label 0 is in every label set: its marginal sums every class probability,
    # 1.0000000000000002 before the clip (seed 0, logistic regression).
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    Y = (rng.random((40, 5)) < 0.5).astype(np.uint8)
    Y[:, 0] = 1
    P = LabelPowerset(LogisticRegression()).fit(X, Y).predict_proba(X)
    assert P.min() >= 0.0 and P.max() <= 1.0
    np.testing.assert_allclose(P[:, 0], 1.0, rtol=0, atol=1e-12)


def test_label_powerset_by_construction():
    """Four quadrants, each with its own label set: LP's classes are exactly those
    four sets and it recovers them."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(200, 2))
    sets = np.array([[1, 0, 0], [1, 1, 0], [0, 1, 1], [0, 0, 0]], dtype=np.uint8)
    quad = (X[:, 0] > 0).astype(int) * 2 + (X[:, 1] > 0).astype(int)
    Y = sets[quad]
    lp = LabelPowerset(random_state=0).fit(X[:150], Y[:150])
    assert {tuple(r) for r in lp.label_sets_} == {tuple(r) for r in sets}
    pred = lp.predict(X[150:])
    assert np.mean(np.all(pred == Y[150:], axis=1)) > 0.9
    # predictions are always training label sets
    assert {tuple(r) for r in pred} <= {tuple(r) for r in sets}
    # marginals = class probabilities x label sets
    P = lp.estimator_.predict_proba(X[150:])
    np.testing.assert_allclose(lp.predict_proba(X[150:]), P @ lp.label_sets_[lp.estimator_.classes_])


# ---------------------------------------------------------------------- RAkEL
def test_rakel_labelsets_and_vote_against_loop(axis_problem):
    X, Y, Xq, _ = axis_problem
    q = Y.shape[1]
    rk = RAkEL(random_state=0).fit(X, Y)
    assert rk.labelsets_.shape == (min(2 * q, 4), 3)  # n = min(2q, C(4, 3)) = 4
    assert len({tuple(r) for r in rk.labelsets_}) == len(rk.labelsets_)  # distinct
    rk = RAkEL(labelset_size=2, random_state=1).fit(X, Y)
    assert rk.labelsets_.shape == (6, 2)  # 2q = 8 > C(4, 2) = 6
    proba, pred = rk.predict_proba(Xq), rk.predict(Xq)
    per_model = []
    for ls, (sets, model) in zip(rk.labelsets_, rk.estimators_):
        classes = model.predict(Xq)
        per_model.append([{int(ls[a]) for a in np.flatnonzero(sets[c])} for c in classes])
    for n in range(len(Xq)):
        ratio, ref_pred = loop_rakel_vote([tuple(ls) for ls in rk.labelsets_], [pm[n] for pm in per_model], q)
        np.testing.assert_allclose(proba[n], ratio)
        np.testing.assert_array_equal(pred[n], ref_pred)


def test_rakel_with_k_equal_q_is_label_powerset(axis_problem):
    X, Y, Xq, _ = axis_problem
    rk = RAkEL(labelset_size=4, n_estimators=1, random_state=0).fit(X, Y)
    model = rk.estimators_[0][1]
    lp = LabelPowerset(clone(model)).fit(X, Y)
    np.testing.assert_array_equal(rk.predict(Xq), lp.predict(Xq))


def test_rakel_uncovered_label_uses_training_frequency():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    Y = (rng.uniform(size=(60, 7)) < 0.3).astype(np.uint8)
    rk = RAkEL(labelset_size=2, n_estimators=2, random_state=0).fit(X, Y)
    uncovered = sorted(set(range(7)) - set(rk.labelsets_.ravel().tolist()))
    assert uncovered
    np.testing.assert_allclose(rk.predict_proba(X[:5])[:, uncovered], np.tile(Y.mean(0)[uncovered], (5, 1)))


def test_rakeld_partitions_the_labels(axis_problem):
    X, Y, Xq, Yq = axis_problem
    rd = RAkELd(labelset_size=3, random_state=0).fit(X, Y)
    flat = np.concatenate(rd.labelsets_)
    assert sorted(flat.tolist()) == [0, 1, 2, 3]
    assert sorted(len(ls) for ls in rd.labelsets_) == [1, 3]
    assert np.mean(rd.predict(Xq) != Yq) < 0.05
    whole = RAkELd(labelset_size=10, random_state=0).fit(X, Y)
    lp = LabelPowerset(clone(whole.estimators_[0][1])).fit(X, Y)
    np.testing.assert_array_equal(whole.predict(Xq), lp.predict(Xq))


# ------------------------------------------------------------------------ CLR
def test_clr_matches_loop_reference(axis_problem):
    X, Y, Xq, _ = axis_problem
    clr = CalibratedLabelRanking(tree()).fit(X, Y)
    ref_pred, zetas = loop_clr(X, Y, Xq, tree)
    np.testing.assert_array_equal(clr.predict(Xq), ref_pred)
    q = Y.shape[1]
    np.testing.assert_allclose(clr.predict_proba(Xq), (zetas[:, :q] - zetas[:, q:] + q) / (2 * q))
    assert len(clr.pairwise_estimators_) == q * (q - 1) // 2 and len(clr.virtual_estimators_) == q


def test_clr_empty_pair_splits_the_vote():
    """Labels 0 and 1 are identical: D_01 is empty, its vote is 1/2 each."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(100, 2))
    y = (X[:, 0] > 0).astype(np.uint8)
    Y = np.column_stack([y, y, (X[:, 1] > 0).astype(np.uint8)])
    clr = CalibratedLabelRanking(tree()).fit(X, Y)
    assert clr.pairwise_estimators_[0] is None
    ref_pred, _ = loop_clr(X, Y, X, tree)
    np.testing.assert_array_equal(clr.predict(X), ref_pred)


def test_clr_soft_votes_rank_by_probabilities(axis_problem):
    X, Y, Xq, Yq = axis_problem
    soft = CalibratedLabelRanking(tree(), voting="soft").fit(X, Y)
    hard = CalibratedLabelRanking(tree()).fit(X, Y)
    # Trees give 0/1 probabilities: soft and hard votes coincide.
    np.testing.assert_allclose(soft.predict_proba(Xq), hard.predict_proba(Xq))
    assert np.mean(hard.predict(Xq) != Yq) < 0.05


# ------------------------------------------------------------------- stacking
def test_stacking_meta_level_uses_cross_validated_outputs(axis_problem):
    X, Y, Xq, _ = axis_problem
    st = StackedBinaryRelevance(LogisticRegression(), cv=4, random_state=0).fit(X, Y)
    # Rebuild the meta training set by hand: each row predicted by a level-1
    # model that did not see it.
    Z = np.zeros(Y.shape)
    for train, test in KFold(4, shuffle=True, random_state=0).split(X):
        Z[test] = BinaryRelevance(LogisticRegression()).fit(X[train], Y[train]).predict_proba(X[test])
    meta = BinaryRelevance(LogisticRegression()).fit(np.hstack([X, Z]), Y)
    Zq = BinaryRelevance(LogisticRegression()).fit(X, Y).predict_proba(Xq)
    np.testing.assert_allclose(st.predict_proba(Xq), meta.predict_proba(np.hstack([Xq, Zq])), atol=1e-8)
    # In-sample level-1 outputs would differ (sanity check that the test can fail).
    Zin = BinaryRelevance(LogisticRegression()).fit(X, Y).predict_proba(X)
    assert np.abs(Zin - Z).max() > 1e-3


def test_stacking_learns_a_label_from_other_labels():
    """Label 2 = label 0 AND label 1; with only the level-1 outputs as level-2
    input (passthrough=False) a tree recovers it from the stacked predictions."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(300, 2))
    y0, y1 = X[:, 0] > 0, X[:, 1] > 0
    Y = np.column_stack([y0, y1, y0 & y1]).astype(np.uint8)
    st = StackedBinaryRelevance(tree(), passthrough=False, stack_method="predict", random_state=0).fit(X[:200], Y[:200])
    P = st.predict(X[200:])
    np.testing.assert_array_equal(P[:, 2], P[:, 0] & P[:, 1])
    assert np.mean(P != Y[200:]) < 0.05


# -------------------------------------------------------- threshold calibration
def test_threshold_targets_minimise_errors():
    rng = np.random.default_rng(0)
    F = rng.uniform(size=(60, 5))
    F[::7, 1] = F[::7, 2]  # some ties
    Y = (rng.uniform(size=(60, 5)) < 0.4).astype(np.uint8)
    s = threshold_targets(F, Y)
    for i in range(len(F)):
        assert loop_threshold_errors(F[i], Y[i], s[i]) == loop_min_threshold_errors(F[i].tolist(), Y[i].tolist())


def test_threshold_target_is_the_middle_cut():
    # Relevant {0.9, 0.7}, irrelevant {0.2, 0.1}: the cut between 0.7 and 0.2.
    s = threshold_targets(np.array([[0.9, 0.2, 0.7, 0.1]]), np.array([[1, 0, 1, 0]]))
    assert s[0] == pytest.approx(0.45)


class _ScoresAsFeatures(ClassifierMixin, BaseEstimator):
    """A 'model' whose scores are the first q features (to give known scores)."""

    def __init__(self, q=4):
        self.q = q

    def fit(self, X, Y):
        return self

    def predict_proba(self, X):
        return np.asarray(X)[:, : self.q]


def test_threshold_calibration_recovers_instance_thresholds():
    """Scores 0.2 + 0.1 y_j + shift_i with exactly 2 of 4 labels relevant: the best
    threshold of instance i is 0.25 + shift_i = mean of its scores, a linear
    function of the scores (w = 1/4 each, b = 0) that a global 0.5 cannot match."""
    rng = np.random.default_rng(0)
    m, q = 120, 4
    Y = np.zeros((m, q), dtype=np.uint8)
    for i in range(m):
        Y[i, rng.choice(q, 2, replace=False)] = 1
    shift = rng.uniform(0, 0.6, size=(m, 1))
    F = 0.2 + 0.1 * Y + shift
    tc = ThresholdCalibration(_ScoresAsFeatures(q)).fit(F, Y)
    np.testing.assert_allclose(tc.coef_, np.full(q, 0.25), atol=1e-8)
    assert tc.intercept_ == pytest.approx(0.0, abs=1e-8)
    np.testing.assert_array_equal(tc.predict(F), Y)
    assert np.mean((F > 0.5) != Y) > 0.2
    w, b = fit_threshold_model(F, Y)
    np.testing.assert_allclose(w, tc.coef_)


def test_threshold_calibration_cross_validated_scores(axis_problem):
    X, Y, Xq, Yq = axis_problem
    tc = ThresholdCalibration(BinaryRelevance(LogisticRegression()), cv=3).fit(X, Y)
    assert tc.response_method_ == "predict_proba"
    assert np.mean(tc.predict(Xq) != Yq) < 0.15
    dec = tc.decision_function(Xq)
    np.testing.assert_array_equal(tc.predict(Xq), (dec > 0).astype(int))


# ------------------------------------------ emotions: better than the majority
def _scaled(est):
    return make_pipeline(StandardScaler(), est)


def emotions_instances():
    """Every baseline with test-sized parameters; the scale-sensitive methods
    behind a StandardScaler (emotions' features have very different ranges)."""
    return [
        BinaryRelevance(random_state=0),
        ClassifierChain(random_state=0),
        EnsembleClassifierChains(n_estimators=5, random_state=0),
        LabelPowerset(random_state=0),
        RAkEL(random_state=0),
        RAkELd(random_state=0),
        CalibratedLabelRanking(random_state=0),
        StackedBinaryRelevance(cv=3, random_state=0),
        ThresholdCalibration(BinaryRelevance(random_state=0), cv=3),
        AdaBoostMH(n_estimators=50),
        MLDT(random_state=0),
        _scaled(RankSVM(max_iter=100)),
        _scaled(BPMLL(max_iter=50, random_state=0)),
        _scaled(MLRBF(random_state=0)),
        _scaled(CML(max_iter=50)),
        _scaled(MLLS()),
    ]


@pytest.fixture(scope="module")
def emotions_split():
    from conftest import data_home

    home = data_home()
    if home is None:
        pytest.skip("MLKNN_DATA is not set (CI always sets it)")
    from mlknn.datasets import load

    data = load("emotions", data_home=home)
    return train_test_split(data.X, data.Y, test_size=0.5, random_state=0)


def _emotions_id(est):
    return type(est[-1] if hasattr(est, "steps") else est).__name__


@pytest.mark.data
@pytest.mark.parametrize("est", emotions_instances(), ids=_emotions_id)
def test_emotions_beats_majority_predictor(est, emotions_split):
    Xtr, Xte, Ytr, Yte = emotions_split
    majority = (Ytr.mean(axis=0) > 0.5).astype(np.uint8)  # all zeros on emotions
    baseline = np.mean(majority[None, :] != Yte)
    pred = est.fit(Xtr, Ytr).predict(Xte)
    hamming = np.mean(pred != Yte)
    assert hamming < baseline, f"Hamming loss {hamming:.4f} not below the majority predictor's {baseline:.4f}"
