"""Sparse labels end to end and exact top-k prediction (issue 12 points 1-2) in the estimator core.

Checked against the dense path (bit-identical), against loop references
(tests/reference_topk.py, tests/reference_impls.py) and hand-worked cases.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from _estimator_checks import make_estimator
from reference_impls import loop_knn, loop_mlknn
from reference_topk import loop_mlknn_skmultilearn, loop_topk

import mlknn
from mlknn import (
    BMLkNN,
    FeatureScaleWarning,
    LabelSpaceTooLargeError,
    MLkNN,
    NeighborhoodClassifier,
)
from mlknn._registry import KNN_ESTIMATORS
from mlknn.algorithms._kernels import (
    topk_from_dense,
    topk_from_sparse_candidates,
    zero_count_topk,
)
from mlknn.base import KNNMultiLabelBase
from mlknn.neighbors import NeighborGraph
from mlknn.utils._validation import check_dense_label_budget, check_label_matrix

SPARSE_ESTIMATORS = [
    ("mlknn", MLkNN, {}),
    ("mlknn-skml", MLkNN, {"variant": "skmultilearn"}),
    ("mlknn-hub", MLkNN, {"hubness": "ls"}),
    ("bmlknn", BMLkNN, {"radius": "auto"}),
    ("bmlknn-1", BMLkNN, {"radius": 1.2}),
    ("nc", NeighborhoodClassifier, {"n_neighbors": 4}),
]


def problem(seed=0, n=120, q=30, d=4, n_q=40):
    """Clustered features, many rare labels, some training rows with no label at all,
    and three labels that no training row carries (ties among the zero-count posteriors)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    Y = (rng.random((n, q)) < 0.06).astype(np.uint8)
    Y[:, 0] = X[:, 0] > 0  # a frequent label
    Y[: n // 4] = 0  # rows without labels
    Y[:, 3:6] = 0  # three labels nobody carries: equal zero-count posteriors (ties)
    X[: n // 4] += 6.0  # their own cluster: queries there see no label
    Xq = np.vstack([rng.normal(size=(n_q - 5, d)), rng.normal(size=(5, d)) + 6.0])
    return X, Y, Xq


# ------------------------------------------------------------- validation
def test_check_label_matrix_keeps_sparse_canonical():
    Y = sp.coo_matrix(([1, 1, 0, 1], ([0, 2, 1, 0], [1, 0, 2, 3])), shape=(3, 4))
    out = check_label_matrix(Y, accept_sparse=True)
    assert isinstance(out, sp.csr_array) and out.dtype == np.uint8
    assert out.has_sorted_indices and out.nnz == 3  # the explicit zero is dropped
    np.testing.assert_array_equal(out.toarray(), Y.toarray())
    dense = check_label_matrix(Y)  # default: densified, as before
    assert isinstance(dense, np.ndarray) and dense.dtype == np.uint8


@pytest.mark.parametrize(
    ("Y", "match"),
    [
        (sp.coo_matrix(([1, 1], ([0, 0], [1, 1])), shape=(2, 2)), "found the value 2"),  # duplicates sum to 2
        (sp.csr_matrix(np.array([[0.5, 0], [0, 1]])), "continuous"),
        (sp.csr_matrix((2, 0)), "at least one label column"),
    ],
)
def test_check_label_matrix_sparse_errors(Y, match):
    with pytest.raises(ValueError, match=match):
        check_label_matrix(Y, accept_sparse=True)


def test_check_label_matrix_sparse_rows_must_match():
    with pytest.raises(ValueError, match="has 2 rows but X has 3"):
        check_label_matrix(sp.csr_matrix(np.eye(2)), n_samples=3, accept_sparse=True)


def test_dense_label_budget_error_names_bytes_limit_and_estimators():
    with pytest.raises(LabelSpaceTooLargeError) as info:
        check_dense_label_budget(1000, 2000, estimator="DMLkNN", limit=10**6)
    err = info.value
    assert isinstance(err, MemoryError) and isinstance(err, ValueError)
    msg = str(err)
    assert "16,000,000 bytes" in msg and "1,000,000 bytes" in msg and "DMLkNN" in msg
    assert "MLkNN" in msg and "NeighborhoodClassifier" in msg  # the estimators that can do it
    assert check_dense_label_budget(10, 10, limit=800) == 800


def test_dense_label_budget_environment(monkeypatch):
    monkeypatch.setenv("MLKNN_DENSE_LABEL_BUDGET", "100")
    with pytest.raises(LabelSpaceTooLargeError, match="over the limit of 100 bytes"):
        check_dense_label_budget(4, 4)


class _DenseOnly(KNNMultiLabelBase):
    """A minimal estimator without a sparse path (the base class densifies for it)."""

    def __init__(self, n_neighbors=3, *, neighbors="brute", metric="euclidean", n_jobs=None):
        self.n_neighbors = n_neighbors
        self.neighbors = neighbors
        self.metric = metric
        self.n_jobs = n_jobs

    def _fit_graph(self, graph, Y, X):
        assert isinstance(Y, np.ndarray)
        self._Y = Y

    def _predict_proba_graph(self, graph, X):
        return self._Y[graph.indices].mean(axis=1)


def test_dense_estimator_densifies_within_budget_and_refuses_beyond(monkeypatch):
    X, Y, Xq = problem()
    est = _DenseOnly().fit(X, sp.csr_array(Y))
    assert est.sparse_labels_ is False
    P = est.predict(Xq)
    assert isinstance(P, sp.csr_array)  # the container kind given to fit
    np.testing.assert_array_equal(P.toarray(), _DenseOnly().fit(X, Y).predict(Xq))
    monkeypatch.setenv("MLKNN_DENSE_LABEL_BUDGET", str(Y.size - 1))
    with pytest.raises(LabelSpaceTooLargeError, match="_DenseOnly would need a dense label matrix"):
        _DenseOnly().fit(X, sp.csr_array(Y))
    _DenseOnly().fit(X, Y)  # a dense Y is not checked: it is already allocated


# --------------------------------------------------- sparse == dense path
@pytest.mark.parametrize(("name", "cls", "params"), SPARSE_ESTIMATORS, ids=[e[0] for e in SPARSE_ESTIMATORS])
@pytest.mark.parametrize("container", [sp.csr_matrix, sp.csr_array, sp.csc_matrix])
def test_sparse_labels_equal_dense_path(name, cls, params, container):
    X, Y, Xq = problem()
    dense = cls(**params).fit(X, Y)
    sparse = cls(**params).fit(X, container(Y))
    assert sparse.sparse_labels_ and not dense.sparse_labels_
    assert isinstance(sparse._fit_Y, sp.csr_array)
    for attr in ("prior_", "cond_prob_true_", "cond_prob_false_"):
        np.testing.assert_array_equal(getattr(sparse, attr), getattr(dense, attr))
    np.testing.assert_array_equal(sparse.predict_proba(Xq), dense.predict_proba(Xq))
    P = sparse.predict(Xq)
    kind = sp.csr_matrix if issubclass(container, sp.spmatrix) else sp.csr_array
    assert type(P) is kind and P.dtype == dense.predict(Xq).dtype
    np.testing.assert_array_equal(P.toarray(), dense.predict(Xq))
    assert isinstance(dense.predict(Xq), np.ndarray)


def test_sparse_mlknn_equals_loop_reference():
    X, Y, Xq = problem(n=60, q=12, n_q=15)
    k = 4
    _, tr = loop_knn(X, None, k, loo=True)
    _, te = loop_knn(X, Xq, k)
    post, pred, prior, ct, cf = loop_mlknn(tr, Y, te, k)
    est = MLkNN(n_neighbors=k).fit(X, sp.csr_array(Y))
    np.testing.assert_allclose(est.prior_, prior, rtol=1e-12)
    np.testing.assert_allclose(est.cond_prob_true_, ct, rtol=1e-12)
    np.testing.assert_allclose(est.cond_prob_false_, cf, rtol=1e-12)
    np.testing.assert_allclose(est.predict_proba(Xq), post, rtol=1e-12)
    np.testing.assert_array_equal(est.predict(Xq).toarray(), pred)


def test_zero_count_positive_labels_in_sparse_predict():
    """A label carried by most training rows is predicted even where no neighbour has it."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(50, 3))
    Y = np.zeros((50, 6), dtype=np.uint8)
    Y[:, 0] = 1
    Y[:5, 0] = 0
    Y[rng.random(50) < 0.2, 2] = 1
    Xq = rng.normal(size=(20, 3))
    dense = MLkNN(n_neighbors=3, smoothing=20.0).fit(X, Y)
    sparse = MLkNN(n_neighbors=3, smoothing=20.0).fit(X, sp.csr_array(Y))
    joint1, joint0 = dense._joint_tables()
    assert joint1[0, 0] > joint0[0, 0]  # label 0 is predicted at count 0
    np.testing.assert_array_equal(sparse.predict(Xq).toarray(), dense.predict(Xq))


# ------------------------------------------------------------------ top k
@pytest.mark.parametrize(("name", "cls", "params"), SPARSE_ESTIMATORS, ids=[e[0] for e in SPARSE_ESTIMATORS])
@pytest.mark.parametrize("k", [1, 3, 7, 30])
def test_predict_topk_equals_dense_and_loop(name, cls, params, k):
    X, Y, Xq = problem()
    dense = cls(**params).fit(X, Y)
    sparse = cls(**params).fit(X, sp.csr_matrix(Y))
    proba = dense.predict_proba(Xq)
    ref_labels, ref_scores = loop_topk(proba, k)
    for est in (dense, sparse):
        labels, scores = est.predict_topk(Xq, k=k)
        assert labels.dtype == np.int64 and scores.dtype == np.float64 and labels.shape == (Xq.shape[0], k)
        np.testing.assert_array_equal(labels, ref_labels)
        np.testing.assert_array_equal(scores, ref_scores)


def test_predict_topk_rows_without_labelled_neighbours_break_ties_by_label():
    X, Y, Xq = problem()
    est = MLkNN(n_neighbors=3).fit(X, sp.csr_array(Y))
    graph, _ = est.query_graph(Xq)
    empty = np.flatnonzero(Y[graph.indices].sum(axis=(1, 2)) == 0)
    assert empty.size >= 3  # the queries near the unlabelled cluster
    labels, _ = est.predict_topk(Xq, k=8)
    zero_post = est.predict_proba(Xq)[empty[0]]
    # Every such row is the presorted zero-count list: the same for all of them.
    ref, _ = loop_topk(zero_post[None, :], 8)
    for row in empty:
        np.testing.assert_array_equal(labels[row], ref[0])
    # Labels 3-5 are never seen: equal zero-count posteriors, ordered by index.
    assert np.unique(zero_post[3:6]).size == 1
    labels, _ = est.predict_topk(Xq, k=Y.shape[1])
    tied = [l for l in labels[empty[0]] if 3 <= l <= 5]
    assert tied == [3, 4, 5]
    pos = [list(labels[empty[0]]).index(l) for l in tied]
    assert pos == list(range(pos[0], pos[0] + 3))  # adjacent in the ranking


def test_predict_topk_k_validation():
    X, Y, Xq = problem(q=10)
    est = MLkNN(n_neighbors=3).fit(X, sp.csr_array(Y))
    with pytest.raises(ValueError, match=r"'k' parameter of predict_topk must be <= n_labels = 10.*k = 11"):
        est.predict_topk(Xq, k=11)
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="'k' parameter of predict_topk must be an int >= 1"):
            est.predict_topk(Xq, k=bad)
    labels, _ = est.predict_topk(Xq, k=10)  # k = q: a full ranking
    assert sorted(labels[0]) == list(range(10))


@pytest.mark.parametrize("name", KNN_ESTIMATORS)
def test_predict_topk_on_every_knn_estimator(name):
    X, Y, Xq = problem(n=60, q=8, n_q=12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = make_estimator(name).fit(X, Y)
        proba = est.predict_proba(Xq)
        labels, scores = est.predict_topk(Xq, k=3)
    ref_labels, ref_scores = loop_topk(proba, 3)
    np.testing.assert_array_equal(labels, ref_labels)
    np.testing.assert_array_equal(scores, ref_scores)


def test_predict_topk_from_graph_and_chunks(monkeypatch):
    X, Y, Xq = problem()
    est = MLkNN(n_neighbors=3).fit(X, sp.csr_array(Y))
    graph, _ = est.query_graph(Xq)
    ref = est.predict_topk(Xq, k=4)
    got = est.predict_topk_from_graph(graph, k=4)
    np.testing.assert_array_equal(got[0], ref[0])
    import sklearn

    with sklearn.config_context(working_memory=0.0001):  # many small row chunks
        chunked = est.predict_topk(Xq, k=4)
    np.testing.assert_array_equal(chunked[0], ref[0])
    np.testing.assert_array_equal(chunked[1], ref[1])


def test_topk_kernels_hand_worked():
    scores = np.array([[0.2, 0.5, 0.5, 0.1], [0.3, 0.3, 0.3, 0.3]])
    labels, values = topk_from_dense(scores, 2)
    np.testing.assert_array_equal(labels, [[1, 2], [0, 1]])
    np.testing.assert_array_equal(values, [[0.5, 0.5], [0.3, 0.3]])
    labels, values = topk_from_sparse_candidates(
        np.array([0, 0, 0, 1, 1]), np.array([3, 1, 2, 0, 2]), np.array([0.4, 0.4, 0.9, 0.1, 0.1]), 2, 2
    )
    np.testing.assert_array_equal(labels, [[2, 1], [0, 2]])
    with pytest.raises(ValueError, match="candidates per row"):
        topk_from_sparse_candidates(np.array([0]), np.array([0]), np.array([1.0]), 2, 1)
    # Row 0 stores label 2 (score 0.05); zero-count scores put label 3 first, then 0 and 1 tied.
    counts = sp.csr_array((np.array([1]), np.array([2]), np.array([0, 1, 1])), shape=(2, 4))
    labels, values = zero_count_topk(counts, np.array([0.05]), np.array([0.2, 0.2, 0.7, 0.9]), 3)
    np.testing.assert_array_equal(labels, [[3, 0, 1], [3, 2, 0]])
    np.testing.assert_array_equal(values, [[0.9, 0.2, 0.2], [0.9, 0.7, 0.2]])


# ------------------------------------------------------- dense score budget
def test_predict_proba_over_budget_names_predict_topk(monkeypatch):
    X, Y, Xq = problem()
    est = MLkNN(n_neighbors=3).fit(X, sp.csr_array(Y))
    monkeypatch.setenv("MLKNN_DENSE_LABEL_BUDGET", str(8 * Y.shape[1] * Xq.shape[0] - 1))
    with pytest.raises(LabelSpaceTooLargeError, match="predict_topk"):
        est.predict_proba(Xq)
    labels, _ = est.predict_topk(Xq, k=2)  # still works, without the dense scores
    assert labels.shape == (Xq.shape[0], 2)
    assert sp.issparse(est.predict(Xq))
    dense = MLkNN(n_neighbors=3).fit(X, Y)
    dense.predict_proba(Xq)  # dense labels: as before, no budget


# ------------------------------------------------------------ persistence
def test_persistence_keeps_sparse_labels_sparse(tmp_path):
    X, Y, Xq = problem(q=500)
    est = MLkNN(n_neighbors=3).fit(X, sp.csr_matrix(Y))
    path = mlknn.save(est, tmp_path / "m.npz")
    with np.load(path) as arrays:
        assert max(arrays[key].size for key in arrays.files) < Y.size  # nothing (n, q) dense
    back = mlknn.load(path)
    assert isinstance(back._fit_Y, sp.csr_array) and back.sparse_labels_
    assert type(back.predict(Xq)) is sp.csr_matrix
    np.testing.assert_array_equal(back.predict(Xq).toarray(), est.predict(Xq).toarray())
    for a, b in zip(back.predict_topk(Xq, k=5), est.predict_topk(Xq, k=5)):
        np.testing.assert_array_equal(a, b)


# --------------------------------------------------------------- variants
def test_variant_skmultilearn_equals_loop_reference():
    X, Y, Xq = problem(n=60, q=10, n_q=15)
    k = 4
    _, tr = loop_knn(X, None, k, loo=True)
    _, te = loop_knn(X, Xq, k)
    scores, pred = loop_mlknn_skmultilearn(tr, Y, te, k)
    for labels in (Y, sp.csr_array(Y)):
        est = MLkNN(n_neighbors=k, variant="skmultilearn").fit(X, labels)
        np.testing.assert_allclose(est.predict_proba(Xq), scores, rtol=1e-12)
        P = est.predict(Xq)
        np.testing.assert_array_equal(P.toarray() if sp.issparse(P) else P, pred)


def test_variant_mulan_scores_are_the_papers():
    """MULAN's MLkNN has the paper's posterior (distances without Weka's normalisation):
    the confidences equal "paper" on the same features, dense or CSR X."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(80, 4)) * np.array([1.0, 100.0, 0.01, 5.0]) + 3.0
    Y = (rng.random((80, 6)) < 0.3).astype(np.uint8)
    Xq = rng.normal(size=(20, 4)) * np.array([1.0, 100.0, 0.01, 5.0]) + 3.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FeatureScaleWarning)
        mulan = MLkNN(n_neighbors=5, variant="mulan", random_state=0).fit(X, Y)
        paper = MLkNN(n_neighbors=5).fit(X, Y)
        mulan_csr = MLkNN(n_neighbors=5, variant="mulan", random_state=0).fit(sp.csr_matrix(X), Y)
    assert not hasattr(mulan, "feature_scale_")
    np.testing.assert_allclose(mulan.predict_proba(Xq), paper.predict_proba(Xq), rtol=1e-12)
    np.testing.assert_allclose(mulan_csr.predict_proba(sp.csr_matrix(Xq)), paper.predict_proba(Xq), rtol=1e-12)


def test_variant_mulan_draws_exact_ties():
    """MULAN breaks an exact MAP tie by a coin (java.util.Random); mlknn seeds it with random_state."""
    X = np.arange(8, dtype=float)[:, None]
    Y = np.array([[1, 0], [0, 1]] * 4, dtype=np.uint8)
    Xq = np.linspace(0, 7, 40)[:, None]
    paper = MLkNN(n_neighbors=2).fit(X, Y)
    joint1, joint0 = paper._joint_tables()
    assert (joint1 == joint0).any()  # the problem has exact ties
    draws = [MLkNN(n_neighbors=2, variant="mulan", random_state=s).fit(X, Y).predict(Xq) for s in (0, 0, 1)]
    np.testing.assert_array_equal(draws[0], draws[1])  # seeded: reproducible
    tie_cells = paper.predict(Xq) != draws[0]
    assert not (paper.predict(Xq) > draws[0]).any()  # only ties (predicted 0 by "paper") can change
    assert tie_cells.any() or (draws[0] != draws[2]).any()


# ----------------------------------------------- search width, capabilities
def test_search_width_and_capabilities():
    est = MLkNN(n_neighbors=5, hubness="mp")
    assert est.search_width() >= 5
    assert est.search_width(n_train=6) == 5
    assert MLkNN(n_neighbors=5).search_width(n_train=3) == 5  # n_neighbors itself is never capped
    caps = NeighborhoodClassifier().knn_capabilities()
    wanted = {"uses_features": True, "radius_counts": True, "sparse_labels": True, "hubness": False}
    assert {key: caps[key] for key in wanted} == wanted
    assert MLkNN().knn_capabilities()["hubness"] is True
    assert MLkNN(hubness="dsl").knn_capabilities()["uses_features"] is True


@pytest.mark.parametrize("name", KNN_ESTIMATORS)
def test_random_state_reaches_the_backend(name, monkeypatch):
    from mlknn.neighbors import BruteNeighbors, _base, register_backend

    # Removed from the live registry at teardown (other suites iterate it).
    monkeypatch.setitem(_base._REGISTRY, "b-test-seeded", None)
    seen = []

    def factory(metric="euclidean", n_jobs=None, random_state=None, **params):
        seen.append(random_state)
        return BruteNeighbors(metric=metric)

    register_backend("b-test-seeded", factory, exact=True)
    X, Y, _ = problem(n=30, q=6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        make_estimator(name, neighbors="b-test-seeded", random_state=7).fit(X, Y)
    assert seen == [7]


# ----------------------------------------------------------- fit_from_graph
def test_fit_from_graph_validates_before_setting_state():
    X, Y, _ = problem(n=30)
    est = MLkNN(n_neighbors=3).fit(X, Y)
    graph, _ = est.query_graph(None)
    fresh = MLkNN(n_neighbors=3)
    with pytest.raises(ValueError, match="has 29 rows"):
        fresh.fit_from_graph(graph, Y[:29])
    assert not hasattr(fresh, "n_features_in_") and not hasattr(fresh, "prior_")
    with pytest.raises(ValueError, match="at least search_width"):
        MLkNN(n_neighbors=3).fit_from_graph(NeighborGraph(graph.indices[:, :2], graph.distances[:, :2], loo=True), Y)
    with pytest.raises(mlknn.utils._param_validation.InvalidParameterError):
        MLkNN(n_neighbors=0).fit_from_graph(graph, Y)
    fitted = MLkNN(n_neighbors=3).fit_from_graph(graph, sp.csr_array(Y), index=est.nn_)
    assert fitted.sparse_labels_
    np.testing.assert_array_equal(fitted.predict_proba(X[:5]), est.predict_proba(X[:5]))


# ------------------------------------------------------- feature scale warning
def test_feature_scale_warning_once_and_silenceable():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3)) * np.array([1.0, 1e4, 1.0])
    Y = (rng.random((40, 2)) < 0.5).astype(np.uint8)
    with pytest.warns(FeatureScaleWarning, match="minmax") as record:
        MLkNN(n_neighbors=3).fit(X, Y)
    assert len([w for w in record if issubclass(w.category, FeatureScaleWarning)]) == 1
    with pytest.warns(FeatureScaleWarning):
        MLkNN(n_neighbors=3).fit(sp.csr_matrix(X), Y)
    with pytest.warns(FeatureScaleWarning):  # MULAN's reading uses X as given too
        MLkNN(n_neighbors=3, variant="mulan").fit(X, Y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        MLkNN(n_neighbors=3).fit(X / np.ptp(X, axis=0), Y)  # comparable ranges: silent
        warnings.simplefilter("ignore", FeatureScaleWarning)
        MLkNN(n_neighbors=3).fit(X, Y)


def test_nc_radius_beyond_the_graph_stays_sparse():
    """Rows whose radius holds more than the graph: counted by the backend, CSR for sparse Y."""
    X, Y, Xq = problem()
    dense = NeighborhoodClassifier(radius=1.5, n_neighbors=3).fit(X, Y)
    sparse = NeighborhoodClassifier(radius=1.5, n_neighbors=3).fit(X, sp.csr_array(Y))
    assert sparse.max_count_ > 3  # the radius reaches beyond the 3-wide graph
    np.testing.assert_array_equal(sparse.train_sizes_, dense.train_sizes_)
    np.testing.assert_array_equal(sparse.cond_prob_false_, dense.cond_prob_false_)
    np.testing.assert_array_equal(sparse.predict_proba(Xq), dense.predict_proba(Xq))
    np.testing.assert_array_equal(sparse.predict(Xq).toarray(), dense.predict(Xq))
    for a, b in zip(sparse.predict_topk(Xq, k=4), loop_topk(dense.predict_proba(Xq), 4)):
        np.testing.assert_array_equal(a, b)
    _, counts = sparse.nn_.radius_neighbors_counts(Xq, 1.5, sp.csr_array(Y))
    assert sp.issparse(counts)
    np.testing.assert_array_equal(counts.toarray(), sparse.nn_.radius_neighbors_counts(Xq, 1.5, Y)[1])


def test_sparse_path_allocates_nothing_of_shape_n_by_q():
    """q = 200,000 labels, 600 rows: any (n, q) float array would be ~1 GB; the
    sparse path (fit, predict, predict_topk) stays within O(nnz + n k + k q)."""
    import tracemalloc

    rng = np.random.default_rng(0)
    n, q, k = 600, 200_000, 3
    X = rng.normal(size=(n, 8))
    rows = np.repeat(np.arange(n), 3)
    Y = sp.csr_matrix((np.ones(rows.size, np.uint8), (rows, rng.integers(0, q, rows.size))), shape=(n, q))
    Y.data[:] = 1
    tracemalloc.start()
    try:
        est = MLkNN(n_neighbors=k).fit(X, Y)
        labels, _ = est.predict_topk(X[:300], k=5)
        P = est.predict(X[:300])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert labels.shape == (300, 5) and sp.issparse(P)
    # The (k + 1) x q tables and their temporaries are ~10 arrays of 6.4 MB.
    assert peak < 200 * 2**20, f"peak {peak / 2**20:.0f} MB"
