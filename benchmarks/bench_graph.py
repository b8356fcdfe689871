"""Exact leave-one-out training graph: mlknn brute vs the GEMM lower bound and others.

For n points of dimension d the distance computation needs 2 n^2 d flops. Two
bounds are *measured* in the same run, interleaved with the competitors (best of
the rounds for each: the machine may be shared, so single timings wander by
+-30 %):

* the **skinny-GEMM bound**: the time of exactly the kernel's products and nothing
  else (``_common.gemm_only``: X @ X.T by chunks of 256 or 1024 rows into a reused
  buffer, inner dimension K = d). It measures the kernel's overhead over its own
  GEMM shape;
* the **square-GEMM bound**: 2 n^2 d flops at the rate of a 4096 x 4096 x 4096
  float32 product (``_common.square_gemm``), the machine's near-peak rate. It
  measures the distance to the hardware: on a CPU whose BLAS runs a K = 121
  product well below its square rate the two differ (the issue's AVX2 machine:
  about 0.6x); where the skinny rate equals the square one they agree.

A third reference, the **half product**: the products the symmetric leave-one-out
path itself computes (``half_product``: its diagonal tiles and the tiles above the
diagonal, each pair once, on the same threads with one BLAS thread each) and nothing
else, about n^2 d flops. ``x half product`` is the kernel's cost beyond its own
products (selection, running bounds, re-ranking, threads); ``half product x square``
how fast those products run against the square GEMM (0.5 if at its rate).

Competitors:

* ``mlknn brute``  - mlknn's exact kernel (``BruteNeighbors``), k = 10, LOO;
* ``mlknn v0``     - the first version of the same kernel (``legacy_brute.py``), the "before";
* ``sklearn brute`` - ``NearestNeighbors(algorithm="brute").fit(X).kneighbors()``;
* ``mlknn faiss``  - the exact faiss backend (flat index + exact re-ranking), if installed.

``cpu ratio``: the same comparison (mlknn brute / GEMM-only) in CPU time on one
thread, which does not depend on what else runs on the machine; beside it the
plain chunked path (``allow_symmetric_loo = False``: every pair computed twice, the
kernel before the symmetric leave-one-out path) in the same run.
"""

import numpy as np
from _common import (
    best_of_interleaved,
    gemm_only,
    load_average,
    log,
    markdown_table,
    square_gemm,
    square_gemm_gflops,
)


def run(sizes=(5000, 20000, 50000), d=120, k=10, repeats=None, cpu_check=True):
    from legacy_brute import LegacyBruteNeighbors
    from sklearn.neighbors import NearestNeighbors

    from mlknn.neighbors import BruteNeighbors, available_backends, get_backend

    has_faiss = "faiss" in available_backends()
    rows = []
    for n in sizes:
        reps = repeats if repeats is not None else (3 if n <= 5000 else 2)
        rng = np.random.default_rng(n)
        X = rng.standard_normal((n, d)).astype(np.float32)
        log(f"graph n={n} d={d}: {reps} round(s)")
        results = {}

        def ours():
            results["ours"] = BruteNeighbors().fit(X).kneighbors(None, k)

        def legacy():
            results["legacy"] = LegacyBruteNeighbors().fit(X).kneighbors(None, k)

        def sk():
            results["sk"] = NearestNeighbors(n_neighbors=k, algorithm="brute").fit(X).kneighbors()

        def fa():
            results["faiss"] = get_backend("faiss").fit(X).kneighbors(None, k)

        t = best_of_interleaved(
            {"square": square_gemm, "gemm256": lambda: gemm_only(X, 256), "gemm1024": lambda: gemm_only(X, 1024),
             "half": lambda: half_product(X), "ours": ours,
             "legacy": legacy, "sklearn": sk, "faiss": fa if has_faiss else None},
            reps, once=("legacy", "sklearn", "faiss") if n > 20000 else (),
        )
        bound = min(t["gemm256"], t["gemm1024"])
        gflops = 2.0 * n * n * d / bound / 1e9
        square_rate = square_gemm_gflops(t["square"])
        square_bound = 2.0 * n * n * d / (square_rate * 1e9)
        cpu, cpu_square, cpu_plain = cpu_ratio(X, k) if cpu_check else (None, None, None)
        same_legacy = np.array_equal(results["ours"][1], results["legacy"][1])
        same_faiss = has_faiss and np.array_equal(results["ours"][1], results["faiss"][1])
        sk_agree = float(np.mean(results["ours"][1] == results["sk"][1]))
        rows.append({
            "n": n, "d": d, "gflops": gflops, "bound_s": bound, "ours_s": t["ours"],
            "ratio_bound": t["ours"] / bound, "square_gflops": square_rate, "square_bound_s": square_bound,
            "ratio_square": t["ours"] / square_bound, "loadavg": load_average(),
            "half_s": t["half"], "ratio_half": t["ours"] / t["half"], "half_over_square": t["half"] / square_bound,
            "legacy_s": t["legacy"], "legacy_ratio_bound": t["legacy"] / bound,
            "speedup_vs_legacy": t["legacy"] / t["ours"], "sklearn_s": t["sklearn"],
            "sklearn_over_ours": t["sklearn"] / t["ours"], "faiss_s": t["faiss"],
            "faiss_over_ours": None if t["faiss"] is None else t["faiss"] / t["ours"],
            "same_as_legacy": same_legacy, "same_as_faiss": same_faiss, "sklearn_agreement": sk_agree,
            "cpu_ratio": cpu, "cpu_ratio_square": cpu_square,
            "cpu_ratio_square_plain": cpu_plain,
        })
        log(f"  bound {bound:.2f}s square bound {square_bound:.2f}s ours {t['ours']:.2f}s "
            f"({t['ours'] / bound:.2f}x, {t['ours'] / square_bound:.2f}x square) "
            f"v0 {t['legacy']:.2f}s sklearn {t['sklearn']:.2f}s faiss {t['faiss']} cpu ratio {cpu}")
    return rows


def half_product(X):
    """The products of the symmetric leave-one-out path alone (its tiles, each pair once).

    The tiles of ``mlknn.neighbors._exact._loo`` (``TILE_ROWS`` x ``TILE_COLS``, K =
    d + 2): each strip against itself, then against every later point tile by tile,
    into one reused buffer per thread; the strips shared by as many threads as
    ``BruteNeighbors`` uses (``n_jobs=None``), each with one BLAS thread. No selection.
    """
    import threading

    from mlknn.neighbors._exact import _loo
    from mlknn.utils._threads import blas_single_threaded, run_items, threads_for

    n, d = X.shape
    F = np.ones((n, d + 2), dtype=np.float32)
    F[:, :d] = X
    rows, cols = _loo.TILE_ROWS, _loo.TILE_COLS
    workers = threads_for(None)
    strips = iter(range(0, n, rows))
    take = threading.Lock()

    def worker(_):
        buf = np.empty(rows * max(rows, cols), dtype=np.float32)
        while True:
            with take:
                a = next(strips, None)
            if a is None:
                return
            b = min(a + rows, n)
            A = F[a:b]
            np.matmul(A, F[a:b].T, out=buf[: (b - a) ** 2].reshape(b - a, b - a))
            for c in range(b, n, cols):
                e = min(c + cols, n)
                np.matmul(A, F[c:e].T, out=buf[: (b - a) * (e - c)].reshape(b - a, e - c))

    with blas_single_threaded():
        run_items(worker, range(workers), workers)


def cpu_ratio(X, k=10):
    """CPU time of mlknn brute over the GEMM-only pass and over the square-GEMM bound, on one thread.

    Wall-clock ratios on a shared machine wander; with a single BLAS thread and
    ``time.process_time`` the ratios measure the work mlknn does beyond the matrix
    products (selection, exact recomputation, sorting), whatever the load.
    Returns ``(ours / skinny GEMM-only pass, ours / square-GEMM bound, the plain
    path / square-GEMM bound)``; the plain path is the same kernel with the
    symmetric leave-one-out path off (each pair computed twice).
    """
    import time

    from threadpoolctl import threadpool_limits

    from mlknn.neighbors import BruteNeighbors

    n, d = X.shape
    best = {}

    def plain():
        index = BruteNeighbors(n_jobs=1).fit(X)
        index._index.allow_symmetric_loo = False
        index.kneighbors(None, k)

    with threadpool_limits(limits=1, user_api="blas"):
        for _ in range(2):
            for name, fn in (("square", square_gemm), ("gemm", lambda: gemm_only(X, 256)),
                             ("ours", lambda: BruteNeighbors(n_jobs=1).fit(X).kneighbors(None, k)),
                             ("plain", plain)):
                t = time.process_time()
                fn()
                best[name] = min(best.get(name, float("inf")), time.process_time() - t)
    square_bound = 2.0 * n * n * d / (square_gemm_gflops(best["square"]) * 1e9)
    return best["ours"] / best["gemm"], best["ours"] / square_bound, best["plain"] / square_bound


def table(rows):
    header = ["n", "square GEMM GFLOP/s", "square bound (s)", "x square bound", "half product (s)",
              "half product x square", "x half product", "skinny GEMM GFLOP/s",
              "GEMM-only pass = skinny bound (s)", "mlknn brute (s)", "x skinny bound", "v0 (s)", "v0 x bound",
              "speed-up vs v0", "sklearn brute (s)", "sklearn / mlknn", "faiss exact (s)", "faiss / mlknn",
              "same indices (v0, faiss)", "sklearn agreement", "cpu ratio (1 thread): x skinny",
              "x square", "plain path x square"]
    body = [[r["n"], r["square_gflops"], r["square_bound_s"], r["ratio_square"], r.get("half_s"),
             r.get("half_over_square"), r.get("ratio_half"), r["gflops"], r["bound_s"],
             r["ours_s"], r["ratio_bound"], r["legacy_s"],
             r["legacy_ratio_bound"], r["speedup_vs_legacy"], r["sklearn_s"], r["sklearn_over_ours"],
             r["faiss_s"], r["faiss_over_ours"], f"{r['same_as_legacy']}, {r['same_as_faiss']}",
             f"{r['sklearn_agreement']:.4f}", r["cpu_ratio"], r.get("cpu_ratio_square"),
             r.get("cpu_ratio_square_plain")] for r in rows]
    return markdown_table(header, body)


def thread_scaling(n=20000, d=120, k=10, repeats=2):
    """The leave-one-out graph with 1 and 2 BLAS threads (threadpoolctl), and the GEMM alone.

    ``BruteNeighbors`` takes its thread count from the BLAS limit (``n_jobs=None``),
    so the same call runs one chunk thread under ``limits=1`` and two under
    ``limits=2``. Efficiency = t1 / (threads x t2); the GEMM-only pass is the
    reference of what the hardware (and the load) allows.
    """
    from threadpoolctl import threadpool_limits

    from mlknn.neighbors import BruteNeighbors

    X = np.random.default_rng(n).standard_normal((n, d)).astype(np.float32)
    threads = 2  # this machine's cores
    out = {"n": n, "d": d, "threads": threads, "loadavg_start": load_average()}
    fns = {}
    for th in (1, threads):
        def graph(th=th):
            with threadpool_limits(limits=th, user_api="blas"):
                BruteNeighbors().fit(X).kneighbors(None, k)

        def gemm(th=th):
            with threadpool_limits(limits=th, user_api="blas"):
                gemm_only(X, 1024)

        fns[f"graph{th}"], fns[f"gemm{th}"] = graph, gemm
    t = best_of_interleaved(fns, repeats)
    out.update({
        "graph_1_s": t["graph1"], f"graph_{threads}_s": t[f"graph{threads}"],
        "graph_efficiency": t["graph1"] / (threads * t[f"graph{threads}"]),
        "gemm_1_s": t["gemm1"], f"gemm_{threads}_s": t[f"gemm{threads}"],
        "gemm_efficiency": t["gemm1"] / (threads * t[f"gemm{threads}"]),
        "loadavg_end": load_average(),
    })
    log(f"threads n={n}: graph 1 thread {t['graph1']:.2f}s, {threads} threads {t[f'graph{threads}']:.2f}s "
        f"(efficiency {out['graph_efficiency']:.2f}); GEMM {out['gemm_efficiency']:.2f}")
    return out


def thread_table(r):
    th = r["threads"]
    header = ["n", "threads", "LOO graph, 1 thread (s)", f"{th} threads (s)", "efficiency",
              "GEMM-only, 1 thread (s)", f"{th} threads (s)", "GEMM efficiency", "load average"]
    body = [[r["n"], th, r["graph_1_s"], r[f"graph_{th}_s"], r["graph_efficiency"], r["gemm_1_s"],
             r[f"gemm_{th}_s"], r["gemm_efficiency"], f"{r['loadavg_start']} -> {r['loadavg_end']}"]]
    return markdown_table(header, body)


def sparse_graph(name="tmc2007-500", k=10, repeats=3):
    """A sparse training graph against its own product, in one-thread CPU time (issue 16).

    The leave-one-out graph of the dataset's MULAN training split (CSR X), k = 10,
    against the product the kernel cannot avoid: ``X @ [-q; 1]`` for every chunk of
    queries, the chunks and keys of ``BruteNeighbors`` itself (``KeyLayout.transposed_keys``,
    scipy's ``csr_matvecs``), nothing else. The densified X's float32 GEMM
    (``X @ X.T`` by 1,024-row chunks) is timed beside it: on binary sparse data it is
    the slower product, so the sparse one is the best achievable. One BLAS thread and
    ``time.process_time``, best of ``repeats`` interleaved rounds. Target: within 1.5x.
    """
    import time

    import scipy.sparse as sp
    from threadpoolctl import threadpool_limits

    from mlknn.datasets import load
    from mlknn.neighbors import BruteNeighbors
    from mlknn.neighbors._exact._kernel import CHUNK_BYTES, MAX_CHUNK_ROWS, MIN_CHUNK_ROWS

    X = sp.csr_matrix(load(name, split="train").X)
    n = X.shape[0]
    index = BruteNeighbors(n_jobs=1).fit(X)
    # The kernel's own chunk rule (ExactIndex.kneighbors, one worker).
    rows = max(MIN_CHUNK_ROWS, min(MAX_CHUNK_ROWS, CHUNK_BYTES // (index._index.layout.key_X.dtype.itemsize * n)))
    dense = X.toarray().astype(np.float32)

    def product():
        for a in range(0, n, rows):
            index._index.layout.transposed_keys(X[a : a + rows])

    def graph():
        BruteNeighbors(n_jobs=1).fit(X).kneighbors(None, k)

    def dense_gemm():
        gemm_only(dense, 1024)

    best = {}
    with threadpool_limits(limits=1, user_api="blas"):
        for _ in range(repeats):
            for key, fn in (("product", product), ("graph", graph), ("dense", dense_gemm)):
                t = time.process_time()
                fn()
                best[key] = min(best.get(key, np.inf), time.process_time() - t)
    out = {"dataset": name, "n": n, "d": X.shape[1], "nnz": int(X.nnz), "graph_cpu_s": best["graph"],
           "product_cpu_s": best["product"], "dense_gemm_cpu_s": best["dense"],
           "over_product": best["graph"] / min(best["product"], best["dense"])}
    log(f"sparse {name} (n={n}, nnz={X.nnz}): graph {best['graph']:.2f} s CPU, its product {best['product']:.2f} s, "
        f"dense GEMM {best['dense']:.2f} s -> {out['over_product']:.2f}x the best product")
    return out


def sparse_table(r):
    header = ["dataset", "n", "d", "nnz", "LOO graph, 1-thread CPU (s)", "its sparse product (s)",
              "dense float32 GEMM (s)", "graph / best product"]
    body = [[r["dataset"], r["n"], r["d"], r["nnz"], r["graph_cpu_s"], r["product_cpu_s"], r["dense_gemm_cpu_s"],
             r["over_product"]]]
    return markdown_table(header, body)
