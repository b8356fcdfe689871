"""partial_fit and max_samples: exactly fit on the rows seen (or on the window).

Every check compares against ``fit`` on the concatenation, which computes the
leave-one-out graph from scratch: after batches B1..Bm the fitted attributes must be
identical (integer tables, priors: ``array_equal``) and the posteriors equal.
Integer features make ties at the k-th distance and duplicate rows common, so the
tie rule (equal distance: the lower index first) is exercised on every split.
"""

import copy

import numpy as np
import pytest
import scipy.sparse as sp

from mlknn import MLkNN
from mlknn.neighbors import BruteNeighbors
from mlknn.neighbors import _incremental as incremental


def _fitted(model):
    """The public fitted attributes (trailing underscore), the index excepted."""
    return {k: v for k, v in vars(model).items() if k.endswith("_") and not k.startswith("_") and k != "nn_"}


def _same(a, b):
    if sp.issparse(a):
        return sp.issparse(b) and a.shape == b.shape and (a != b).nnz == 0
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(
            a, b, equal_nan=a.dtype.kind in "fc")
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if hasattr(a, "__dict__") and not isinstance(a, type):
        return type(a) is type(b) and _fitted(a).keys() == _fitted(b).keys() and all(
            _same(v, _fitted(b)[k]) for k, v in _fitted(a).items())
    return a == b


#: Fitted by the warm-started logistic regressions (MLHiKNN, IBLR): equal to a refit
#: within the solver's tolerance, not bit for bit.
_SOLVED = ("coef_", "intercept_", "n_iter_")


def assert_same_model(ref, model, X_query):
    fa, fb = _fitted(ref), _fitted(model)
    assert fa.keys() == fb.keys()
    for key, value in fa.items():
        if key in _SOLVED:
            continue
        assert _same(value, fb[key]), key
    if "coef_" in fa:
        _assert_solved_alike(ref, model, X_query)
        return
    np.testing.assert_allclose(model.predict_proba(X_query), ref.predict_proba(X_query), rtol=0, atol=1e-12)
    pa, pb = ref.predict(X_query), model.predict(X_query)
    assert _same(pa, pb) if sp.issparse(pa) else np.array_equal(pa, pb)


def _data(rng, n, d, q, integer=True):
    X = rng.integers(0, 3, size=(n, d)).astype(float) if integer else rng.normal(size=(n, d))
    X[rng.integers(0, n, size=n // 10)] = X[0]  # duplicate rows
    Y = (rng.random((n, q)) < 0.35).astype(np.int64)
    return X, Y


def _cuts(rng, n, first, n_cuts=4, ones=True):
    """Batch boundaries: a first batch of at least ``first`` rows, then random sizes,
    batches of one row included."""
    inner = sorted(set(rng.integers(first, n, size=n_cuts).tolist()))
    cuts = [c for c in inner if c >= first]
    if ones and cuts and cuts[-1] + 2 < n:
        cuts += [cuts[-1] + 1, cuts[-1] + 2]
    return sorted(set(cuts)) + [n]


def _stream(model, X, Y, cuts):
    start = 0
    for stop in cuts:
        model.partial_fit(X[start:stop], Y[start:stop])
        start = stop
    return model


# --------------------------------------------------------------- the neighbour lists
@pytest.mark.parametrize("metric", ["euclidean", "sqeuclidean", "cosine"])
@pytest.mark.parametrize("sparse", [False, True])
def test_append_rows_equals_loo_search(metric, sparse):
    rng = np.random.default_rng(0)
    for trial in range(12):
        n, d = int(rng.integers(6, 120)), int(rng.integers(1, 6))
        X, _ = _data(rng, n, d, 1, integer=trial % 3 != 0)
        if metric == "cosine":
            X[np.all(X == 0, axis=1), 0] = 1.0
        X = sp.csr_matrix(X) if sparse else X
        width = int(rng.integers(1, min(n - 1, 10) + 1))
        ref_sq, ref_ind = incremental.loo_state(BruteNeighbors(metric=metric).fit(X), width)
        cuts = _cuts(rng, n, width + 1)
        a = cuts[0]
        sq, ind = incremental.loo_state(BruteNeighbors(metric=metric).fit(X[:a]), min(width, a - 1))
        pad = width - sq.shape[1]
        sq = np.hstack([sq, np.full((a, pad), np.inf)])
        ind = np.hstack([ind, np.full((a, pad), incremental.PAD)])
        for b in cuts[1:]:
            sq, ind = incremental.append_rows(BruteNeighbors(metric=metric).fit(X[:b]), a, sq, ind, width)
            a = b
        np.testing.assert_array_equal(ind, ref_ind)
        np.testing.assert_array_equal(sq, ref_sq)


def test_append_rows_far_from_origin():
    """Data far from the origin (a wide rounding band for the float32 keys)."""
    rng = np.random.default_rng(3)
    X = 1e4 + rng.integers(0, 4, size=(150, 3)).astype(float)
    ref_sq, ref_ind = incremental.loo_state(BruteNeighbors().fit(X), 6)
    sq, ind = incremental.loo_state(BruteNeighbors().fit(X[:40]), 6)
    for a, b in [(40, 41), (41, 100), (100, 150)]:
        sq, ind = incremental.append_rows(BruteNeighbors().fit(X[:b]), a, sq, ind, 6)
    np.testing.assert_array_equal(ind, ref_ind)
    np.testing.assert_array_equal(sq, ref_sq)


# ---------------------------------------------------------------------- MLkNN
@pytest.mark.parametrize("variant", ["paper", "skmultilearn", "mulan"])
@pytest.mark.parametrize("sparse", [False, True])
def test_mlknn_partial_fit_equals_fit(variant, sparse):
    rng = np.random.default_rng(1)
    for trial in range(6):
        n, d, q = int(rng.integers(25, 140)), int(rng.integers(1, 6)), int(rng.integers(1, 5))
        X, Y = _data(rng, n, d, q, integer=trial % 2 == 0)
        k = int(rng.integers(1, 8))
        if sparse:
            X, Y = sp.csr_matrix(X), sp.csr_matrix(Y)
        ref = MLkNN(n_neighbors=k, variant=variant, random_state=0).fit(X, Y)
        model = _stream(MLkNN(n_neighbors=k, variant=variant, random_state=0), X, Y, _cuts(rng, n, k + 1))
        assert_same_model(ref, model, X[:15])


def test_mlknn_one_row_batches():
    rng = np.random.default_rng(2)
    X, Y = _data(rng, 40, 2, 3)
    model = _stream(MLkNN(n_neighbors=3), X, Y, list(range(4, 41)))
    assert_same_model(MLkNN(n_neighbors=3).fit(X, Y), model, X)


def test_mlknn_with_hubness_reduction():
    rng = np.random.default_rng(4)
    X, Y = _data(rng, 90, 3, 3, integer=False)
    for hubness in ("ls", "dsl"):
        ref = MLkNN(n_neighbors=4, hubness=hubness).fit(X, Y)
        model = _stream(MLkNN(n_neighbors=4, hubness=hubness), X, Y, [30, 31, 60, 90])
        assert_same_model(ref, model, X[:10])


# ---------------------------------------------------------------- the window
@pytest.mark.parametrize("sparse", [False, True])
def test_max_samples_equals_fit_on_the_window(sparse):
    rng = np.random.default_rng(5)
    for trial in range(8):
        n, d, q = int(rng.integers(30, 150)), int(rng.integers(1, 5)), int(rng.integers(1, 4))
        X, Y = _data(rng, n, d, q, integer=trial % 2 == 0)
        k = int(rng.integers(1, 6))
        window = int(rng.integers(k + 2, n))
        if sparse:
            X, Y = sp.csr_matrix(X), sp.csr_matrix(Y)
        cuts = _cuts(rng, n, k + 1, n_cuts=6)
        model = MLkNN(n_neighbors=k, max_samples=window)
        start = 0
        for stop in cuts:
            model.partial_fit(X[start:stop], Y[start:stop])
            lo = max(0, stop - window)
            assert_same_model(MLkNN(n_neighbors=k).fit(X[lo:stop], Y[lo:stop]), model, X[:8])
            start = stop


# ------------------------------------------------------------ refusals and errors
def _snapshot(model):
    return {k: copy.deepcopy(v) for k, v in vars(model).items() if k != "nn_" and not k.startswith("_stream")} | {
        "_stream_n": model._stream_.X.shape[0], "_stream_ind": model._stream_.indices.copy()}


def _assert_unchanged(before, model):
    after = _snapshot(model)
    assert before.keys() == after.keys()
    for key, value in before.items():
        if isinstance(value, np.ndarray) or sp.issparse(value):
            assert _same(value, after[key]), key
        elif key.endswith("_") or key.startswith("_stream"):
            assert _same(value, after[key]), key


@pytest.mark.parametrize(
    "bad, match",
    [
        (lambda X, Y: (X[:2, :-1], Y[:2]), "features"),
        (lambda X, Y: (X[:2], Y[:2, :-1]), "labels"),
        (lambda X, Y: (np.where(np.eye(2, X.shape[1]) > 0, np.nan, X[:2]), Y[:2]), "NaN"),
        (lambda X, Y: (X[:0], Y[:0]), "empty"),
        (lambda X, Y: (X[:2], Y[:3]), "inconsistent|rows|samples"),
        (lambda X, Y: (X[:2], 2 * Y[:2] + 1), "binary|0/1|indicator"),
    ],
)
def test_bad_batch_leaves_the_model_unchanged(bad, match):
    rng = np.random.default_rng(6)
    X, Y = _data(rng, 50, 3, 3)
    model = MLkNN(n_neighbors=3).partial_fit(X[:30], Y[:30])
    before = _snapshot(model)
    proba = model.predict_proba(X)
    with pytest.raises(ValueError, match=match):
        model.partial_fit(*bad(X, Y))
    _assert_unchanged(before, model)
    np.testing.assert_array_equal(model.predict_proba(X), proba)
    model.partial_fit(X[30:], Y[30:])  # still usable, and still exact
    assert_same_model(MLkNN(n_neighbors=3).fit(X, Y), model, X)


@pytest.mark.parametrize("sparse", [False, True])
def test_partial_fit_continues_a_fit(sparse):
    rng = np.random.default_rng(7)
    X, Y = _data(rng, 60, 2, 2)
    if sparse:
        X, Y = sp.csr_matrix(X), sp.csr_matrix(Y)
    model = MLkNN(n_neighbors=3).fit(X[:30], Y[:30])
    _stream(model, X[30:], Y[30:], [5, 6, 30])
    assert_same_model(MLkNN(n_neighbors=3).fit(X, Y), model, X)
    # fit after partial_fit starts over (and drops the kept rows); partial_fit then
    # continues that fit
    model.fit(X[:20], Y[:20])
    assert not hasattr(model, "_stream_")
    model.partial_fit(X[20:], Y[20:])
    assert_same_model(MLkNN(n_neighbors=3).fit(X, Y), model, X)


def test_partial_fit_after_a_cosine_fit_is_refused():
    X, Y = _data(np.random.default_rng(7), 30, 2, 2)
    X[:, 0] += 1.0
    model = MLkNN(n_neighbors=3, metric="cosine").fit(X, Y)
    with pytest.raises(ValueError, match="fitted with fit"):
        model.partial_fit(X[:3], Y[:3])


def test_changed_parameters_are_refused():
    rng = np.random.default_rng(8)
    X, Y = _data(rng, 30, 2, 2)
    model = MLkNN(n_neighbors=3).partial_fit(X[:20], Y[:20])
    model.set_params(n_neighbors=4)
    with pytest.raises(ValueError, match="n_neighbors"):
        model.partial_fit(X[20:], Y[20:])


@pytest.mark.parametrize("backend", ["pynndescent", "faiss-ivf", "precomputed"])
def test_backends_that_cannot_extend_are_refused(backend):
    rng = np.random.default_rng(9)
    X, Y = _data(rng, 30, 2, 2)
    with pytest.raises(ValueError, match="brute"):
        MLkNN(n_neighbors=3, neighbors=backend).partial_fit(X, Y)


def test_invalid_max_samples():
    X, Y = _data(np.random.default_rng(0), 20, 2, 2)
    with pytest.raises(ValueError, match="max_samples"):
        MLkNN(max_samples=1).partial_fit(X, Y)


@pytest.mark.parametrize("sparse", [False, True])
def test_incomplete_labels_stream_equals_fit(sparse):
    """Unknown entries (NaN, or Y_missing for a sparse Y) travel with their rows."""
    rng = np.random.default_rng(10)
    X, Y = _data(rng, 80, 3, 4)
    hidden = rng.random(Y.shape) < 0.3
    hidden[:25] = False  # the first batches complete, the later ones not
    cuts = [20, 21, 50, 80]
    if sparse:
        X, Y, M = sp.csr_matrix(X), sp.csr_matrix(Y), sp.csr_matrix(hidden.astype(np.uint8))
        ref = MLkNN(n_neighbors=4).fit(X, Y, Y_missing=M)
        model = MLkNN(n_neighbors=4)
        start = 0
        for stop in cuts:
            model.partial_fit(X[start:stop], Y[start:stop], Y_missing=M[start:stop])
            start = stop
    else:
        Yn = np.where(hidden, np.nan, Y.astype(float))
        ref = MLkNN(n_neighbors=4).fit(X, Yn)
        model = _stream(MLkNN(n_neighbors=4), X, Yn, cuts)
    assert_same_model(ref, model, X[:10])
    # a window that has dropped every unknown entry equals a fit on complete labels
    window = MLkNN(n_neighbors=4, max_samples=20)
    Yw = np.where(hidden, np.nan, np.asarray(sp.csr_matrix(Y).toarray(), dtype=float))
    Yw[60:] = np.asarray(sp.csr_matrix(Y).toarray())[60:]
    Xd = sp.csr_matrix(X).toarray()
    _stream(window, Xd, Yw, cuts)
    assert_same_model(MLkNN(n_neighbors=4).fit(Xd[60:], Yw[60:]), window, Xd[:10])


# ------------------------------------------------------------ the other estimators
def _estimators():
    from mlknn import IBLR, BMLkNN, BRkNN, BRkNNa, BRkNNb, DMLkNN, MLHiKNN, NeighborhoodClassifier

    return [
        ("dmlknn", lambda **kw: DMLkNN(n_neighbors=4, **kw)),
        ("dmlknn-mulan", lambda **kw: DMLkNN(n_neighbors=4, variant="mulan", **kw)),
        ("bmlknn", lambda **kw: BMLkNN(n_neighbors=4, radius=1.5, **kw)),
        ("bmlknn-auto", lambda **kw: BMLkNN(n_neighbors=4, radius="auto", **kw)),
        ("nc", lambda **kw: NeighborhoodClassifier(n_neighbors=3, radius=1.2, **kw)),
        ("nc-auto", lambda **kw: NeighborhoodClassifier(n_neighbors=3, **kw)),
        ("brknn", lambda **kw: BRkNN(n_neighbors=4, **kw)),
        ("brknn-mulan", lambda **kw: BRkNN(n_neighbors=4, variant="mulan", **kw)),
        ("brknn-distance", lambda **kw: BRkNN(n_neighbors=4, weights="distance", **kw)),
        ("brknna", lambda **kw: BRkNNa(n_neighbors=4, **kw)),
        ("brknnb", lambda **kw: BRkNNb(n_neighbors=4, **kw)),
        ("mlhiknn", lambda **kw: MLHiKNN(n_neighbors=4, **kw)),
        ("iblr", lambda **kw: IBLR(n_neighbors=4, **kw)),
    ]


@pytest.mark.parametrize("name, make", _estimators(), ids=[e[0] for e in _estimators()])
@pytest.mark.parametrize("sparse", [False, True])
def test_other_estimators_partial_fit_equals_fit(name, make, sparse):
    rng = np.random.default_rng(11)
    X, Y = _data(rng, 70, 3, 3)
    if sparse:
        X, Y = sp.csr_matrix(X), sp.csr_matrix(Y)
    cuts = [15, 16, 40, 41, 70]
    model = _stream(make(), X, Y, cuts)
    assert_same_model(make().fit(X, Y), model, X[:12])
    window = _stream(make(max_samples=33), X, Y, cuts)
    assert_same_model(make().fit(X[37:], Y[37:]), window, X[:12])
    continued = make().fit(X[:15], Y[:15])
    _stream(continued, X[15:], Y[15:], [1, 25, 55])
    assert_same_model(make().fit(X, Y), continued, X[:12])


def _assert_solved_alike(ref, model, X_query):
    """Both regressions stopped where the largest gradient component of the mean
    objective was <= tol (1e-8 by default), from different starts: the coefficients
    agree to about tol / (the smallest curvature), the probabilities closer still."""
    np.testing.assert_allclose(model.coef_, ref.coef_, rtol=0, atol=1e-4)
    np.testing.assert_allclose(model.intercept_, ref.intercept_, rtol=0, atol=1e-4)
    np.testing.assert_allclose(model.predict_proba(X_query), ref.predict_proba(X_query), rtol=0, atol=1e-6)
    pa, pb = ref.predict(X_query), model.predict(X_query)
    assert _same(pa, pb) if sp.issparse(pa) else np.array_equal(pa, pb)


@pytest.mark.parametrize("name", ["mlhiknn", "iblr"])
def test_warm_started_regressions_start_from_the_previous_coefficients(name):
    """The warm start is used: a batch that changes little takes fewer Newton steps
    than the refit, and the result is the refit's to the solver's tolerance."""
    from mlknn import IBLR, MLHiKNN

    rng = np.random.default_rng(12)
    X, Y = _data(rng, 400, 4, 3, integer=False)
    make = (lambda: MLHiKNN(n_neighbors=5)) if name == "mlhiknn" else (lambda: IBLR(n_neighbors=5))
    model = make().partial_fit(X[:395], Y[:395])
    from mlknn.algorithms import _logistic

    calls = []
    original = _logistic.fit_logistic_batched

    def spy(*args, **kwargs):
        out = original(*args, **kwargs)
        calls.append((kwargs.get("init") is not None, int(np.sum(out[2]))))
        return out

    import mlknn.algorithms._iblr as iblr_module
    import mlknn.algorithms._mlhiknn as mlhiknn_module

    module = mlhiknn_module if name == "mlhiknn" else iblr_module
    module.fit_logistic_batched = spy
    try:
        model.partial_fit(X[395:], Y[395:])
        ref = make().fit(X, Y)
    finally:
        module.fit_logistic_batched = original
    (warm, warm_steps), (cold, cold_steps) = calls
    assert warm and not cold
    assert warm_steps < cold_steps
    _assert_solved_alike(ref, model, X[:50])


# ------------------------------------------------------ backends, persistence, scale
@pytest.mark.parametrize("backend", ["faiss", "torch"])
def test_other_exact_backends(backend):
    pytest.importorskip(backend)
    rng = np.random.default_rng(13)
    X, Y = _data(rng, 70, 3, 3)
    model = _stream(MLkNN(n_neighbors=4, neighbors=backend), X, Y, [20, 21, 50, 70])
    assert_same_model(MLkNN(n_neighbors=4, neighbors=backend).fit(X, Y), model, X[:10])
    continued = MLkNN(n_neighbors=4, neighbors=backend).fit(X[:30], Y[:30])  # its rows read back
    _stream(continued, X[30:], Y[30:], [10, 40])
    assert_same_model(MLkNN(n_neighbors=4, neighbors=backend).fit(X, Y), continued, X[:10])


@pytest.mark.parametrize("sparse", [False, True])
def test_saved_and_pickled_models_continue(sparse, tmp_path):
    import pickle

    from mlknn.persistence import load, save

    rng = np.random.default_rng(14)
    X, Y = _data(rng, 80, 3, 3)
    if sparse:
        X, Y = sp.csr_matrix(X), sp.csr_matrix(Y)
    model = MLkNN(n_neighbors=4, max_samples=60).partial_fit(X[:40], Y[:40])
    for copy_ in (load(save(model, tmp_path / "model.npz")), pickle.loads(pickle.dumps(model))):
        copy_.partial_fit(X[40:], Y[40:])
        assert_same_model(MLkNN(n_neighbors=4).fit(X[20:], Y[20:]), copy_, X[:10])


# fit's own search overflows its float32 keys at 1e19 (by design: every pair is then a
# candidate of the exact float64 pass) and numpy says so.
@pytest.mark.filterwarnings("ignore:overflow encountered in matmul:RuntimeWarning")
@pytest.mark.parametrize("scale", [1e-22, 1e19])
def test_extreme_magnitudes(scale):
    """Keys out of float32's range or below its subnormals: every pair a candidate."""
    rng = np.random.default_rng(15)
    X, Y = _data(rng, 60, 3, 2)
    X = (X + 1.0) * scale
    model = _stream(MLkNN(n_neighbors=3), X, Y, [10, 11, 40, 60])
    assert_same_model(MLkNN(n_neighbors=3).fit(X, Y), model, X[:10])


def test_mutual_proximity():
    rng = np.random.default_rng(16)
    X, Y = _data(rng, 70, 3, 2, integer=False)
    model = _stream(MLkNN(n_neighbors=4, hubness="mp"), X, Y, [30, 31, 70])
    assert_same_model(MLkNN(n_neighbors=4, hubness="mp").fit(X, Y), model, X[:10])


def test_tiny_windows():
    """Windows of k + 1 to k + 3 rows: every list holds (almost) every other row."""
    from mlknn import DMLkNN

    rng = np.random.default_rng(21)
    for _ in range(8):
        k = int(rng.integers(1, 5))
        n = int(rng.integers(k + 3, 40))
        X, Y = _data(rng, n, int(rng.integers(1, 3)), 2)
        window = int(rng.integers(k + 1, k + 4))
        cuts = [c for c in sorted(set(rng.integers(k + 1, n, size=5).tolist())) if c >= k + 1] + [n]
        for make in (lambda **kw: MLkNN(n_neighbors=k, variant="skmultilearn", **kw),
                     lambda **kw: DMLkNN(n_neighbors=k, **kw)):
            model, start = make(max_samples=window), 0
            for stop in cuts:
                model.partial_fit(X[start:stop], Y[start:stop])
                lo = max(0, stop - window)
                assert_same_model(make().fit(X[lo:stop], Y[lo:stop]), model, X[:5])
                start = stop


def test_a_wholly_unlabelled_batch():
    """A batch whose every label is unknown (fit on the concatenation takes it)."""
    rng = np.random.default_rng(17)
    X, Y = _data(rng, 50, 3, 3)
    Yn = Y.astype(float)
    Yn[40:] = np.nan
    model = _stream(MLkNN(n_neighbors=4), X, Yn, [30, 40, 41, 50])
    assert_same_model(MLkNN(n_neighbors=4).fit(X, Yn), model, X[:10])
