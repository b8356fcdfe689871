"""Slow loop references for BML-kNN (Table 3) and NC (Table 2) of seed 002.

Nothing is vectorised on purpose. Distances are computed pair by pair; the k
nearest neighbours come from :func:`reference_impls.loop_knn` (ties by the lower
index). Readings (documented in ``mlknn.algorithms._bmlknn`` / docs/bmlknn.md):
the neighbourhood of a training instance excludes the instance itself only;
"within the radius" is ``d <= radius``; BML-kNN keeps one table of k + 1 counters
per label; NC's table has J + 1 counters, J the largest leave-one-out
neighbourhood size, and a test count above J gets the empty-bin likelihood.
"""

import math

import numpy as np
from reference_impls import loop_knn


def _dist(a, b):
    return math.sqrt(sum((float(u) - float(v)) ** 2 for u, v in zip(a, b)))


def _map_and_posterior(prior1, like1, like0):
    p1 = prior1 * like1
    p0 = (1.0 - prior1) * like0
    pred = 1 if p1 > p0 else 0
    post = p1 / (p1 + p0) if p1 + p0 > 0 else prior1
    return post, pred


def _tables(C, Y, n_bins, s):
    """Prior and likelihood tables from per-instance counts C[i][l] (Table 3 steps 1-16)."""
    m, q = Y.shape
    prior = [0.0] * q
    cond_true = np.zeros((n_bins, q))
    cond_false = np.zeros((n_bins, q))
    for l in range(q):
        n_pos = 0
        for i in range(m):
            n_pos += int(Y[i, l])
        prior[l] = (s + n_pos) / (2 * s + m)  # eqs (13)-(14)
        c = [0] * n_bins  # step 3
        c_bar = [0] * n_bins
        for i in range(m):  # steps 4-11
            if Y[i, l] == 1:
                c[C[i][l]] += 1
            else:
                c_bar[C[i][l]] += 1
        for j in range(n_bins):  # steps 12-15, eqs (17)-(18)
            d1 = s * n_bins + sum(c)
            d0 = s * n_bins + sum(c_bar)
            cond_true[j, l] = (s + c[j]) / d1 if d1 > 0 else 0.0
            cond_false[j, l] = (s + c_bar[j]) / d0 if d0 > 0 else 0.0
    return np.array(prior), cond_true, cond_false


def loop_bmlknn(X_train, Y, X_query, k, radius, s=1.0, neighbours=None):
    """BML-kNN as Table 3, with explicit loops.

    ``neighbours=(train_nbrs, query_nbrs)`` replaces the k nearest neighbours
    (e.g. by a hubness-reduced graph's); the radius is then checked against the
    Euclidean distance of each given neighbour, computed here pair by pair.

    Returns
    -------
    posterior : (n, q), prediction : (n, q) MAP with ties -> 0,
    prior : (q,), cond_true, cond_false : (k + 1, q)
    """
    m, q = Y.shape
    if neighbours is None:
        train_dist, train_nbrs = loop_knn(X_train, None, k, loo=True)
        query_dist, query_nbrs = loop_knn(X_train, X_query, k)
    else:
        train_nbrs, query_nbrs = (np.asarray(a)[:, :k] for a in neighbours)
        train_dist = [[_dist(X_train[i], X_train[a]) for a in train_nbrs[i]] for i in range(m)]
        query_dist = [[_dist(X_query[t], X_train[a]) for a in query_nbrs[t]] for t in range(len(query_nbrs))]

    def bounded_count(dist_row, nbr_row):  # eq (8): delta-kNNs with label l
        counts = [0] * q
        for l in range(q):
            for d, a in zip(dist_row, nbr_row):
                if d <= radius and Y[a, l] == 1:
                    counts[l] += 1
        return counts

    C = [bounded_count(train_dist[i], train_nbrs[i]) for i in range(m)]
    prior, cond_true, cond_false = _tables(C, Y, k + 1, s)
    n = query_nbrs.shape[0]
    posterior = np.zeros((n, q))
    prediction = np.zeros((n, q), dtype=int)
    for t in range(n):  # steps 17-20
        Ct = bounded_count(query_dist[t], query_nbrs[t])
        for l in range(q):
            posterior[t, l], prediction[t, l] = _map_and_posterior(
                prior[l], cond_true[Ct[l], l], cond_false[Ct[l], l]
            )
    return posterior, prediction, prior, cond_true, cond_false


def loop_nc(X_train, Y, X_query, radius, s=1.0):
    """NC as Table 2 (radius neighbourhoods, no quantity limit), with explicit loops.

    Returns
    -------
    posterior : (n, q), prediction : (n, q), prior : (q,),
    cond_true, cond_false : (J + 1, q), J : int, sizes : (m,) LOO neighbourhood sizes
    """
    X_train = np.asarray(X_train, dtype=np.float64)
    X_query = np.asarray(X_query, dtype=np.float64)
    m, q = Y.shape

    def radius_count(x, skip):
        size = 0
        counts = [0] * q
        for j in range(m):
            if j == skip:
                continue
            if _dist(x, X_train[j]) <= radius:
                size += 1
                for l in range(q):
                    counts[l] += int(Y[j, l])
        return size, counts

    sizes = []
    C = []
    for i in range(m):
        size, counts = radius_count(X_train[i], i)
        sizes.append(size)
        C.append(counts)
    J = max(sizes)
    prior, cond_true, cond_false = _tables(C, Y, J + 1, s)
    n = X_query.shape[0]
    posterior = np.zeros((n, q))
    prediction = np.zeros((n, q), dtype=int)
    for t in range(n):
        _, Ct = radius_count(X_query[t], -1)
        for l in range(q):
            if Ct[l] <= J:
                like1, like0 = cond_true[Ct[l], l], cond_false[Ct[l], l]
            else:  # a bin no training instance reached: c[j] = 0
                n_pos = sum(int(Y[i, l]) for i in range(m))
                d1 = s * (J + 1) + n_pos
                d0 = s * (J + 1) + (m - n_pos)
                like1 = s / d1 if d1 > 0 else 0.0
                like0 = s / d0 if d0 > 0 else 0.0
            posterior[t, l], prediction[t, l] = _map_and_posterior(prior[l], like1, like0)
    return posterior, prediction, prior, cond_true, cond_false, J, np.array(sizes)
