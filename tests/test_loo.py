"""Leave-one-out posteriors (mlknn.model_selection.loo_predict_proba / loo_predict_topk).

The exact path is checked against n refits (tests/reference_loo.py), on data built to
break it: integer features (many distance ties, broken by the lower index), duplicate
rows, k from 1 to n - 2, sparse labels.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from reference_loo import loop_loo_proba

from mlknn import BMLkNN, BRkNN, BRkNNa, BRkNNb, DMLkNN, MLkNN, NeighborhoodClassifier
from mlknn.model_selection import has_exact_loo, loo_predict_proba, loo_predict_topk
from mlknn.utils._topk import topk_from_dense


def _tied_data(n=36, q=5, seed=0, duplicates=True):
    """Integer-valued features (distance ties everywhere) and some duplicated rows."""
    rng = np.random.RandomState(seed)
    X = rng.randint(0, 3, size=(n, 3)).astype(np.float64)
    Y = (rng.rand(n, q) < 0.35).astype(np.uint8)
    Y[:, -1] = 0  # a label no row has
    if duplicates:
        X[5] = X[4]
        X[11] = X[4]
        Y[11] = Y[4]
    return X, Y


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # unscaled-feature warnings of the tiny integer X
        return fn(*args, **kwargs)


EXACT = [
    *(MLkNN(n_neighbors=k, variant=v, smoothing=s)
      for v in ("paper", "skmultilearn", "mulan")
      for k, s in ((1, 1.0), (4, 1.0), (4, 0.0), (34, 0.5))),
    DMLkNN(n_neighbors=1, delta=0),
    DMLkNN(n_neighbors=5, delta=1),
    DMLkNN(n_neighbors=4, delta=2, smoothing=0.0),
    DMLkNN(n_neighbors=4, variant="mulan"),
    DMLkNN(n_neighbors=34, delta=3),
    BMLkNN(radius=1.5, n_neighbors=4),
    BMLkNN(radius=1.0, n_neighbors=34, smoothing=0.0),
    BMLkNN(radius=2.0, n_neighbors=1),
    BMLkNN(radius="auto", n_neighbors=4),
    NeighborhoodClassifier(n_neighbors=3),
    NeighborhoodClassifier(radius=1.0, n_neighbors=3),
    NeighborhoodClassifier(radius=1.5, n_neighbors=10, smoothing=0.0),
    NeighborhoodClassifier(radius=10.0, n_neighbors=1),
    BRkNN(n_neighbors=3),
    BRkNN(n_neighbors=4, weights="distance"),
    BRkNNa(n_neighbors=4),
    BRkNNa(n_neighbors=34, variant="skmultilearn"),
    BRkNNb(n_neighbors=5),
]


@pytest.mark.parametrize("est", EXACT, ids=repr)
def test_exact_equals_n_refits(est):
    X, Y = _tied_data()
    assert has_exact_loo(est)
    expected = _quiet(loop_loo_proba, est, X, Y)
    got = _quiet(loo_predict_proba, est, X, Y)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    # The sparse-label path: the same numbers densified, and the same top k.
    got_sparse = _quiet(loo_predict_proba, est, X, sp.csr_matrix(Y))
    np.testing.assert_allclose(got_sparse, expected, rtol=0, atol=1e-12)
    labels, scores = _quiet(loo_predict_topk, est, X, sp.csr_matrix(Y), 3)
    ref_labels, ref_scores = topk_from_dense(got, 3)
    np.testing.assert_array_equal(labels, ref_labels)
    np.testing.assert_allclose(scores, ref_scores, rtol=0, atol=1e-12)


def test_largest_neighbourhood_without_each_row():
    from mlknn.algorithms._bmlknn import _largest_without

    rng = np.random.RandomState(1)
    D = rng.randint(0, 4, size=(25, 25))
    D = np.minimum(D, D.T)
    np.fill_diagonal(D, 99)
    inside = D <= 1  # a symmetric radius graph
    sizes = inside.sum(axis=1)
    indices = np.broadcast_to(np.arange(25), (25, 25))
    expected = [max(max(sizes[j] - inside[i, j] for j in range(25) if j != i), 0) for i in range(25)]
    np.testing.assert_array_equal(_largest_without(sizes, indices, inside), expected)


@pytest.mark.parametrize("n", [5, 6, 40, 41])
def test_median_without_each_row(n):
    # radius="auto" of the fit without row i: the median of the other rows' k-th distances,
    # those that had i among their k nearest reading their (k + 1)-th instead.
    from mlknn.algorithms._loo_counts import medians_without_each_row

    rng = np.random.RandomState(n)
    ind = np.array([rng.choice([x for x in range(n) if x != j], 3, replace=False) for j in range(n)])
    kth = rng.randint(0, 5, n).astype(np.float64)  # ties on purpose
    nxt = kth + rng.randint(0, 3, n)
    expected = []
    for i in range(n):
        values = kth.copy()
        moved = [j for j in range(n) if i in ind[j]]
        values[moved] = nxt[moved]
        expected.append(np.median(np.delete(values, i)))
    np.testing.assert_array_equal(medians_without_each_row(kth, nxt, ind), expected)


def test_exact_on_sparse_features(small_problem):
    X, Y = small_problem
    X = sp.csr_matrix(np.where(np.abs(X) > 0.8, X, 0.0))
    for est in (MLkNN(n_neighbors=5, metric="cosine"), NeighborhoodClassifier(n_neighbors=5, metric="cosine")):
        np.testing.assert_allclose(loo_predict_proba(est, X, Y), loop_loo_proba(est, X, Y), rtol=0, atol=1e-12)


def test_auto_radius_on_distinct_points(small_problem):
    X, Y = small_problem
    for est in (BMLkNN(radius="auto", n_neighbors=6), NeighborhoodClassifier(n_neighbors=6)):
        np.testing.assert_allclose(loo_predict_proba(est, X, Y), loop_loo_proba(est, X, Y), rtol=0, atol=1e-12)


def test_exact_on_distinct_points(small_problem):
    X, Y = small_problem
    est = MLkNN(n_neighbors=7)
    np.testing.assert_allclose(loo_predict_proba(est, X, Y), loop_loo_proba(est, X, Y), rtol=0, atol=1e-12)


@pytest.mark.parametrize(
    "est", [MLkNN(n_neighbors=5), BMLkNN(radius="auto", n_neighbors=5), BRkNNa(n_neighbors=5)], ids=repr,
)
def test_sparse_topk_builds_nothing_dense(est):
    # 300 rows, 20,000 labels, 3 per row: an (n, q) float64 array would be 48 MB; the
    # sparse path's peak stays far below it (numpy reports its buffers to tracemalloc).
    # (Not NC: its fitted tables are (J + 1, q), J the largest radius neighbourhood, as in fit.)
    import tracemalloc

    rng = np.random.RandomState(0)
    n, q = 300, 20_000
    X = rng.normal(size=(n, 5))
    cols = rng.randint(0, 40, size=(n, 3)) * 500 + rng.randint(0, 3, size=(n, 3))  # shared labels
    Y = sp.csr_array((np.ones(3 * n, dtype=np.uint8), (np.repeat(np.arange(n), 3), cols.ravel())), shape=(n, q))
    Y.sum_duplicates()
    Y.data[:] = 1
    _quiet(loo_predict_topk, est, X, Y, 3)  # compiled kernels loaded outside the measure
    tracemalloc.start()
    labels, scores = _quiet(loo_predict_topk, est, X, Y, 3)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < n * q * 8 / 4
    ref = topk_from_dense(_quiet(loo_predict_proba, est, X, Y), 3)
    np.testing.assert_array_equal(labels, ref[0])
    np.testing.assert_allclose(scores, ref[1], rtol=0, atol=1e-12)


def test_estimator_is_not_modified(small_problem):
    X, Y = small_problem
    est = MLkNN(n_neighbors=5)
    loo_predict_proba(est, X, Y)
    assert not hasattr(est, "prior_")


@pytest.mark.parametrize(
    "est",
    [MLkNN(hubness="ls"), DMLkNN(hubness="dsl"), BMLkNN(radius=1.0, hubness="mp"),
     BRkNN(variant="mulan"), BRkNNa(hubness="ls")],
    ids=repr,
)
def test_not_exact(est):
    assert not has_exact_loo(est)


def test_hubness_falls_back_to_cross_fitting(small_problem):
    X, Y = small_problem
    est = MLkNN(n_neighbors=5, hubness="ls")
    assert not has_exact_loo(est)
    a = loo_predict_proba(est, X, Y, random_state=0)
    b = loo_predict_proba(est, X, Y, cv=5, random_state=0)
    np.testing.assert_array_equal(a, b)


def test_unknown_labels_are_cross_fitted(small_problem):
    X, Y = small_problem
    Y = Y.astype(np.float64)
    Y[3, 1] = np.nan
    est = MLkNN(n_neighbors=5)
    np.testing.assert_array_equal(loo_predict_proba(est, X, Y, random_state=0),
                                  loo_predict_proba(est, X, Y, cv=5, random_state=0))


def test_cross_fitting_scores_each_row_by_the_model_without_it(small_problem):
    from sklearn.base import clone
    from sklearn.model_selection import KFold

    X, Y = small_problem
    est = MLkNN(n_neighbors=5)
    got = loo_predict_proba(est, X, Y, cv=4, random_state=3)
    expected = np.empty(Y.shape)
    for train, test in KFold(4, shuffle=True, random_state=3).split(X):
        expected[test] = clone(est).fit(X[train], Y[train]).predict_proba(X[test])
    np.testing.assert_array_equal(got, expected)
    labels, scores = loo_predict_topk(est, X, Y, 2, cv=4, random_state=3)
    ref = topk_from_dense(expected, 2)
    np.testing.assert_array_equal(labels, ref[0])
    np.testing.assert_array_equal(scores, ref[1])


def _fold_by_fold(est, X, Y, folds, k=None):
    from sklearn.base import clone

    out = np.empty(Y.shape) if k is None else (np.empty((len(X), k), dtype=np.int64), np.empty((len(X), k)))
    for train, test in folds:
        model = clone(est).fit(X[train], Y[train])
        if k is None:
            out[test] = model.predict_proba(X[test])
        else:
            out[0][test], out[1][test] = model.predict_topk(X[test], k=k)
    return out


@pytest.mark.parametrize(
    "est",
    [MLkNN(n_neighbors=10), MLkNN(n_neighbors=6, hubness="ls"), DMLkNN(n_neighbors=5, hubness="mp"),
     BRkNNa(n_neighbors=7, variant="mulan"), BRkNN(n_neighbors=5, hubness="dsl")],
    ids=repr,
)
def test_cross_fitting_from_one_search_equals_fold_fits(est):
    # Two folds of 30: most rows' 28 nearest overall hold >= 10 of their fold's rows, some do not
    # (searched again in the fold); integer features make the ties that the cut must keep.
    from sklearn.model_selection import KFold

    X, Y = _tied_data(n=60, q=4, seed=3)
    X = X + np.repeat(np.arange(6), 10)[:, None]  # spread the rows so that the folds' neighbourhoods differ
    folds = list(KFold(2, shuffle=True, random_state=0).split(X))
    got = _quiet(loo_predict_proba, est, X, Y, cv=2, random_state=0)
    np.testing.assert_allclose(got, _quiet(_fold_by_fold, est, X, Y, folds), rtol=0, atol=1e-12)
    labels, scores = _quiet(loo_predict_topk, est, X, sp.csr_array(Y), 2, cv=2, random_state=0)
    ref_labels, ref_scores = _quiet(_fold_by_fold, est, X, sp.csr_array(Y), folds, k=2)
    np.testing.assert_array_equal(labels, ref_labels)
    np.testing.assert_allclose(scores, ref_scores, rtol=0, atol=1e-12)


def test_cross_fitting_searches_again_where_the_cut_is_short(monkeypatch):
    # Three separated clusters, one per fold: a test row's 28 nearest rows are mostly of its own
    # cluster, so fewer than k = 10 of them lie in its fold's training part and it is searched again.
    from sklearn.model_selection import PredefinedSplit

    import mlknn.base._loo as loo_module

    X, Y = _tied_data(n=75, q=4, seed=5)
    cluster = np.repeat(np.arange(3), 25)
    X = X + 100.0 * cluster[:, None]
    cv = PredefinedSplit(cluster)
    searched = []
    search = loo_module._FoldGraphs._search

    def spy(self, rows, loo):
        searched.append(rows.size)
        return search(self, rows, loo)

    monkeypatch.setattr(loo_module._FoldGraphs, "_search", spy)
    est = MLkNN(n_neighbors=10)
    got = _quiet(loo_predict_proba, est, X, Y, cv=cv)
    assert sum(searched) >= 25
    np.testing.assert_array_equal(got, _quiet(_fold_by_fold, est, X, Y, list(cv.split())))


def test_cross_fitting_logistic_estimators(small_problem):
    from sklearn.model_selection import KFold

    from mlknn import IBLR, MLHiKNN

    X, Y = small_problem
    folds = list(KFold(3, shuffle=True, random_state=1).split(X))
    for est in (MLHiKNN(n_neighbors=5), IBLR(n_neighbors=5)):
        got = _quiet(loo_predict_proba, est, X, Y, cv=3, random_state=1)
        np.testing.assert_allclose(got, _quiet(_fold_by_fold, est, X, Y, folds), rtol=0, atol=1e-10)


def test_baseline_is_cross_fitted(small_problem):
    from mlknn.baselines import BinaryRelevance

    X, Y = small_problem
    proba = loo_predict_proba(BinaryRelevance(), X, Y, random_state=0)
    assert proba.shape == Y.shape and np.all((proba >= 0) & (proba <= 1))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"cv": 1}, "'cv' parameter"),
        ({"cv": "kfold"}, "'cv' parameter"),
        ({"cv": 500}, "'cv' parameter must be <= n_samples"),
    ],
)
def test_bad_cv(kwargs, match, small_problem):
    X, Y = small_problem
    with pytest.raises(ValueError, match=match):
        loo_predict_proba(MLkNN(n_neighbors=3, hubness="ls"), X, Y, **kwargs)


def test_bad_k_and_width(small_problem):
    X, Y = small_problem
    with pytest.raises(ValueError, match="'k' parameter of loo_predict_topk must be <= n_labels"):
        loo_predict_topk(MLkNN(n_neighbors=3), X, Y, Y.shape[1] + 1)
    with pytest.raises(ValueError, match="'k' parameter"):
        loo_predict_topk(MLkNN(n_neighbors=3), X, Y, 0)
    n = X.shape[0]
    with pytest.raises(ValueError, match=f"must be <= n_samples - 2 = {n - 2}"):
        loo_predict_proba(MLkNN(n_neighbors=n - 1), X, Y)


def test_no_predict_proba():
    from sklearn.svm import LinearSVC

    X, Y = _tied_data(duplicates=False)
    with pytest.raises(ValueError, match="must have predict_proba"):
        loo_predict_proba(LinearSVC(), X, Y[:, 0])


def test_exact_on_real_data(data_dir):
    # emotions' first 60 training rows, min-max scaled: real features, 6 labels.
    from mlknn.datasets import load

    data = load("emotions", split="train", data_home=data_dir)
    X = np.asarray(data.X)[:60]
    X = (X - X.min(axis=0)) / np.maximum(X.max(axis=0) - X.min(axis=0), 1e-12)
    Y = np.asarray(data.Y.toarray() if sp.issparse(data.Y) else data.Y)[:60]
    for est in (MLkNN(n_neighbors=10), NeighborhoodClassifier(n_neighbors=10)):
        np.testing.assert_allclose(loo_predict_proba(est, X, Y), loop_loo_proba(est, X, Y), rtol=0, atol=1e-12)
