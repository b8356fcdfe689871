"""``validate_features``' shortcut for plain float arrays (issue 16: small problems'
bookkeeping) against the same function with the shortcut off (scikit-learn's
``validate_data`` behind mlknn's error wrapping), on the cases it takes and the
cases it must leave to the full check."""

import warnings

import numpy as np
import pytest

import mlknn.utils._validation as val
from mlknn import MLkNN


class Probe:
    """A bare estimator for validate_data (it only sets and reads attributes)."""

    def __sklearn_tags__(self):
        from sklearn.utils import Tags, TargetTags

        return Tags(estimator_type=None, target_tags=TargetTags(required=False))


def outcome(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = fn()
        except Exception as exc:  # noqa: BLE001 - the outcome itself is compared
            return ("error", type(exc), str(exc)), [str(w.message) for w in caught]
    return ("ok", out.dtype, out.shape), [str(w.message) for w in caught]


rng = np.random.default_rng(0)
CASES = {
    "float64": rng.standard_normal((7, 3)),
    "float32": rng.standard_normal((7, 3)).astype(np.float32),
    "fortran": np.asfortranarray(rng.standard_normal((7, 3))),
    "strided view": rng.standard_normal((14, 6))[::2, ::2],
    "nan": np.array([[1.0, np.nan], [0.0, 1.0]]),
    "inf": np.array([[1.0, np.inf], [0.0, 1.0]]),
    "overflowing sum": np.full((3, 2), np.finfo(np.float64).max),
    "int": np.arange(6).reshape(3, 2),
    "no rows": np.empty((0, 3)),
    "no columns": np.empty((3, 0)),
    "1-d": np.arange(3.0),
    "matrix subclass": np.asmatrix(np.eye(3)),
}


def without_shortcut(fn, monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(val, "_plain_valid_array", lambda *a: False)
        return fn()


@pytest.mark.parametrize("name", list(CASES))
def test_fit_side_agrees_with_the_full_check(name, monkeypatch):
    X = CASES[name]
    ours, theirs = Probe(), Probe()
    got = outcome(lambda: val.validate_features(ours, X))
    want = without_shortcut(lambda: outcome(lambda: val.validate_features(theirs, X)), monkeypatch)
    assert got[0][:3] == want[0][:3] and got[1] == want[1]
    assert getattr(ours, "n_features_in_", None) == getattr(theirs, "n_features_in_", None)


@pytest.mark.parametrize("width", [3, 4])
def test_predict_side_checks_the_number_of_features(width, monkeypatch):
    fitted = MLkNN(n_neighbors=2).fit(rng.standard_normal((8, 3)), rng.integers(0, 2, (8, 2)))
    X = rng.standard_normal((4, width))
    got = outcome(lambda: val.validate_features(fitted, X, reset=False))
    want = without_shortcut(lambda: outcome(lambda: val.validate_features(fitted, X, reset=False)), monkeypatch)
    assert got[0][:3] == want[0][:3] and got[1] == want[1]
    if width == 4:
        assert got[0][0] == "error" and "4 features" in got[0][2]


def test_names_from_a_dataframe_fit_still_warn_and_are_dropped_on_refit():
    # The names a DataFrame fit leaves (set directly: pandas is not a dependency).
    est = MLkNN(n_neighbors=2).fit(rng.standard_normal((8, 3)), rng.integers(0, 2, (8, 2)))
    est.feature_names_in_ = np.array(["a", "b", "c"], dtype=object)
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        est.predict(rng.standard_normal((2, 3)))
    est.fit(rng.standard_normal((8, 3)), rng.integers(0, 2, (8, 2)))
    assert not hasattr(est, "feature_names_in_")


def test_the_shortcut_is_taken_for_plain_arrays(monkeypatch):
    import sklearn.utils.validation as skv

    calls = []
    real = skv.validate_data
    monkeypatch.setattr(skv, "validate_data", lambda *a, **k: calls.append(1) or real(*a, **k))
    val.validate_features(Probe(), CASES["float64"])
    assert calls == []
    with pytest.raises(ValueError, match="NaN"):
        val.validate_features(Probe(), CASES["nan"])
    assert calls == [1]  # the full check raised the error
