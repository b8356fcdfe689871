"""Label-based accuracy, the review's F of means, and seed 000's label contingency matrix."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import UndefinedMetricWarning

from mlknn.metrics import (
    evaluate,
    example_f1,
    example_f_of_means,
    example_precision,
    example_recall,
    hamming_loss,
    label_contingency,
    macro_accuracy,
    micro_accuracy,
)

YT = np.array([[1, 0, 1], [0, 1, 0], [1, 1, 0], [0, 0, 0]])
YP = np.array([[1, 0, 0], [0, 1, 1], [1, 0, 0], [0, 0, 0]])


def test_label_accuracy_hand_worked():
    # Per label (TP + TN) / 4: label 0: 4/4, label 1: 3/4 (row 2 missed), label 2: 2/4
    # (row 0 missed, row 1 false): macro (1 + 3/4 + 1/2) / 3 = 3/4; micro 9/12.
    assert macro_accuracy(YT, YP) == pytest.approx(0.75, abs=1e-15)
    assert micro_accuracy(YT, YP) == pytest.approx(0.75, abs=1e-15)
    assert macro_accuracy(YT, YP) == pytest.approx(1 - hamming_loss(YT, YP), abs=1e-15)


def test_label_accuracy_loop_reference():
    rng = np.random.default_rng(0)
    Yt = (rng.random((30, 7)) < 0.3).astype(int)
    Yp = (rng.random((30, 7)) < 0.3).astype(int)
    per_label = []
    correct = total = 0
    for j in range(7):
        c = sum(1 for i in range(30) if Yt[i, j] == Yp[i, j])
        per_label.append(c / 30)
        correct += c
        total += 30
    assert macro_accuracy(Yt, Yp) == pytest.approx(sum(per_label) / 7, abs=1e-15)
    assert micro_accuracy(sp.csr_matrix(Yt), sp.csr_matrix(Yp)) == pytest.approx(correct / total, abs=1e-15)
    res = evaluate(Yt, Yp, rng.random((30, 7)))
    assert res["macro_accuracy"] == macro_accuracy(Yt, Yp) and res["micro_accuracy"] == micro_accuracy(Yt, Yp)


def test_f_of_means_hand_worked():
    # Per instance (P, R): (1, 1/2), (1/2, 1), (1, 1/2), empty/empty -> (1, 1).
    # Means P = 7/8, R = 3/4: harmonic 2 * 7/8 * 3/4 / (7/8 + 3/4) = 21/26.
    assert example_precision(YT, YP) == pytest.approx(7 / 8)
    assert example_recall(YT, YP) == pytest.approx(3 / 4)
    assert example_f_of_means(YT, YP) == pytest.approx(21 / 26, abs=1e-15)
    # beta = 2: 5 P R / (4 P + R) = 5 * 21/32 / (7/2 + 3/4) = 105/136.
    assert example_f_of_means(YT, YP, beta=2.0) == pytest.approx(105 / 136, abs=1e-15)
    # Different from the mean of per-instance F: (2/3 + 2/3 + 2/3 + 1) / 4 = 3/4.
    assert example_f1(YT, YP) == pytest.approx(0.75)


def test_f_of_means_exceeds_the_mean_of_f():
    # P, R = (1, 0) on one instance (nothing right but nothing wrong predicted: empty
    # prediction of a non-empty truth gives P = 0 by MULAN's rule) ... use explicit sets:
    Yt = np.array([[1, 1], [1, 0]])
    Yp = np.array([[1, 0], [1, 1]])  # (P, R) = (1, 1/2) and (1/2, 1)
    assert example_f_of_means(Yt, Yp) == pytest.approx(0.75)
    assert example_f1(Yt, Yp) == pytest.approx(2 / 3)
    assert example_f_of_means(np.array([[1, 0]]), np.array([[0, 1]])) == 0.0  # P = R = 0
    with pytest.raises(ValueError, match="beta must be a positive"):
        example_f_of_means(Yt, Yp, beta=0)


def test_label_contingency_hand_worked():
    Y = np.array([[1, 1, 0], [1, 0, 0], [0, 1, 1], [1, 1, 0]])
    mat = label_contingency(Y)
    # Frequencies 3/4, 3/4, 1/4 on the diagonal; mat[q, r] = |q and r| / |r|:
    # labels 0 and 1 together in rows 0, 3: 2/3 both ways; 1 and 2 in row 2: mat[1, 2] = 1,
    # mat[2, 1] = 1/3; 0 and 2 never: 0.
    want = np.array([[3 / 4, 2 / 3, 0.0], [2 / 3, 3 / 4, 1.0], [0.0, 1 / 3, 1 / 4]])
    np.testing.assert_allclose(mat, want, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(label_contingency(sp.csr_matrix(Y)), mat)


def test_label_contingency_loop_reference_and_absent_label():
    rng = np.random.default_rng(1)
    Y = (rng.random((40, 5)) < 0.4).astype(int)
    Y[:, 3] = 0
    with pytest.warns(UndefinedMetricWarning, match=r"label\(s\) \[3\] never occur"):
        mat = label_contingency(Y)
    for q in range(5):
        for r in range(5):
            if q == r:
                assert mat[q, q] == pytest.approx(Y[:, q].mean(), abs=1e-15)
            elif Y[:, r].sum() == 0:
                assert np.isnan(mat[q, r])
            else:
                both = sum(1 for i in range(40) if Y[i, q] and Y[i, r])
                assert mat[q, r] == pytest.approx(both / Y[:, r].sum(), abs=1e-15)
