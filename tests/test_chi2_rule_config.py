"""The harness's ``chi2_rule`` preprocessing setting (seed 000's enron reading, docs/reproduction.md)."""

import numpy as np
import pytest

from mlknn.experiments._settings import PreprocessingConfig
from mlknn.experiments._toml import _prep_from_dict
from mlknn.preprocessing import FoldPreprocessor, MultiLabelChi2Selector


def test_default_keeps_the_keys_of_earlier_results():
    # The results DB is keyed by this string: the new field must not change it.
    assert PreprocessingConfig().key() == (
        '{"feature_selection":null,"label_scope":"train","min_label_count":0,"scaling":"none"}'
    )
    assert "chi2_rule" not in PreprocessingConfig(feature_selection=0.2).params()


def test_a_rule_is_recorded_and_reaches_the_fold_preprocessor():
    cfg = PreprocessingConfig(feature_selection=3, chi2_rule="presence-avg")
    assert cfg.params()["chi2_rule"] == "presence-avg"
    assert cfg.key() != PreprocessingConfig(feature_selection=3).key()
    rng = np.random.default_rng(0)
    X = (rng.random((60, 12)) < 0.3).astype(float)
    Y = (rng.random((60, 4)) < 0.4).astype(int)
    pre = FoldPreprocessor(**cfg.fold_level()).fit(X, Y)
    expected = MultiLabelChi2Selector(3, rule="presence-avg").fit(X, Y).support_
    assert pre.selector_.rule == "presence-avg"
    np.testing.assert_array_equal(pre.feature_support_, expected)


def test_unknown_rule_names_the_parameter():
    with pytest.raises(ValueError, match=r"'chi2_rule' parameter must be one of .*Got 'sum'"):
        PreprocessingConfig(chi2_rule="sum")


def test_the_config_file_accepts_it():
    assert _prep_from_dict({"chi2_rule": "mean"}).chi2_rule == "mean"
