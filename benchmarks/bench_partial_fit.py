"""One ``partial_fit`` of a batch against a refit on all rows (issue 28 point 1).

A model fitted on ``n_fitted`` rows (``partial_fit``'s first call, which is a fit)
receives one batch of ``batch`` rows: ``partial_fit(batch)`` against
``fit(all rows)``, the refit a user without ``partial_fit`` would run. Default:
n_fitted = 100,000, d = 64, q = 20 labels (scikit-learn's
``make_multilabel_classification`` through ``mlknn.datasets.make_multilabel``,
features standardised), batches of 1,000, MLkNN(n_neighbors=10), the brute
backend. Both are timed in the same run, interleaved (refit, update, refit,
update, ...), each update on a fresh copy of the fitted model (the copy is not
timed), plus, per round, an update by a single row (a stream fed row by row, as
river's ``learn_one``; compared with the same refit); the minimum over the rounds is reported (the machine is shared: the
least disturbed run of each), with the load average. The run also checks that
the updated model's tables equal the refit's (``equal``).

Usage::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE \\
        python benchmarks/bench_partial_fit.py [--n 100000] [--d 64] [--q 20] [--batch 1000] [--repeats 2]

Prints the machine, one JSON line per estimator and a markdown table.
"""

import argparse
import copy
import json
import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(__file__))

from _common import back_guest_memory, load_average, log, machine_info, markdown_table, timed  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000, help="rows fitted before the batch")
    parser.add_argument("--d", type=int, default=64)
    parser.add_argument("--q", type=int, default=20)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--estimators", nargs="+", default=["MLkNN"])
    args = parser.parse_args()

    import numpy as np

    import mlknn
    from mlknn.datasets import make_multilabel

    warnings.simplefilter("ignore")
    log(json.dumps(machine_info()))
    back_guest_memory(2.0)  # first touches of guest memory would be charged to whichever run came first
    data = make_multilabel(n_samples=args.n + args.batch, n_features=args.d, n_labels=args.q, random_state=0)
    X = np.ascontiguousarray(data.X, dtype=np.float64)
    X = (X - X.mean(axis=0)) / np.maximum(X.std(axis=0), 1e-12)
    Y = np.asarray(data.Y)
    old, new = slice(0, args.n), slice(args.n, args.n + args.batch)
    rows = []
    for name in args.estimators:
        make = getattr(mlknn, name)
        t_first, fitted = timed(lambda: make(n_neighbors=10).partial_fit(X[old], Y[old]))
        best = {"refit": float("inf"), "partial_fit": float("inf"), "one_row": float("inf")}
        updated = refit = None
        for _ in range(args.repeats):
            t, refit = timed(lambda: make(n_neighbors=10).fit(X, Y))
            best["refit"] = min(best["refit"], t)
            work = copy.deepcopy(fitted)
            t, updated = timed(lambda: work.partial_fit(X[new], Y[new]))
            best["partial_fit"] = min(best["partial_fit"], t)
            work = copy.deepcopy(fitted)  # a stream of single rows (river's learn_one)
            t, _ = timed(lambda: work.partial_fit(X[args.n : args.n + 1], Y[args.n : args.n + 1]))
            best["one_row"] = min(best["one_row"], t)
        equal = all(
            np.array_equal(getattr(refit, a), getattr(updated, a))
            for a in ("prior_", "cond_prob_true_", "cond_prob_false_") if hasattr(refit, a)
        ) and np.array_equal(refit.predict_proba(X[:2000]), updated.predict_proba(X[:2000]))
        record = {"estimator": name, "n_fitted": args.n, "d": args.d, "q": args.q, "batch": args.batch,
                  "first_partial_fit_s": t_first, "refit_s": best["refit"], "partial_fit_s": best["partial_fit"],
                  "ratio": best["partial_fit"] / best["refit"], "one_row_partial_fit_s": best["one_row"],
                  "equal": bool(equal), "loadavg": load_average()}
        print(json.dumps(record), flush=True)
        rows.append(record)
    print(markdown_table(
        ["estimator", "n fitted", "batch", "refit (s)", "partial_fit (s)", "partial_fit / refit", "one row (s)",
         "equal"],
        [[r["estimator"], r["n_fitted"], r["batch"], r["refit_s"], r["partial_fit_s"], r["ratio"],
          r["one_row_partial_fit_s"], r["equal"]] for r in rows]))


if __name__ == "__main__":
    main()
