"""Multi-label benchmark datasets (MULAN / MEKA ARFF) and synthetic data.

The benchmark files live outside the package, in the folder named by the
``MLKNN_DATA`` environment variable (or the ``data_home`` argument), which
holds ``MANIFEST.tsv`` and one sub-folder per dataset.

Public API
----------
load
    A dataset by MANIFEST name (``load("emotions")``, ``split="train"``) or
    any ARFF file by path (``.txt`` / ``.svm`` / ``.libsvm``: :func:`load_xc`).
load_arff
    One ARFF file, with explicit control over where the labels are.
load_xc
    An Extreme Classification Repository or LIBSVM multi-label text file
    (CSR X float32, CSR Y uint8; see :mod:`mlknn.datasets._xc`).
list_datasets
    The MANIFEST rows as dicts.
dataset_stats, label_stats
    n, d, q, label cardinality / density / diversity; per-label counts.
make_simulated_2d, make_multilabel, make_extreme_multilabel
    Synthetic data (Younes et al. 2011's 2-D set; scikit-learn's generator;
    a power-law label space with embedding features).
DatasetFormatError
    Raised for malformed files (subclass of ValueError).
data_home
    The resolved dataset folder.
fetch, fetchable_datasets, FetchError, ChecksumError
    Download a dataset of the standard collection, pinned by SHA-256, into
    ``$MLKNN_DATA`` or the user cache (see :mod:`mlknn.datasets._fetch`).

Label conventions
-----------------
* MULAN files: the labels are the attributes named in the ``.xml`` file
  beside the ARFF, matched by name after removing ARFF backslash escapes on
  both sides. A ``-C q`` in a MULAN ``@relation`` is ignored (it is wrong for
  ``medical`` and ``llog``).
* MEKA files: ``-C q`` in the ``@relation`` name; q > 0 means the first q
  attributes, q < 0 the last ``|q|``.
* The columns of ``Y`` follow the ARFF attribute order (not the XML order,
  which differs for yeast and enron); ``label_names`` gives that order.
* Names are returned with ARFF backslash escapes removed
  (``TAG_m'usica``).
"""

from __future__ import annotations

from collections.abc import Mapping
from os import PathLike
from pathlib import Path
from typing import Literal, TypeAlias, overload

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray
from sklearn.utils import Bunch

from ..utils._typing import LabelMatrix, MatrixLike
from . import _arff
from ._arff import DatasetFormatError
from ._arff_encode import NominalEncoding
from ._fetch import ChecksumError, FetchError, fetch, fetchable_datasets
from ._manifest import DatasetEntry, data_home, read_manifest
from ._stats import dataset_stats, label_stats
from ._synthetic import make_extreme_multilabel, make_multilabel, make_simulated_2d
from ._xc import load_xc

__all__ = [
    "load",
    "load_arff",
    "list_datasets",
    "dataset_stats",
    "label_stats",
    "make_simulated_2d",
    "make_multilabel",
    "make_extreme_multilabel",
    "load_xc",
    "DatasetFormatError",
    "data_home",
    "fetch",
    "fetchable_datasets",
    "FetchError",
    "ChecksumError",
]

_SPLITS = (None, "train", "test")

_StrPath: TypeAlias = str | PathLike[str]
#: What :func:`_read_file` returns: X, Y, feature names, label names, files read, format.
_FileData: TypeAlias = tuple[MatrixLike, NDArray[np.uint8], list[str], list[str], list[str], str]


def _read_file(
    path: _StrPath,
    *,
    xml: _StrPath | None = None,
    meka_c: int | None = None,
    fmt: str | None = None,
    nominal: NominalEncoding = "weka",
) -> _FileData:
    """Decode one ARFF file and split it into X / Y.

    ``fmt='mulan'`` requires an XML (found beside the file if ``xml`` is
    None); ``fmt='meka'`` uses ``-C``; ``fmt=None`` prefers an XML beside the
    file and falls back to ``-C``.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"ARFF file {str(path)!r} not found")
    if xml is None and fmt != "meka" and meka_c is None:
        xml = _arff.find_mulan_xml(path)
    contents = _arff.read_arff(path)
    sources = [str(path)]
    if meka_c is not None:
        label_idx = _arff.label_indices_from_meka(contents, int(meka_c))
        fmt = "meka"
    elif xml is not None:
        names = _arff.read_mulan_xml(xml)
        label_idx = _arff.label_indices_from_names(contents, names, xml_path=xml)
        sources.append(str(xml))
        fmt = "mulan"
    elif fmt == "mulan":
        raise DatasetFormatError(
            "MULAN file without its .xml label file (looked for "
            f"{_arff.arff_stem(path)}.xml and the stem without -train/-test/-sparse)",
            path=path,
        )
    else:
        q = _arff.meka_label_count(contents.relation)
        if q is None:
            raise DatasetFormatError(
                "cannot tell which attributes are labels: no MULAN .xml beside the "
                "file and no MEKA '-C q' in the @relation name "
                f"({contents.relation!r})",
                path=path,
            )
        label_idx = _arff.label_indices_from_meka(contents, q)
        fmt = "meka"
    X, Y, feature_names, label_names = _arff.encode(contents, label_idx, nominal=nominal)
    return X, Y, feature_names, label_names, sources, fmt


@overload
def load_arff(
    path: _StrPath,
    *,
    xml: _StrPath | None = ...,
    n_labels: int | None = ...,
    nominal: NominalEncoding = ...,
    return_X_y: Literal[False] = ...,
) -> Bunch: ...
@overload
def load_arff(
    path: _StrPath,
    *,
    xml: _StrPath | None = ...,
    n_labels: int | None = ...,
    nominal: NominalEncoding = ...,
    return_X_y: Literal[True],
) -> tuple[MatrixLike, NDArray[np.uint8]]: ...
@overload
def load_arff(
    path: _StrPath,
    *,
    xml: _StrPath | None = ...,
    n_labels: int | None = ...,
    nominal: NominalEncoding = ...,
    return_X_y: bool = ...,
) -> Bunch | tuple[MatrixLike, NDArray[np.uint8]]: ...
def load_arff(
    path: _StrPath,
    *,
    xml: _StrPath | None = None,
    n_labels: int | None = None,
    nominal: NominalEncoding = "weka",
    return_X_y: bool = False,
) -> Bunch | tuple[MatrixLike, NDArray[np.uint8]]:
    """Load one multi-label ARFF file (dense or sparse, plain or gzip).

    Parameters
    ----------
    path : str or path-like
        ``.arff`` or ``.arff.gz`` file.
    xml : str or path-like, default=None
        MULAN label file. When None (and ``n_labels`` is None) the ``.xml``
        beside the file is used if there is one: same stem, else the stem
        without ``-sparse`` and/or ``-train``/``-test``
        (``Corel5k-train-sparse.arff`` -> ``Corel5k.xml``).
    n_labels : int, default=None
        MEKA-style label count overriding the file: q > 0 takes the first q
        attributes as labels, q < 0 the last ``|q|``. When None and no XML is
        found, MEKA's ``-C q`` in the ``@relation`` name is used.
    nominal : {"weka", "onehot"}, default="weka"
        Encoding of nominal features with three or more values, as in
        :func:`load`.
    return_X_y : bool, default=False
        Return ``(X, Y)`` instead of a Bunch.

    Returns
    -------
    data : sklearn.utils.Bunch
        See :func:`load`. ``name`` is the file stem (``emotions-train``).
    (X, Y) : tuple
        If ``return_X_y`` is True.

    Raises
    ------
    DatasetFormatError
        Malformed ARFF / gzip / XML (the message names the file and line), or
        no way to tell which attributes are labels.

    See Also
    --------
    load : Load a dataset of the manifest by name (or a file by path).
    list_datasets : The datasets of ``MANIFEST.tsv``.

    References
    ----------
    G. Tsoumakas, E. Spyromitros-Xioufis, J. Vilcek and I. Vlahavas, "Mulan: A
    Java Library for Multi-Label Learning", Journal of Machine Learning Research
    12, 2011 (the ARFF + XML format).

    J. Read, P. Reutemann, B. Pfahringer and G. Holmes, "MEKA: A Multi-label/
    Multi-target Extension to WEKA", Journal of Machine Learning Research 17,
    2016 (the ``-C q`` relation name).

    Examples
    --------
    >>> import os, tempfile
    >>> from mlknn.datasets import load_arff
    >>> text = '''@relation toy
    ... @attribute x0 numeric
    ... @attribute x1 numeric
    ... @attribute y0 {0,1}
    ... @attribute y1 {0,1}
    ... @data
    ... 0.5,1.0,1,0
    ... 0.1,0.2,0,1
    ... 0.9,0.4,1,1
    ... '''
    >>> path = os.path.join(tempfile.mkdtemp(), "toy.arff")
    >>> with open(path, "w") as f:
    ...     _ = f.write(text)
    >>> data = load_arff(path, n_labels=-2)
    >>> data.X.shape, data.Y.tolist(), data.label_names
    ((3, 2), [[1, 0], [0, 1], [1, 1]], ['y0', 'y1'])
    """
    if xml is not None and n_labels is not None:
        raise ValueError("pass at most one of xml and n_labels")
    _check_format(path)
    X, Y, fn, ln, sources, fmt = _read_file(path, xml=xml, meka_c=n_labels, nominal=nominal)
    if return_X_y:
        return X, Y
    return Bunch(
        X=X,
        Y=Y,
        feature_names=fn,
        label_names=ln,
        name=_arff.arff_stem(path),
        source=sources,
        format=fmt,
        split=None,
    )


def _entries(home: _StrPath | None) -> dict[str, DatasetEntry]:
    return read_manifest(data_home(home))


def list_datasets(data_home: _StrPath | None = None) -> list[dict[str, object]]:
    """The datasets of ``MANIFEST.tsv``.

    Parameters
    ----------
    data_home : str or path-like, default=None
        Dataset folder; default ``$MLKNN_DATA``.

    Returns
    -------
    datasets : list of dict
        One dict per MANIFEST row, in file order, with ``name``, ``format``
        ('mulan' or 'meka'), ``n``, ``d``, ``q``, ``ldiv`` (int), ``lcard``,
        ``ldens`` (float, as rounded in the manifest), ``sparse`` (bool), and
        also ``label_location``, ``splits`` (the fixed splits available,
        e.g. ``('train', 'test')``) and ``files``.

    See Also
    --------
    load : Load one of these datasets.
    fetch : Download a dataset of the registry into a data folder.

    Examples
    --------
    >>> from mlknn.datasets import list_datasets
    >>> [d["name"] for d in list_datasets()][:2]  # doctest: +SKIP
    ['emotions', 'scene']
    """
    return [e.as_dict() for e in _entries(data_home).values()]


#: The file formats :func:`load` reads, for messages.
READ_FORMATS = (
    "ARFF files (.arff, or gzip-compressed .arff.gz), in the MULAN or MEKA layout, and "
    "Extreme Classification Repository / LIBSVM multi-label text files (.txt, .svm, .libsvm, "
    "optionally .gz)"
)
#: Suffixes that :func:`load` hands to :func:`load_xc`.
XC_SUFFIXES = (".txt", ".svm", ".libsvm", ".txt.gz", ".svm.gz", ".libsvm.gz")


def _looks_like_path(name_or_path: _StrPath) -> bool:
    if isinstance(name_or_path, PathLike):
        return True
    s = str(name_or_path)
    low = s.lower()
    # Any file-name extension (data.csv, data.svm) is a path, so that an unsupported
    # format gets its own message rather than "unknown dataset".
    return (low.endswith((".arff", ".arff.gz", ".gz")) or "/" in s or "\\" in s
            or bool(Path(s).suffix and not Path(s).suffix[1:].isdigit()) or Path(s).is_file())


def _check_format(path: _StrPath) -> None:
    """Refuse a file that is not ARFF, naming the formats that are read."""
    low = Path(path).name.lower()
    if low.endswith((".arff", ".arff.gz")) or (low.endswith(".gz") and not low.endswith((".csv.gz", ".txt.gz"))):
        return
    suffix = "".join(Path(path).suffixes) or "no extension"
    raise ValueError(
        f"Cannot read {str(path)!r} ({suffix}): mlknn.datasets reads {READ_FORMATS}. "
        "Convert the file to ARFF, or build X and Y yourself (numpy / scipy.sparse)."
    )


def _unknown_name(name: str, entries: Mapping[str, DatasetEntry]) -> ValueError:
    """The ValueError for an unknown dataset name, with the closest names."""
    import difflib

    close = difflib.get_close_matches(name.lower(), [k.lower() for k in entries], n=3, cutoff=0.6)
    by_lower = {k.lower(): k for k in entries}
    hint = f"did you mean {' or '.join(repr(by_lower[c]) for c in close)}? " if close else ""
    return ValueError(
        f"unknown dataset {name!r}; {hint}available: {', '.join(entries)} "
        f"(or pass a path to one of the {READ_FORMATS})"
    )


@overload
def load(
    name_or_path: _StrPath,
    *,
    split: Literal["train", "test"] | None = ...,
    return_X_y: Literal[False] = ...,
    data_home: _StrPath | None = ...,
    nominal: NominalEncoding = ...,
) -> Bunch: ...
@overload
def load(
    name_or_path: _StrPath,
    *,
    split: Literal["train", "test"] | None = ...,
    return_X_y: Literal[True],
    data_home: _StrPath | None = ...,
    nominal: NominalEncoding = ...,
) -> tuple[MatrixLike, LabelMatrix]: ...
@overload
def load(
    name_or_path: _StrPath,
    *,
    split: Literal["train", "test"] | None = ...,
    return_X_y: bool = ...,
    data_home: _StrPath | None = ...,
    nominal: NominalEncoding = ...,
) -> Bunch | tuple[MatrixLike, LabelMatrix]: ...
def load(
    name_or_path: _StrPath,
    *,
    split: Literal["train", "test"] | None = None,
    return_X_y: bool = False,
    data_home: _StrPath | None = None,
    nominal: NominalEncoding = "weka",
) -> Bunch | tuple[MatrixLike, LabelMatrix]:
    """Load a multi-label dataset by MANIFEST name or ARFF path.

    Parameters
    ----------
    name_or_path : str or path-like
        A name from ``MANIFEST.tsv`` (``'emotions'``, ``'tmc2007-500'``,
        case-insensitive) or a path to an ``.arff`` / ``.arff.gz`` file.
        A path is handled by :func:`load_arff` (MULAN ``.xml`` beside the
        file, else MEKA ``-C q``); a ``.txt`` / ``.svm`` / ``.libsvm``
        (optionally ``.gz``) path by :func:`load_xc` (Extreme Classification
        Repository or LIBSVM multi-label text: CSR X and Y).
    split : {None, 'train', 'test'}, default=None
        For a name: None gives the whole dataset - the union file
        (``emotions.arff``, ``Corel5k-sparse.arff``), or train followed by
        test where the source has no union file (``scene``). ``'train'`` /
        ``'test'`` give the source's fixed split file
        (``emotions-train.arff``). Must be None for a path.
    return_X_y : bool, default=False
        Return ``(X, Y)`` instead of a Bunch.
    data_home : str or path-like, default=None
        Dataset folder; default ``$MLKNN_DATA``.
    nominal : {"weka", "onehot"}, default="weka"
        Encoding of nominal features with three or more values: one column per
        declared value, holding 1/sqrt(2) (``"weka"``) or 1 (``"onehot"``) for
        the value taken. With ``"weka"`` a mismatch adds 1 to the squared
        Euclidean distance, Weka's (and MULAN's) nominal distance and the
        weight of a 0/1 feature; with ``"onehot"`` it adds 2. The default is
        ``"weka"`` so that no attribute weighs more than another because it is
        nominal.

    Returns
    -------
    data : sklearn.utils.Bunch
        ``X``: float64 ndarray (n, d), or CSR float64 for sparse ARFF files.
        ``Y``: uint8 ndarray (n, q) of 0/1, columns in ARFF attribute order.
        ``feature_names``, ``label_names``: lists of str (ARFF escapes
        removed). ``name``: dataset name (or file stem for a path).
        ``source``: list of the files read. ``format``: 'mulan' or 'meka'.
        ``split``: the ``split`` argument.

        Features: numeric as is; a two-valued nominal attribute as one 0/1
        column (``{0,1}`` keeps its numbers; for any other ``{a,b}`` the
        first declared value is 0 and the second 1, and the column is named
        ``attr=b``); nominal attributes with more values one column per value
        (``attr=value``, see ``nominal``); string attributes and
        nominal identifiers (a distinct value on every row) dropped with a
        warning. A missing value ``?`` raises :class:`DatasetFormatError`
        (naming file, attribute and line): NaN would silently corrupt
        distances in kNN methods.
    (X, Y) : tuple
        If ``return_X_y`` is True.

    Raises
    ------
    ValueError
        Unknown dataset name (the message lists the available names), or a
        split the dataset does not have.
    RuntimeError
        A name was given but neither ``data_home`` nor ``MLKNN_DATA`` is set.
    DatasetFormatError
        A malformed file.

    See Also
    --------
    list_datasets : The names this function accepts.
    load_arff : Load one ARFF file.
    fetch : Download a dataset first.
    make_multilabel : Random data with the same Bunch layout, no files needed.

    Examples
    --------
    >>> data = load("emotions")                      # doctest: +SKIP
    >>> data.X.shape, data.Y.shape                   # doctest: +SKIP
    ((593, 72), (593, 6))
    >>> X, Y = load("emotions", split="train", return_X_y=True)  # doctest: +SKIP
    """
    if split not in _SPLITS:
        raise ValueError(f"split must be None, 'train' or 'test', got {split!r}")
    if _looks_like_path(name_or_path):
        if split is not None:
            raise ValueError("split is only meaningful for a dataset name, not a file path")
        if str(name_or_path).lower().endswith(XC_SUFFIXES):
            return load_xc(name_or_path, return_X_y=return_X_y)
        return load_arff(name_or_path, nominal=nominal, return_X_y=return_X_y)

    name = str(name_or_path)
    entries = _entries(data_home)
    entry = entries.get(name)
    if entry is None:
        by_lower = {k.lower(): v for k, v in entries.items()}
        entry = by_lower.get(name.lower())
    if entry is None:
        raise _unknown_name(name, entries)

    xml = entry.xml_file if entry.format == "mulan" else None
    if entry.format == "mulan" and xml is None:
        raise DatasetFormatError(f"MANIFEST lists no .xml for MULAN dataset {entry.name!r}")
    fmt = entry.format

    files: list[Path]
    if split is not None:
        split_path = entry.split_file(split)
        if split_path is None:
            raise ValueError(
                f"dataset {entry.name!r} has no fixed {split!r} split in its source "
                f"(available splits: {list(entry.splits) or 'none'}); split it yourself"
            )
        files = [split_path]
    else:
        union = entry.split_file(None)
        if union is not None:
            files = [union]
        elif entry.splits == ("train", "test"):
            # Both exist: `splits` lists the splits that have a file.
            files = [f for f in (entry.split_file("train"), entry.split_file("test")) if f is not None]
        else:
            raise DatasetFormatError(f"MANIFEST lists no ARFF file for {entry.name!r}")

    parts = [_read_file(f, xml=xml, fmt=fmt, nominal=nominal) for f in files]
    X, Y, fn, ln, sources, fmt = parts[0]
    if len(parts) > 1:
        # train + test: the halves must describe the same attributes.
        for other in parts[1:]:
            if other[2] != fn or other[3] != ln:
                raise DatasetFormatError(
                    f"train and test files of {entry.name!r} have different attributes",
                    path=other[4][0],
                )
        Xs = [p[0] for p in parts]
        X = sp.vstack(Xs, format="csr") if sp.issparse(X) else np.vstack(Xs)
        Y = np.vstack([p[1] for p in parts])
        sources = [p[4][0] for p in parts] + ([str(xml)] if xml is not None else [])
    if return_X_y:
        return X, Y
    return Bunch(
        X=X,
        Y=Y,
        feature_names=fn,
        label_names=ln,
        name=entry.name,
        source=sources,
        format=fmt,
        split=split,
    )
