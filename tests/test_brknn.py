import numpy as np
import pytest
import scipy.sparse as sp
from reference_brknn import loop_brknn
from sklearn.base import clone
from sklearn.model_selection import train_test_split

from mlknn import BRkNN, BRkNNa, BRkNNb
from mlknn.algorithms._kernels import neighbor_label_counts
from mlknn.neighbors import BruteNeighbors, NeighborGraph, build_graph

VARIANTS = [(BRkNN, "none"), (BRkNNa, "a"), (BRkNNb, "b")]


def graph_of(indices, loo=False):
    """A NeighborGraph with the given neighbour lists (distances 1, 2, ...)."""
    indices = np.asarray(indices, dtype=np.intp)
    distances = np.broadcast_to(np.arange(1.0, indices.shape[1] + 1), indices.shape).copy()
    return NeighborGraph(indices, distances, loo)


def loo_ring(n, k):
    """A leave-one-out graph: point i's neighbours are i+1, ..., i+k (mod n)."""
    return graph_of((np.arange(n)[:, None] + np.arange(1, k + 1)[None, :]) % n, loo=True)


def check_against_loop(cls, variant, X, Y, Xq, k):
    clf = cls(n_neighbors=k).fit(X, Y)
    query_nbrs = BruteNeighbors().fit(X).kneighbors(Xq, k)[1]
    conf, pred, sizes = loop_brknn(Y, query_nbrs, k, variant)
    np.testing.assert_allclose(clf.predict_proba(Xq), conf, rtol=0, atol=1e-10)
    np.testing.assert_array_equal(clf.predict(Xq), pred)
    if variant == "b":
        counts = neighbor_label_counts(clf.query_graph(Xq)[0], Y)
        np.testing.assert_array_equal(clf.label_set_size(counts), sizes)


@pytest.mark.parametrize("cls,variant", VARIANTS)
@pytest.mark.parametrize("k", [1, 2, 4, 5, 10])
def test_matches_loop_reference(small_problem, cls, variant, k):
    X, Y = small_problem
    Xq = np.vstack([X[:25] + 0.05, np.random.default_rng(1).normal(size=(25, 6))])
    check_against_loop(cls, variant, X, Y, Xq, k)


@pytest.mark.data
@pytest.mark.parametrize("cls,variant", VARIANTS)
def test_matches_loop_reference_on_emotions(data_dir, cls, variant):
    from mlknn.datasets import load

    data = load("emotions", data_home=data_dir)
    Xtr, Xte, Ytr, _ = train_test_split(data.X, data.Y, test_size=0.5, random_state=0)
    check_against_loop(cls, variant, Xtr, Ytr, Xte, 10)


# --------------------------------------------------------------- hand-worked
# Five training points on a line, q = 3 labels, k = 2, n = 5:
#   x:  0        1        10       11       20
#   Y:  [1,0,0]  [0,1,1]  [1,1,0]  [1,1,1]  [0,0,0]
# conf_l = (count_l + 1/5) / (2 + 3/5) = (count_l + 0.2) / 2.6
X_TOY = np.array([[0.0], [1.0], [10.0], [11.0], [20.0]])
Y_TOY = np.array([[1, 0, 0], [0, 1, 1], [1, 1, 0], [1, 1, 1], [0, 0, 0]])


def test_hand_worked_confidences_and_exact_half_vote():
    clf = BRkNN(n_neighbors=2).fit(X_TOY, Y_TOY)
    # Query 0.4: neighbours 0 and 1, counts [1, 1, 1]: every label has exactly half
    # of the votes, conf = 1.2 / 2.6 = 0.4615... < 0.5: the empty set.
    # Query 10.4: neighbours 2 and 3, counts [2, 2, 1]: conf = [2.2, 2.2, 1.2] / 2.6.
    proba = clf.predict_proba([[0.4], [10.4]])
    np.testing.assert_allclose(proba, [[1.2 / 2.6] * 3, [2.2 / 2.6, 2.2 / 2.6, 1.2 / 2.6]])
    np.testing.assert_array_equal(clf.predict([[0.4], [10.4]]), [[0, 0, 0], [1, 1, 0]])


def test_exact_half_vote_depends_on_q():
    # The same neighbours (0 and 1) with q = 1, 2, 3 labels (n = 5, k = 2, count = 1):
    #   q = 1: (1 + 0.2) / (2 + 0.2) = 0.5454... >= 0.5 -> assigned
    #   q = 2: (1 + 0.2) / (2 + 0.4) = 0.5 exactly   -> assigned
    #   q = 3: (1 + 0.2) / (2 + 0.6) = 0.4615...     -> not assigned
    Y = np.array([[1, 1, 1], [0, 0, 0], [1, 1, 1], [1, 1, 1], [0, 0, 0]])
    for q, expected_conf, expected in [(1, 1.2 / 2.2, 1), (2, 0.5, 1), (3, 1.2 / 2.6, 0)]:
        clf = BRkNN(n_neighbors=2).fit(X_TOY, Y[:, :q])
        assert clf.predict_proba([[0.4]])[0, 0] == pytest.approx(expected_conf, abs=1e-15)
        assert clf.predict([[0.4]])[0, 0] == expected


def test_exact_half_vote_just_under_half_for_larger_n():
    # n = 100, q = 6, k = 10; the query's neighbours 0..9, of which 0..4 have label 0:
    # conf = (5 + 0.01) / (10 + 0.06) = 0.498011... -> not assigned;
    # six of them (count 6): 6.01 / 10.06 = 0.5974... -> assigned.
    n, q, k = 100, 6, 10
    Y = np.zeros((n, q), dtype=np.uint8)
    Y[:5, 0] = 1
    Y[:6, 1] = 1
    clf = BRkNN(k).fit_from_graph(loo_ring(n, k), Y)
    query = graph_of([np.arange(k)])
    proba = clf.predict_proba_from_graph(query)[0]
    assert proba[0] == pytest.approx(5.01 / 10.06, abs=1e-15) and proba[0] < 0.5
    assert proba[1] == pytest.approx(6.01 / 10.06, abs=1e-15)
    np.testing.assert_array_equal(clf.predict_from_graph(query)[0], [0, 1, 0, 0, 0, 0])


def test_hand_worked_brknna():
    clf = BRkNNa(n_neighbors=2).fit(X_TOY, Y_TOY)
    # 0.4: counts [1, 1, 1], nothing reaches 0.5, all tied -> the lowest index, label 0.
    # 10.4: [1, 1, 0] as BR-kNN. 20.4: neighbours 4 and 3, counts [1, 1, 1] -> label 0.
    np.testing.assert_array_equal(
        clf.predict([[0.4], [10.4], [20.4]]), [[1, 0, 0], [1, 1, 0], [1, 0, 0]]
    )


def test_hand_worked_brknnb_rounding():
    clf = BRkNNb(n_neighbors=2).fit(X_TOY, Y_TOY)
    # 0.4: neighbours with 1 and 2 labels, L = 3 (mean 1.5):
    #      s = round_half_up(3 / 2.6 = 1.1538) = 1 -> the .5 mean rounds down;
    #      counts [1, 1, 1] tied -> label 0.
    # 10.4: neighbours with 2 and 3 labels, L = 5 (mean 2.5): 5 / 2.6 = 1.923 -> s = 2;
    #      counts [2, 2, 1] -> labels 0 and 1.
    counts = neighbor_label_counts(clf.query_graph(np.array([[0.4], [10.4]]))[0], Y_TOY)
    np.testing.assert_array_equal(clf.label_set_size(counts), [1, 2])
    np.testing.assert_array_equal(clf.predict([[0.4], [10.4]]), [[1, 0, 0], [1, 1, 0]])


def test_brknnb_mean_half_rounds_down_for_large_n_too():
    # n = 100, q = 4, k = 2: neighbours with 1 and 2 labels, mean 1.5;
    # s = round_half_up(3 / 2.04 = 1.4706) = 1. Neighbours with 3 and 4 labels: mean 3.5,
    # 7 / 2.04 = 3.431 -> s = 3 (scikit-multilearn's round-half-even gives 2 and 4).
    n, q, k = 100, 4, 2
    Y = np.zeros((n, q), dtype=np.uint8)
    Y[0, :1] = 1
    Y[1, :2] = 1
    Y[2, :3] = 1
    Y[3, :4] = 1
    clf = BRkNNb(k).fit_from_graph(loo_ring(n, k), Y)
    query = graph_of([[0, 1], [2, 3]])
    pred = clf.predict_from_graph(query)
    np.testing.assert_array_equal(pred.sum(axis=1), [1, 3])
    np.testing.assert_array_equal(pred, [[1, 0, 0, 0], [1, 1, 1, 0]])


# ------------------------------------------------------------------ tie rules
def test_brknna_tie_takes_lowest_index():
    # n = 20, q = 5, k = 4. Query neighbours 0..3; counts [1, 0, 1, 0, 1]
    # (label 0 from point 0, label 2 from point 1, label 4 from point 2): none reaches
    # 0.5, the top count 1 is tied between 0, 2, 4 -> label 0. Without label 0,
    # labels 2 and 4 tie -> label 2.
    n, q, k = 20, 5, 4
    Y = np.zeros((n, q), dtype=np.uint8)
    Y[0, 0] = Y[1, 2] = Y[2, 4] = 1
    query = graph_of([[0, 1, 2, 3]])
    clf = BRkNNa(k).fit_from_graph(loo_ring(n, k), Y)
    np.testing.assert_array_equal(clf.predict_from_graph(query)[0], [1, 0, 0, 0, 0])
    Y[0, 0] = 0
    clf = BRkNNa(k).fit_from_graph(loo_ring(n, k), Y)
    np.testing.assert_array_equal(clf.predict_from_graph(query)[0], [0, 0, 1, 0, 0])


def test_brknna_no_labelled_neighbour_gives_label_zero():
    n, q, k = 20, 3, 3
    Y = np.zeros((n, q), dtype=np.uint8)
    Y[10:, 2] = 1
    clf = BRkNNa(k).fit_from_graph(loo_ring(n, k), Y)
    np.testing.assert_array_equal(clf.predict_from_graph(graph_of([[0, 1, 2]]))[0], [1, 0, 0])


def test_brknnb_tie_at_the_cut_takes_lower_indices():
    # n = 30, q = 5, k = 4. The query's neighbours 0..3 have label sets
    # {0, 2, 3}, {0}, {2}, {3}: counts [2, 0, 2, 2, 0], L = 6,
    # s = round_half_up(6 / (4 + 5/30) = 1.44) = 1; the three labels tie at count 2 -> label 0.
    # Neighbours {0, 2, 3}, {0, 2, 3}, {1}, {4}: counts [2, 1, 2, 2, 1], L = 8,
    # 8 / 4.1667 = 1.92 -> s = 2: labels 0 and 2 (3 ties with them and loses on index).
    n, q, k = 30, 5, 4
    Y = np.zeros((n, q), dtype=np.uint8)
    Y[0, [0, 2, 3]] = 1
    Y[1, 0] = 1
    Y[2, 2] = 1
    Y[3, 3] = 1
    Y[4, [0, 2, 3]] = 1
    Y[5, [0, 2, 3]] = 1
    Y[6, 1] = 1
    Y[7, 4] = 1
    clf = BRkNNb(k).fit_from_graph(loo_ring(n, k), Y)
    pred = clf.predict_from_graph(graph_of([[0, 1, 2, 3], [4, 5, 6, 7]]))
    np.testing.assert_array_equal(pred, [[1, 0, 0, 0, 0], [1, 0, 1, 0, 0]])


def test_brknnb_ties_match_a_stable_sort(small_problem):
    # Many ties (k = 3, small counts): the vectorised top-s equals a stable sort by
    # decreasing count on every row.
    X, Y = small_problem
    clf = BRkNNb(3).fit(X, Y)
    counts = neighbor_label_counts(clf.query_graph(X)[0], Y)
    s = clf.label_set_size(counts)
    order = np.argsort(-counts, axis=1, kind="stable")
    expected = np.zeros_like(counts)
    for i in range(counts.shape[0]):
        expected[i, order[i, : s[i]]] = 1
    np.testing.assert_array_equal(clf.predict(X), expected)


# ------------------------------------------------------------------ invariants
def test_brknna_never_predicts_empty_set(small_problem):
    X, Y = small_problem
    Xq = np.random.default_rng(3).normal(scale=3.0, size=(200, 6))
    for k in (1, 3, 10):
        pred = BRkNNa(k).fit(X, Y).predict(Xq)
        assert pred.sum(axis=1).min() >= 1
        # and it only adds labels to BR-kNN's prediction
        plain = BRkNN(k).fit(X, Y).predict(Xq)
        assert np.all(pred >= plain)
        rows = plain.sum(axis=1) > 0
        np.testing.assert_array_equal(pred[rows], plain[rows])


def test_brknnb_predicts_exactly_s_labels(small_problem):
    X, Y = small_problem
    Xq = np.random.default_rng(4).normal(size=(200, 6))
    for k in (1, 2, 5, 20):
        clf = BRkNNb(k).fit(X, Y)
        counts = neighbor_label_counts(clf.query_graph(Xq)[0], Y)
        s = clf.label_set_size(counts)
        assert s.min() >= 1 and s.max() <= Y.shape[1]
        np.testing.assert_array_equal(clf.predict(Xq).sum(axis=1), s)


def test_brknnb_s_equal_to_q_selects_every_label():
    n, q, k = 10, 3, 2
    Y = np.ones((n, q), dtype=np.uint8)
    Y[5:, :] = 0
    clf = BRkNNb(k).fit_from_graph(loo_ring(n, k), Y)
    # neighbours with 3 labels each: L = 6, 6 / (2 + 0.3) = 2.6 -> s = 3 = q
    np.testing.assert_array_equal(clf.predict_from_graph(graph_of([[0, 1]])), [[1, 1, 1]])


def test_proba_identical_across_variants_and_in_unit_interval(small_problem):
    X, Y = small_problem
    probas = [cls(5).fit(X, Y).predict_proba(X) for cls, _ in VARIANTS]
    np.testing.assert_array_equal(probas[0], probas[1])
    np.testing.assert_array_equal(probas[0], probas[2])
    assert probas[0].min() > 0 and probas[0].max() < 1


@pytest.mark.parametrize("cls", [BRkNN, BRkNNa, BRkNNb])
def test_fit_from_graph_equals_fit(small_problem, cls):
    X, Y = small_problem
    index = BruteNeighbors().fit(X)
    wide_train = build_graph(index, None, 12)
    wide_query = build_graph(index, X[:15] + 0.1, 12)
    clf = cls(6).fit_from_graph(wide_train, Y, index=index)
    ref = cls(6).fit(X, Y)
    np.testing.assert_array_equal(clf.predict_proba_from_graph(wide_query), ref.predict_proba(X[:15] + 0.1))
    np.testing.assert_array_equal(clf.predict_from_graph(wide_query), ref.predict(X[:15] + 0.1))


@pytest.mark.parametrize("cls", [BRkNN, BRkNNa, BRkNNb])
def test_sparse_float32_and_dtype(small_problem, cls):
    X, Y = small_problem
    ref = cls(5).fit(X, Y)
    np.testing.assert_allclose(cls(5).fit(sp.csr_matrix(X), Y).predict_proba(sp.csr_matrix(X[:30])), ref.predict_proba(X[:30]))
    np.testing.assert_array_equal(
        cls(5).fit(X.astype(np.float32), Y).predict(X[:30].astype(np.float32)), ref.predict(X[:30])
    )
    assert cls(5).fit(X, Y.astype(np.float64)).predict(X[:3]).dtype == np.float64
    assert ref.predict(X[:3]).dtype == Y.dtype


@pytest.mark.parametrize("cls", [BRkNN, BRkNNa, BRkNNb])
def test_constant_and_single_labels(small_problem, cls):
    X, Y = small_problem
    Y = Y.copy()
    Y[:, 0] = 0
    Y[:, 1] = 1
    clf = cls(5).fit(X, Y)
    proba = clf.predict_proba(X)
    # always 1: (5 + 1/80) / (5 + 4/80) = 0.99..., always 0: (0 + 1/80) / (5 + 4/80)
    np.testing.assert_allclose(proba[:, 1], (5 + 1 / 80) / (5 + 4 / 80))
    np.testing.assert_allclose(proba[:, 0], (1 / 80) / (5 + 4 / 80))
    pred = clf.predict(X)
    assert pred[:, 1].all()
    if cls is not BRkNNb:  # b may fill its s labels with a never-seen one when s > seen ones
        assert pred[:, 0].sum() == 0
    one = cls(3).fit(X, Y[:, 2:3]).predict(X)
    assert one.shape == (80, 1)


@pytest.mark.parametrize("cls", [BRkNN, BRkNNa, BRkNNb])
def test_hubness_reduction_runs(small_problem, cls):
    X, Y = small_problem
    clf = cls(5, hubness="ls").fit(X, Y)
    proba = clf.predict_proba(X[:10])
    assert proba.shape == (10, 4) and np.all((proba > 0) & (proba < 1))
    if cls is BRkNNa:
        assert clf.predict(X).sum(axis=1).min() >= 1


@pytest.mark.parametrize("cls", [BRkNN, BRkNNa, BRkNNb])
@pytest.mark.parametrize(
    "params,match",
    [
        ({"n_neighbors": 0}, r"'n_neighbors' parameter of BRkNN\w* must be an int in the range \[1, inf\)\. Got 0"),
        ({"n_neighbors": 2.5}, "'n_neighbors' parameter"),
        ({"n_neighbors": 80}, r"must be <= n_samples - 1 = 79.*Got 80"),
        ({"neighbors": "nope"}, "'neighbors' parameter"),
        ({"hubness": "nope"}, "'hubness' parameter"),
    ],
)
def test_bad_parameters(small_problem, cls, params, match):
    X, Y = small_problem
    with pytest.raises(ValueError, match=match):
        cls(**params).fit(X, Y)


def test_clone_and_params():
    clf = BRkNNb(7, hubness="ls")
    assert clone(clf).get_params() == clf.get_params()
    assert clf.set_params(n_neighbors=3).n_neighbors == 3
