"""``est.explain(X)`` and ``mlknn.Explanation``: neighbours, evidence, terms, posterior.

Every explanation is checked three ways: its ``proba`` / ``decision`` against
``predict_proba`` / ``predict`` (1e-12; bit-identical for dense labels), its
neighbours against ``kneighbors`` and a loop kNN, and its posterior recomputed
here from its own terms by each paper's formula, written out independently of
the library (Zhang and Zhou (2007) for ML-kNN, BML-kNN and NC; Younes et al.
(2011) eqs 10, 13-16 for DML-kNN; the BR-kNN confidence of Spyromitros et al.
(2008); the MLHiKNN paper's eqs 5-6, 20, 25 and its logistic layer; IBLR's
logistic model), with the evidence itself recounted by a loop over the neighbours.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from reference_dmlknn import loop_dmlknn
from reference_impls import loop_knn, loop_mlknn
from reference_mlhiknn import loop_w_d, loop_w_h
from scipy.special import expit

import mlknn
from mlknn.cli._main import main
from mlknn.datasets import make_multilabel

N_TRAIN, K = 60, 5


@pytest.fixture(scope="module")
def data():
    d = make_multilabel(n_samples=90, n_features=6, n_labels=5, random_state=3)
    X = np.round(d.X, 1)  # some exact distance ties
    return X[:N_TRAIN], d.Y[:N_TRAIN], X[N_TRAIN:]


ESTIMATORS = {
    "mlknn": lambda: mlknn.MLkNN(K),
    "mlknn-skml": lambda: mlknn.MLkNN(K, variant="skmultilearn"),
    "mlknn-mulan": lambda: mlknn.MLkNN(K, variant="mulan", random_state=0),
    "mlknn-s0": lambda: mlknn.MLkNN(K, smoothing=0.0),
    "mlknn-ls": lambda: mlknn.MLkNN(K, hubness="ls"),
    "dmlknn": lambda: mlknn.DMLkNN(K, delta=1),
    "dmlknn-mulan": lambda: mlknn.DMLkNN(K, delta=6, variant="mulan"),
    "bmlknn": lambda: mlknn.BMLkNN(K),
    "nc": lambda: mlknn.NeighborhoodClassifier(n_neighbors=K),
    "brknn": lambda: mlknn.BRkNN(K),
    "brknna": lambda: mlknn.BRkNNa(K),
    "brknnb": lambda: mlknn.BRkNNb(K),
    "brknna-skml": lambda: mlknn.BRkNNa(K, variant="skmultilearn"),
    "brknn-mulan": lambda: mlknn.BRkNN(K, variant="mulan"),
    "brknna-mulan": lambda: mlknn.BRkNNa(K, variant="mulan"),
    "brknn-distance": lambda: mlknn.BRkNN(K, weights="distance"),
    "mlhiknn": lambda: mlknn.MLHiKNN(K),
    "mlhiknn-fo": lambda: mlknn.MLHiKNN(K, variant="fo"),
    "iblr": lambda: mlknn.IBLR(K, C=1.0),
    "iblr-plus": lambda: mlknn.IBLR(K, C=1.0, include_features=True),
}


def _dense(ex, name):
    """A field of an explanation as a dense (n, q) array (small data only)."""
    return np.vstack([ex.row(name, i) for i in range(ex.n_samples)])


def _fitted(name, data, sparse_y=False):
    X, Y, _ = data
    return ESTIMATORS[name]().fit(X, sp.csr_matrix(Y) if sparse_y else Y)


def _cases():
    for name in ESTIMATORS:
        yield name, False
        if ESTIMATORS[name]().knn_capabilities()["sparse_labels"]:
            yield name, True


@pytest.mark.parametrize(("name", "sparse_y"), list(_cases()))
def test_proba_decision_and_neighbours_are_the_estimators(name, sparse_y, data):
    est = _fitted(name, data, sparse_y)
    Xq = data[2]
    ex = est.explain(Xq)
    assert isinstance(ex, mlknn.Explanation)
    assert ex.sparse == sparse_y
    proba = _dense(ex, "proba") if sparse_y else ex.proba
    if sparse_y:
        np.testing.assert_allclose(proba, est.predict_proba(Xq), rtol=0, atol=1e-12)
    else:  # the same kernels: the same bits
        np.testing.assert_array_equal(proba, est.predict_proba(Xq))
    pred = est.predict(Xq)
    np.testing.assert_array_equal(_dense(ex, "decision"), pred.toarray() if sp.issparse(pred) else pred)
    dist, ind = est.kneighbors(Xq)
    np.testing.assert_array_equal(ex.indices, ind)
    np.testing.assert_array_equal(ex.distances, dist)
    np.testing.assert_array_equal(est.kneighbors(Xq, return_distance=False), ind)
    assert ex.indices.shape == (Xq.shape[0], K) and ex.n_labels == data[1].shape[1]
    if sparse_y:  # nothing (n, q) dense: every per-label field is CSR on the evidence's pattern
        assert sp.issparse(ex.evidence) and sp.issparse(ex.proba)
        for term in ex.terms.values():
            if term.axes == ("instance", "label"):
                assert sp.issparse(term.value)
                np.testing.assert_array_equal(term.value.indptr, ex.evidence.indptr)


@pytest.mark.parametrize("name", [n for n in ESTIMATORS if n not in ("brknn-mulan", "brknna-mulan", "iblr-plus", "nc")])
def test_training_set_is_explained_leave_one_out(name, data):
    """X=None: the leave-one-out rows, as kneighbors(None) and predict_proba(None) give them."""
    est = _fitted(name, data)
    ex = est.explain()
    dist, ind = est.kneighbors()
    np.testing.assert_array_equal(ex.indices, ind)
    assert not (ind == np.arange(N_TRAIN)[:, None]).any()  # each row's own point excluded
    np.testing.assert_array_equal(ex.proba, est.predict_proba(None))
    np.testing.assert_array_equal(ex.decision, est.predict(None))


def test_nc_training_set_counts_the_whole_radius_leave_one_out(data):
    """NC's radius holds more than the graph's k points: explain(None) counts them all, minus the row itself."""
    X, Y, _ = data
    est = _fitted("nc", data)
    ex = est.explain()
    d = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=2))
    inside = (d <= est.radius_) & ~np.eye(N_TRAIN, dtype=bool)
    assert (inside.sum(axis=1) > K).any()  # the case that needs the index
    np.testing.assert_array_equal(ex.terms["n_within_radius"].value, inside.sum(axis=1))
    np.testing.assert_array_equal(ex.evidence, inside.astype(int) @ Y)
    np.testing.assert_array_equal(ex.decision, (ex.proba > 0.5).astype(np.uint8))


def test_neighbours_are_the_exact_knn(data):
    X, Y, Xq = data
    est = mlknn.MLkNN(K).fit(X, Y)
    ex = est.explain(Xq)
    dist, ind = loop_knn(X, Xq, K)
    np.testing.assert_array_equal(ex.indices, ind)
    np.testing.assert_allclose(ex.distances, dist, rtol=1e-12)
    dist, ind = loop_knn(X, None, K, loo=True)
    np.testing.assert_array_equal(est.explain().indices, ind)


def _loop_counts(Y, indices):
    Y = np.asarray(Y.toarray() if sp.issparse(Y) else Y)
    return np.array([[sum(int(Y[j, l]) for j in row) for l in range(Y.shape[1])] for row in indices])


@pytest.mark.parametrize("sparse_y", [False, True])
@pytest.mark.parametrize("name", ["mlknn", "mlknn-mulan", "mlknn-skml", "mlknn-s0"])
def test_mlknn_posterior_from_its_terms(name, sparse_y, data):
    """Zhang and Zhou (2007), line 18: r = P(H1) P(E|H1) / (P(H1) P(E|H1) + P(H0) P(E|H0))."""
    X, Y, Xq = data
    est = _fitted(name, data, sparse_y)
    ex = est.explain(Xq)
    C = _dense(ex, "evidence")
    np.testing.assert_array_equal(C, _loop_counts(Y, ex.indices))
    prior = ex.terms["prior"].value
    l1, l0 = _dense(ex, "likelihood_true"), _dense(ex, "likelihood_false")
    # The looked-up likelihoods are the fitted tables at the observed counts, and
    # those tables are the loop oracle's.
    loo = loop_knn(X, None, K, loo=True)[1]
    with np.errstate(invalid="ignore"):  # smoothing=0: the oracle's 0/0 posteriors, unused here
        _, _, prior_ref, cond_true, cond_false = loop_mlknn(loo, Y, ex.indices, K, s=est.smoothing)
    if name != "mlknn-skml":  # scikit-multilearn counts each point in its own neighbourhood
        np.testing.assert_allclose(prior, prior_ref, rtol=1e-12)
        np.testing.assert_allclose(l1, cond_true[C, np.arange(C.shape[1])], rtol=1e-12)
        np.testing.assert_allclose(l0, cond_false[C, np.arange(C.shape[1])], rtol=1e-12)
    if name == "mlknn-skml":
        expected = prior * l1  # scikit-multilearn's unnormalised score
    else:
        joint1, joint0 = prior * l1, (1 - prior) * l0
        with np.errstate(invalid="ignore"):
            expected = np.where(joint1 + joint0 > 0, joint1 / (joint1 + joint0), prior)
    np.testing.assert_allclose(_dense(ex, "proba"), expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("sparse_y", [False, True])
@pytest.mark.parametrize("name", ["bmlknn", "nc"])
def test_radius_estimators_posterior_from_their_terms(name, sparse_y, data):
    """The BML-kNN paper's Tables 2-3: ML-kNN's rule over the radius-bounded counts."""
    X, Y, Xq = data
    est = _fitted(name, data, sparse_y)
    ex = est.explain(Xq)
    C = _dense(ex, "evidence")
    d = np.sqrt(((Xq[:, None, :] - X[None, :, :]) ** 2).sum(axis=2))
    inside = d <= est.radius_
    if name == "bmlknn":  # only the k nearest count (the delta-kNNs)
        inside = np.zeros_like(inside)
        np.put_along_axis(inside, ex.indices, ex.distances <= est.radius_, axis=1)
    np.testing.assert_array_equal(C, inside.astype(int) @ Y)
    np.testing.assert_array_equal(ex.terms["n_within_radius"].value, inside.sum(axis=1))
    prior = ex.terms["prior"].value
    joint1 = prior * _dense(ex, "likelihood_true")
    joint0 = (1 - prior) * _dense(ex, "likelihood_false")
    np.testing.assert_allclose(_dense(ex, "proba"), joint1 / (joint1 + joint0), rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", ["dmlknn", "dmlknn-mulan"])
def test_dmlknn_posterior_from_its_terms(name, data):
    """Younes et al. (2011): eq 16 (steps 14-15) and the posterior of eq 10 (step 17)."""
    X, Y, Xq = data
    est = _fitted(name, data)
    ex = est.explain(Xq)
    np.testing.assert_array_equal(ex.evidence, _loop_counts(Y, ex.indices))
    loo = loop_knn(X, None, K, loo=True)[1]
    posterior, _, prior_ref, v, v_prime = loop_dmlknn(loo, Y, ex.indices, K, est.delta, s=est.smoothing,
                                                      variant=est.variant)
    np.testing.assert_array_equal(ex.terms["v"].value, v)
    np.testing.assert_array_equal(ex.terms["v_prime"].value, v_prime)
    s, Q, n = est.smoothing, Y.shape[1], N_TRAIN
    u = Y.sum(axis=0)
    l1 = (s + ex.terms["v"].value) / (s * Q + u)
    l0 = (s + ex.terms["v_prime"].value) / (s * Q + (n - u))
    np.testing.assert_allclose(ex.terms["likelihood_true"].value, l1, rtol=1e-12)
    np.testing.assert_allclose(ex.terms["likelihood_false"].value, l0, rtol=1e-12)
    prior = ex.terms["prior"].value
    np.testing.assert_allclose(prior, prior_ref, rtol=1e-12)
    expected = prior * l1 / (prior * l1 + (1 - prior) * l0)
    np.testing.assert_allclose(ex.proba, expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ex.proba, posterior, rtol=0, atol=1e-12)


@pytest.mark.parametrize("sparse_y", [False, True])
@pytest.mark.parametrize("name", ["brknn", "brknna", "brknnb", "brknna-skml", "brknn-mulan", "brknn-distance"])
def test_brknn_confidence_from_its_terms(name, sparse_y, data):
    """conf_l = (count_l + 1/n) / (k + q/n) (k' with MULAN's ties; count / k for scikit-multilearn)."""
    X, Y, Xq = data
    est = _fitted(name, data, sparse_y)
    ex = est.explain(Xq)
    n, q = Y.shape
    voters = ex.terms["n_voters"].value
    fraction = _dense(ex, "vote_fraction")
    if name == "brknn-distance":
        w = ex.terms["weight"].value
        d = ex.distances
        raw = np.where(d > 0, 1 / np.where(d > 0, d, 1), 0)
        np.testing.assert_allclose(w, raw / raw.sum(axis=1, keepdims=True), rtol=1e-12)
        ref = np.einsum("ij,ijl->il", w, Y[ex.indices])
        np.testing.assert_allclose(fraction, ref, rtol=0, atol=1e-12)
    elif name != "brknn-mulan":
        np.testing.assert_array_equal(_dense(ex, "evidence"), _loop_counts(Y, ex.indices))
        np.testing.assert_allclose(fraction, _loop_counts(Y, ex.indices) / K, rtol=1e-12)
    else:  # every training instance tied with the k-th distance votes: k' >= k
        assert (voters >= K).all()
        np.testing.assert_allclose(fraction * voters[:, None], _dense(ex, "evidence"), rtol=1e-12)
    if name == "brknna-skml":
        expected = fraction
    else:
        expected = (fraction * voters[:, None] + 1 / n) / (voters[:, None] + q / n)
    np.testing.assert_allclose(_dense(ex, "proba"), expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", ["mlhiknn", "mlhiknn-fo"])
def test_mlhiknn_posterior_from_its_terms(name, data):
    """The MLHiKNN paper (Mathematics 2025): eqs 20, 25, 5-6 and the logistic layer."""
    X, Y, Xq = data
    est = _fitted(name, data)
    ex = est.explain(Xq)
    wd, wh = ex.terms["distance_weight"].value, ex.terms["hubness_weight"].value
    for i in range(ex.n_samples):
        np.testing.assert_allclose(wd[i], loop_w_d(list(ex.distances[i]), est.beta), rtol=1e-12)
        np.testing.assert_allclose(wh[i], loop_w_h([est.k_occurrence_[j] for j in ex.indices[i]], N_TRAIN),
                                   rtol=1e-12)
    w = wd * wh
    u1 = est.membership_
    R = np.einsum("ij,ijl->il", w, u1[ex.indices]) / w.sum(axis=1, keepdims=True)  # eqs 5-6
    np.testing.assert_allclose(ex.evidence, R, rtol=0, atol=1e-12)
    if name == "mlhiknn-fo":
        np.testing.assert_allclose(ex.proba, R, rtol=0, atol=1e-12)
        return
    logit = ex.evidence @ ex.terms["coef"].value.T + ex.terms["intercept"].value
    np.testing.assert_allclose(ex.terms["logit"].value, logit, rtol=0, atol=1e-12)
    const = ex.terms["constant"].value
    expected = np.where(np.isnan(const), expit(logit), const)
    np.testing.assert_allclose(ex.proba, expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", ["iblr", "iblr-plus"])
def test_iblr_posterior_from_its_terms(name, data):
    """IBLR: P(l) = logistic(b_l + sum_j w_lj count_j / k [+ the features' part])."""
    X, Y, Xq = data
    est = _fitted(name, data)
    ex = est.explain(Xq)
    np.testing.assert_allclose(ex.evidence, _loop_counts(Y, ex.indices) / K, rtol=1e-12)
    logit = ex.terms["intercept"].value + ex.evidence @ ex.terms["neighbour_coef"].value.T
    if name == "iblr-plus":
        logit = logit + ex.terms["feature_logit"].value
    const = est.constant_labels_
    logit[:, const] = np.where(est.constant_values_[const] == 1, np.inf, -np.inf)
    np.testing.assert_allclose(ex.terms["logit"].value, logit, rtol=0, atol=1e-9)
    np.testing.assert_allclose(ex.proba, expit(logit), rtol=0, atol=1e-12)


def test_constant_label_is_explained(data):
    X, Y, Xq = data
    Y = Y.copy()
    Y[:, 0] = 1
    for est in (mlknn.MLHiKNN(K), mlknn.IBLR(K, C=1.0)):
        ex = est.fit(X, Y).explain(Xq)
        assert (ex.proba[:, 0] == 1).all() and (ex.decision[:, 0] == 1).all()


def test_explain_leaves_mulans_tie_stream_alone(data):
    """BR-kNN-a's MULAN reading draws ties from a stream predict consumes; explain does not."""
    X, Y, Xq = data
    a = mlknn.BRkNNa(K, variant="mulan").fit(X, Y)
    b = mlknn.BRkNNa(K, variant="mulan").fit(X, Y)
    a.explain(Xq)
    np.testing.assert_array_equal(a.predict(Xq), b.predict(Xq))
    np.testing.assert_array_equal(a.predict(Xq), b.predict(Xq))


def test_sparse_row_is_dense_row(data):
    X, Y, Xq = data
    dense = mlknn.MLkNN(K).fit(X, Y).explain(Xq)
    sparse = mlknn.MLkNN(K).fit(X, sp.csr_array(Y)).explain(Xq)
    for name in ("evidence", "proba", "decision", "likelihood_true", "likelihood_false", "prior"):
        for i in range(3):
            np.testing.assert_array_equal(sparse.row(name, i), dense.row(name, i))


def test_summary_shows_top_labels_and_neighbours(data):
    X, Y, Xq = data
    ex = mlknn.MLkNN(K).fit(X, Y).explain(Xq)
    names = ["alpha", "beta", "gamma", "delta", "epsilon"]
    rows = ex.summary_rows(0, top=2, label_names=names)
    proba = ex.proba[0]
    decided = set(np.flatnonzero(ex.decision[0]))
    shown = [r["label"] for r in rows["labels"]]
    assert set(np.argsort(-proba, kind="stable")[:2]) | decided == set(shown)
    assert [proba[s] for s in shown] == sorted((proba[s] for s in shown), reverse=True)
    assert [r["index"] for r in rows["neighbours"]] == list(ex.indices[0])
    first = rows["neighbours"][0]
    assert first["labels"] == [names[lab] for lab in np.flatnonzero(Y[ex.indices[0, 0]])]
    text = ex.summary(0, top=2, label_names=names)
    assert "MLkNN" in text and names[shown[0]] in text and str(ex.indices[0, 0]) in text
    with pytest.raises(ValueError, match="'i' parameter"):
        ex.summary(len(Xq))
    with pytest.raises(ValueError, match="'top' parameter"):
        ex.summary(0, top=0)


def test_summary_of_per_neighbour_and_per_instance_terms(data):
    X, Y, Xq = data
    rows = mlknn.MLHiKNN(K).fit(X, Y).explain(Xq).summary_rows(1)
    assert {"distance_weight", "hubness_weight"} <= set(rows["neighbours"][0])
    rows = mlknn.BMLkNN(K).fit(X, Y).explain(Xq).summary_rows(1)
    assert "n_within_radius" in rows["instance"]


def test_to_frame(data):
    pd = pytest.importorskip("pandas")
    X, Y, Xq = data
    ex = mlknn.MLkNN(K).fit(X, Y).explain(Xq)
    frame = ex.to_frame()
    assert isinstance(frame, pd.DataFrame) and len(frame) == Xq.shape[0] * Y.shape[1]
    np.testing.assert_array_equal(frame["proba"].to_numpy().reshape(ex.proba.shape), ex.proba)
    sparse = mlknn.MLkNN(K).fit(X, sp.csr_array(Y)).explain(Xq).to_frame()
    assert len(sparse) == sparse_nnz(X, Y, Xq)


def sparse_nnz(X, Y, Xq):
    return int(np.count_nonzero(mlknn.MLkNN(K).fit(X, Y).explain(Xq).evidence))


def test_cli_explain(capsys, data_dir, monkeypatch):
    monkeypatch.setenv("MLKNN_DATA", str(data_dir))
    main(["explain", "emotions", "--row", "3", "--k", "5", "--scaling", "minmax"])
    out = capsys.readouterr().out
    assert "MLkNN" in out and "emotions, row 3" in out and "relaxing-calm" in out and "likelihood_true" in out


def test_cli_explain_bad_row_and_algorithm(capsys, data_dir, monkeypatch):
    monkeypatch.setenv("MLKNN_DATA", str(data_dir))
    with pytest.raises(SystemExit) as exc:
        main(["explain", "emotions", "--row", "5000"])
    assert exc.value.code == 1 and "'--row' option must be in [0, 592]" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["explain", "emotions", "--row", "1", "--algorithm", "br"])
    assert "kNN algorithm" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["mlknn", "dmlknn", "bmlknn", "nc", "brknn"])
def test_incomplete_labels_are_explained_as_predicted(name, data):
    """With unknown labels (NaN in Y) the explanation follows predict_proba's counting."""
    X, Y, Xq = data
    Y = Y.astype(float)
    Y[np.random.default_rng(0).random(Y.shape) < 0.2] = np.nan
    est = ESTIMATORS[name]().fit(X, Y)
    ex = est.explain(Xq)
    np.testing.assert_array_equal(ex.proba, est.predict_proba(Xq))
    np.testing.assert_array_equal(ex.decision, est.predict(Xq))
