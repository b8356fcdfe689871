"""Property-based tests (issue 8) over random small problems.

Estimators (every name of ``mlknn._registry.available_estimators()``, small
parameters ``n_neighbors=3, random_state=0``):

* ``predict_proba`` is finite and inside [0, 1], ``predict`` is 0/1, on any
  small problem (ties, duplicate rows, constant or empty labels included);
* label-permutation equivariance: fitting on ``Y[:, p]`` gives the outputs
  of fitting on ``Y``, columns permuted by ``p`` - for the kNN family and BR
  (``EQUIVARIANT``). Other estimators are skipped with the reason (label
  chains, random label subsets, ...), see ``NOT_EQUIVARIANT``;
* training-row-permutation invariance for the kNN family when no two
  distances tie.

Metrics (``mlknn.metrics``):

* perfect predictions reach each metric's optimum (``docs/metrics.md``,
  column "best");
* on random inputs every metric lies in its documented range, ``evaluate``
  agrees with the metric functions, and NaN appears only in the documented
  undefined cases;
* ``evaluate`` does not depend on the order of the instances (nor of the
  labels).

Hypothesis runs derandomised and bounded (``max_examples`` 5-50 per
property, no deadline), so the file is reproducible and runs in about a
minute on 2 cores.
"""

import warnings

import numpy as np
import pytest
from _estimator_checks import make_estimator
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from mlknn._registry import KNN_ESTIMATORS, available_estimators

try:
    from mlknn import metrics
except ImportError:  # pragma: no cover - the metrics module is part of the package
    metrics = None

needs_metrics = pytest.mark.skipif(metrics is None, reason="mlknn.metrics is not importable")

ESTIMATORS = available_estimators()

#: Estimators whose outputs follow a permutation of the label columns.
EQUIVARIANT = set(KNN_ESTIMATORS) | {"br"}

#: Why the others are not tested for label-permutation equivariance.
NOT_EQUIVARIANT = {
    "cc": "classifier chain: label j sees the predictions of labels 0..j-1 (the chain follows label order)",
    "ecc": "random chain orders drawn as permutations of label indices",
    "rakel": "random label subsets drawn by label index",
    "rakeld": "random disjoint label subsets drawn by label index",
    "lp": "label-set classes are numbered in label order; the base classifier breaks ties by class number",
    "clr": "pairwise votes of labels j < k; vote ties are broken by label index",
    "stacking": "meta-level features are laid out in label order and fitted with order-dependent numerics",
    "adaboostmh": "weak hypotheses chosen by an argmax over (feature, label); ties go to the lowest label index",
    "mldt": "split search sums impurities over labels; ties between splits follow label order",
    "ranksvm": "iterative solver over label pairs in label order (equal only up to solver tolerance)",
    "bpmll": "random initial weights are assigned to output units by label index",
    "mlrbf": "per-label clustering seeded in label order",
    "cml": "pairwise label-interaction features enumerated in label order",
    "mlls": "shared subspace fitted by an order-dependent iterative solver",
    "thresholdcalibration": "a wrapper: equivariant only if the wrapped estimator is",
}

#: Predict (not predict_proba) breaks ties by label index for these.
PREDICT_TIE_BY_LABEL_INDEX = {
    "brknna": "when no label exceeds 0.5 the top-confidence label is predicted; ties go to the lowest label index",
    "brknnb": "the top-s labels by confidence are predicted; ties at the cut go to the lowest label index",
}

#: Estimators slow enough (> 0.3 s per fit on 30 rows) to get fewer examples.
SLOW = {"ecc", "ranksvm", "bpmll", "stacking", "mlrbf", "cml", "iblr"}

SETTINGS = dict(
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)


make = make_estimator  # the shared small-data constructor (tests/_estimator_checks.py)


def fit_predict(name, X, Y, Xq):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence warnings of the baselines
        est = make(name).fit(X, Y)
        proba = np.asarray(est.predict_proba(Xq), dtype=float)
        pred = np.asarray(est.predict(Xq))
    return proba, pred


@st.composite
def problems(draw, tie_free=False):
    """(X, Y, Xq): a small multi-label problem and query points.

    With ``tie_free`` the features are continuous and all train-train and
    query-train distances are distinct; otherwise the problem may have
    integer features (many ties), duplicated rows, and labels that are
    always 0 or always 1.
    """
    n = draw(st.integers(8, 30))
    d = draw(st.integers(1, 5))
    q = draw(st.integers(1, 4))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    scale = draw(st.sampled_from([1e-3, 1.0, 1e3]))
    integer = not tie_free and draw(st.booleans())
    if integer:
        X = rng.integers(0, 3, size=(n, d)).astype(float) * scale
        Xq = rng.integers(0, 3, size=(5, d)).astype(float) * scale
    else:
        X = rng.normal(size=(n, d)) * scale
        Xq = rng.normal(size=(5, d)) * scale
    if not tie_free and draw(st.booleans()):
        k = draw(st.integers(1, n // 2))
        X[n - k :] = X[:k]  # duplicated rows
    density = draw(st.sampled_from([0.05, 0.3, 0.5, 0.9]))
    Y = (rng.random((n, q)) < density).astype(np.uint8)
    if not tie_free and q > 1 and draw(st.booleans()):
        Y[:, 0] = draw(st.sampled_from([0, 1]))  # a constant label
    if tie_free:
        D = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
        Dq = np.sqrt(((Xq[:, None, :] - X[None, :, :]) ** 2).sum(-1))
        iu = np.triu_indices(n, 1)
        for row in np.vstack([D + np.diag(np.full(n, np.inf)), Dq]):
            r = row[np.isfinite(row)]
            assume(np.all(np.diff(np.sort(r)) > 1e-9 * scale))
        assume(np.unique(D[iu]).size == iu[0].size)
    return X, Y, Xq


def _budget(name, fast, slow):
    return slow if name in SLOW else fast


# --------------------------------------------------------------------------
# Estimators
# --------------------------------------------------------------------------


@pytest.mark.parametrize("name", ESTIMATORS)
def test_predict_proba_finite_in_unit_interval(name):
    @settings(max_examples=_budget(name, 20, 5), **SETTINGS)
    @given(problems())
    def check(problem):
        X, Y, Xq = problem
        for Q in (Xq, X):
            proba, pred = fit_predict(name, X, Y, Q)
            assert proba.shape == pred.shape == (Q.shape[0], Y.shape[1])
            assert np.all(np.isfinite(proba)), "predict_proba has NaN or inf"
            assert proba.min() >= 0.0 and proba.max() <= 1.0, (proba.min(), proba.max())
            assert set(np.unique(pred)) <= {0, 1}

    check()


def assert_label_equivariant(fp, X, Y, Xq, perm, check_predict=True):
    """``fp(X, Y, Xq) -> (proba, pred)`` commutes with the label permutation ``perm``."""
    proba, pred = fp(X, Y, Xq)
    proba_p, pred_p = fp(X, Y[:, perm], Xq)
    np.testing.assert_allclose(proba_p, proba[:, perm], rtol=0, atol=1e-9)
    if check_predict:
        np.testing.assert_array_equal(pred_p, pred[:, perm])


def assert_row_invariant(fp, X, Y, Q, perm):
    """``fp`` gives the same outputs when the training rows are permuted."""
    proba, pred = fp(X, Y, Q)
    proba_p, pred_p = fp(X[perm], Y[perm], Q)
    np.testing.assert_allclose(proba_p, proba, rtol=0, atol=1e-9)
    np.testing.assert_array_equal(pred_p, pred)


@pytest.mark.parametrize("name", ESTIMATORS)
def test_label_permutation_equivariance(name):
    if name not in EQUIVARIANT:
        pytest.skip(f"{name}: not label-permutation equivariant - " + NOT_EQUIVARIANT.get(
            name, "not claimed for this estimator (label interactions may follow label order)"))

    @settings(max_examples=_budget(name, 25, 8), **SETTINGS)
    @given(problems(), st.randoms(use_true_random=False))
    def check(problem, rnd):
        X, Y, Xq = problem
        q = Y.shape[1]
        perm = np.array(rnd.sample(range(q), q))
        def fp(X, Y, Q):
            return fit_predict(name, X, Y, Q)

        assert_label_equivariant(fp, X, Y, Xq, perm, check_predict=name not in PREDICT_TIE_BY_LABEL_INDEX)

    check()


def _label_order_dependent(X, Y, Q):
    """A deliberately broken 'estimator': label j's score leans on label j - 1
    (like a classifier chain) and on the position j itself."""
    prior = Y.mean(axis=0)
    shifted = np.r_[0.5, prior[:-1]]
    proba = np.tile(0.5 * prior + 0.3 * shifted + 0.01 * np.arange(Y.shape[1]), (Q.shape[0], 1))
    return proba, (proba > 0.5).astype(np.uint8)


def _row_order_dependent(X, Y, Q):
    """Another broken one: uses the first training row."""
    proba = np.tile(Y[0] * 0.8 + 0.1, (Q.shape[0], 1))
    return proba, (proba > 0.5).astype(np.uint8)


def test_permutation_checks_can_fail():
    """The two permutation checks reject order-dependent outputs, so their
    passing for the real estimators means something."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 3))
    Y = (rng.random((20, 3)) < [0.2, 0.5, 0.8]).astype(np.uint8)
    with pytest.raises(AssertionError):
        assert_label_equivariant(_label_order_dependent, X, Y, X, np.array([2, 0, 1]))
    Y[0] = [1, 0, 1]
    Y[19] = [0, 1, 0]
    with pytest.raises(AssertionError):
        assert_row_invariant(_row_order_dependent, X, Y, X, np.arange(20)[::-1])


@pytest.mark.parametrize("name", [n for n in ESTIMATORS if n in KNN_ESTIMATORS])
def test_row_permutation_invariance_without_ties(name):
    @settings(max_examples=_budget(name, 25, 8), **SETTINGS)
    @given(problems(tie_free=True), st.randoms(use_true_random=False))
    def check(problem, rnd):
        X, Y, Xq = problem
        n = X.shape[0]
        perm = np.array(rnd.sample(range(n), n))
        def fp(X, Y, Q):
            return fit_predict(name, X, Y, Q)

        assert_row_invariant(fp, X, Y, np.vstack([Xq, X]), perm)

    check()


# --------------------------------------------------------------------------
# Metrics
# --------------------------------------------------------------------------

CLASSIFICATION = {
    "hamming_loss": "hamming_loss",
    "subset_accuracy": "subset_accuracy",
    "accuracy": "example_accuracy",
    "precision": "example_precision",
    "recall": "example_recall",
    "f1": "example_f1",
    "macro_precision": "macro_precision",
    "macro_recall": "macro_recall",
    "macro_f1": "macro_f1",
    "micro_precision": "micro_precision",
    "micro_recall": "micro_recall",
    "micro_f1": "micro_f1",
    "macro_accuracy": "macro_accuracy",
    "micro_accuracy": "micro_accuracy",
}
RANKING = {
    "one_error": "one_error",
    "coverage": "coverage",
    "ranking_loss": "ranking_loss",
    "average_precision": "average_precision",
    "macro_auc": "macro_auc",
    "micro_auc": "micro_auc",
}


@st.composite
def label_matrices(draw, min_n=1):
    n = draw(st.integers(min_n, 25))
    q = draw(st.integers(1, 6))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    density = draw(st.sampled_from([0.0, 0.1, 0.4, 0.7, 1.0]))
    Y = (rng.random((n, q)) < density).astype(np.uint8)
    return Y, rng


def _nondegenerate(Y):
    k = Y.sum(axis=1)
    return (k > 0) & (k < Y.shape[1])


def _undefined(name, Y):
    """Documented cases where a metric is NaN (docs/metrics.md)."""
    if name in ("one_error", "coverage", "ranking_loss", "average_precision"):
        return not _nondegenerate(Y).any()
    if name == "macro_auc":
        pos = Y.sum(axis=0)
        return not ((pos > 0) & (pos < Y.shape[0])).any()
    if name == "micro_auc":
        return Y.min() == Y.max()
    return False


def _evaluate(Yt, Yp, S):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", metrics.UndefinedMetricWarning)
        return metrics.evaluate(Yt, Yp, S)


def _function_value(name, Yt, Yp, S):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", metrics.UndefinedMetricWarning)
        if name in CLASSIFICATION:
            return getattr(metrics, CLASSIFICATION[name])(Yt, Yp)
        return getattr(metrics, RANKING[name])(Yt, S)


@needs_metrics
@settings(max_examples=50, **SETTINGS)
@given(label_matrices(), st.sampled_from(["binary", "noisy"]))
def test_perfect_predictions_reach_the_optimum(data, score_kind):
    Y, rng = data
    if score_kind == "binary":
        S = Y * 0.9 + 0.05  # every relevant label tied above every irrelevant one
    else:
        S = Y + 0.4 * rng.random(Y.shape)  # distinct scores, relevant still on top
    res = _evaluate(Y, Y, S)
    keep = _nondegenerate(Y)
    best = {name: (0.0 if not metrics.GREATER_IS_BETTER[name] else 1.0) for name in metrics.METRIC_NAMES}
    best["coverage"] = float((Y.sum(axis=1)[keep] - 1).mean()) if keep.any() else np.nan
    for name in metrics.METRIC_NAMES:
        if _undefined(name, Y):
            assert np.isnan(res[name]), name
        else:
            assert res[name] == pytest.approx(best[name], abs=1e-12), (name, res[name])
        assert _function_value(name, Y, Y, S) == pytest.approx(res[name], abs=1e-12, nan_ok=True), name


@needs_metrics
@settings(max_examples=50, **SETTINGS)
@given(label_matrices(), st.floats(0, 1), st.sampled_from(["continuous", "coarse"]))
def test_metrics_in_documented_ranges(data, flip, score_kind):
    Y, rng = data
    n, q = Y.shape
    Yp = np.where(rng.random(Y.shape) < flip, 1 - Y, Y).astype(np.uint8)
    S = rng.random(Y.shape) if score_kind == "continuous" else rng.integers(0, 3, Y.shape) / 2.0
    res = _evaluate(Y, Yp, S)
    assert list(res) == list(metrics.METRIC_NAMES)
    for name, value in res.items():
        assert isinstance(value, float), name
        if np.isnan(value):
            assert _undefined(name, Y), f"{name} is NaN on a defined case"
            continue
        assert not _undefined(name, Y), f"{name} should be NaN (undefined) but is {value}"
        hi = q - 1 if name == "coverage" else 1.0
        assert -1e-12 <= value <= hi + 1e-12, (name, value)
        assert _function_value(name, Y, Yp, S) == pytest.approx(value, abs=1e-12), name


@needs_metrics
@settings(max_examples=40, **SETTINGS)
@given(label_matrices(min_n=2), st.randoms(use_true_random=False))
def test_evaluate_invariant_to_instance_and_label_order(data, rnd):
    Y, rng = data
    n, q = Y.shape
    Yp = np.where(rng.random(Y.shape) < 0.3, 1 - Y, Y).astype(np.uint8)
    S = rng.integers(0, 4, Y.shape) / 3.0  # with ties: the tie rules must not depend on order
    res = _evaluate(Y, Yp, S)
    rows = np.array(rnd.sample(range(n), n))
    cols = np.array(rnd.sample(range(q), q))
    for r, c in ((rows, np.arange(q)), (np.arange(n), cols), (rows, cols)):
        other = _evaluate(Y[r][:, c], Yp[r][:, c], S[r][:, c])
        for name in metrics.METRIC_NAMES:
            assert other[name] == pytest.approx(res[name], rel=1e-12, abs=1e-12, nan_ok=True), name


@needs_metrics
def test_metric_checks_can_fail():
    """A wrong prediction moves every metric away from its optimum, so the
    optimum test is not vacuous."""
    Y = np.array([[1, 0, 1], [0, 1, 0], [1, 1, 0]], dtype=np.uint8)
    bad = 1 - Y
    res = _evaluate(Y, bad, bad * 0.9 + 0.05)
    for name in metrics.METRIC_NAMES:
        best = 0.0 if not metrics.GREATER_IS_BETTER[name] else 1.0
        if name == "coverage":
            best = float((Y.sum(axis=1) - 1).mean())
        assert res[name] != pytest.approx(best), name


# --------------------------------------------------------------------------
# Documentation of the guarantees
# --------------------------------------------------------------------------

_ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]


def test_guarantees_page_names_existing_tests():
    """Every ``tests/x.py::test_name`` on docs/guarantees.md exists."""
    import re

    page = (_ROOT / "docs" / "guarantees.md").read_text(encoding="utf-8")
    refs = set(re.findall(r"(tests/[\w/]+\.py)::(\w+)", page))
    assert len(refs) >= 40
    missing = []
    for path, name in sorted(refs):
        source = (_ROOT / path).read_text(encoding="utf-8") if (_ROOT / path).is_file() else ""
        if not re.search(rf"^def {name}\(", source, re.MULTILINE):
            missing.append(f"{path}::{name}")
    assert missing == [], missing


def test_pickle_warning_is_documented():
    import mlknn.persistence

    doc = " ".join(mlknn.persistence.__doc__.split())
    assert "never load one from an untrusted source" in doc
