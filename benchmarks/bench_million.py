"""A million on one machine (issue 29 point 1): MLkNN and BRkNN end to end at 10^6 x 10^6.

One command for the full run (n_train = 10^6, d = 128, 10^5 queries, q = 10^6 labels)::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE \\
        python benchmarks/bench_million.py --n-train 1000000 --n-query 100000 \\
        --q 1000000 --backend voyager,brute --dask \\
        --backend-params '{"M": 32, "ef_construction": 200, "ef": 256}'

(voyager's defaults reach recall@10 0.75 on these embeddings at n = 50,000; the
wider search above 0.95 at n = 100,000: docs/performance.md, "Million-scale benchmark").

Data: ``make_extreme_multilabel`` with ``n_train + n_query`` rows (clustered unit
embeddings: one topic centre per row plus its labels' directions plus noise;
labels of Zipfian popularity, about five a row, drawn from the row's topic),
split into training rows and queries; the queries' generated labels are the
truth. Y stays CSR throughout (no n x q dense array).

Per configuration (one neighbour backend), in a fresh child process so that
its peak RSS is the configuration's own (``resource.getrusage``; the data are
generated in the child and count in it):

1. ``generate``: the data set;
2. ``index``: the backend fitted on the training rows;
3. ``train_graph``: the training set's leave-one-out graph (``k`` wide);
4. ``query_graph``: the queries' graph;
5. for MLkNN and BRkNN (``n_neighbors=k``): ``fit_from_graph`` on the shared
   training graph, then ``predict_topk_from_graph(k=5)`` on the query graph --
   the steps of ``est.fit(X, Y).predict_topk(Xq, 5)``, with the search done once
   for both estimators.

Reported: wall time and CPU time (all threads) per phase, the peak RSS after each phase, P@1/3/5 of each
estimator against the generator's labels (:func:`mlknn.metrics.precision_at_k`),
and the recall@10 of the query graph (and of the leave-one-out graph) against
an exact search (``neighbors="brute"``) on ``--recall-sample`` sampled rows.

``--dask`` adds the configuration ``dask``: the same exact search on a Dask
LocalCluster of two worker processes (:mod:`mlknn.distributed`,
``neighbors="dask"``); its graphs and top-5 predictions are compared, by a hash
of their bytes, with those of the single-machine exact run (``brute``, added if
not asked for). Its peak RSS column is this client process's; the workers' peak
is ``worker_peak_rss_mb`` (the larger of the two workers' own).

``--n``, ``--queries`` and ``--neighbors`` are aliases of ``--n-train``,
``--n-query`` and ``--backend`` (``benchmarks/gpu_check.sh`` uses them).

Output: one markdown table row per (configuration, estimator) on stdout, with
the machine, the BLAS kernel (threadpoolctl) and the date; the results are
appended as JSON lines to ``--out`` (default ``benchmarks/million_results.jsonl``).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import logging
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import machine_info, markdown_table  # noqa: E402

ESTIMATORS = ("mlknn", "brknn")
TOPK = 5
RECALL_K = 10
HEADER = (
    "date", "machine", "BLAS", "backend", "n_train", "n_query", "q", "d", "estimator",
    "index + graphs s", "fit s", "top-5 s", "end to end s", "recall@10", "P@1", "P@3", "P@5",
    "peak RSS GB",
)


def _peak_rss_mb(who=resource.RUSAGE_SELF):
    return resource.getrusage(who).ru_maxrss / 1024  # KiB on Linux


def _cpu_s():
    """CPU seconds of this process, all threads: on a shared machine the work done,
    where the wall time also counts the waits for a core."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _digest(*arrays):
    """A hash of the arrays' bytes (dtype and shape included): equal iff bit-identical."""
    h = hashlib.sha256()
    for a in arrays:
        h.update(f"{a.dtype.str}{a.shape}".encode())
        h.update(a.tobytes())
    return h.hexdigest()[:16]


def _estimator(name, k):
    from mlknn import BRkNN, MLkNN

    return {"mlknn": MLkNN, "brknn": BRkNN}[name](n_neighbors=k)


def run_configuration(cfg):
    """One configuration in this process; returns its results as a dict.

    ``cfg``: ``n_train``, ``n_query``, ``q``, ``d``, ``k``, ``backend``,
    ``recall_sample``, ``seed``, ``n_jobs``, ``backend_params``.
    """
    from mlknn.datasets import make_extreme_multilabel
    from mlknn.metrics import precision_at_k
    from mlknn.neighbors import build_graph, estimate_recall, get_backend

    out = dict(cfg)
    phases, cpu, rss = {}, {}, {}
    cpu_before = [_cpu_s()]

    def phase(name, t0):
        phases[name] = time.perf_counter() - t0
        now = _cpu_s()
        cpu[name], cpu_before[0] = now - cpu_before[0], now
        rss[name] = _peak_rss_mb()
        return time.perf_counter()

    backend = cfg["backend"]
    with contextlib.ExitStack() as stack:
        t = time.perf_counter()
        client = None
        if backend == "dask":
            # Started before the data exist: a process starts with its parent's
            # peak RSS as its own, so workers started later would report ours.
            import mlknn.distributed  # registers neighbors="dask"

            client = stack.enter_context(mlknn.distributed.local_client(
                n_workers=2, dashboard_address=None, silence_logs=logging.CRITICAL))
            t = phase("cluster_start", t)
        data = make_extreme_multilabel(
            cfg["n_train"] + cfg["n_query"], n_features=cfg["d"], n_labels=cfg["q"], random_state=cfg["seed"]
        )
        n = cfg["n_train"]
        X, Xq, Y, Yq = data.X[:n], data.X[n:], data.Y[:n], data.Y[n:]
        del data
        out["nnz_train"] = int(Y.nnz)
        t = phase("generate", t)
        params = {} if backend in ("brute", "dask") else cfg["backend_params"]
        index = get_backend(backend, n_jobs=cfg["n_jobs"], random_state=cfg["seed"], **params).fit(X)
        t = phase("index", t)
        train_graph = build_graph(index, None, cfg["k"])
        t = phase("train_graph", t)
        query_graph = build_graph(index, Xq, cfg["k"])
        t = phase("query_graph", t)
        if client is not None:
            out["worker_peak_rss_mb"] = max(client.run(_peak_rss_mb).values())
    if backend == "dask":
        t = phase("cluster_stop", t)
    out["train_graph_digest"] = _digest(train_graph.indices, train_graph.distances)
    out["query_graph_digest"] = _digest(query_graph.indices, query_graph.distances)

    for name in ESTIMATORS:
        est = _estimator(name, cfg["k"])
        est.fit_from_graph(train_graph, Y, index=index)
        t = phase(f"{name}_fit", t)
        labels, scores = est.predict_topk_from_graph(query_graph, k=TOPK)
        t = phase(f"{name}_topk", t)
        out[f"{name}_topk_digest"] = _digest(labels, scores)
        for k in (1, 3, 5):
            out[f"{name}_P@{k}"] = float(precision_at_k(Yq, (labels, scores), k=k))
        del est, labels, scores

    # Exact search on a sample (brute kernel, fitted apart): the approximate
    # backends' recall; 1.0 for the exact ones, a check of the contract.
    if RECALL_K <= cfg["k"]:
        from mlknn.neighbors import BruteNeighbors

        exact = BruteNeighbors(n_jobs=cfg["n_jobs"]).fit(X)
        m = min(cfg["recall_sample"], cfg["n_query"])
        out["recall@10"] = float(estimate_recall(
            exact, X, Xq, n_neighbors=RECALL_K, n_samples=m, random_state=cfg["seed"],
            approx_indices=query_graph.indices))
        out["loo_recall@10"] = float(estimate_recall(
            exact, X, None, n_neighbors=RECALL_K, n_samples=min(m, n), random_state=cfg["seed"],
            approx_indices=train_graph.indices))
        t = phase("recall", t)
    out["phases_s"] = phases
    out["phases_cpu_s"] = cpu
    out["peak_rss_after_mb"] = rss
    out["peak_rss_mb"] = _peak_rss_mb()
    out["load_end"] = " ".join(f"{x:.1f}" for x in os.getloadavg())
    out["graph_s"] = phases["index"] + phases["train_graph"] + phases["query_graph"]
    for name in ESTIMATORS:
        out[f"{name}_end_to_end_s"] = out["graph_s"] + phases[f"{name}_fit"] + phases[f"{name}_topk"]
    out["both_end_to_end_s"] = out["graph_s"] + sum(
        phases[f"{name}_{p}"] for name in ESTIMATORS for p in ("fit", "topk"))
    return out


def _run_child(cfg, timeout):
    """``run_configuration(cfg)`` in a fresh interpreter (its own peak RSS)."""
    code = (
        "import json, sys\n"
        f"sys.path.insert(0, {str(HERE)!r})\n"
        "from bench_million import run_configuration\n"
        # Guarded: the Dask workers are started by re-importing this main module.
        "if __name__ == '__main__':\n"
        f"    print('RESULT ' + json.dumps(run_configuration(json.loads({json.dumps(cfg)!r}))))\n"
    )
    # Through /bin/sh, as _common.run_subprocess does (a process starts with its
    # parent's peak RSS), but in a session of its own: a timeout, Ctrl-C or a SIGTERM
    # to this process (gpu_check.sh's `timeout`) ends the whole group, Dask workers
    # included, instead of leaving a million-row run behind.
    proc = subprocess.Popen(["/bin/sh", "-c", '"$0" -c "$1"; exit $?', sys.executable, code],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except BaseException:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    if proc.returncode != 0:
        raise RuntimeError(f"configuration {cfg['backend']!r} failed:\n{stderr[-2000:]}")
    line = next(x for x in reversed(stdout.splitlines()) if x.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])


def _check_dask(results):
    """Mark the dask run identical (or not) to the single-machine exact run."""
    by = {r["backend"]: r for r in results}
    if "dask" not in by or "brute" not in by:
        return
    keys = ["train_graph_digest", "query_graph_digest"] + [f"{e}_topk_digest" for e in ESTIMATORS]
    by["dask"]["identical_to_brute"] = all(by["dask"][k] == by["brute"][k] for k in keys)


def table_rows(results, info):
    machine = f"{info['cpu']}, {info['cores']} cores"
    rows = []
    for r in results:
        params = r.get("backend_params") if r["backend"] not in ("brute", "dask") else None
        label = r["backend"] + (" (" + ", ".join(f"{k}={v}" for k, v in params.items()) + ")" if params else "")
        if "identical_to_brute" in r:
            label += ", identical to brute" if r["identical_to_brute"] else ", DIFFERS from brute"
        for name in ESTIMATORS:
            ph = r["phases_s"]
            rows.append((
                r["date"], machine, info.get("blas", "?"), label, r["n_train"], r["n_query"],
                r["q"], r["d"], name, r["graph_s"], ph[f"{name}_fit"], ph[f"{name}_topk"],
                r[f"{name}_end_to_end_s"], r.get("recall@10"), r[f"{name}_P@1"], r[f"{name}_P@3"],
                r[f"{name}_P@5"], r["peak_rss_mb"] / 1024,
            ))
    return rows


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n-train", "--n", type=int, default=1_000_000, help="training rows (default 10^6)")
    p.add_argument("--n-query", "--queries", type=int, default=100_000, help="query rows (default 10^5)")
    p.add_argument("--q", type=int, default=1_000_000, help="labels (default 10^6)")
    p.add_argument("--d", type=int, default=128, help="embedding dimension (default 128)")
    p.add_argument("--k", type=int, default=10, help="neighbours of both estimators (default 10)")
    p.add_argument("--backend", "--neighbors", default="voyager,brute",
                   help="comma-separated neighbour backends: brute (exact), faiss (exact), "
                        "voyager (HNSW), faiss-hnsw, faiss-ivf, pynndescent, ... (default voyager,brute)")
    p.add_argument("--backend-params", type=json.loads, default={},
                   help='JSON object of parameters of the approximate backends, e.g. \'{"ef": 200}\' '
                        "(given to every backend except brute and dask)")
    p.add_argument("--dask", action="store_true",
                   help="also run the exact search on a Dask LocalCluster of two worker processes "
                        "and check that its results are identical to brute's")
    p.add_argument("--recall-sample", type=int, default=1000, help="queries searched exactly for recall@10")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--n-jobs", type=int, default=None, help="threads of the search (default: all cores)")
    p.add_argument("--timeout", type=float, default=3 * 3600, help="seconds per configuration")
    p.add_argument("--in-process", action="store_true",
                   help="run the configurations in this process (the peak RSS is then cumulative)")
    p.add_argument("--out", type=Path, default=HERE / "million_results.jsonl",
                   help="JSON lines file the results are appended to")
    args = p.parse_args(argv)
    for name in ("n_train", "n_query", "q", "d", "k", "recall_sample"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be >= 1; got {getattr(args, name)}.")
    if args.k >= args.n_train:
        p.error(f"--k must be < --n-train ({args.n_train}); got {args.k}.")
    return args


def _exit_on_sigterm(signum, frame):
    raise SystemExit(128 + signum)


def _run_all(args, backends, results):
    """Each backend's configuration in turn, appended to ``results`` as it ends."""
    for backend in backends:
        cfg = {"n_train": args.n_train, "n_query": args.n_query, "q": args.q, "d": args.d,
               "k": args.k, "backend": backend, "recall_sample": args.recall_sample,
               "seed": args.seed, "n_jobs": args.n_jobs, "backend_params": args.backend_params}
        print(f"[{time.strftime('%H:%M:%S')}] {backend}: n_train={args.n_train:,} "
              f"n_query={args.n_query:,} q={args.q:,} d={args.d}", file=sys.stderr, flush=True)
        load_start = " ".join(f"{x:.1f}" for x in os.getloadavg())
        r = run_configuration(cfg) if args.in_process else _run_child(cfg, args.timeout)
        r.update(date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), load_start=load_start,
                 in_process=args.in_process)
        results.append(r)


def main(argv=None):
    """Run the configurations; print the table; append the JSON lines. Returns the results."""
    args = parse_args(argv)
    backends = [b.strip() for b in args.backend.split(",") if b.strip()]
    if args.dask:
        backends = [b for b in backends if b != "dask"]
        if "brute" not in backends:
            backends.append("brute")
        backends.append("dask")
    info = machine_info()
    results = []
    if not args.in_process:  # a SIGTERM unwinds through _run_child, which ends the child's group
        previous = signal.signal(signal.SIGTERM, _exit_on_sigterm)
    try:
        _run_all(args, backends, results)
    finally:
        if not args.in_process:
            signal.signal(signal.SIGTERM, previous)
    _check_dask(results)
    print(markdown_table(HEADER, table_rows(results, info)))
    for r in results:
        if "identical_to_brute" in r:
            print(f"\ndask (2 worker processes) identical to brute: {r['identical_to_brute']}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "a") as f:
        for r in results:
            f.write(json.dumps({**r, "machine": info}) + "\n")
    return results


if __name__ == "__main__":
    main()
