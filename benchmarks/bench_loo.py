"""Exact leave-one-out posteriors as a multiple of one fit (issue 27 point 1).

For each dataset (default: yeast, q = 14, and delicious, q = 983; the dataset's
training split) and each estimator, times ``est.fit(X, Y)`` and
``loo_predict_proba(est, X, Y)`` (with a sparse Y also ``loo_predict_topk(...,
k=5)``) on the same rows, interleaved (fit, loo, fit, loo, ...), and reports
the minimum over the rounds of each and their ratio; beside it, the ratio to
``fit`` followed by ``predict_proba`` on the same rows (the in-sample
posteriors, what one would compute without this function). The machine is shared: the
minimum over interleaved rounds is the least disturbed run of each, and the
load average is printed. The leave-one-out path includes its own fit (one
search one neighbour wider), so the ratio is the whole price of the
out-of-sample posteriors.

Usage::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE MLKNN_DATA=/path/to/datasets \\
        python benchmarks/bench_loo.py [--datasets yeast delicious] [--repeats 3]

Prints one JSON line per (dataset, estimator), then a markdown table.
"""

import argparse
import json
import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(__file__))

from _common import best_of_interleaved, load_average, log, machine_info, markdown_table  # noqa: E402

ESTIMATORS = {
    "MLkNN": lambda: __import__("mlknn").MLkNN(n_neighbors=10),
    "MLkNN (sparse Y)": lambda: __import__("mlknn").MLkNN(n_neighbors=10),
    "DMLkNN": lambda: __import__("mlknn").DMLkNN(n_neighbors=10),
    "BMLkNN(radius=r)": None,  # the radius is the dataset's median 10th-neighbour distance, set below
    "BRkNNa": lambda: __import__("mlknn").BRkNNa(n_neighbors=10),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["yeast", "delicious"])
    parser.add_argument("--estimators", nargs="+", default=list(ESTIMATORS))
    parser.add_argument("--skip", nargs="*", default=["delicious:DMLkNN"],
                        help="dataset:estimator pairs not run (DML-kNN's evidence at q = 983 takes minutes)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    import numpy as np
    import scipy.sparse as sp

    import mlknn
    from mlknn.datasets import load
    from mlknn.model_selection import loo_predict_proba, loo_predict_topk

    warnings.simplefilter("ignore")
    log(json.dumps(machine_info()))
    rows = []
    for name in args.datasets:
        data = load(name, split="train")
        X = np.asarray(data.X.toarray() if sp.issparse(data.X) else data.X, dtype=np.float64)
        Y_sparse = sp.csr_array(data.Y)
        Y_dense = Y_sparse.toarray()
        radius = None
        for est_name in args.estimators:
            if f"{name}:{est_name}" in args.skip:
                continue
            sparse = "sparse" in est_name
            Y = Y_sparse if sparse else Y_dense
            if est_name.startswith("BMLkNN"):
                if radius is None:
                    radius = mlknn.BMLkNN(n_neighbors=10, radius="auto").fit(X, Y_dense).radius_
                make = lambda r=radius: mlknn.BMLkNN(n_neighbors=10, radius=r)  # noqa: E731
            else:
                make = ESTIMATORS[est_name]
            fns = {
                "fit": lambda: make().fit(X, Y),
                "fit_proba": (lambda: make().fit(X, Y).predict_proba(X)) if not sparse else None,
                "loo_proba": lambda: loo_predict_proba(make(), X, Y),
                "loo_topk": (lambda: loo_predict_topk(make(), X, Y, 5)) if sparse else None,
            }
            best = best_of_interleaved(fns, args.repeats)
            record = {"dataset": name, "n": X.shape[0], "q": Y.shape[1], "estimator": est_name, **best,
                      "loadavg": load_average()}
            print(json.dumps(record), flush=True)
            rows.append([name, X.shape[0], Y.shape[1], est_name, best["fit"], best["loo_proba"],
                         best["loo_proba"] / best["fit"],
                         None if best["loo_topk"] is None else best["loo_topk"] / best["fit"],
                         None if best["fit_proba"] is None else best["loo_proba"] / best["fit_proba"]])
    print(markdown_table(["dataset", "n", "q", "estimator", "fit s", "loo_predict_proba s",
                          "loo / fit", "loo_topk / fit", "loo / (fit + in-sample predict_proba)"], rows))


if __name__ == "__main__":
    main()
