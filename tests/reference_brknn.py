"""Slow loop readings of BR-kNN, BR-kNN-a and BR-kNN-b as MULAN implements them.

Nothing is vectorised: one query, one label, one neighbour at a time, following
``mulan.classifier.lazy.BRkNN`` (getConfidences, labelsFromConfidences2/3). The
comparisons with 0.5 and the rounding of the label-set size are done in exact
rational arithmetic (``fractions.Fraction``), so the oracle has no rounding of
its own; the returned confidences are the float formula.
"""

import math
from fractions import Fraction

import numpy as np


def loop_brknn(Y, query_nbrs, k, variant="none"):
    """BR-kNN of one query set.

    Parameters
    ----------
    Y : (n, q) 0/1 training labels.
    query_nbrs : (m, >= k) neighbour indices of the queries (first k used).
    k : int
    variant : {"none", "a", "b"}

    Returns
    -------
    confidences : (m, q) float, (count + 1/n) / (k + q/n)
    prediction : (m, q) int
    sizes : (m,) int, the label-set size s of BR-kNN-b (computed for every variant)
    """
    n, q = Y.shape
    m = query_nbrs.shape[0]
    confidences = np.zeros((m, q))
    prediction = np.zeros((m, q), dtype=int)
    sizes = np.zeros(m, dtype=int)
    for t in range(m):
        counts = [0] * q
        neighbour_labels = 0  # MULAN's neighborLabels: labels summed over the neighbours
        for col in range(k):
            a = query_nbrs[t, col]
            for label in range(q):
                if Y[a, label] == 1:
                    counts[label] += 1
                    neighbour_labels += 1
        exact = []
        for label in range(q):
            confidences[t, label] = (counts[label] + 1.0 / n) / (k + q / n)
            exact.append((Fraction(counts[label]) + Fraction(1, n)) / (Fraction(k) + Fraction(q, n)))
        # avgPredictedLabels = Math.round(neighborLabels / total), total = k + q/n;
        # Math.round(x) = floor(x + 1/2). At least 1 (MULAN fails on 0).
        s = math.floor(Fraction(neighbour_labels) / (Fraction(k) + Fraction(q, n)) + Fraction(1, 2))
        s = max(s, 1)
        sizes[t] = s
        if variant in ("none", "a"):
            any_assigned = False
            for label in range(q):
                if exact[label] >= Fraction(1, 2):
                    prediction[t, label] = 1
                    any_assigned = True
            if variant == "a" and not any_assigned:
                best = 0
                for label in range(1, q):
                    if exact[label] > exact[best]:  # strict: the lowest index keeps a tie
                        best = label
                prediction[t, best] = 1
        elif variant == "b":
            ranking = sorted(range(q), key=lambda label: (-exact[label], label))
            for label in ranking[:s]:
                prediction[t, label] = 1
        else:
            raise ValueError(f"variant must be 'none', 'a' or 'b'; got {variant!r}")
    return confidences, prediction, sizes
