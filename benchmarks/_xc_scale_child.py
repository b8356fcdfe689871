"""One cell of bench_xc.py's scale section, run in its own process (its peak RSS is the cell's).

Usage: ``python benchmarks/_xc_scale_child.py '{"n_train": ..., "n_test": ..., "q": ..., "d": ...,
"k": ..., "backend": ..., "n_jobs": ...}'``; prints one line ``RESULT {json}``.
"""

import json
import os
import resource
import sys
import time

from mlknn import MLkNN
from mlknn.datasets import make_extreme_multilabel
from mlknn.metrics import inverse_propensity, precision_at_k, psprecision_at_k, recall_at_k
from mlknn.neighbors import build_graph, get_backend


def rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def cpu_s():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def load():
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def main(cfg):
    out = {"load_start": load()}
    t = time.perf_counter()
    data = make_extreme_multilabel(
        cfg["n_train"] + cfg["n_test"], n_features=cfg["d"], n_labels=cfg["q"], random_state=0
    )
    n = cfg["n_train"]
    Xtr, Xte, Ytr, Yte = data.X[:n], data.X[n:], data.Y[:n], data.Y[n:]
    del data
    out.update(generate_s=time.perf_counter() - t, rss_after_data_mb=rss_mb(), nnz_train=int(Ytr.nnz))

    # The steps of MLkNN(...).fit(Xtr, Ytr).predict_topk(Xte, 5), timed one by one.
    steps, t0, c0 = {}, time.perf_counter(), cpu_s()
    t = t0
    index = get_backend(cfg["backend"], metric="cosine", n_jobs=cfg["n_jobs"], random_state=0).fit(Xtr)
    steps["index_s"], t = time.perf_counter() - t, time.perf_counter()
    G_train = build_graph(index, None, cfg["k"])
    steps["loo_graph_s"], t = time.perf_counter() - t, time.perf_counter()
    est = MLkNN(n_neighbors=cfg["k"], neighbors=cfg["backend"], metric="cosine")
    est.fit_from_graph(G_train, Ytr, index=index)
    steps["fit_s"], t = time.perf_counter() - t, time.perf_counter()
    G_test = build_graph(index, Xte, cfg["k"])
    steps["query_graph_s"], t = time.perf_counter() - t, time.perf_counter()
    pair = est.predict_topk_from_graph(G_test, k=5)
    steps["predict_topk_s"] = time.perf_counter() - t
    # CPU seconds of the timed steps (all threads): on a shared machine a better
    # measure of the work than wall time; wall >= cpu / n_threads when idle.
    out.update(steps, total_s=time.perf_counter() - t0, cpu_s=cpu_s() - c0, peak_rss_mb=rss_mb())

    w = inverse_propensity(Ytr)
    for k in (1, 3, 5):
        out[f"P@{k}"] = 100 * precision_at_k(Yte, pair, k=k)
        out[f"PSP@{k}"] = 100 * psprecision_at_k(Yte, pair, w, k=k)
        out[f"R@{k}"] = 100 * recall_at_k(Yte, pair, k=k)
    if cfg["backend"] != "brute":  # against exact search on 1,000 sampled test queries
        out["graph_recall@k"] = float(est.neighbor_recall(Xte, n_samples=1000, random_state=0))
    from threadpoolctl import threadpool_info

    out["blas"] = "; ".join(
        f"{p['internal_api']} {p.get('version', '')} {p.get('architecture', '')} ({p['num_threads']} threads)"
        for p in threadpool_info()
        if p["user_api"] == "blas"
    )
    out["load_end"] = load()
    print("RESULT " + json.dumps(out), flush=True)


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
