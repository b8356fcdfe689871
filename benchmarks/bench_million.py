"""A million rows and a million labels end to end (issue 29 point 1), at any scale.

Synthetic clustered embeddings with a power-law label space
(:func:`mlknn.datasets.make_extreme_multilabel`: about 5 labels a row, Zipfian label
popularity, topic clusters), n_train + n_queries rows drawn together and split. One
neighbour search serves both estimators: the training leave-one-out graph and the
queries' graph come from ``--neighbors`` (any backend name), and MLkNN and BRkNN fit
from them (``fit_from_graph``) and answer ``predict_topk_from_graph(k=5)``. Reported:
the time of each stage, P@1/3/5 of each estimator against the generator's label sets
of the queries, recall@10 of the queries' graph against exact search on a sample of
queries (1.0 without measuring for an exact backend), and the peak RSS of the process.

Usage::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/bench_million.py \\
        [--n 1000000] [--q 1000000] [--queries 100000] [--d 128] [--neighbors voyager]

Prints one JSON line, then the markdown row of docs/performance.md's table.
"""

import argparse
import json
import platform
import resource
import sys
import time

import numpy as np
from threadpoolctl import threadpool_info

import mlknn
from mlknn import BRkNN, MLkNN
from mlknn.datasets import make_extreme_multilabel
from mlknn.metrics import precision_at_k
from mlknn.neighbors import BruteNeighbors, build_graph, get_backend, is_exact, recall_at_k

K = 10


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="training rows")
    parser.add_argument("--q", type=int, default=1_000_000, help="labels")
    parser.add_argument("--queries", type=int, default=100_000, help="query rows")
    parser.add_argument("--d", type=int, default=128, help="embedding dimension")
    parser.add_argument("--neighbors", default="voyager", help="backend name (brute, voyager, faiss-ivf, faiss-gpu, ...)")
    parser.add_argument("--recall-sample", type=int, default=1000, help="queries searched exactly for recall@10")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    times: dict[str, float] = {}
    start = time.perf_counter()
    data = make_extreme_multilabel(n_samples=args.n + args.queries, n_features=args.d, n_labels=args.q,
                                   random_state=args.seed)
    X_train, X_test = data.X[: args.n], data.X[args.n :]
    Y_train, Y_test = data.Y[: args.n], data.Y[args.n :]
    times["data"] = time.perf_counter() - start

    start = time.perf_counter()
    index = get_backend(args.neighbors, random_state=args.seed).fit(X_train)
    times["index"] = time.perf_counter() - start
    start = time.perf_counter()
    train_graph = build_graph(index, None, K)
    times["train_graph"] = time.perf_counter() - start
    start = time.perf_counter()
    test_graph = build_graph(index, X_test, K)
    times["query_graph"] = time.perf_counter() - start

    if is_exact(index):
        recall = 1.0
    else:
        rows = np.random.default_rng(args.seed).choice(args.queries, min(args.recall_sample, args.queries),
                                                       replace=False)
        exact = BruteNeighbors().fit(X_train).kneighbors(X_test[rows], K, return_distance=False)
        recall = recall_at_k(test_graph.indices[rows], exact, K)

    scores: dict[str, dict[str, float]] = {}
    for est in (MLkNN(n_neighbors=K), BRkNN(n_neighbors=K)):
        name = type(est).__name__
        start = time.perf_counter()
        est.fit_from_graph(train_graph, Y_train)
        times[f"{name}_fit"] = time.perf_counter() - start
        start = time.perf_counter()
        top = est.predict_topk_from_graph(test_graph, k=5)
        times[f"{name}_topk"] = time.perf_counter() - start
        scores[name] = {f"P@{k}": precision_at_k(Y_test, top, k=k) for k in (1, 3, 5)}

    blas = [f"{i.get('internal_api')} {i.get('architecture')}" for i in threadpool_info() if i.get("user_api") == "blas"]
    result = {
        "n": args.n, "q": args.q, "queries": args.queries, "d": args.d, "neighbors": args.neighbors,
        "recall@10": round(float(recall), 4), "scores": {e: {m: round(v, 4) for m, v in s.items()} for e, s in scores.items()},
        "seconds": {k: round(v, 1) for k, v in times.items()}, "total_s": round(sum(times.values()), 1),
        "peak_rss_gib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2),
        "machine": f"{platform.machine()}, {len(__import__('os').sched_getaffinity(0))} cores", "blas": blas,
        "mlknn": mlknn.__version__, "date": time.strftime("%Y-%m-%d"),
    }
    print(json.dumps(result))
    mk, br = scores["MLkNN"], scores["BRkNN"]
    print(f"| {args.n:,} | {args.q:,} | {args.queries:,} | {args.neighbors} | {result['recall@10']} | "
          f"{mk['P@1']:.3f} / {mk['P@3']:.3f} / {mk['P@5']:.3f} | {br['P@1']:.3f} / {br['P@3']:.3f} / {br['P@5']:.3f} | "
          f"{times['index'] + times['train_graph'] + times['query_graph']:.0f} s | {result['total_s']:.0f} s | "
          f"{result['peak_rss_gib']} GiB |")
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
