"""Reading the text of an ARFF file: what Weka's tokenizer accepts, decoded by liac-arff.

liac-arff (``arff.ArffDecoder``) parses the ARFF text; this module adds what a
multi-label loader needs around it:

* plain or gzip-compressed files (detected by the gzip magic bytes);
* dense and sparse data sections (sparse is detected by peeking at the first
  data line, and sparse files are decoded with ``return_type=arff.COO`` and
  turned into CSR without ever building a dense ``n x d`` matrix);
* the lexical rules of Weka's ARFF reader (``weka.core.converters.ArffLoader``,
  a ``java.io.StreamTokenizer``) where liac-arff is stricter, applied line by
  line before liac-arff sees the text (:mod:`._arff_weka`);
* every parse error turned into :class:`DatasetFormatError` whose message
  names the file and the line.

liac-arff is fast enough for the largest files we ship (seconds for
``tmc2007-500.arff`` and ``Imdb.arff.gz``), so no hand-written parser is needed.
"""

from __future__ import annotations

import gzip
import io
import os
import re
import zlib
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import arff
import numpy as np
from numpy.typing import NDArray

from ._arff_errors import DatasetFormatError
from ._arff_weka import (
    _DATA_KEYWORD_RE,
    _check_header_keyword,
    _normalise_header_line,
    _strip_comment,
)

_GZIP_MAGIC = b"\x1f\x8b"

# Errors that a corrupt or truncated gzip stream can raise while it is read.
_GZIP_ERRORS = (gzip.BadGzipFile, EOFError, zlib.error)

#: An attribute type as liac-arff decodes it: ``'NUMERIC'``, ``'REAL'``, ``'STRING'``...
#: or the list of a nominal attribute's values.
ArffType = str | list[str]


# --------------------------------------------------------------------------
# Opening files
# --------------------------------------------------------------------------


def _is_gzip(path: str | os.PathLike[str]) -> bool:
    with open(path, "rb") as fh:
        return fh.read(2) == _GZIP_MAGIC


@contextmanager
def _open_text(path: str | os.PathLike[str], encoding: str) -> Iterator[io.TextIOWrapper]:
    """Open ``path`` as text, transparently decompressing gzip.

    gzip is recognised by its magic bytes, so a gzip stream loads whatever
    its name; a ``.gz`` file without the magic bytes raises
    :class:`DatasetFormatError` (a mislabelled or corrupt download).
    """
    path = Path(path)
    raw: io.BufferedIOBase
    if _is_gzip(path):
        raw = gzip.open(path, "rb")
    else:
        if path.suffix.lower() == ".gz":
            raise DatasetFormatError("not a gzip file (bad magic bytes)", path=path)
        raw = open(path, "rb")
    try:
        with io.TextIOWrapper(raw, encoding=encoding, newline=None) as text:
            yield text
    finally:
        raw.close()


class _LineCounter:
    """Iterate over the lines of a text stream, keeping track of where we are.

    liac-arff consumes lines one at a time, so ``lineno`` is the line that is
    being decoded when an exception escapes it; this gives a line number for
    errors that liac-arff itself does not annotate (gzip, decoding, ...).
    ``n_data`` counts the data rows with the same rule as liac-arff (non-blank,
    not a ``%`` comment, after ``@data``): liac-arff's COO output does not
    record the number of rows, and trailing all-zero ``{}`` rows would
    otherwise be lost.

    Every line is normalised to Weka's rules first (comments, keyword spacing,
    data on the ``@data`` line). With ``path`` given, header keywords and
    sparse rows are also checked (:func:`_check_header_keyword`,
    :func:`_check_sparse_keys`).
    """

    def __init__(self, fp: Iterable[str], path: Path | None = None) -> None:
        self._fp = fp
        self._path = path
        self.lineno = 0
        self.n_data = 0
        self.in_data = False
        self.eof = False

    def _data_row(self, line: str) -> None:
        s = line.strip()
        if s:
            self.n_data += 1
            if self._path is not None and s.startswith("{"):
                _check_sparse_keys(s, self._path, self.lineno)

    def __iter__(self) -> Iterator[str]:
        for line in self._fp:
            self.lineno += 1
            line = _strip_comment(line)
            if self.in_data:
                self._data_row(line)
                yield line
                continue
            line = _normalise_header_line(line)
            s = line.strip()
            m = _DATA_KEYWORD_RE.match(line)
            if m is not None:
                self.in_data = True
                rest = line[m.end():].strip()
                if rest:
                    # Weka reads data on the @data line itself: hand it on as a row.
                    yield "@data\n"
                    self._data_row(rest)
                    yield rest + "\n"
                    continue
            elif s and self._path is not None:
                _check_header_keyword(s, self._path, self.lineno)
            yield line
        self.eof = True


# A sparse row without quotes: every key follows '{' or ','. (An unquoted
# value cannot contain ',' or '{', so this finds exactly the keys.)
_SPARSE_KEY_RE = re.compile(r"[{,]\s*(\d+)")


def _check_sparse_keys(s: str, path: Path, lineno: int) -> None:
    """Refuse a sparse row that gives the same attribute twice.

    liac-arff reads a sparse row into a dict, so ``{3 1,3 0}`` would silently
    keep the last value (a duplicated label would flip without a trace).
    Malformed rows are left to liac-arff, which reports them.
    """
    if "'" in s or '"' in s:
        keys: list[str] = [k for k, _v in arff._RE_SPARSE_KEY_VALUES.findall(s) if k]
    else:
        keys = _SPARSE_KEY_RE.findall(s)
    if len(keys) != len(set(keys)):
        seen: set[str] = set()
        for k in keys:
            if k in seen:
                raise DatasetFormatError(
                    f"sparse data row gives attribute index {int(k)} more than once",
                    path=path,
                    line=lineno,
                )
            seen.add(k)


def _peek_is_sparse(path: Path, encoding: str) -> bool:
    """True if the first data row of ``path`` is in sparse ``{...}`` form."""
    counter: _LineCounter | None = None
    try:
        with _open_text(path, encoding) as fh:
            counter = _LineCounter(fh)
            for line in counter:
                s = line.strip()
                if s and counter.n_data:
                    return s.startswith("{")
    except _GZIP_ERRORS as exc:
        raise DatasetFormatError(
            f"corrupt gzip stream ({exc})",
            path=path,
            line=counter.lineno + 1 if counter else None,
        ) from exc
    # No data line at all (or no @data): let the full decoder report it.
    return False


def _data_line_of_row(path: Path, encoding: str, row: int) -> int | None:
    """1-based file line of the ``row``-th (0-based) data row; error path only."""
    with _open_text(path, encoding) as fh:
        counter = _LineCounter(fh)
        for _ in counter:
            if counter.n_data == row + 1:
                return counter.lineno
    return None


# --------------------------------------------------------------------------
# Decoding
# --------------------------------------------------------------------------


@dataclass
class ArffContents:
    """Raw decoded contents of one ARFF file.

    Nominal values are stored as their index in the declared domain
    (``encode_nominal=True``); missing values ``?`` are NaN. The values of
    string attributes are not kept (NaN in ``dense``, absent from the
    sparse triplets).
    """

    path: Path
    encoding: str
    relation: str
    names: list[str]  # raw attribute names, as liac-arff returns them
    types: list[ArffType]  # 'NUMERIC' / 'REAL' / 'INTEGER' / 'STRING' or list of values
    sparse: bool
    n: int
    # dense: float64 array (n, m) with string columns left NaN
    dense: NDArray[np.float64] | None = None
    # sparse: COO triplets over all non-string attributes
    rows: NDArray[np.int64] | None = None
    cols: NDArray[np.int64] | None = None
    vals: NDArray[np.float64] | None = None

    def line_of_row(self, row: int) -> int | None:
        """1-based line number of data row ``row`` (re-scans the file)."""
        try:
            return _data_line_of_row(self.path, self.encoding, row)
        except Exception:  # pragma: no cover - best effort on an error path
            return None


def _is_string(t: ArffType) -> bool:
    return isinstance(t, str) and t == "STRING"


# NFA states of liac-arff's nominal-type regex (see _nominal_decl_ok).
_N_START, _N_PRE, _N_DQ, _N_SQ, _N_BARE, _N_POST, _N_END = range(7)


def _nominal_decl_ok(type_: str) -> bool:
    r"""Whether liac-arff's ``_RE_TYPE_NOMINAL`` would match ``type_``, in linear time.

    liac-arff recognises a nominal declaration with
    ``^\{\s*((".*"|'.*'|\S*)\s*,\s*)*(".*"|'.*'|\S*)\s*\}$``, whose nested
    quantifiers backtrack exponentially when the match fails: a 30-value
    ``{a,b,...}`` followed by a stray word (or an unquoted space inside a
    value) took hours. This runs the same expression as a Thompson NFA
    (one pass, a set of states), so a malformed declaration is refused at
    once; ``tests/test_fuzz_loaders.py`` checks the two agree.
    """
    states = {_N_START}
    n = len(type_)
    for i, c in enumerate(type_):
        # epsilon closure: before an item the item may be empty (\S*).
        if _N_PRE in states:
            states.add(_N_BARE)
        if _N_BARE in states:
            states.add(_N_POST)
        if _N_END in states and c == "\n" and i == n - 1:
            return True  # '$' also matches before a final newline
        space = c.isspace()
        nxt: set[int] = set()
        for st in states:
            if st == _N_START:
                if c == "{":
                    nxt.add(_N_PRE)
            elif st == _N_PRE:
                if space:
                    nxt.add(_N_PRE)
                elif c == '"':
                    nxt.add(_N_DQ)
                elif c == "'":
                    nxt.add(_N_SQ)
            elif st == _N_DQ or st == _N_SQ:
                if c != "\n":
                    nxt.add(st)
                if c == ('"' if st == _N_DQ else "'"):
                    nxt.add(_N_POST)
            elif st == _N_BARE:
                if not space:
                    nxt.add(_N_BARE)
            elif st == _N_POST:
                if space:
                    nxt.add(_N_POST)
                elif c == ",":
                    nxt.add(_N_PRE)
                elif c == "}":
                    nxt.add(_N_END)
        states = nxt
        if not states:
            return False
    return _N_END in states


_LIAC_RE_ATTRIBUTE = getattr(arff, "_RE_ATTRIBUTE", None)


class _SafeArffDecoder(arff.ArffDecoder):
    """liac-arff's decoder with two attribute-level fixes.

    * A nominal declaration that liac-arff's regex would reject is refused
      before that regex runs (it backtracks exponentially on such lines; see
      :func:`_nominal_decl_ok`). The error is the one liac-arff gives,
      ``BadAttributeType``.
    * ``INTEGER`` attributes are read like ``NUMERIC``/``REAL``, as Weka does.
      liac-arff converts them with ``int(float(x))``, which silently truncated
      ``1.5`` to 1 and raised ``OverflowError`` on ``1e999``.
    * A nominal domain with an empty or ``?`` value (``{,}``, ``{?,a}``) is
      refused as ``BadAttributeType``.
    """

    def _decode_attribute(self, s: str) -> tuple[str, ArffType]:
        parts = s.split(" ", 1)
        if _LIAC_RE_ATTRIBUTE is not None and len(parts) == 2:
            m = _LIAC_RE_ATTRIBUTE.match(parts[1].strip())
            if m is not None:
                type_ = m.group(2)
                if type_.startswith("{") and not _nominal_decl_ok(type_):
                    raise arff.BadAttributeType()
        name, type_ = super()._decode_attribute(s)
        if type_ == "INTEGER":
            type_ = "REAL"
        elif isinstance(type_, list) and any(v is None for v in type_):
            # '{,}' or '{?,a}': liac-arff returns None for an empty or '?'
            # value, which later broke the {0,1} check with a TypeError.
            raise arff.BadAttributeType()
        return name, type_


def _liac_message(exc: Exception, line: int) -> str:
    """liac-arff's message for ``exc``.

    liac-arff builds it as ``message % line`` where ``message`` may quote the
    offending data row: a ``%`` in that row (``1,%n,2``) made ``str(exc)``
    itself raise ValueError/TypeError.
    """
    try:
        return str(exc)
    except (TypeError, ValueError):
        # Every liac-arff template has one "line %d"; the quoted data is left
        # as written.
        raw = str(getattr(exc, "message", type(exc).__name__))
        return raw.replace("line %d", f"line {line}", 1)


def _decode(path: Path, encoding: str) -> tuple[dict[str, Any], bool, int]:
    sparse = _peek_is_sparse(path, encoding)
    decoder = _SafeArffDecoder()
    counter: _LineCounter | None = None
    try:
        with _open_text(path, encoding) as fh:
            counter = _LineCounter(fh, path=path)
            obj = decoder.decode(
                counter,
                encode_nominal=True,
                return_type=arff.COO if sparse else arff.DENSE,
            )
    except arff.ArffException as exc:
        line = getattr(exc, "line", -1)
        msg = _liac_message(exc, line)
        # liac-arff's messages end in "at line N"/"in line N"; we put the line
        # first (DatasetFormatError) and keep liac-arff's text for detail.
        in_data = counter is not None and counter.in_data
        if sparse and in_data and isinstance(exc, arff.BadLayout) and "Error parsing" not in msg:
            msg += " (a dense row in a file whose first data row is sparse?)"
        if isinstance(exc, arff.BadLayout) and not in_data and counter is not None and counter.eof:
            msg += " (no @data section: truncated file?)"
        raise DatasetFormatError(
            f"malformed ARFF ({type(exc).__name__}): {msg}",
            path=path,
            line=line if line and line > 0 else None,
        ) from exc
    except _GZIP_ERRORS as exc:
        raise DatasetFormatError(
            f"corrupt or truncated gzip stream ({exc})",
            path=path,
            line=counter.lineno + 1 if counter else None,
        ) from exc
    except (UnicodeDecodeError, DatasetFormatError):
        raise
    except (ValueError, IndexError, KeyError, TypeError, OverflowError) as exc:
        # liac-arff lets a few errors through unwrapped (bad escape sequences,
        # int conversion); the line counter knows where we were.
        raise DatasetFormatError(
            f"malformed ARFF ({type(exc).__name__}: {exc})",
            path=path,
            line=counter.lineno if counter else None,
        ) from exc
    return obj, sparse, counter.n_data


def _check_sparse_columns(
    contents: ArffContents, rows: Sequence[int], cols: Sequence[int], m: int
) -> None:
    """Refuse a sparse index past the last attribute.

    liac-arff checks the index only when it converts the value, so a missing
    value at an absurd index (``{99999999999999999999999 ?}``) reached
    ``np.asarray(cols, dtype=int64)`` (OverflowError), and ``{99 ?}`` was
    silently dropped.
    """
    try:
        c = np.asarray(cols, dtype=np.int64)
        ok = bool(((c >= 0) & (c < m)).all())
    except OverflowError:
        ok = False
    if ok:
        return
    k = next(i for i, col in enumerate(cols) if not 0 <= col < m)
    raise DatasetFormatError(
        f"sparse attribute index {cols[k]} is out of range (the file declares {m} "
        f"attributes, indices 0 to {m - 1})",
        path=contents.path,
        line=contents.line_of_row(int(rows[k])),
    )


def read_arff(path: str | os.PathLike[str]) -> ArffContents:
    """Decode an ARFF file (plain or gzip, dense or sparse).

    Parameters
    ----------
    path : str or path-like
        The ``.arff`` or ``.arff.gz`` file.

    Returns
    -------
    contents : ArffContents

    Raises
    ------
    DatasetFormatError
        If the file is not valid ARFF or not a valid gzip stream.
    """
    path = Path(path)
    # Weka writes UTF-8; older files may be Latin-1, which can decode any byte.
    # 'utf-8-sig' is UTF-8 that also drops a leading byte-order mark (Windows
    # editors write one; left in, it makes the @relation line unreadable).
    for encoding in ("utf-8-sig", "latin-1"):
        try:
            obj, sparse, n_data = _decode(path, encoding)
            break
        except UnicodeDecodeError:
            continue
    attributes = obj["attributes"]
    names = [a[0] for a in attributes]
    types = [a[1] for a in attributes]
    m = len(attributes)
    is_string = np.array([_is_string(t) for t in types], dtype=np.bool_)
    contents = ArffContents(
        path=path,
        encoding=encoding,
        relation=obj["relation"],
        names=names,
        types=types,
        sparse=sparse,
        n=0,
    )
    try:
        if sparse:
            vals, rows, cols = obj["data"]
            _check_sparse_columns(contents, rows, cols, m)
            rows = np.asarray(rows, dtype=np.int64)
            cols = np.asarray(cols, dtype=np.int64)
            if is_string.any() and len(cols):
                keep = ~is_string[cols]
                vals = [v for v, k in zip(vals, keep) if k]
                rows, cols = rows[keep], cols[keep]
            # np.array(..., dtype=float) maps None ('?') to NaN.
            vals = np.array(vals, dtype=np.float64)
            contents.rows, contents.cols, contents.vals = rows, cols, vals
            contents.n = int(n_data)
        else:
            data = obj["data"]
            if is_string.any():
                # String columns are dropped later; blank them so that the
                # rest converts to float in one call.
                data = [[None if s else v for v, s in zip(r, is_string)] for r in data]
            dense = np.array(data, dtype=np.float64) if data else np.empty((0, m))
            contents.dense = dense.reshape(len(data), m)
            contents.n = len(data)
    except DatasetFormatError:
        raise
    except (ValueError, TypeError) as exc:
        raise DatasetFormatError(f"could not convert data values ({exc})", path=path) from exc
    return contents

