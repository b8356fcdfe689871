"""Experiment configuration: frozen dataclasses, grid expansion, TOML loading.

An experiment is datasets x algorithm configurations x (repeat, fold) of one
protocol, with one preprocessing per dataset. An algorithm configuration is a
registry name (:mod:`mlknn._registry`) plus explicit parameters; the grid
over ``k`` (``n_neighbors``) and over ``params`` is expanded by
:meth:`ExperimentConfig.specs`.
"""

import itertools
import json
import math
from dataclasses import dataclass, field, replace
from numbers import Integral, Real

from ..model_selection import make_protocol

#: Harness aliases ``"name:alias"``: the registry estimator ``name`` with these
#: fixed parameters. The readings of other libraries are estimator parameters
#: (``variant=``, see docs/experiments.md); the aliases keep the names that
#: existing grids, presets and results databases use (a cell's ``algorithm``
#: column stays ``mlknn:skml``, its ``params`` column holds only the grid's
#: parameters, so a database written before resumes unchanged).
ALIASES = {
    ("mlknn", "skml"): {"variant": "skmultilearn"},
    ("brknna", "skml"): {"variant": "skmultilearn"},
}

#: What each alias computes (the estimators' docstrings give the details).
VARIANTS = {
    ("mlknn", "skml"): (
        "MLkNN(variant='skmultilearn'): ML-kNN as scikit-multilearn's MLkNN (default "
        "ignore_first_neighbours=0) computes it: each training instance counts itself among "
        "its k neighbours when the likelihoods are estimated, and predict_proba returns the "
        "unnormalised prior x likelihood P(H1) P(E|H1) instead of the posterior. With hubness= "
        "the training neighbourhoods are the reduced leave-one-out graph (no self-counting): the "
        "reading that matches seed 001's MLKNN-dsl/-ls/-mp columns (docs/reproduction.md)"
    ),
    ("brknna", "skml"): (
        "BRkNNa(variant='skmultilearn'): BRkNN-a read as scikit-multilearn's BRkNNaClassifier "
        "behaves: plain BR-kNN, i.e. no empty-set correction"
    ),
}


def canonical_json(obj):
    """Deterministic JSON (sorted keys, no spaces) used as a key in the results DB.

    Parameters
    ----------
    obj : object
        JSON-serialisable value (dicts, lists, numbers, strings, None; NaN and
        infinities allowed).

    Returns
    -------
    str
        The JSON text.

    See Also
    --------
    ResultsDB : Stores cells under such keys.

    Examples
    --------
    >>> from mlknn.experiments import canonical_json
    >>> canonical_json({"k": 10, "algorithm": "mlknn", "smoothing": [1.0, None]})
    '{"algorithm":"mlknn","k":10,"smoothing":[1.0,null]}'
    """
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=True)


def split_variant(name):
    """``"mlknn:skml"`` -> ``("mlknn", "skml")``; ``"mlknn"`` -> ``("mlknn", None)``."""
    base, _, variant = str(name).lower().partition(":")
    return base, (variant or None)


@dataclass(frozen=True)
class ProtocolConfig:
    """Which splitter, with which seed (see :func:`mlknn.model_selection.make_protocol`).

    Parameters
    ----------
    name : {"kfold", "5x2", "holdout"}, default="5x2"
        The protocol.
    n_splits, n_repeats : int, default=None
        Override the protocol's folds and repetitions.
    test_size : float, default=None
        Override the hold-out test fraction.
    stratify : bool, default=False
        Iterative stratification on the labels.
    seed : int, default=0
        Seed of the whole protocol.
    """

    name: str = "5x2"
    n_splits: int | None = None
    n_repeats: int | None = None
    test_size: float | None = None
    stratify: bool = False
    seed: int = 0

    def splitter(self):
        """The splitter of this protocol.

        Returns
        -------
        RepeatedMultilabelKFold or RepeatedHoldout
            From :func:`mlknn.model_selection.make_protocol`.
        """
        return make_protocol(
            self.name,
            n_splits=self.n_splits,
            n_repeats=self.n_repeats,
            test_size=self.test_size,
            stratify=self.stratify,
            random_state=self.seed,
        )

    def params(self):
        """The protocol's name and its splitter's parameters.

        Returns
        -------
        dict
            ``protocol`` and the splitter's :meth:`params`.
        """
        return {"protocol": self.name, **self.splitter().params()}

    def key(self):
        """Identity of the folds in the results DB. ``n_repeats`` is left out: the
        first r repetitions are the same whatever the number of repetitions, so
        a run with more repetitions completes one with fewer.

        Returns
        -------
        str
            Canonical JSON of :meth:`params` without ``n_repeats``.
        """
        p = self.params()
        p.pop("n_repeats", None)
        return canonical_json(p)

    def n_folds(self):
        """Number of train/test splits (repetitions times folds).

        Returns
        -------
        int
            The splitter's ``get_n_splits()``.
        """
        return self.splitter().get_n_splits()


_SCALINGS = ("none", "minmax", "zscore")
_SCOPES = ("train", "dataset")


@dataclass(frozen=True)
class PreprocessingConfig:
    """Preprocessing of one dataset.

    Parameters
    ----------
    scaling : {"none", "minmax", "zscore"}
        Fitted on each training part (sparse-safe, see
        :class:`mlknn.preprocessing.FeatureScaler`).
    feature_selection : float, int or None
        Chi-square selection fitted on each training part: a fraction in (0, 1]
        or a number of features; None keeps all.
    min_label_count : int
        Remove labels with fewer positive instances (0: keep all).
    label_scope : {"train", "dataset"}
        ``train``: labels are counted on each training part (nothing from the
        test part is used). ``dataset``: counted once on the whole dataset, and
        instances left without any label are dropped before splitting - what
        seed 001's Table 1 shows (enron 35 labels, corel5k 153 labels and 4985
        instances).
    """

    scaling: str = "none"
    feature_selection: float | int | None = None
    min_label_count: int = 0
    label_scope: str = "train"

    def __post_init__(self):
        if self.scaling not in _SCALINGS:
            raise ValueError(f"The 'scaling' parameter must be one of {_SCALINGS}. Got {self.scaling!r} instead.")
        fs = self.feature_selection
        if fs is not None:
            if isinstance(fs, bool) or not isinstance(fs, (Integral, Real)):
                raise ValueError(
                    "The 'feature_selection' parameter must be None, a float in (0, 1] or an int >= 1. "
                    f"Got {fs!r} instead."
                )
            if isinstance(fs, Integral) and fs < 1 or (not isinstance(fs, Integral) and not 0 < fs <= 1):
                raise ValueError(
                    "The 'feature_selection' parameter must be None, a float in (0, 1] or an int >= 1. "
                    f"Got {fs!r} instead."
                )
        m = self.min_label_count
        if isinstance(m, bool) or not isinstance(m, Integral) or m < 0:
            raise ValueError(f"The 'min_label_count' parameter must be an int >= 0. Got {m!r} instead.")
        if self.label_scope not in _SCOPES:
            raise ValueError(
                f"The 'label_scope' parameter must be one of {_SCOPES}. Got {self.label_scope!r} instead."
            )

    def params(self):
        """The preprocessing as a dict (what the results record).

        Returns
        -------
        dict
            ``scaling``, ``feature_selection``, ``min_label_count``, ``label_scope``.
        """
        return {
            "scaling": self.scaling,
            "feature_selection": self.feature_selection,
            "min_label_count": int(self.min_label_count),
            "label_scope": self.label_scope,
        }

    def key(self):
        """The preprocessing as canonical JSON (the ``preprocessing`` column of the results).

        Returns
        -------
        str
            :func:`canonical_json` of :meth:`params`.
        """
        return canonical_json(self.params())

    def dataset_level(self):
        """The part applied to the whole dataset before splitting (None if nothing).

        Returns
        -------
        dict or None
            ``min_label_count`` and ``drop_unlabelled`` when labels are filtered on
            the whole dataset (``label_scope="dataset"``), else None.
        """
        if self.label_scope == "dataset" and self.min_label_count > 0:
            return {"min_label_count": int(self.min_label_count), "drop_unlabelled": True}
        return None

    def fold_level(self):
        """Keyword arguments of :class:`mlknn.preprocessing.FoldPreprocessor`.

        Returns
        -------
        dict
            ``scaling``, ``feature_selection`` and ``min_label_count``.
        """
        return {
            "scaling": self.scaling,
            "feature_selection": self.feature_selection,
            "min_label_count": int(self.min_label_count) if self.label_scope == "train" else 0,
        }


@dataclass(frozen=True)
class AlgorithmSpec:
    """One algorithm configuration: registry name (optionally ``:variant``) and
    its explicit parameters as a sorted tuple of (name, value).

    Parameters
    ----------
    name : str
        Registry name, optionally with a harness variant (``"mlknn:skml"``).
    params : tuple of (str, object), default=()
        The explicit constructor parameters, sorted by name.
    """

    name: str
    params: tuple = ()

    @property
    def base(self):
        return split_variant(self.name)[0]

    @property
    def variant(self):
        return split_variant(self.name)[1]

    def params_dict(self):
        """The grid's parameters (what the ``params`` column of the results records).

        Returns
        -------
        dict
            Parameter name to value.
        """
        return dict(self.params)

    def estimator_params(self):
        """The constructor parameters: the grid's, plus those fixed by an alias (:data:`ALIASES`).

        Returns
        -------
        dict
            Parameter name to value, passed to the estimator's constructor.
        """
        return {**self.params_dict(), **ALIASES.get((self.base, self.variant), {})}

    def key(self):
        """The parameters as canonical JSON (the ``params`` column of the results).

        Returns
        -------
        str
            :func:`canonical_json` of :meth:`params_dict`.
        """
        return canonical_json(self.params_dict())

    def label(self, hide=()):
        """A short readable name, e.g. ``"mlknn(k=10, smoothing=1.0)"``.

        Parameters
        ----------
        hide : iterable of str, default=()
            Parameters left out of the label.

        Returns
        -------
        str
            The name alone when no parameter is shown.
        """
        shown = [(k, v) for k, v in self.params if k not in hide]
        if not shown:
            return self.name
        return f"{self.name}(" + ", ".join(f"{'k' if k == 'n_neighbors' else k}={_fmt(v)}" for k, v in shown) + ")"


def _fmt(v):
    if isinstance(v, float) and math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return str(v)


def parse_value(text):
    """A command-line value: int, float (``inf`` too), bool, None or str.

    Parameters
    ----------
    text : str
        One value as typed on the command line.

    Returns
    -------
    int, float, bool, None or str
        The first reading that fits, in the order None, bool, inf, int, float, str.

    See Also
    --------
    parse_param_option : Parses a whole ``--param`` option.

    Examples
    --------
    >>> from mlknn.experiments import parse_value
    >>> [parse_value(t) for t in ["10", "0.5", "inf", "true", "none", "brute"]]
    [10, 0.5, inf, True, None, 'brute']
    """
    t = str(text).strip()
    low = t.lower()
    if low in ("none", "null"):
        return None
    if low in ("true", "false"):
        return low == "true"
    if low in ("inf", "+inf", "infinity"):
        return math.inf
    if low in ("-inf", "-infinity"):
        return -math.inf
    try:
        return int(t)
    except ValueError:
        pass
    try:
        return float(t)
    except ValueError:
        return t


def parse_param_option(text):
    """``"name=v1,v2"`` or ``"algorithm.name=v1,v2"`` -> (scope, name, values).

    Parameters
    ----------
    text : str
        The option's value, ``"name=v1,v2"`` (every algorithm with the parameter)
        or ``"algorithm.name=v1,v2"`` (one algorithm).

    Returns
    -------
    scope : str
        ``"*"`` or the algorithm name, lower-cased.
    name : str
        The parameter.
    values : tuple
        The values, each read by :func:`parse_value`.

    See Also
    --------
    parse_value : Reads each value.
    ExperimentConfig : Its ``params`` holds these triples.

    Examples
    --------
    >>> from mlknn.experiments import parse_param_option
    >>> parse_param_option("mlknn.smoothing=0.5,1")
    ('mlknn', 'smoothing', (0.5, 1))
    >>> parse_param_option("radius=inf")
    ('*', 'radius', (inf,))
    """
    if "=" not in text:
        raise ValueError(
            f"The '--param' option must look like name=v1,v2 or algorithm.name=v1,v2. Got {text!r} instead."
        )
    lhs, rhs = text.split("=", 1)
    lhs = lhs.strip()
    scope, name = ("*", lhs)
    if "." in lhs:
        scope, name = lhs.split(".", 1)
    values = tuple(parse_value(v) for v in rhs.split(",") if v.strip() != "")
    if not name or not values:
        raise ValueError(f"The '--param' option {text!r} names no parameter or no value.")
    return scope.lower(), name, values


def _coerce(value, default):
    # An int given for a float parameter is stored as float, so that 3 and 3.0
    # are the same cell.
    if isinstance(default, float) and isinstance(value, Integral) and not isinstance(value, bool):
        return float(value)
    return value


@dataclass(frozen=True)
class ExperimentConfig:
    """A full experiment.

    Parameters
    ----------
    datasets : tuple of str
        Names in ``$MLKNN_DATA`` (or paths to ARFF files, or ``simulated2d``).
    algorithms : tuple of str
        Registry names, optionally with a harness variant (``mlknn:skml``).
    k : tuple of int
        Values of ``n_neighbors`` for every algorithm that has it (empty: the
        estimator default).
    params : tuple of (scope, name, values)
        Extra grid axes; scope ``"*"`` applies to every algorithm that has the
        parameter, otherwise to the named algorithm only.
    protocol : ProtocolConfig
    preprocessing : PreprocessingConfig
        Default preprocessing.
    dataset_preprocessing : tuple of (dataset, PreprocessingConfig)
        Per-dataset overrides (e.g. chi-square selection on text sets only).
    neighbors, metric : str
        Backend and distance of the shared neighbour search.
    explicit : tuple of AlgorithmSpec
        Configurations added as they are, outside the grid (the reproduction
        presets list the papers' columns this way).
    at_k : tuple of int
        Also record the extreme-classification measures ``precision@k``,
        ``recall@k``, ``ndcg@k``, ``psprecision@k`` and ``psndcg@k`` (inverse
        propensities of the training part, A = 0.55, B = 1.5) for these k. A
        cell with sparse labels too large for dense scores records them (default
        1, 3, 5) from ``predict_topk`` instead of the dense measures. Cells
        already in a database are not recomputed when ``at_k`` changes.
    """

    datasets: tuple
    algorithms: tuple
    k: tuple = ()
    params: tuple = ()
    protocol: ProtocolConfig = field(default_factory=ProtocolConfig)
    preprocessing: PreprocessingConfig = field(default_factory=PreprocessingConfig)
    dataset_preprocessing: tuple = ()
    neighbors: str = "brute"
    metric: str = "euclidean"
    explicit: tuple = ()
    at_k: tuple = ()

    def __post_init__(self):
        if not self.datasets:
            raise ValueError("The 'datasets' parameter must name at least one dataset. Got none.")
        if not self.algorithms and not self.explicit:
            raise ValueError("The 'algorithms' parameter must name at least one algorithm. Got none.")
        for k in self.k:
            if isinstance(k, bool) or not isinstance(k, Integral) or k < 1:
                raise ValueError(f"The 'k' parameter must be a list of ints >= 1. Got {k!r} instead.")
        for k in self.at_k:
            if isinstance(k, bool) or not isinstance(k, Integral) or k < 1:
                raise ValueError(f"The 'at_k' parameter must be a list of ints >= 1. Got {k!r} instead.")
        for name in tuple(self.algorithms) + tuple(s.name for s in self.explicit):
            base, variant = split_variant(name)
            if variant is not None and (base, variant) not in ALIASES:
                known = ", ".join(f"{b}:{v}" for b, v in ALIASES)
                raise ValueError(
                    f"Unknown algorithm variant {name!r}. Known variants: {known}."
                )

    def preprocessing_for(self, dataset):
        """The preprocessing of one dataset (its override, else the default).

        Parameters
        ----------
        dataset : str
            The dataset name.

        Returns
        -------
        PreprocessingConfig
            The preprocessing to apply.
        """
        for name, prep in self.dataset_preprocessing:
            if name == dataset:
                return prep
        return self.preprocessing

    def search(self):
        """The shared neighbour search.

        Returns
        -------
        dict
            ``neighbors`` and ``metric``.
        """
        return {"neighbors": self.neighbors, "metric": self.metric}

    def search_key(self):
        """The shared neighbour search as canonical JSON (recorded with each cell).

        Returns
        -------
        str
            :func:`canonical_json` of :meth:`search`.
        """
        return canonical_json(self.search())

    def specs(self):
        """Expand the grid into :class:`AlgorithmSpec` objects (deterministic order).

        Returns
        -------
        list of AlgorithmSpec
            The grid's configurations, then the explicit ones, without duplicates.
        """
        specs = []
        used = set()
        for name in self.algorithms:
            base = split_variant(name)[0]
            defaults = _defaults(name)
            axes = {}
            if self.k and "n_neighbors" in defaults:
                axes["n_neighbors"] = tuple(int(k) for k in self.k)
            fixed = ALIASES.get(split_variant(name), {})
            for scope, pname, values in self.params:
                if scope not in ("*", name.lower(), base):
                    continue
                if pname in fixed:
                    if scope == "*":
                        continue  # the alias fixes it
                    raise ValueError(
                        f"The algorithm {name!r} fixes {pname}={fixed[pname]!r}; to vary {pname!r} use "
                        f"{base!r} with --param {base}.{pname}=..."
                    )
                if pname not in defaults:
                    if scope == "*":
                        continue
                    raise ValueError(
                        f"Unknown parameter {pname!r} for algorithm {name!r}; its parameters are: "
                        f"{', '.join(sorted(defaults))}."
                    )
                used.add((scope, pname))
                axes[pname] = tuple(_coerce(v, defaults[pname]) for v in values)
            keys = sorted(axes)
            for combo in itertools.product(*(axes[k] for k in keys)):
                specs.append(AlgorithmSpec(name.lower(), tuple(zip(keys, combo))))
        for scope, pname, _ in self.params:
            if scope == "*" and ("*", pname) not in used:
                raise ValueError(
                    f"The parameter {pname!r} (--param {pname}=...) is not a parameter of any of the "
                    f"algorithms {', '.join(self.algorithms)}."
                )
            if scope != "*" and scope not in {split_variant(a)[0] for a in self.algorithms} | {
                a.lower() for a in self.algorithms
            }:
                raise ValueError(
                    f"The parameter {scope}.{pname} names algorithm {scope!r}, which is not in the "
                    f"experiment ({', '.join(self.algorithms)})."
                )
        for spec in self.explicit:
            defaults = _defaults(spec.name)
            fixed = ALIASES.get(split_variant(spec.name), {})
            unknown = [k for k, _ in spec.params if k not in defaults or k in fixed]
            if unknown:
                raise ValueError(
                    f"Unknown parameter(s) {unknown} for algorithm {spec.name!r}; its parameters are: "
                    f"{', '.join(sorted(defaults))}."
                )
            specs.append(AlgorithmSpec(spec.name.lower(), tuple(sorted((k, _coerce(v, defaults[k])) for k, v in spec.params))))
        seen, unique = set(), []
        for s in specs:
            if (s.name, s.params) not in seen:
                seen.add((s.name, s.params))
                unique.append(s)
        return unique

    def with_overrides(self, **changes):
        """A copy with some settings changed: the one way to merge overrides
        (command-line options over a TOML file, a preset over its defaults).

        A key that is absent keeps this config's value; a key that is given
        sets it (None included, where the setting allows None).

        Parameters
        ----------
        **changes
            * fields of this class (``datasets``, ``algorithms``, ``k``,
              ``params``, ``protocol``, ``preprocessing``,
              ``dataset_preprocessing``, ``neighbors``, ``metric``, ``explicit``,
              ``at_k``): replaced. ``protocol`` may also be a protocol name: the
              protocol's own ``n_splits``, ``n_repeats`` and ``test_size`` then
              fall back to that protocol's defaults unless given too.
            * ``add_params``: grid axes appended to ``params``, each a
              ``(scope, name, values)`` tuple or a ``"name=v1,v2"`` /
              ``"algorithm.name=v1,v2"`` string (:func:`parse_param_option`).
            * fields of :class:`ProtocolConfig` (``n_splits``, ``n_repeats``,
              ``test_size``, ``stratify``, ``seed``): set in the protocol.
            * fields of :class:`PreprocessingConfig` (``scaling``,
              ``feature_selection``, ``min_label_count``, ``label_scope``): set
              in the default preprocessing and in every per-dataset one.
              ``feature_selection`` None, 0 or ``"none"`` disables the selection;
              a string is parsed as on the command line (``"0.2"``, ``"184"``).

        Returns
        -------
        ExperimentConfig
            Validated, protocol included (an error names the setting).

        Examples
        --------
        >>> cfg = ExperimentConfig(datasets=("emotions",), algorithms=("mlknn",), k=(10,))
        >>> new = cfg.with_overrides(k=(5, 10), protocol="holdout", n_repeats=3, scaling="minmax",
        ...                          add_params=("smoothing=0.5,1",))
        >>> new.k, new.protocol.n_folds(), new.preprocessing.scaling, len(new.specs())
        ((5, 10), 3, 'minmax', 4)
        """
        changes = dict(changes)
        unknown = set(changes) - _OVERRIDABLE
        if unknown:
            raise ValueError(
                f"Unknown setting(s) {sorted(unknown)} for ExperimentConfig.with_overrides; "
                f"known: {sorted(_OVERRIDABLE)}."
            )
        fields = {k: changes.pop(k) for k in list(changes) if k in _CONFIG_FIELDS and k != "protocol"}
        fields["protocol"] = _protocol_override(self.protocol, changes)
        if "add_params" in changes:
            extra = tuple(parse_param_option(p) if isinstance(p, str) else tuple(p) for p in changes.pop("add_params"))
            fields["params"] = tuple(fields.get("params", self.params)) + extra
        prep = {k: changes.pop(k) for k in list(changes) if k in _PREP_FIELDS}
        if isinstance(prep.get("feature_selection"), str):  # a command-line value: "0.2", "184", "none"
            prep["feature_selection"] = parse_value(prep["feature_selection"])
        if "feature_selection" in prep and prep["feature_selection"] in (0, "none"):
            prep["feature_selection"] = None
        if prep:
            fields["preprocessing"] = replace(fields.get("preprocessing", self.preprocessing), **prep)
            fields["dataset_preprocessing"] = tuple(
                (d, replace(p, **prep)) for d, p in fields.get("dataset_preprocessing", self.dataset_preprocessing)
            )
        for key in ("datasets", "algorithms", "k", "at_k", "params", "explicit", "dataset_preprocessing"):
            if key in fields:
                fields[key] = tuple(fields[key])
        new = replace(self, **fields)
        new.protocol.n_folds()  # validate the splitter now: its error names the setting
        return new


def _protocol_override(current, changes):
    """The protocol of :meth:`ExperimentConfig.with_overrides`; pops its keys from ``changes``."""
    protocol = changes.pop("protocol", current)
    own = {k: changes.pop(k) for k in list(changes) if k in _PROTOCOL_FIELDS}
    if isinstance(protocol, str):  # a name: its own defaults, this config's stratify and seed
        protocol = replace(current, name=protocol, n_splits=None, n_repeats=None, test_size=None)
    return replace(protocol, **own)


_CONFIG_FIELDS = {
    "datasets", "algorithms", "k", "params", "protocol", "preprocessing", "dataset_preprocessing",
    "neighbors", "metric", "explicit", "at_k",
}  # fmt: skip
_PROTOCOL_FIELDS = {"n_splits", "n_repeats", "test_size", "stratify", "seed"}
_PREP_FIELDS = {"scaling", "feature_selection", "min_label_count", "label_scope"}
_OVERRIDABLE = _CONFIG_FIELDS | _PROTOCOL_FIELDS | _PREP_FIELDS | {"add_params"}


def _defaults(name):
    """get_params() of the registry class behind an algorithm name (aliases included)."""
    from .._registry import get_estimator_class

    base = split_variant(name)[0]
    try:
        cls = get_estimator_class(base)
    except (ImportError, AttributeError) as exc:
        raise ValueError(
            f"The algorithm {name!r} is registered but its module does not import here "
            f"({type(exc).__name__}: {exc})."
        ) from exc
    return cls().get_params()


# The TOML reader lives in its own module (it imports this one); importable from here as
# before, so the import comes last.
from ._toml import config_from_dict, load_config  # noqa: E402, F401  (re-exported)
