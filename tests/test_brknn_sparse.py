"""BR-kNN, -a, -b on sparse labels, and exact predict_topk (interfaces 1 and 2).

The sparse path must give the dense path's numbers; predict_topk must equal the
top k of the dense predict_proba, ties broken by the lower label index (checked
against a loop), including queries whose neighbours have no label.
"""

import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

from mlknn import BRkNN, BRkNNa, BRkNNb
from mlknn.algorithms._brknn_votes import kth_absent, top_by_count

READINGS = [
    (BRkNN, "paper"), (BRkNNa, "paper"), (BRkNNb, "paper"),
    (BRkNN, "mulan"), (BRkNNa, "mulan"), (BRkNNb, "mulan"),
    (BRkNNa, "skmultilearn"),
]


def problem(seed, n=70, q=9, n_queries=50, density=0.2):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 4, size=(n, 3)).astype(float)
    Y = (rng.random((n, q)) < density).astype(np.uint8)
    Y[rng.random(n) < 0.3] = 0  # many training rows without labels
    Xq = rng.integers(0, 4, size=(n_queries, 3)).astype(float)
    return X, Y, Xq


def loop_topk(P, k):
    """Sort each row by (score descending, label ascending), one row at a time."""
    labels, scores = [], []
    for row in P:
        order = sorted(range(len(row)), key=lambda label: (-row[label], label))[:k]
        labels.append(order)
        scores.append([row[label] for label in order])
    return np.array(labels, dtype=np.int64), np.array(scores)


@pytest.mark.parametrize("cls,variant", READINGS)
@pytest.mark.parametrize("k", [1, 4])
def test_sparse_path_equals_dense_path(cls, variant, k):
    X, Y, Xq = problem(k)
    ref = cls(k, variant=variant).fit(X, Y)
    est = cls(k, variant=variant).fit(X, sp.csr_array(Y))
    assert est.sparse_labels_ and not ref.sparse_labels_
    np.testing.assert_array_equal(est.predict_proba(Xq), ref.predict_proba(Xq))
    pred = est.predict(Xq)
    assert isinstance(pred, sp.csr_array) and pred.dtype == ref.predict(Xq[:1]).dtype
    np.testing.assert_array_equal(pred.toarray(), ref.fit(X, Y).predict(Xq))  # refit: same tie stream


@pytest.mark.parametrize("cls", [BRkNN, BRkNNa, BRkNNb])
def test_container_kind_is_kept(cls):
    X, Y, Xq = problem(5)
    assert isinstance(cls(3).fit(X, sp.csr_matrix(Y)).predict(Xq), sp.csr_matrix)
    out = cls(3).fit(X, sp.csr_array(Y.astype(np.float64))).predict(Xq)
    assert isinstance(out, sp.csr_array) and out.dtype == np.float64


@pytest.mark.parametrize("cls,variant", READINGS)
@pytest.mark.parametrize("sparse_y", [False, True])
def test_topk_equals_loop_topk_of_dense_proba(cls, variant, sparse_y):
    X, Y, Xq = problem(11)
    Xq = np.vstack([Xq, [[50.0, 50.0, 50.0]]])
    for k in (1, 3, 9):
        est = cls(3, variant=variant).fit(X, sp.csr_array(Y) if sparse_y else Y)
        P = cls(3, variant=variant).fit(X, Y).predict_proba(Xq)
        labels, scores = est.predict_topk(Xq, k=k)
        exp_labels, exp_scores = loop_topk(P, k)
        assert labels.dtype == np.int64 and scores.dtype == np.float64
        np.testing.assert_array_equal(labels, exp_labels)
        np.testing.assert_array_equal(scores, exp_scores)


def test_topk_of_neighbourhoods_without_labels():
    # Every label has zero votes: all scores tie, the top k are labels 0..k-1.
    X = np.arange(10, dtype=float)[:, None]
    Y = np.zeros((10, 6), dtype=np.uint8)
    Y[9, 5] = 1
    for sparse_y in (False, True):
        est = BRkNN(2).fit(X, sp.csr_array(Y) if sparse_y else Y)
        labels, scores = est.predict_topk([[0.0], [8.6]], k=3)
        # query 8.6: neighbours 9 (label 5) and 8 -> label 5 first, then 0, 1
        np.testing.assert_array_equal(labels, [[0, 1, 2], [5, 0, 1]])
        zero = (1 / 10) / (2 + 6 / 10)
        np.testing.assert_array_equal(scores, [[zero] * 3, [(1 + 1 / 10) / 2.6, zero, zero]])


def test_topk_from_graph_and_k_validation():
    X, Y, Xq = problem(12)
    est = BRkNNb(3).fit(X, sp.csr_array(Y))
    graph = est.query_graph(Xq)[0]
    np.testing.assert_array_equal(est.predict_topk_from_graph(graph, k=2)[0], est.predict_topk(Xq, k=2)[0])
    with pytest.raises(ValueError, match=r"'k' parameter of predict_topk must be <= n_labels = 9"):
        est.predict_topk(Xq, k=10)


def test_count_space_helpers_against_a_loop():
    rng = np.random.default_rng(13)
    dense = rng.integers(0, 3, size=(40, 7)) * (rng.random((40, 7)) < 0.4)
    dense[3] = 0
    dense[4] = 2  # a full row
    C = sp.csr_array(dense)
    C.eliminate_zeros()
    s = rng.integers(0, 8, size=40)
    rows, labels, counts = top_by_count(C, s)
    for r in range(40):
        expected = sorted(range(7), key=lambda label: (-dense[r, label], label))[: s[r]]
        np.testing.assert_array_equal(labels[rows == r], expected)
        np.testing.assert_array_equal(counts[rows == r], dense[r, expected])
    for r in range(40):
        absent = [label for label in range(7) if dense[r, label] == 0]
        if absent:
            got = kth_absent(C, np.full(len(absent), r), np.arange(len(absent)))
            np.testing.assert_array_equal(got, absent)


@pytest.mark.parametrize("cls", [BRkNN, BRkNNa, BRkNNb])
def test_no_dense_label_array_on_the_sparse_path(cls):
    # q = 200,000 labels: one (n_queries, q) float64 array would be 320 MB, int64
    # counts as much. predict and predict_topk stay far below one such array.
    rng = np.random.default_rng(14)
    n, q, n_queries = 400, 200_000, 200
    X = rng.normal(size=(n, 4))
    rows = np.repeat(np.arange(n), 3)
    Y = sp.csr_array((np.ones(rows.size, dtype=np.uint8), (rows, rng.integers(0, q, rows.size))), shape=(n, q))
    Y.sum_duplicates()
    Y.data[:] = 1
    est = cls(5).fit(X, Y)
    Xq = rng.normal(size=(n_queries, 4))
    tracemalloc.start()
    pred = est.predict(Xq)
    labels, _ = est.predict_topk(Xq, k=5)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < n_queries * q * 8 / 20, peak
    assert pred.shape == (n_queries, q) and labels.shape == (n_queries, 5)
    assert pred.sum(axis=1).min() >= (1 if cls is not BRkNN else 0)


@pytest.mark.parametrize("hubness", ["ls", "dsl"])
def test_sparse_labels_with_hubness_reduction(hubness):
    rng = np.random.default_rng(15)
    X, Xq = rng.normal(size=(80, 5)), rng.normal(size=(30, 5))
    Y = (rng.random((80, 7)) < 0.3).astype(np.uint8)
    ref = BRkNNa(5, hubness=hubness).fit(X, Y)
    est = BRkNNa(5, hubness=hubness).fit(X, sp.csr_array(Y))
    np.testing.assert_array_equal(est.predict(Xq).toarray(), ref.predict(Xq))
    labels, scores = est.predict_topk(Xq, k=3)
    exp_labels, exp_scores = loop_topk(ref.predict_proba(Xq), 3)
    np.testing.assert_array_equal(labels, exp_labels)
    np.testing.assert_array_equal(scores, exp_scores)
