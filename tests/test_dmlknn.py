import numpy as np
import pytest
import scipy.sparse as sp
from reference_dmlknn import loop_dmlknn
from sklearn.base import clone

from mlknn import MLkNN
from mlknn.algorithms import _dmlknn
from mlknn.algorithms._dmlknn import DMLkNN
from mlknn.neighbors import BruteNeighbors, build_graph


def _check_against_loop(X, Y, Xq, k, delta, s, variant="paper"):
    clf = DMLkNN(n_neighbors=k, delta=delta, smoothing=s, variant=variant).fit(X, Y)
    index = BruteNeighbors().fit(X)
    train_nbrs = index.kneighbors(None, k)[1]
    query_nbrs = index.kneighbors(Xq, k)[1]
    post, pred, prior, v, v_prime = loop_dmlknn(train_nbrs, Y, query_nbrs, k, delta, s, variant=variant)
    np.testing.assert_allclose(clf.prior_, prior, rtol=0, atol=1e-12)
    counts = build_graph(index, Xq, k).to_csr(X.shape[0]) @ Y.astype(np.int64)
    got_v, got_vp = clf.evidence_counts(np.asarray(counts))
    np.testing.assert_array_equal(got_v, v)
    np.testing.assert_array_equal(got_vp, v_prime)
    np.testing.assert_allclose(clf.predict_proba(Xq), post, rtol=0, atol=1e-10)
    np.testing.assert_array_equal(clf.predict(Xq), pred)


@pytest.mark.parametrize(
    "k,delta,s", [(1, 0, 1.0), (5, 0, 1.0), (5, 1, 1.0), (7, 2, 0.5), (5, 5, 0.0), (4, 1, 0.0), (10, 6, 1.0)]
)
def test_dmlknn_matches_loop_reference(small_problem, k, delta, s):
    X, Y = small_problem
    _check_against_loop(X, Y, X[:20] + 0.05, k, delta, s)


@pytest.mark.parametrize("k,s", [(3, 1.0), (8, 1.0), (5, 0.0), (10, 0.5)])
def test_mulan_variant_matches_loop_reference(small_problem, k, s):
    X, Y = small_problem
    _check_against_loop(X, Y, X[:20] + 0.05, k, 6, s, variant="mulan")


def test_mulan_hand_worked_example():
    # The five points of test_hand_worked_example, k = 1, s = 1, Q = 2. MULAN's
    # delta = 6 >= k makes every training vector qualify on the window.
    X = np.array([[0.0], [1.0], [2.0], [10.0], [11.0]])
    Y = np.array([[1, 0], [1, 1], [0, 1], [0, 0], [0, 1]])
    clf = DMLkNN(n_neighbors=1, smoothing=1.0, variant="mulan").fit(X, Y)
    # Smoothed prior (s + u) / (2 s + n) with u = [2, 3], n = 5: [3/7, 4/7].
    np.testing.assert_allclose(clf.prior_, [3 / 7, 4 / 7])
    assert clf.delta_ == 6
    # Query 0.4 -> neighbour 0 -> c_x = [1, 0].
    # label 0: c_i(0) == 1 for i = 0, 1, 2 with y = 1, 1, 0 -> v = 2, v' = 1;
    #   L1 = 3/4, L0 = 2/5; Pin = 3/7 * 3/4 = 9/28, Pout = 4/7 * 2/5 = 8/35 -> 45/77.
    # label 1: c_i(1) == 0 for i = 1, 4 with y = 1, 1 -> v = 2, v' = 0;
    #   L1 = 3/5, L0 = 1/4; Pin = 4/7 * 3/5 = 12/35, Pout = 3/7 * 1/4 = 3/28 -> 16/21.
    np.testing.assert_allclose(clf.predict_proba([[0.4]]), [[45 / 77, 16 / 21]])
    np.testing.assert_array_equal(clf.predict([[0.4]]), [[1, 1]])
    # The paper's reading with delta = 6 differs only by the unsmoothed prior [2/5, 3/5]:
    # label 0: 2/5 * 3/4 = 3/10 vs 3/5 * 2/5 = 6/25 -> 5/9.
    paper = DMLkNN(n_neighbors=1, delta=6, smoothing=1.0).fit(X, Y)
    np.testing.assert_allclose(paper.predict_proba([[0.4]])[0, 0], 5 / 9)


def test_mulan_variant_ties_and_empty_evidence(small_problem):
    # s = 0 and no qualifying training instance: Pin = Pout = 0. MULAN predicts 1
    # (Pin >= Pout) with confidence Pin = 0; the paper's reading predicts 0 with
    # the prior as posterior.
    X, Y = small_problem
    for variant, want_pred in (("mulan", 1), ("paper", 0)):
        clf = DMLkNN(5, delta=6, smoothing=0.0, variant=variant).fit(X, Y)
        clf.evidence_counts = lambda counts: (np.zeros_like(counts), np.zeros_like(counts))
        assert np.all(clf.predict(X[:5]) == want_pred)
        want_proba = 0.0 if variant == "mulan" else np.broadcast_to(clf.prior_, (5, Y.shape[1]))
        np.testing.assert_array_equal(clf.predict_proba(X[:5]), want_proba)


def test_mulan_variant_fixes_delta_with_a_warning(small_problem):
    X, Y = small_problem
    ref = DMLkNN(5, variant="mulan").fit(X, Y).predict_proba(X[:10])
    with pytest.warns(UserWarning, match=r"uses delta=6.*\(2\) is ignored"):
        clf = DMLkNN(5, delta=2, variant="mulan").fit(X, Y)
    assert clf.delta_ == 6
    np.testing.assert_array_equal(clf.predict_proba(X[:10]), ref)


@pytest.mark.data
def test_dmlknn_matches_loop_reference_on_emotions(data_dir):
    # Subset: the whole 50/50 training half (297 instances, 6 labels) but only the
    # first 60 test instances as queries, because the literal loop reference
    # recomputes every training counting vector for every query (step 8).
    from sklearn.model_selection import train_test_split

    from mlknn.datasets import load

    data = load("emotions", data_home=data_dir)
    Xtr, Xte, Ytr, _ = train_test_split(data.X, data.Y, test_size=0.5, random_state=0)
    for delta in (1, 3):
        _check_against_loop(Xtr, Ytr, Xte[:60], 10, delta, 1.0)


def test_hand_worked_example():
    # Five points on a line, Q = 2 labels, k = 1, s = 1 (so s*Q = 2).
    # LOO nearest neighbours: 0->1, 1->0 (tie with 2 broken by the lower index),
    # 2->1, 3->4, 4->3.
    X = np.array([[0.0], [1.0], [2.0], [10.0], [11.0]])
    Y = np.array([[1, 0], [1, 1], [0, 1], [0, 0], [0, 1]])
    # Training counting vectors c_i = Y[neighbour]:
    # c0 = [1,1], c1 = [1,0], c2 = [1,1], c3 = [0,1], c4 = [0,0].
    # u = [2, 3], u' = [3, 2]; prior (eq 13, unsmoothed) = [2/5, 3/5].
    clf = DMLkNN(n_neighbors=1, delta=0, smoothing=1.0).fit(X, Y)
    np.testing.assert_allclose(clf.prior_, [2 / 5, 3 / 5])
    np.testing.assert_array_equal(clf.train_counts_, [[1, 1], [1, 0], [1, 1], [0, 1], [0, 0]])

    # Query 0.4 -> neighbour 0 -> c_x = [1, 0].
    # delta = 0: only c1 = [1,0] qualifies; y1 = [1,1] -> v = [1,1], v' = [0,0].
    # label 0: L1 = (1+1)/(2+2) = 1/2, L0 = (1+0)/(2+3) = 1/5;
    #          joint 2/5*1/2 = 1/5 vs 3/5*1/5 = 3/25 -> posterior 5/8, predict 1.
    # label 1: L1 = (1+1)/(2+3) = 2/5, L0 = (1+0)/(2+2) = 1/4;
    #          joint 3/5*2/5 = 6/25 vs 2/5*1/4 = 1/10 -> posterior 12/17, predict 1.
    np.testing.assert_array_equal(clf.evidence_counts([[1, 0]])[0], [[1, 1]])
    np.testing.assert_allclose(clf.predict_proba([[0.4]]), [[5 / 8, 12 / 17]])
    np.testing.assert_array_equal(clf.predict([[0.4]]), [[1, 1]])

    # Query 10.4 -> neighbour 3 -> c_x = [0, 0]. delta = 0: only c4 = [0,0];
    # y4 = [0,1] -> v = [0,1], v' = [1,0].
    # label 0: L1 = 1/4, L0 = 2/5; joint 1/10 vs 6/25 -> posterior 5/17, predict 0.
    # label 1: L1 = 2/5, L0 = 1/4; joint 6/25 vs 1/10 -> posterior 12/17, predict 1.
    np.testing.assert_allclose(clf.predict_proba([[10.4]]), [[5 / 17, 12 / 17]])
    np.testing.assert_array_equal(clf.predict([[10.4]]), [[0, 1]])

    # delta = 1, query 0.4 (c_x = [1,0]): every c_i is within +-1 on both labels.
    # label 0: c_i(0) == 1 for i = 0, 1, 2 with y(0) = 1, 1, 0 -> v = 2, v' = 1;
    #   L1 = 3/4, L0 = 2/5; joint 3/10 vs 6/25 -> posterior 15/27 = 5/9.
    # label 1: c_i(1) == 0 for i = 1, 4 with y(1) = 1, 1 -> v = 2, v' = 0;
    #   L1 = 3/5, L0 = 1/4; joint 9/25 vs 1/10 -> posterior 18/23.
    clf1 = DMLkNN(n_neighbors=1, delta=1, smoothing=1.0).fit(X, Y)
    np.testing.assert_allclose(clf1.predict_proba([[0.4]]), [[5 / 9, 18 / 23]])


def test_large_delta_and_no_smoothing_equals_mlknn(small_problem):
    # delta >= k makes every F event certain (sec. 4.2); with s = 0 the unsmoothed
    # prior of eq 13 and c[j]/u likelihoods are ML-kNN's with s = 0.
    X, Y = small_problem
    Xq = X[:30] + 0.1
    for delta in (5, 9):
        dml = DMLkNN(5, delta=delta, smoothing=0.0).fit(X, Y)
        ml = MLkNN(5, smoothing=0.0).fit(X, Y)
        np.testing.assert_allclose(dml.predict_proba(Xq), ml.predict_proba(Xq), rtol=0, atol=1e-15)
        np.testing.assert_array_equal(dml.predict(Xq), ml.predict(Xq))


def test_blocks_do_not_change_the_result(small_problem, monkeypatch):
    X, Y = small_problem
    ref = DMLkNN(5, delta=2).fit(X, Y).predict_proba(X)
    monkeypatch.setattr(_dmlknn, "_BLOCK_BYTES", 1)  # one query vector per block
    np.testing.assert_array_equal(DMLkNN(5, delta=2).fit(X, Y).predict_proba(X), ref)


@pytest.mark.parametrize("delta", [0, 1, 3, 9])
def test_evidence_counts_of_arbitrary_vectors(small_problem, delta):
    # Query vectors drawn at random (counts above delta where the training vectors
    # have 0, counts no training vector has, the all-zero vector) against the
    # definition, one query and one training instance at a time.
    X, Y = small_problem
    k = 6
    clf = DMLkNN(k, delta=delta).fit(X, Y)
    rng = np.random.default_rng(delta)
    queries = rng.integers(0, k + 1, size=(40, Y.shape[1])) * (rng.random((40, Y.shape[1])) < 0.4)
    queries = np.vstack([queries, np.zeros(Y.shape[1], dtype=int), clf.train_counts_[:10]])
    v, v_prime = clf.evidence_counts(queries)
    C = clf.train_counts_
    for b, c in enumerate(queries):
        for q in range(Y.shape[1]):
            want = want_prime = 0
            for i in range(C.shape[0]):
                if C[i, q] == c[q] and all(abs(int(C[i, l]) - int(c[l])) <= delta for l in range(Y.shape[1])):
                    want += int(Y[i, q] == 1)
                    want_prime += int(Y[i, q] == 0)
            assert (v[b, q], v_prime[b, q]) == (want, want_prime), (b, q)


def test_tie_predicts_zero(small_problem):
    X, Y = small_problem
    clf = DMLkNN(3, delta=1).fit(X, Y)
    # Equal priors and v == v', u == u' make every joint tie: MAP tie rule says 0.
    clf.prior_ = np.full(Y.shape[1], 0.5)
    clf.n_positive_ = np.full(Y.shape[1], clf.n_train_ // 2)
    clf.n_train_ = 2 * (clf.n_train_ // 2)
    evidence = clf.evidence_counts
    clf.evidence_counts = lambda counts: (evidence(counts)[0],) * 2  # v' == v
    assert clf.predict(X).sum() == 0
    np.testing.assert_allclose(clf.predict_proba(X), 0.5)


def test_zero_smoothing_without_evidence_gives_prior(small_problem):
    X, Y = small_problem
    clf = DMLkNN(5, delta=0, smoothing=0.0).fit(X, Y)
    # A counting vector no training instance has: v = v' = 0, both joints 0.
    far = np.full((1, Y.shape[1]), 99)
    v, vp = clf.evidence_counts(far)
    assert v.sum() == 0 and vp.sum() == 0
    proba = clf.predict_proba(X)
    assert np.all(np.isfinite(proba)) and proba.min() >= 0 and proba.max() <= 1


def test_sparse_and_float32_give_same_decisions(small_problem):
    X, Y = small_problem
    ref = DMLkNN(5, delta=2).fit(X, Y)
    np.testing.assert_allclose(
        DMLkNN(5, delta=2).fit(sp.csr_matrix(X), Y).predict_proba(sp.csr_matrix(X[:30])),
        ref.predict_proba(X[:30]),
    )
    np.testing.assert_array_equal(
        DMLkNN(5, delta=2).fit(X.astype(np.float32), Y).predict(X[:30].astype(np.float32)),
        ref.predict(X[:30]),
    )


def test_fit_from_graph_equals_fit(small_problem):
    X, Y = small_problem
    index = BruteNeighbors().fit(X)
    wide_train = build_graph(index, None, 12)
    wide_query = build_graph(index, X[:15] + 0.1, 12)
    clf = DMLkNN(6, delta=2).fit_from_graph(wide_train, Y, index=index)
    ref = DMLkNN(6, delta=2).fit(X, Y)
    np.testing.assert_array_equal(clf.predict_proba_from_graph(wide_query), ref.predict_proba(X[:15] + 0.1))
    np.testing.assert_array_equal(clf.predict(X[:15] + 0.1), ref.predict(X[:15] + 0.1))


def test_constant_labels_and_single_label(small_problem):
    X, Y = small_problem
    Y = Y.copy()
    Y[:, 0] = 0
    Y[:, 1] = 1
    for s in (1.0, 0.0):
        clf = DMLkNN(5, delta=1, smoothing=s).fit(X, Y)
        proba = clf.predict_proba(X)
        assert np.all(np.isfinite(proba)) and proba.min() >= 0 and proba.max() <= 1
        pred = clf.predict(X)
        assert pred[:, 0].sum() == 0 and pred[:, 1].all()
    assert DMLkNN(3, delta=0).fit(X, Y[:, :1]).predict(X).shape == (80, 1)


def test_predict_keeps_y_dtype(small_problem):
    X, Y = small_problem
    assert DMLkNN(3).fit(X, Y.astype(np.float32)).predict(X).dtype == np.float32


@pytest.mark.parametrize(
    "params,match",
    [
        ({"delta": -1}, r"'delta' parameter of DMLkNN must be an int in the range \[0, inf\)\. Got -1"),
        ({"delta": 1.5}, r"'delta' parameter of DMLkNN must be an int .* Got 1\.5"),
        ({"smoothing": -0.5}, r"'smoothing' parameter of DMLkNN must be a float in the range \[0(\.0)?, inf\)"),
        ({"n_neighbors": 0}, r"'n_neighbors' parameter of DMLkNN must be an int in the range \[1, inf\)"),
        ({"n_neighbors": 80}, r"'n_neighbors' parameter of DMLkNN must be <= n_samples - 1 = 79"),
        ({"neighbors": "nope"}, "'neighbors' parameter"),
        ({"variant": "skmultilearn"}, "'variant' parameter of DMLkNN must be a str among"),
    ],
)
def test_bad_parameters(small_problem, params, match):
    X, Y = small_problem
    with pytest.raises(ValueError, match=match):
        DMLkNN(**params).fit(X, Y)


def test_clone_params_and_lazy_export():
    import mlknn

    clf = DMLkNN(7, delta=2, smoothing=0.3)
    assert clone(clf).get_params() == clf.get_params()
    assert clf.set_params(delta=3).delta == 3
    assert mlknn.DMLkNN is DMLkNN
    assert DMLkNN().delta == _dmlknn.DEFAULT_DELTA == 6
