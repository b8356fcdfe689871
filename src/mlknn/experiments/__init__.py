"""Experiment harness: protocols x preprocessing x algorithms -> results DB.

* :class:`ExperimentConfig` (with :class:`ProtocolConfig`,
  :class:`PreprocessingConfig`) describes a grid; :func:`load_config` /
  :func:`config_from_dict` read it from TOML.
* :func:`run_experiment` runs (or completes) it into a :class:`ResultsDB`
  (SQLite), searching neighbours once per fold for all kNN algorithms and k,
  and recording the warnings each cell raised (:meth:`ResultsDB.warnings`).
  A sparse (CSR) label matrix stays sparse throughout.
* :mod:`mlknn.experiments` presets (:data:`PRESETS`, :func:`reproduce`) rerun the
  papers' protocols and compare with their published tables.

See docs/experiments.md and docs/reproduction.md.
"""

from ._checks import GridConfigurationError
from ._config import ALIASES, VARIANTS, AlgorithmSpec, ExperimentConfig
from ._data import load_dataset
from ._parsing import canonical_json, parse_param_option, parse_value
from ._results import (
    CELL_COLUMNS,
    RESULT_COLUMNS,
    WARNING_COLUMNS,
    FoldMismatchError,
    ResultsDB,
)
from ._runner import count_cells, run_experiment
from ._settings import PreprocessingConfig, ProtocolConfig
from ._toml import config_from_dict, load_config

__all__ = [
    "ALIASES",
    "CELL_COLUMNS",
    "RESULT_COLUMNS",
    "VARIANTS",
    "WARNING_COLUMNS",
    "AlgorithmSpec",
    "ExperimentConfig",
    "FoldMismatchError",
    "GridConfigurationError",
    "PreprocessingConfig",
    "ProtocolConfig",
    "ResultsDB",
    "canonical_json",
    "config_from_dict",
    "count_cells",
    "load_config",
    "load_dataset",
    "parse_param_option",
    "parse_value",
    "run_experiment",
]

# The presets (public: added to __all__ below) and, for mlknn's other packages, the names
# re-exported as "X as X" outside __all__ (no public promise): the report reloads a dataset
# as the harness prepared it, and names and orders the tie variants and decision measures
# the harness stores.
from ._data import apply_prefilter as apply_prefilter
from ._decisions import is_decision_measure as is_decision_measure
from ._presets import COMPARISON_META, PRESETS, Preset, get_preset, reproduce
from ._ties import RANKING_METRICS as RANKING_METRICS
from ._ties import TIE_VARIANTS as TIE_VARIANTS
from ._ties import base_metric as base_metric
from ._ties import is_tie_variant as is_tie_variant
from ._ties import tie_rule_of as tie_rule_of

__all__ += ["COMPARISON_META", "PRESETS", "Preset", "get_preset", "reproduce"]

