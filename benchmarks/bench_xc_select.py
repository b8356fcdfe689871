"""BR-kNN's weighted vote on bibtex / delicious: the configuration chosen without the test set.

bench_xc.py's "best configuration" is the best on the test set, an optimistic
number. This script chooses features (raw binary or TF-IDF, both with cosine
distance), k and the vote weights on the training rows alone (a seeded 80 / 20
split of the fixed MULAN training set: fit on 80 %, score P@1/3/5 on 20 %),
then refits the chosen configuration on the whole training set and scores the
test set once. Weights: ``uniform``, ``distance`` (1/d) and ``(1 - d)^p``
(cosine similarity to the p-th power) for p = 1..6. The choice maximises the
mean of P@1, P@3 and P@5 on the validation rows.

    python benchmarks/bench_xc_select.py [--datasets bibtex,delicious] [--seed 0]

Prints every validation cell and the chosen one with its test scores, and
writes them to ``benchmarks/xc_select.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import load_average, machine_info  # noqa: E402
from bench_xc import PUBLISHED, _cosine_power  # noqa: E402

KS = (10, 20, 30, 40, 50, 70, 100)
POWERS = (1, 2, 3, 4, 5, 6)


def _weights(name):
    if name in ("uniform", "distance"):
        return name
    return partial(_cosine_power, p=int(name.split("^")[1]))


def _features(name, A, B):
    import scipy.sparse as sp
    from sklearn.feature_extraction.text import TfidfTransformer

    if name == "raw":
        return A, B
    t = TfidfTransformer().fit(A)
    return sp.csr_array(t.transform(A)), sp.csr_array(t.transform(B))


def _cells(Xa, Ya, Xb, Yb, features):
    """P@1/3/5 of every (k, weights) of BR-kNN fitted on (Xa, Ya), scored on (Xb, Yb)."""
    from mlknn import BRkNN
    from mlknn.metrics import precision_at_k
    from mlknn.neighbors import build_graph, get_backend

    A, B = _features(features, Xa, Xb)
    index = get_backend("brute", metric="cosine").fit(A)
    G_fit, G_query = build_graph(index, None, max(KS)), build_graph(index, B, max(KS))
    out = {}
    for k in KS:
        for wname in ("uniform", "distance", *(f"cos^{p}" for p in POWERS)):
            est = BRkNN(k, metric="cosine", weights=_weights(wname)).fit_from_graph(G_fit, Ya, index=index)
            pair = est.predict_topk_from_graph(G_query, k=5)
            out[(features, k, wname)] = [100 * precision_at_k(Yb, pair, k=j) for j in (1, 3, 5)]
    return out


def select(ds, seed):
    import scipy.sparse as sp

    from mlknn.datasets import load

    tr, te = load(ds, split="train"), load(ds, split="test")
    X, Y = sp.csr_array(tr.X, dtype=np.float64), sp.csr_array(tr.Y)
    Xte, Yte = sp.csr_array(te.X, dtype=np.float64), sp.csr_array(te.Y)
    perm = np.random.default_rng(seed).permutation(X.shape[0])
    cut = int(0.8 * X.shape[0])
    fit_rows, val_rows = np.sort(perm[:cut]), np.sort(perm[cut:])
    val, test = {}, {}
    for features in ("raw", "tfidf"):
        val.update(_cells(X[fit_rows], Y[fit_rows], X[val_rows], Y[val_rows], features))
        test.update(_cells(X, Y, Xte, Yte, features))
    chosen = max(val, key=lambda c: (np.mean(val[c]), -c[1]))
    return {
        "dataset": ds,
        "seed": seed,
        "n_fit": int(cut),
        "n_val": int(X.shape[0] - cut),
        "chosen": list(chosen),
        "chosen_val": val[chosen],
        "chosen_test": test[chosen],
        "best_on_test": list(max(test, key=lambda c: (np.mean(test[c]), -c[1]))),
        "cells": [{"config": list(c), "val": val[c], "test": test[c]} for c in val],
    }


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--datasets", default="bibtex,delicious")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if not os.environ.get("MLKNN_DATA"):
        default = HERE.parent.parent / "shared" / "datasets"
        if (default / "MANIFEST.tsv").exists():
            os.environ["MLKNN_DATA"] = str(default)
    info = machine_info()
    results = []
    for ds in args.datasets.split(","):
        t = time.perf_counter()
        r = select(ds, args.seed)
        r["seconds"] = time.perf_counter() - t
        knn = PUBLISHED[ds]["kNN"]
        fmt = " / ".join
        for c in sorted(r["cells"], key=lambda c: -np.mean(c["val"]))[:10]:
            print(f"{ds} {c['config']}: val {fmt(f'{v:.2f}' for v in c['val'])}, test {fmt(f'{v:.2f}' for v in c['test'])}")
        print(
            f"{ds}: chosen on the validation rows {r['chosen']}: test "
            f"{fmt(f'{v:.2f}' for v in r['chosen_test'])} against the kNN column "
            f"{knn['P@1']} / {knn['P@3']} / {knn['P@5']} ({r['seconds']:.0f} s)",
            flush=True,
        )
        results.append(r)
    info["loadavg_end"] = load_average()
    (HERE / "xc_select.json").write_text(json.dumps({"machine": info, "results": results}, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
