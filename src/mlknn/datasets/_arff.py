"""Reading multi-label ARFF files (MULAN and MEKA layouts).

The ARFF text itself is parsed by liac-arff (``arff.ArffDecoder``); this module
adds what a multi-label loader needs on top of it:

* plain or gzip-compressed files (detected by the gzip magic bytes);
* dense and sparse data sections (sparse is detected by peeking at the first
  data line, and sparse files are decoded with ``return_type=arff.COO`` and
  turned into CSR without ever building a dense ``n x d`` matrix);
* locating the labels, either from a MULAN ``.xml`` file or from MEKA's
  ``-C q`` option in the ``@relation`` name;
* encoding the non-label attributes into a float64 feature matrix;
* turning every parse error into :class:`DatasetFormatError` whose message
  names the file and the line.

liac-arff is fast enough for the largest files we ship: measured on a 2-core
machine, ``tmc2007-500.arff`` (28596 x 522 sparse) decodes in about 2 s and
``Imdb.arff.gz`` (120919 x 1029 sparse, gzip) in about 7 s, so no hand-written
parser is needed.
"""

from __future__ import annotations

import gzip
import io
import re
import warnings
import zlib
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import arff
import numpy as np
import scipy.sparse as sp

__all__ = [
    "DatasetFormatError",
    "ArffContents",
    "read_arff",
    "read_mulan_xml",
    "find_mulan_xml",
    "meka_label_count",
    "label_indices_from_names",
    "label_indices_from_meka",
    "encode",
    "unescape_name",
    "arff_stem",
]

_GZIP_MAGIC = b"\x1f\x8b"

# Errors that a corrupt or truncated gzip stream can raise while it is read.
_GZIP_ERRORS = (gzip.BadGzipFile, EOFError, zlib.error)


class DatasetFormatError(ValueError):
    """A dataset file (ARFF, MULAN XML, gzip or MANIFEST) is malformed.

    A subclass of :class:`ValueError`. The message names the offending file
    and, where the parser knows it, the 1-based line number.

    Attributes
    ----------
    path : str or None
        The file that could not be read.
    line : int or None
        1-based line number of the problem, when known.
    """

    def __init__(self, message, *, path=None, line=None):
        self.path = None if path is None else str(path)
        self.line = line
        where = ""
        if path is not None:
            where = f"{path}"
            if line is not None:
                where += f", line {line}"
            where += ": "
        super().__init__(where + message)


# --------------------------------------------------------------------------
# Names
# --------------------------------------------------------------------------

_ESCAPE_RE = re.compile(r"\\(.)", re.DOTALL)


def unescape_name(name):
    r"""Remove ARFF backslash escapes from an attribute or label name.

    ``TAG_m\'usica`` becomes ``TAG_m'usica``. MULAN's XML files are not
    consistent about escaping (delicious keeps ``TAG_m\'usica`` while other
    files would write ``TAG_m'usica``), so names are compared after this
    normalisation on both sides. liac-arff strips the surrounding quotes of a
    name but leaves escapes in place, hence this extra step.
    """
    return _ESCAPE_RE.sub(r"\1", name)


# --------------------------------------------------------------------------
# Opening files
# --------------------------------------------------------------------------


def _is_gzip(path):
    with open(path, "rb") as fh:
        return fh.read(2) == _GZIP_MAGIC


@contextmanager
def _open_text(path, encoding):
    """Open ``path`` as text, transparently decompressing gzip.

    gzip is recognised by its magic bytes, so a gzip stream loads whatever
    its name; a ``.gz`` file without the magic bytes raises
    :class:`DatasetFormatError` (a mislabelled or corrupt download).
    """
    path = Path(path)
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
    """

    def __init__(self, fp, path=None):
        self._fp = fp
        self._path = path
        self.lineno = 0
        self.n_data = 0
        self.in_data = False
        self.eof = False

    def __iter__(self):
        for line in self._fp:
            self.lineno += 1
            if self.in_data:
                s = line.strip()
                if s and not s.startswith("%"):
                    self.n_data += 1
                    if self._path is not None and s.startswith("{"):
                        _check_sparse_keys(s, self._path, self.lineno)
            elif line.strip(" \r\n").upper().startswith("@DATA"):
                self.in_data = True
            yield line
        self.eof = True


# A sparse row without quotes: every key follows '{' or ','. (An unquoted
# value cannot contain ',' or '{', so this finds exactly the keys.)
_SPARSE_KEY_RE = re.compile(r"[{,]\s*(\d+)")


def _check_sparse_keys(s, path, lineno):
    """Refuse a sparse row that gives the same attribute twice.

    liac-arff reads a sparse row into a dict, so ``{3 1,3 0}`` would silently
    keep the last value (a duplicated label would flip without a trace).
    Malformed rows are left to liac-arff, which reports them.
    """
    if "'" in s or '"' in s:
        keys = [k for k, _v in arff._RE_SPARSE_KEY_VALUES.findall(s) if k]
    else:
        keys = _SPARSE_KEY_RE.findall(s)
    if len(keys) != len(set(keys)):
        seen, dup = set(), None
        for k in keys:
            if k in seen:
                dup = k
                break
            seen.add(k)
        raise DatasetFormatError(
            f"sparse data row gives attribute index {int(dup)} more than once",
            path=path,
            line=lineno,
        )


def _peek_is_sparse(path, encoding):
    """True if the first data row of ``path`` is in sparse ``{...}`` form."""
    counter = None
    try:
        with _open_text(path, encoding) as fh:
            counter = _LineCounter(fh)
            in_data = False
            for line in counter:
                s = line.strip()
                if not s or s.startswith("%"):
                    continue
                if in_data:
                    return s.startswith("{")
                if s.upper().startswith("@DATA"):
                    in_data = True
    except _GZIP_ERRORS as exc:
        raise DatasetFormatError(
            f"corrupt gzip stream ({exc})",
            path=path,
            line=counter.lineno + 1 if counter else None,
        ) from exc
    # No data line at all (or no @data): let the full decoder report it.
    return False


def _data_line_of_row(path, encoding, row):
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
    names: list  # raw attribute names, as liac-arff returns them
    types: list  # 'NUMERIC' / 'REAL' / 'INTEGER' / 'STRING' or list of values
    sparse: bool
    n: int
    # dense: float64 array (n, m) with string columns left NaN
    dense: np.ndarray | None = None
    # sparse: COO triplets over all non-string attributes
    rows: np.ndarray | None = None
    cols: np.ndarray | None = None
    vals: np.ndarray | None = None

    def line_of_row(self, row):
        """1-based line number of data row ``row`` (re-scans the file)."""
        try:
            return _data_line_of_row(self.path, self.encoding, row)
        except Exception:  # pragma: no cover - best effort on an error path
            return None


def _is_string(t):
    return isinstance(t, str) and t == "STRING"


# NFA states of liac-arff's nominal-type regex (see _nominal_decl_ok).
_N_START, _N_PRE, _N_DQ, _N_SQ, _N_BARE, _N_POST, _N_END = range(7)


def _nominal_decl_ok(type_):
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
        nxt = set()
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

    def _decode_attribute(self, s):
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


def _liac_message(exc, line):
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


def _decode(path, encoding):
    sparse = _peek_is_sparse(path, encoding)
    decoder = _SafeArffDecoder()
    counter = None
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
        if isinstance(exc, arff.BadLayout) and not in_data and counter.eof:
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


def _check_sparse_columns(contents, rows, cols, m):
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


def read_arff(path):
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
    # editors write one; it used to make the @relation line unreadable).
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
    is_string = np.array([_is_string(t) for t in types], dtype=bool)
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


# --------------------------------------------------------------------------
# Where are the labels?
# --------------------------------------------------------------------------


def read_mulan_xml(path):
    """Label names declared in a MULAN ``.xml`` file, in document order.

    The XML is parsed with defusedxml (entity expansion and external entities
    are refused). Hierarchical files (nested ``<label>``) are flattened.

    Raises
    ------
    DatasetFormatError
        If the XML is malformed, unsafe, or declares no label.
    """
    import xml.etree.ElementTree as ET

    import defusedxml
    import defusedxml.ElementTree as DET

    path = Path(path)
    try:
        root = DET.parse(str(path)).getroot()
    except ET.ParseError as exc:
        line = exc.position[0] if getattr(exc, "position", None) else None
        raise DatasetFormatError(f"malformed MULAN XML ({exc})", path=path, line=line) from exc
    except defusedxml.DefusedXmlException as exc:
        raise DatasetFormatError(f"unsafe MULAN XML refused ({exc!r})", path=path) from exc
    except (LookupError, ValueError) as exc:
        # An XML declaration naming an unknown encoding (encoding="klingon")
        # raised a bare LookupError from the parser.
        raise DatasetFormatError(f"malformed MULAN XML ({exc})", path=path, line=1) from exc
    names = []
    for el in root.iter():
        tag = el.tag.rsplit("}", 1)[-1] if isinstance(el.tag, str) else ""
        if tag == "label":
            name = el.get("name")
            if name is None:
                raise DatasetFormatError("<label> element without a name attribute", path=path)
            names.append(name)
    if not names:
        raise DatasetFormatError("MULAN XML declares no <label name=...>", path=path)
    return names


_TRAIN_TEST_RE = re.compile(r"[-_](train|test)$", re.IGNORECASE)
_SPARSE_RE = re.compile(r"[-_]sparse$", re.IGNORECASE)


def arff_stem(path):
    """File name without ``.arff`` / ``.arff.gz`` (``Imdb.arff.gz`` -> ``Imdb``)."""
    name = Path(path).name
    for suffix in (".arff.gz", ".arff", ".gz"):
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return Path(name).stem


def find_mulan_xml(path):
    """The MULAN ``.xml`` file belonging to an ARFF file, or None.

    Candidates, in order: same stem; stem without ``-sparse``; stem without
    ``-train``/``-test``; both removed (``Corel5k-train-sparse.arff`` ->
    ``Corel5k.xml``).
    """
    path = Path(path)
    stem = arff_stem(path)
    candidates = [stem]
    no_sparse = _SPARSE_RE.sub("", stem)
    candidates.append(no_sparse)
    candidates.append(_TRAIN_TEST_RE.sub("", stem))
    candidates.append(_TRAIN_TEST_RE.sub("", no_sparse))
    seen = set()
    for c in candidates:
        if c in seen:
            continue
        seen.add(c)
        xml = path.with_name(c + ".xml")
        if xml.is_file():
            return xml
    return None


_META_C_RE = re.compile(r"(?:^|[\s:'\"])-C\s+(-?\d+)")


def meka_label_count(relation):
    """MEKA's ``-C q`` from a relation name, or None if absent.

    ``'Yeast: -C 14 -split-number 1500'`` -> 14. q > 0: the labels are the
    first q attributes; q < 0: the last |q|.
    """
    m = _META_C_RE.search(relation)
    return int(m.group(1)) if m else None


def label_indices_from_names(contents, label_names, xml_path=None):
    """Attribute indices of the labels named in a MULAN XML, in ARFF order.

    Names are compared after removing backslash escapes on both sides. The
    returned order is the ARFF attribute order, not the XML order (they differ
    for yeast and enron): this keeps ``Y`` columns aligned with the files.
    """
    wanted = {unescape_name(n) for n in label_names}
    arff_names = [unescape_name(n) for n in contents.names]
    idx = [j for j, n in enumerate(arff_names) if n in wanted]
    missing = wanted - {arff_names[j] for j in idx}
    if missing:
        shown = ", ".join(repr(s) for s in sorted(missing)[:5])
        more = f" (and {len(missing) - 5} more)" if len(missing) > 5 else ""
        raise DatasetFormatError(
            f"{len(missing)} label(s) named in {xml_path or 'the XML'} are not "
            f"attributes of the ARFF file: {shown}{more}",
            path=contents.path,
        )
    return np.asarray(idx, dtype=np.int64)


def label_indices_from_meka(contents, q):
    """Attribute indices of the labels for MEKA's ``-C q``."""
    m = len(contents.names)
    if q == 0 or abs(q) >= m:
        raise DatasetFormatError(
            f"MEKA option -C {q} is invalid for a file with {m} attributes",
            path=contents.path,
        )
    return np.arange(q) if q > 0 else np.arange(m + q, m)


# --------------------------------------------------------------------------
# Encoding attributes into X and Y
# --------------------------------------------------------------------------


def _binary_domain(t):
    """For a nominal domain equal to {0, 1} (in any order), the float value of
    each index; else None."""
    if isinstance(t, list) and len(t) == 2 and sorted(t) == ["0", "1"]:
        return np.array([float(t[0]), float(t[1])])
    return None


def _raise_missing(contents, row, attr, what, value=np.nan):
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

    def __init__(self, contents):
        self.c = contents
        self.n = contents.n
        if contents.sparse:
            order = np.argsort(contents.cols, kind="stable")
            self._rows = contents.rows[order]
            self._vals = contents.vals[order]
            self._cols = contents.cols[order]
            m = len(contents.names)
            self._ptr = np.searchsorted(self._cols, np.arange(m + 1))

    def explicit(self, j):
        """(rows, values) stored for attribute j (all rows when dense)."""
        if self.c.sparse:
            a, b = self._ptr[j], self._ptr[j + 1]
            return self._rows[a:b], self._vals[a:b]
        return np.arange(self.n), self.c.dense[:, j]

    def full(self, j, default):
        """Attribute j as a length-n vector; sparse omissions get ``default``."""
        if not self.c.sparse:
            return self.c.dense[:, j]
        out = np.full(self.n, default, dtype=np.float64)
        r, v = self.explicit(j)
        out[r] = v
        return out


def encode(contents, label_idx):
    """Split decoded ARFF contents into features ``X`` and labels ``Y``.

    Feature encoding (documented choices, see :func:`mlknn.datasets.load`):

    * numeric (``numeric``/``real``/``integer``): as is;
    * nominal ``{0,1}``: the numbers 0/1;
    * other nominal: one-hot, one column per declared value, named
      ``attr=value``;
    * ``string`` attributes, and nominal attributes that take a distinct value
      on every row (identifiers, when n >= 3), are dropped with a warning;
    * a missing value ``?`` in a kept feature or in a label raises
      :class:`DatasetFormatError`.

    Labels must be nominal ``{0,1}`` (or numeric with only 0/1 values).

    Returns
    -------
    X : ndarray of shape (n, d) or csr_matrix
        float64; CSR when the file is sparse.
    Y : ndarray of shape (n, q), dtype uint8
    feature_names, label_names : list of str
        Unescaped attribute names.
    """
    c = contents
    n, m = c.n, len(c.names)
    cols = _Columns(c)
    label_set = set(int(j) for j in label_idx)
    names = [unescape_name(s) for s in c.names]

    # ---- labels -----------------------------------------------------------
    q = len(label_idx)
    Y = np.zeros((n, q), dtype=np.uint8)
    for k, j in enumerate(label_idx):
        t = c.types[j]
        dom = _binary_domain(t)
        if dom is None and not (isinstance(t, str) and t in ("NUMERIC", "REAL", "INTEGER")):
            raise DatasetFormatError(
                f"label attribute {names[j]!r} has type {t!r}; labels must be "
                "nominal {0,1} or numeric 0/1",
                path=c.path,
            )
        r, v = cols.explicit(j)
        bad = np.isnan(v)
        if bad.any():
            _raise_missing(c, r[np.argmax(bad)], j, "label")
        if dom is not None:
            v = dom[v.astype(np.int64)]
            default = dom[0]
        else:
            default = 0.0
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

    # ---- features ---------------------------------------------------------
    feature_names = []
    blocks = []  # per output block: (rows, out_cols, values) for sparse, or column arrays
    d = 0
    for j in range(m):
        if j in label_set:
            continue
        t = c.types[j]
        if _is_string(t):
            warnings.warn(
                f"{c.path}: string attribute {names[j]!r} dropped (not a feature "
                "usable by distance-based methods)",
                UserWarning,
                stacklevel=4,
            )
            continue
        dom = _binary_domain(t) if isinstance(t, list) else None
        if isinstance(t, list) and dom is None:
            # General nominal: category index per row (sparse omissions are
            # the first declared value, as the ARFF spec says).
            cat = cols.full(j, 0.0)
            if np.isnan(cat).any():
                _raise_missing(c, np.flatnonzero(np.isnan(cat))[0], j, "feature")
            cat = cat.astype(np.int64)
            if n >= 3 and np.unique(cat).size == n:
                warnings.warn(
                    f"{c.path}: nominal attribute {names[j]!r} takes a distinct "
                    "value on every row (an identifier) and was dropped",
                    UserWarning,
                    stacklevel=4,
                )
                continue
            k = len(t)
            blocks.append(("onehot", d, cat, k))
            feature_names.extend(f"{names[j]}={unescape_name(str(val))}" for val in t)
            d += k
            continue
        r, v = cols.explicit(j)
        bad = ~np.isfinite(v)
        if bad.any():
            first = np.argmax(bad)
            _raise_missing(c, r[first], j, "feature", float(v[first]))
        default = 0.0
        if dom is not None:
            v = dom[v.astype(np.int64)]
            default = dom[0]
        if c.sparse and default != 0.0:
            # e.g. a {1,0} attribute: an omitted value means 1.
            full = np.full(n, default)
            full[r] = v
            r, v = np.arange(n), full
        blocks.append(("col", d, r, v))
        feature_names.append(names[j])
        d += 1

    if c.sparse:
        rr, cc, vv = [], [], []
        for b in blocks:
            if b[0] == "col":
                _, out, r, v = b
                rr.append(r)
                cc.append(np.full(len(r), out, dtype=np.int64))
                vv.append(v)
            else:
                _, out, cat, _k = b
                rr.append(np.arange(n))
                cc.append(out + cat)
                vv.append(np.ones(n))
        if rr:
            rr, cc, vv = np.concatenate(rr), np.concatenate(cc), np.concatenate(vv)
        else:
            rr = cc = np.empty(0, dtype=np.int64)
            vv = np.empty(0)
        X = sp.csr_matrix((vv, (rr, cc)), shape=(n, d), dtype=np.float64)
        X.sum_duplicates()
        X.eliminate_zeros()
        X.sort_indices()
    else:
        X = np.zeros((n, d), dtype=np.float64)
        for b in blocks:
            if b[0] == "col":
                _, out, _r, v = b
                X[:, out] = v
            else:
                _, out, cat, _k = b
                X[np.arange(n), out + cat] = 1.0
    label_names = [names[j] for j in label_idx]
    return X, Y, feature_names, label_names
