"""Reading a delimited text table (CSV / TSV) with named or counted label columns: :func:`load_csv`."""

from __future__ import annotations

import csv
import gzip
import io
from collections.abc import Sequence
from os import PathLike
from pathlib import Path
from typing import TypeAlias

import numpy as np
from numpy.typing import NDArray
from sklearn.utils import Bunch

from ._arff import DatasetFormatError

_StrPath: TypeAlias = str | PathLike[str]

#: The suffixes read as delimited text (``.gz`` compressed too).
CSV_SUFFIXES = (".csv", ".tsv", ".csv.gz", ".tsv.gz")


def _open_text(path: Path) -> io.TextIOBase:
    if path.name.lower().endswith(".gz"):
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", newline="")
    return open(path, encoding="utf-8", newline="")  # noqa: SIM115 - closed by the caller's with


def _label_columns(header: list[str], labels: int | str | Sequence[str], path: Path) -> list[int]:
    """Indices of the label columns: a count (MEKA's sign convention) or names."""
    d = len(header)
    if isinstance(labels, (int, np.integer)) and not isinstance(labels, bool):
        q = int(labels)
        if q == 0 or abs(q) >= d:
            raise ValueError(
                f"labels must be a non-zero count smaller than the number of columns ({d}) of {str(path)!r}: "
                f"q > 0 takes the first q columns, q < 0 the last |q|. Got {labels!r} instead."
            )
        return list(range(q)) if q > 0 else list(range(d + q, d))
    if isinstance(labels, bool):
        raise ValueError(f"labels must be a count or column names. Got {labels!r} instead.")
    names = [s.strip() for s in labels.split(",")] if isinstance(labels, str) else [str(s) for s in labels]
    position = {name: j for j, name in enumerate(header)}
    missing = [name for name in names if name not in position]
    if missing:
        import difflib

        hints = []
        for name in missing:
            close = difflib.get_close_matches(name, header, n=1, cutoff=0.6)
            hints.append(f"{name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
        raise ValueError(f"labels: no column {', '.join(hints)} in {str(path)!r}; its columns are {header}.")
    if len(set(names)) != len(names) or not names or len(names) >= d:
        raise ValueError(
            f"labels must name distinct columns of {str(path)!r} and leave at least one feature column. "
            f"Got {names!r} instead."
        )
    return [position[name] for name in names]


def _numeric(cells: NDArray[np.str_], columns: list[int], header: list[str], path: Path) -> NDArray[np.float64]:
    """The given columns as float64, refusing empty cells and text (naming row and column)."""
    block = np.char.strip(cells[:, columns])
    try:
        out = block.astype(np.float64)
    except ValueError:
        out = None
    if out is not None and np.isfinite(out).all():
        return out
    # The error path only: find the first offending cell to name it.
    for (i, jj), cell in np.ndenumerate(block):
        try:
            ok = np.isfinite(float(cell))
        except ValueError:
            ok = False
        if not ok:
            raise DatasetFormatError(
                f"column {header[columns[jj]]!r}, data row {i + 1}: {str(cell)!r} is not a finite number "
                "(kNN distances need every feature; drop or impute missing values first)",
                path=path,
            )
    raise AssertionError("unreachable: a block that does not convert has a bad cell")  # pragma: no cover


def load_csv(
    path: _StrPath,
    labels: int | str | Sequence[str],
    *,
    delimiter: str | None = None,
    return_X_y: bool = False,
) -> Bunch | tuple[NDArray[np.float64], NDArray[np.uint8]]:
    """Load a multi-label table from a CSV or TSV file with a header row.

    Parameters
    ----------
    path : str or path-like
        ``.csv`` or ``.tsv`` file (``.gz`` compressed too), UTF-8, one header row of
        column names, then one row per instance.
    labels : int, str or sequence of str
        Which columns are the labels: their names (a list, or one comma-separated
        string), or a count in MEKA's convention: q > 0 the first q columns, q < 0
        the last ``|q|``. Every other column is a numeric feature.
    delimiter : str, default=None
        Column separator; None: a tab for ``.tsv``, else a comma.
    return_X_y : bool, default=False
        Return ``(X, Y)`` instead of a Bunch.

    Returns
    -------
    data : sklearn.utils.Bunch
        ``X`` float64 (n, d); ``Y`` uint8 (n, q) of 0/1, its columns in the order
        ``labels`` names them (file order for a count);
        ``feature_names``, ``label_names``; ``name`` (the file stem), ``source``,
        ``format`` (``"csv"``) and ``split`` (None), as :func:`load` gives.
    (X, Y) : tuple
        If ``return_X_y`` is True.

    Raises
    ------
    ValueError
        ``labels`` names no column of the file, or counts none or all of them.
    DatasetFormatError
        A row of another length, an empty or non-numeric feature cell, or a label
        cell other than 0 and 1 (the message names the column and row).

    See Also
    --------
    load : Reads a ``.csv`` / ``.tsv`` path through this function (``labels=``).
    save_arff : Write X and Y as MULAN or MEKA ARFF.

    Examples
    --------
    >>> import os, tempfile
    >>> from mlknn.datasets import load_csv
    >>> path = os.path.join(tempfile.mkdtemp(), "toy.csv")
    >>> with open(path, "w") as f:
    ...     _ = f.write("x0,x1,sports,news\\n0.5,1.0,1,0\\n0.1,0.2,0,1\\n")
    >>> data = load_csv(path, labels=["sports", "news"])
    >>> data.X.shape, data.Y.tolist(), data.label_names
    ((2, 2), [[1, 0], [0, 1]], ['sports', 'news'])
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"CSV file {str(path)!r} not found")
    if delimiter is None:
        delimiter = "\t" if path.name.lower().endswith((".tsv", ".tsv.gz")) else ","
    with _open_text(path) as fh:
        rows = [row for row in csv.reader(fh, delimiter=delimiter) if row and any(c.strip() for c in row)]
    if len(rows) < 2:
        raise DatasetFormatError("needs a header row of column names and at least one data row", path=path)
    header = [name.strip() for name in rows[0]]
    data = rows[1:]
    bad = next((i for i, row in enumerate(data) if len(row) != len(header)), None)
    if bad is not None:
        raise DatasetFormatError(
            f"data row {bad + 1} has {len(data[bad])} cells, the header {len(header)} "
            f"(is the delimiter {delimiter!r} right?)",
            path=path,
        )
    label_idx = _label_columns(header, labels, path)
    feature_idx = [j for j in range(len(header)) if j not in set(label_idx)]
    cells = np.array(data, dtype=str)
    X = _numeric(cells, feature_idx, header, path)
    Y_values = _numeric(cells, label_idx, header, path)
    not_binary = np.argwhere((Y_values != 0) & (Y_values != 1))
    if not_binary.size:
        i, jj = not_binary[0]
        raise DatasetFormatError(
            f"label column {header[label_idx[jj]]!r}, data row {i + 1}: {float(Y_values[i, jj])!r} is not 0 or 1",
            path=path,
        )
    Y = Y_values.astype(np.uint8)
    if return_X_y:
        return X, Y
    stem = path.name
    for suffix in CSV_SUFFIXES:
        if stem.lower().endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    return Bunch(
        X=X,
        Y=Y,
        feature_names=[header[j] for j in feature_idx],
        label_names=[header[j] for j in label_idx],
        name=stem,
        source=[str(path)],
        format="csv",
        split=None,
    )
