"""The model of a reproduction preset: a paper's columns (:class:`PaperColumn`)
and its experiment (:class:`Preset`), with the cell-by-cell comparison
``z = (our mean - paper mean) / paper std`` (see :mod:`._presets`).

The presets themselves (the data) are in :mod:`._preset_table`.
"""

import json
import math
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field, replace
from importlib import resources
from typing import Any

import numpy as np

from ._config import AlgorithmSpec, ExperimentConfig
from ._settings import PreprocessingConfig, ProtocolConfig
from ._ties import RANKING_METRICS, TIE_READINGS, TIE_VARIANTS, variant_key

#: A published or compared cell (a JSON-like dict).
Cell = dict[str, Any]

#: Floor of a published standard deviation (half a unit of the third decimal).
STD_FLOOR = 0.0005


@dataclass(frozen=True)
class PaperColumn:
    """A column of a published table and the algorithm that reproduces it.

    ``reading`` names an alternative interpretation (e.g. scikit-multilearn's
    ML-kNN); several columns may share a ``label``. ``ties`` names, per ranking
    measure, the tie rule of the stored value the paper's cell is compared with
    (``(("coverage", "mulan"), ...)``: the stored ``"coverage[mulan]"``, see
    :mod:`._ties`); a measure it does not name is compared under the default
    ``"pessimistic"``.
    """

    label: str
    algorithm: str
    params: tuple[tuple[str, Any], ...] = ()
    reading: str = ""
    tables: tuple[str, ...] = ()
    baseline: bool = False
    ties: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        for metric, rule in self.ties:
            if metric not in RANKING_METRICS:
                raise ValueError(
                    f"The 'ties' parameter of column {self.label!r} names {metric!r}, which has no tie rule; "
                    f"the measures with one are {RANKING_METRICS}."
                )
            if rule not in TIE_READINGS:
                raise ValueError(
                    f"The 'ties' parameter of column {self.label!r} gives {metric!r} the rule {rule!r}; "
                    f"the stored rules are {TIE_READINGS}."
                )

    def tie_rule(self, metric: str) -> str | None:
        """The tie rule this column compares ``metric`` under (None: the measure has none)."""
        if metric not in RANKING_METRICS:
            return None
        return dict(self.ties).get(metric, "pessimistic")


@dataclass(frozen=True)
class Preset:
    """A paper's experiment: datasets, protocol, columns and the published tables.

    Parameters
    ----------
    name : str
        Key in :data:`PRESETS` (``mlknn reproduce NAME``).
    title : str
        One line saying which paper and protocol.
    seed_file : str
        File name of the paper's text among the project's source documents (for developers).
    published_file : str
        JSON of the published tables, in ``mlknn/experiments/published``.
    datasets : tuple of str
        The paper's datasets.
    protocol : ProtocolConfig
        The paper's splitter.
    quick_repeats : int
        Repetitions of ``reproduce(..., quick=True)``.
    k : int
        The paper's number of neighbours.
    metrics : tuple of str
        The measures the tables report.
    preprocessing : PreprocessingConfig
        Default preprocessing.
    dataset_preprocessing : tuple of (str, PreprocessingConfig)
        Per-dataset overrides.
    columns : tuple of PaperColumn
        The tables' algorithm columns.
    default_tables : tuple of str
        Tables reproduced when none is asked for.
    notes : tuple of str, default=()
        Readings of the paper the preset makes.
    """

    name: str
    title: str
    seed_file: str
    published_file: str
    datasets: tuple[str, ...]
    protocol: ProtocolConfig
    quick_repeats: int
    k: int
    metrics: tuple[str, ...]
    preprocessing: PreprocessingConfig
    dataset_preprocessing: tuple[tuple[str, PreprocessingConfig], ...]
    columns: tuple[PaperColumn, ...]
    default_tables: tuple[str, ...]
    notes: tuple[str, ...] = field(default_factory=tuple)

    # ------------------------------------------------------------- data
    def published(self) -> dict[str, Any]:
        """The parsed JSON of the published tables.

        Returns
        -------
        dict
            The JSON document of ``published_file``.
        """
        text = resources.files("mlknn.experiments").joinpath("published", self.published_file).read_text("utf-8")
        doc: dict[str, Any] = json.loads(text)
        return doc

    def published_rows(self) -> list[Cell]:
        """Flat published cells: dicts with table, dataset, algorithm, metric, mean, std.

        Returns
        -------
        list of dict
            One dict per published cell.
        """
        doc = self.published()
        out: list[Cell] = []
        if "tables" in doc:
            for t in doc["tables"]:
                for r in t["rows"]:
                    out.append({"table": t["id"], "dataset": r["dataset"], "algorithm": r["algorithm"],
                                "metric": t["metric"], "mean": r["mean"], "std": r["std"]})  # fmt: skip
        else:
            for r in doc["rows"]:
                if r.get("dataset") is None or r["metric"] == "runtime_seconds":
                    continue
                out.append({"table": r["table"], "dataset": r["dataset"], "algorithm": r["algorithm"],
                            "metric": r["metric"], "mean": r["mean"], "std": r.get("std")})  # fmt: skip
        return out

    def table_ids(self) -> list[str]:
        """The published tables, in numeric order.

        Returns
        -------
        list of str
            E.g. ``["Table 3", "Table 12"]``.
        """
        return sorted({r["table"] for r in self.published_rows()}, key=lambda t: int(t.split()[-1]))

    # ------------------------------------------------------------ config
    def columns_for(self, tables: Iterable[str], all_algorithms: bool = False,
                    available: Collection[str] | None = None) -> list[PaperColumn]:  # fmt: skip
        """The columns of the preset that cover some of ``tables``.

        Parameters
        ----------
        tables : iterable of str
            Table ids (``"Table 3"``).
        all_algorithms : bool, default=False
            Include the non-kNN baselines.
        available : collection of str, default=None
            Registry names that can be imported; None: all.

        Returns
        -------
        list of PaperColumn
            In the preset's order.
        """
        tables = tuple(tables)
        cols: list[PaperColumn] = []
        for c in self.columns:
            if c.tables and not set(c.tables) & set(tables):
                continue
            if c.baseline and not all_algorithms:
                continue
            if available is not None and c.algorithm.split(":")[0] not in available:
                continue
            cols.append(c)
        return cols

    def config(self, datasets: Sequence[str] | None = None, *, quick: bool = False,
               tables: Sequence[str] | None = None, all_algorithms: bool = False, scaling: str | None = None,
               seed: int | None = None, available: Collection[str] | None = None,
               feature_selection: float | str | None = "preset") -> tuple[ExperimentConfig, list[PaperColumn]]:  # fmt: skip
        """The :class:`ExperimentConfig` of this preset (and the columns it covers).

        Parameters
        ----------
        datasets : sequence of str, default=None
            Default: the preset's datasets.
        quick : bool, default=False
            Use ``quick_repeats`` repetitions.
        tables : sequence of str, default=None
            Default: ``default_tables``.
        all_algorithms : bool, default=False
            Include the non-kNN baselines.
        scaling : str, default=None
            Override the preset's scaling.
        seed : int, default=None
            Override the protocol's seed.
        available : collection of str, default=None
            Registry names that can be imported; None: all.
        feature_selection : "preset", None, float or int, default="preset"
            Override the preset's chi-square selection (None: none).

        Returns
        -------
        config : ExperimentConfig
            The experiment.
        columns : list of PaperColumn
            The columns it covers.
        """
        tables = tuple(tables or self.default_tables)
        cols = self.columns_for(tables, all_algorithms, available)
        if not cols:
            raise ValueError(f"No algorithm of preset {self.name!r} is available for tables {list(tables)}.")
        from ._config import _defaults

        explicit: list[AlgorithmSpec] = []
        for c in cols:
            params = dict(c.params)
            if "n_neighbors" in _defaults(c.algorithm):
                params = {"n_neighbors": self.k, **params}
            spec = AlgorithmSpec(c.algorithm, tuple(sorted(params.items())))
            if spec not in explicit:
                explicit.append(spec)
        protocol = self.protocol
        if quick:
            protocol = replace(protocol, n_repeats=self.quick_repeats)
        if seed is not None:
            protocol = replace(protocol, seed=seed)
        prep = self.preprocessing if scaling is None else replace(self.preprocessing, scaling=scaling)
        per_ds = tuple(
            (d, replace(p, scaling=prep.scaling)) for d, p in self.dataset_preprocessing
        )
        if feature_selection != "preset":
            if isinstance(feature_selection, str):
                raise ValueError(
                    "The 'feature_selection' parameter must be 'preset', None, a float in (0, 1] or an int >= 1. "
                    f"Got {feature_selection!r} instead."
                )
            # None disables the preset's chi-square selection; a number replaces it everywhere it is used.
            fs = feature_selection
            per_ds = tuple(
                (d, replace(p, feature_selection=fs if p.feature_selection is not None else None)) for d, p in per_ds
            )
        cfg = ExperimentConfig(
            datasets=tuple(datasets or self.datasets),
            algorithms=(),
            explicit=tuple(explicit),
            protocol=protocol,
            preprocessing=prep,
            dataset_preprocessing=per_ds,
            ties=TIE_VARIANTS,  # every tie rule, whichever the columns compare (the report shows the others)
        )
        return cfg, cols

    # ----------------------------------------------------------- compare
    def compare(self, rows: Iterable[Cell], config: ExperimentConfig, columns: Sequence[PaperColumn],
                tables: Iterable[str] | None = None) -> list[Cell]:  # fmt: skip
        """Published cells beside ours (one dict per published cell x reading).

        Parameters
        ----------
        rows : list of dict
            Our result rows (:meth:`ResultsDB.rows`).
        config : ExperimentConfig
            The experiment that produced them.
        columns : list of PaperColumn
            The columns to compare.
        tables : iterable of str, default=None
            Default: ``default_tables``.

        Returns
        -------
        list of dict
            One dict per published cell and reading, with the published and our values;
            ``ties`` is the tie rule of a ranking measure's cell (None for the other
            measures) and ``stored_metric`` the key of our value in the results.
        """
        tables = set(tables or self.default_tables)
        ours: dict[tuple[Any, ...], list[float]] = {}
        for r in rows:
            key = (r["dataset"], r["algorithm"], r["params"], r["preprocessing"], r["protocol"], r["metric"])
            ours.setdefault(key, []).append(r["value"])
        proto = config.protocol.key()
        out: list[Cell] = []
        for pub in self.published_rows():
            if pub["table"] not in tables or pub["dataset"] not in config.datasets:
                continue
            for c in columns:
                if c.label != pub["algorithm"] or (c.tables and pub["table"] not in c.tables):
                    continue
                params = _spec_for(config, c).key()
                rule = c.tie_rule(pub["metric"])
                stored = pub["metric"] if rule is None else variant_key(pub["metric"], rule)
                key = (pub["dataset"], c.algorithm, params, config.preprocessing_for(pub["dataset"]).key(),
                       proto, stored)  # fmt: skip
                vals = np.array(ours.get(key, []), dtype=np.float64)
                vals = vals[np.isfinite(vals)]
                mean = float(vals.mean()) if vals.size else math.nan
                std = float(vals.std(ddof=1)) if vals.size > 1 else math.nan
                if pub["std"] is not None:
                    sd, source = max(float(pub["std"]), STD_FLOOR), "paper"
                else:
                    # No published sd (BML-kNN paper): our sd, but at least half a unit of
                    # the published rounding (2 decimals below 10, 1 below 100, 0 above).
                    sd = max(0.0 if math.isnan(std) else std, _half_unit(pub["mean"]))
                    source = "ours"
                diff = mean - pub["mean"]
                z = diff / sd if not math.isnan(sd) and sd > 0 else math.nan
                out.append({
                    "table": pub["table"], "dataset": pub["dataset"], "metric": pub["metric"],
                    "paper_algorithm": pub["algorithm"], "ours": _reading(c, rule), "ties": rule,
                    "stored_metric": stored,
                    "paper_mean": pub["mean"], "paper_std": pub["std"],
                    "our_mean": mean, "our_std": std, "n_folds": int(vals.size),
                    "diff": diff, "z": z, "sd_source": source,
                    "within_2sd": None if math.isnan(z) else bool(abs(z) <= 2),
                })  # fmt: skip
        return out


def _half_unit(value: float) -> float:
    v = abs(float(value))
    return 0.005 if v < 10 else (0.05 if v < 100 else 0.5)


def _reading(c: PaperColumn, rule: str | None = None) -> str:
    """The column's algorithm and reading; a tie rule other than the default is named too
    (so that every printed table, the CLI's included, shows it)."""
    name = c.algorithm + ("" if not c.params else "(" + ", ".join(f"{k}={v}" for k, v in c.params) + ")")
    name += f" [{c.reading}]" if c.reading else ""
    # In parentheses, not brackets: the CLI prints with rich, which takes "[lowercase...]" for markup.
    return name + (f" (ties: {rule})" if rule not in (None, "pessimistic") else "")


def _spec_for(config: ExperimentConfig, column: PaperColumn) -> AlgorithmSpec:
    """The configuration of ``config`` that reproduces ``column``."""
    wanted = dict(column.params)
    for spec in config.specs():
        if spec.name == column.algorithm:
            p = spec.params_dict()
            if all(p.get(k) == v for k, v in wanted.items()) and set(p) - {"n_neighbors"} <= set(wanted):
                return spec
    raise LookupError(f"no configuration for column {column.label!r}")

