"""Loading a dataset of the manifest by name (or any supported file by path): :func:`load`, :func:`list_datasets`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from os import PathLike
from pathlib import Path
from typing import Literal, overload

import numpy as np
import scipy.sparse as sp
from sklearn.utils import Bunch

from ..utils._typing import LabelMatrix, MatrixLike
from ._arff import DatasetFormatError
from ._arff_encode import NominalEncoding
from ._csv import CSV_SUFFIXES, load_csv
from ._manifest import DatasetEntry, data_home, read_manifest
from ._read import READ_FORMATS, _read_file, _StrPath, load_arff
from ._xc import load_xc

_SPLITS = (None, "train", "test")


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
    labels: int | str | Sequence[str] | None = ...,
) -> Bunch: ...
@overload
def load(
    name_or_path: _StrPath,
    *,
    split: Literal["train", "test"] | None = ...,
    return_X_y: Literal[True],
    data_home: _StrPath | None = ...,
    nominal: NominalEncoding = ...,
    labels: int | str | Sequence[str] | None = ...,
) -> tuple[MatrixLike, LabelMatrix]: ...
@overload
def load(
    name_or_path: _StrPath,
    *,
    split: Literal["train", "test"] | None = ...,
    return_X_y: bool = ...,
    data_home: _StrPath | None = ...,
    nominal: NominalEncoding = ...,
    labels: int | str | Sequence[str] | None = ...,
) -> Bunch | tuple[MatrixLike, LabelMatrix]: ...
def load(
    name_or_path: _StrPath,
    *,
    split: Literal["train", "test"] | None = None,
    return_X_y: bool = False,
    data_home: _StrPath | None = None,
    nominal: NominalEncoding = "weka",
    labels: int | str | Sequence[str] | None = None,
) -> Bunch | tuple[MatrixLike, LabelMatrix]:
    """Load a multi-label dataset by MANIFEST name, or a file by path (ARFF, CSV / TSV, XC).

    Parameters
    ----------
    name_or_path : str or path-like
        A name from ``MANIFEST.tsv`` (``'emotions'``, ``'tmc2007-500'``,
        case-insensitive) or a path to an ``.arff`` / ``.arff.gz`` file.
        A path is handled by :func:`load_arff` (MULAN ``.xml`` beside the
        file, else MEKA ``-C q``); a ``.txt`` / ``.svm`` / ``.libsvm``
        (optionally ``.gz``) path by :func:`load_xc` (Extreme Classification
        Repository or LIBSVM multi-label text: CSR X and Y); a ``.csv`` /
        ``.tsv`` (optionally ``.gz``) path by :func:`load_csv`, with ``labels``.
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
    labels : int, str or sequence of str, default=None
        For a CSV / TSV path only (required there): the label columns, by name
        (a list or a comma-separated string) or by count (q > 0 the first q
        columns, q < 0 the last ``|q|``); see :func:`load_csv`.

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
    is_csv = str(name_or_path).lower().endswith(CSV_SUFFIXES)
    if labels is not None and not is_csv:
        raise ValueError(
            "labels is for a CSV / TSV file (its label columns); an ARFF file says which attributes are labels "
            f"itself (MULAN .xml or MEKA -C q). Got labels={labels!r} for {str(name_or_path)!r}."
        )
    if _looks_like_path(name_or_path):
        if split is not None:
            raise ValueError("split is only meaningful for a dataset name, not a file path")
        if is_csv:
            if labels is None:
                raise ValueError(
                    f"{str(name_or_path)!r} is a CSV / TSV file: say which columns are the labels with labels= "
                    "(names, or a count: q > 0 the first q columns, q < 0 the last |q|; on the command line --labels)."
                )
            return load_csv(name_or_path, labels, return_X_y=return_X_y)
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
