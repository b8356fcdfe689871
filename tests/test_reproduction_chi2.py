"""The chi-square selection rules (issue 15, point 6) and the presets' module split."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.stats import chi2_contingency
from sklearn.feature_selection import chi2 as sk_chi2

from mlknn.preprocessing import (
    CHI2_RULES,
    FoldPreprocessor,
    MultiLabelChi2Selector,
    multilabel_chi2,
    presence_chi2,
)


def _loop_presence_chi2(X, Y):
    """One 2 x 2 table per (label, feature), scored by scipy without Yates' correction."""
    X = np.asarray(X) != 0
    Y = np.asarray(Y).astype(bool)
    out = np.zeros((Y.shape[1], X.shape[1]))
    for lab in range(Y.shape[1]):
        for f in range(X.shape[1]):
            table = np.array([[np.sum(X[:, f] & Y[:, lab]), np.sum(X[:, f] & ~Y[:, lab])],
                              [np.sum(~X[:, f] & Y[:, lab]), np.sum(~X[:, f] & ~Y[:, lab])]])  # fmt: skip
            if (table.sum(axis=0) == 0).any() or (table.sum(axis=1) == 0).any():
                continue  # undefined: 0
            out[lab, f] = chi2_contingency(table, correction=False)[0]
    return out


@pytest.fixture
def data():
    rng = np.random.default_rng(3)
    X = (rng.random((60, 9)) < 0.3) * rng.integers(1, 4, (60, 9))
    X[:, 4] = 0  # a feature present nowhere
    X[:, 5] = 2  # one present everywhere
    Y = (rng.random((60, 4)) < 0.35).astype(np.uint8)
    Y[:, 0] = (X[:, 0] > 0) | (rng.random(60) < 0.1)  # a label tied to feature 0
    return X.astype(float), Y


def test_presence_chi2_hand_worked():
    # A = 2 (present, label), B = 1 (present, no label), C = 0, D = 1; N = 4:
    # N (AD - CB)^2 / ((A+C)(B+D)(A+B)(C+D)) = 4 * 4 / (2 * 2 * 3 * 1) = 4/3.
    X = np.array([[5.0], [1.0], [2.0], [0.0]])
    Y = np.array([[1], [1], [0], [0]])
    assert presence_chi2(X, Y)[0, 0] == pytest.approx(4.0 / 3.0)
    # Only presence counts: any non-zero value gives the same statistic.
    assert presence_chi2(X * 7.5, Y)[0, 0] == pytest.approx(4.0 / 3.0)


def test_presence_chi2_matches_scipy_loop(data):
    X, Y = data
    np.testing.assert_allclose(presence_chi2(X, Y), _loop_presence_chi2(X, Y), rtol=1e-12, atol=1e-12)
    assert np.all(presence_chi2(X, Y)[:, [4, 5]] == 0)  # undefined counts as 0


def test_presence_chi2_sparse_equals_dense(data):
    X, Y = data
    np.testing.assert_allclose(presence_chi2(sp.csr_matrix(X), sp.csr_matrix(Y)), presence_chi2(X, Y))


def test_mass_statistic_is_sklearns_per_label(data):
    X, Y = data
    stat = multilabel_chi2(X, Y)
    for lab in range(Y.shape[1]):
        ref, _ = sk_chi2(X, Y[:, lab])
        np.testing.assert_allclose(np.nan_to_num(stat[lab]), np.nan_to_num(ref), rtol=1e-10)


@pytest.mark.parametrize("rule", CHI2_RULES)
def test_rules_score_as_their_definition(data, rule):
    X, Y = data
    mass = np.nan_to_num(multilabel_chi2(X, Y))
    pres = _loop_presence_chi2(X, Y)
    prior = Y.mean(axis=0)
    expected = {
        "max": mass.max(axis=0),
        "mean": mass.mean(axis=0),
        "presence-max": pres.max(axis=0),
        "presence-avg": prior @ pres,  # Yang and Pedersen's chi2_avg: sum_l P(l) chi2(t, l)
    }[rule]
    sel = MultiLabelChi2Selector(3, rule=rule).fit(X, Y)
    np.testing.assert_allclose(sel.scores_, expected, rtol=1e-10, atol=1e-12)
    order = sorted(range(X.shape[1]), key=lambda j: (-expected[j], j))
    assert sel.support_.tolist() == sorted(order[:3])


def test_rules_can_choose_different_features():
    # Feature 0 is tied to a rare label (max favours it), feature 1 weakly to a
    # frequent one (the prior-weighted average favours it).
    rng = np.random.default_rng(0)
    n = 400
    rare = (rng.random(n) < 0.05).astype(np.uint8)
    common = (rng.random(n) < 0.6).astype(np.uint8)
    f0 = rare.astype(float)
    f1 = np.where(rng.random(n) < 0.8, common, 1 - common).astype(float)
    X, Y = np.column_stack([f0, f1]), np.column_stack([rare, common])
    assert MultiLabelChi2Selector(1, rule="presence-max").fit(X, Y).support_.tolist() == [0]
    assert MultiLabelChi2Selector(1, rule="presence-avg").fit(X, Y).support_.tolist() == [1]


@pytest.mark.parametrize("rule", CHI2_RULES)
def test_sparse_labels_batched_equal_dense(data, rule, monkeypatch):
    import mlknn.preprocessing._chi2 as chi2_module

    X, Y = data
    monkeypatch.setattr(chi2_module, "_CHI2_LABEL_BATCH", 3)  # batches of 3 + 1 labels
    dense = MultiLabelChi2Selector(4, rule=rule).fit(X, Y)
    sparse = MultiLabelChi2Selector(4, rule=rule).fit(X, sp.csr_matrix(Y))
    np.testing.assert_allclose(sparse.scores_, dense.scores_, rtol=1e-12)
    assert sparse.support_.tolist() == dense.support_.tolist()


def test_fold_preprocessor_passes_the_rule(data):
    X, Y = data
    pre = FoldPreprocessor(feature_selection=3, chi2_rule="presence-avg").fit(X, Y)
    assert pre.selector_.rule == "presence-avg"
    assert pre.feature_support_.tolist() == MultiLabelChi2Selector(3, rule="presence-avg").fit(X, Y).support_.tolist()
    assert FoldPreprocessor(feature_selection=3).fit(X, Y).selector_.rule == "max"  # the default is unchanged


def test_unknown_rule_names_the_parameter(data):
    X, Y = data
    with pytest.raises(ValueError, match=r"'rule' parameter must be one of .*Got 'sum'"):
        MultiLabelChi2Selector(3, rule="sum").fit(X, Y)
    with pytest.raises(ValueError, match=r"'chi2_rule' parameter must be one of .*Got 'sum'"):
        FoldPreprocessor(feature_selection=3, chi2_rule="sum").fit(X, Y)
    # Also when no selection runs: the typo is reported, not ignored.
    with pytest.raises(ValueError, match=r"'chi2_rule' parameter must be one of .*Got 'bogus'"):
        FoldPreprocessor(chi2_rule="bogus").fit(X, Y)


def test_presets_split_keeps_names_importable():
    from mlknn.experiments import PRESETS, Preset, get_preset
    from mlknn.experiments._preset_table import PRESETS as table
    from mlknn.experiments._presets import STD_FLOOR, PaperColumn, write_comparison  # noqa: F401

    assert PRESETS is table
    assert set(PRESETS) == {"mlhiknn2025", "dmlknn2011", "bmlknn"}
    assert all(isinstance(p, Preset) for p in PRESETS.values())
    assert get_preset("dmlknn2011").k == 10 and STD_FLOOR == 0.0005
    assert isinstance(PRESETS["dmlknn2011"].columns[0], PaperColumn)
