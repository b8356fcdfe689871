"""Experiment configuration: frozen dataclasses, grid expansion, TOML loading.

An experiment is datasets x algorithm configurations x (repeat, fold) of one
protocol, with one preprocessing per dataset. An algorithm configuration is a
registry name (:mod:`mlknn._registry`) plus explicit parameters; the grid
over ``k`` (``n_neighbors``) and over ``params`` is expanded by
:meth:`ExperimentConfig.specs`.
"""

import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from numbers import Integral
from typing import TYPE_CHECKING, Any, TypeAlias

from ._parsing import _coerce, _fmt, canonical_json, parse_param_option, parse_value
from ._settings import PreprocessingConfig, ProtocolConfig

if TYPE_CHECKING:
    from ._decisions import DecisionSettings

#: A grid axis of :attr:`ExperimentConfig.params`: (scope, parameter name, values).
ParamAxis: TypeAlias = tuple[str, str, tuple[Any, ...]]

#: Harness aliases ``"name:alias"``: the registry estimator ``name`` with these
#: fixed parameters. The readings of other libraries are estimator parameters
#: (``variant=``, see docs/experiments.md); the aliases keep the names that
#: existing grids, presets and results databases use (a cell's ``algorithm``
#: column stays ``mlknn:skml``, its ``params`` column holds only the grid's
#: parameters, so a database written before resumes unchanged).
ALIASES: dict[tuple[str, str | None], dict[str, Any]] = {
    ("mlknn", "skml"): {"variant": "skmultilearn"},
    ("brknna", "skml"): {"variant": "skmultilearn"},
}

#: What each alias computes (the estimators' docstrings give the details).
VARIANTS: dict[tuple[str, str], str] = {
    ("mlknn", "skml"): (
        "MLkNN(variant='skmultilearn'): ML-kNN as scikit-multilearn's MLkNN (default "
        "ignore_first_neighbours=0) computes it: each training instance counts itself among "
        "its k neighbours when the likelihoods are estimated, and predict_proba returns the "
        "unnormalised prior x likelihood P(H1) P(E|H1) instead of the posterior. With hubness= "
        "the training neighbourhoods are the reduced leave-one-out graph (no self-counting): the "
        "reading that matches Teng et al.'s (2025) MLKNN-dsl/-ls/-mp columns (docs/reproduction.md)"
    ),
    ("brknna", "skml"): (
        "BRkNNa(variant='skmultilearn'): BRkNN-a read as scikit-multilearn's BRkNNaClassifier "
        "behaves: plain BR-kNN, i.e. no empty-set correction"
    ),
}


def split_variant(name: str) -> tuple[str, str | None]:
    """``"mlknn:skml"`` -> ``("mlknn", "skml")``; ``"mlknn"`` -> ``("mlknn", None)``."""
    base, _, variant = str(name).lower().partition(":")
    return base, (variant or None)


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
    params: tuple[tuple[str, Any], ...] = ()

    @property
    def base(self) -> str:
        return split_variant(self.name)[0]

    @property
    def variant(self) -> str | None:
        return split_variant(self.name)[1]

    def params_dict(self) -> dict[str, Any]:
        """The grid's parameters (what the ``params`` column of the results records).

        Returns
        -------
        dict
            Parameter name to value.
        """
        return dict(self.params)

    def estimator_params(self) -> dict[str, Any]:
        """The constructor parameters: the grid's, plus those fixed by an alias (:data:`ALIASES`).

        Returns
        -------
        dict
            Parameter name to value, passed to the estimator's constructor.
        """
        return {**self.params_dict(), **ALIASES.get((self.base, self.variant), {})}

    def build(self, seed: int) -> Any:
        """The estimator of this configuration (unfitted), by the registry's factory.

        Parameters
        ----------
        seed : int
            ``random_state`` of an estimator that has one, unless the
            configuration sets it.

        Returns
        -------
        estimator

        Raises
        ------
        ValueError
            When the estimator cannot be built from these parameters.
        """
        from .._registry import make_estimator

        try:
            return make_estimator(self.base, **{"random_state": seed, **self.estimator_params()})
        except TypeError as exc:  # the constructor's own check of the names (specs() checks them first)
            raise ValueError(f"Cannot build {self.label()}: {exc}") from exc

    def key(self) -> str:
        """The parameters as canonical JSON (the ``params`` column of the results).

        Returns
        -------
        str
            :func:`canonical_json` of :meth:`params_dict`.
        """
        return canonical_json(self.params_dict())

    def label(self, hide: Iterable[str] = ()) -> str:
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
        How each dataset is split into training and test parts (cross-validation,
        holdout, the dataset's fixed split, prequential batches, ...), with its seed.
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
    ties : tuple of str
        Also record the four ranking measures (one-error, coverage, ranking
        loss, average precision) under these tie rules, as ``"coverage[mulan]"``
        and so on (rules of :data:`mlknn.experiments._ties.TIE_VARIANTS`:
        ``"average"``, ``"optimistic"``, ``"mulan"``, ``"mulan-reversed"``); the
        plain keys are always the default ``ties="pessimistic"``. The
        reproduction presets record all of them. Like ``at_k``, cells already in
        a database are not recomputed when ``ties`` changes.
    threshold : tuple of str
        Also record the bipartition measures under these tuned decision rules
        (strategies of :class:`mlknn.decision.TunedThresholds`: ``"per-label"``,
        ``"global"``, ``"rcut"``, ``"pcut"``), as ``"macro_f1[threshold=per-label]"``
        and so on (:mod:`mlknn.experiments._decisions`).
    conformal : tuple of str
        Also record the empirical coverage and mean size of these conformal label
        sets (``"guarantee:alpha"``, e.g. ``"set:0.1"``; guarantees of
        :class:`mlknn.decision.ConformalLabelSets`).
    calibration : bool
        Record the calibration measures (ECE, reliability bins) of the posteriors;
        implied by ``threshold`` or ``conformal``. Like ``at_k``, cells already in a
        database are not recomputed when these three change.
    """

    datasets: tuple[str, ...]
    algorithms: tuple[str, ...]
    k: tuple[int, ...] = ()
    params: tuple[ParamAxis, ...] = ()
    protocol: ProtocolConfig = field(default_factory=ProtocolConfig)
    preprocessing: PreprocessingConfig = field(default_factory=PreprocessingConfig)
    dataset_preprocessing: tuple[tuple[str, PreprocessingConfig], ...] = ()
    neighbors: str = "brute"
    metric: str = "euclidean"
    explicit: tuple[AlgorithmSpec, ...] = ()
    at_k: tuple[int, ...] = ()
    ties: tuple[str, ...] = ()
    threshold: tuple[str, ...] = ()
    conformal: tuple[str, ...] = ()
    calibration: bool = False

    def __post_init__(self) -> None:
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
        from ._ties import TIE_VARIANTS

        for t in self.ties:
            if t not in TIE_VARIANTS:
                raise ValueError(f"The 'ties' parameter must be a list of rules from {TIE_VARIANTS}. Got {t!r} instead.")
        from ._decisions import parse_conformal, parse_threshold

        object.__setattr__(self, "threshold", tuple(parse_threshold(t) for t in self.threshold))
        object.__setattr__(self, "conformal", tuple(parse_conformal(c) for c in self.conformal))
        for name in tuple(self.algorithms) + tuple(s.name for s in self.explicit):
            base, variant = split_variant(name)
            if variant is not None and (base, variant) not in ALIASES:
                known = ", ".join(f"{b}:{v}" for b, v in ALIASES)
                raise ValueError(
                    f"Unknown algorithm variant {name!r}. Known variants: {known}."
                )

    def preprocessing_for(self, dataset: str) -> PreprocessingConfig:
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

    def decisions(self) -> "DecisionSettings":
        """The decision rules each cell also records (``threshold``, ``conformal``, ``calibration``).

        Returns
        -------
        DecisionSettings
            False when nothing beyond the default measures is asked.
        """
        from ._decisions import DecisionSettings

        return DecisionSettings(tuple(self.threshold), tuple(self.conformal), bool(self.calibration))

    def search(self) -> dict[str, str]:
        """The shared neighbour search.

        Returns
        -------
        dict
            ``neighbors`` and ``metric``.
        """
        return {"neighbors": self.neighbors, "metric": self.metric}

    def search_key(self) -> str:
        """The shared neighbour search as canonical JSON (recorded with each cell).

        Returns
        -------
        str
            :func:`canonical_json` of :meth:`search`.
        """
        return canonical_json(self.search())

    def specs(self) -> list[AlgorithmSpec]:
        """Expand the grid into :class:`AlgorithmSpec` objects (deterministic order).

        Returns
        -------
        list of AlgorithmSpec
            The grid's configurations, then the explicit ones, without duplicates.
        """
        specs: list[AlgorithmSpec] = []
        used: set[tuple[str, str]] = set()
        for name in self.algorithms:
            base = split_variant(name)[0]
            defaults = _defaults(name)
            axes: dict[str, tuple[Any, ...]] = {}
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
        seen: set[tuple[str, tuple[tuple[str, Any], ...]]] = set()
        unique: list[AlgorithmSpec] = []
        for s in specs:
            if (s.name, s.params) not in seen:
                seen.add((s.name, s.params))
                unique.append(s)
        return unique

    def with_overrides(self, **changes: Any) -> "ExperimentConfig":
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
              ``at_k``, ``ties``): replaced. ``protocol`` may also be a protocol name: the
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
        fields: dict[str, Any] = {k: changes.pop(k) for k in list(changes) if k in _CONFIG_FIELDS and k != "protocol"}
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
        for key in ("datasets", "algorithms", "k", "at_k", "ties", "threshold", "conformal", "params", "explicit",
                    "dataset_preprocessing"):
            if key in fields:
                fields[key] = tuple(fields[key])
        new = replace(self, **fields)
        new.protocol.n_folds()  # validate the splitter now: its error names the setting
        return new


def _protocol_override(current: ProtocolConfig, changes: dict[str, Any]) -> ProtocolConfig:
    """The protocol of :meth:`ExperimentConfig.with_overrides`; pops its keys from ``changes``."""
    protocol: ProtocolConfig | str = changes.pop("protocol", current)
    own = {k: changes.pop(k) for k in list(changes) if k in _PROTOCOL_FIELDS}
    if isinstance(protocol, str):  # a name: its own defaults, this config's stratify and seed
        protocol = replace(current, name=protocol, n_splits=None, n_repeats=None, test_size=None, batch=None,
                           shuffle=False)  # fmt: skip
    return replace(protocol, **own)


_CONFIG_FIELDS = {
    "datasets", "algorithms", "k", "params", "protocol", "preprocessing", "dataset_preprocessing",
    "neighbors", "metric", "explicit", "at_k", "ties", "threshold", "conformal", "calibration",
}  # fmt: skip
_PROTOCOL_FIELDS = {"n_splits", "n_repeats", "test_size", "stratify", "seed", "batch", "shuffle"}
_PREP_FIELDS = {"scaling", "feature_selection", "min_label_count", "label_scope", "missing_labels"}
_OVERRIDABLE = _CONFIG_FIELDS | _PROTOCOL_FIELDS | _PREP_FIELDS | {"add_params"}


def _defaults(name: str) -> dict[str, Any]:
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
    params: dict[str, Any] = cls().get_params()
    return params
