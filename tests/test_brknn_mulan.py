"""BR-kNN, -a, -b with variant="mulan" (MULAN's reading) and BRkNNa(variant="skmultilearn").

Checked against the loop reading of MULAN's code (tests/reference_brknn.py:
loop_brknn_mulan, Weka's float sums, linear search with ties, the Java stream),
hand-worked examples, and constructed tie problems with known answers.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from reference_brknn import loop_brknn_mulan
from sklearn.base import clone

from mlknn import BRkNN, BRkNNa, BRkNNb
from mlknn.algorithms._java_random import JavaRandom
from mlknn.neighbors import BruteNeighbors, NeighborGraph, build_graph

CLASSES = [(BRkNN, "none"), (BRkNNa, "a"), (BRkNNb, "b")]


def dense(P):
    return P.toarray() if sp.issparse(P) else np.asarray(P)


def grid_problem(seed, n=60, q=5, n_queries=40, density=0.3):
    """Integer features on a 3 x 3 x 3 grid: many exact distance ties."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, size=(n, 3)).astype(float)
    Y = (rng.random((n, q)) < density).astype(np.uint8)
    Xq = rng.integers(0, 3, size=(n_queries, 3)).astype(float)
    return X, Y, Xq


# ------------------------------------------------------------ loop reference
@pytest.mark.parametrize("cls,variant", CLASSES)
@pytest.mark.parametrize("k", [1, 3, 10])
@pytest.mark.parametrize("sparse_y", [False, True])
def test_matches_mulan_loop_reference_with_ties(cls, variant, k, sparse_y):
    for seed, q, density in [(0, 5, 0.3), (1, 2, 0.5), (2, 7, 0.1), (3, 1, 0.4)]:
        X, Y, Xq = grid_problem(seed, q=q, density=density)
        conf, pred, k_prime = loop_brknn_mulan(X, Y, Xq, k, variant)
        assert k_prime.max() > k  # the grid does produce ties at the k-th distance
        clf = cls(k, variant="mulan").fit(X, sp.csr_array(Y) if sparse_y else Y)
        np.testing.assert_array_equal(clf.predict_proba(Xq), conf)  # bit for bit
        np.testing.assert_array_equal(dense(clf.predict(Xq)), pred)


@pytest.mark.parametrize("cls,variant", CLASSES)
def test_stream_continues_across_predict_calls_and_restarts_at_fit(cls, variant):
    X, Y, Xq = grid_problem(4, q=6, density=0.15)
    rng = JavaRandom(1)
    _, first, _ = loop_brknn_mulan(X, Y, Xq[:20], 3, variant, rng)
    _, second, _ = loop_brknn_mulan(X, Y, Xq[20:], 3, variant, rng)
    clf = cls(3, variant="mulan").fit(X, Y)
    clf.predict_proba(Xq)  # scores never draw
    np.testing.assert_array_equal(clf.predict(Xq[:20]), first)
    np.testing.assert_array_equal(clf.predict(Xq[20:]), second)
    # fit restarts MULAN's Random(1) (a fresh classifier per fold); so does clone.
    np.testing.assert_array_equal(clf.fit(X, Y).predict(Xq[:20]), first)
    np.testing.assert_array_equal(clone(clf).fit(X, Y).predict(Xq[:20]), first)


def test_from_graph_path_equals_fit_path_and_researches_ties():
    X, Y, Xq = grid_problem(5, q=4)
    index = BruteNeighbors().fit(X)
    ref = BRkNNb(5, variant="mulan").fit(X, Y)
    # the graphs are only k + 1 wide, the ties go further: the estimator searches again
    clf = BRkNNb(5, variant="mulan").fit_from_graph(build_graph(index, None, 6), Y, index=index)
    g = build_graph(index, Xq, 6)
    np.testing.assert_array_equal(clf.predict_proba_from_graph(g, Xq), ref.predict_proba(Xq))
    np.testing.assert_array_equal(clf.predict_from_graph(g, Xq), ref.predict(Xq))
    with pytest.raises(ValueError, match=r"variant='mulan' counts every training instance tied.*pass X"):
        clf.predict_proba_from_graph(g)


# --------------------------------------------------------------- hand-worked
# Training points on a line; query 0.0 with k = 1: points -1 and 1 are both at
# distance 1, so MULAN counts k' = 2 neighbours; the paper reading takes the
# lower index only.
X_LINE = np.array([[-1.0], [1.0], [3.0], [6.0], [10.0]])
Y_LINE = np.array([[1, 0, 0], [1, 1, 0], [0, 1, 1], [0, 0, 1], [0, 0, 1]], dtype=np.uint8)


def test_hand_worked_tie_at_kth_distance():
    # n = 5, q = 3, k' = 2, counts [2, 1, 0]:
    # conf = (1/5 + count) / (3/5 + 2) = [2.2, 1.2, 0.2] / 2.6
    mulan = BRkNN(1, variant="mulan").fit(X_LINE, Y_LINE)
    np.testing.assert_allclose(mulan.predict_proba([[0.0]]), [[2.2 / 2.6, 1.2 / 2.6, 0.2 / 2.6]], rtol=1e-15)
    np.testing.assert_array_equal(mulan.predict([[0.0]]), [[1, 0, 0]])
    # paper: only point 0 (lower index), k = 1: conf = (1/5 + [1, 0, 0]) / (1 + 3/5)
    paper = BRkNN(1).fit(X_LINE, Y_LINE)
    np.testing.assert_allclose(paper.predict_proba([[0.0]]), [[1.2 / 1.6, 0.2 / 1.6, 0.2 / 1.6]], rtol=1e-15)


def test_weka_float_rounding_decides_a_half_vote():
    # q = 2, n = 12, k = 2, one of the two neighbours has label 0: exactly 1/2 in
    # rationals ((1 + 1/12) / (2 + 2/12)); Weka's sums give
    # (1/12 + 1.0) / ((2/12 + 1.0) + 1.0) = 0.4999999999999999 -> not assigned by MULAN.
    X = np.arange(12, dtype=float)[:, None]
    Y = np.zeros((12, 2), dtype=np.uint8)
    Y[0, 0] = 1
    mulan = BRkNN(2, variant="mulan").fit(X, Y)
    conf = (1 / 12 + 1.0) / ((2 / 12 + 1.0) + 1.0)
    assert conf == 0.4999999999999999
    assert mulan.predict_proba([[0.4]])[0, 0] == conf
    assert mulan.predict([[0.4]])[0, 0] == 0
    assert BRkNN(2).fit(X, Y).predict([[0.4]])[0, 0] == 1  # the paper reading is exact: 1/2 >= 1/2


def test_hand_worked_exta_draw():
    # Query 20.0, k = 1: only point 4 (distance 10), labels {2} -> conf 1.2/1.6 >= 0.5: no draw.
    # Query 4.5 with k = 2: points 2 (3.0) and 3 (6.0) at 1.5: counts [0, 1, 2] -> label 2 >= 0.5.
    # Query 2.0 with k = 2: points 1 and 2 at 1.0 (k' = 2): counts [1, 2, 1] / (0.6 + 2)
    # -> label 1 = 2.2/2.6 >= 0.5, no draw.
    # A fallback with a tie: q = 3, a query whose two neighbours have {0} and {2}:
    # counts [1, 0, 1], conf 1.2/2.6 < 0.5 everywhere; maxima at labels 0 and 2;
    # Random(1).nextInt(2) = (2 * 1569548985) >> 31 = 1 -> label 2 (the paper reading: 0).
    X = np.array([[0.0], [1.0], [5.0], [9.0]])
    Y = np.array([[1, 0, 0], [0, 0, 1], [0, 1, 0], [0, 1, 0]], dtype=np.uint8)
    assert JavaRandom(1).next_int(2) == 1
    np.testing.assert_array_equal(BRkNNa(2, variant="mulan").fit(X, Y).predict([[0.5]]), [[0, 0, 1]])
    np.testing.assert_array_equal(BRkNNa(2).fit(X, Y).predict([[0.5]]), [[1, 0, 0]])


def test_hand_worked_extb_never_offers_the_lowest_index():
    # k = 3 neighbours with label sets {0}, {1}, {2}: counts [1, 1, 1], L = 3,
    # s = Math.round(3 / (3/n + 3)) = 1. stableSort gives [0, 1, 2]; the pivot is at
    # position q - s = 2; MULAN walks positions 2 and 1 only, so the draw is among
    # [2, 1] (descending): Random(1).nextInt(2) = 1 -> label 1. Label 0 cannot be drawn.
    X = np.array([[0.0], [1.0], [2.0], [50.0], [60.0]])
    Y = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 1], [1, 1, 1]], dtype=np.uint8)
    clf = BRkNNb(3, variant="mulan").fit(X, Y)
    np.testing.assert_array_equal(clf.predict([[1.0]]), [[0, 1, 0]])
    # the next query draws from the same stream: Random(1)'s second nextInt(2)
    rng = JavaRandom(1)
    rng.next_int(2)
    second = [2, 1][rng.next_int(2)]
    assert clf.predict([[1.0]])[0].tolist() == [int(label == second) for label in range(3)]
    np.testing.assert_array_equal(BRkNNb(3).fit(X, Y).predict([[1.0]]), [[1, 0, 0]])  # paper: lowest index


def test_extb_draws_even_when_forced():
    # Two neighbours {0, 1} and {0, 1}: counts [2, 2, 0], L = 4, s = round(4 / 2.6) = 2.
    # Pivot = the 2nd highest = label 0's conf; above it: nothing; tied: [1, 0]; both
    # must be taken: the draw loop runs until it has seen both positions, and the
    # stream advances by as many draws as that took.
    X = np.array([[0.0], [1.0], [30.0], [40.0], [50.0]])
    Y = np.array([[1, 1, 0], [1, 1, 0], [0, 0, 1], [0, 0, 1], [0, 0, 1]], dtype=np.uint8)
    clf = BRkNNb(2, variant="mulan").fit(X, Y)
    np.testing.assert_array_equal(clf.predict([[0.5]]), [[1, 1, 0]])
    rng = JavaRandom(1)
    seen = set()
    while len(seen) < 2:
        seen.add(rng.next_int(2))
    assert clf.tie_random_state_ == rng.state != JavaRandom(1).state


@pytest.mark.parametrize("cls", [BRkNNa, BRkNNb])
def test_mulan_never_predicts_the_empty_set(cls):
    X, Y, Xq = grid_problem(6, q=5, density=0.05)
    pred = cls(3, variant="mulan").fit(X, Y).predict(Xq)
    assert pred.sum(axis=1).min() >= 1


def test_extb_s_equal_q_selects_everything_without_drawing():
    # q = 1: MULAN's EXTB always fails (nextInt(0)); mlknn selects the label, no draw.
    X = np.arange(6, dtype=float)[:, None]
    Y = np.ones((6, 1), dtype=np.uint8)
    clf = BRkNNb(2, variant="mulan").fit(X, Y)
    np.testing.assert_array_equal(clf.predict([[0.2], [3.1]]), [[1], [1]])
    assert clf.tie_random_state_ == JavaRandom(1).state


# ------------------------------------------------------------------ refusals
@pytest.mark.parametrize("cls", [BRkNN, BRkNNa, BRkNNb])
def test_mulan_refuses_hubness_and_approximate_backends(cls):
    X, Y, _ = grid_problem(7)
    with pytest.raises(ValueError, match="'hubness' parameter .* must be None with variant='mulan'"):
        cls(3, variant="mulan", hubness="ls").fit(X, Y)

    class Approximate(BruteNeighbors):
        exact = False

    with pytest.raises(ValueError, match="needs an exact neighbour search"):
        cls(3, variant="mulan", neighbors=Approximate()).fit(X, Y)


@pytest.mark.parametrize("cls,allowed", [(BRkNN, False), (BRkNNa, True), (BRkNNb, False)])
def test_variant_values(cls, allowed):
    X, Y, _ = grid_problem(8)
    if allowed:
        cls(3, variant="skmultilearn").fit(X, Y)
    else:
        with pytest.raises(ValueError, match=r"'variant' parameter of BRkNN\w* must be a str among"):
            cls(3, variant="skmultilearn").fit(X, Y)
    with pytest.raises(ValueError, match="'variant' parameter"):
        cls(3, variant="weka").fit(X, Y)


# ----------------------------------------------------------- scikit-multilearn
def test_skmultilearn_reading_of_brknna():
    # scikit-multilearn's BRkNNaClassifier: confidences count / k, labels rint(count / k):
    # a strict majority, no fallback (the empty set is allowed), also for q = 2.
    X, Y, Xq = grid_problem(9, q=2, density=0.5)
    clf = BRkNNa(4, variant="skmultilearn").fit(X, Y)
    nbrs = BruteNeighbors().fit(X).kneighbors(Xq, 4)[1]
    counts = Y[nbrs].sum(axis=1)
    np.testing.assert_array_equal(clf.predict_proba(Xq), counts / 4)
    np.testing.assert_array_equal(clf.predict(Xq), np.rint(counts / 4).astype(np.uint8))
    assert (counts == 2).any()  # half votes occur and are not assigned
    assert (clf.predict(Xq).sum(axis=1) == 0).any()


def test_skmultilearn_equals_paper_brknn_decisions_for_q_at_least_3():
    # The harness' former ("brknna", "skml") reading was BRkNN(paper): same decisions when
    # 3 <= q <= n + 2, and scores that rank identically.
    X, Y, Xq = grid_problem(10, q=5)
    skml = BRkNNa(4, variant="skmultilearn").fit(X, Y)
    paper = BRkNN(4).fit(X, Y)
    np.testing.assert_array_equal(skml.predict(Xq), paper.predict(Xq))
    a, b = skml.predict_proba(Xq), paper.predict_proba(Xq)
    np.testing.assert_array_equal(np.argsort(a, axis=None, kind="stable"), np.argsort(b, axis=None, kind="stable"))


def test_graph_with_duplicates_needs_wide_research():
    # 12 identical training points and k = 2: every query row ends in a tie far beyond
    # the k + 1 searched, so the search doubles until the tie ends (k' = 12).
    X = np.vstack([np.zeros((12, 1)), np.arange(5, 10, dtype=float)[:, None]])
    Y = np.zeros((17, 3), dtype=np.uint8)
    Y[:6, 0] = 1
    Y[:12, 1] = 1
    clf = BRkNN(2, variant="mulan").fit(X, Y)
    proba = clf.predict_proba([[0.1]])
    n = 17
    np.testing.assert_allclose(proba, [[(1 / n + 6) / (3 / n + 12), (1 / n + 12) / (3 / n + 12), (1 / n) / (3 / n + 12)]],
                               rtol=1e-15)
    graph = NeighborGraph(np.array([[0, 1, 2]]), np.array([[0.1, 0.1, 0.1]]))  # k + 1 wide, all tied
    with pytest.raises(ValueError, match="end in a tie"):
        BRkNN(2, variant="mulan").fit_from_graph(build_graph(BruteNeighbors().fit(X), None, 3), Y) \
            .predict_proba_from_graph(graph)


def test_persistence_keeps_the_tie_stream(tmp_path):
    from mlknn.persistence import load, save

    X, Y, Xq = grid_problem(11, q=6, density=0.15)
    clf = BRkNNb(3, variant="mulan").fit(X, sp.csr_array(Y))
    clf.predict(Xq[:10])  # advance the stream before saving
    restored = load(save(clf, tmp_path / "brknnb.npz"))
    assert restored.tie_random_state_ == clf.tie_random_state_
    np.testing.assert_array_equal(restored.predict(Xq[10:]).toarray(), clf.predict(Xq[10:]).toarray())


# Bipartitions printed once by a Java transcription of MULAN's labelsFromConfidences2 / 3
# (java.util.Random(1), Java doubles, Math.round, a stable sort by (confidence, index)),
# run on the tie-extended neighbourhoods of grid_problem(4, q=6, density=0.15) at k = 3.
JAVA_EXTA = ("000010 001000 000100 000100 010000 001000 000001 000100 100000 010000 010000 000001 001000 "
             "001000 001000 010000 100000 010000 010000 000001 010000 010000 010000 010000 000100 000100 "
             "001000 001000 000100 001000 000100 000010 001000 000100 001000 010000 001000 001000 010000 000001")
JAVA_EXTB = ("001000 000100 000100 000100 010000 001000 000001 000100 100000 010000 010000 001000 001000 "
             "001000 001000 010000 100000 010000 010000 010000 010000 011000 010000 010001 000100 000100 "
             "001000 001000 000010 001000 000100 010000 001000 000100 000100 010000 001000 001000 010000 100000")


@pytest.mark.parametrize("cls,expected", [(BRkNNa, JAVA_EXTA), (BRkNNb, JAVA_EXTB)])
def test_draws_match_a_java_run(cls, expected):
    X, Y, Xq = grid_problem(4, q=6, density=0.15)
    pred = cls(3, variant="mulan").fit(X, Y).predict(Xq)
    assert " ".join("".join(map(str, row)) for row in pred) == expected


def test_tie_extended_neighbourhoods_by_hand():
    from mlknn.algorithms._brknn_mulan import tie_extended_neighbourhoods

    # k = 2, n_train = 6. Row 0: distances 1, 2, 3 -> complete, k' = 2.
    # Row 1: 1, 2, 2 -> the tie may go on: searched again 6 wide -> 1, 2, 2, 2, 5, 6: k' = 4.
    graph = NeighborGraph(np.array([[0, 1, 2], [3, 4, 5]]), np.array([[1.0, 2.0, 3.0], [1.0, 2.0, 2.0]]))
    asked = []

    def research(rows, width):
        asked.append((rows.tolist(), width))
        return NeighborGraph(np.array([[3, 4, 5, 0, 1, 2]]), np.array([[1.0, 2.0, 2.0, 2.0, 5.0, 6.0]]))

    A, k_prime = tie_extended_neighbourhoods(graph, 2, 6, research)
    assert asked == [([1], 6)]
    np.testing.assert_array_equal(k_prime, [2, 4])
    np.testing.assert_array_equal(A.toarray(), [[1, 1, 0, 0, 0, 0], [1, 0, 0, 1, 1, 1]])

    with pytest.raises(ValueError, match="returned 3 neighbours when asked for 6"):
        tie_extended_neighbourhoods(graph, 2, 6, lambda rows, width: NeighborGraph(graph.indices[rows],
                                                                                 graph.distances[rows]))
