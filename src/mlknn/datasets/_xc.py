"""Extreme Classification Repository text format and LIBSVM multi-label files.

Formats
-------
``xc`` (the Extreme Classification Repository's ``*_data.txt`` /
``train.txt`` / ``test.txt``, http://manikvarma.org/downloads/XC/XMLRepository.html)::

    n d q                      <- header: rows, features, labels
    l1,l2,... f:v f:v ...      <- one row per line
     f:v f:v ...               <- a row without labels (the label field is empty)

``libsvm`` (LIBSVM's multi-label datasets, scikit-learn's
``load_svmlight_file(multilabel=True)``): the same rows without the header;
``# ...`` ends a line with a comment.

Indices
-------
* Labels are 0-based in both formats (the repository's and LIBSVM's
  multi-label files) and must lie in ``[0, q)``.
* Feature indices: the repository's files are 0-based; LIBSVM files are
  traditionally 1-based. ``zero_based="auto"`` (default) decides per file:
  1-based when no index 0 appears *and* (``xc``) some index equals ``d``, or
  (``libsvm``) always when no index 0 appears (scikit-learn's rule). Pass
  ``True`` / ``False`` to force it.

A row with no labels and/or no features is valid; a whitespace-only line is
such an empty row, except at the end of the file, where blank lines are
ignored. A line that starts with ``#`` is a comment, not a row. Errors raise
:class:`DatasetFormatError` naming the file and 1-based line: malformed header,
malformed token, label or feature index out of range, duplicate index in a row,
a value that is not a finite number (float32), a row count that differs from
the header's ``n``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Literal, NoReturn, TypeAlias, overload

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray
from sklearn.utils import Bunch

from ..utils._typing import SparseMatrix
from ._arff_errors import DatasetFormatError
from ._arff_tokens import _GZIP_ERRORS, _open_text

__all__ = ["load_xc"]

_HEADER_RE = re.compile(r"\s*(\d+)\s+(\d+)\s+(\d+)\s*")
_LABELS_RE = re.compile(r"\d+(?:,\d+)*")
# Feature tokens after the label field. ``\s+`` and ``[^\s:]+`` are disjoint, so
# the match is linear in the line length (no backtracking blow-up).
_FEATURES_RE = re.compile(r"(?:\s+\d+:[^\s:]+)*\s*")
_TOKEN_RE = re.compile(r"\d+:[^\s:]+")
# Lines parsed per block: the numbers of a block are converted at once.
_BLOCK_LINES = 20_000
_SNIPPET = 60

_I64: TypeAlias = NDArray[np.int64]
#: What one block (and the whole file) converts to: labels, labels per row, feature
#: indices, feature values, features per row.
_Arrays: TypeAlias = tuple[_I64, _I64, _I64, NDArray[np.float32], _I64]


def _snippet(text: str) -> str:
    text = text.strip()
    return repr(text if len(text) <= _SNIPPET else text[:_SNIPPET] + "...")


def _split_row(line: str, path: Path, lineno: int) -> tuple[str, str]:
    """(label field, feature field) of a row; raises on a malformed token."""
    body = line.split("#", 1)[0].rstrip()
    first = body.split(None, 1)[0] if body and not body[0].isspace() else ""
    if ":" in first:  # no label field: the row starts with a feature
        first = ""
    labels, feats = first, body[len(first) :]
    if labels and not _LABELS_RE.fullmatch(labels):
        raise DatasetFormatError(
            f"malformed label field {_snippet(labels)}: expected comma-separated "
            "non-negative integers (l1,l2,...)",
            path=path,
            line=lineno,
        )
    if not _FEATURES_RE.fullmatch(" " + feats):
        bad = next((t for t in feats.split() if not _TOKEN_RE.fullmatch(t)), feats)
        raise DatasetFormatError(
            f"malformed feature token {_snippet(bad)}: expected index:value with a "
            "non-negative integer index",
            path=path,
            line=lineno,
        )
    return labels, feats


class _Block:
    """The rows of up to _BLOCK_LINES lines, numbers still as text."""

    def __init__(self) -> None:
        self.linenos: list[int] = []
        self.labels: list[str] = []
        self.feats: list[str] = []

    def add(self, lineno: int, labels: str, feats: str) -> None:
        self.linenos.append(lineno)
        self.labels.append(labels)
        self.feats.append(feats)

    def convert(self, path: Path) -> _Arrays:
        """Label and feature arrays of the block, with per-row counts."""
        lab_counts = [0 if not s else s.count(",") + 1 for s in self.labels]
        feat_counts = [s.count(":") for s in self.feats]
        lab = ",".join(s for s in self.labels if s)
        parts = " ".join(self.feats).replace(":", " ").split()
        try:
            labels = (
                np.array(lab.split(","), dtype=np.int64)
                if lab
                else np.zeros(0, np.int64)
            )
            idx = np.array(parts[0::2], dtype=np.int64)
            with np.errstate(over="ignore"):
                val = np.array(parts[1::2], dtype=np.float64).astype(np.float32)
        except (ValueError, OverflowError):
            self._locate_bad_number(path)
            raise  # not reached: _locate_bad_number raises
        if not np.isfinite(val).all():
            bad = int(np.flatnonzero(~np.isfinite(val))[0])
            row = _row_of(feat_counts, bad)
            raise DatasetFormatError(
                f"feature value {parts[1::2][bad]!r} is not a finite float32 number",
                path=path,
                line=self.linenos[row],
            )
        return labels, np.array(lab_counts), idx, val, np.array(feat_counts)

    def _locate_bad_number(self, path: Path) -> NoReturn:
        """Raise naming the line of the first number that numpy could not convert."""
        for lineno, labels, feats in zip(self.linenos, self.labels, self.feats):
            for lab in labels.split(",") if labels else ():
                if int(lab) >= 2**63:
                    raise DatasetFormatError(
                        f"label {lab[:30]} is too large", path=path, line=lineno
                    )
            for tok in feats.split():
                i, _, v = tok.partition(":")
                if int(i) >= 2**63:
                    raise DatasetFormatError(
                        f"feature index {i[:30]} is too large", path=path, line=lineno
                    )
                try:
                    float(v)
                except ValueError:
                    raise DatasetFormatError(
                        f"bad number in feature token {_snippet(tok)}",
                        path=path,
                        line=lineno,
                    ) from None
        raise DatasetFormatError("a number could not be read", path=path)


def _row_of(counts: ArrayLike, position: int | np.integer[Any]) -> int:
    """Row holding flat entry ``position`` given per-row counts."""
    return int(np.searchsorted(np.cumsum(counts), position, side="right"))


def _check_range(
    what: str,
    values: _I64,
    counts: _I64,
    limit: int,
    linenos: list[int],
    path: Path,
    hint: str = "",
) -> None:
    bad = np.flatnonzero(values >= limit)
    if bad.size:
        row = _row_of(counts, bad[0])
        raise DatasetFormatError(
            f"{what} {int(values[bad[0]])} out of range [0, {limit}){hint}",
            path=path,
            line=linenos[row],
        )


def _check_duplicates(what: str, rows: _I64, cols: _I64, linenos: list[int], path: Path) -> None:
    """No (row, index) pair twice. ``rows`` ascending."""
    if cols.size < 2:
        return
    order = np.lexsort((cols, rows))
    r, c = rows[order], cols[order]
    dup = np.flatnonzero((r[1:] == r[:-1]) & (c[1:] == c[:-1]))
    if dup.size:
        raise DatasetFormatError(
            f"{what} {int(c[dup[0]])} appears twice in the row",
            path=path,
            line=linenos[int(r[dup[0]])],
        )


def _read_rows(
    path: Path, fmt: str
) -> tuple[tuple[int, int, int] | None, list[int], _I64, _I64, _I64, NDArray[np.float32], _I64]:
    """Header (or None) and the rows' arrays; line numbers kept for the errors."""
    header: tuple[int, int, int] | None = None
    linenos: list[int] = []
    labs: list[_I64] = []
    lab_counts: list[_I64] = []
    idxs: list[_I64] = []
    vals: list[NDArray[np.float32]] = []
    feat_counts: list[_I64] = []
    block = _Block()
    pending_blank: list[int] = []  # blank lines are rows only if a row follows them

    def flush() -> None:
        nonlocal block
        if block.linenos:
            lab, lc, idx, val, fc = block.convert(path)
            linenos.extend(block.linenos)
            labs.append(lab)
            lab_counts.append(lc)
            idxs.append(idx)
            vals.append(val)
            feat_counts.append(fc)
        block = _Block()

    try:
        with _open_text(path, "utf-8") as fh:
            for lineno, line in enumerate(fh, start=1):
                line = line.rstrip("\r\n")
                if lineno == 1:
                    line = line.lstrip("\ufeff")
                    m = _HEADER_RE.fullmatch(line)
                    if fmt == "xc" or (fmt == "auto" and m):
                        if not m:
                            raise DatasetFormatError(
                                f"malformed header {_snippet(line)}: the Extreme Classification "
                                "format starts with 'n_samples n_features n_labels'",
                                path=path,
                                line=1,
                            )
                        n_rows, n_cols, n_labs = m.groups()
                        header = (int(n_rows), int(n_cols), int(n_labs))
                        continue
                if line.lstrip().startswith("#"):  # a comment line is not a row
                    continue
                if not line.split("#", 1)[0].strip():
                    pending_blank.append(lineno)
                    continue
                for b in pending_blank:
                    block.add(b, "", "")
                pending_blank = []
                block.add(lineno, *_split_row(line, path, lineno))
                if len(block.linenos) >= _BLOCK_LINES:
                    flush()
            flush()
    except UnicodeDecodeError as exc:
        raise DatasetFormatError(f"not UTF-8 text ({exc.reason})", path=path) from None
    except _GZIP_ERRORS as exc:
        raise DatasetFormatError(
            f"corrupt or truncated gzip stream ({exc})", path=path
        ) from None

    def cat(parts: list[NDArray[Any]], dtype: type[np.generic]) -> NDArray[Any]:
        return np.concatenate(parts) if parts else np.zeros(0, dtype)

    return (
        header,
        linenos,
        cat(labs, np.int64),
        cat(lab_counts, np.int64),
        cat(idxs, np.int64),
        cat(vals, np.float32),
        cat(feat_counts, np.int64),
    )


@overload
def load_xc(
    path: str | os.PathLike[str],
    *,
    format: Literal["auto", "xc", "libsvm"] = ...,
    zero_based: Literal["auto"] | bool = ...,
    n_features: int | None = ...,
    n_labels: int | None = ...,
    return_X_y: Literal[False] = ...,
) -> Bunch: ...
@overload
def load_xc(
    path: str | os.PathLike[str],
    *,
    format: Literal["auto", "xc", "libsvm"] = ...,
    zero_based: Literal["auto"] | bool = ...,
    n_features: int | None = ...,
    n_labels: int | None = ...,
    return_X_y: Literal[True],
) -> tuple[SparseMatrix, SparseMatrix]: ...
@overload
def load_xc(
    path: str | os.PathLike[str],
    *,
    format: Literal["auto", "xc", "libsvm"] = ...,
    zero_based: Literal["auto"] | bool = ...,
    n_features: int | None = ...,
    n_labels: int | None = ...,
    return_X_y: bool = ...,
) -> Bunch | tuple[SparseMatrix, SparseMatrix]: ...
def load_xc(
    path: str | os.PathLike[str],
    *,
    format: Literal["auto", "xc", "libsvm"] = "auto",
    zero_based: Literal["auto"] | bool = "auto",
    n_features: int | None = None,
    n_labels: int | None = None,
    return_X_y: bool = False,
) -> Bunch | tuple[SparseMatrix, SparseMatrix]:
    """Load an Extreme Classification Repository or LIBSVM multi-label text file.

    Parameters
    ----------
    path : str or path-like
        The file (plain text or gzip, recognised by its magic bytes).
    format : {'auto', 'xc', 'libsvm'}, default='auto'
        ``'xc'``: a header line ``n d q`` first (required). ``'libsvm'``: no
        header. ``'auto'``: ``'xc'`` when the first line is three integers.
    zero_based : {'auto', True, False}, default='auto'
        Whether feature indices start at 0; see the module docstring for the
        ``'auto'`` rule. Labels are always 0-based.
    n_features, n_labels : int, default=None
        Number of columns of X / Y. For ``xc`` they default to the header's
        and, when given, must equal it. For ``libsvm`` they default to the
        largest index + 1.
    return_X_y : bool, default=False
        Return ``(X, Y)`` instead of a Bunch.

    Returns
    -------
    data : sklearn.utils.Bunch
        ``X``: CSR ``scipy.sparse.csr_array`` float32 (n, d), explicit zeros
        dropped. ``Y``: CSR ``csr_array`` uint8 (n, q). ``feature_names``
        (``f0``...), ``label_names`` (``l0``...), ``name`` (file stem),
        ``source`` ([path]), ``format`` ('xc' or 'libsvm'), ``zero_based``
        (the indexing that was used), ``split`` (None).
    (X, Y) : tuple
        If ``return_X_y`` is True.

    Raises
    ------
    DatasetFormatError
        A malformed file; the message names the file and the line.

    See Also
    --------
    load : Dispatches here for Extreme Classification Repository files.
    make_extreme_multilabel : Random data of the same kind, no files needed.

    References
    ----------
    K. Bhatia et al., The Extreme Classification Repository,
    http://manikvarma.org/downloads/XC/XMLRepository.html.

    Examples
    --------
    >>> import tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> p = os.path.join(d, "tiny.txt")
    >>> _ = open(p, "w").write("3 4 5\\n0,3 0:1.5 2:1\\n 1:2\\n4 3:0.5\\n")
    >>> data = load_xc(p)
    >>> data.X.shape, data.Y.shape, data.Y.nnz, data.format
    ((3, 4), (3, 5), 3, 'xc')
    """
    if format not in ("auto", "xc", "libsvm"):
        raise ValueError(f"format must be 'auto', 'xc' or 'libsvm'; got {format!r}.")
    if zero_based not in ("auto", True, False):
        raise ValueError(
            f"zero_based must be 'auto', True or False; got {zero_based!r}."
        )
    for name, v in (("n_features", n_features), ("n_labels", n_labels)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
            raise ValueError(f"{name} must be a positive int or None; got {v!r}.")
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"file {str(path)!r} not found")
    d: int | None
    q: int | None
    header, linenos, lab, lab_counts, idx, val, feat_counts = _read_rows(path, format)
    fmt = "xc" if header is not None else "libsvm"
    n = len(linenos)

    if header is not None:
        n_hdr, d, q = header
        if n != n_hdr:
            raise DatasetFormatError(
                f"the header declares {n_hdr} rows but the file has {n}",
                path=path,
                line=linenos[n_hdr] if n > n_hdr else None,
            )
        for name, given, declared in (
            ("n_features", n_features, d),
            ("n_labels", n_labels, q),
        ):
            if given is not None and given != declared:
                raise ValueError(
                    f"{name}={given} differs from the header's {declared} in {path}."
                )
    else:
        d = n_features
        q = n_labels

    if zero_based == "auto":
        has_zero = bool(idx.size) and bool((idx == 0).any())
        if fmt == "xc":
            zero_based = has_zero or not (idx.size and (idx == d).any())
        else:
            zero_based = has_zero or not idx.size
    if not zero_based:
        if idx.size and (idx == 0).any():
            row = _row_of(feat_counts, int(np.flatnonzero(idx == 0)[0]))
            raise DatasetFormatError(
                "feature index 0 in a file read as 1-based (zero_based=False)",
                path=path,
                line=linenos[row],
            )
        idx = idx - 1
    if d is None:
        d = int(idx.max()) + 1 if idx.size else 0
    if q is None:
        q = int(lab.max()) + 1 if lab.size else 0
    base_hint = "" if zero_based else " after 1-based indices were shifted to 0-based"
    _check_range("feature index", idx, feat_counts, d, linenos, path, base_hint)
    _check_range("label", lab, lab_counts, q, linenos, path)

    frow = np.repeat(np.arange(n), feat_counts)
    lrow = np.repeat(np.arange(n), lab_counts)
    _check_duplicates("feature index", frow, idx, linenos, path)
    _check_duplicates("label", lrow, lab, linenos, path)

    X = sp.csr_array((val, (frow, idx)), shape=(n, d), dtype=np.float32)
    X.eliminate_zeros()
    X.sort_indices()
    Y = sp.csr_array(
        (np.ones(lab.size, np.uint8), (lrow, lab)), shape=(n, q), dtype=np.uint8
    )
    Y.sort_indices()
    if return_X_y:
        return X, Y
    return Bunch(
        X=X,
        Y=Y,
        feature_names=[f"f{j}" for j in range(d)],
        label_names=[f"l{j}" for j in range(q)],
        name=path.name.split(".")[0],
        source=[str(path)],
        format=fmt,
        zero_based=bool(zero_based),
        split=None,
    )
