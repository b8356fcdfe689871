"""The benchmark collection: ``$MLKNN_DATA/MANIFEST.tsv`` and its folders.

The data folder is never hard-coded: it comes from the ``data_home``
argument or from the ``MLKNN_DATA`` environment variable.
"""

from __future__ import annotations

import csv
import os
import re
from dataclasses import dataclass
from pathlib import Path

from ._arff import DatasetFormatError, arff_stem

__all__ = ["ENV_VAR", "data_home", "read_manifest", "DatasetEntry"]

ENV_VAR = "MLKNN_DATA"
MANIFEST = "MANIFEST.tsv"

_REQUIRED = ("name", "files", "format", "label_location", "n", "d", "q",
             "lcard", "ldens", "ldiv", "sparse")

_SPLIT_RE = re.compile(r"[-_](train|test)$", re.IGNORECASE)
_SPARSE_RE = re.compile(r"[-_]sparse$", re.IGNORECASE)


def data_home(data_home: str | os.PathLike[str] | None = None) -> Path:
    """Folder holding the benchmark datasets and their ``MANIFEST.tsv``.

    Parameters
    ----------
    data_home : str or path-like, default=None
        Explicit folder. When None, the ``MLKNN_DATA`` environment variable
        is used; when that is unset too, the user cache folder that
        ``mlknn datasets fetch`` fills (``platformdirs.user_cache_dir("mlknn")``),
        if it holds a ``MANIFEST.tsv``.

    Returns
    -------
    path : pathlib.Path

    Raises
    ------
    RuntimeError
        If ``data_home`` is None, ``MLKNN_DATA`` is unset or empty and nothing
        was fetched into the user cache.
    FileNotFoundError
        If the folder does not exist.

    See Also
    --------
    list_datasets : The datasets of the folder's ``MANIFEST.tsv``.
    fetch : Download a dataset into the user cache folder.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from mlknn.datasets import data_home
    >>> folder = tempfile.mkdtemp()
    >>> data_home(folder) == pathlib.Path(folder)
    True
    """
    if data_home is None:
        value = os.environ.get(ENV_VAR, "").strip()
        if not value:
            import platformdirs

            cache = Path(platformdirs.user_cache_dir("mlknn"))
            if (cache / MANIFEST).is_file():
                return cache
            raise RuntimeError(
                f"No dataset folder: set the environment variable {ENV_VAR} to the "
                f"folder that holds {MANIFEST} (e.g. `export {ENV_VAR}=/path/to/datasets`) "
                "or pass data_home=..., or download one with `mlknn datasets fetch NAME`."
            )
        data_home = value
    path = Path(data_home).expanduser()
    if not path.is_dir():
        raise FileNotFoundError(f"dataset folder {str(path)!r} does not exist")
    return path


def split_of(filename: str | os.PathLike[str]) -> str | None:
    """'train', 'test' or None (union file) from an ARFF file name.

    ``emotions-train.arff`` -> 'train'; ``Corel5k-test-sparse.arff`` -> 'test';
    ``Corel5k-sparse.arff`` -> None.
    """
    stem = _SPARSE_RE.sub("", arff_stem(filename))
    m = _SPLIT_RE.search(stem)
    return m.group(1).lower() if m else None


def _is_arff(filename: str) -> bool:
    low = filename.lower()
    return low.endswith(".arff") or low.endswith(".arff.gz")


@dataclass(frozen=True)
class DatasetEntry:
    """One MANIFEST.tsv row, with typed values."""

    name: str
    folder: Path
    files: tuple[str, ...]
    format: str
    label_location: str
    n: int
    d: int
    q: int
    lcard: float
    ldens: float
    ldiv: int
    sparse: bool

    @property
    def arff_files(self) -> list[str]:
        return [f for f in self.files if _is_arff(f)]

    @property
    def xml_file(self) -> Path | None:
        xml = [f for f in self.files if f.lower().endswith(".xml")]
        return self.folder / xml[0] if xml else None

    def split_file(self, split: str | None) -> Path | None:
        """Path of the union (``split=None``), train or test ARFF, or None."""
        for f in self.arff_files:
            if split_of(f) == split:
                return self.folder / f
        return None

    @property
    def splits(self) -> tuple[str, ...]:
        return tuple(s for s in ("train", "test") if self.split_file(s) is not None)

    def as_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "format": self.format,
            "n": self.n,
            "d": self.d,
            "q": self.q,
            "lcard": self.lcard,
            "ldens": self.ldens,
            "ldiv": self.ldiv,
            "sparse": self.sparse,
            "label_location": self.label_location,
            "splits": self.splits,
            "files": list(self.files),
        }


def read_manifest(home: str | os.PathLike[str]) -> dict[str, DatasetEntry]:
    """Parse ``home/MANIFEST.tsv`` into ``{name: DatasetEntry}`` (file order)."""
    path = Path(home) / MANIFEST
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: is {ENV_VAR} / data_home the dataset folder?")
    entries: dict[str, DatasetEntry] = {}
    with open(path, encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
        missing = [c for c in _REQUIRED if c not in (reader.fieldnames or [])]
        if missing:
            raise DatasetFormatError(f"missing column(s) {missing}", path=path, line=1)
        for lineno, row in enumerate(reader, start=2):
            try:
                entry = DatasetEntry(
                    name=row["name"],
                    folder=Path(home) / row["name"],
                    files=tuple(f for f in row["files"].split(";") if f),
                    format=row["format"].strip().lower(),
                    label_location=row["label_location"],
                    n=int(row["n"]),
                    d=int(row["d"]),
                    q=int(row["q"]),
                    lcard=float(row["lcard"]),
                    ldens=float(row["ldens"]),
                    ldiv=int(row["ldiv"]),
                    sparse=row["sparse"].strip().lower() in ("yes", "true", "1"),
                )
            except (TypeError, ValueError, AttributeError) as exc:
                raise DatasetFormatError(f"bad MANIFEST row ({exc})", path=path, line=lineno) from exc
            if entry.format not in ("mulan", "meka"):
                raise DatasetFormatError(
                    f"unknown format {entry.format!r} for {entry.name!r}", path=path, line=lineno
                )
            entries[entry.name] = entry
    return entries
