"""Experiment files: TOML -> :class:`~mlknn.experiments.ExperimentConfig`."""

import os
from dataclasses import replace
from typing import Any

from ._config import ExperimentConfig
from ._settings import PreprocessingConfig, ProtocolConfig


def _as_tuple(value: object, what: str) -> tuple[Any, ...]:
    if value is None:
        return ()
    if isinstance(value, (list, tuple)):
        return tuple(value)
    if isinstance(value, str):
        return tuple(v.strip() for v in value.split(",") if v.strip())
    raise ValueError(f"The {what!r} entry of the config file must be a list or a comma-separated string. Got {value!r}.")


def _prep_from_dict(
    d: dict[str, Any], base: PreprocessingConfig | None = None, where: str = "preprocessing"
) -> PreprocessingConfig:
    allowed = {"scaling", "feature_selection", "min_label_count", "label_scope", "chi2_rule", "missing_labels"}
    unknown = set(d) - allowed - {"datasets"}
    if unknown:
        raise ValueError(
            f"Unknown key(s) {sorted(unknown)} in [{where}] of the config file; allowed: {sorted(allowed)}."
        )
    base = base or PreprocessingConfig()
    kw = {k: d[k] for k in allowed if k in d}
    if kw.get("feature_selection") in ("none", "None", 0):
        kw["feature_selection"] = None
    return replace(base, **kw)


def config_from_dict(d: dict[str, Any]) -> ExperimentConfig:
    """Build an :class:`ExperimentConfig` from a parsed TOML document.

    Layout::

        datasets = ["emotions", "yeast"]
        algorithms = ["mlknn", "dmlknn"]
        k = [10, 20]
        neighbors = "brute"          # optional
        metric = "euclidean"         # optional
        at_k = [1, 3, 5]             # optional: precision@k, nDCG@k, ... too
        ties = ["mulan"]             # optional: ranking measures under other tie rules too
        threshold = ["per-label"]    # optional: measures under tuned decision rules too
        conformal = ["set:0.1"]      # optional: coverage and size of conformal label sets
        calibration = true           # optional: ECE and reliability bins (implied by the two above)

        [protocol]
        name = "5x2"                 # kfold | 5x2 | holdout
        seed = 0
        stratify = false
        # n_splits, n_repeats, test_size; prequential: batch = 500, shuffle = false

        [preprocessing]
        scaling = "minmax"           # none | minmax | zscore
        feature_selection = 0.2      # fraction, count, or omit
        min_label_count = 0
        label_scope = "train"        # train | dataset
        chi2_rule = "max"            # max | mean | presence-max | presence-avg
        missing_labels = 0.3         # hide this fraction of the training label entries

        [preprocessing.datasets.enron]
        feature_selection = 0.2

        [params]                     # grid axes for every algorithm that has them
        smoothing = [1.0]
        [params.mlhiknn]             # only for one algorithm
        beta = [2, 3]

    Parameters
    ----------
    d : dict
        The parsed TOML document (``tomllib.load``).

    Returns
    -------
    ExperimentConfig
        The experiment.

    See Also
    --------
    load_config : Reads the TOML file first.

    Examples
    --------
    >>> from mlknn.experiments import config_from_dict
    >>> cfg = config_from_dict({"datasets": ["emotions"], "algorithms": ["mlknn"], "k": [10, 20],
    ...                         "protocol": {"name": "5x2", "seed": 1}})
    >>> cfg.k, cfg.protocol.n_folds(), len(cfg.specs())
    ((10, 20), 10, 2)
    """
    allowed = {"datasets", "algorithms", "k", "protocol", "preprocessing", "params", "neighbors", "metric", "at_k",
               "ties", "threshold", "conformal", "calibration"}  # fmt: skip
    unknown = set(d) - allowed
    if unknown:
        raise ValueError(f"Unknown key(s) {sorted(unknown)} in the config file; allowed: {sorted(allowed)}.")
    proto = d.get("protocol", {})
    if isinstance(proto, str):
        proto = {"name": proto}
    p_allowed = {"name", "n_splits", "n_repeats", "test_size", "stratify", "seed", "batch", "shuffle"}
    if set(proto) - p_allowed:
        raise ValueError(f"Unknown key(s) {sorted(set(proto) - p_allowed)} in [protocol]; allowed: {sorted(p_allowed)}.")
    protocol = ProtocolConfig(**proto)
    prep_d = d.get("preprocessing", {})
    prep = _prep_from_dict(prep_d)
    per_ds = tuple(
        (name, _prep_from_dict(sub, prep, f"preprocessing.datasets.{name}"))
        for name, sub in prep_d.get("datasets", {}).items()
    )
    params: list[tuple[str, str, tuple[Any, ...]]] = []
    for key, value in d.get("params", {}).items():
        if isinstance(value, dict):
            for pname, vals in value.items():
                params.append((key.lower(), pname, tuple(vals) if isinstance(vals, list) else (vals,)))
        else:
            params.append(("*", key, tuple(value) if isinstance(value, list) else (value,)))
    k = d.get("k", ())
    k = tuple(k) if isinstance(k, (list, tuple)) else (k,)
    at_k = d.get("at_k", ())
    at_k = tuple(at_k) if isinstance(at_k, (list, tuple)) else (at_k,)
    ties = d.get("ties", ())
    ties = tuple(ties) if isinstance(ties, (list, tuple)) else (ties,)
    return ExperimentConfig(
        datasets=_as_tuple(d.get("datasets"), "datasets"),
        algorithms=_as_tuple(d.get("algorithms"), "algorithms"),
        k=k,
        params=tuple(params),
        protocol=protocol,
        preprocessing=prep,
        dataset_preprocessing=per_ds,
        neighbors=d.get("neighbors", "brute"),
        metric=d.get("metric", "euclidean"),
        at_k=at_k,
        ties=ties,
        threshold=_as_tuple(d.get("threshold"), "threshold"),
        conformal=_as_tuple(d.get("conformal"), "conformal"),
        calibration=_as_bool(d.get("calibration", False), "calibration"),
    )


def _as_bool(value: Any, key: str) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"The '{key}' key of the config file must be true or false. Got {value!r} instead.")
    return value


def load_config(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a TOML experiment file (see :func:`config_from_dict`).

    Parameters
    ----------
    path : str or path-like
        The TOML file.

    Returns
    -------
    dict
        The parsed document; :func:`config_from_dict` builds the experiment.

    See Also
    --------
    config_from_dict : The layout of the file.
    run_experiment : Run the experiment.

    Examples
    --------
    >>> import os, tempfile
    >>> from mlknn.experiments import load_config
    >>> path = os.path.join(tempfile.mkdtemp(), "grid.toml")
    >>> with open(path, "w") as f:
    ...     _ = f.write('datasets = ["emotions"]\\nalgorithms = ["mlknn", "brknn"]\\nk = [10]\\n')
    >>> load_config(path)
    {'datasets': ['emotions'], 'algorithms': ['mlknn', 'brknn'], 'k': [10]}
    """
    import tomllib

    with open(path, "rb") as fh:
        try:
            doc = tomllib.load(fh)
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"The config file {str(path)!r} is not valid TOML: {exc}") from exc
    return doc
