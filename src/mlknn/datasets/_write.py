"""Writing X and Y as a multi-label ARFF file: :func:`save_arff` (MULAN ARFF + XML, or MEKA ARFF)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from os import PathLike
from pathlib import Path
from typing import Literal, TypeAlias
from xml.sax.saxutils import quoteattr

import numpy as np
import scipy.sparse as sp

from ..utils._typing import LabelMatrix, MatrixLike

_StrPath: TypeAlias = str | PathLike[str]

#: An ARFF name that needs no quotes: no blank, quote, comma, brace, percent or backslash.
_PLAIN_NAME = re.compile(r"^[^\s'\",{}%\\]+$")


def _arff_name(name: str) -> str:
    """An attribute or relation name as ARFF writes it (quoted and escaped when needed)."""
    if _PLAIN_NAME.match(name):
        return name
    return "'" + name.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _names(given: Sequence[str] | None, count: int, prefix: str, what: str) -> list[str]:
    if given is None:
        return [f"{prefix}{j}" for j in range(count)]
    names = [str(n) for n in given]
    if len(names) != count:
        raise ValueError(f"{what} must have one name per column ({count}). Got {len(names)} names instead.")
    return names


def _dense_rows(X: np.ndarray, Y: np.ndarray, labels_first: bool) -> list[str]:
    # repr-exact floats (17 significant digits) so that a reader gets the same bits back.
    xs = np.char.mod("%.17g", X)
    ys = np.char.mod("%d", Y)
    cells = np.hstack([ys, xs] if labels_first else [xs, ys])
    return [",".join(row) for row in cells]


def _sparse_rows(X: sp.csr_matrix, Y: sp.csr_matrix, labels_first: bool) -> list[str]:
    d, q = X.shape[1], Y.shape[1]
    x_offset, y_offset = (q, 0) if labels_first else (0, d)
    rows = []
    for i in range(X.shape[0]):
        xs = X.indices[X.indptr[i]:X.indptr[i + 1]]
        xv = X.data[X.indptr[i]:X.indptr[i + 1]]
        ys = Y.indices[Y.indptr[i]:Y.indptr[i + 1]]
        entries = [(int(j) + x_offset, f"{v:.17g}") for j, v in zip(xs, xv) if v != 0]
        entries += [(int(j) + y_offset, "1") for j in ys]
        rows.append("{" + ",".join(f"{j} {v}" for j, v in sorted(entries)) + "}")
    return rows


def save_arff(
    path: _StrPath,
    X: MatrixLike,
    Y: LabelMatrix,
    *,
    feature_names: Sequence[str] | None = None,
    label_names: Sequence[str] | None = None,
    layout: Literal["mulan", "meka"] = "mulan",
    relation: str | None = None,
) -> list[Path]:
    """Write a multi-label dataset as ARFF, in the MULAN or the MEKA layout.

    Parameters
    ----------
    path : str or path-like
        The ``.arff`` file to write (overwritten if it exists).
    X : array-like or sparse matrix of shape (n_samples, n_features)
        Numeric features. A sparse X is written as sparse ARFF (``{index value, ...}``
        rows), which MULAN, MEKA and :func:`load_arff` read.
    Y : array-like or sparse matrix of shape (n_samples, n_labels)
        0/1 label matrix.
    feature_names, label_names : sequence of str, default=None
        Attribute names; None gives ``x0, x1, ...`` and ``y0, y1, ...``. A name that
        needs it is quoted and escaped as ARFF requires.
    layout : {"mulan", "meka"}, default="mulan"
        ``"mulan"``: features then labels, and the labels' names in an XML file
        beside the ARFF (same stem, ``.xml``), as MULAN reads them. ``"meka"``: the
        labels first and ``-C q`` in the relation name, as MEKA reads them.
    relation : str, default=None
        The ``@relation`` name; None: the file stem.

    Returns
    -------
    files : list of pathlib.Path
        The files written: the ARFF, and for MULAN the XML.

    Raises
    ------
    ValueError
        X and Y of different lengths, a label other than 0 and 1, a non-finite
        feature, or a number of names that does not match the columns.

    See Also
    --------
    load_arff : Reads both layouts back (and cites the MULAN and MEKA formats).
    load_csv : Reads a CSV / TSV table, for instance to convert it.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from mlknn.datasets import load_arff, save_arff
    >>> X, Y = np.array([[0.5, 1.0], [0.1, 0.2]]), np.array([[1, 0], [0, 1]])
    >>> path = os.path.join(tempfile.mkdtemp(), "toy.arff")
    >>> [f.name for f in save_arff(path, X, Y, label_names=["sports", "news"])]
    ['toy.arff', 'toy.xml']
    >>> back = load_arff(path)
    >>> bool((back.X == X).all()), back.Y.tolist(), back.label_names
    (True, [[1, 0], [0, 1]], ['sports', 'news'])
    """
    if layout not in ("mulan", "meka"):
        raise ValueError(f"layout must be 'mulan' or 'meka'. Got {layout!r} instead.")
    path = Path(path)
    sparse = sp.issparse(X)
    Xm = sp.csr_matrix(X, dtype=np.float64) if sparse else np.asarray(X, dtype=np.float64)
    Ym = sp.csr_matrix(Y) if sp.issparse(Y) else np.asarray(Y)
    if Xm.ndim != 2 or Ym.ndim != 2 or Xm.shape[0] != Ym.shape[0]:
        raise ValueError(f"X and Y must be 2-D with one row per instance. Got X {Xm.shape} and Y {Ym.shape} instead.")
    y_values = Ym.data if sp.issparse(Ym) else Ym
    if not np.isin(y_values, (0, 1)).all():
        raise ValueError("Y must hold only 0 and 1 (a multi-label indicator matrix).")
    x_values = Xm.data if sparse else Xm
    if not np.isfinite(x_values).all():
        raise ValueError("X must be finite: ARFF has no NaN or infinity (its '?' is a missing value).")
    n, d = Xm.shape
    q = Ym.shape[1]
    fnames = _names(feature_names, d, "x", "feature_names")
    lnames = _names(label_names, q, "y", "label_names")
    if len(set(fnames + lnames)) != d + q:
        raise ValueError("feature_names and label_names must be distinct attribute names.")
    labels_first = layout == "meka"
    stem = path.name[:-5] if path.name.lower().endswith(".arff") else path.name
    name = relation if relation is not None else stem
    if labels_first:
        name = f"{name}: -C {q}"
    header = [f"@relation {_arff_name(name)}", ""]
    label_lines = [f"@attribute {_arff_name(label)} {{0,1}}" for label in lnames]
    feature_lines = [f"@attribute {_arff_name(feature)} numeric" for feature in fnames]
    header += (label_lines + feature_lines) if labels_first else (feature_lines + label_lines)
    if sparse:
        rows = _sparse_rows(Xm, sp.csr_matrix(Ym, dtype=np.uint8), labels_first)
    else:
        Yd = Ym.toarray() if sp.issparse(Ym) else np.asarray(Ym)  # type: ignore[union-attr]
        rows = _dense_rows(np.asarray(Xm), Yd.astype(np.uint8), labels_first)
    path.write_text("\n".join(header + ["", "@data"] + rows) + "\n", encoding="utf-8")
    written = [path]
    if layout == "mulan":
        xml = path.with_name(stem + ".xml")
        body = "\n".join(f"  <label name={quoteattr(label)}></label>" for label in lnames)
        xml.write_text(
            '<?xml version="1.0" encoding="utf-8"?>\n'
            f'<labels xmlns="http://mulan.sourceforge.net/labels">\n{body}\n</labels>\n',
            encoding="utf-8",
        )
        written.append(xml)
    return written
