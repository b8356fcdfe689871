"""neighbors="faiss-gpu" / "faiss-gpu-ivf": clean failures without GPU support, the CPU backends' contract.

No CUDA device here: the contract is checked through faiss-cpu with its GPU entry points
stood in by the identity (the index stays on the host), which exercises every line of
the backend but the device copy itself; benchmarks/gpu_check.sh runs the real thing.
"""

import pickle

import numpy as np
import pytest

from mlknn import MLkNN
from mlknn.neighbors import BruteNeighbors, get_backend, is_exact, recall_at_k

faiss = pytest.importorskip("faiss", reason="faiss is not installed: pip install 'mlknn[faiss]'")


def _blobs(n=500, d=8, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.normal(scale=5.0, size=(10, d))
    X = centers[rng.integers(0, 10, n)] + rng.normal(size=(n, d))
    Q = centers[rng.integers(0, 10, 60)] + rng.normal(size=(60, d))
    return X, Q


@pytest.fixture
def host_gpu(monkeypatch):
    """faiss-cpu dressed as a GPU build with one device (the 'device' is the host)."""
    monkeypatch.setattr(faiss, "StandardGpuResources", lambda: object(), raising=False)
    monkeypatch.setattr(faiss, "index_cpu_to_gpu", lambda res, device, index: index, raising=False)
    monkeypatch.setattr(faiss, "index_gpu_to_cpu", lambda index: index, raising=False)
    monkeypatch.setattr(faiss, "get_num_gpus", lambda: 1, raising=False)


@pytest.mark.skipif(hasattr(faiss, "StandardGpuResources"), reason="this faiss has GPU support")
@pytest.mark.parametrize("name", ["faiss-gpu", "faiss-gpu-ivf"])
def test_cpu_only_faiss_fails_cleanly_naming_the_extra(name):
    X, _ = _blobs()
    with pytest.raises(ImportError, match=r"(?s)GPU support.*pip install 'mlknn\[gpu\]'"):
        get_backend(name).fit(X)
    with pytest.raises(ImportError, match="GPU support"):
        MLkNN(neighbors=name).fit(X, np.ones((X.shape[0], 1)))


def test_no_device_fails_cleanly(host_gpu, monkeypatch):
    monkeypatch.setattr(faiss, "get_num_gpus", lambda: 0)
    with pytest.raises(RuntimeError, match="no CUDA device"):
        get_backend("faiss-gpu").fit(_blobs()[0])


def test_missing_faiss_names_the_extra(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "faiss", None)
    with pytest.raises(ImportError, match=r"pip install 'mlknn\[faiss\]'"):
        get_backend("faiss-gpu").fit(_blobs()[0])


def test_flat_returns_exactly_what_brute_returns(host_gpu):
    X, Q = _blobs()
    X[7] = X[3]  # duplicates: the tie rule (lower index first) must hold
    assert is_exact("faiss-gpu") and not is_exact("faiss-gpu-ivf")
    ref = BruteNeighbors().fit(X)
    index = get_backend("faiss-gpu").fit(X)
    for queries in (Q, None):
        d, i = index.kneighbors(queries, 6)
        d_ref, i_ref = ref.kneighbors(queries, 6)
        np.testing.assert_array_equal(i, i_ref)
        np.testing.assert_array_equal(d, d_ref)
    again = pickle.loads(pickle.dumps(index))
    np.testing.assert_array_equal(again.kneighbors(Q, 6)[1], ref.kneighbors(Q, 6)[1])


def test_ivf_contract_and_recall(host_gpu):
    X, Q = _blobs(n=2000)
    index = get_backend("faiss-gpu-ivf", random_state=0).fit(X)
    d, i = index.kneighbors(Q, 5)
    assert i.shape == (60, 5) and np.all(np.diff(d, axis=1) >= 0)
    assert recall_at_k(i, BruteNeighbors().fit(X).kneighbors(Q, 5)[1]) >= 0.9
    again = pickle.loads(pickle.dumps(index))
    assert again.nprobe_ == index.nprobe_
    np.testing.assert_array_equal(again.kneighbors(Q, 5)[1], i)


def test_estimator_on_faiss_gpu_matches_brute(host_gpu):
    X, Q = _blobs()
    Y = (np.random.default_rng(1).random((X.shape[0], 4)) < 0.3).astype(np.uint8)
    got = MLkNN(n_neighbors=5, neighbors="faiss-gpu").fit(X, Y).predict_proba(Q)
    np.testing.assert_array_equal(got, MLkNN(n_neighbors=5).fit(X, Y).predict_proba(Q))


# ------------------------------------------------------------- gpu_check.sh
_SCRIPT = __import__("pathlib").Path(__file__).resolve().parents[1] / "benchmarks" / "gpu_check.sh"


def _run_check(path, tmp_path):
    import os
    import shutil
    import subprocess
    import sys

    env = {**os.environ, "PATH": path, "PYTHON": sys.executable}
    return subprocess.run([shutil.which("bash"), str(_SCRIPT)], capture_output=True, text=True, env=env, timeout=120)


def _cuda_here():
    import importlib.util
    import shutil

    if shutil.which("nvidia-smi") is None or importlib.util.find_spec("torch") is None:
        return False
    import torch

    return bool(torch.cuda.is_available())


@pytest.mark.skipif(_cuda_here(), reason="a CUDA GPU is here: gpu_check.sh would run, not skip")
def test_gpu_check_skips_without_a_driver(tmp_path):
    import shutil

    tools = tmp_path / "bin"
    tools.mkdir()
    for tool in ("dirname", "grep", "timeout"):
        (tools / tool).symlink_to(shutil.which(tool))
    out = _run_check(str(tools), tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("SKIP: no nvidia-smi on PATH")


@pytest.mark.skipif(_cuda_here(), reason="a CUDA GPU is here: gpu_check.sh would run, not skip")
def test_gpu_check_skips_when_the_gpu_backends_cannot_run(tmp_path):
    import os

    fake = tmp_path / "nvidia-smi"
    fake.write_text("#!/bin/sh\necho 'GPU 0: stand-in (UUID: none)'\n")
    fake.chmod(0o755)
    out = _run_check(f"{tmp_path}:{os.environ['PATH']}", tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("SKIP: ") and ("torch" in out.stdout or "faiss" in out.stdout), out.stdout
