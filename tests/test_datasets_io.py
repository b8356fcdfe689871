"""CSV / TSV in and ARFF out: load_csv, load(..., labels=), save_arff, and round trips."""

import numpy as np
import pytest
import scipy.sparse as sp

from mlknn.datasets import DatasetFormatError, load, load_arff, load_csv, save_arff


def _table(path, header, rows, sep=","):
    path.write_text("\n".join([sep.join(header)] + [sep.join(map(str, r)) for r in rows]) + "\n")
    return path


@pytest.fixture
def problem():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(25, 4))
    Y = (rng.random((25, 3)) < 0.4).astype(np.uint8)
    return X, Y


def _write_csv(path, X, Y, label_names=("sports", "news", "arts"), labels_first=False, sep=","):
    feature_names = [f"f{j}" for j in range(X.shape[1])]
    header = (list(label_names) + feature_names) if labels_first else (feature_names + list(label_names))
    rows = [[*(y.tolist()), *(repr(float(v)) for v in x)] if labels_first else [*(repr(float(v)) for v in x), *y.tolist()]
            for x, y in zip(X, Y)]
    return _table(path, header, rows, sep)


@pytest.mark.parametrize("labels", [["sports", "news", "arts"], "sports,news,arts", -3])
def test_csv_labels_by_name_or_count(tmp_path, problem, labels):
    X, Y = problem
    data = load(_write_csv(tmp_path / "d.csv", X, Y), labels=labels)
    np.testing.assert_array_equal(data.X, X)  # repr-exact floats: the same bits
    np.testing.assert_array_equal(data.Y, Y)
    assert data.label_names == ["sports", "news", "arts"] and data.feature_names == ["f0", "f1", "f2", "f3"]
    assert data.Y.dtype == np.uint8 and data.format == "csv" and data.name == "d"


def test_tsv_with_labels_first(tmp_path, problem):
    X, Y = problem
    path = _write_csv(tmp_path / "d.tsv", X, Y, labels_first=True, sep="\t")
    X2, Y2 = load(path, labels=3, return_X_y=True)
    np.testing.assert_array_equal(X2, X)
    np.testing.assert_array_equal(Y2, Y)


def test_label_names_in_another_order_pick_those_columns(tmp_path, problem):
    X, Y = problem
    data = load_csv(_write_csv(tmp_path / "d.csv", X, Y), labels=["arts", "sports"])
    # Y's columns follow the order of the names; the feature block keeps every other column.
    np.testing.assert_array_equal(data.Y, Y[:, [2, 0]])
    assert data.label_names == ["arts", "sports"]
    np.testing.assert_array_equal(data.X[:, 4], Y[:, 1])


@pytest.mark.parametrize("layout", ["mulan", "meka"])
@pytest.mark.parametrize("sparse_x", [False, True])
def test_csv_to_arff_round_trip(tmp_path, problem, layout, sparse_x):
    X, Y = problem
    X = X.copy()
    X[X < 0] = 0.0  # zeros, so the sparse layout has something to leave out
    data = load(_write_csv(tmp_path / "d.csv", X, Y), labels=-3)
    X_in = sp.csr_matrix(data.X) if sparse_x else data.X
    files = save_arff(tmp_path / "out.arff", X_in, data.Y, feature_names=data.feature_names,
                      label_names=data.label_names, layout=layout)
    assert [f.name for f in files] == (["out.arff", "out.xml"] if layout == "mulan" else ["out.arff"])
    back = load_arff(tmp_path / "out.arff")
    assert back.format == layout
    X_back = back.X.toarray() if sp.issparse(back.X) else back.X
    np.testing.assert_array_equal(X_back, X)
    np.testing.assert_array_equal(back.Y, Y)
    assert back.feature_names == data.feature_names and back.label_names == data.label_names


def test_arff_names_that_need_quoting_survive(tmp_path):
    X, Y = np.array([[1.5, 2.0], [0.25, -1.0]]), np.array([[1, 0], [0, 1]])
    names = ["it's", "a b"]
    labels = ["TAG_m'usica", "x,y"]
    save_arff(tmp_path / "q.arff", X, Y, feature_names=names, label_names=labels)
    back = load_arff(tmp_path / "q.arff")
    assert back.feature_names == names and back.label_names == labels
    np.testing.assert_array_equal(back.X, X)


def test_emotions_round_trips_through_both_layouts(tmp_path, data_dir):
    data = load("emotions")
    for layout in ("mulan", "meka"):
        save_arff(tmp_path / f"e-{layout}.arff", data.X, data.Y, feature_names=data.feature_names,
                  label_names=data.label_names, layout=layout)
        back = load_arff(tmp_path / f"e-{layout}.arff")
        np.testing.assert_array_equal(back.X, data.X)
        np.testing.assert_array_equal(back.Y, data.Y)
        assert back.label_names == data.label_names


def test_csv_needs_labels(tmp_path, problem):
    path = _write_csv(tmp_path / "d.csv", *problem)
    with pytest.raises(ValueError, match="say which columns are the labels with labels="):
        load(path)


def test_labels_are_refused_for_arff(tmp_path, problem):
    save_arff(tmp_path / "d.arff", *problem)
    with pytest.raises(ValueError, match="labels is for a CSV / TSV file"):
        load(tmp_path / "d.arff", labels=2)


def test_unknown_label_column_suggests_the_closest(tmp_path, problem):
    path = _write_csv(tmp_path / "d.csv", *problem)
    with pytest.raises(ValueError, match=r"no column 'sport' \(did you mean 'sports'\?\)"):
        load_csv(path, labels=["sport"])


@pytest.mark.parametrize("labels", [0, 7, 10, -7])
def test_label_count_out_of_range(tmp_path, problem, labels):
    path = _write_csv(tmp_path / "d.csv", *problem)
    with pytest.raises(ValueError, match="non-zero count smaller than the number of columns"):
        load_csv(path, labels=labels)


def test_bad_cells_are_named(tmp_path):
    path = _table(tmp_path / "m.csv", ["a", "b", "y"], [[1, "", 0], [2, 3, 1]])
    with pytest.raises(DatasetFormatError, match=r"column 'b', data row 1: '' is not a finite number"):
        load_csv(path, labels=["y"])
    path = _table(tmp_path / "l.csv", ["a", "b", "y"], [[1, 2, 0], [2, 3, 2]])
    with pytest.raises(DatasetFormatError, match=r"label column 'y', data row 2: 2.0 is not 0 or 1"):
        load_csv(path, labels=-1)
    path = _table(tmp_path / "r.csv", ["a", "b", "y"], [[1, 2, 0], [2, 1]])
    with pytest.raises(DatasetFormatError, match=r"data row 2 has 2 cells, the header 3"):
        load_csv(path, labels=-1)


def test_save_arff_refuses_bad_input(tmp_path):
    X = np.ones((2, 2))
    with pytest.raises(ValueError, match="Y must hold only 0 and 1"):
        save_arff(tmp_path / "b.arff", X, np.array([[2, 0], [0, 1]]))
    with pytest.raises(ValueError, match="X must be finite"):
        save_arff(tmp_path / "b.arff", np.array([[np.nan, 1], [0, 1]]), np.eye(2))
    with pytest.raises(ValueError, match="one row per instance"):
        save_arff(tmp_path / "b.arff", X, np.eye(3))
    with pytest.raises(ValueError, match="layout must be 'mulan' or 'meka'"):
        save_arff(tmp_path / "b.arff", X, np.eye(2), layout="weka")


def test_topk_labels_alone_point_to_the_pair():
    from mlknn import MLkNN
    from mlknn.metrics import precision_at_k

    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(40, 3)), (rng.random((40, 8)) < 0.3).astype(np.uint8)
    labels, scores = MLkNN(n_neighbors=5).fit(X, Y).predict_topk(X, 5)
    with pytest.raises(ValueError, match=r"pass the pair it returns.*precision_at_k\(Y_true, \(labels, scores\), k=k\)"):
        precision_at_k(Y, labels, k=5)
    assert 0.0 <= precision_at_k(Y, (labels, scores), k=5) <= 1.0
