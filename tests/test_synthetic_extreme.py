"""make_extreme_multilabel (issue 12 point 4): determinism, the power-law label
frequencies, about five labels per row, CSR labels, and neighbours that share
labels (ML-kNN's P@1 far above the label-frequency baseline)."""

import numpy as np
import pytest
import scipy.sparse as sp

from mlknn import MLkNN
from mlknn.datasets._synthetic import make_extreme_multilabel
from mlknn.metrics import precision_at_k


def test_shapes_and_types():
    d = make_extreme_multilabel(1500, n_features=24, n_labels=400, random_state=3)
    assert d.X.shape == (1500, 24) and d.X.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(d.X, axis=1), 1.0, rtol=1e-5)
    assert isinstance(d.Y, sp.csr_array) and d.Y.dtype == np.uint8 and d.Y.shape == (1500, 400)
    assert d.Y.has_sorted_indices and (d.Y.data == 1).all()
    Yc = d.Y.copy()
    Yc.sum_duplicates()
    assert Yc.nnz == d.Y.nnz  # no duplicate (row, label)
    assert d.topic.shape == (1500,) and d.label_topic.shape == (400,)
    assert d.label_weight.sum() == pytest.approx(1.0)


def test_deterministic():
    a = make_extreme_multilabel(800, n_features=16, n_labels=300, random_state=7)
    b = make_extreme_multilabel(800, n_features=16, n_labels=300, random_state=7)
    c = make_extreme_multilabel(800, n_features=16, n_labels=300, random_state=8)
    assert a.X.tobytes() == b.X.tobytes()
    assert (a.Y != b.Y).nnz == 0
    assert a.X.tobytes() != c.X.tobytes()
    g = make_extreme_multilabel(800, n_features=16, n_labels=300, random_state=np.random.default_rng(7))
    assert g.X.tobytes() == a.X.tobytes()


def test_about_five_labels_per_row():
    d = make_extreme_multilabel(4000, n_features=8, n_labels=2000, random_state=0)
    per_row = np.diff(d.Y.indptr)
    assert 4.0 <= per_row.mean() <= 5.5
    assert per_row.min() >= 1


def test_power_law_frequencies():
    n, q = 10_000, 5000
    d = make_extreme_multilabel(n, n_features=8, n_labels=q, random_state=0)
    counts = np.sort(np.bincount(d.Y.indices, minlength=q))[::-1]
    # A few very frequent labels ...
    assert counts[0] > 0.05 * n
    assert counts[: q // 100].sum() > 0.25 * counts.sum()
    # ... and most labels with a handful of examples.
    assert np.median(counts) <= 5
    assert (counts <= 10).mean() > 0.6
    # The rank-frequency curve of the head is close to the Zipf exponent 1.
    ranks = np.arange(1, 101)
    slope = np.polyfit(np.log(ranks), np.log(counts[:100]), 1)[0]
    assert -1.4 < slope < -0.6
    steeper = make_extreme_multilabel(n, n_features=8, n_labels=q, power=1.5, random_state=0)
    c2 = np.sort(np.bincount(steeper.Y.indices, minlength=q))[::-1]
    assert np.polyfit(np.log(ranks), np.log(c2[:100]), 1)[0] < slope


def test_neighbours_share_labels():
    d = make_extreme_multilabel(3500, n_features=32, n_labels=600, random_state=1)
    Xtr, Xte, Ytr, Yte = d.X[:3000], d.X[3000:], d.Y[:3000], d.Y[3000:]
    labels, scores = MLkNN(n_neighbors=10).fit(Xtr, Ytr).predict_topk(Xte, k=5)
    p1 = precision_at_k(Yte, (labels, scores), k=1)
    top = np.bincount(Ytr.indices, minlength=600).argmax()
    baseline = precision_at_k(Yte, (np.full((500, 1), top), np.ones((500, 1))), k=1)
    assert p1 > 2 * baseline and p1 > 0.6, (p1, baseline)


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"n_samples": 0}, "n_samples must be an int >= 1"),
        ({"n_labels": 2.5}, "n_labels must be an int"),
        ({"n_topics": 0}, r"n_topics must be an int in \[1, n_labels"),
        ({"labels_per_row": 0.5}, "labels_per_row must be a finite number >= 1"),
        ({"power": 0}, "power must be a finite number > 0"),
        ({"head_fraction": 1.5}, r"head_fraction must be a finite number in \[0, 1\]"),
        ({"noise": float("nan")}, "noise must be a finite number"),
    ],
)
def test_validation(kw, match):
    args = {"n_samples": 100, "n_features": 4, "n_labels": 50, **kw}
    with pytest.raises(ValueError, match=match):
        make_extreme_multilabel(**args)


def test_unit_rows_in_blocks_equal_one_draw():
    """The label directions and topic centres are drawn in row blocks (bounded memory at
    q = 10^6); the numbers must be those of one draw of the whole array, normalised."""
    from mlknn.datasets._synthetic import _unit_rows

    m, d = 700, 1 << 14  # 256 rows a block: three blocks, the last one partial
    got = _unit_rows(np.random.default_rng(4), m, d)
    ref = np.random.default_rng(4).standard_normal((m, d)).astype(np.float32)
    ref /= np.linalg.norm(ref, axis=1, keepdims=True)
    assert got.dtype == np.float32 and got.tobytes() == ref.tobytes()
