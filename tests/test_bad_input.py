"""The bad-input matrix (issue 8): every estimator x every malformed input.

Each case either raises an error whose message names the parameter and the rule,
or gives a documented, well-defined result (finite scores in [0, 1]).
"""

import numpy as np
import pytest
import scipy.sparse as sp
from _estimator_checks import make_estimator
from sklearn.exceptions import NotFittedError

from mlknn._registry import available_estimators, get_estimator_class

ESTIMATORS = available_estimators()


make = make_estimator  # the shared small-data constructor (tests/_estimator_checks.py)


def has_param(name, param):
    return param in get_estimator_class(name)().get_params()


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 4))
    Y = (X[:, :3] + 0.3 * rng.normal(size=(40, 3)) > 0).astype(np.uint8)
    return X, Y


def check_scores(est, X):
    pred = np.asarray(est.predict(X))
    assert pred.shape[0] == X.shape[0]
    assert set(np.unique(pred)) <= {0, 1}
    if hasattr(est, "predict_proba"):
        proba = np.asarray(est.predict_proba(X))
        assert proba.shape == pred.shape
        assert np.all(np.isfinite(proba)) and proba.min() >= 0 and proba.max() <= 1


@pytest.mark.parametrize("name", ESTIMATORS)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nan_or_inf_in_X(name, data, bad):
    X, Y = data
    X = X.copy()
    X[3, 1] = bad
    with pytest.raises(ValueError, match=r"Input X contains (NaN|infinity)"):
        make(name).fit(X, Y)
    est = make(name).fit(data[0], Y)
    with pytest.raises(ValueError, match=r"Input X contains (NaN|infinity)"):
        est.predict(X)


@pytest.mark.parametrize("name", ESTIMATORS)
def test_malformed_X(name, data):
    X, Y = data
    with pytest.raises(ValueError, match=r"0 sample"):
        make(name).fit(np.empty((0, 4)), np.empty((0, 3)))
    with pytest.raises(ValueError, match=r"Expected 2D array"):
        make(name).fit(X[:, 0], Y)
    with pytest.raises(ValueError, match=r"(could not convert|dtype)"):
        make(name).fit(np.full((40, 4), "a"), Y)
    with pytest.raises(ValueError, match=r"(could not convert|dtype|float)"):
        make(name).fit(np.array([[object()] * 4] * 40), Y)


@pytest.mark.parametrize("name", ESTIMATORS)
def test_malformed_Y(name, data):
    X, Y = data
    with pytest.raises(ValueError, match=r"Y must .*only the values 0 and 1.*found the value 2"):
        make(name).fit(X, Y * 2)
    with pytest.raises(ValueError, match=r"Y must be a 2-D binary indicator"):
        make(name).fit(X, Y[:, 0])
    with pytest.raises(ValueError, match=r"39 rows but X has 40"):
        make(name).fit(X, Y[:-1])
    with pytest.raises(ValueError, match=r"requires y to be passed"):
        make(name).fit(X, None)


@pytest.mark.parametrize("name", ESTIMATORS)
def test_degenerate_labels_are_well_defined(name, data):
    X, Y = data
    Y = Y.copy()
    Y[:, 0] = 0  # never positive
    Y[:, 1] = 1  # always positive
    Y[:5] = 0  # instances with no label
    Y[:5, 1] = 0
    est = make(name).fit(X, Y)
    check_scores(est, X)
    pred = np.asarray(est.predict(X))
    assert pred[:, 0].sum() == 0, "a label never seen positive must never be predicted"
    est = make(name).fit(X, Y[:, 2:3])  # q = 1
    assert np.asarray(est.predict(X)).shape == (40, 1)
    check_scores(est, X)


@pytest.mark.parametrize("name", [n for n in ESTIMATORS if has_param(n, "n_neighbors")])
@pytest.mark.parametrize("k,match", [(0, r"'n_neighbors' parameter .* must be an int in the range \[1, inf\)"), (2.5, r"'n_neighbors' parameter"), (-1, r"'n_neighbors' parameter"), (40, r"n_neighbors' parameter of \w+ must be <= n_samples - 1 = 39")])
def test_bad_n_neighbors(name, data, k, match):
    X, Y = data
    with pytest.raises(ValueError, match=match):
        make(name, n_neighbors=k).fit(X, Y)


@pytest.mark.parametrize("name", [n for n in ESTIMATORS if has_param(n, "radius")])
@pytest.mark.parametrize("radius", [0, -1.0])
def test_bad_radius(name, data, radius):
    X, Y = data
    with pytest.raises(ValueError, match=r"'radius' parameter"):
        make(name, radius=radius).fit(X, Y)


@pytest.mark.parametrize("name", ESTIMATORS)
def test_duplicates_and_identical_instances(name, data):
    X, Y = data
    Xd = np.vstack([X[:20], X[:20]])
    Yd = np.vstack([Y[:20], Y[:20]])
    check_scores(make(name).fit(Xd, Yd), Xd)
    Xs = np.ones((30, 4))
    Ys = Y[:30]
    est = make(name).fit(Xs, Ys)
    check_scores(est, Xs)


@pytest.mark.parametrize("name", ESTIMATORS)
def test_single_training_instance(name, data):
    X, Y = data
    try:
        est = make(name).fit(X[:1], Y[:1])
    except ValueError as exc:
        assert "n_samples" in str(exc) or "at least" in str(exc) or "sample" in str(exc)
    else:
        check_scores(est, X)


@pytest.mark.parametrize("name", ESTIMATORS)
def test_predict_feature_mismatch_and_before_fit(name, data):
    X, Y = data
    with pytest.raises(NotFittedError):
        make(name).predict(X)
    est = make(name).fit(X, Y)
    with pytest.raises(ValueError, match=r"X has 3 features, but \w+ is expecting 4 features"):
        est.predict(X[:, :3])


@pytest.mark.parametrize("name", ESTIMATORS)
def test_sparse_explicit_zeros_unsorted_indices_and_float32(name, data):
    X, Y = data
    X = X * (np.abs(X) > 0.5)
    ref = make(name).fit(X, Y)
    ref_pred = np.asarray(ref.predict(X))
    A = sp.csr_matrix(X)
    # Same matrix with column indices reversed inside each row plus explicit zeros.
    rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
    order = np.lexsort((-A.indices, rows))
    data_ = np.r_[A.data[order], np.zeros(A.shape[0])]
    cols = np.r_[A.indices[order], np.zeros(A.shape[0], dtype=A.indices.dtype)]
    rows2 = np.r_[rows[order], np.arange(A.shape[0])]
    B = sp.coo_matrix((data_, (rows2, cols)), shape=A.shape).tocsr()
    B.has_canonical_format = False
    try:
        est = make(name).fit(B, Y)
    except (TypeError, ValueError) as exc:
        assert "sparse" in str(exc).lower()
        return
    np.testing.assert_array_equal(np.asarray(est.predict(B)), ref_pred)
    est32 = make(name).fit(X.astype(np.float32), Y)
    agree = (np.asarray(est32.predict(X.astype(np.float32))) == ref_pred).mean()
    assert agree >= 0.98


@pytest.mark.parametrize("name", ESTIMATORS)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_real_parameters_are_refused_or_well_defined(name, data, bad):
    # Every real-valued parameter set to NaN or +-inf is either refused with an
    # error naming the parameter and the estimator, or (where inf is documented,
    # e.g. radius=inf, fuzziness=inf, C=inf) gives finite scores in [0, 1].
    from numbers import Real

    from sklearn.utils._param_validation import Interval, InvalidParameterError

    X, Y = data
    est = make(name)
    for param, constraints in type(est)._parameter_constraints.items():
        if not any((isinstance(c, Interval) and c.type is Real) or c is Real for c in constraints):
            continue
        e = make(name, **{param: bad})
        try:
            e.fit(X, Y)
        except InvalidParameterError as exc:
            assert f"'{param}' parameter of {type(e).__name__}" in str(exc)
            continue
        P = e.predict_proba(X)
        assert np.all(np.isfinite(P)) and P.min() >= 0 and P.max() <= 1, (param, bad)
