"""mlknn.decision.CalibratedProba: scikit-learn's calibrators on the out-of-sample posteriors."""

import numpy as np
import pytest
from sklearn.calibration import _SigmoidCalibration
from sklearn.isotonic import IsotonicRegression

from mlknn import MLkNN
from mlknn.datasets import make_multilabel
from mlknn.decision import CalibratedProba
from mlknn.model_selection import loo_predict_proba


@pytest.fixture(scope="module")
def data():
    return make_multilabel(n_samples=200, n_features=6, n_labels=4, random_state=2)


def test_isotonic_is_sklearns_on_the_leave_one_out_posteriors(data):
    clf = CalibratedProba(MLkNN(n_neighbors=5)).fit(data.X, data.Y)
    P_oof = loo_predict_proba(MLkNN(n_neighbors=5), data.X, data.Y)
    np.testing.assert_array_equal(clf.oof_proba_, P_oof)
    raw = MLkNN(n_neighbors=5).fit(data.X, data.Y).predict_proba(data.X[:50])
    expected = np.column_stack([
        IsotonicRegression(y_min=0, y_max=1, out_of_bounds="clip").fit(P_oof[:, j], data.Y[:, j]).predict(raw[:, j])
        for j in range(4)
    ])
    np.testing.assert_allclose(clf.predict_proba(data.X[:50]), expected, rtol=0, atol=1e-12)
    assert clf.sigmoid_coef_ is None and len(clf.calibrators_) == 4


def test_sigmoid_is_sklearns_platt_fit(data):
    clf = CalibratedProba(MLkNN(n_neighbors=5), method="sigmoid").fit(data.X, data.Y)
    raw = clf.estimator_.predict_proba(data.X[:50])
    for j in range(4):
        ref = _SigmoidCalibration().fit(clf.oof_proba_[:, j], data.Y[:, j])
        assert clf.sigmoid_coef_[j].tolist() == pytest.approx([ref.a_, ref.b_], abs=0)
        np.testing.assert_allclose(clf.predict_proba(data.X[:50])[:, j], ref.predict(raw[:, j]), rtol=0, atol=1e-12)
    assert clf.calibrators_ is None


@pytest.mark.parametrize("method", ["isotonic", "sigmoid"])
def test_a_constant_label_gives_finite_posteriors(data, method):
    Y = data.Y.copy()
    Y[:, 1] = 0
    P = CalibratedProba(MLkNN(n_neighbors=5), method=method).fit(data.X, Y).predict_proba(data.X)
    assert np.isfinite(P).all() and (P >= 0).all() and (P <= 1).all()
    assert P[:, 1].max() < 0.05


def test_predict_and_topk(data):
    clf = CalibratedProba(MLkNN(n_neighbors=5)).fit(data.X, data.Y.astype(np.int16))
    P = clf.predict_proba(data.X[:20])
    pred = clf.predict(data.X[:20])
    assert pred.dtype == np.int16
    np.testing.assert_array_equal(pred, (P > 0.5).astype(np.int16))
    labels, scores = clf.predict_topk(data.X[:20], 2)
    np.testing.assert_array_equal(labels, clf.estimator_.predict_topk(data.X[:20], 2)[0])
    np.testing.assert_array_equal(scores, np.take_along_axis(P, labels, axis=1))


def test_bad_method_is_named(data):
    with pytest.raises(ValueError, match="'method' parameter"):
        CalibratedProba(MLkNN(), method="beta").fit(data.X, data.Y)
