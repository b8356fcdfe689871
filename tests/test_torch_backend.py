"""The torch backend (``neighbors="torch"``): exact, same answers as brute.

Runs on the CPU build of torch (CI installs ``torch==2.13.0``, a CPU wheel; the
``gpu`` extra). Without torch every test but the install-hint one skips, saying
how to install it. On a machine with CUDA the same tests run on the GPU (the
default device).
"""

import importlib.util
import pickle
import sys

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_blobs

from mlknn import MLkNN
from mlknn.neighbors import BruteNeighbors, available_backends, get_backend, is_exact

HAS_TORCH = importlib.util.find_spec("torch") is not None
needs_torch = pytest.mark.skipif(
    not HAS_TORCH, reason="torch is not installed: pip install 'mlknn[gpu]' (CPU wheel: pip install torch)"
)


def blobs(n=500, d=8, seed=0, dtype=np.float64, n_queries=60):
    X, _ = make_blobs(n_samples=n + n_queries, n_features=d, centers=10, random_state=seed)
    X = X.astype(dtype)
    return X[:n], X[n:]


def assert_same(a, b):
    (da, ia), (db, ib) = a, b
    assert ia.dtype == np.intp and da.dtype == np.float64
    np.testing.assert_array_equal(ia, ib)
    np.testing.assert_array_equal(da, db)


def test_missing_torch_says_which_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch -> ImportError
    with pytest.raises(ImportError, match=r"pip install 'mlknn\[gpu\]'"):
        get_backend("torch").fit(np.zeros((5, 2)))


@needs_torch
def test_registered_and_exact():
    assert "torch" in available_backends()
    assert is_exact("torch")
    index = get_backend("torch").fit(np.zeros((3, 2)))
    import torch

    assert index.device_ == ("cuda" if torch.cuda.is_available() else "cpu")


@needs_torch
@pytest.mark.parametrize("metric", ["euclidean", "sqeuclidean", "cosine"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_equals_brute_loo_and_queries(metric, dtype):
    X, Q = blobs(dtype=dtype)
    brute = BruteNeighbors(metric=metric).fit(X)
    index = get_backend("torch", metric=metric).fit(X)
    for k in (1, 7):
        assert_same(index.kneighbors(None, k), brute.kneighbors(None, k))
        assert_same(index.kneighbors(Q, k), brute.kneighbors(Q, k))


@needs_torch
def test_chunked_search_equals_one_chunk():
    X, Q = blobs(n=300)
    whole = get_backend("torch", device="cpu").fit(X)
    tiny = get_backend("torch", device="cpu", working_memory=0.01).fit(X)  # 8 rows a chunk
    assert tiny._chunk_rows(X.shape[0]) < 60
    assert_same(tiny.kneighbors(Q, 5), whole.kneighbors(Q, 5))
    assert_same(tiny.kneighbors(None, 5), whole.kneighbors(None, 5))


@needs_torch
def test_ties_follow_the_lower_index_rule():
    # Integer points on a small grid: many equal distances, many at the k-th
    # boundary, which topk cannot order by index: those rows go to the host's
    # brute kernel, so the answer still equals brute's.
    rng = np.random.default_rng(1)
    X = rng.integers(0, 3, size=(400, 3)).astype(np.float64)
    Q = rng.integers(0, 3, size=(50, 3)).astype(np.float64)
    brute = BruteNeighbors().fit(X)
    index = get_backend("torch").fit(X)
    for k in (1, 4, 15):
        assert_same(index.kneighbors(None, k), brute.kneighbors(None, k))
        assert_same(index.kneighbors(Q, k), brute.kneighbors(Q, k))


@needs_torch
def test_loo_excludes_only_the_point_itself_with_duplicates():
    X = np.repeat(np.arange(6, dtype=np.float64)[:, None], 4, axis=0)  # each point 4 times
    X = np.hstack([X, np.zeros_like(X)])
    dist, ind = get_backend("torch").fit(X).kneighbors(None, 3)
    assert not np.any(ind == np.arange(X.shape[0])[:, None])
    np.testing.assert_array_equal(dist, 0.0)  # the three other copies, exactly 0
    np.testing.assert_array_equal(ind // 4, np.repeat(np.arange(X.shape[0])[:, None] // 4, 3, axis=1))
    assert_same((dist, ind), BruteNeighbors().fit(X).kneighbors(None, 3))


@needs_torch
@pytest.mark.parametrize("offset,scale", [(1e4, 1.0), (0.0, 1e-20)])
def test_far_from_origin_and_tiny_scales(offset, scale):
    # float32 distances lose every digit far from the origin: the verification
    # step must send those rows to the exact host kernel, never return wrong ones.
    X, Q = blobs(n=200, d=5, seed=3)
    X, Q = X * scale + offset, Q * scale + offset
    brute = BruteNeighbors().fit(X)
    index = get_backend("torch").fit(X)
    assert_same(index.kneighbors(None, 5), brute.kneighbors(None, 5))
    assert_same(index.kneighbors(Q, 5), brute.kneighbors(Q, 5))


@needs_torch
def test_reduced_precision_setting_is_overridden_and_restored():
    import torch

    X, Q = blobs(n=300, d=40)
    previous = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("medium")  # would allow bf16/TF32 products on a GPU
    try:
        got = get_backend("torch").fit(X).kneighbors(Q, 6)
        assert torch.get_float32_matmul_precision() == "medium"
    finally:
        torch.set_float32_matmul_precision(previous)
    assert_same(got, BruteNeighbors().fit(X).kneighbors(Q, 6))


@needs_torch
def test_errors_sparse_and_pickle():
    X, Q = blobs(n=100)
    index = get_backend("torch").fit(X)
    with pytest.raises(TypeError, match="torch"):
        get_backend("torch").fit(sp.csr_matrix(X))
    with pytest.raises(ValueError, match="n_neighbors"):
        index.kneighbors(None, 100)
    with pytest.raises(ValueError, match="features"):
        index.kneighbors(Q[:, :3], 2)
    with pytest.raises(ValueError, match="metric"):
        get_backend("torch", metric="manhattan").fit(X)
    again = pickle.loads(pickle.dumps(index))
    assert "_Xt" not in again.__dict__  # device tensors are not pickled
    assert_same(again.kneighbors(Q, 4), index.kneighbors(Q, 4))
    assert again.get_params()["device"] is None


@needs_torch
def test_mlknn_with_torch_equals_brute():
    rng = np.random.default_rng(0)
    X, _ = blobs(n=240, d=6, n_queries=0)
    Y = (rng.random((240, 4)) < 0.3).astype(int)
    a = MLkNN(n_neighbors=5, neighbors="torch").fit(X[:200], Y[:200])
    b = MLkNN(n_neighbors=5, neighbors="brute").fit(X[:200], Y[:200])
    np.testing.assert_array_equal(a.predict_proba(X[200:]), b.predict_proba(X[200:]))
    np.testing.assert_array_equal(a.predict(X[200:]), b.predict(X[200:]))
