"""Tests of mlknn.datasets on tiny hand-written files (no benchmark data needed)."""

import gzip
import re
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from mlknn.datasets import (
    DatasetFormatError,
    data_home,
    dataset_stats,
    label_stats,
    list_datasets,
    load,
    load_arff,
    make_multilabel,
    make_simulated_2d,
)


def write(folder, name, text):
    path = Path(folder) / name
    if name.endswith(".gz"):
        with gzip.open(path, "wt", encoding="utf-8") as fh:
            fh.write(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def xml_for(*names):
    body = "".join(f'<label name="{n}"></label>\n' for n in names)
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        f'<labels xmlns="http://mulan.sourceforge.net/labels">\n{body}</labels>\n'
    )


def dense(X):
    return X.toarray() if sp.issparse(X) else np.asarray(X)


# A MULAN file whose labels are neither first nor last, whose XML lists them in
# another order and without the ARFF escape, and whose relation carries a
# misleading MEKA "-C 2" (as medical and llog do).
DENSE_MULAN = """\
% a comment before the relation
@relation 'toy: -C 2'

@attribute f1 numeric
@attribute 'f two' REAL
@attribute lab\\'b {0,1}
@attribute f3 {0,1}
@attribute labA {0,1}

@data
1.5,2,1,0,0
-1,0.25,0,1,1
% a comment inside the data
3,4,1,1,1
"""


def test_dense_mulan_labels_by_name_in_arff_order(tmp_path):
    path = write(tmp_path, "toy.arff", DENSE_MULAN)
    write(tmp_path, "toy.xml", xml_for("labA", "lab'b"))
    data = load(path)
    assert data.label_names == ["lab'b", "labA"]  # ARFF order, unescaped
    assert data.feature_names == ["f1", "f two", "f3"]
    assert isinstance(data.X, np.ndarray) and data.X.dtype == np.float64
    np.testing.assert_array_equal(data.X, [[1.5, 2, 0], [-1, 0.25, 1], [3, 4, 1]])
    assert data.Y.dtype == np.uint8
    np.testing.assert_array_equal(data.Y, [[1, 0], [0, 1], [1, 1]])
    assert data.format == "mulan"
    assert data.name == "toy"
    assert [Path(s).name for s in data.source] == ["toy.arff", "toy.xml"]
    X, Y = load(path, return_X_y=True)
    np.testing.assert_array_equal(Y, data.Y)


def test_xml_escape_on_xml_side_only(tmp_path):
    # delicious: the XML keeps TAG_m\'usica; the ARFF may write it either way.
    path = write(tmp_path, "toy.arff", DENSE_MULAN.replace("lab\\'b", "'lab b'"))
    write(tmp_path, "toy.xml", xml_for("labA", "lab\\ b"))
    assert load(path).label_names == ["lab b", "labA"]


def test_xml_found_for_train_and_sparse_suffixes(tmp_path):
    text = DENSE_MULAN
    write(tmp_path, "Toy.xml", xml_for("labA", "lab'b"))
    for name in ("Toy-train.arff", "Toy-test-sparse.arff", "Toy-sparse.arff"):
        data = load_arff(write(tmp_path, name, text))
        assert data.label_names == ["lab'b", "labA"], name
        assert Path(data.source[1]).name == "Toy.xml"


def test_mulan_label_missing_from_arff(tmp_path):
    path = write(tmp_path, "toy.arff", DENSE_MULAN)
    write(tmp_path, "toy.xml", xml_for("labA", "nope"))
    with pytest.raises(DatasetFormatError, match="nope"):
        load(path)


SPARSE_MULAN = """\
@relation sp
@attribute a numeric
@attribute b {0,1}
@attribute c numeric
@attribute L1 {0,1}
@attribute L2 {0,1}
@data
{0 1.5,3 1}
{}
{1 1,2 -2,4 1}
{3 1, 4 1}
{}
"""


def test_sparse_mulan_to_csr(tmp_path):
    path = write(tmp_path, "sp.arff", SPARSE_MULAN)
    write(tmp_path, "sp.xml", xml_for("L1", "L2"))
    data = load(path)
    assert sp.issparse(data.X) and data.X.format == "csr"
    assert data.X.dtype == np.float64
    # trailing empty rows count as instances
    assert data.X.shape == (5, 3)
    np.testing.assert_array_equal(
        data.X.toarray(), [[1.5, 0, 0], [0, 0, 0], [0, 1, -2], [0, 0, 0], [0, 0, 0]]
    )
    np.testing.assert_array_equal(data.Y, [[1, 0], [0, 0], [0, 1], [1, 1], [0, 0]])
    assert data.X.nnz == 3  # no explicit zeros stored


def test_sparse_gzip(tmp_path):
    path = write(tmp_path, "sp.arff.gz", SPARSE_MULAN)
    write(tmp_path, "sp.xml", xml_for("L1", "L2"))
    data = load(path)
    assert data.name == "sp"
    assert sp.issparse(data.X) and data.X.shape == (5, 3)
    np.testing.assert_array_equal(data.Y.sum(axis=0), [2, 2])


MEKA_FIRST = """\
@relation 'M: -C 2 -split-number 3'
@attribute y1 {0,1}
@attribute y2 {0,1}
@attribute x1 numeric
@attribute x2 numeric
@data
1,0,0.5,1
0,1,2,3
1,1,4,5
"""

MEKA_LAST = """\
@relation 'M: -C -2'
@attribute x1 numeric
@attribute x2 numeric
@attribute y1 {0,1}
@attribute y2 {0,1}
@data
0.5,1,1,0
2,3,0,1
4,5,1,1
"""


@pytest.mark.parametrize("text", [MEKA_FIRST, MEKA_LAST], ids=["C+2", "C-2"])
def test_meka_C(tmp_path, text):
    data = load(write(tmp_path, "m.arff", text))
    assert data.format == "meka"
    assert data.label_names == ["y1", "y2"]
    assert data.feature_names == ["x1", "x2"]
    np.testing.assert_array_equal(data.X, [[0.5, 1], [2, 3], [4, 5]])
    np.testing.assert_array_equal(data.Y, [[1, 0], [0, 1], [1, 1]])


def test_meka_gzip_and_sparse(tmp_path):
    text = "@relation 'S: -C 2'\n@attribute y1 {0,1}\n@attribute y2 {0,1}\n" \
        "@attribute x numeric\n@data\n{0 1,2 7}\n{1 1}\n"
    data = load(write(tmp_path, "S.arff.gz", text))
    assert sp.issparse(data.X)
    np.testing.assert_array_equal(data.X.toarray(), [[7], [0]])
    np.testing.assert_array_equal(data.Y, [[1, 0], [0, 1]])


def test_load_arff_explicit_n_labels_and_xml(tmp_path):
    path = write(tmp_path, "m.arff", MEKA_LAST.replace("'M: -C -2'", "plain"))
    np.testing.assert_array_equal(load_arff(path, n_labels=-2).Y, [[1, 0], [0, 1], [1, 1]])
    xml = write(tmp_path, "other.xml", xml_for("y2"))
    assert load_arff(path, xml=xml).label_names == ["y2"]


def test_no_label_information(tmp_path):
    path = write(tmp_path, "m.arff", MEKA_LAST.replace("'M: -C -2'", "plain"))
    with pytest.raises(DatasetFormatError, match=r"m\.arff.*(xml|-C)"):
        load(path)


NOMINAL = """\
@relation 'N: -C 1'
@attribute y {0,1}
@attribute colour {red,green,'dark blue'}
@attribute flag {1,0}
@attribute id {r1,r2,r3,r4}
@attribute note string
@attribute x numeric
@data
1,green,1,r1,'hello world',0.5
0,red,0,r2,abc,1
1,'dark blue',0,r3,xyz,2
0,green,1,r4,abc,3
"""


def test_nominal_one_hot_and_dropped_columns(tmp_path):
    # nominal="onehot": plain indicators for the three-valued attribute.
    path = write(tmp_path, "n.arff", NOMINAL)
    with pytest.warns(UserWarning) as record:
        data = load(path, nominal="onehot")
    messages = " ".join(str(w.message) for w in record)
    assert "'id'" in messages and "identifier" in messages
    assert "'note'" in messages and "string" in messages
    assert data.feature_names == [
        "colour=red", "colour=green", "colour=dark blue", "flag", "x"
    ]
    np.testing.assert_array_equal(
        data.X,
        [[0, 1, 0, 1, 0.5], [1, 0, 0, 0, 1], [0, 0, 1, 0, 2], [0, 1, 0, 1, 3]],
    )
    np.testing.assert_array_equal(data.Y, [[1], [0], [1], [0]])


def test_sparse_nominal_defaults_to_first_value(tmp_path):
    # In sparse ARFF an omitted nominal value is the first declared one:
    # colour=red here (0 in the one colour=green column), and 1 for the {1,0} attribute.
    text = "@relation 'N: -C 1'\n@attribute y {0,1}\n@attribute colour {red,green}\n" \
        "@attribute flag {1,0}\n@attribute x numeric\n@data\n" \
        "{0 1,1 green,2 0}\n{3 2}\n{1 green}\n"
    data = load(write(tmp_path, "n.arff", text))
    assert sp.issparse(data.X)
    assert data.feature_names == ["colour=green", "flag", "x"]
    np.testing.assert_array_equal(
        data.X.toarray(), [[1, 0, 0], [0, 1, 2], [1, 1, 0]]
    )


def test_missing_numeric_value_raises(tmp_path):
    text = MEKA_FIRST.replace("0,1,2,3", "0,1,?,3")
    path = write(tmp_path, "m.arff", text)
    with pytest.raises(DatasetFormatError) as info:
        load(path)
    msg = str(info.value)
    assert "m.arff" in msg and "line 8" in msg and "'x1'" in msg and "missing" in msg
    assert info.value.line == 8


def test_missing_label_value_raises(tmp_path):
    path = write(tmp_path, "m.arff", MEKA_FIRST.replace("1,1,4,5", "1,?,4,5"))
    with pytest.raises(DatasetFormatError, match=r"line 9.*'y2'"):
        load(path)


# --------------------------------------------------------------------------
# Malformed files: DatasetFormatError naming the file and the line
# --------------------------------------------------------------------------


def assert_format_error(path, line, exc_info):
    err = exc_info.value
    assert isinstance(err, ValueError)
    assert Path(path).name in str(err)
    if line is not None:
        assert f"line {line}" in str(err), str(err)
        assert err.line == line


def test_truncated_file(tmp_path):
    path = write(tmp_path, "m.arff", MEKA_FIRST[: MEKA_FIRST.rindex(",")])  # cut the last row
    with pytest.raises(DatasetFormatError) as info:
        load(path)
    assert_format_error(path, 9, info)


def test_truncated_before_data(tmp_path):
    path = write(tmp_path, "m.arff", MEKA_FIRST[: MEKA_FIRST.index("@data")])
    with pytest.raises(DatasetFormatError) as info:
        load(path)
    assert_format_error(path, None, info)
    assert re.search(r"line \d+", str(info.value))


def test_wrong_value_count(tmp_path):
    path = write(tmp_path, "m.arff", MEKA_FIRST.replace("0,1,2,3", "0,1,2,3,9"))
    with pytest.raises(DatasetFormatError) as info:
        load(path)
    assert_format_error(path, 8, info)


def test_bad_sparse_index(tmp_path):
    path = write(tmp_path, "sp.arff", SPARSE_MULAN.replace("{1 1,2 -2,4 1}", "{1 1,2 -2,9 1}"))
    write(tmp_path, "sp.xml", xml_for("L1", "L2"))
    with pytest.raises(DatasetFormatError) as info:
        load(path)
    assert_format_error(path, 10, info)


def test_unknown_attribute_type(tmp_path):
    path = write(tmp_path, "m.arff", MEKA_FIRST.replace("@attribute x2 numeric", "@attribute x2 date"))
    with pytest.raises(DatasetFormatError) as info:
        load(path)
    assert_format_error(path, 5, info)


def test_bad_numeric_value(tmp_path):
    path = write(tmp_path, "m.arff", MEKA_FIRST.replace("4,5", "4,abc"))
    with pytest.raises(DatasetFormatError) as info:
        load(path)
    assert_format_error(path, 9, info)


def test_bad_nominal_value(tmp_path):
    path = write(tmp_path, "m.arff", MEKA_FIRST.replace("1,1,4,5", "1,2,4,5"))
    with pytest.raises(DatasetFormatError) as info:
        load(path)
    assert_format_error(path, 9, info)


def test_bad_gzip_magic(tmp_path):
    path = tmp_path / "m.arff.gz"
    path.write_text(MEKA_FIRST)  # plain text under a .gz name
    with pytest.raises(DatasetFormatError, match="gzip"):
        load(path)
    # gzip content is recognised by its magic bytes, whatever the name
    write(tmp_path, "g.gz", MEKA_FIRST).rename(tmp_path / "g.arff")
    assert load(tmp_path / "g.arff").Y.shape == (3, 2)
    path.write_bytes(b"\x1f\x8b\x08\x00garbage that is not deflate data")
    with pytest.raises(DatasetFormatError) as info:
        load(path)
    assert_format_error(path, None, info)
    assert "gzip" in str(info.value)


def test_truncated_gzip(tmp_path):
    path = write(tmp_path, "m.arff.gz", MEKA_FIRST * 20)
    raw = path.read_bytes()
    path.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(DatasetFormatError) as info:
        load(path)
    assert_format_error(path, None, info)
    assert "gzip" in str(info.value)


def test_bad_xml(tmp_path):
    path = write(tmp_path, "toy.arff", DENSE_MULAN)
    write(tmp_path, "toy.xml", '<labels xmlns="x">\n<label name="labA">\n</labels>\n')
    with pytest.raises(DatasetFormatError) as info:
        load(path)
    assert "toy.xml" in str(info.value)
    assert info.value.line == 3


def test_xml_entity_expansion_refused(tmp_path):
    path = write(tmp_path, "toy.arff", DENSE_MULAN)
    write(
        tmp_path,
        "toy.xml",
        '<?xml version="1.0"?>\n<!DOCTYPE labels [<!ENTITY a "labA">'
        '<!ENTITY b "&a;&a;&a;&a;">]>\n<labels><label name="&b;"/></labels>\n',
    )
    with pytest.raises(DatasetFormatError, match="toy.xml"):
        load(path)


def test_xml_without_labels(tmp_path):
    path = write(tmp_path, "toy.arff", DENSE_MULAN)
    write(tmp_path, "toy.xml", "<labels/>")
    with pytest.raises(DatasetFormatError, match="toy.xml"):
        load(path)


def test_meka_C_out_of_range(tmp_path):
    path = write(tmp_path, "m.arff", MEKA_FIRST.replace("-C 2", "-C 9"))
    with pytest.raises(DatasetFormatError, match="-C 9"):
        load(path)


def test_non_binary_label(tmp_path):
    path = write(tmp_path, "m.arff", MEKA_FIRST.replace("@attribute y1 {0,1}", "@attribute y1 {0,1,2}"))
    with pytest.raises(DatasetFormatError, match="'y1'"):
        load(path)


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        load(tmp_path / "nope.arff")


# --------------------------------------------------------------------------
# MANIFEST-based loading
# --------------------------------------------------------------------------

MANIFEST_HEADER = "name\tfiles\tformat\tlabel_location\tn\td\tq\tlcard\tldens\tldiv\tsparse\tsha256\tsource\n"


@pytest.fixture
def home(tmp_path):
    root = tmp_path / "data"
    root.mkdir()
    rows = []
    # 'toy': union + fixed split
    (root / "toy").mkdir()
    union = DENSE_MULAN
    train = DENSE_MULAN[: DENSE_MULAN.index("3,4,1,1,1")]
    test = DENSE_MULAN[: DENSE_MULAN.index("1.5,2,1,0,0")] + "3,4,1,1,1\n"
    write(root / "toy", "toy.arff", union)
    write(root / "toy", "toy-train.arff", train)
    write(root / "toy", "toy-test.arff", test)
    write(root / "toy", "toy.xml", xml_for("labA", "lab'b"))
    rows.append("toy\ttoy.arff;toy-train.arff;toy-test.arff;toy.xml\tmulan\txml\t3\t3\t2\t1.333\t0.667\t3\tno\t-\t-")
    # 'halves': no union file (like scene)
    (root / "halves").mkdir()
    write(root / "halves", "halves-train.arff", train)
    write(root / "halves", "halves-test.arff", test)
    write(root / "halves", "halves.xml", xml_for("labA", "lab'b"))
    rows.append("halves\thalves-train.arff;halves-test.arff;halves.xml\tmulan\txml\t3\t3\t2\t1.333\t0.667\t3\tno\t-\t-")
    # 'mk': one MEKA file, gzip, sparse
    (root / "mk").mkdir()
    write(root / "mk", "Mk.arff.gz", SPARSE_MULAN.replace("@relation sp", "@relation 'Mk: -C -2'"))
    rows.append("mk\tMk.arff.gz\tmeka\tlast 2\t5\t3\t2\t0.800\t0.400\t4\tyes\t-\t-")
    (root / "MANIFEST.tsv").write_text(MANIFEST_HEADER + "\n".join(rows) + "\n")
    return root


def test_load_by_name(home):
    data = load("toy", data_home=home)
    assert data.name == "toy" and data.split is None
    assert data.X.shape == (3, 3)
    np.testing.assert_array_equal(data.Y, [[1, 0], [0, 1], [1, 1]])
    assert [Path(s).name for s in data.source] == ["toy.arff", "toy.xml"]
    assert load("TOY", data_home=home).X.shape == (3, 3)  # case-insensitive


def test_load_split(home):
    tr = load("toy", split="train", data_home=home)
    te = load("toy", split="test", data_home=home)
    assert tr.split == "train" and tr.X.shape == (2, 3) and te.X.shape == (1, 3)
    np.testing.assert_array_equal(np.vstack([tr.Y, te.Y]), load("toy", data_home=home).Y)


def test_union_from_train_and_test(home):
    data = load("halves", data_home=home)
    np.testing.assert_array_equal(data.X, [[1.5, 2, 0], [-1, 0.25, 1], [3, 4, 1]])
    assert [Path(s).name for s in data.source] == [
        "halves-train.arff", "halves-test.arff", "halves.xml"
    ]


def test_meka_by_name_and_missing_split(home):
    X, Y = load("mk", data_home=home, return_X_y=True)
    assert sp.issparse(X) and X.shape == (5, 3)
    np.testing.assert_array_equal(Y, [[1, 0], [0, 0], [0, 1], [1, 1], [0, 0]])
    with pytest.raises(ValueError, match=r"'mk'.*'train'|'train'.*'mk'"):
        load("mk", split="train", data_home=home)


def test_bad_split_value(home):
    with pytest.raises(ValueError, match="split"):
        load("toy", split="validation", data_home=home)


def test_unknown_name_lists_available(home):
    with pytest.raises(ValueError) as info:
        load("nope", data_home=home)
    for name in ("toy", "halves", "mk"):
        assert name in str(info.value)


def test_env_var(home, monkeypatch):
    monkeypatch.setenv("MLKNN_DATA", str(home))
    assert data_home() == home
    assert load("toy").X.shape == (3, 3)
    monkeypatch.delenv("MLKNN_DATA")
    with pytest.raises(RuntimeError, match="MLKNN_DATA"):
        load("toy")
    with pytest.raises(RuntimeError, match="MLKNN_DATA"):
        list_datasets()


def test_list_datasets(home):
    rows = list_datasets(data_home=home)
    assert [r["name"] for r in rows] == ["toy", "halves", "mk"]
    mk = rows[2]
    assert mk["format"] == "meka" and mk["sparse"] is True
    assert (mk["n"], mk["d"], mk["q"], mk["ldiv"]) == (5, 3, 2, 4)
    assert mk["lcard"] == pytest.approx(0.8) and mk["ldens"] == pytest.approx(0.4)
    assert rows[0]["splits"] == ("train", "test") and mk["splits"] == ()


def test_manifest_matches_loaded_toy_data(home):
    for row in list_datasets(data_home=home):
        data = load(row["name"], data_home=home)
        s = dataset_stats(data.Y, data.X)
        assert (s["n"], s["d"], s["q"], s["ldiv"]) == (row["n"], row["d"], row["q"], row["ldiv"])
        assert round(s["lcard"], 3) == row["lcard"]


def test_bad_manifest(tmp_path):
    (tmp_path / "MANIFEST.tsv").write_text(MANIFEST_HEADER + "x\tx.arff\tmulan\txml\tmany\t1\t1\t1\t1\t1\tno\t-\t-\n")
    with pytest.raises(DatasetFormatError, match="line 2"):
        list_datasets(data_home=tmp_path)


# --------------------------------------------------------------------------
# Statistics
# --------------------------------------------------------------------------


def test_dataset_stats_hand_worked():
    Y = np.array(
        [
            [1, 0, 0, 1],
            [1, 0, 0, 1],
            [0, 0, 0, 0],
            [1, 1, 1, 0],
            [0, 0, 0, 0],
        ],
        dtype=np.uint8,
    )
    X = np.zeros((5, 7))
    s = dataset_stats(Y, X)
    # 2 + 2 + 0 + 3 + 0 = 7 labels over 5 instances; distinct sets:
    # {1,4}, {}, {1,2,3} -> 3
    assert s == {
        "n": 5, "d": 7, "q": 4,
        "lcard": pytest.approx(1.4), "ldens": pytest.approx(0.35),
        "ldiv": 3, "pldiv": pytest.approx(0.6),
    }
    assert dataset_stats(sp.csr_matrix(Y))["ldiv"] == 3
    assert dataset_stats(Y)["d"] is None


def test_dataset_stats_many_labels_packbits():
    # Rows differing only in the 9th label (second packed byte) are distinct.
    Y = np.zeros((3, 12), dtype=np.uint8)
    Y[1, 8] = 1
    Y[2, 8] = Y[2, 11] = 1
    assert dataset_stats(Y)["ldiv"] == 3


def test_dataset_stats_rejects_non_binary():
    with pytest.raises(ValueError):
        dataset_stats(np.array([[0, 2]]))


def test_label_stats():
    Y = np.array([[1, 0, 1], [1, 0, 0], [1, 0, 1], [1, 0, 0]])
    s = label_stats(Y, ["a", "b", "c"])
    np.testing.assert_array_equal(s["count"], [4, 0, 2])
    np.testing.assert_allclose(s["frequency"], [1, 0, 0.5])
    np.testing.assert_array_equal(s["irlbl"], [1, np.inf, 2])
    assert s["mean_ir"] == pytest.approx(1.5)
    assert s["label_names"] == ["a", "b", "c"]


# --------------------------------------------------------------------------
# Synthetic data
# --------------------------------------------------------------------------

TABLE1 = {  # label set (omega1, omega2, omega3) -> instances, Younes et al. 2011
    (1, 0, 0): 150,
    (0, 1, 0): 162,
    (1, 1, 0): 304,
    (0, 0, 1): 262,
    (1, 0, 1): 43,
    (0, 1, 1): 78,
    (1, 1, 1): 20,
}
MEANS = {
    (1, 0, 0): (0, 0),
    (0, 1, 0): (1, 0),
    (1, 1, 0): (0.5, 0),
    (0, 0, 1): (0.5, 1),
    (1, 0, 1): (0.25, 0.6),
    (0, 1, 1): (0.75, 0.6),
    (1, 1, 1): (0.5, 0.5),
}


def test_simulated_2d_matches_table1():
    d = make_simulated_2d()
    assert d.name == "simulated-2d"
    assert d.X.shape == (1019, 2) and d.X.dtype == np.float64
    assert d.Y.shape == (1019, 3) and d.Y.dtype == np.uint8
    assert d.label_names == ["omega1", "omega2", "omega3"]
    sets, counts = np.unique(d.Y, axis=0, return_counts=True)
    assert {tuple(int(v) for v in s): int(c) for s, c in zip(sets, counts)} == TABLE1
    for labels, mean in MEANS.items():
        rows = (d.Y == labels).all(axis=1)
        # sd 0.1: the sample mean of >= 20 points is within 0.1 of the mean
        np.testing.assert_allclose(d.X[rows].mean(axis=0), mean, atol=0.1)
        assert d.X[rows].std(axis=0).max() < 0.2


def test_simulated_2d_deterministic():
    a, b, c = make_simulated_2d(random_state=3), make_simulated_2d(random_state=3), make_simulated_2d(random_state=4)
    np.testing.assert_array_equal(a.X, b.X)
    np.testing.assert_array_equal(a.Y, b.Y)
    assert not np.array_equal(a.X, c.X)


def test_simulated_2d_n_samples_keeps_proportions():
    d = make_simulated_2d(n_samples=2038)
    _, counts = np.unique(d.component, return_counts=True)
    np.testing.assert_array_equal(counts, np.array([150, 162, 304, 262, 43, 78, 20]) * 2)
    assert make_simulated_2d(n_samples=100).X.shape == (100, 2)
    with pytest.raises(ValueError):
        make_simulated_2d(n_samples=0)


def test_make_multilabel():
    d = make_multilabel(n_samples=50, n_features=7, n_labels=4, random_state=1)
    assert d.X.shape == (50, 7) and d.X.dtype == np.float64
    assert d.Y.shape == (50, 4) and d.Y.dtype == np.uint8
    assert set(np.unique(d.Y)) <= {0, 1}
    assert len(d.feature_names) == 7 and len(d.label_names) == 4
    e = make_multilabel(n_samples=50, n_features=7, n_labels=4, random_state=1)
    np.testing.assert_array_equal(d.X, e.X)
    few = make_multilabel(n_samples=300, n_labels=6, avg_labels=1, random_state=0)
    many = make_multilabel(n_samples=300, n_labels=6, avg_labels=4, random_state=0)
    assert few.Y.sum() < many.Y.sum()
    with pytest.raises(TypeError):
        make_multilabel(n_classes=3)


def test_sparse_string_attribute_dropped(tmp_path):
    text = "@relation 'S: -C -1'\n@attribute x numeric\n@attribute s string\n" \
        "@attribute y {0,1}\n@data\n{0 2,1 'a b',2 1}\n{1 c}\n{0 -1}\n"
    with pytest.warns(UserWarning, match="'s'"):
        data = load(write(tmp_path, "s.arff", text))
    assert data.feature_names == ["x"]
    np.testing.assert_array_equal(data.X.toarray(), [[2], [0], [-1]])
    np.testing.assert_array_equal(data.Y, [[1], [0], [0]])


def test_latin1_file(tmp_path):
    path = tmp_path / "l.arff"
    path.write_bytes(MEKA_FIRST.replace("x1", "caf\xe9").encode("latin-1"))
    assert load(path).feature_names == ["caf\xe9", "x2"]


NOMINAL_DISTANCES = """\
@relation 'D: -C 1'
@attribute y {0,1}
@attribute gene {YES,NO}
@attribute colour {red,green,blue}
@attribute x numeric
@data
1,YES,red,0
0,NO,red,0
1,YES,green,0
0,NO,blue,3
"""


@pytest.mark.parametrize("nominal, colour_mismatch", [("weka", 1.0), ("onehot", 2.0)])
def test_nominal_encodings_give_the_hand_computed_distances(tmp_path, nominal, colour_mismatch):
    """Issue 14 point 3. Squared Euclidean distances between rows, by hand: a YES/NO
    mismatch adds 1 (one 0/1 column, not two); a colour mismatch adds 1 with Weka's
    nominal distance (indicators / sqrt 2) and 2 with plain one-hot; x adds its
    squared difference."""
    data = load(write(tmp_path, "d.arff", NOMINAL_DISTANCES), nominal=nominal)
    assert data.feature_names == ["gene=NO", "colour=red", "colour=green", "colour=blue", "x"]
    np.testing.assert_array_equal(data.X[:, 0], [0, 1, 0, 1])  # NO (second value) is 1
    D = ((data.X[:, None, :] - data.X[None, :, :]) ** 2).sum(axis=2)
    c = colour_mismatch
    expected = np.array([
        [0, 1, c, 1 + c + 9],
        [1, 0, 1 + c, c + 9],
        [c, 1 + c, 0, 1 + c + 9],
        [1 + c + 9, c + 9, 1 + c + 9, 0],
    ])
    np.testing.assert_allclose(D, expected, rtol=0, atol=1e-12)


def test_nominal_encoding_is_validated(tmp_path):
    with pytest.raises(ValueError, match="'nominal' parameter must be one of 'weka', 'onehot'"):
        load(write(tmp_path, "d.arff", NOMINAL_DISTANCES), nominal="dummy")


@pytest.mark.parametrize("name", ["data.xlsx", "train.json"])  # .svm: load_xc; .csv: load_csv
def test_other_formats_say_which_are_read(tmp_path, name):
    path = tmp_path / name
    path.write_text("1,2,3\n")
    with pytest.raises(ValueError, match=r"reads ARFF files \(\.arff, or gzip-compressed \.arff\.gz\)"):
        load(str(path))


def test_unknown_name_suggests_the_closest(data_dir):
    with pytest.raises(ValueError, match="did you mean 'emotions'"):
        load("emotion")


def test_fixed_split_by_paths_has_one_label_set(data_dir):
    """Issue 14 point 5: load(train_path) and load(test_path) give the same columns."""
    train = load(data_dir / "emotions" / "emotions-train.arff")
    test = load(data_dir / "emotions" / "emotions-test.arff")
    assert train.label_names == test.label_names and train.feature_names == test.feature_names
    assert train.X.shape == (391, 72) and test.X.shape == (202, 72)
    whole = load("emotions", split="train")
    np.testing.assert_array_equal(train.X, whole.X)
    np.testing.assert_array_equal(train.Y, whole.Y)
