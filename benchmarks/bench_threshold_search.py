"""The per-label and global threshold searches against a loop that scores every candidate.

On MLHiKNN's out-of-sample posteriors of yeast's training part (1,500 x 14, continuous
posteriors, so about 1,500 candidate thresholds per label), times
``mlknn.decision._search.per_label_thresholds`` and ``global_threshold`` (micro-F1) against
the obvious loop: every midpoint between distinct posteriors tried, scored by scikit-learn's
``f1_score``. To stay within a couple of minutes the per-label loop runs on the first
``loop_labels`` labels and is scaled to all 14, and the global loop scores one candidate in
k (about 400) and is scaled to all of them. Minimum over interleaved repeats (the machine is
shared); the per-label search must find the loop's best values.

Usage::

    python benchmarks/bench_threshold_search.py
"""

import time
import warnings

import numpy as np
from _common import log


def _loop_per_label(P, Y, labels):
    from sklearn.metrics import f1_score

    best = []
    for j in range(labels):
        u = np.unique(P[:, j])
        cands = np.concatenate([[u[0] - 1], 0.5 * (u[:-1] + u[1:]), [u[-1] + 1]])
        best.append(max(f1_score(Y[:, j], P[:, j] > t, zero_division=1.0) for t in cands))
    return np.array(best)


def _loop_global(P, Y):
    from sklearn.metrics import f1_score

    u = np.unique(P)
    cands = np.concatenate([[u[0] - 1], 0.5 * (u[:-1] + u[1:]), [u[-1] + 1]])
    return max(f1_score(Y.ravel(), P.ravel() > t, zero_division=1.0) for t in cands[:: max(1, len(cands) // 400)])


def run(repeats=3, loop_labels=2):
    from mlknn import MLHiKNN
    from mlknn.datasets import load
    from mlknn.decision._search import global_threshold, per_label_thresholds
    from mlknn.model_selection import loo_predict_proba
    from mlknn.preprocessing import FeatureScaler

    train = load("yeast", split="train")
    X = FeatureScaler("minmax").fit_transform(train.X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        P = loo_predict_proba(MLHiKNN(n_neighbors=10), X, train.Y, random_state=0)
    Y = train.Y
    times = {"per-label search": [], "per-label loop": [], "global search": [], "global loop (1 in k)": []}
    for _ in range(repeats):
        for name, fn in (("per-label search", lambda: per_label_thresholds(P, Y, "f1")[1]),
                         ("per-label loop", lambda: _loop_per_label(P, Y, loop_labels)),
                         ("global search", lambda: global_threshold(P, Y, "micro_f1")[1]),
                         ("global loop (1 in k)", lambda: _loop_global(P, Y))):
            start = time.perf_counter()
            value = fn()
            times[name].append(time.perf_counter() - start)
            if name == "per-label search":
                fast = value
            if name == "per-label loop":
                assert np.allclose(fast[:loop_labels], value, atol=1e-12)
    n_global = len(np.unique(P)) + 1
    step = max(1, n_global // 400)
    scale = {"per-label loop": P.shape[1] / loop_labels, "global loop (1 in k)": step}
    for name, ts in times.items():
        log(f"{name}: {min(ts) * 1000:.1f} ms" + (f", scaled to every candidate {min(ts) * scale[name]:.1f} s"
                                                  if name in scale else ""))
    log(f"candidates: {n_global} global (the loop tries 1 in {step}), per label "
        f"{np.mean([len(np.unique(P[:, j])) + 1 for j in range(P.shape[1])]):.0f}")
    return {k: min(v) for k, v in times.items()}


if __name__ == "__main__":
    run()
