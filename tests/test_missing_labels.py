"""Incomplete labels (NaN in Y, or ``Y_missing``): the count-based estimators against loop readings.

The reading is in mlknn.algorithms._missing and docs/incomplete_labels.md; the
loops in tests/reference_missing.py.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from reference_missing import loop_brknn_missing, loop_dmlknn_missing, loop_mlknn_missing
from sklearn.base import clone

from mlknn import IBLR, BMLkNN, BRkNN, BRkNNa, BRkNNb, DMLkNN, MLHiKNN, MLkNN, NeighborhoodClassifier
from mlknn.datasets import make_multilabel

COUNT_ESTIMATORS = [
    MLkNN(4), MLkNN(4, variant="skmultilearn"), MLkNN(4, variant="mulan", random_state=0),
    DMLkNN(4, delta=1), DMLkNN(4, variant="mulan"), BMLkNN(4, radius="auto"),
    NeighborhoodClassifier(radius=0.9, n_neighbors=4), BRkNN(4), BRkNN(4, variant="mulan"),
    BRkNN(4, weights="distance"), BRkNNa(4), BRkNNa(4, variant="skmultilearn"), BRkNNb(4),
]
IDS = [f"{type(e).__name__}-{i}" for i, e in enumerate(COUNT_ESTIMATORS)]


def _data(seed=0, n=120, fraction=0.3, rounded=False):
    data = make_multilabel(n_samples=n, n_features=4, n_labels=5, random_state=seed)
    X = np.round(data.X, 1) if rounded else data.X  # rounded: tied distances and duplicate rows
    Y = data.Y.astype(np.float64)
    rng = np.random.RandomState(seed)
    Y[rng.rand(*Y.shape) < fraction] = np.nan
    Y[:, 0][rng.rand(n) < 0.9] = np.nan  # a label almost never observed
    return X, data.Y, Y


def _graphs(est, X_train, X_query):
    train, _ = est.query_graph(None)
    query, _ = est.query_graph(X_query)
    return train.indices, query.indices


@pytest.mark.parametrize("est", COUNT_ESTIMATORS, ids=IDS)
def test_complete_labels_unchanged(est):
    """A float Y without NaN, and missing_labels="negative", give today's model bit for bit."""
    X, Y01, _ = _data()
    ref = clone(est).fit(X, Y01)
    for other in (clone(est).fit(X, Y01.astype(np.float64)),
                  clone(est).set_params(missing_labels="negative").fit(X, Y01),
                  clone(est).fit(X, Y01, Y_missing=np.zeros_like(Y01))):
        assert np.array_equal(other.predict_proba(X[:40]), ref.predict_proba(X[:40]))
        assert np.array_equal(np.asarray(other.predict(X[:40])), np.asarray(ref.predict(X[:40])))


@pytest.mark.parametrize("est", COUNT_ESTIMATORS, ids=IDS)
def test_negative_reading_is_zero_filled(est):
    X, _, Y = _data(1)
    neg = clone(est).set_params(missing_labels="negative").fit(X, Y)
    zero = clone(est).fit(X, np.nan_to_num(Y))
    assert np.array_equal(neg.predict_proba(X[:40]), zero.predict_proba(X[:40]))


@pytest.mark.parametrize("est", [e for e in COUNT_ESTIMATORS if e._supports_sparse_labels],
                         ids=[i for e, i in zip(COUNT_ESTIMATORS, IDS) if e._supports_sparse_labels])
def test_sparse_mask_equals_nan(est):
    """A CSR Y with a CSR ``Y_missing`` is the same model as the dense Y with NaN."""
    X, _, Y = _data(2, rounded=True)
    dense = clone(est).fit(X, Y)
    sparse = clone(est).fit(X, sp.csr_array(np.nan_to_num(Y)), Y_missing=sp.csr_array(np.isnan(Y)))
    assert sparse.sparse_labels_
    assert np.array_equal(sparse.predict_proba(X[:40]), dense.predict_proba(X[:40]))
    assert np.array_equal(sparse.predict(X[:40]).toarray(), np.asarray(dense.predict(X[:40])))
    for a, b in zip(sparse.predict_topk(X[:40], 3), dense.predict_topk(X[:40], 3)):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("rounded", [False, True])
def test_mlknn_against_loop(seed, rounded):
    X, _, Y = _data(seed, rounded=rounded)
    est = MLkNN(4).fit(X[:90], Y[:90])
    train, query = _graphs(est, X[:90], X[90:])
    posterior, prior, train_counts, _ = loop_mlknn_missing(train, Y[:90], query, 4)
    np.testing.assert_array_equal(est.prior_, prior)
    np.testing.assert_allclose(est.predict_proba(X[90:]), posterior, rtol=0, atol=1e-12)


def test_bmlknn_against_loop():
    X, _, Y = _data(3, rounded=True)
    est = BMLkNN(4, radius="auto").fit(X[:90], Y[:90])
    train_g, _ = est.query_graph(None)
    query_g, _ = est.query_graph(X[90:])

    def inside(g):
        return [list(g.indices[i][g.metric_distances[i] <= est.radius_]) for i in range(g.n_points)]

    posterior, prior, _, _ = loop_mlknn_missing(inside(train_g), Y[:90], inside(query_g), 4)
    np.testing.assert_array_equal(est.prior_, prior)
    np.testing.assert_allclose(est.predict_proba(X[90:]), posterior, rtol=0, atol=1e-12)


def test_nc_against_loop():
    """NC: every training point within the radius (leave-one-out for the training rows)."""
    X, _, Y = _data(7, n=100, rounded=True)
    est = NeighborhoodClassifier(radius=0.8, n_neighbors=4).fit(X[:80], Y[:80])
    d_train = np.sqrt(((X[:80, None, :] - X[None, :80, :]) ** 2).sum(-1))
    d_query = np.sqrt(((X[80:, None, :] - X[None, :80, :]) ** 2).sum(-1))
    train = [[j for j in range(80) if j != i and d_train[i, j] <= 0.8] for i in range(80)]
    query = [[j for j in range(80) if d_query[t, j] <= 0.8] for t in range(20)]
    assert max(map(len, train)) == est.max_count_ and max(map(len, query)) <= est.max_count_
    posterior, prior, _, _ = loop_mlknn_missing(train, Y[:80], query, 80, n_bins=est.max_count_ + 1)
    np.testing.assert_array_equal(est.prior_, prior)
    np.testing.assert_allclose(est.predict_proba(X[80:]), posterior, rtol=0, atol=1e-12)


@pytest.mark.parametrize("delta", [0, 1, 4])
def test_dmlknn_against_loop(delta):
    X, _, Y = _data(4, n=80, rounded=True)
    est = DMLkNN(4, delta=delta).fit(X[:60], Y[:60])
    train, query = _graphs(est, X[:60], X[60:])
    posterior = loop_dmlknn_missing(train, Y[:60], query, 4, delta)
    np.testing.assert_allclose(est.predict_proba(X[60:]), posterior, rtol=0, atol=1e-12)


@pytest.mark.parametrize("weights", ["uniform", "distance"])
def test_brknn_against_loop(weights):
    X, _, Y = _data(5, rounded=True)
    est = BRkNN(4, weights=weights).fit(X[:90], Y[:90])
    _, query = _graphs(est, X[:90], X[90:])
    w = None
    if weights == "distance":
        g, _ = est.query_graph(X[90:])
        d = g.metric_distances
        zero = (d == 0).any(axis=1, keepdims=True)
        w = np.where(zero, (d == 0).astype(float), 1.0 / np.where(d == 0, 1.0, d))
    np.testing.assert_allclose(est.predict_proba(X[90:]), loop_brknn_missing(Y[:90], query, 4, w),
                               rtol=0, atol=1e-12)


def test_hand_worked_counts():
    """One query, k = 4: neighbours with labels (1, 0, NaN, 1) count round(4 * 2 / 3) = 3; all NaN: round(4 f)."""
    X = np.array([[0.0], [1.0], [2.0], [3.0], [4.0], [10.0]])
    Y = np.array([[1, np.nan], [0, np.nan], [np.nan, np.nan], [1, np.nan], [0, 1], [1, 0]])
    est = BRkNNa(4, variant="skmultilearn").fit(X, Y)
    # scores = count / k; label 1: f = 1/2 over the observed rows 4 and 5, round(4 * 0.5) = 2
    np.testing.assert_allclose(est.predict_proba(np.array([[1.4]])), [[3 / 4, 2 / 4]])


@pytest.mark.parametrize("cls", [MLHiKNN, IBLR])
def test_other_estimators_refuse_unknown_labels(cls):
    X, _, Y = _data()
    with pytest.raises(ValueError, match="does not learn from incomplete labels.*MLkNN"):
        cls(n_neighbors=4).fit(X, Y)


def test_bad_missing_mask():
    X, Y01, _ = _data()
    with pytest.raises(ValueError, match="'Y_missing' parameter must have the shape of Y"):
        MLkNN(4).fit(X, Y01, Y_missing=np.zeros((3, 3)))
    with pytest.raises(ValueError, match="'Y_missing' parameter must be a 0/1"):
        MLkNN(4).fit(X, Y01, Y_missing=np.full(Y01.shape, 2))
    with pytest.raises(ValueError, match="missing_labels"):
        MLkNN(4, missing_labels="zero").fit(X, Y01)


def test_fit_from_graph_takes_the_mask():
    X, _, Y = _data(6)
    ref = MLkNN(4).fit(X, Y)
    graph, _ = ref.query_graph(None)
    other = MLkNN(4).fit_from_graph(graph, np.nan_to_num(Y), Y_missing=np.isnan(Y))
    qg, _ = ref.query_graph(X[:30])
    assert np.array_equal(other.predict_proba_from_graph(qg), ref.predict_proba(X[:30]))


def test_capability_reported():
    assert MLkNN().knn_capabilities()["missing_labels"]
    assert not MLHiKNN().knn_capabilities()["missing_labels"]


def test_all_unknown_refused():
    X, Y01, _ = _data()
    with pytest.raises(ValueError, match="every entry of Y is unknown"):
        MLkNN(4).fit(X, np.full(Y01.shape, np.nan))


@pytest.mark.parametrize("est", [MLkNN(4), DMLkNN(4, delta=1), BRkNN(4)], ids=["MLkNN", "DMLkNN", "BRkNN"])
def test_saved_and_loaded_with_its_unknown_entries(est, tmp_path):
    from mlknn import persistence

    X, _, Y = _data(8)
    model = clone(est).fit(X, Y)
    persistence.save(model, tmp_path / "m.mlknn")
    again = persistence.load(tmp_path / "m.mlknn")
    assert np.array_equal(again.predict_proba(X[:30]), model.predict_proba(X[:30]))


def test_baselines_refuse_nan_naming_the_estimators_that_learn_from_it():
    from mlknn.baselines import BinaryRelevance

    X, _, Y = _data()
    with pytest.raises(ValueError, match="NaN entries.*BRkNN.*DMLkNN.*MLkNN"):
        BinaryRelevance().fit(X, Y)
