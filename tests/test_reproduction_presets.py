"""The presets resolve to the intended configurations (issue 15, point 6)."""

import pytest

from mlknn.experiments import get_preset
from mlknn.experiments._preset_model import _spec_for


def _resolved(name, datasets, tables=None):
    preset = get_preset(name)
    cfg, cols = preset.config(datasets, tables=tables)
    return {(c.label, c.reading): _spec_for(cfg, c) for c in cols}


def test_mlhiknn2025_runs_mulans_readings_of_its_mulan_columns():
    # Seed 001, section 4.1.2: DMLkNN and IBLR from MULAN, MLKNN and BRkNNa from scikit-multilearn.
    got = _resolved("mlhiknn2025", ["emotions"])
    assert got[("DMLkNN", "MULAN reading")].params_dict() == {"n_neighbors": 20, "smoothing": 1.0, "variant": "mulan"}
    assert got[("IBLR", "MULAN reading")].params_dict() == {"n_neighbors": 20, "variant": "mulan"}
    # The papers' readings stay beside them, each column on its own configuration.
    assert got[("DMLkNN", "")].params_dict() == {"n_neighbors": 20, "smoothing": 1.0}
    assert got[("IBLR", "")].params_dict() == {"n_neighbors": 20}
    assert got[("MLKNN", "scikit-multilearn reading")].name == "mlknn:skml"
    assert len({s.key() + s.name for s in got.values()}) == len(got)


def test_mlhiknn2025_mulan_readings_build_mulan_estimators():
    got = _resolved("mlhiknn2025", ["emotions"])
    for label in ("DMLkNN", "IBLR"):
        est = got[(label, "MULAN reading")].build(seed=0)
        assert est.get_params()["variant"] == "mulan" and est.n_neighbors == 20


@pytest.mark.parametrize("name, k", [("mlhiknn2025", 20), ("dmlknn2011", 10), ("bmlknn", 10)])
def test_every_column_resolves_with_the_papers_k(name, k):
    preset = get_preset(name)
    tables = preset.table_ids()
    got = _resolved(name, [preset.datasets[0]], tables=tables)
    for spec in got.values():
        assert spec.params_dict().get("n_neighbors", k) == k


def test_feature_selection_override_names_the_parameter():
    with pytest.raises(ValueError, match=r"'feature_selection' parameter must be 'preset', None"):
        get_preset("dmlknn2011").config(["enron"], feature_selection="all")
    cfg, _ = get_preset("dmlknn2011").config(["enron", "emotions"], feature_selection=None)
    assert cfg.preprocessing_for("enron").feature_selection is None


def test_mlhiknn2025_scales_by_zscore_on_every_dataset():
    # docs/reproduction.md: z-score puts every Table 3 and 15 cell within 2 sd (min-max: 14/15, 16/18).
    preset = get_preset("mlhiknn2025")
    cfg, _ = preset.config(list(preset.datasets))
    assert {cfg.preprocessing_for(d).scaling for d in preset.datasets} == {"zscore"}
    assert cfg.preprocessing_for("bibtex").feature_selection == 184
    cfg, _ = preset.config(["emotions", "bibtex"], scaling="minmax")  # --scaling still overrides it
    assert {cfg.preprocessing_for(d).scaling for d in ("emotions", "bibtex")} == {"minmax"}
