"""mlknn.distributed.checkpointed_graph: out of core, bit-identical to brute force, resumable after kill -9."""

import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from mlknn.distributed import checkpointed_graph
from mlknn.neighbors import BruteNeighbors


def _points(n=900, d=6, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)).astype(dtype)
    X[10] = X[3]  # duplicates: the tie rule (lower index first) must hold across blocks
    X[n // 2] = X[3]
    return X


@pytest.mark.parametrize("metric", ["euclidean", "cosine", "sqeuclidean"])
@pytest.mark.parametrize(("query_block", "train_block"), [(128, 300), (100, 900), (900, None)])
def test_equals_brute_bit_for_bit(tmp_path, metric, query_block, train_block):
    X = _points()
    got = checkpointed_graph(X, 7, cache_dir=tmp_path, metric=metric, query_block=query_block,
                             train_block=train_block, progress=False)
    dist, ind = BruteNeighbors(metric=metric).fit(X).kneighbors(None, 7)
    np.testing.assert_array_equal(got.indices, ind)
    np.testing.assert_array_equal(got.distances, dist)
    assert got.loo


def test_memory_mapped_npy_and_reuse(tmp_path):
    X = _points(dtype=np.float32)
    path = tmp_path / "X.npy"
    np.save(path, X)
    calls = []
    first = checkpointed_graph(path, 5, cache_dir=tmp_path / "cache", query_block=200, train_block=400,
                               progress=lambda done, total, computed: calls.append(computed))
    assert calls == [True] * 5  # [0, 200), [200, 400) | [400, 600), [600, 800) | [800, 900): inside training blocks
    calls.clear()
    again = checkpointed_graph(path, 5, cache_dir=tmp_path / "cache", query_block=200, train_block=400,
                               progress=lambda done, total, computed: calls.append(computed))
    assert calls == [False] * 5
    np.testing.assert_array_equal(again.indices, first.indices)
    np.testing.assert_array_equal(first.indices, BruteNeighbors().fit(X).kneighbors(None, 5)[1])
    # A changed input never reads the old blocks.
    X[0, 0] += 1.0
    calls.clear()
    checkpointed_graph(X, 5, cache_dir=tmp_path / "cache", query_block=200, train_block=400,
                       progress=lambda done, total, computed: calls.append(computed))
    assert calls == [True] * 5


def test_progress_line_on_stderr(tmp_path, capsys):
    checkpointed_graph(_points(n=300), 3, cache_dir=tmp_path, query_block=100)
    err = capsys.readouterr().err
    assert "3/3 blocks (100 %)" in err and "min left" in err


def test_bad_input_named(tmp_path):
    with pytest.raises(ValueError, match="2-D float32 or float64"):
        checkpointed_graph(np.arange(10), 3, cache_dir=tmp_path)
    with pytest.raises(ValueError, match="'metric'"):
        checkpointed_graph(_points(), 3, cache_dir=tmp_path, metric="hamming")
    with pytest.raises(ValueError, match="query_block"):
        checkpointed_graph(_points(), 3, cache_dir=tmp_path, query_block=0)


_CHILD = textwrap.dedent("""
    import sys, time
    import numpy as np
    from mlknn.distributed import checkpointed_graph

    def report(done, total, computed):
        print(done, int(computed), flush=True)
        time.sleep(0.15)  # a slow search: the parent kills the process in the middle

    checkpointed_graph(sys.argv[1], 6, cache_dir=sys.argv[2], query_block=250, train_block=1000, progress=report)
    print("finished", flush=True)
""")


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs kill -9")
def test_kill_minus_nine_resumes_without_redoing_finished_blocks(tmp_path):
    X = _points(n=3000, d=8)
    np.save(tmp_path / "X.npy", X)
    cache = tmp_path / "cache"
    child = subprocess.Popen([sys.executable, "-c", _CHILD, str(tmp_path / "X.npy"), str(cache)],
                             stdout=subprocess.PIPE, text=True)
    seen = 0
    for line in child.stdout:
        seen = int(line.split()[0])
        if seen == 5:
            os.kill(child.pid, signal.SIGKILL)
            break
    child.wait(timeout=60)
    assert child.returncode == -signal.SIGKILL and seen == 5
    computed = []
    resumed = checkpointed_graph(tmp_path / "X.npy", 6, cache_dir=cache, query_block=250, train_block=1000,
                                 progress=lambda done, total, was_computed: computed.append(was_computed))
    # The 5 blocks finished before the kill are read back (a 6th may have been written
    # between the report and the kill); the rest, and only they, are computed.
    assert computed[:5] == [False] * 5 and all(computed[6:]) and len(computed) == 12
    uninterrupted = checkpointed_graph(X, 6, cache_dir=tmp_path / "fresh", query_block=250, train_block=1000,
                                       progress=False)
    np.testing.assert_array_equal(resumed.indices, uninterrupted.indices)
    np.testing.assert_array_equal(resumed.distances, uninterrupted.distances)
