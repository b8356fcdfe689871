import numpy as np
import pytest
import scipy.sparse as sp
from reference_impls import loop_mlknn
from sklearn.base import clone

from mlknn import MLkNN
from mlknn.neighbors import BruteNeighbors


@pytest.mark.parametrize("k,s", [(1, 1.0), (5, 1.0), (10, 0.5), (7, 0.0)])
def test_mlknn_matches_loop_reference(small_problem, k, s):
    X, Y = small_problem
    Xq = X[:20] + 0.05
    clf = MLkNN(n_neighbors=k, smoothing=s).fit(X, Y)
    index = BruteNeighbors().fit(X)
    train_nbrs = index.kneighbors(None, k)[1]
    query_nbrs = index.kneighbors(Xq, k)[1]
    post, pred, prior, ct, cf = loop_mlknn(train_nbrs, Y, query_nbrs, k, s)
    np.testing.assert_allclose(clf.prior_, prior, rtol=0, atol=1e-12)
    np.testing.assert_allclose(clf.cond_prob_true_, ct, atol=1e-12)
    np.testing.assert_allclose(clf.cond_prob_false_, cf, atol=1e-12)
    np.testing.assert_allclose(clf.predict_proba(Xq), post, atol=1e-12)
    np.testing.assert_array_equal(clf.predict(Xq), pred)


def test_hand_worked_example():
    # Five points on a line, k = 1, s = 1. LOO nearest neighbours:
    # 0->1, 1->0 (tie with 2 broken by lower index), 2->1, 3->4, 4->3.
    X = np.array([[0.0], [1.0], [2.0], [10.0], [11.0]])
    Y = np.array([[1], [1], [0], [0], [0]])
    clf = MLkNN(n_neighbors=1, smoothing=1.0).fit(X, Y)
    # prior = (1 + 2) / (2 + 5) = 3/7
    assert clf.prior_[0] == pytest.approx(3 / 7)
    # Positives 0, 1 have neighbours 1, 0: both counts 1 -> c = [0, 2];
    # negatives 2, 3, 4 have neighbours 1, 4, 3: counts 1, 0, 0 -> c' = [2, 1].
    # P(E_j|H1) = (1 + c[j]) / (1*2 + 2): [1/4, 3/4]; P(E_j|H0) = (1 + c'[j]) / 5: [3/5, 2/5]
    np.testing.assert_allclose(clf.cond_prob_true_[:, 0], [1 / 4, 3 / 4])
    np.testing.assert_allclose(clf.cond_prob_false_[:, 0], [3 / 5, 2 / 5])
    # Query at 0.4 -> neighbour 0 (label 1): posterior = 3/7*3/4 / (3/7*3/4 + 4/7*2/5)
    post = (3 / 7 * 3 / 4) / (3 / 7 * 3 / 4 + 4 / 7 * 2 / 5)
    assert clf.predict_proba([[0.4]])[0, 0] == pytest.approx(post)
    assert clf.predict([[0.4]])[0, 0] == 1
    # Query at 10.2 -> neighbour 3 (no label): 3/7*1/4 vs 4/7*3/5 -> 0
    assert clf.predict([[10.2]])[0, 0] == 0


def test_tie_predicts_zero(small_problem):
    # Force P(H1) P(E|H1) == P(H0) P(E|H0) for every count: the MAP tie rule says 0.
    X, Y = small_problem
    clf = MLkNN(n_neighbors=3).fit(X, Y)
    clf.prior_ = np.full(Y.shape[1], 0.5)
    clf.cond_prob_false_ = clf.cond_prob_true_.copy()
    assert clf.predict(X).sum() == 0
    np.testing.assert_allclose(clf.predict_proba(X), 0.5)


def test_sparse_and_float32_give_same_predictions(small_problem):
    X, Y = small_problem
    ref = MLkNN(5).fit(X, Y).predict_proba(X[:30])
    np.testing.assert_allclose(MLkNN(5).fit(sp.csr_matrix(X), Y).predict_proba(sp.csr_matrix(X[:30])), ref)
    np.testing.assert_array_equal(
        MLkNN(5).fit(X.astype(np.float32), Y).predict(X[:30].astype(np.float32)),
        MLkNN(5).fit(X, Y).predict(X[:30]),
    )


def test_fit_from_graph_equals_fit(small_problem):
    X, Y = small_problem
    index = BruteNeighbors().fit(X)
    from mlknn.neighbors import build_graph

    wide_train = build_graph(index, None, 12)
    wide_query = build_graph(index, X[:15] + 0.1, 12)
    clf = MLkNN(6).fit_from_graph(wide_train, Y, index=index)
    ref = MLkNN(6).fit(X, Y)
    np.testing.assert_allclose(clf.predict_proba_from_graph(wide_query), ref.predict_proba(X[:15] + 0.1))
    np.testing.assert_array_equal(clf.predict(X[:15] + 0.1), ref.predict(X[:15] + 0.1))


def test_graph_errors_name_the_parameter_and_value(small_problem):
    X, Y = small_problem
    from mlknn.neighbors import build_graph

    index = BruteNeighbors().fit(X)
    query = build_graph(index, X[:5], 6)
    with pytest.raises(ValueError, match=r"'graph' parameter of MLkNN.fit_from_graph must be .*loo=True.*loo=False"):
        MLkNN(6).fit_from_graph(query, Y[:5])
    with pytest.raises(ValueError, match=r"'graph' parameter of MLkNN.fit_from_graph .*Got ndarray"):
        MLkNN(6).fit_from_graph(query.indices, Y[:5])
    clf = MLkNN(6).fit(X, Y)
    with pytest.raises(ValueError, match=r"'graph' parameter of MLkNN must be a NeighborGraph. Got ndarray"):
        clf.predict_proba_from_graph(query.indices)


def test_constant_labels_and_single_label(small_problem):
    X, Y = small_problem
    Y = Y.copy()
    Y[:, 0] = 0
    Y[:, 1] = 1
    proba = MLkNN(5).fit(X, Y).predict_proba(X)
    assert np.all(np.isfinite(proba)) and proba.min() >= 0 and proba.max() <= 1
    pred = MLkNN(5).fit(X, Y).predict(X)
    assert pred[:, 0].sum() == 0 and pred[:, 1].all()
    assert MLkNN(3).fit(X, Y[:, :1]).predict(X).shape == (80, 1)


@pytest.mark.parametrize(
    "params,match",
    [
        ({"n_neighbors": 0}, r"'n_neighbors' parameter of MLkNN must be an int in the range \[1, inf\)"),
        ({"n_neighbors": 2.5}, "'n_neighbors' parameter"),
        ({"smoothing": -1}, "'smoothing' parameter"),
        ({"n_neighbors": 80}, r"must be <= n_samples - 1 = 79"),
        ({"neighbors": "nope"}, "'neighbors' parameter"),
    ],
)
def test_bad_parameters(small_problem, params, match):
    X, Y = small_problem
    with pytest.raises(ValueError, match=match):
        MLkNN(**params).fit(X, Y)


def test_bad_targets(small_problem):
    X, Y = small_problem
    with pytest.raises(ValueError, match="2-D binary indicator"):
        MLkNN().fit(X, Y[:, 0])
    with pytest.raises(ValueError, match="only the values 0 and 1; found the value 2"):
        MLkNN().fit(X, Y * 2)
    with pytest.raises(ValueError, match="79 rows but X has 80"):
        MLkNN().fit(X, Y[:-1])


def test_clone_and_params():
    clf = MLkNN(7, smoothing=0.3)
    assert clone(clf).get_params() == clf.get_params()
    assert clf.set_params(n_neighbors=3).n_neighbors == 3
