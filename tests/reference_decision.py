"""Slow, obviously-correct references for mlknn.decision: try every candidate threshold.

Each candidate threshold is applied and the measure computed by mlknn.metrics, one
candidate at a time, so the vectorised searches of mlknn.decision._search can be checked
against it.
"""

import numpy as np

from mlknn.metrics import example_f1, hamming_loss, macro_f1, micro_f1

MEASURES = {"f1": example_f1, "macro_f1": macro_f1, "micro_f1": micro_f1, "hamming_loss": hamming_loss}


def candidate_thresholds(values):
    """Below every value, between each pair of distinct values, above every value."""
    u = np.unique(values)
    return np.concatenate([[u[0] - 1.0], 0.5 * (u[:-1] + u[1:]), [u[-1] + 1.0]])


def best_label_values(P, Y, scoring):
    """Per label, the best value of that label's F1 (or error rate) over every threshold."""
    out = []
    for j in range(P.shape[1]):
        values = []
        for t in candidate_thresholds(P[:, j]):
            pred = (P[:, j] > t).astype(int)[:, None]
            if scoring == "hamming_loss":
                values.append(-hamming_loss(Y[:, j:j + 1], pred))
            else:
                values.append(macro_f1(Y[:, j:j + 1], pred))
        out.append(max(values))
    out = np.array(out)
    return -out if scoring == "hamming_loss" else out


def best_global_value(P, Y, scoring):
    measure = MEASURES[scoring]
    values = [measure(Y, (P > t).astype(int)) for t in candidate_thresholds(P.ravel())]
    return min(values) if scoring == "hamming_loss" else max(values)


def best_rank_value(P, Y, scoring):
    measure = MEASURES[scoring]
    n, q = P.shape
    values = []
    for r in range(q + 1):
        pred = np.zeros((n, q), dtype=int)
        for i in range(n):
            ranked = sorted(range(q), key=lambda j: (-P[i, j], j))
            pred[i, ranked[:r]] = 1
        values.append(measure(Y, pred))
    return min(values) if scoring == "hamming_loss" else max(values)
