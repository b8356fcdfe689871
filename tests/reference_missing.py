"""Slow loop readings of the count-based estimators on an incomplete label matrix.

Nothing is vectorised: one instance, one label, one neighbour at a time. Y holds
NaN at its unknown entries. The reading (docs/incomplete_labels.md): a
neighbourhood's count of label l is taken over the neighbours whose label l is
observed and rescaled to the neighbourhood's size N, ``round(N * pos / obs)``
(round half to even, as numpy's rint); with no observed neighbour,
``round(N * f_l)``, f_l the observed frequency of l. Priors and the
per-instance tables use only the instances whose own label l is observed.
"""

import math

import numpy as np


def _known(y):
    return not math.isnan(y)


def observed_frequency(Y):
    n, q = Y.shape
    freq = []
    for l in range(q):
        pos = obs = 0
        for i in range(n):
            if _known(Y[i, l]):
                obs += 1
                pos += int(Y[i, l])
        freq.append(pos / obs if obs else 0.0)
    return freq


def observed_count(Y, nbrs, l, freq, weights=None, rounded=True):
    """One neighbourhood's count of label l, over its observed neighbours, rescaled to its size."""
    size = len(nbrs)
    pos = unk = 0.0 if weights is not None else 0
    total_w = 0.0
    for j, a in enumerate(nbrs):
        w = 1 if weights is None else weights[j]
        total_w += w
        if _known(Y[a, l]):
            pos += w * int(Y[a, l])
        else:
            unk += w
    if weights is not None:  # the weighted vote is scaled to k first, as BR-kNN does
        scale = size / total_w if total_w > 0 else 0.0
        pos, unk = pos * scale, unk * scale
    if unk == 0:
        return pos
    observed = size - unk
    value = (size * pos) / observed if observed > 0 else size * freq[l]
    return round(value) if rounded else value


def loop_mlknn_missing(train_nbrs, Y, query_nbrs, k, s=1.0, n_bins=None):
    """ML-kNN (seed 004) learning from the observed entries only.

    ``train_nbrs`` / ``query_nbrs``: one neighbour list per instance, its first
    k used (shorter lists, e.g. BML-kNN's neighbours within the radius, are
    neighbourhoods of their own size; the tables keep k + 1 bins, or ``n_bins``:
    NC's neighbourhoods hold every point within the radius, pass k = n).

    Returns
    -------
    posterior : (m, q), prior : (q,), train_counts : (n, q), query_counts : (m, q)
    """
    n, q = Y.shape
    freq = observed_frequency(Y)
    train_counts = np.zeros((n, q), dtype=int)
    for i in range(n):
        for l in range(q):
            train_counts[i, l] = observed_count(Y, train_nbrs[i][:k], l, freq)
    bins = k + 1 if n_bins is None else n_bins
    prior = np.zeros(q)
    like1 = np.zeros((bins, q))
    like0 = np.zeros((bins, q))
    for l in range(q):
        pos = obs = 0
        c1 = [0] * bins
        c0 = [0] * bins
        for i in range(n):
            if not _known(Y[i, l]):
                continue
            obs += 1
            if Y[i, l] == 1:
                pos += 1
                c1[train_counts[i, l]] += 1
            else:
                c0[train_counts[i, l]] += 1
        prior[l] = (s + pos) / (2 * s + obs)
        for j in range(bins):
            like1[j, l] = (s + c1[j]) / (s * bins + sum(c1))
            like0[j, l] = (s + c0[j]) / (s * bins + sum(c0))
    m = len(query_nbrs)
    posterior = np.zeros((m, q))
    query_counts = np.zeros((m, q), dtype=int)
    for t in range(m):
        for l in range(q):
            c = observed_count(Y, query_nbrs[t][:k], l, freq)
            query_counts[t, l] = c
            p1 = prior[l] * like1[c, l]
            p0 = (1 - prior[l]) * like0[c, l]
            posterior[t, l] = p1 / (p1 + p0) if p1 + p0 > 0 else prior[l]
    return posterior, prior, train_counts, query_counts


def loop_dmlknn_missing(train_nbrs, Y, query_nbrs, k, delta, s=1.0):
    """DML-kNN (Younes et al. 2011, Algorithm 1, paper reading) on the observed entries.

    u(q) and u'(q) count the instances whose label q is observed positive /
    negative, the prior is u / (u + u'), and steps 10-12 count a qualifying
    instance for label q only when its label q is observed. Counting vectors as
    :func:`observed_count`.
    """
    n, Q = Y.shape
    freq = observed_frequency(Y)

    def counting_vector(nbrs):
        return [observed_count(Y, nbrs[:k], q, freq) for q in range(Q)]

    u = [0] * Q
    u_prime = [0] * Q
    for q in range(Q):
        for i in range(n):
            if _known(Y[i, q]):
                if Y[i, q] == 1:
                    u[q] += 1
                else:
                    u_prime[q] += 1
    prior = [u[q] / (u[q] + u_prime[q]) if u[q] + u_prime[q] else 0.0 for q in range(Q)]
    train_vectors = [counting_vector(train_nbrs[i]) for i in range(n)]
    m = query_nbrs.shape[0]
    posterior = np.zeros((m, Q))
    for t in range(m):
        cx = counting_vector(query_nbrs[t])
        v = [0] * Q
        v_prime = [0] * Q
        for i in range(n):
            cxi = train_vectors[i]
            if all(cx[q] - delta <= cxi[q] <= cx[q] + delta for q in range(Q)):
                for q in range(Q):
                    if cxi[q] == cx[q] and _known(Y[i, q]):
                        if Y[i, q] == 1:
                            v[q] += 1
                        else:
                            v_prime[q] += 1
        for q in range(Q):
            d1, d0 = s * Q + u[q], s * Q + u_prime[q]
            like1 = (s + v[q]) / d1 if d1 > 0 else 0.0
            like0 = (s + v_prime[q]) / d0 if d0 > 0 else 0.0
            p1, p0 = prior[q] * like1, (1.0 - prior[q]) * like0
            posterior[t, q] = p1 / (p1 + p0) if p1 + p0 > 0 else prior[q]
    return posterior


def loop_brknn_missing(Y, query_nbrs, k, weights=None):
    """BR-kNN's confidence ``(count + 1/n) / (k + q/n)`` with the observed-label count (unrounded when weighted)."""
    n, q = Y.shape
    freq = observed_frequency(Y)
    m = query_nbrs.shape[0]
    conf = np.zeros((m, q))
    for t in range(m):
        for l in range(q):
            w = None if weights is None else weights[t]
            c = observed_count(Y, query_nbrs[t][:k], l, freq, weights=w, rounded=weights is None)
            conf[t, l] = (c + 1.0 / n) / (k + q / n)
    return conf
