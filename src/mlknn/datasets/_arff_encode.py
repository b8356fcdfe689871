"""Encoding decoded ARFF attributes into the feature matrix X and the label matrix Y.

Nominal features (documented in :func:`mlknn.datasets.load`):

* two values: one 0/1 column. ``{0,1}`` (any order) keeps the numbers; any other
  pair ``{a,b}`` gives 0 for the first declared value and 1 for the second (the
  column is named ``attr=b``). The first value is 0 because a sparse ARFF row
  omits exactly the attributes at their first value, so the sparse file stays
  sparse. A mismatch adds 1 to the squared Euclidean distance, as a 0/1 feature.
* three or more values: one column per declared value, named ``attr=value``,
  either ``"weka"`` (the default: the indicator scaled by 1/sqrt(2), so that a
  mismatch adds 2 x 1/2 = 1 to the squared distance, which is Weka's and MULAN's
  nominal distance, the one their kNN implementations use) or ``"onehot"`` (plain
  indicators: a mismatch adds 2, twice the weight of a numeric feature in [0, 1]).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Literal, NoReturn, TypeAlias

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ..utils._typing import IntArray, SparseMatrix
from ._arff_errors import DatasetFormatError, unescape_name
from ._arff_tokens import ArffContents, ArffType, _is_string

#: A nominal encoding of :func:`encode` (one of :data:`NOMINAL_ENCODINGS`).
NominalEncoding: TypeAlias = Literal["weka", "onehot"]
#: A block of X: ``("col", rows, values)`` for one column, or
#: ``("onehot", category per row, number of categories, value)`` for an indicator block.
_ColBlock: TypeAlias = tuple[Literal["col"], NDArray[np.int64], NDArray[np.float64]]
_OnehotBlock: TypeAlias = tuple[Literal["onehot"], NDArray[np.int64], int, float]
_Block: TypeAlias = _ColBlock | _OnehotBlock

#: Encodings of nominal features with three or more values; the first is the default.
NOMINAL_ENCODINGS = ("weka", "onehot")
_ONEHOT_VALUE = {"weka": 1.0 / np.sqrt(2.0), "onehot": 1.0}
_NUMERIC_TYPES = ("NUMERIC", "REAL", "INTEGER")


def _binary_domain(t: ArffType) -> NDArray[np.float64] | None:
    """For a nominal domain equal to {0, 1} (in any order), the float value of
    each index; else None."""
    if isinstance(t, list) and len(t) == 2 and sorted(t) == ["0", "1"]:
        return np.array([float(t[0]), float(t[1])])
    return None


def _two_valued_domain(t: ArffType) -> NDArray[np.float64] | None:
    """For any two-valued nominal domain, the float value of each index: the
    numbers for ``{0,1}``/``{1,0}``, else 0 for the first declared value, 1 for
    the second."""
    dom = _binary_domain(t)
    if dom is None and isinstance(t, list) and len(t) == 2:
        dom = np.array([0.0, 1.0])
    return dom


def _raise_missing(
    contents: ArffContents, row: int | np.integer, attr: int, what: str, value: float = np.nan
) -> NoReturn:
    line = contents.line_of_row(int(row))
    if not np.isnan(value):
        # 'inf', or a number too large for float64 such as 1e999.
        raise DatasetFormatError(
            f"non-finite value {value!r} in {what} "
            f"{unescape_name(contents.names[attr])!r} (data row {int(row) + 1}); "
            "infinite values would silently break distance computations",
            path=contents.path,
            line=line,
        )
    raise DatasetFormatError(
        f"missing value '?' in {what} {unescape_name(contents.names[attr])!r} "
        f"(data row {int(row) + 1}); missing values are not supported because "
        "a NaN would silently break distance computations - impute the file first",
        path=contents.path,
        line=line,
    )


class _Columns:
    """Uniform per-attribute access to dense or sparse decoded data."""

    def __init__(self, contents: ArffContents) -> None:
        self.c = contents
        self.n = contents.n
        if contents.sparse:
            # read_arff sets the triplets of a sparse file (and `dense` of a dense one).
            assert contents.rows is not None and contents.cols is not None
            assert contents.vals is not None
            order = np.argsort(contents.cols, kind="stable")
            self._rows = contents.rows[order]
            self._vals = contents.vals[order]
            self._cols = contents.cols[order]
            m = len(contents.names)
            self._ptr = np.searchsorted(self._cols, np.arange(m + 1))

    def explicit(self, j: int) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """(rows, values) stored for attribute j (all rows when dense)."""
        if self.c.sparse:
            a, b = self._ptr[j], self._ptr[j + 1]
            return self._rows[a:b], self._vals[a:b]
        assert self.c.dense is not None
        return np.arange(self.n), self.c.dense[:, j]

    def full(self, j: int, default: float) -> NDArray[np.float64]:
        """Attribute j as a length-n vector; sparse omissions get ``default``."""
        if not self.c.sparse:
            assert self.c.dense is not None
            return self.c.dense[:, j]
        out = np.full(self.n, default, dtype=np.float64)
        r, v = self.explicit(j)
        out[r] = v
        return out


def _encode_labels(
    c: ArffContents, cols: _Columns, label_idx: Sequence[int] | IntArray, names: list[str]
) -> NDArray[np.uint8]:
    """Y (n, q) uint8 from the label attributes (nominal {0,1} or numeric 0/1)."""
    n = c.n
    Y = np.zeros((n, len(label_idx)), dtype=np.uint8)
    for k, j in enumerate(label_idx):
        t = c.types[j]
        dom = _binary_domain(t)
        if dom is None and not (isinstance(t, str) and t in _NUMERIC_TYPES):
            raise DatasetFormatError(
                f"label attribute {names[j]!r} has type {t!r}; labels must be "
                "nominal {0,1} or numeric 0/1",
                path=c.path,
            )
        r, v = cols.explicit(j)
        bad = np.isnan(v)
        if bad.any():
            _raise_missing(c, r[np.argmax(bad)], j, "label")
        default = 0.0
        if dom is not None:
            v = dom[v.astype(np.int64)]
            default = dom[0]
        if not np.isin(v, (0.0, 1.0)).all():
            raise DatasetFormatError(
                f"label attribute {names[j]!r} has values other than 0/1", path=c.path
            )
        if c.sparse and default != 0.0:
            full = np.full(n, default)
            full[r] = v
            Y[:, k] = full.astype(np.uint8)
        else:
            Y[r, k] = v.astype(np.uint8)
    return Y


def _warn_dropped(c: ArffContents, what: str) -> None:
    warnings.warn(f"{c.path}: {what}", UserWarning, stacklevel=5)


def _onehot_block(
    c: ArffContents, cols: _Columns, j: int, names: list[str], value: float
) -> tuple[_OnehotBlock | None, list[str]]:
    """('onehot', category per row, k, value) for a nominal attribute with >= 3 values,
    or None for an identifier (a distinct value on every row)."""
    t = c.types[j]
    # Category index per row (sparse omissions are the first declared value, as the
    # ARFF spec says).
    raw = cols.full(j, 0.0)
    if np.isnan(raw).any():
        _raise_missing(c, np.flatnonzero(np.isnan(raw))[0], j, "feature")
    cat = raw.astype(np.int64)
    if c.n >= 3 and np.unique(cat).size == c.n:
        _warn_dropped(c, f"nominal attribute {names[j]!r} takes a distinct value on every row (an identifier) and was dropped")
        return None, []
    fnames = [f"{names[j]}={unescape_name(str(val))}" for val in t]
    return ("onehot", cat, len(t), value), fnames


def _column_block(
    c: ArffContents, cols: _Columns, j: int, names: list[str]
) -> tuple[_ColBlock, list[str]]:
    """('col', rows, values) for a numeric or two-valued nominal attribute."""
    t = c.types[j]
    dom = _two_valued_domain(t) if isinstance(t, list) else None
    r, v = cols.explicit(j)
    bad = ~np.isfinite(v)
    if bad.any():
        first = np.argmax(bad)
        _raise_missing(c, r[first], j, "feature", float(v[first]))
    name = names[j]
    default = 0.0
    if dom is not None:
        v = dom[v.astype(np.int64)]
        default = dom[0]
        if _binary_domain(t) is None:
            name = f"{names[j]}={unescape_name(str(t[1]))}"
    if c.sparse and default != 0.0:
        # e.g. a {1,0} attribute: an omitted value means 1.
        full = np.full(c.n, default)
        full[r] = v
        r, v = np.arange(c.n), full
    return ("col", r, v), [name]


def _feature_blocks(
    c: ArffContents,
    cols: _Columns,
    label_idx: Sequence[int] | IntArray,
    names: list[str],
    nominal: NominalEncoding,
) -> tuple[list[_Block], list[str]]:
    """One block per kept feature attribute, with the output column names."""
    label_set = {int(j) for j in label_idx}
    blocks: list[_Block] = []
    feature_names: list[str] = []
    for j in range(len(c.names)):
        if j in label_set:
            continue
        t = c.types[j]
        if _is_string(t):
            _warn_dropped(c, f"string attribute {names[j]!r} dropped (not a feature usable by distance-based methods)")
            continue
        block: _Block | None
        if isinstance(t, list) and len(t) != 2:
            block, fnames = _onehot_block(c, cols, j, names, _ONEHOT_VALUE[nominal])
        else:
            block, fnames = _column_block(c, cols, j, names)
        if block is not None:
            blocks.append(block)
            feature_names.extend(fnames)
    return blocks, feature_names


def _assemble(blocks: list[_Block], n: int, sparse: bool) -> NDArray[np.float64] | SparseMatrix:
    """X from the blocks: CSR float64 for a sparse file, else a dense float64 array."""
    widths = [b[2] if b[0] == "onehot" else 1 for b in blocks]
    starts = np.concatenate([[0], np.cumsum(widths)]).astype(np.int64)
    d = int(starts[-1])
    if not sparse:
        X = np.zeros((n, d), dtype=np.float64)
        for b, out in zip(blocks, starts):
            if b[0] == "col":
                X[:, out] = b[2]
            else:
                X[np.arange(n), out + b[1]] = b[3]
        return X
    rr_parts: list[NDArray[np.int64]] = []
    cc_parts: list[NDArray[np.int64]] = []
    vv_parts: list[NDArray[np.float64]] = []
    for b, out in zip(blocks, starts):
        if b[0] == "col":
            rr_parts.append(b[1])
            cc_parts.append(np.full(len(b[1]), out, dtype=np.int64))
            vv_parts.append(b[2])
        else:
            rr_parts.append(np.arange(n))
            cc_parts.append(out + b[1])
            vv_parts.append(np.full(n, b[3]))
    rr: NDArray[np.int64]
    cc: NDArray[np.int64]
    vv: NDArray[np.float64]
    if rr_parts:
        rr, cc, vv = np.concatenate(rr_parts), np.concatenate(cc_parts), np.concatenate(vv_parts)
    else:
        rr = cc = np.empty(0, dtype=np.int64)
        vv = np.empty(0)
    X = sp.csr_matrix((vv, (rr, cc)), shape=(n, d), dtype=np.float64)
    X.sum_duplicates()
    X.eliminate_zeros()
    X.sort_indices()
    return X


def encode(
    contents: ArffContents,
    label_idx: Sequence[int] | IntArray,
    *,
    nominal: NominalEncoding = "weka",
) -> tuple[NDArray[np.float64] | SparseMatrix, NDArray[np.uint8], list[str], list[str]]:
    """Split decoded ARFF contents into features ``X`` and labels ``Y``.

    Feature encoding (documented choices, see :func:`mlknn.datasets.load` and
    this module's docstring):

    * numeric (``numeric``/``real``/``integer``): as is;
    * two-valued nominal: one 0/1 column (``{0,1}`` as numbers; otherwise the
      second declared value is 1, column ``attr=value``);
    * nominal with three or more values: one column per declared value,
      ``attr=value``, scaled by 1/sqrt(2) (``nominal="weka"``) or plain 0/1
      (``nominal="onehot"``);
    * ``string`` attributes, and nominal attributes that take a distinct value
      on every row (identifiers, when n >= 3), are dropped with a warning;
    * a missing value ``?`` in a kept feature or in a label raises
      :class:`DatasetFormatError`.

    Labels must be nominal ``{0,1}`` (or numeric with only 0/1 values).

    Parameters
    ----------
    contents : ArffContents
    label_idx : array of int
        Attribute indices of the labels.
    nominal : {"weka", "onehot"}, default="weka"
        Encoding of nominal features with three or more values.

    Returns
    -------
    X : ndarray of shape (n, d) or csr_matrix
        float64; CSR when the file is sparse.
    Y : ndarray of shape (n, q), dtype uint8
    feature_names, label_names : list of str
        Unescaped attribute names.
    """
    if nominal not in NOMINAL_ENCODINGS:
        raise ValueError(
            f"The 'nominal' parameter must be one of {', '.join(map(repr, NOMINAL_ENCODINGS))}. "
            f"Got {nominal!r} instead."
        )
    c = contents
    cols = _Columns(c)
    names = [unescape_name(s) for s in c.names]
    Y = _encode_labels(c, cols, label_idx, names)
    blocks, feature_names = _feature_blocks(c, cols, label_idx, names, nominal)
    X = _assemble(blocks, c.n, c.sparse)
    label_names = [names[j] for j in label_idx]
    return X, Y, feature_names, label_names
