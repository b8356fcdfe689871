"""benchmarks/bench_million.py (issue 29 point 1) at a tiny scale, so the script cannot rot:
its phases run, its measures are what they claim (the exact backend's recall is 1, the
labels are predictable from the neighbours), the JSON lines are appended, the child
process reports its own peak RSS, and the Dask run is checked against the exact one."""

import importlib.util
import json
import sys
from pathlib import Path

import pytest

_BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_million.py"
_spec = importlib.util.spec_from_file_location("bench_million", _BENCH)
bm = sys.modules.setdefault("bench_million", importlib.util.module_from_spec(_spec))
if not hasattr(bm, "main"):
    _spec.loader.exec_module(bm)

TINY = ["--n-train", "1500", "--n-query", "200", "--q", "400", "--d", "16", "--recall-sample", "100"]


def test_main_in_process(tmp_path, capsys):
    out = tmp_path / "r.jsonl"
    backends = "brute,voyager" if importlib.util.find_spec("voyager") else "brute"
    results = bm.main([*TINY, "--backend", backends, "--in-process", "--out", str(out)])
    assert [r["backend"] for r in results] == backends.split(",")
    brute = results[0]
    assert brute["recall@10"] == 1.0 and brute["loo_recall@10"] == 1.0  # exact by contract
    for r in results:
        assert set(r["phases_s"]) >= {"generate", "index", "train_graph", "query_graph",
                                      "mlknn_fit", "mlknn_topk", "brknn_fit", "brknn_topk"}
        assert all(v >= 0 for v in r["phases_s"].values())
        assert set(r["phases_cpu_s"]) == set(r["phases_s"]) and min(r["phases_cpu_s"].values()) >= 0
        assert r["recall@10"] >= 0.9
        for est in bm.ESTIMATORS:
            p1, p3, p5 = (r[f"{est}_P@{k}"] for k in (1, 3, 5))
            # Neighbours share labels in the generator: far above a constant guess.
            assert 0.5 < p1 <= 1 and 0 < p5 <= p3 <= p1
            assert r[f"{est}_end_to_end_s"] >= r["graph_s"]
    lines = out.read_text().splitlines()
    assert len(lines) == len(results)
    assert json.loads(lines[0])["query_graph_digest"] == brute["query_graph_digest"]
    assert "blas" in json.loads(lines[0])["machine"]
    table = capsys.readouterr().out
    assert table.count("| brute |") == 2 and "| P@1 |" in table
    # Appending, not overwriting.
    bm.main([*TINY, "--backend", "brute", "--in-process", "--out", str(out)])
    assert len(out.read_text().splitlines()) == len(results) + 1


def test_child_process_matches_in_process(tmp_path):
    """The default: each configuration in a fresh interpreter, with its own peak RSS."""
    [child] = bm.main([*TINY, "--backend", "brute", "--out", str(tmp_path / "c.jsonl")])
    [here] = bm.main([*TINY, "--backend", "brute", "--in-process", "--out", str(tmp_path / "h.jsonl")])
    for key in ("train_graph_digest", "query_graph_digest", "mlknn_topk_digest", "brknn_topk_digest"):
        assert child[key] == here[key]
    assert child["in_process"] is False and child["peak_rss_mb"] > 0
    assert child["peak_rss_after_mb"]["generate"] <= child["peak_rss_mb"]


@pytest.mark.slow
def test_dask_identical_to_brute(tmp_path, capsys):
    pytest.importorskip("distributed")
    results = bm.main([*TINY, "--backend", "brute", "--dask", "--in-process", "--out", str(tmp_path / "d.jsonl")])
    assert [r["backend"] for r in results] == ["brute", "dask"]
    assert results[1]["identical_to_brute"] is True and results[1]["worker_peak_rss_mb"] > 0
    assert "identical to brute: True" in capsys.readouterr().out


def test_dask_check_detects_a_difference():
    brute = {"backend": "brute", "train_graph_digest": "a", "query_graph_digest": "b",
             "mlknn_topk_digest": "c", "brknn_topk_digest": "d"}
    dask = {**brute, "backend": "dask", "brknn_topk_digest": "x"}
    bm._check_dask([brute, dask])
    assert dask["identical_to_brute"] is False
    same = {**brute, "backend": "dask"}
    bm._check_dask([brute, same])
    assert same["identical_to_brute"] is True


@pytest.mark.parametrize(("args", "match"), [
    (["--n-train", "0"], "--n-train must be >= 1"),
    (["--n-train", "10", "--k", "10"], "--k must be < --n-train"),
])
def test_bad_arguments(args, match, capsys):
    with pytest.raises(SystemExit):
        bm.parse_args(args)
    assert match in capsys.readouterr().err


def test_gpu_check_aliases():
    """benchmarks/gpu_check.sh calls the script with --n, --queries and --neighbors."""
    args = bm.parse_args(["--n", "1000", "--q", "50", "--queries", "20", "--neighbors", "faiss-gpu"])
    assert (args.n_train, args.q, args.n_query, args.backend) == (1000, 50, 20, "faiss-gpu")
    assert "--n 1000000" in (_BENCH.parent / "gpu_check.sh").read_text()


def _processes_with(marker):
    """Pids whose command line holds ``marker`` (Linux /proc)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker in (entry / "cmdline").read_bytes():
                    pids.append(int(entry.name))
            except OSError:
                pass
    return pids


# A configuration that runs for minutes; its seed marks its processes.
_LONG = {"n_train": 400_000, "n_query": 1000, "q": 1000, "d": 128, "k": 10, "backend": "brute",
         "recall_sample": 10, "n_jobs": 1, "backend_params": {}}


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs Linux /proc")
def test_child_timeout_ends_the_whole_child_group():
    import subprocess
    import time

    cfg = {**_LONG, "seed": 918_273}
    with pytest.raises(subprocess.TimeoutExpired):
        bm._run_child(cfg, timeout=3)
    time.sleep(0.5)
    assert _processes_with(b'"seed": 918273') == []


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs Linux /proc")
def test_sigterm_ends_the_child_too(tmp_path):
    """gpu_check.sh runs the script under `timeout`, which sends SIGTERM to it alone."""
    import signal
    import subprocess
    import time

    marker = b'"seed": 918274'
    proc = subprocess.Popen([sys.executable, str(_BENCH), "--n-train", "400000", "--n-query", "1000",
                             "--q", "1000", "--backend", "brute", "--n-jobs", "1", "--seed", "918274",
                             "--out", str(tmp_path / "t.jsonl")], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    for _ in range(300):  # until the configuration's child runs (machine_info takes seconds)
        if [p for p in _processes_with(marker) if p != proc.pid]:
            break
        time.sleep(0.1)
    else:
        proc.kill()
        pytest.fail("the configuration's child process never started")
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) != 0
    time.sleep(0.5)
    assert _processes_with(marker) == []
