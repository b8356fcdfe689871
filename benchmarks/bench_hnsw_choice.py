"""Which wheel-shipping HNSW library backs ``neighbors="voyager"`` (issue 29 point 3).

usearch and voyager both install from binary wheels; this script measures the
three things the choice rests on at the scale of the million-row benchmark:
build time, recall@10 and queries per second, each library on the same data,
the same graph parameters and the same number of threads.

Data: the embeddings of ``benchmarks/bench_million.py`` (``make_extreme_multilabel``
with ``n_train + n_query`` rows; d = 128 unit float32 vectors), split into the
indexed rows and the queries. Recall@10 of each library against an exact search
(``neighbors="brute"``) on the first ``--recall-sample`` queries; queries per
second over all ``--n-query`` queries at each ``ef``. Each library builds its
index once (``M``, ``ef_construction``) and is queried at every ``--ef``.

Usage (the run recorded in docs/performance.md)::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE \\
        python benchmarks/bench_hnsw_choice.py --n-train 1000000 --n-query 10000

Output: a markdown table (library, build s, ef, recall@10, queries/s) with the
machine and BLAS kernel, and JSON lines appended to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import machine_info, markdown_table  # noqa: E402

K = 10


def _build_voyager(X, M, ef_construction, threads):
    import voyager

    index = voyager.Index(voyager.Space.Euclidean, num_dimensions=X.shape[1], M=M,
                          ef_construction=ef_construction, random_seed=0, max_elements=X.shape[0])
    index.add_items(X, np.arange(X.shape[0]), num_threads=threads)

    def query(Q, ef):
        ids, _ = index.query(Q, k=K, num_threads=threads, query_ef=max(ef, K))
        return np.asarray(ids, dtype=np.int64)

    return query


def _build_usearch(X, M, ef_construction, threads):
    from usearch.index import Index

    index = Index(ndim=X.shape[1], metric="l2sq", dtype="f32", connectivity=M, expansion_add=ef_construction)
    index.add(np.arange(X.shape[0]), X, threads=threads)

    def query(Q, ef):
        index.expansion_search = max(ef, K)
        return np.asarray(index.search(Q, K, threads=threads).keys, dtype=np.int64)

    return query


BUILDERS = {"voyager": _build_voyager, "usearch": _build_usearch}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n-train", type=int, default=1_000_000, help="indexed rows (default 10^6)")
    p.add_argument("--n-query", type=int, default=10_000, help="queries timed (default 10^4)")
    p.add_argument("--q", type=int, default=1_000_000, help="labels of the generator (as bench_million)")
    p.add_argument("--d", type=int, default=128)
    p.add_argument("--M", type=int, default=32, help="graph degree of both libraries")
    p.add_argument("--ef-construction", type=int, default=200)
    p.add_argument("--ef", default="64,128,256", help="query-time ef values, comma-separated")
    p.add_argument("--libraries", default="voyager,usearch")
    p.add_argument("--recall-sample", type=int, default=1000)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=HERE / "hnsw_choice_results.jsonl")
    args = p.parse_args(argv)

    from mlknn.datasets import make_extreme_multilabel
    from mlknn.neighbors import get_backend

    info = machine_info()
    t = time.perf_counter()
    data = make_extreme_multilabel(args.n_train + args.n_query, n_features=args.d, n_labels=args.q,
                                   random_state=args.seed)
    X = np.ascontiguousarray(data.X[:args.n_train], dtype=np.float32)
    Q = np.ascontiguousarray(data.X[args.n_train:], dtype=np.float32)
    del data
    print(f"data: {time.perf_counter() - t:.1f} s", file=sys.stderr, flush=True)
    exact = get_backend("brute").fit(X)
    truth = exact.kneighbors(Q[:args.recall_sample], K)[1]
    del exact

    rows, records = [], []
    for lib in args.libraries.split(","):
        t = time.perf_counter()
        query = BUILDERS[lib](X, args.M, args.ef_construction, args.threads)
        build = time.perf_counter() - t
        print(f"{lib}: build {build:.1f} s", file=sys.stderr, flush=True)
        for ef in (int(e) for e in args.ef.split(",")):
            t = time.perf_counter()
            ids = query(Q, ef)
            qps = Q.shape[0] / (time.perf_counter() - t)
            found = ids[:args.recall_sample]
            recall = float(np.mean([np.isin(found[i], truth[i]).sum() / K for i in range(len(truth))]))
            rows.append((lib, args.n_train, args.M, args.ef_construction, f"{build:.1f}", ef,
                         f"{recall:.4f}", f"{qps:,.0f}"))
            records.append({"library": lib, "n_train": args.n_train, "n_query": args.n_query, "d": args.d,
                            "M": args.M, "ef_construction": args.ef_construction, "ef": ef,
                            "build_s": build, "recall@10": recall, "queries_per_s": qps,
                            "threads": args.threads, "date": info["date"], "blas": info.get("blas")})
        del query
    print(f"{info['date']}, {info['cpu']}, {info['cores']} cores, {info.get('blas')}, load {info['loadavg_start']}")
    print(markdown_table(("library", "n", "M", "ef_construction", "build s", "ef", "recall@10", "queries/s"),
                         rows))
    with open(args.out, "a") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
