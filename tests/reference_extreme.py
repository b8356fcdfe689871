"""Slow, obviously-correct loop references for the extreme-classification measures.

Written straight from the definitions in :mod:`mlknn.metrics._extreme`
(Extreme Classification Repository; Jain, Prabhu and Varma, KDD 2016): one
Python loop per row, rankings by sorting (-score, label) tuples. Inputs are
lists of 0/1 rows and lists of score rows (None marks a label that is not
predicted, as an absent entry of a sparse score matrix).
"""

import math


def ranking(scores_row, k):
    """The first k labels by decreasing score, ties to the lower label; None is never ranked."""
    cands = [(-s, j) for j, s in enumerate(scores_row) if s is not None]
    return [j for _, j in sorted(cands)[:k]]


def _true(row):
    return {j for j, v in enumerate(row) if v}


def ref_precision(Y, S, k):
    total = 0.0
    for y, s in zip(Y, S):
        t = _true(y)
        total += sum(1 for j in ranking(s, k) if j in t) / k
    return total / len(Y)


def ref_recall(Y, S, k):
    total = 0.0
    for y, s in zip(Y, S):
        t = _true(y)
        if t:
            total += sum(1 for j in ranking(s, k) if j in t) / len(t)
    return total / len(Y)


def ref_ndcg(Y, S, k):
    total = 0.0
    for y, s in zip(Y, S):
        t = _true(y)
        if not t:
            continue
        dcg = sum(1 / math.log2(r + 2) for r, j in enumerate(ranking(s, k)) if j in t)
        ideal = sum(1 / math.log2(r + 2) for r in range(min(k, len(t))))
        total += dcg / ideal
    return total / len(Y)


def ref_psprecision(Y, S, w, k):
    got = best = 0.0
    for y, s in zip(Y, S):
        t = _true(y)
        got += sum(w[j] for j in ranking(s, k) if j in t) / k
        best += sum(sorted((w[j] for j in t), reverse=True)[:k]) / k
    return got / best if best else float("nan")


def ref_psndcg(Y, S, w, k):
    got = best = 0.0
    for y, s in zip(Y, S):
        t = _true(y)
        if not t:
            continue
        ideal = sum(1 / math.log2(r + 2) for r in range(min(k, len(t))))
        got += sum(w[j] / math.log2(r + 2) for r, j in enumerate(ranking(s, k)) if j in t) / ideal
        top = sorted((w[j] for j in t), reverse=True)[:k]
        best += sum(v / math.log2(r + 2) for r, v in enumerate(top)) / ideal
    return got / best if best else float("nan")


def ref_inverse_propensity(Y, A=0.55, B=1.5):
    n = len(Y)
    C = (math.log(n) - 1) * (B + 1) ** A
    out = []
    for j in range(len(Y[0])):
        n_j = sum(1 for y in Y if y[j])
        out.append(1 + C * (n_j + B) ** (-A))
    return out
