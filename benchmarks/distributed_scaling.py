"""Distributed scaling: 1 versus 2 local Dask workers, and the distributed overhead.

Problem (default): 100,000 training instances x 50 dense float32 features, 20
labels, k = 10; 10,000 test queries. Measured:

* ``graph``: the training set's leave-one-out 10-NN graph (the O(n^2 d) part of
  every kNN fit);
* ``mlknn``: MLkNN fit (leave-one-out graph + tables) + predict_proba on the test
  queries (their graph + scoring).

Configurations:

* ``single, 1 thread`` / ``single, N threads``: the single-process path
  (BruteNeighbors / MLkNN.fit + predict_proba), BLAS limited to 1 thread / all
  threads (threadpoolctl);
* ``dask, W worker(s)``: LocalCluster(n_workers=W, threads_per_worker=1,
  processes=True) with :func:`mlknn.distributed.kneighbors_graph` and
  :class:`mlknn.distributed.DistributedKNN` (cluster start-up not included; the
  data are scattered from the client inside the timing).

Each distributed result is checked for exact equality with the single-process one.

Usage::

    python benchmarks/distributed_scaling.py                 # the 100k problem
    python benchmarks/distributed_scaling.py --n 20000       # quicker
    python benchmarks/distributed_scaling.py --workers 1,2,4 --repeats 2

Prints a markdown table (the numbers in docs/distributed.md come from it).
"""

import argparse
import importlib
import os
import time

import numpy as np


def make_problem(n, d, q, n_test, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(50, d)).astype(np.float32)
    which = rng.integers(0, 50, size=n + n_test)
    X = (centers[which] + 0.7 * rng.normal(size=(n + n_test, d))).astype(np.float32)
    W = rng.normal(size=(d, q)).astype(np.float32)
    Y = (X @ W + rng.normal(size=(n + n_test, q)) > 1.5).astype(np.uint8)
    return X[:n], Y[:n], X[n:]


def best_of(repeats, fn, client=None):
    """(wall s, CPU s, busiest worker's CPU s, result) of the fastest of ``repeats`` runs.

    CPU seconds: this process's (all its threads) plus, with a client, every
    worker process's -- less sensitive than wall time to other programs sharing
    the machine, and what shows the cost of the distributed path. The busiest
    worker's CPU seconds are what the wall time would be with one idle core per
    worker (ignoring memory-bandwidth contention); without a client, this
    process's CPU seconds.
    """

    def cpu():
        workers = client.run(time.process_time) if client is not None else {}
        return time.process_time(), workers

    best, out = None, None
    for _ in range(repeats):
        (c0, w0), t0 = cpu(), time.perf_counter()
        out = fn()
        wall = time.perf_counter() - t0
        c1, w1 = cpu()
        per_worker = [w1[a] - w0[a] for a in w1 if a in w0]
        total = (c1 - c0) + sum(per_worker)
        busiest = max(per_worker) if per_worker else c1 - c0
        if best is None or wall < best[0]:
            best = (wall, total, busiest)
    return (*best, out)


def kernel_digest():
    """SHA-256 prefix of the brute kernel's source as this process imported it."""
    import hashlib
    import inspect

    from mlknn.neighbors._exact import _index, _kernel

    return hashlib.sha256((inspect.getsource(_index) + inspect.getsource(_kernel)).encode()).hexdigest()[:12]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=100_000)
    p.add_argument("--d", type=int, default=50)
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--labels", type=int, default=20)
    p.add_argument("--n-test", type=int, default=10_000)
    p.add_argument("--workers", default="1,2", help="comma-separated worker counts")
    p.add_argument("--repeats", type=int, default=1, help="best of this many runs")
    p.add_argument("--block", type=int, default=None, help="rows per block (default: n / (2 workers))")
    args = p.parse_args(argv)

    from distributed import Client, LocalCluster
    from threadpoolctl import threadpool_limits

    from mlknn import MLkNN
    from mlknn.distributed import DistributedKNN, kneighbors_graph
    from mlknn.neighbors import BruteNeighbors

    X, Y, Q = make_problem(args.n, args.d, args.labels, args.n_test)
    print(f"# {args.n} x {args.d} float32, {args.labels} labels, k={args.k}, {args.n_test} test queries; "
          f"{os.cpu_count()} CPUs, load average at start {os.getloadavg()[0]:.1f}, kernel {kernel_digest()}")  # fmt: skip
    rows = []

    def single(threads):
        with threadpool_limits(threads):
            BruteNeighbors().fit(X[:2000]).kneighbors(None, args.k)  # warm-up
            tg, cg, bg, (dist, ind) = best_of(args.repeats, lambda: BruteNeighbors().fit(X).kneighbors(None, args.k))

            def mlknn():
                return MLkNN(n_neighbors=args.k).fit(X, Y).predict_proba(Q)

            tm, cm, bm, P = best_of(args.repeats, mlknn)
        busy = (bg, bm) if threads == 1 else (float("nan"), float("nan"))
        return (tg, cg, busy[0], tm, cm, busy[1]), (dist, ind), P

    t1, ref_graph, ref_P = single(1)
    rows.append(("single process, 1 thread", *t1, "reference"))
    print(rows[-1], flush=True)
    cpus = os.cpu_count() or 1
    if cpus > 1:
        t, _, _ = single(cpus)
        rows.append((f"single process, {cpus} threads", *t, ""))
        print(rows[-1], flush=True)

    for w in [int(v) for v in args.workers.split(",")]:
        with LocalCluster(n_workers=w, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
            with Client(cluster) as client:
                client.run(importlib.import_module, "mlknn.algorithms._mlknn")  # warm-up: imports on every worker
                digests = set(client.run(kernel_digest).values())
                if digests != {kernel_digest()}:  # the source changed since this process imported it
                    print(f"# WARNING: the workers run another brute kernel ({digests}) than this process "
                          f"({kernel_digest()}): the comparison is not valid", flush=True)  # fmt: skip
                kneighbors_graph(X[:4000], None, args.k, client=client, train_block=500)

                def graph():
                    return kneighbors_graph(X, None, args.k, client=client, train_block=args.block)

                tg, cg, bg, g = best_of(args.repeats, graph, client)
                same = np.array_equal(g.indices, ref_graph[1]) and np.array_equal(g.distances, ref_graph[0])

                def mlknn():
                    model = DistributedKNN(MLkNN(n_neighbors=args.k), client, train_block=args.block, query_block=args.block)
                    return model.fit(X, Y).predict_proba(Q)

                tm, cm, bm, P = best_of(args.repeats, mlknn, client)
                same = same and np.array_equal(P, ref_P)
        rows.append((f"dask, {w} worker(s) x 1 thread", tg, cg, bg, tm, cm, bm, "identical" if same else "DIFFERENT"))
        print(rows[-1], flush=True)

    print(f"# load average at end {os.getloadavg()[0]:.1f}")
    print()
    print("| configuration | LOO graph: wall s | CPU s | busiest worker CPU s "
          "| MLkNN fit + predict_proba: wall s | CPU s | busiest worker CPU s | result |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    fmt = lambda v: "-" if v != v else f"{v:.1f}"  # noqa: E731
    for name, tg, cg, bg, tm, cm, bm, same in rows:
        print(f"| {name} | {fmt(tg)} | {fmt(cg)} | {fmt(bg)} | {fmt(tm)} | {fmt(cm)} | {fmt(bm)} | {same or '-'} |")

if __name__ == "__main__":
    main()
