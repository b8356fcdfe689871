"""Slow, obviously-correct loop implementations used as oracles by the tests.

Nothing here is vectorised on purpose: each function is a line-by-line reading of
the paper it cites, so that the fast code in ``src/mlknn`` can be checked against it.
"""

import math

import numpy as np


def loop_knn(X_train, X_query, k, loo=False):
    """Exact kNN by a double loop; ties ordered by the lower training index."""
    X_train = np.asarray(X_train, dtype=np.float64)
    X_query = X_train if loo else np.asarray(X_query, dtype=np.float64)
    ind = np.empty((X_query.shape[0], k), dtype=np.intp)
    dist = np.empty((X_query.shape[0], k))
    for i in range(X_query.shape[0]):
        pairs = []
        for j in range(X_train.shape[0]):
            if loo and i == j:
                continue
            d = math.sqrt(sum((a - b) ** 2 for a, b in zip(X_query[i], X_train[j])))
            pairs.append((d, j))
        pairs.sort()
        for col in range(k):
            dist[i, col], ind[i, col] = pairs[col]
    return dist, ind


def loop_mlknn(train_nbrs, Y, query_nbrs, k, s=1.0):
    """ML-kNN exactly as seed 004's pseudo-code, with explicit loops.

    Parameters
    ----------
    train_nbrs : (m, k) leave-one-out neighbour indices of the training instances.
    Y : (m, q) 0/1 training labels.
    query_nbrs : (n, k) neighbour indices of the queries.

    Returns
    -------
    posterior : (n, q) P(H1 | E), prediction : (n, q) MAP with ties -> 0,
    prior : (q,), cond_true, cond_false : (k+1, q)
    """
    m, q = Y.shape
    prior = np.zeros(q)
    cond_true = np.zeros((k + 1, q))
    cond_false = np.zeros((k + 1, q))
    for l in range(q):
        prior[l] = (s + sum(Y[i, l] for i in range(m))) / (s * 2 + m)
        c = [0] * (k + 1)
        c_prime = [0] * (k + 1)
        for i in range(m):
            delta = sum(Y[a, l] for a in train_nbrs[i, :k])
            if Y[i, l] == 1:
                c[delta] += 1
            else:
                c_prime[delta] += 1
        for j in range(k + 1):
            cond_true[j, l] = (s + c[j]) / (s * (k + 1) + sum(c))
            cond_false[j, l] = (s + c_prime[j]) / (s * (k + 1) + sum(c_prime))
    n = query_nbrs.shape[0]
    posterior = np.zeros((n, q))
    prediction = np.zeros((n, q), dtype=int)
    for t in range(n):
        for l in range(q):
            C = sum(Y[a, l] for a in query_nbrs[t, :k])
            p1 = prior[l] * cond_true[C, l]
            p0 = (1 - prior[l]) * cond_false[C, l]
            prediction[t, l] = 1 if p1 > p0 else 0
            posterior[t, l] = p1 / (p1 + p0)
    return posterior, prediction, prior, cond_true, cond_false
