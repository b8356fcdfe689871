"""Fuzz the dataset loaders (ARFF, gzip, MULAN XML) with mutated small files.

Every case starts from one of a few small valid datasets (dense / sparse,
MULAN with its ``.xml`` / MEKA with ``-C q``, plain / gzip) and applies one to
three mutations: truncation, wrong value counts, bad sparse indices, unknown
attribute types, broken escapes and quotes, huge numbers, duplicate attribute
names, corrupt gzip streams, binary garbage, empty files, labels missing from
the XML, entity-expansion XML, ... (see ``ARFF_MUTATIONS``, ``XML_MUTATIONS``
and ``GZIP_MUTATIONS``).

The loader must then either

* return finite data: ``X`` float64 (dense or CSR) without NaN or inf, ``Y``
  uint8 0/1, consistent shapes and names; or
* raise :class:`mlknn.datasets.DatasetFormatError` whose message names the
  file (and, when the error carries a line number, that line, which must lie
  inside the file);

within a per-case time limit. Anything else (another exception type, a NaN, a
hang) is a violation.

The bounded CI run is ``tests/test_fuzz_loaders.py`` (hypothesis drives the
same generator). The long run is on demand::

    python benchmarks/fuzz_loaders.py --examples 100000 [--seed 0] [--out DIR]

Case ``i`` of a run is generated from ``random.Random(f"{seed}:{i}")`` alone, so
``--seed S --start i --examples 1`` replays it; ``--out`` keeps the files of
every violating case. The exit status is 1 when a violation was found.
"""

from __future__ import annotations

import argparse
import bz2
import contextlib
import gzip
import random
import re
import shutil
import signal
import sys
import tempfile
import time
import traceback
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp

# --------------------------------------------------------------------------
# Seed datasets (all valid)
# --------------------------------------------------------------------------

# MULAN, dense: quoted and escaped names, a comment, a general nominal
# feature (one-hot), a string attribute (dropped), labels not at the end.
MULAN_DENSE = """\
% toy MULAN file
@relation 'toy: -C 2'

@attribute f1 numeric
@attribute 'f two' REAL
@attribute lab\\'b {0,1}
@attribute colour {red,green,'dark blue'}
@attribute note string
@attribute cnt integer
@attribute labA {0,1}

@data
1.5,2,1,red,'a b',3,0
-1,0.25,0,green,x,4,1
% a comment inside the data
3,4e-2,1,'dark blue','it\\'s',5,1
0,0,0,red,?,6,0
"""

MULAN_DENSE_XML = """\
<?xml version="1.0" encoding="utf-8"?>
<labels xmlns="http://mulan.sourceforge.net/labels">
<label name="labA"></label>
<label name="lab'b"></label>
</labels>
"""

# MULAN, sparse: an empty row, a {1,0} feature whose omission means 1.
MULAN_SPARSE = """\
@relation sp

@attribute w0 {0,1}
@attribute w1 numeric
@attribute w2 {1,0}
@attribute w3 numeric
@attribute y0 {0,1}
@attribute y1 {0,1}
@attribute y2 {0,1}

@data
{0 1,1 0.5,4 1}
{1 2,3 -1,5 1,6 1}
{}
{2 0,3 7.25,4 1,6 1}
{0 1,5 1}
"""

MULAN_SPARSE_XML = """\
<?xml version="1.0" encoding="utf-8"?>
<labels xmlns="http://mulan.sourceforge.net/labels">
<label name="y0"></label><label name="y1"></label><label name="y2"></label>
</labels>
"""

# MEKA, dense: the first 2 attributes are labels.
MEKA_DENSE = """\
@relation 'Toy: -C 2 -split-number 2'
@attribute y1 {0,1}
@attribute y2 {0,1}
@attribute x1 numeric
@attribute x2 numeric
@attribute x3 numeric
@data
0,1,2,3,4
1,1,4,5,6
1,0,-1.5,0,1e3
0,0,7,8,9
"""

# MEKA, sparse: the last 2 attributes are labels.
MEKA_SPARSE = """\
@relation "Sparse: -C -2"
@attribute a numeric
@attribute b numeric
@attribute c {x,y,z}
@attribute l1 {0,1}
@attribute l2 {0,1}
@data
{0 1.5,3 1}
{1 2,2 y,4 1}
{0 -3,1 1,2 z,3 1,4 1}
{}
"""


# MEKA, dense, written the way Weka's tokenizer allows and liac-arff alone refused
# (issue 14): '%' comments after header and data lines, tabs after keywords, no space
# before '{', spaces inside '{}', keywords in upper case, a YES/NO nominal feature.
MEKA_WEKA = """\
@RELATION 'Weka: -C 2 -split-number 2' %50
@attribute y1{0,1}
@ATTRIBUTE\ty2\t{ 0 , 1 } % second label
@attribute x1 NUMERIC
@attribute x2 {YES,NO}
@attribute x3 real
@data % four rows
0,1,2,YES,4
1,1,4,NO,6 % a comment after a row
1,0,-1.5,YES,1e3
0,0,7,NO,9
"""


@dataclass(frozen=True)
class Seed:
    name: str
    arff: str
    xml: str | None  # MULAN label file, or None for MEKA
    stem: str


SEEDS = (
    Seed("mulan-dense", MULAN_DENSE, MULAN_DENSE_XML, "toy"),
    Seed("mulan-sparse", MULAN_SPARSE, MULAN_SPARSE_XML, "sp"),
    Seed("meka-dense", MEKA_DENSE, None, "Toy"),
    Seed("meka-sparse", MEKA_SPARSE, None, "Sparse"),
    Seed("meka-weka-syntax", MEKA_WEKA, None, "Weka"),
)

# --------------------------------------------------------------------------
# Nasty values and types
# --------------------------------------------------------------------------

NASTY_VALUES = (
    "", "?", "nan", "NaN", "-nan", "inf", "-inf", "Infinity", "1e999", "-1e999",
    "1e308", "1e-400", "9" * 400, "-" + "9" * 400, "0x1f", "1_000", "1,5", "1 5",
    "abc", "'unterminated", '"unterminated', "'", '"', "''", '""', "\\", "'\\'",
    "'\\u12'", "'\\q'", "'\\x'", "'\\777'", "{", "}", "{}", "%", "% comment",
    "\x00", "\x7f", "\u00e9", "\u2028", "\ufeff", "\udcff", " ", "\t", "@data",
    "red", "'dark blue'", "2", "-1", "1.0", "+1", ".5", "5.", "1e", "e1", "--1",
)

NASTY_TYPES = (
    "date", 'DATE "yyyy-MM-dd"', "relational", "foo", "numeric numeric", "{",
    "{a,b", "{a,b} junk", "{}", "{ }", "{,}", "{a,,b}", "{'a','b}", "{\"a b\",c}",
    "{a b,c}", "string", "STRING", "integer", "Real", "NUMERIC", "{0,1}", "{1,0}",
    "{0,1,2}", "{0}", "{'0','1'}", "{?,a}", "{a,?}", "{'',a}", "{a,a}", "{0,1,}",
    # ReDoS shapes for liac-arff's nominal regex (hung for hours before the fix)
    "{" + ",".join(f"v{i}" for i in range(30)) + "} junk",
    "{" + ",".join(f"v{i}" for i in range(30)) + ",a b}",
    "{" + ",".join(f"'v{i}'" for i in range(30)) + "'",
    "{" + ",".join("a" for _ in range(30)),
)

NASTY_NAMES = (
    "", "'", '"', "'a", 'a"', "'a b'", "a b", "'\\'", "'\\u12'", "{x}", "%x", "x,y",
    "'x\\", "\\", "\u00e9t\u00e9", "'it\\'s'", "lab\\'b", "labA", "y0", "f1",
)

BILLION_LAUGHS = (
    '<?xml version="1.0"?>\n<!DOCTYPE lolz [\n<!ENTITY lol "lol">\n'
    + "".join(
        f'<!ENTITY lol{i} "{("&lol%s;" % ("" if i == 1 else i - 1)) * 10}">\n'
        for i in range(1, 10)
    )
    + ']>\n<labels><label name="&lol9;"></label></labels>\n'
)

QUADRATIC_BLOWUP = (
    '<?xml version="1.0"?>\n<!DOCTYPE x [<!ENTITY a "' + "A" * 50000 + '">]>\n'
    "<labels><label name=\"" + "&a;" * 2000 + '"></label></labels>\n'
)

EXTERNAL_ENTITY = (
    '<?xml version="1.0"?>\n<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>\n'
    '<labels><label name="&e;"></label></labels>\n'
)

# --------------------------------------------------------------------------
# Mutations
# --------------------------------------------------------------------------


def _lines(text):
    return text.split("\n")


def _data_start(lines):
    for i, line in enumerate(lines):
        if line.strip().upper().startswith("@DATA"):
            return i + 1
    return len(lines)


def _attr_lines(lines):
    return [i for i, line in enumerate(lines) if line.strip().upper().startswith("@ATTRIBUTE")]


def _data_lines(lines):
    start = _data_start(lines)
    return [i for i in range(start, len(lines)) if lines[i].strip() and not lines[i].strip().startswith("%")]


def _pick(rng, seq):
    return seq[rng.randrange(len(seq))] if seq else None


def m_truncate(rng, text):
    return text[: rng.randrange(len(text) + 1)]


def m_drop_line(rng, text):
    lines = _lines(text)
    del lines[rng.randrange(len(lines))]
    return "\n".join(lines)


def m_dup_line(rng, text):
    lines = _lines(text)
    i = rng.randrange(len(lines))
    lines.insert(i, lines[i])
    return "\n".join(lines)


def m_swap_lines(rng, text):
    lines = _lines(text)
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    lines[i], lines[j] = lines[j], lines[i]
    return "\n".join(lines)


def _split_row(line):
    s = line.strip()
    if s.startswith("{") and s.endswith("}"):
        return True, [t for t in s[1:-1].split(",")] if s[1:-1] else []
    return False, s.split(",")


def _join_row(sparse, toks):
    return ("{" + ",".join(toks) + "}") if sparse else ",".join(toks)


def m_bad_value(rng, text):
    lines = _lines(text)
    rows = _data_lines(lines)
    if not rows:
        return text
    i = _pick(rng, rows)
    sparse, toks = _split_row(lines[i])
    if not toks:
        toks = ["0 " + _pick(rng, NASTY_VALUES)]
    else:
        j = rng.randrange(len(toks))
        if sparse:
            key = toks[j].strip().split(" ", 1)[0]
            toks[j] = f"{key} {_pick(rng, NASTY_VALUES)}"
        else:
            toks[j] = _pick(rng, NASTY_VALUES)
    lines[i] = _join_row(sparse, toks)
    return "\n".join(lines)


def m_huge_number(rng, text):
    lines = _lines(text)
    rows = _data_lines(lines)
    if not rows:
        return text
    i = _pick(rng, rows)
    sparse, toks = _split_row(lines[i])
    if not toks:
        return text
    j = rng.randrange(len(toks))
    big = _pick(rng, ("1e999", "-1e999", "1e308", "-1.7976931348623157e308", "9" * 1000, "1e-999", "4.9e-324"))
    if sparse:
        toks[j] = toks[j].strip().split(" ", 1)[0] + " " + big
    else:
        toks[j] = big
    lines[i] = _join_row(sparse, toks)
    return "\n".join(lines)


def m_value_count(rng, text):
    lines = _lines(text)
    rows = _data_lines(lines)
    if not rows:
        return text
    i = _pick(rng, rows)
    sparse, toks = _split_row(lines[i])
    if toks and rng.random() < 0.5:
        del toks[rng.randrange(len(toks))]
    else:
        toks.insert(rng.randrange(len(toks) + 1), _pick(rng, ("0", "1", "", "5 1", "0 0")))
    lines[i] = _join_row(sparse, toks)
    return "\n".join(lines)


def m_sparse_index(rng, text):
    lines = _lines(text)
    rows = _data_lines(lines)
    n_attr = len(_attr_lines(lines))
    if not rows:
        return text
    i = _pick(rng, rows)
    _sparse, toks = _split_row(lines[i])
    keys = [t.strip().split(" ", 1)[0] for t in toks if t.strip()]
    key = _pick(
        rng,
        ("-1", str(n_attr), str(n_attr + 7), "1.5", "", "x", "99999999999999999999999", "0", "00",
         _pick(rng, keys) or "0", " 1"),
    )
    val = _pick(rng, ("1", "0", "0.5", "?", "", "red", "y"))
    toks.insert(rng.randrange(len(toks) + 1), f"{key} {val}".rstrip() if rng.random() < 0.9 else key)
    lines[i] = "{" + ",".join(toks) + "}"
    return "\n".join(lines)


def m_unknown_type(rng, text):
    lines = _lines(text)
    attrs = _attr_lines(lines)
    if not attrs:
        return text
    i = _pick(rng, attrs)
    parts = lines[i].split(None, 2)
    if len(parts) >= 2:
        lines[i] = f"{parts[0]} {parts[1]} {_pick(rng, NASTY_TYPES)}"
    return "\n".join(lines)


def m_attr_name(rng, text):
    """Duplicate an attribute name, or replace it with a nasty one."""
    lines = _lines(text)
    attrs = _attr_lines(lines)
    if not attrs:
        return text
    i = _pick(rng, attrs)
    parts = lines[i].split(None, 2)
    if len(parts) < 3:
        return text
    if rng.random() < 0.5:
        other = lines[_pick(rng, attrs)].split(None, 2)
        name = other[1] if len(other) > 1 else "x"
    else:
        name = _pick(rng, NASTY_NAMES)
    lines[i] = f"{parts[0]} {name} {parts[2]}"
    return "\n".join(lines)


def m_insert_text(rng, text):
    """A stray quote, backslash escape, brace, comma or control character."""
    pos = rng.randrange(len(text) + 1)
    junk = _pick(
        rng,
        ("'", '"', "\\", "\\u12", "\\x", "\\9", "{", "}", ",", "%", "\x00", "\r", "\n",
         "\t", "?", " ", "@data\n", "@attribute z numeric\n", "\ufeff", "\u00e9", "\udcff"),
    )
    return text[:pos] + junk + text[pos:]


def m_header(rng, text):
    """Break the header: drop or move @relation / @data, add text before it."""
    lines = _lines(text)
    op = rng.randrange(5)
    if op == 0:
        lines = [ln for ln in lines if not ln.strip().upper().startswith("@DATA")]
    elif op == 1:
        lines = [ln for ln in lines if not ln.strip().upper().startswith("@RELATION")]
    elif op == 2:
        d = _data_start(lines) - 1
        if 0 <= d < len(lines):
            lines.insert(rng.randrange(d + 1), lines.pop(d))
    elif op == 3:
        lines.insert(0, _pick(rng, ("garbage", "1,2,3", "@data", "{0 1}", "\x00\x01")))
    else:
        a = _attr_lines(lines)
        if a:
            lines.insert(_data_start(lines), lines[_pick(rng, a)])
    return "\n".join(lines)


def m_long_line(rng, text):
    lines = _lines(text)
    rows = _data_lines(lines) or [len(lines) - 1]
    i = _pick(rng, rows)
    unit = _pick(rng, ("1,", "'a", "\\\\", "{0 1,", "a ", "\"x\",", "9"))
    lines[i] = unit * rng.randrange(100, 20000)
    return "\n".join(lines)


def m_whole(rng, text):
    kind = rng.randrange(4)
    if kind == 0:
        return ""
    if kind == 1:
        return "\n" * rng.randrange(1, 5)
    if kind == 2:
        return "".join(chr(rng.randrange(0, 0x250)) for _ in range(rng.randrange(1, 400)))
    return text.split("@data")[0] if "@data" in text else text  # header only


ARFF_MUTATIONS = {
    "truncate": m_truncate,
    "drop_line": m_drop_line,
    "dup_line": m_dup_line,
    "swap_lines": m_swap_lines,
    "bad_value": m_bad_value,
    "huge_number": m_huge_number,
    "value_count": m_value_count,
    "sparse_index": m_sparse_index,
    "unknown_type": m_unknown_type,
    "attr_name": m_attr_name,
    "insert_text": m_insert_text,
    "header": m_header,
    "long_line": m_long_line,
    "whole_file": m_whole,
}


def _xml_labels(names):
    body = "".join(f'<label name="{n}"></label>' for n in names)
    return f'<?xml version="1.0" encoding="utf-8"?>\n<labels xmlns="http://mulan.sourceforge.net/labels">{body}</labels>\n'


def x_truncate(rng, text):
    return text[: rng.randrange(len(text) + 1)]


def x_missing_label(rng, text):
    return text.replace("</labels>", '<label name="no_such_label"></label></labels>')


def x_drop_labels(rng, text):
    return _xml_labels([])


def x_unnamed(rng, text):
    return text.replace("</labels>", "<label></label></labels>")


def x_feature_as_label(rng, text):
    return text.replace("</labels>", f'<label name="{_pick(rng, ("f1", "w1", "colour", "note", "f two", "w2"))}"></label></labels>')


def x_entity(rng, text):
    return _pick(rng, (BILLION_LAUGHS, QUADRATIC_BLOWUP, EXTERNAL_ENTITY))


def x_encoding(rng, text):
    return text.replace('encoding="utf-8"', f'encoding="{_pick(rng, ("klingon", "utf-16", "latin-1", "ascii", ""))}"')


def x_garbage(rng, text):
    kind = rng.randrange(3)
    if kind == 0:
        return ""
    if kind == 1:
        return "".join(chr(rng.randrange(0, 0x250)) for _ in range(rng.randrange(1, 200)))
    return "<labels><label name='a'></labels>"


def x_insert(rng, text):
    pos = rng.randrange(len(text) + 1)
    return text[:pos] + _pick(rng, ("<", ">", "&", "&amp", "&#0;", "\"", "'", "]]>", "\x00", "<!--", "<![CDATA[")) + text[pos:]


XML_MUTATIONS = {
    "truncate": x_truncate,
    "missing_label": x_missing_label,
    "no_labels": x_drop_labels,
    "unnamed_label": x_unnamed,
    "feature_as_label": x_feature_as_label,
    "entity": x_entity,
    "encoding": x_encoding,
    "garbage": x_garbage,
    "insert": x_insert,
}


def g_truncate(rng, blob):
    return blob[: rng.randrange(len(blob))] if blob else blob


def g_flip(rng, blob):
    b = bytearray(blob)
    for _ in range(rng.randrange(1, 8)):
        if b:
            i = rng.randrange(len(b))
            b[i] ^= 1 << rng.randrange(8)
    return bytes(b)


def g_header(rng, blob):
    b = bytearray(blob)
    if len(b) > 3:
        b[3] = rng.randrange(256)  # gzip flag byte: FEXTRA/FNAME/FCOMMENT/FHCRC/reserved
    return bytes(b)


def g_append(rng, blob):
    return blob + _pick(rng, (b"\x00" * 8, b"garbage", b"\x1f\x8b", gzip.compress(b"% more\n")))


def g_not_gzip(rng, blob):
    return _pick(rng, (b"", b"\x1f", b"\x1f\x8b", b"plain text, not gzip", bz2.compress(b"@relation r\n")))


GZIP_MUTATIONS = {
    "truncate": g_truncate,
    "flip": g_flip,
    "header": g_header,
    "append": g_append,
    "not_gzip": g_not_gzip,
}

# --------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------


@dataclass
class Case:
    """Files to write and the loader call to make."""

    seed: str
    files: dict  # relative name -> bytes
    arff: str  # relative name of the ARFF file
    call: str  # 'load_arff', 'load_arff_n_labels' or 'load'
    n_labels: int | None = None
    ops: list = field(default_factory=list)

    def describe(self):
        return f"seed={self.seed} call={self.call} ops={self.ops}"


def make_case(rng):
    """A random case from a ``random.Random``-like generator."""
    seed = _pick(rng, SEEDS)
    text, xml = seed.arff, seed.xml
    ops = []
    for _ in range(rng.randrange(1, 4)):
        if xml is not None and rng.random() < 0.2:
            name = _pick(rng, sorted(XML_MUTATIONS))
            xml = XML_MUTATIONS[name](rng, xml)
            ops.append(f"xml:{name}")
        else:
            name = _pick(rng, sorted(ARFF_MUTATIONS))
            text = ARFF_MUTATIONS[name](rng, text)
            ops.append(f"arff:{name}")
    if xml is not None and rng.random() < 0.05:
        xml = None  # the label file is missing altogether
        ops.append("xml:deleted")
    if rng.random() < 0.1:
        blob = text.encode("latin-1", errors="replace")  # an old non-UTF-8 file
    else:
        blob = text.encode("utf-8", errors="surrogatepass")  # a lone surrogate: invalid UTF-8
    arff_name = seed.stem + ".arff"
    if rng.random() < 0.25:
        arff_name += ".gz"
        blob = gzip.compress(blob, mtime=0)
        if rng.random() < 0.5:
            name = _pick(rng, sorted(GZIP_MUTATIONS))
            blob = GZIP_MUTATIONS[name](rng, blob)
            ops.append(f"gzip:{name}")
    elif rng.random() < 0.03:
        blob = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 300)))
        ops.append("arff:binary_garbage")
    files = {arff_name: blob}
    if xml is not None:
        files[seed.stem + ".xml"] = xml.encode("utf-8", errors="surrogatepass")
    if seed.xml is None:
        call = _pick(rng, ("load_arff", "load", "load_arff_n_labels"))
    else:
        call = _pick(rng, ("load_arff", "load"))
    n_labels = None
    if call == "load_arff_n_labels":
        n_labels = _pick(rng, (2, -2, 3, 0, 1, 99))
    return Case(seed.name, files, arff_name, call, n_labels, ops)


# --------------------------------------------------------------------------
# Checking one case
# --------------------------------------------------------------------------


class Hang(Exception):
    """A case ran past its time limit."""


class Violation(AssertionError):
    """The loader broke its contract on a case."""


@contextlib.contextmanager
def time_limit(seconds):
    """Raise :class:`Hang` in the main thread after ``seconds`` (SIGALRM)."""
    if seconds is None or not hasattr(signal, "setitimer"):
        yield
        return

    def _raise(signum, frame):
        raise Hang(f"no result after {seconds} s")

    old = signal.signal(signal.SIGALRM, _raise)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _line_count(path):
    """Number of lines of a (possibly gzip) text file, or None if unreadable."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
        if raw[:2] == b"\x1f\x8b":
            raw = gzip.decompress(raw)
    except Exception:  # noqa: BLE001 - corrupt gzip: no bound
        return None
    text = raw.decode("latin-1")
    return text.count("\n") + text.count("\r") + 1


def check_error(exc, folder, case):
    """A DatasetFormatError must name one of the case's files, and a valid line."""
    msg = str(exc)
    if exc.path is None:
        raise Violation(f"DatasetFormatError without a file: {msg!r}")
    names = set(case.files)
    if Path(exc.path).name not in names:
        raise Violation(f"error names {exc.path!r}, not one of the files {sorted(names)}: {msg!r}")
    if exc.path not in msg:
        raise Violation(f"message does not name the file {exc.path!r}: {msg!r}")
    if exc.line is not None:
        if not isinstance(exc.line, int) or f"line {exc.line}" not in msg:
            raise Violation(f"line {exc.line!r} not in the message {msg!r}")
        n = _line_count(Path(exc.path))
        if exc.line < 1 or (n is not None and exc.line > n):
            raise Violation(f"line {exc.line} outside the file ({n} lines): {msg!r}")


def check_result(X, Y, fn, ln):
    """A successful load must be finite, binary and consistent."""
    if sp.issparse(X):
        if X.format != "csr":
            raise Violation(f"sparse X is {X.format}, not csr")
        values = X.data
    else:
        if not isinstance(X, np.ndarray) or X.ndim != 2:
            raise Violation(f"X is not a 2-D array: {type(X)}")
        values = X
    if X.dtype != np.float64:
        raise Violation(f"X dtype {X.dtype}")
    if not np.all(np.isfinite(values)):
        raise Violation("X contains NaN or inf")
    if not isinstance(Y, np.ndarray) or Y.dtype != np.uint8 or Y.ndim != 2:
        raise Violation(f"Y is not a 2-D uint8 array: {type(Y)} {getattr(Y, 'dtype', None)}")
    if Y.size and not np.isin(Y, (0, 1)).all():
        raise Violation("Y has values other than 0/1")
    if X.shape[0] != Y.shape[0]:
        raise Violation(f"X has {X.shape[0]} rows, Y {Y.shape[0]}")
    if len(fn) != X.shape[1] or len(ln) != Y.shape[1]:
        raise Violation("names do not match the shapes")


def run_case(folder, case, timeout=10.0):
    """Write the case into the empty ``folder``, load it and check the outcome.

    Returns
    -------
    outcome : str
        ``'ok'`` or ``'error:<first words of the message>'`` (for statistics).

    Raises
    ------
    Violation
        The contract was broken (another exception, NaN, hang, bad message).
    """
    from mlknn.datasets import DatasetFormatError, load, load_arff

    folder = Path(folder)
    for name, blob in case.files.items():
        (folder / name).write_bytes(blob)
    path = folder / case.arff
    try:
        with time_limit(timeout), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if case.call == "load":
                data = load(path)
            elif case.call == "load_arff_n_labels":
                data = load_arff(path, n_labels=case.n_labels)
            else:
                data = load_arff(path)
    except DatasetFormatError as exc:
        check_error(exc, folder, case)
        words = re.sub(r"^(, line \d+)?: ", "", str(exc)[len(exc.path) :])
        words = re.sub(r"'[^']*'|\d+", "_", words.split(" (")[0].split(":")[0])
        return "error:" + " ".join(words.split()[:8])
    except Hang as exc:
        raise Violation(f"hang: {exc}") from exc
    except Exception as exc:  # noqa: BLE001 - anything else is the bug we hunt
        tb = "".join(traceback.format_exception(exc)[-6:])
        raise Violation(f"{type(exc).__name__} instead of DatasetFormatError: {exc}\n{tb}") from exc
    check_result(data.X, data.Y, data.feature_names, data.label_names)
    return "ok"


def _clear(folder):
    for p in Path(folder).iterdir():
        if p.is_dir():
            shutil.rmtree(p)
        else:
            p.unlink()


# --------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=10000, help="number of cases (default 10000)")
    parser.add_argument("--seed", default="0", help="run seed (default 0)")
    parser.add_argument("--start", type=int, default=0, help="index of the first case (to replay one)")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per case before it counts as a hang")
    parser.add_argument("--out", type=Path, default=None, help="folder to keep violating cases in")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)

    outcomes = Counter()
    errors = Counter()
    ops = Counter()
    violations = []
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="mlknn-fuzz-") as tmp:
        for i in range(args.start, args.start + args.examples):
            case = make_case(random.Random(f"{args.seed}:{i}"))
            ops.update(case.ops)
            _clear(tmp)
            try:
                outcome = run_case(tmp, case, timeout=args.timeout)
            except Violation as exc:
                outcomes["VIOLATION"] += 1
                violations.append((i, case, str(exc)))
                if not args.quiet:
                    print(f"case {i}: {case.describe()}\n  {exc}", file=sys.stderr)
                if args.out is not None:
                    dest = args.out / f"case-{args.seed}-{i}"
                    dest.mkdir(parents=True, exist_ok=True)
                    for name, blob in case.files.items():
                        (dest / name).write_bytes(blob)
                    (dest / "VIOLATION.txt").write_text(f"{case.describe()}\n{exc}\n")
                continue
            outcomes["ok" if outcome == "ok" else "DatasetFormatError"] += 1
            if outcome != "ok":
                errors[outcome[len("error:"):]] += 1
            done = i - args.start + 1
            if not args.quiet and done % 5000 == 0:
                rate = done / (time.perf_counter() - t0)
                print(f"{done} cases, {rate:.0f}/s, {len(violations)} violations", file=sys.stderr)
    elapsed = time.perf_counter() - t0
    n = args.examples
    print(f"fuzz_loaders: {n} cases in {elapsed:.1f} s ({n / elapsed:.0f}/s), seed {args.seed!r}, "
          f"start {args.start}")
    print(f"  ok (finite data returned): {outcomes['ok']}")
    print(f"  DatasetFormatError:        {outcomes['DatasetFormatError']}")
    print(f"  violations:                {outcomes['VIOLATION']}")
    print("  most frequent errors:")
    for k, v in errors.most_common(25):
        print(f"    {v:7d}  {k}")
    print("  mutations applied:", ", ".join(f"{k} {v}" for k, v in sorted(ops.items())))
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
