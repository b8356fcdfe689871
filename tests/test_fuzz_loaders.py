"""Fuzzing the dataset loaders (issue 8): malformed ARFF / gzip / MULAN XML.

Contract checked on every case: the loader returns finite data (no NaN, no
inf, Y in {0, 1}) or raises :class:`DatasetFormatError` naming the file (and a
line inside it when it gives one) - never another exception type, never a hang.

* ``test_fuzz_*``: a bounded fuzz (hypothesis + a fixed slice of the seeded
  generator of ``benchmarks/fuzz_loaders.py``); the long run is
  ``python benchmarks/fuzz_loaders.py --examples 100000``.
* ``test_malformed_*``: one hand-written file per kind of damage, with the
  exact line expected.
* ``test_regression_*``: the loader bugs the fuzzing found, one test each.
* ``test_xml_*``: the MULAN XML is parsed with defusedxml (no entity
  expansion, no external entity or DTD fetched).
"""

import contextlib
import faulthandler
import gzip
import http.server
import importlib.util
import random
import re
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mlknn.datasets import DatasetFormatError, _arff, load, load_arff

_BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "fuzz_loaders.py"
_spec = importlib.util.spec_from_file_location("mlknn_fuzz_loaders", _BENCH)
fl = sys.modules.setdefault("mlknn_fuzz_loaders", importlib.util.module_from_spec(_spec))
if not hasattr(fl, "make_case"):
    _spec.loader.exec_module(fl)

# Seconds one case may take before it counts as a hang (SIGALRM). A valid
# 5-row file loads in milliseconds; the limit only has to separate "slow
# machine" from "exponential backtracking".
CASE_TIMEOUT = 10.0


@pytest.fixture(autouse=True)
def _hard_backstop():
    """Kill the run with a traceback if a test hangs where SIGALRM cannot reach."""
    faulthandler.dump_traceback_later(600, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


# --------------------------------------------------------------------------
# Bounded fuzz
# --------------------------------------------------------------------------


@settings(
    max_examples=250,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(rnd=st.randoms(use_true_random=False))
def test_fuzz_hypothesis(rnd):
    case = fl.make_case(rnd)
    with tempfile.TemporaryDirectory() as tmp:
        try:
            fl.run_case(tmp, case, timeout=CASE_TIMEOUT)
        except fl.Violation as exc:
            pytest.fail(f"{case.describe()}: {exc}")


def test_fuzz_seeded_slice():
    """Cases 0-199 of the on-demand generator (seed 'ci'): the same as
    ``python benchmarks/fuzz_loaders.py --seed ci --examples 200``."""
    outcomes = {"ok": 0, "error": 0}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(200):
            case = fl.make_case(random.Random(f"ci:{i}"))
            fl._clear(tmp)
            try:
                out = fl.run_case(tmp, case, timeout=CASE_TIMEOUT)
            except fl.Violation as exc:
                pytest.fail(f"case {i} ({case.describe()}): {exc}")
            outcomes["ok" if out == "ok" else "error"] += 1
    # The generator must exercise both branches of the contract.
    assert outcomes["ok"] >= 5 and outcomes["error"] >= 100, outcomes


def test_fuzz_checker_can_fail(tmp_path):
    """The oracle is not vacuous: another exception type, a hang, NaN and an
    error without the file name are all reported as violations."""
    case = fl.Case("x", {"a.arff": fl.MEKA_DENSE.encode()}, "a.arff", "load_arff")
    assert fl.run_case(tmp_path, case) == "ok"
    with pytest.raises(fl.Violation, match="NaN or inf"):
        fl.check_result(np.array([[np.nan]]), np.zeros((1, 1), np.uint8), ["x"], ["y"])
    with pytest.raises(fl.Violation, match="not one of the files"):
        fl.check_error(DatasetFormatError("boom", path="/elsewhere.arff"), tmp_path, case)
    with pytest.raises(fl.Violation, match="outside the file"):
        fl.check_error(DatasetFormatError("boom", path=tmp_path / "a.arff", line=999), tmp_path, case)
    with pytest.raises(fl.Hang):
        with fl.time_limit(0.2):
            while True:
                time.sleep(0.01)


# --------------------------------------------------------------------------
# One file per kind of damage
# --------------------------------------------------------------------------

MEKA = fl.MEKA_DENSE  # lines 1-6 header, 7 @data, 8-11 data rows
SPARSE = fl.MEKA_SPARSE  # lines 1-6 header, 7 @data, 8-11 data rows


def _replace_line(text, lineno, new):
    lines = text.split("\n")
    lines[lineno - 1] = new
    return "\n".join(lines)


MALFORMED = {
    # name: (file text, expected line or None)
    "truncated_mid_row": (MEKA[: MEKA.index("1,0,-1.5") + 5], 10),
    "truncated_in_header": (MEKA[: MEKA.index("@attribute x2")], None),
    "too_few_values": (_replace_line(MEKA, 9, "1,1,4,5"), 9),
    "too_many_values": (_replace_line(MEKA, 10, "1,0,-1.5,0,1e3,7"), 10),
    "sparse_index_too_large": (_replace_line(SPARSE, 9, "{1 2,5 1}"), 9),
    "sparse_index_negative": (_replace_line(SPARSE, 9, "{-1 2}"), 9),
    "sparse_index_not_int": (_replace_line(SPARSE, 9, "{1.5 2}"), 9),
    "sparse_index_duplicate": (_replace_line(SPARSE, 10, "{0 -3,0 1,3 1}"), 10),
    "sparse_key_without_value": (_replace_line(SPARSE, 8, "{0}"), 8),
    "unknown_type_date": (_replace_line(MEKA, 4, "@attribute x1 date"), 4),
    "unknown_type_word": (_replace_line(MEKA, 5, "@attribute x2 floating"), 5),
    "unterminated_nominal": (_replace_line(MEKA, 2, "@attribute y1 {0,1"), 2),
    "broken_escape_in_value": (_replace_line(MEKA, 8, "0,1,'\\q',3,4"), 8),
    "bad_unicode_escape": (_replace_line(MEKA, 8, "0,1,'\\u12',3,4"), 8),
    "unterminated_quote_value": (_replace_line(MEKA, 9, "1,1,'4,5,6"), 9),
    "unterminated_quote_name": (_replace_line(MEKA, 4, "@attribute 'x 1 numeric"), 4),
    "unterminated_quote_relation": (_replace_line(MEKA, 1, "@relation 'Toy: -C 2"), 1),
    "huge_number": (_replace_line(MEKA, 11, "0,0,1e999,8,9"), 11),
    "huge_integer_literal": (_replace_line(MEKA, 11, "0,0," + "9" * 400 + ",8,9"), 11),
    "minus_inf": (_replace_line(MEKA, 8, "0,1,-inf,3,4"), 8),
    "nan_literal": (_replace_line(MEKA, 9, "1,1,nan,5,6"), 9),
    "missing_value": (_replace_line(MEKA, 9, "1,1,?,5,6"), 9),
    "not_a_number": (_replace_line(MEKA, 9, "1,1,0x1f,5,6"), 9),
    "bad_nominal_label": (_replace_line(MEKA, 8, "2,1,2,3,4"), 8),
    "duplicate_attribute": (_replace_line(MEKA, 5, "@attribute x1 numeric"), 5),
    "data_before_attributes": (MEKA.replace("@data\n", "").replace("@attribute y1", "@data\n@attribute y1"), 2),
    "no_data_section": (MEKA.split("@data")[0], None),
    "empty_file": ("", None),
    "blank_lines_only": ("\n\n\n", None),
    "binary_garbage": ("\x00\x9c\xff\x01" * 50, None),
    "percent_in_bad_row": (_replace_line(MEKA, 10, "1,0,%n%s,0"), 10),
    "header_keyword_typo": (_replace_line(MEKA, 5, "@atribute x2 numeric"), 5),
    "header_stray_word": (_replace_line(MEKA, 5, "x2 numeric"), 5),
}


def test_header_typo_points_at_the_header_line(tmp_path):
    """Issue 14 point 7: '@atribute' on line 5 was a 754-character BadDataFormat at the
    first data row quoting the row; now the header line, what was expected, a hint."""
    long_rows = "\n".join(",".join(["1"] * 2 + ["123456.789"] * 3) for _ in range(80))
    text = _replace_line(MEKA, 5, "@atribute x2 numeric").split("@data")[0] + "@data\n" + long_rows + "\n"
    with pytest.raises(DatasetFormatError) as info:
        load_arff(_meka(tmp_path, text))
    msg = str(info.value)
    assert info.value.line == 5
    assert "'@atribute'" in msg and "did you mean '@attribute'" in msg and "@data" in msg
    assert "123456.789" not in msg


def test_message_length_is_capped(tmp_path):
    row = ",".join(["0", "1"] + ["'" + "v" * 2000 + "'"] + ["1", "2"])
    with pytest.raises(DatasetFormatError) as info:
        load_arff(_meka(tmp_path, _replace_line(MEKA, 8, row)))
    assert info.value.line == 8
    assert len(str(info.value)) < len(str(info.value.path)) + 420


# What Weka's ARFF reader (a java.io.StreamTokenizer) accepts and liac-arff alone did not,
# or did only by chance: each variant must load exactly like the canonical file.
WEKA_VALID = {
    # '%' starts a comment anywhere outside quotes (the MEKA Slashdot header).
    "comment_after_relation": (MEKA, 1, "@relation 'Toy: -C 2 -split-number 2' %50"),
    "comment_after_attribute": (MEKA, 4, "@attribute x1 numeric % the first feature"),
    "comment_after_data_keyword": (MEKA, 7, "@data % rows follow"),
    "comment_after_row": (MEKA, 8, "0,1,2,3,4 % first row"),
    "comment_after_sparse_row": (SPARSE, 8, "{0 1.5,3 1} %c"),
    "percent_inside_quotes_kept": (MEKA, 1, "@relation 'Toy: -C 2 -split-number 2 (50%)'"),
    # keywords in any case
    "upper_case_keywords": (MEKA.replace("@attribute", "@ATTRIBUTE").replace("numeric", "NUMERIC"), 7, "@DATA"),
    "mixed_case_keywords": (MEKA.replace("@attribute", "@Attribute").replace("numeric", "Real"), 1,
                            "@Relation 'Toy: -C 2 -split-number 2'"),
    # whitespace: tabs after keywords, spaces in '{}' and after commas, no space before '{'
    "tabs_after_keywords": (MEKA, 4, "@attribute\tx1\tnumeric"),
    "tab_after_relation": (MEKA, 1, "@relation\t'Toy: -C 2 -split-number 2'"),
    "spaces_in_braces": (MEKA, 2, "@attribute y1 { 0 , 1 }"),
    "no_space_before_brace": (MEKA, 3, "@attribute y2{0,1}"),
    "spaces_after_commas": (MEKA, 9, "1, 1, 4, 5, 6"),
    "indented_declaration": (MEKA, 5, "   @attribute x2 numeric"),
    # quoting and escapes
    "double_quoted_relation": (MEKA, 1, '@relation "Toy: -C 2 -split-number 2"'),
    "quoted_numbers": (MEKA, 8, "'0','1',2,'3',4"),
    # data on the @data line itself (Weka's tokenizer reads on)
    "data_on_data_line": (MEKA.replace("@data\n", "@data "), None, None),
    "crlf_line_ends": (MEKA.replace("\n", "\r\n"), None, None),
}


@pytest.mark.parametrize("kind", sorted(WEKA_VALID))
def test_weka_valid_variants_load_like_the_canonical_file(tmp_path, kind):
    base, lineno, new = WEKA_VALID[kind]
    text = base if lineno is None else _replace_line(base, lineno, new)
    canonical = SPARSE if base is SPARSE else MEKA
    X0, Y0 = load_arff(_meka(tmp_path, canonical, "a.arff"), return_X_y=True)
    with fl.time_limit(CASE_TIMEOUT):
        X, Y = load_arff(_meka(tmp_path, text, "b.arff"), return_X_y=True)
    X, X0 = (X.toarray(), X0.toarray()) if hasattr(X, "toarray") else (X, X0)
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(Y, Y0)


def test_meka_relation_comment_keeps_the_label_count(tmp_path):
    """Issue 14 point 2: the -C of a relation followed by a comment is still read."""
    text = _replace_line(MEKA, 1, "@relation 'Slashdot: -C 2 -split-number 1891' %50")
    data = load(_meka(tmp_path, text))
    assert data.Y.shape == (4, 2) and data.X.shape == (4, 3)


@pytest.mark.parametrize("kind", sorted(MALFORMED))
@pytest.mark.parametrize("compress", [False, True], ids=["plain", "gzip"])
def test_malformed_arff(tmp_path, kind, compress):
    text, line = MALFORMED[kind]
    path = tmp_path / ("m.arff.gz" if compress else "m.arff")
    blob = text.encode("latin-1") if kind == "binary_garbage" else text.encode("utf-8")
    path.write_bytes(gzip.compress(blob, mtime=0) if compress else blob)
    with fl.time_limit(CASE_TIMEOUT), pytest.raises(DatasetFormatError) as info:
        load_arff(path)
    err = info.value
    assert err.path == str(path) and str(path) in str(err)
    if line is not None:
        assert err.line == line, str(err)
        assert f"line {line}" in str(err)


@pytest.mark.parametrize(
    "damage",
    ["truncated", "flipped_body", "bad_magic_gz_name", "garbage_after_magic", "empty_gz"],
)
def test_malformed_gzip(tmp_path, damage):
    blob = gzip.compress(MEKA.encode(), mtime=0)
    if damage == "truncated":
        blob = blob[: len(blob) // 2]
    elif damage == "flipped_body":
        b = bytearray(blob)
        b[len(b) // 2] ^= 0xFF
        blob = bytes(b)
    elif damage == "bad_magic_gz_name":
        blob = MEKA.encode()
    elif damage == "garbage_after_magic":
        blob = b"\x1f\x8b" + bytes(range(256))
    else:
        blob = b""
    path = tmp_path / "m.arff.gz"
    path.write_bytes(blob)
    with fl.time_limit(CASE_TIMEOUT), pytest.raises(DatasetFormatError) as info:
        load_arff(path)
    assert str(path) in str(info.value)


XML_OK = fl.MULAN_SPARSE_XML


@pytest.mark.parametrize(
    "kind,xml,names",
    [
        ("label_missing_from_arff", XML_OK.replace("</labels>", '<label name="y9"></label></labels>'), "arff"),
        ("no_labels", '<labels xmlns="http://mulan.sourceforge.net/labels"></labels>', "xml"),
        ("unnamed_label", XML_OK.replace('<label name="y0">', "<label>"), "xml"),
        ("truncated", XML_OK[:60], "xml"),
        ("empty", "", "xml"),
        ("garbage", "\x00\x01 not xml", "xml"),
        ("unknown_encoding", XML_OK.replace("utf-8", "klingon"), "xml"),
        ("feature_named_as_label", XML_OK.replace("</labels>", '<label name="w1"></label></labels>'), "arff"),
    ],
)
def test_malformed_xml(tmp_path, kind, xml, names):
    (tmp_path / "sp.arff").write_text(fl.MULAN_SPARSE)
    (tmp_path / "sp.xml").write_text(xml)
    with fl.time_limit(CASE_TIMEOUT), pytest.raises(DatasetFormatError) as info:
        load_arff(tmp_path / "sp.arff")
    named = tmp_path / ("sp.arff" if names == "arff" else "sp.xml")
    assert info.value.path == str(named) and str(named) in str(info.value)


# --------------------------------------------------------------------------
# Regressions: loader bugs found by the fuzzing (fixed in _arff.py)
# --------------------------------------------------------------------------


def _meka(tmp_path, text, name="m.arff"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "decl",
    [
        "{" + ",".join(f"v{i}" for i in range(40)) + "} junk",  # stray word after the brace
        "{" + ",".join(f"v{i}" for i in range(40)) + ",a b}",  # unquoted space in a value
        "{" + ",".join(f"'v{i}'" for i in range(40)) + "' x",  # unclosed
    ],
    ids=["stray_word", "unquoted_space", "unclosed"],
)
def test_regression_nominal_declaration_backtracking(tmp_path, decl, monkeypatch):
    """Bug 1 (hang): liac-arff's nominal regex backtracked exponentially on a
    malformed declaration with many values (40 values: hours). Now refused,
    with the line of the declaration, before that regex ever sees it (checked
    by recording what the regex is applied to, not by timing; the SIGALRM
    limit only stops a regression from hanging the suite)."""
    import arff

    seen = []
    regex = arff._RE_TYPE_NOMINAL

    class Recording:
        def match(self, s, *args):
            seen.append(s)
            return regex.match(s, *args)

    monkeypatch.setattr(arff, "_RE_TYPE_NOMINAL", Recording())
    text = _replace_line(MEKA, 5, f"@attribute x2 {decl}")
    path = _meka(tmp_path, text)
    with fl.time_limit(CASE_TIMEOUT), pytest.raises(DatasetFormatError) as info:
        load_arff(path)
    assert info.value.line == 5 and "BadAttributeType" in str(info.value)
    assert not any("v39" in s for s in seen)  # the malformed 40-value domain never reached it
    # The recorder is live: a valid nominal declaration does go through the regex.
    load_arff(_meka(tmp_path, _replace_line(MEKA, 5, "@attribute x2 {3,5,0,8}")))
    assert any(s.startswith("{3,5,0,8}") for s in seen)


def test_regression_valid_long_nominal_still_loads(tmp_path):
    values = [f"v{i}" for i in range(300)] + ["'a b'", '"c,d"']
    text = _replace_line(MEKA, 5, "@attribute x2 {" + ",".join(values) + "}")
    text = text.replace("0,1,2,3,4", "0,1,2,v7,4").replace("1,1,4,5,6", "1,1,4,'a b',6")
    text = text.replace("1,0,-1.5,0,1e3", "1,0,-1.5,v7,1e3").replace("0,0,7,8,9", '0,0,7,"c,d",9')
    data = load_arff(_meka(tmp_path, text))
    assert data.X.shape == (4, 2 + len(values))
    assert data.feature_names[1 + 7] == "x2=v7"


@settings(max_examples=400, deadline=None, derandomize=True)
@given(st.text(alphabet="{}'\", ab\t\n\\", max_size=12))
def test_regression_nominal_check_agrees_with_liac(s):
    """The linear-time check accepts exactly what liac-arff's regex accepts
    (on strings short enough for the regex to be fast)."""
    expected = bool(_arff.arff._RE_TYPE_NOMINAL.match("{" + s))
    assert _arff._nominal_decl_ok("{" + s) == expected


@pytest.mark.parametrize("value", ["inf", "-inf", "Infinity", "1e999", "-1e400", "9" * 400])
def test_regression_non_finite_feature(tmp_path, value):
    """Bug 2: 'inf' and numbers beyond float64 (1e999) loaded as inf, which
    breaks every distance. Now an error naming attribute, row and line."""
    path = _meka(tmp_path, _replace_line(MEKA, 9, f"1,0,-1.5,{value},1e3"))
    with pytest.raises(DatasetFormatError) as info:
        load_arff(path)
    assert info.value.line == 9 and "'x2'" in str(info.value) and "non-finite" in str(info.value)


def test_regression_non_finite_sparse_feature(tmp_path):
    path = _meka(tmp_path, _replace_line(SPARSE, 10, "{0 -3,1 1e999,3 1}"))
    with pytest.raises(DatasetFormatError, match=r"line 10: non-finite value inf in feature 'b'"):
        load_arff(path)


@pytest.mark.parametrize(
    "row,line",
    [("{0 1.5,0 2,3 1}", 8), ("{1 2,2 y,4 1,4 0}", 9), ("{0 'p,1 x',0 'q'}", 8)],
    ids=["feature", "label", "quoted"],
)
def test_regression_sparse_duplicate_index(tmp_path, row, line):
    """Bug 3: liac-arff reads a sparse row into a dict, so '{4 1,4 0}' kept
    the last value silently (a label flipped). Now refused with the line."""
    text = _replace_line(SPARSE, line, row).replace("@attribute a numeric", "@attribute a string")
    path = _meka(tmp_path, text)
    with pytest.raises(DatasetFormatError, match=rf"line {line}: sparse data row gives attribute index \d more than once"):
        load_arff(path)


def test_regression_sparse_quoted_comma_is_not_a_duplicate(tmp_path):
    """A quoted value holding ',3 ' is not mistaken for a second key 3."""
    text = _replace_line(SPARSE, 8, "{0 'p,3 x',3 1}").replace("@attribute a numeric", "@attribute a string")
    with pytest.warns(UserWarning, match="string attribute 'a' dropped"):
        X, Y = load_arff(_meka(tmp_path, text), return_X_y=True)
    np.testing.assert_array_equal(Y[0], [1, 0])


@pytest.mark.parametrize("index", ["99999999999999999999999", "5", "99"])
def test_regression_sparse_index_out_of_range_with_missing_value(tmp_path, index):
    """Bug 8: liac-arff checks a sparse index only when it converts the value,
    so '{99 ?}' was silently dropped and '{99999999999999999999999 ?}' raised
    OverflowError. Now an error naming the index and the line."""
    path = _meka(tmp_path, _replace_line(SPARSE, 10, f"{{0 -3,{index} ?}}"))
    with pytest.raises(DatasetFormatError, match=rf"line 10: sparse attribute index {index} is out of range"):
        load_arff(path)


def test_regression_sparse_unsorted_indices_still_load(tmp_path):
    path = _meka(tmp_path, _replace_line(SPARSE, 10, "{3 1,1 1,0 -3,4 1,2 z}"))
    X, Y = load_arff(path, nominal="onehot", return_X_y=True)
    np.testing.assert_array_equal(X.toarray()[2], [-3, 1, 0, 0, 1])
    np.testing.assert_array_equal(Y[2], [1, 1])


def test_regression_integer_attribute_is_numeric(tmp_path):
    """Bug 4: liac-arff converts INTEGER with int(float(x)): 1.5 was silently
    truncated to 1 and 1e999 raised OverflowError. Weka reads INTEGER as
    numeric; so do we now."""
    text = MEKA.replace("@attribute x1 numeric", "@attribute x1 integer")
    X, _ = load_arff(_meka(tmp_path, _replace_line(text, 8, "0,1,1.5,3,4")), return_X_y=True)
    assert X[0, 0] == 1.5
    with pytest.raises(DatasetFormatError, match="line 8: non-finite"):
        load_arff(_meka(tmp_path, _replace_line(text, 8, "0,1,1e999,3,4"), "o.arff"))


@pytest.mark.parametrize("decl", ["{,}", "{?,a}", "{a,,b}", "{0,1,}"])
def test_regression_empty_nominal_value(tmp_path, decl):
    """Bug 9: liac-arff returns None for an empty or '?' value in a nominal
    domain; the {0,1} check then raised TypeError (sorting None)."""
    path = _meka(tmp_path, _replace_line(MEKA, 6, f"@attribute x3 {decl}"))
    with pytest.raises(DatasetFormatError, match=r"line 6: malformed ARFF \(BadAttributeType\)"):
        load_arff(path)


def test_regression_percent_in_bad_row(tmp_path):
    """Bug 5: a '%' in a malformed data row made liac-arff's own error message
    raise ValueError/TypeError ('message % line')."""
    for i, row in enumerate(["1,0,%n,0", "1,0,%s%s,0,1,2", "{0 %d}", "1,0,100%,0"]):
        path = _meka(tmp_path, _replace_line(MEKA, 9, row), f"p{i}.arff")
        with pytest.raises(DatasetFormatError) as info:
            load_arff(path)
        msg = str(info.value)
        assert info.value.line == 9 and msg.count("line 9") == 2, msg  # ours and liac-arff's


def test_regression_utf8_byte_order_mark(tmp_path):
    """Bug 6: a UTF-8 byte-order mark (Windows editors) made the @relation
    line unreadable ('Invalid layout ... line 2')."""
    path = tmp_path / "m.arff"
    path.write_bytes(b"\xef\xbb\xbf" + MEKA.encode())
    X, Y = load_arff(path, return_X_y=True)
    assert X.shape == (4, 3) and Y.shape == (4, 2)


def test_regression_xml_unknown_encoding(tmp_path):
    """Bug 7: an XML declaration with an unknown encoding raised a bare
    LookupError from the parser."""
    (tmp_path / "sp.arff").write_text(fl.MULAN_SPARSE)
    (tmp_path / "sp.xml").write_text(XML_OK.replace("utf-8", "klingon"))
    with pytest.raises(DatasetFormatError, match=r"sp\.xml, line 1: malformed MULAN XML \(unknown encoding"):
        load_arff(tmp_path / "sp.arff")


# --------------------------------------------------------------------------
# Safe XML
# --------------------------------------------------------------------------


def _mulan(tmp_path, xml):
    (tmp_path / "sp.arff").write_text(fl.MULAN_SPARSE)
    (tmp_path / "sp.xml").write_text(xml)
    return tmp_path / "sp.arff"


def test_xml_parsed_with_defusedxml(tmp_path, monkeypatch):
    import defusedxml.ElementTree as DET

    calls = []
    real = DET.parse

    def spy(source, *a, **kw):
        calls.append(source)
        return real(source, *a, **kw)

    monkeypatch.setattr(DET, "parse", spy)
    load_arff(_mulan(tmp_path, XML_OK))
    assert calls == [str(tmp_path / "sp.xml")]


@pytest.mark.parametrize("bomb", ["billion_laughs", "quadratic_blowup"])
def test_xml_entity_expansion_refused(tmp_path, bomb):
    import defusedxml

    xml = fl.BILLION_LAUGHS if bomb == "billion_laughs" else fl.QUADRATIC_BLOWUP
    # Refused, not expanded: the error's cause is defusedxml's refusal of the entity
    # declarations themselves (raised before any expansion). time_limit is only a hang guard.
    with fl.time_limit(CASE_TIMEOUT), pytest.raises(DatasetFormatError, match=r"sp\.xml: unsafe MULAN XML refused") as info:
        load_arff(_mulan(tmp_path, xml))
    assert isinstance(info.value.__cause__, defusedxml.DefusedXmlException)


def test_xml_external_entity_not_read(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-LABEL")
    xml = (
        f'<?xml version="1.0"?>\n<!DOCTYPE x [<!ENTITY e SYSTEM "file://{secret}">]>\n'
        '<labels><label name="&e;"></label></labels>\n'
    )
    with pytest.raises(DatasetFormatError, match="unsafe MULAN XML refused") as info:
        load_arff(_mulan(tmp_path, xml))
    assert "TOP-SECRET" not in str(info.value)


class _CountingHandler(http.server.BaseHTTPRequestHandler):
    hits = []

    def do_GET(self):  # noqa: N802 - http.server API
        type(self).hits.append(self.path)
        body = b'<!ENTITY e "y0">'
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_xml_external_dtd_never_fetched(tmp_path):
    """A DOCTYPE pointing at a server (here 127.0.0.1) is never requested."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _CountingHandler)
    _CountingHandler.hits = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/labels.dtd"
        xml = XML_OK.replace("<labels ", f'<!DOCTYPE labels SYSTEM "{url}">\n<labels ', 1)
        try:
            data = load_arff(_mulan(tmp_path, xml))
        except DatasetFormatError as exc:  # refusing the DTD outright is fine too
            assert "sp.xml" in str(exc)
        else:
            assert data.label_names == ["y0", "y1", "y2"]
    finally:
        server.shutdown()
        server.server_close()
    assert _CountingHandler.hits == []


def test_valid_seeds_load(tmp_path):
    """The fuzzer's starting files are valid (else every case is an error)."""
    for seed in fl.SEEDS:
        folder = tmp_path / seed.name
        folder.mkdir()
        (folder / f"{seed.stem}.arff").write_text(seed.arff)
        if seed.xml:
            (folder / f"{seed.stem}.xml").write_text(seed.xml)
        with pytest.warns(UserWarning) if seed.name == "mulan-dense" else contextlib.nullcontext():
            data = load(folder / f"{seed.stem}.arff")
        assert data.X.shape[0] == data.Y.shape[0] >= 4
        assert re.fullmatch(r"mulan|meka", data.format)
