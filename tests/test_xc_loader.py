"""Extreme Classification Repository / LIBSVM multi-label text loader (issue 12 point 4).

Valid files (both formats, 0- and 1-based features, rows without labels,
comments, gzip), agreement with scikit-learn's ``load_svmlight_file``, one
hand-written malformed file per kind of damage with the exact line expected,
and a small seeded fuzz: every mutated file either loads into finite, consistent
data or raises :class:`DatasetFormatError` naming the file (and a line inside
it) - never another exception.
"""

import gzip
import random

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

from mlknn.datasets import DatasetFormatError
from mlknn.datasets._arff_errors import MAX_MESSAGE
from mlknn.datasets._xc import load_xc

XC = "4 5 6\n0,3 0:1.5 2:1\n 1:2 4:-0.5\n5 3:0.25\n1,2,4\n"


def write(tmp_path, text, name="data.txt"):
    p = tmp_path / name
    p.write_bytes(text.encode() if isinstance(text, str) else text)
    return p


def test_xc_file(tmp_path):
    data = load_xc(write(tmp_path, XC))
    assert data.format == "xc" and data.zero_based
    assert isinstance(data.X, sp.csr_array) and data.X.dtype == np.float32
    assert isinstance(data.Y, sp.csr_array) and data.Y.dtype == np.uint8
    np.testing.assert_array_equal(
        data.X.toarray(),
        np.array([[1.5, 0, 1, 0, 0], [0, 2, 0, 0, -0.5], [0, 0, 0, 0.25, 0], [0, 0, 0, 0, 0]], np.float32),
    )
    np.testing.assert_array_equal(
        data.Y.toarray(),
        [[1, 0, 0, 1, 0, 0], [0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 1], [0, 1, 1, 0, 1, 0]],
    )
    assert data.name == "data" and data.label_names[5] == "l5" and len(data.feature_names) == 5
    X, Y = load_xc(write(tmp_path, XC), return_X_y=True)
    assert (X != data.X).nnz == 0 and (Y != data.Y).nnz == 0


def test_xc_one_based_auto_and_forced(tmp_path):
    # No index 0 and an index equal to d = 3: 1-based.
    p = write(tmp_path, "2 3 2\n0 1:1 3:2\n1 2:5\n")
    data = load_xc(p)
    assert not data.zero_based
    np.testing.assert_array_equal(data.X.toarray(), [[1, 0, 2], [0, 5, 0]])
    # Forced 0-based: index 3 is out of range [0, 3).
    with pytest.raises(DatasetFormatError, match=r"line 2: feature index 3 out of range \[0, 3\)"):
        load_xc(p, zero_based=True)
    # No 0 and no index d: 0-based (the repository's convention).
    assert load_xc(write(tmp_path, "1 3 1\n0 1:1 2:2\n", "b.txt")).zero_based


def test_libsvm_file_matches_sklearn(tmp_path):
    text = "# a comment line\n0,2 1:0.5 3:2 # trailing comment\n1 2:1.25\n2 1:-1 4:3\n"
    p = write(tmp_path, text, "data.svm")
    data = load_xc(p)
    assert data.format == "libsvm" and not data.zero_based
    Xs, ys = load_svmlight_file(str(p), multilabel=True, zero_based=False, n_features=4)
    np.testing.assert_array_equal(data.X.toarray(), Xs.toarray().astype(np.float32))
    assert [list(np.flatnonzero(r)) for r in data.Y.toarray()] == [sorted(int(v) for v in y) for y in ys]
    assert data.Y.shape == (3, 3)  # q = largest label + 1


def test_libsvm_zero_based_when_index_zero_appears(tmp_path):
    data = load_xc(write(tmp_path, "0 0:1 2:3\n1 1:2\n", "z.libsvm"), n_labels=4)
    assert data.zero_based and data.X.shape == (2, 3) and data.Y.shape == (2, 4)


def test_rows_without_labels_or_features_and_trailing_blank_lines(tmp_path):
    data = load_xc(write(tmp_path, "3 2 2\n 0:1\n\n1\n\n\n"))
    assert data.Y.toarray().tolist() == [[0, 0], [0, 0], [0, 1]]  # the blank line 3 is row 2
    assert data.X.toarray().tolist() == [[1, 0], [0, 0], [0, 0]]
    # A row that starts with a feature (no separating space) has no labels.
    assert load_xc(write(tmp_path, "1 2 2\n1:3\n", "c.txt")).Y.nnz == 0


def test_gzip_and_explicit_zeros(tmp_path):
    p = tmp_path / "data.txt.gz"
    p.write_bytes(gzip.compress(b"2 3 2\n0 0:0 1:1\n1 2:0.5\n"))
    data = load_xc(p)
    assert data.X.nnz == 2 and data.X.shape == (2, 3)


def test_n_features_and_n_labels(tmp_path):
    p = write(tmp_path, XC)
    assert load_xc(p, n_features=5, n_labels=6).X.shape == (4, 5)
    with pytest.raises(ValueError, match="n_features=7 differs from the header's 5"):
        load_xc(p, n_features=7)
    with pytest.raises(ValueError, match="n_labels must be a positive int"):
        load_xc(p, n_labels=0)
    with pytest.raises(ValueError, match="format must be"):
        load_xc(p, format="arff")
    with pytest.raises(FileNotFoundError):
        load_xc(tmp_path / "missing.txt")


@pytest.mark.parametrize(
    ("text", "line", "match"),
    [
        ("3 4\n0 1:1\n", 1, None),  # header with two numbers: read as libsvm, then bad tokens
        ("x y z\n0 1:1\n", 1, "malformed label field"),
        ("2 4 3\n0 1:1\n", None, "declares 2 rows but the file has 1"),
        ("1 4 3\n0 1:1\n1 2:1\n", 3, "declares 1 rows but the file has 2"),
        ("2 4 3\n0 1:1\n1,,2 2:1\n", 3, "malformed label field '1,,2'"),
        ("2 4 3\n0 1:1\n-1 2:1\n", 3, "malformed label field '-1'"),
        ("2 4 3\n0 1:1\n1 2:\n", 3, "malformed feature token '2:'"),
        ("2 4 3\n0 1:1\n1 :2\n", 3, "malformed feature token ':2'"),
        ("2 4 3\n0 1:1\n1 2:3:4\n", 3, "malformed feature token '2:3:4'"),
        ("2 4 3\n0 1:1\n1 x:1\n", 3, "malformed feature token 'x:1'"),
        ("2 4 3\n0 1:1\n1 2=1\n", 3, "malformed feature token '2=1'"),
        ("2 4 3\n0 1:abc\n1 2:1\n", 2, "bad number in feature token '1:abc'"),
        ("2 4 3\n0 1:1\n1 2:nan\n", 3, "'nan' is not a finite float32 number"),
        ("2 4 3\n0 1:1\n1 2:1e39\n", 3, "'1e39' is not a finite float32 number"),
        ("2 4 3\n0 0:1\n3 2:1\n", 3, r"label 3 out of range \[0, 3\)"),
        ("2 4 3\n0 0:1\n1 4:1 0:2\n", 3, None),  # 4 == d with a 0 present: out of range
        ("2 4 3\n0 1:1 1:2\n1 2:1\n", 2, "feature index 1 appears twice in the row"),
        ("2 4 3\n0 1:1\n1,1 2:1\n", 3, "label 1 appears twice in the row"),
        ("2 4 3\n0 1:1\n1 99999999999999999999:1\n", 3, "feature index 9999.* is too large"),
    ],
)
def test_malformed(tmp_path, text, line, match):
    p = write(tmp_path, text)
    with pytest.raises(DatasetFormatError) as info:
        load_xc(p)
    err = info.value
    assert err.path == str(p)
    assert err.line == line
    assert str(err).startswith(f"{p}" + (f", line {line}: " if line else ": "))
    if match:
        assert pytest.importorskip("re").search(match, str(err)), str(err)


def test_malformed_forced_formats(tmp_path):
    with pytest.raises(DatasetFormatError, match="line 1: malformed header"):
        load_xc(write(tmp_path, "0 1:1\n"), format="xc")
    with pytest.raises(DatasetFormatError, match="line 2: feature index 0 in a file read as 1-based"):
        load_xc(write(tmp_path, "1 1:1\n0 0:1\n", "d.svm"), zero_based=False)
    with pytest.raises(DatasetFormatError, match="not UTF-8 text"):
        load_xc(write(tmp_path, b"1 2 2\n0 1:\xff\xfe\n", "e.txt"))
    bad = tmp_path / "f.txt.gz"
    bad.write_bytes(gzip.compress(b"100 3 2\n" + b"0 0:1\n" * 100)[:-12])
    with pytest.raises(DatasetFormatError, match="gzip"):
        load_xc(bad)


def test_long_line_message_is_capped(tmp_path):
    p = write(tmp_path, "1 4 3\n0 " + "1:" + "9" * 5000 + "x\n")
    with pytest.raises(DatasetFormatError) as info:
        load_xc(p)
    assert len(str(info.value)) <= len(f"{p}, line 2: ") + MAX_MESSAGE


def _mutate(rnd, text):
    b = bytearray(text.encode())
    for _ in range(rnd.randint(1, 3)):
        op = rnd.randrange(6)
        i = rnd.randrange(len(b) + 1)
        if op == 0 and b:
            del b[min(i, len(b) - 1)]
        elif op == 1:
            b[i:i] = rnd.choice([b":", b",", b" ", b"\n", b"-", b"x", b"9", b"#", b"\t", b"e", b"\xff", b"0"])
        elif op == 2:
            b = b[:i]
        elif op == 3:
            lines = bytes(b).split(b"\n")
            j = rnd.randrange(len(lines))
            lines.insert(j, lines[j])
            b = bytearray(b"\n".join(lines))
        elif op == 4:
            b[i:i] = str(rnd.choice([0, 1, 5, 6, 10**6, 2**40])).encode()
        else:
            b[i:i] = b"1e400"
    return bytes(b)


@pytest.mark.parametrize("fmt_text", [XC, "0,2 1:0.5 3:2\n1 2:1.25\n2 1:-1 4:3\n"], ids=["xc", "libsvm"])
def test_fuzz(tmp_path, fmt_text):
    rnd = random.Random("xc-loader")
    for case in range(150):
        blob = _mutate(rnd, fmt_text)
        p = tmp_path / f"case{case}.txt"
        p.write_bytes(blob)
        try:
            X, Y = load_xc(p, return_X_y=True)
        except DatasetFormatError as exc:
            assert str(p) in str(exc)
            if exc.line is not None:
                assert 1 <= exc.line <= blob.count(b"\n") + 1, (blob, exc)
            continue
        except Exception as exc:  # pragma: no cover - the failure being tested for
            pytest.fail(f"case {case} {blob!r}: {type(exc).__name__}: {exc}")
        assert X.shape[0] == Y.shape[0]
        assert np.isfinite(X.data).all() and X.dtype == np.float32
        assert Y.dtype == np.uint8 and (Y.data == 1).all()


@pytest.mark.parametrize("name", ["data.txt", "data.svm", "data.libsvm", "data.TXT"])
def test_load_dispatches_by_suffix(tmp_path, name):
    from mlknn.datasets import load

    p = write(tmp_path, XC, name)
    X, Y = load(str(p), return_X_y=True)
    assert X.shape == (4, 5) and Y.shape == (4, 6) and sp.issparse(Y)
    assert load(p).format == "xc"
