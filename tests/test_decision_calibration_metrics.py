"""Calibration measures of mlknn.metrics against scikit-learn, label by label."""

import numpy as np
import pytest
from sklearn.calibration import calibration_curve
from sklearn.metrics import brier_score_loss
from sklearn.metrics import log_loss as sk_log_loss

from mlknn.metrics import brier_score, calibration_bins, expected_calibration_error, log_loss


@pytest.fixture(scope="module")
def scores():
    rng = np.random.default_rng(0)
    Y = (rng.random((300, 6)) < 0.3).astype(np.uint8)
    P = np.clip(0.4 * Y + 0.6 * rng.random(Y.shape), 0, 1)
    P[:5, 0] = [0.0, 1.0, 0.1, 0.5, 0.9]  # the extremes and inner bin edges
    P[:, 5] = P[:, 5].round(1)  # many scores exactly on bin edges
    return Y, P


def test_brier_score_per_label_is_sklearns(scores):
    Y, P = scores
    expected = [brier_score_loss(Y[:, j], P[:, j]) for j in range(Y.shape[1])]
    np.testing.assert_allclose(brier_score(Y, P, average=None), expected, rtol=1e-12)
    assert brier_score(Y, P) == pytest.approx(np.mean(expected), rel=1e-12)
    assert brier_score(Y, P, average="micro") == pytest.approx(brier_score_loss(Y.ravel(), P.ravel()), rel=1e-12)


def test_log_loss_per_label_is_sklearns(scores):
    Y, P = scores
    expected = [sk_log_loss(Y[:, j], P[:, j], labels=[0, 1]) for j in range(Y.shape[1])]
    np.testing.assert_allclose(log_loss(Y, P, average=None), expected, rtol=1e-12)
    assert log_loss(Y, P) == pytest.approx(np.mean(expected), rel=1e-12)
    assert log_loss(Y, P, average="micro") == pytest.approx(sk_log_loss(Y.ravel(), P.ravel()), rel=1e-12)


def test_log_loss_of_a_confident_mistake_is_finite():
    value = log_loss([[1, 0]], [[0.0, 1.0]])
    assert np.isfinite(value) and value > 30


def _reference_ece(y, p, n_bins):
    """ECE from scikit-learn's calibration_curve and a loop over the bins for their counts."""
    prob_true, prob_pred = calibration_curve(y, p, n_bins=n_bins, strategy="uniform")
    edges = np.linspace(0, 1, n_bins + 1)
    counts = []
    for b in range(n_bins):
        inside = (p > edges[b]) & (p <= edges[b + 1]) if b else (p <= edges[1])
        if inside.any():
            counts.append(inside.sum())
    counts = np.array(counts)
    return float(np.sum(counts * np.abs(prob_true - prob_pred)) / len(y))


@pytest.mark.parametrize("n_bins", [1, 5, 10])
def test_ece_per_label_uses_sklearns_bins(scores, n_bins):
    Y, P = scores
    expected = [_reference_ece(Y[:, j], P[:, j], n_bins) for j in range(Y.shape[1])]
    np.testing.assert_allclose(expected_calibration_error(Y, P, n_bins=n_bins, average=None), expected,
                               rtol=1e-12, atol=1e-15)
    assert expected_calibration_error(Y, P, n_bins=n_bins) == pytest.approx(np.mean(expected), rel=1e-12)
    micro = expected_calibration_error(Y, P, n_bins=n_bins, average="micro")
    assert micro == pytest.approx(_reference_ece(Y.ravel(), P.ravel(), n_bins), rel=1e-12)


def test_ece_by_hand():
    # Bin [0, 0.5]: posteriors 0.1, 0.4 (mean 0.25), relevant 0 of 2: gap 0.25.
    # Bin (0.5, 1]: posteriors 0.9, 0.6 (mean 0.75), relevant 2 of 2: gap 0.25.
    assert expected_calibration_error([[1], [0], [1], [0]], [[0.9], [0.1], [0.6], [0.4]], n_bins=2) == 0.25


def test_calibration_bins_pooled_and_per_label(scores):
    Y, P = scores
    count, mean_p, frac = calibration_bins(Y, P, n_bins=4)
    assert count.shape == (6, 4) and (count.sum(axis=1) == 300).all()
    pooled = calibration_bins(Y, P, n_bins=4, pooled=True)
    np.testing.assert_array_equal(pooled[0][0], count.sum(axis=0))


@pytest.mark.parametrize("func", [brier_score, log_loss, expected_calibration_error])
def test_bad_input_is_named(func):
    with pytest.raises(ValueError, match="'average' parameter"):
        func([[1, 0]], [[0.5, 0.5]], average="weighted")
    with pytest.raises(ValueError, match=r"Y_prob must hold probabilities in \[0, 1\]; got 1.5"):
        func([[1, 0]], [[1.5, 0.5]])
    with pytest.raises(ValueError, match="same shape"):
        func([[1, 0]], [[0.5]])


def test_bad_bins_are_named():
    with pytest.raises(ValueError, match="'n_bins' parameter"):
        expected_calibration_error([[1]], [[0.5]], n_bins=0)


def test_reliability_display_draws_the_bins(scores):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from mlknn.plots import ReliabilityDisplay

    Y, P = scores
    d = ReliabilityDisplay.from_predictions(Y, P, labels=[0, 5], label_names=list("abcdef"), n_bins=5).plot()
    assert list(d.curves) == ["pooled", "a", "f"]
    count, mean_p, frac = calibration_bins(Y[:, [5]], P[:, [5]], n_bins=5)
    keep = count[0] > 0
    np.testing.assert_array_equal(d.curves["f"][0], mean_p[0, keep])
    np.testing.assert_array_equal(d.curves["f"][1], frac[0, keep])
    assert d.ece["pooled"] == expected_calibration_error(Y, P, n_bins=5, average="micro")
    assert len(d.ax_.lines) == 4  # the diagonal and three curves
    empty = ReliabilityDisplay.from_predictions(np.zeros((0, 2)), np.zeros((0, 2))).plot()
    assert empty.curves == {}
    plt.close("all")
