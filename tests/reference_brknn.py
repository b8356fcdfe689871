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


# --------------------------------------------------------------- MULAN reading
def loop_neighbours_with_ties(X_train, x, k):
    """Weka's linear search: the k nearest training points and every one tied with the k-th.

    Plain float64 Euclidean distances, one training point at a time.
    """
    dist = [math.sqrt(sum((float(a) - float(b)) ** 2 for a, b in zip(row, x))) for row in X_train]
    kth = sorted(dist)[k - 1]
    return [i for i, d in enumerate(dist) if d <= kth]


def loop_brknn_mulan(X_train, Y, X_query, k, variant="none", rng=None):
    """MULAN's BRkNN.makePredictionInternal, query by query, in Weka's float arithmetic.

    Parameters
    ----------
    X_train, Y, X_query : training features, (n, q) 0/1 labels, query features.
    k : int
    variant : {"none", "a", "b"} (MULAN's NONE, EXTA, EXTB)
    rng : JavaRandom, optional
        The classifier's stream (a fresh ``JavaRandom(1)`` by default); advanced.

    Returns
    -------
    confidences : (m, q) float
    prediction : (m, q) int
    k_prime : (m,) int, the number of neighbours that voted
    """
    from mlknn.algorithms._java_random import JavaRandom

    rng = JavaRandom(1) if rng is None else rng
    n, q = Y.shape
    m = len(X_query)
    confidences = np.zeros((m, q))
    prediction = np.zeros((m, q), dtype=int)
    k_prime = np.zeros(m, dtype=int)
    for t in range(m):
        nbrs = loop_neighbours_with_ties(X_train, X_query[t], k)
        k_prime[t] = len(nbrs)
        conf = [1.0 / max(1, n)] * q  # getConfidences: the estimator correction
        total = q / max(1, n)
        neighbour_labels = 0.0
        for a in nbrs:
            for label in range(q):
                if Y[a, label] == 1:
                    conf[label] += 1.0
                    neighbour_labels += 1.0
            total += 1.0
        conf = [c / total for c in conf]  # Utils.normalize(confidences, total)
        confidences[t] = conf
        if variant == "none":
            prediction[t] = [1 if c >= 0.5 else 0 for c in conf]
        elif variant == "a":
            prediction[t] = _loop_exta(conf, rng)
        elif variant == "b":
            x = neighbour_labels / total
            s = math.floor(x) + (1 if x - math.floor(x) >= 0.5 else 0)  # Math.round
            prediction[t] = _loop_extb(conf, s, rng)
        else:
            raise ValueError(f"variant must be 'none', 'a' or 'b'; got {variant!r}")
    return confidences, prediction, k_prime


def _loop_exta(conf, rng):
    """labelsFromConfidences2 with Util.RandomIndexOfMax."""
    q = len(conf)
    out = [1 if c >= 0.5 else 0 for c in conf]
    if any(out):
        return out
    max_indexes = [0]
    best = conf[0]
    for i in range(1, q):
        if conf[i] == best:
            max_indexes.append(i)
        elif conf[i] > best:
            best = conf[i]
            max_indexes = [i]
    pick = max_indexes[0] if len(max_indexes) == 1 else max_indexes[rng.next_int(len(max_indexes))]
    out[pick] = 1
    return out


def _loop_extb(conf, s, rng):
    """labelsFromConfidences3 with Weka's stableSort (ascending, ties by ascending index).

    mlknn's choices where MULAN fails: s = 0 is raised to 1; s = q selects everything.
    """
    q = len(conf)
    s = max(s, 1)
    if s >= q:
        return [1] * q
    indices = sorted(range(q), key=lambda label: (conf[label], label))
    pivot = conf[indices[q - s]]
    out = [0] * q
    last = []
    counter = 0
    i = q - 1
    while i > 0:  # MULAN never visits sorted position 0
        c = conf[indices[i]]
        if c > pivot:
            out[indices[i]] = 1
            counter += 1
        elif c == pivot:
            last.append(indices[i])
        else:
            break
        i -= 1
    j = s - counter
    while j > 0:
        nxt = rng.next_int(len(last))
        if out[last[nxt]] != 1:
            out[last[nxt]] = 1
            j -= 1
    return out


# ------------------------------------------------------------ weighted vote
def loop_brknn_weighted(Y, query_nbrs, query_dists, k, weight_of, variant="none"):
    """BR-kNN with a weighted vote, one query, label and neighbour at a time.

    The vote share of label l is ``v_l = sum_j w_j y_jl / sum_j w_j`` (0 when every
    weight is 0), the weighted count ``c_l = k v_l`` replaces ``count_l`` in
    ``conf_l = (c_l + 1/n) / (k + q/n)``; the 0.5 rule, BR-kNN-a's fallback and
    BR-kNN-b's ``s = max(1, floor(sum_l c_l / (k + q/n) + 1/2))`` are evaluated in
    exact rational arithmetic from the float weights.

    Parameters
    ----------
    Y : (n, q) 0/1 training labels.
    query_nbrs, query_dists : (m, >= k) neighbour indices and distances (first k used).
    k : int
    weight_of : callable, the weight of one neighbour from its distance (a float).
    variant : {"none", "a", "b"}

    Returns
    -------
    confidences : (m, q) float
    prediction : (m, q) int
    """
    n, q = Y.shape
    m = query_nbrs.shape[0]
    confidences = np.zeros((m, q))
    prediction = np.zeros((m, q), dtype=int)
    for t in range(m):
        w = [Fraction(float(weight_of(float(query_dists[t, col])))) for col in range(k)]
        total = sum(w, Fraction(0))
        c = []
        for label in range(q):
            share = Fraction(0)
            for col in range(k):
                if Y[query_nbrs[t, col], label] == 1:
                    share += w[col]
            c.append(Fraction(k) * share / total if total > 0 else Fraction(0))
        exact = [(c[label] + Fraction(1, n)) / (Fraction(k) + Fraction(q, n)) for label in range(q)]
        for label in range(q):
            confidences[t, label] = float(exact[label])
        if variant in ("none", "a"):
            for label in range(q):
                if exact[label] >= Fraction(1, 2):
                    prediction[t, label] = 1
            if variant == "a" and not prediction[t].any():
                best = 0
                for label in range(1, q):
                    if exact[label] > exact[best]:
                        best = label
                prediction[t, best] = 1
        elif variant == "b":
            s = max(1, math.floor(sum(c, Fraction(0)) / (Fraction(k) + Fraction(q, n)) + Fraction(1, 2)))
            for label in sorted(range(q), key=lambda label: (-exact[label], label))[:s]:
                prediction[t, label] = 1
        else:
            raise ValueError(f"variant must be 'none', 'a' or 'b'; got {variant!r}")
    return confidences, prediction
