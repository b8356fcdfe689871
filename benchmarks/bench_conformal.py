"""Empirical coverage of ConformalLabelSets: split against leave-one-out calibration.

For each dataset (features min-max scaled on each training part), ``repeats`` random 70/30
train/test splits; on each, ConformalLabelSets(MLkNN(n_neighbors=10)) with
``alpha=0.1`` for every guarantee and both methods, fitted on the training part and measured
on the test part: the set coverage P(Y subset of Yhat), the mean instance false-negative rate,
the worst per-label coverage P(l in Yhat | l in Y) over labels with at least 20 test positives,
and the mean set size. Prints a markdown table (docs/decisions.md).

Usage::

    python benchmarks/bench_conformal.py emotions yeast
"""

import sys
import warnings

import numpy as np
from _common import log, markdown_table


def run(datasets=("emotions", "yeast"), repeats=20, alpha=0.1):
    from sklearn.model_selection import train_test_split

    from mlknn import MLkNN
    from mlknn.datasets import load
    from mlknn.decision import ConformalLabelSets
    from mlknn.preprocessing import FeatureScaler

    rows = []
    for ds in datasets:
        data = load(ds)
        for guarantee in ("set", "fnr", "label"):
            for method in ("split", "loo"):
                cov, fnr, worst, size = [], [], [], []
                for seed in range(repeats):
                    X_tr, X_te, Y_tr, Y_te = train_test_split(data.X, data.Y, test_size=0.3, random_state=seed)
                    scaler = FeatureScaler("minmax").fit(X_tr)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        sets = ConformalLabelSets(MLkNN(n_neighbors=10), alpha=alpha, guarantee=guarantee,
                                                  method=method, random_state=seed)
                        S = sets.fit(scaler.transform(X_tr), Y_tr).predict(scaler.transform(X_te)).astype(bool)
                    Y = Y_te.astype(bool)
                    cov.append(np.mean(np.all(S | ~Y, axis=1)))
                    fnr.append(np.mean((Y & ~S).sum(axis=1) / np.maximum(Y.sum(axis=1), 1)))
                    enough = Y.sum(axis=0) >= 20
                    worst.append(((Y & S).sum(axis=0)[enough] / Y.sum(axis=0)[enough]).min())
                    size.append(S.sum(axis=1).mean())
                rows.append([ds, guarantee, method, f"{np.mean(cov):.3f}", f"{np.mean(fnr):.3f}",
                             f"{np.mean(worst):.3f}", f"{np.mean(size):.2f}"])
                log(" ".join(rows[-1]))
    return markdown_table(["dataset", "guarantee", "method", "P(Y in set)", "mean FNR", "worst label coverage",
                           "mean set size"], rows)


if __name__ == "__main__":
    print(run(sys.argv[1:] or ("emotions", "yeast")))
