"""Exact leave-one-out training graph: mlknn brute vs the GEMM lower bound and others.

For n points of dimension d the distance computation needs 2 n^2 d flops; at the
matrix-multiply throughput of this machine that is a lower bound for any exact
GEMM-based search. The bound is *measured* in the same run as the time of exactly
those products and nothing else (``_common.gemm_only``: X @ X.T by chunks of 1024
rows into a reused buffer), interleaved with the competitors; the best of the
rounds is kept for each (the machine may be shared, so single timings wander by
+-30 %). Competitors:

* ``mlknn brute``  - mlknn's exact kernel (``BruteNeighbors``), k = 10, LOO;
* ``mlknn v0``     - the first version of the same kernel (``legacy_brute.py``), the "before";
* ``sklearn brute`` - ``NearestNeighbors(algorithm="brute").fit(X).kneighbors()``;
* ``mlknn faiss``  - the exact faiss backend (flat index + exact re-ranking), if installed.

``cpu ratio``: the same comparison (mlknn brute / GEMM-only) in CPU time on one
thread, which does not depend on what else runs on the machine.
"""

import numpy as np

from _common import best_of_interleaved, gemm_only, log, markdown_table


def run(sizes=(5000, 20000, 50000), d=120, k=10, repeats=None, cpu_check=True):
    from sklearn.neighbors import NearestNeighbors

    from legacy_brute import LegacyBruteNeighbors
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
            {"gemm256": lambda: gemm_only(X, 256), "gemm1024": lambda: gemm_only(X, 1024), "ours": ours,
             "legacy": legacy, "sklearn": sk, "faiss": fa if has_faiss else None},
            reps, once=("legacy", "sklearn", "faiss") if n > 20000 else (),
        )
        bound = min(t["gemm256"], t["gemm1024"])
        gflops = 2.0 * n * n * d / bound / 1e9
        cpu = cpu_ratio(X, k) if cpu_check else None
        same_legacy = np.array_equal(results["ours"][1], results["legacy"][1])
        same_faiss = has_faiss and np.array_equal(results["ours"][1], results["faiss"][1])
        sk_agree = float(np.mean(results["ours"][1] == results["sk"][1]))
        rows.append({
            "n": n, "d": d, "gflops": gflops, "bound_s": bound, "ours_s": t["ours"],
            "ratio_bound": t["ours"] / bound, "legacy_s": t["legacy"], "legacy_ratio_bound": t["legacy"] / bound,
            "speedup_vs_legacy": t["legacy"] / t["ours"], "sklearn_s": t["sklearn"],
            "sklearn_over_ours": t["sklearn"] / t["ours"], "faiss_s": t["faiss"],
            "faiss_over_ours": None if t["faiss"] is None else t["faiss"] / t["ours"],
            "same_as_legacy": same_legacy, "same_as_faiss": same_faiss, "sklearn_agreement": sk_agree,
            "cpu_ratio": cpu,
        })
        log(f"  bound {bound:.2f}s ours {t['ours']:.2f}s ({t['ours'] / bound:.2f}x) "
            f"v0 {t['legacy']:.2f}s sklearn {t['sklearn']:.2f}s faiss {t['faiss']} cpu ratio {cpu}")
    return rows


def cpu_ratio(X, k=10):
    """CPU time of mlknn brute / CPU time of the GEMM-only pass, both on one thread.

    Wall-clock ratios on a shared machine wander; with a single BLAS thread and
    ``time.process_time`` the ratio measures the work mlknn does beyond the matrix
    products (selection, exact recomputation, sorting), whatever the load.
    """
    import time

    from threadpoolctl import threadpool_limits

    from mlknn.neighbors import BruteNeighbors

    best = {}
    with threadpool_limits(limits=1, user_api="blas"):
        for _ in range(2):
            for name, fn in (("gemm", lambda: gemm_only(X, 256)),
                             ("ours", lambda: BruteNeighbors(n_jobs=1).fit(X).kneighbors(None, k))):
                t = time.process_time()
                fn()
                best[name] = min(best.get(name, float("inf")), time.process_time() - t)
    return best["ours"] / best["gemm"]


def table(rows):
    header = ["n", "GEMM GFLOP/s", "GEMM-only pass = bound (s)", "mlknn brute (s)", "x bound", "v0 (s)", "v0 x bound",
              "speed-up vs v0", "sklearn brute (s)", "sklearn / mlknn", "faiss exact (s)", "faiss / mlknn",
              "same indices (v0, faiss)", "sklearn agreement", "cpu ratio (1 thread)"]
    body = [[r["n"], r["gflops"], r["bound_s"], r["ours_s"], r["ratio_bound"], r["legacy_s"],
             r["legacy_ratio_bound"], r["speedup_vs_legacy"], r["sklearn_s"], r["sklearn_over_ours"],
             r["faiss_s"], r["faiss_over_ours"], f"{r['same_as_legacy']}, {r['same_as_faiss']}",
             f"{r['sklearn_agreement']:.4f}", r["cpu_ratio"]] for r in rows]
    return markdown_table(header, body)
