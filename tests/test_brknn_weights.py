"""BR-kNN, -a, -b with a weighted vote (``weights="distance"`` or a callable).

Checked against the loop reference (``reference_brknn.loop_brknn_weighted``, exact
rationals from the float weights), a hand-worked example, the uniform vote (a
callable of ones is the uniform vote exactly), the sparse-Y path, and
``predict_topk`` against the top k of the dense ``predict_proba``.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from reference_brknn import loop_brknn_weighted
from sklearn.utils._param_validation import InvalidParameterError
from test_brknn_sparse import loop_topk

from mlknn import BRkNN, BRkNNa, BRkNNb

CLASSES = [(BRkNN, "none"), (BRkNNa, "a"), (BRkNNb, "b")]


def similarity4(d):
    return (1 - d) ** 4


def some_zero(d):
    """Weights that vanish for every neighbour of some queries (they vote for nothing)."""
    w = np.exp(-d)
    w[d[:, 0] > 0.09] = 0  # about half of the queries of problem(5) with cosine
    return w


def problem(seed, n=60, q=7, n_queries=40, d=4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    Y = (rng.random((n, q)) < 0.3).astype(np.uint8)
    Y[rng.random(n) < 0.3] = 0  # neighbours without labels
    return X, Y, rng.normal(size=(n_queries, d))


SCALAR = {"distance": lambda d: 1.0 / d, similarity4: lambda d: (1 - d) ** 4}


@pytest.mark.parametrize("cls,variant", CLASSES)
@pytest.mark.parametrize("weights,metric", [("distance", "euclidean"), (similarity4, "cosine")])
@pytest.mark.parametrize("sparse_y", [False, True])
def test_matches_loop_reference(cls, variant, weights, metric, sparse_y):
    X, Y, Xq = problem(3)
    k = 5
    est = cls(k, metric=metric, weights=weights).fit(X, sp.csr_array(Y) if sparse_y else Y)
    graph, _ = est.query_graph(Xq)
    conf, pred = loop_brknn_weighted(Y, graph.indices, graph.metric_distances, k, SCALAR[weights], variant)
    np.testing.assert_allclose(est.predict_proba(Xq), conf, rtol=1e-12, atol=1e-15)
    got = est.predict(Xq)
    np.testing.assert_array_equal(got.toarray() if sparse_y else got, pred)


def test_hand_worked_example():
    # Training points 0, 2, 4, 10 on a line; query 2.5, k = 3: neighbours 1 (d 0.5,
    # w 2), 2 (d 1.5, w 2/3), 0 (d 2.5, w 0.4), total 46/15. Label 0 is held by
    # points 0 and 2: v_0 = (2/3 + 0.4) / (46/15) = 8/23; label 1 by point 1:
    # v_1 = 15/23. n = 4, q = 2: conf = (3 v + 1/4) / (3 + 1/2) = 17/46 and 29/46.
    X = np.array([[0.0], [2.0], [4.0], [10.0]])
    Y = np.array([[1, 0], [0, 1], [1, 0], [1, 1]])
    q = np.array([[2.5]])
    np.testing.assert_allclose(BRkNN(3, weights="distance").fit(X, Y).predict_proba(q), [[17 / 46, 29 / 46]])
    # The uniform vote says the opposite: counts 2 and 1, conf 2.25/3.5 and 1.25/3.5.
    np.testing.assert_array_equal(BRkNN(3).fit(X, Y).predict(q), [[1, 0]])
    np.testing.assert_array_equal(BRkNN(3, weights="distance").fit(X, Y).predict(q), [[0, 1]])
    # BR-kNN-b: L = 3 (v sums to 1 per neighbour label), s = round(3 / 3.5) = 1: label 1.
    np.testing.assert_array_equal(BRkNNb(3, weights="distance").fit(X, Y).predict(q), [[0, 1]])
    labels, scores = BRkNN(3, weights="distance").fit(X, Y).predict_topk(q, k=2)
    np.testing.assert_array_equal(labels, [[1, 0]])
    np.testing.assert_allclose(scores, [[29 / 46, 17 / 46]])


def test_distance_with_an_exact_match_keeps_only_the_matches():
    X = np.array([[0.0], [2.0], [4.0], [10.0]])
    Y = np.array([[1, 0], [0, 1], [1, 0], [1, 1]])
    # Query 2.0 is training point 1 (distance 0): only it votes, v = (0, 1).
    P = BRkNN(3, weights="distance").fit(X, Y).predict_proba(np.array([[2.0]]))
    np.testing.assert_allclose(P, [[(0 + 0.25) / 3.5, (3 + 0.25) / 3.5]])


@pytest.mark.parametrize("cls,_", CLASSES)
@pytest.mark.parametrize("sparse_y", [False, True])
def test_uniform_callable_is_the_uniform_vote(cls, _, sparse_y):
    X, Y, Xq = problem(4)
    Yf = sp.csr_array(Y) if sparse_y else Y
    ref = cls(6).fit(X, Yf)
    est = cls(6, weights=np.ones_like).fit(X, Yf)
    np.testing.assert_array_equal(est.predict_proba(Xq), ref.predict_proba(Xq))
    a, b = est.predict(Xq), ref.predict(Xq)
    np.testing.assert_array_equal(a.toarray() if sparse_y else a, b.toarray() if sparse_y else b)
    for x, y in zip(est.predict_topk(Xq, k=4), ref.predict_topk(Xq, k=4), strict=True):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("weights,metric", [("distance", "euclidean"), (similarity4, "cosine"), (some_zero, "cosine")])
@pytest.mark.parametrize("sparse_y", [False, True])
@pytest.mark.parametrize("k", [1, 3, 7])
def test_predict_topk_is_the_top_of_predict_proba(weights, metric, sparse_y, k):
    X, Y, Xq = problem(5)
    est = BRkNN(4, metric=metric, weights=weights).fit(X, sp.csr_array(Y) if sparse_y else Y)
    labels, scores = est.predict_topk(Xq, k=k)
    ref_labels, ref_scores = loop_topk(est.predict_proba(Xq), k)
    np.testing.assert_array_equal(labels, ref_labels)
    np.testing.assert_array_equal(scores, ref_scores)


def test_sparse_and_dense_labels_agree():
    X, Y, Xq = problem(6)
    for cls, _ in CLASSES:
        a = cls(5, weights="distance").fit(X, Y)
        b = cls(5, weights="distance").fit(X, sp.csr_array(Y))
        np.testing.assert_allclose(b.predict_proba(Xq), a.predict_proba(Xq), rtol=1e-14)
        np.testing.assert_array_equal(b.predict(Xq).toarray(), a.predict(Xq))


def test_fit_from_graph_path_equals_fit():
    X, Y, Xq = problem(7)
    est = BRkNN(5, metric="cosine", weights=similarity4).fit(X, Y)
    graph, _ = est.query_graph(None)
    other = BRkNN(5, metric="cosine", weights=similarity4).fit_from_graph(graph, Y, index=est.nn_)
    g, _ = est.query_graph(Xq)
    np.testing.assert_array_equal(other.predict_proba_from_graph(g), est.predict_proba(Xq))


def test_invalid_weights_are_refused_with_the_parameter_named():
    X, Y, _ = problem(8)
    with pytest.raises(InvalidParameterError, match="weights"):
        BRkNN(3, weights="inverse").fit(X, Y)
    with pytest.raises(ValueError, match="'weights' parameter of BRkNNa must be 'uniform' with variant='mulan'"):
        BRkNNa(3, variant="mulan", weights="distance").fit(X, Y)
    with pytest.raises(ValueError, match="variant='skmultilearn'"):
        BRkNNa(3, variant="skmultilearn", weights="distance").fit(X, Y)
    est = BRkNN(3, weights=lambda d: d[:, :1]).fit(X, Y)
    with pytest.raises(ValueError, match=r"'weights' callable of BRkNN must return an array of the distances' shape"):
        est.predict(X[:2])
    est = BRkNN(3, weights=lambda d: -d).fit(X, Y)
    with pytest.raises(ValueError, match="finite, non-negative"):
        est.predict(X[:2])
