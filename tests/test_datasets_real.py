"""Every benchmark dataset in $MLKNN_DATA loads and matches MANIFEST.tsv.

Skipped only when MLKNN_DATA is unset (CI always sets it). Loading everything
takes about 25 s on a 2-core machine; the largest file, imdb (120919 x 1001
sparse, gzip), loads in about 10 s, so nothing here is marked slow.
"""

import functools
import os

import numpy as np
import pytest
import scipy.sparse as sp

from mlknn.datasets import dataset_stats, list_datasets, load

pytestmark = [
    pytest.mark.data,
    pytest.mark.skipif(not os.environ.get("MLKNN_DATA"), reason="MLKNN_DATA is not set"),
]

MANIFEST = {r["name"]: r for r in list_datasets()} if os.environ.get("MLKNN_DATA") else {}
NAMES = list(MANIFEST) or ["<MLKNN_DATA unset>"]
SPLIT_NAMES = [n for n, r in MANIFEST.items() if r["splits"]] or ["<MLKNN_DATA unset>"]


@functools.cache
def cached(name, split=None):
    # Several tests look at the same dataset; load each file once per session.
    return load(name, split=split)


@pytest.mark.parametrize("name", NAMES)
def test_matches_manifest(name):
    row = MANIFEST[name]
    data = cached(name)
    s = dataset_stats(data.Y, data.X)
    assert (s["n"], s["d"], s["q"], s["ldiv"]) == (row["n"], row["d"], row["q"], row["ldiv"])
    # the manifest rounds to 3 decimals
    assert round(s["lcard"], 3) == pytest.approx(row["lcard"], abs=1e-9)
    assert round(s["ldens"], 3) == pytest.approx(row["ldens"], abs=1e-9)
    assert data.Y.dtype == np.uint8 and data.Y.shape == (row["n"], row["q"])
    assert data.X.dtype == np.float64
    assert sp.issparse(data.X) == row["sparse"]
    if sp.issparse(data.X):
        assert data.X.format == "csr"
    assert len(data.feature_names) == row["d"] and len(data.label_names) == row["q"]
    assert len(set(data.label_names)) == row["q"]
    assert data.format == row["format"]


@pytest.mark.parametrize("name", ["tmc2007-500", "imdb"])
def test_large_sparse_sets_are_csr(name):
    if name not in MANIFEST:
        pytest.skip(f"{name} not in this MANIFEST")
    X = cached(name).X
    assert sp.isspmatrix_csr(X) or (sp.issparse(X) and X.format == "csr")
    assert X.has_sorted_indices
    assert not np.any(X.data == 0)


@pytest.mark.parametrize("name", SPLIT_NAMES)
def test_fixed_splits_add_up(name):
    row = MANIFEST[name]
    train, test = cached(name, "train"), cached(name, "test")
    assert train.X.shape[0] + test.X.shape[0] == row["n"]
    assert train.X.shape[1] == test.X.shape[1] == row["d"]
    assert train.Y.shape[1] == test.Y.shape[1] == row["q"]
    assert train.label_names == test.label_names == cached(name).label_names
    # same label-set multiset in train+test as in the union (rows may be reordered)
    both = np.vstack([train.Y, test.Y])
    assert sorted(map(bytes, both)) == sorted(map(bytes, cached(name).Y))


def test_meka_only_sets_have_no_split():
    for name, row in MANIFEST.items():
        if not row["splits"]:
            with pytest.raises(ValueError, match="split"):
                load(name, split="train")
            break
    else:
        pytest.skip("every dataset has a fixed split")


def _need(*names):
    missing = [n for n in names if n not in MANIFEST]
    if missing:
        pytest.skip(f"not in this MANIFEST: {missing}")


def test_yeast_labels_in_arff_order_not_xml_order():
    _need("yeast")
    # yeast.xml lists Class1, Class2, Class3, Class6, Class4, ...
    assert cached("yeast").label_names == [f"Class{i}" for i in range(1, 15)]


def test_delicious_escaped_label_names():
    _need("delicious")
    names = set(cached("delicious").label_names)
    assert "TAG_m'usica" in names and "TAG_dise~no" in names


def test_medical_and_llog_ignore_misleading_C():
    # '-C 45' / '-C 75' would make the *first* attributes labels; the xml says last.
    _need("medical", "llog")
    for name, q in (("medical", 45), ("llog", 75)):
        data = cached(name)
        assert data.Y.shape[1] == q
        assert data.Y.sum(axis=1).mean() == pytest.approx(MANIFEST[name]["lcard"], abs=5e-4)
    # README: 207 of llog's 1460 instances have no label
    assert int((cached("llog").Y.sum(axis=1) == 0).sum()) == 207


def test_meka_variants_agree_with_mulan():
    _need("scene", "scene-meka", "enron", "enron-meka")
    # scene-meka is MULAN scene train+test (same rows, same order)
    np.testing.assert_array_equal(cached("scene").Y, cached("scene-meka").Y)
    np.testing.assert_array_equal(cached("scene").X, cached("scene-meka").X)
    # enron-meka has numeric 0/1 features where enron has nominal {0,1}
    assert (cached("enron").X != cached("enron-meka").X).nnz == 0
    np.testing.assert_array_equal(cached("enron").Y, cached("enron-meka").Y)
