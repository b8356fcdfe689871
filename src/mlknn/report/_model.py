"""The report's data model: result rows grouped and indexed, and the pieces a section holds."""

import hashlib
import io
import json
import math
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    from matplotlib.figure import Figure as MplFigure
    from matplotlib.figure import SubFigure

#: A result row of :meth:`mlknn.experiments.ResultsDB.rows` (column -> value).
Row: TypeAlias = Mapping[str, Any]
#: (dataset, preprocessing JSON) and (algorithm, params JSON): a table's row and column keys.
DatasetKey: TypeAlias = tuple[str, str]
ConfigKey: TypeAlias = tuple[str, str]


# ------------------------------------------------------------------ pieces
@dataclass
class Table:
    title: str
    header: list[str]
    rows: list[list[str]]
    bold: set[tuple[int, int]] = field(default_factory=set)  # (row, col) cells in bold
    note: str = ""
    wrap: bool = False  # long text cells (messages) wrap instead of widening the table


@dataclass
class Figure:
    name: str
    caption: str
    png: bytes


@dataclass
class Section:
    title: str
    level: int = 2
    paragraphs: list[str] = field(default_factory=list)
    items: list[Table | Figure | str] = field(default_factory=list)  # in order


def fmt(v: float | np.floating[Any] | None, digits: int = 3) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    return f"{v:.{digits}f}"


def fmt_p(p: float | np.floating[Any] | None) -> str:
    if p is None or not math.isfinite(p):
        return "-"
    if p < 1e-3:
        return f"{p:.2e}"
    return f"{p:.3f}"


def png(fig: "MplFigure | SubFigure") -> bytes:
    from matplotlib.figure import Figure as MplFigure

    # A display drawn on an axes of a subfigure holds that subfigure: save its whole figure.
    root = fig if isinstance(fig, MplFigure) else fig.figure
    buf = io.BytesIO()
    root.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(root)
    return buf.getvalue()


# ------------------------------------------------------------------ names
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_name(text: object) -> str:
    """A file-name-safe form of ``text`` (a path, spaces, unicode): ASCII letters,
    digits, ``._-``; a short hash keeps two different names apart."""
    text = str(text)
    slug = _UNSAFE.sub("_", text).strip("._") or "x"
    if slug != text:
        slug = f"{slug[:60]}-{hashlib.sha1(text.encode('utf-8')).hexdigest()[:8]}"
    return slug


def dataset_label(name: object) -> str:
    """What a table shows for a dataset: a name as given, a path as its file stem."""
    text = str(name)
    if "/" in text or "\\" in text or text.lower().endswith((".arff", ".gz")):
        from ..datasets import arff_stem

        return arff_stem(PurePath(text.replace("\\", "/")).name)
    return text


def config_label(algorithm: str, params: str, hide: Collection[str]) -> str:
    from ..experiments import AlgorithmSpec

    spec = AlgorithmSpec(algorithm, tuple(sorted(json.loads(params).items())))
    return spec.label(hide=hide)


def prep_label(prep_json: str) -> str:
    p = json.loads(prep_json)
    parts: list[str] = []
    if p.get("scaling", "none") != "none":
        parts.append(f"{p['scaling']} scaling")
    if p.get("feature_selection") is not None:
        fs = p["feature_selection"]
        parts.append(f"chi2 {fs:g} of the features" if isinstance(fs, float) else f"chi2 {fs} features")
    if p.get("min_label_count", 0):
        parts.append(f"labels >= {p['min_label_count']} ({p.get('label_scope', 'train')})")
    return ", ".join(parts) or "raw features (no scaling)"


_PROTOCOL_WORDS = {"5x2": "2-fold cross-validation", "kfold": "-fold cross-validation", "holdout": "hold-out"}


def protocol_words(proto_json: str, n_repeats: int | None = None) -> str:
    """The protocol in words: '5 x 2-fold cross-validation (seed 0, iterative stratification)'.
    ``n_repeats``: the repetitions found in the results (the JSON may not hold them)."""
    p = json.loads(proto_json)
    name = p.get("protocol", "?")
    reps = p.get("n_repeats") or n_repeats
    seed = p.get("random_state", p.get("seed"))
    if name == "holdout":
        what = f"{reps or 1} x hold-out ({1 - float(p.get('test_size', 0.2)):.0%} train / {float(p.get('test_size', 0.2)):.0%} test)"
    elif name in ("5x2", "kfold"):
        k = p.get("n_splits", 2 if name == "5x2" else 10)
        what = f"{reps or 1} x {k}-fold cross-validation"
    elif name == "prequential":
        order = "a random order" if p.get("shuffle") else "file order"
        what = (f"prequential, test-then-train in batches of {p.get('batch_size')} after the first "
                f"{p.get('n_initial')} instances ({order})")  # fmt: skip
        seed = p.get("random_state")
    else:
        what = name
    extra = [f"seed {seed}"] if seed is not None else []
    if p.get("stratify"):
        extra.append("iterative stratification")
    return what + (f" ({', '.join(extra)})" if extra else "")


def test_train_ratio(proto_json: str) -> float:
    """n_test / n_train of one split of the protocol (for the corrected resampled t-test)."""
    p = json.loads(proto_json)
    if p.get("protocol") == "holdout":
        t = float(p.get("test_size", 0.2))
        return t / (1.0 - t)
    if p.get("protocol") == "prequential":  # the first batch's ratio, the largest: the most conservative
        return float(p["batch_size"]) / float(p["n_initial"])
    k = int(p.get("n_splits", 2 if p.get("protocol") == "5x2" else 10))
    return 1.0 / (k - 1)


# ------------------------------------------------------------------ groups
class Group:
    """Rows of one protocol + search, indexed for tables."""

    def __init__(self, protocol: str, search: str, rows: Sequence[Row]) -> None:
        self.protocol, self.search = protocol, search
        configs: list[ConfigKey] = sorted({(r["algorithm"], r["params"]) for r in rows})
        all_params = [json.loads(p) for _, p in configs]
        keys: set[str] = set().union(*all_params) if all_params else set()
        hide = {
            k for k in keys
            if all(k in p for p in all_params) and len({json.dumps(p[k]) for p in all_params}) == 1
        }  # fmt: skip
        self.hidden = {k: all_params[0][k] for k in sorted(hide)} if all_params else {}
        self.configs = configs
        self.labels = [config_label(a, p, hide) for a, p in configs]
        dsp: list[DatasetKey] = sorted({(r["dataset"], r["preprocessing"]) for r in rows})
        multi = {d for d, _ in dsp if sum(1 for d2, _ in dsp if d2 == d) > 1}
        self.datasets = dsp
        self.row_labels = [dataset_label(d) if d not in multi else f"{dataset_label(d)} [{prep_label(p)}]" for d, p in dsp]
        self.metrics: list[str] = []
        vals: dict[tuple[DatasetKey, ConfigKey, str], list[tuple[int, int, float]]] = {}
        times: dict[tuple[DatasetKey, ConfigKey], dict[tuple[int, int], tuple[float, float, float]]] = {}
        for r in rows:
            key = (r["dataset"], r["preprocessing"])
            c = (r["algorithm"], r["params"])
            vals.setdefault((key, c, r["metric"]), []).append((r["repeat"], r["fold"], r["value"]))
            if r["metric"] not in self.metrics:
                self.metrics.append(r["metric"])
            times.setdefault((key, c), {})[(r["repeat"], r["fold"])] = (
                r["fit_seconds"], r["predict_seconds"], r["search_seconds"]
            )
        self.values: dict[tuple[DatasetKey, ConfigKey, str], NDArray[np.float64]] = {k: np.array([v for _, _, v in sorted(x)], dtype=float) for k, x in vals.items()}
        self.n_repeats = len({r["repeat"] for r in rows})
        self.times = times
        self.rows = rows

    def folds(self, row: int, config: int, metric: str) -> NDArray[np.float64] | None:
        return self.values.get((self.datasets[row], self.configs[config], metric))

    def mean_table(self, metric: str) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        T = np.full((len(self.datasets), len(self.configs)), np.nan)
        S = np.full_like(T, np.nan)
        for i in range(len(self.datasets)):
            for j in range(len(self.configs)):
                v = self.folds(i, j, metric)
                if v is not None and np.any(np.isfinite(v)):
                    T[i, j], S[i, j] = np.nanmean(v), np.nanstd(v, ddof=1) if np.sum(np.isfinite(v)) > 1 else 0.0
        return T, S
