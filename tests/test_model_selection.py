"""Protocols (mlknn.model_selection) and fold preprocessing (mlknn.preprocessing)."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.feature_selection import chi2

from mlknn.model_selection import (
    RepeatedHoldout,
    RepeatedMultilabelKFold,
    decode_indices,
    encode_indices,
    make_protocol,
)
from mlknn.preprocessing import (
    FeatureScaler,
    FoldPreprocessor,
    MultiLabelChi2Selector,
    RareLabelFilter,
    multilabel_chi2,
)


@pytest.fixture
def ml_data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 5))
    Y = (rng.random((60, 4)) < [0.5, 0.3, 0.2, 0.1]).astype(np.uint8)
    return X, Y


# ------------------------------------------------------------------ protocols
@pytest.mark.parametrize("name, n_splits, n_repeats", [("kfold", 10, 5), ("5x2", 2, 5)])
def test_kfold_protocols_partition_every_repeat(ml_data, name, n_splits, n_repeats):
    X, Y = ml_data
    cv = make_protocol(name, random_state=0)
    folds = list(cv.split(X, Y))
    assert cv.get_n_splits() == len(folds) == n_splits * n_repeats
    for r in range(n_repeats):
        rf = [f for f in folds if f.repeat == r]
        assert [f.fold for f in rf] == list(range(n_splits))
        tests = np.concatenate([f.test for f in rf])
        assert np.array_equal(np.sort(tests), np.arange(60))  # each point tested once per repeat
        for f in rf:
            assert np.intersect1d(f.train, f.test).size == 0
            assert f.train.size + f.test.size == 60
            assert np.all(np.diff(f.test) > 0)


def test_holdout_protocol(ml_data):
    X, Y = ml_data
    cv = make_protocol("holdout", random_state=3)
    folds = list(cv.split(X, Y))
    assert len(folds) == 10 and {f.fold for f in folds} == {0}
    assert [f.repeat for f in folds] == list(range(10))
    assert all(f.test.size == 12 and f.train.size == 48 for f in folds)
    assert len({tuple(f.test) for f in folds}) == 10  # different splits


@pytest.mark.parametrize("stratify", [False, True])
@pytest.mark.parametrize("cls", [RepeatedMultilabelKFold, RepeatedHoldout])
def test_protocols_are_seeded_and_prefix_stable(ml_data, cls, stratify):
    X, Y = ml_data
    a = list(cls(n_repeats=3, stratify=stratify, random_state=7).split(X, Y))
    b = list(cls(n_repeats=3, stratify=stratify, random_state=7).split(X, Y))
    c = list(cls(n_repeats=2, stratify=stratify, random_state=7).split(X, Y))
    d = list(cls(n_repeats=3, stratify=stratify, random_state=8).split(X, Y))
    assert all(np.array_equal(f.test, g.test) for f, g in zip(a, b))
    # fewer repetitions = a prefix of more (quick runs extend to full ones)
    assert all(np.array_equal(f.test, g.test) and f.repeat == g.repeat for f, g in zip(c, a))
    assert not all(np.array_equal(f.test, g.test) for f, g in zip(a, d))


def test_stratified_kfold_spreads_every_label():
    rng = np.random.default_rng(1)
    Y = np.zeros((200, 3), dtype=np.uint8)
    Y[rng.choice(200, 20, replace=False), 0] = 1  # a rare label
    Y[:, 1] = rng.random(200) < 0.5
    Y[:, 2] = rng.random(200) < 0.2
    X = np.zeros((200, 1))
    for f in RepeatedMultilabelKFold(n_splits=5, n_repeats=1, stratify=True, random_state=0).split(X, Y):
        # 20 positives over 5 folds: iterative stratification gives 4 per test fold
        assert Y[f.test, 0].sum() == 4


def test_protocol_errors_name_parameter_and_value(ml_data):
    X, Y = ml_data
    with pytest.raises(ValueError, match="'protocol'.*'bogus'"):
        make_protocol("bogus")
    with pytest.raises(ValueError, match="'n_splits'.*>= 2.*1"):
        list(RepeatedMultilabelKFold(n_splits=1).split(X, Y))
    with pytest.raises(ValueError, match="'n_splits'.*<= n_samples = 60.*61"):
        list(RepeatedMultilabelKFold(n_splits=61).split(X, Y))
    with pytest.raises(ValueError, match="'test_size'.*\\(0, 1\\).*1.5"):
        list(RepeatedHoldout(test_size=1.5).split(X, Y))
    with pytest.raises(ValueError, match="'n_splits'.*holdout"):
        make_protocol("holdout", n_splits=3)
    with pytest.raises(ValueError, match="'random_state'.*-1"):
        list(RepeatedHoldout(random_state=-1).split(X, Y))


def test_encode_decode_indices_roundtrip():
    rng = np.random.default_rng(0)
    for n in (1, 7, 8, 9, 1000, 120919):
        idx = np.sort(rng.choice(n, size=max(1, n // 3), replace=False))
        blob = encode_indices(idx, n)
        assert np.array_equal(decode_indices(blob, n), idx)
    # compact: 120919 rows fit in a few kB
    assert len(encode_indices(np.arange(0, 120919, 2), 120919)) < 2000


# --------------------------------------------------------------- preprocessing
def test_multilabel_chi2_matches_sklearn_per_label_dense_and_sparse():
    rng = np.random.default_rng(0)
    X = rng.poisson(1.0, size=(80, 9)).astype(float)
    X[:, 3] = 0  # an all-zero feature: undefined statistic
    Y = (rng.random((80, 4)) < 0.4).astype(np.uint8)
    S = multilabel_chi2(X, Y)
    expected = np.vstack([chi2(X, Y[:, l])[0] for l in range(4)])
    np.testing.assert_allclose(S, expected, equal_nan=True)
    np.testing.assert_allclose(multilabel_chi2(sp.csr_matrix(X), Y), expected, equal_nan=True)


def test_chi2_selector_keeps_max_over_labels():
    rng = np.random.default_rng(0)
    Y = (rng.random((100, 2)) < 0.5).astype(np.uint8)
    noise = rng.random((100, 6))
    X = np.column_stack([noise, Y[:, 0] * 3.0, Y[:, 1] * 3.0])  # 6 and 7 are informative, one label each
    sel = MultiLabelChi2Selector(2).fit(X, Y)
    assert sel.support_.tolist() == [6, 7]
    assert sel.transform(X).shape == (100, 2)
    frac = MultiLabelChi2Selector(0.2).fit(X, Y)  # ceil(0.2 * 8) = 2
    assert frac.support_.tolist() == [6, 7]
    # negative features are shifted for scoring only
    neg = MultiLabelChi2Selector(2).fit(X - 10.0, Y)
    assert neg.support_.tolist() == [6, 7]
    with pytest.raises(ValueError, match="'feature_selection'.*1.5"):
        MultiLabelChi2Selector(1.5).fit(X, Y)
    with pytest.raises(ValueError, match="'feature_selection'.*0"):
        MultiLabelChi2Selector(0).fit(X, Y)


def test_feature_scaler_dense_and_sparse():
    X = np.array([[0.0, 10.0], [5.0, 20.0], [10.0, 30.0]])
    np.testing.assert_allclose(FeatureScaler("minmax").fit_transform(X), [[0, 0], [0.5, 0.5], [1, 1]])
    Z = FeatureScaler("zscore").fit_transform(X)
    np.testing.assert_allclose(Z.mean(axis=0), 0, atol=1e-12)
    S = FeatureScaler("minmax").fit_transform(sp.csr_matrix(X))
    assert sp.issparse(S)  # max-abs keeps sparsity
    np.testing.assert_allclose(S.toarray(), X / X.max(axis=0))
    assert FeatureScaler("none").fit_transform(X) is X
    with pytest.raises(ValueError, match="'scaling'.*'unit'"):
        FeatureScaler("unit").fit(X)


def test_rare_label_filter():
    Y = np.array([[1, 0, 1], [1, 0, 0], [1, 1, 0]])
    f = RareLabelFilter(2).fit(Y)
    assert f.support_.tolist() == [0]
    assert f.transform(Y).shape == (3, 1)
    assert RareLabelFilter(0).fit(Y).support_.tolist() == [0, 1, 2]
    with pytest.raises(ValueError, match="removes every label"):
        RareLabelFilter(5).fit(Y)
    with pytest.raises(ValueError, match="'min_label_count'.*-1"):
        RareLabelFilter(-1).fit(Y)


def test_fold_preprocessor_is_fitted_on_the_training_part_only():
    rng = np.random.default_rng(0)
    X_tr = rng.random((50, 6))
    Y_tr = (rng.random((50, 3)) < [0.5, 0.4, 0.02]).astype(np.uint8)
    X_te = rng.random((10, 6)) * 100  # wildly different test data must not change the fit
    pre = FoldPreprocessor("minmax", 0.5, 3).fit(X_tr, Y_tr)
    pre2 = FoldPreprocessor("minmax", 0.5, 3).fit(X_tr, Y_tr)
    a, _ = pre.transform(X_te, Y_tr[:10])
    np.testing.assert_array_equal(a, pre2.transform(X_te))
    Xt, Yt = pre.transform(X_tr, Y_tr)
    assert Xt.shape == (50, 3) and Xt.min() >= 0 and Xt.max() <= 1 + 1e-12
    assert pre.label_support_.tolist() == [0, 1] and Yt.shape == (50, 2)
    assert pre.info_ == {"n_features": 3, "n_labels": 2}
