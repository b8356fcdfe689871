"""Slow loop readings of MLHiKNN (seed 001, Algorithms 1-3) and of the hubness
reductions and measures (eqs 1-4, 26, 27; Algorithms 4-5).

Nothing here is vectorised on purpose: every function follows the paper's
pseudo-code and equations line by line, with Python loops and the ``math``
module, so that the array code in ``src/mlknn`` can be checked against it.
"""

import math

import numpy as np
from sklearn.linear_model import LogisticRegression

#: The reference fit: scikit-learn's exact Newton solver on mlknn's model (C = 1,
#: the default of seed 001), label by label, to tol 1e-12 (mlknn solves all labels
#: together by Newton-CG to its stated tolerance).
EXACT_LOGISTIC = {"C": 1.0, "solver": "newton-cholesky", "max_iter": 1000, "tol": 1e-12}


# ------------------------------------------------------------------ MLHiKNN
def loop_occurrences(train_nbrs, Y):
    """Algorithm 1, each instance appended to its own k-neighbourhood."""
    n, q = len(train_nbrs), len(Y[0])
    O = [0] * n
    OL = [[0] * q for _ in range(n)]
    for x in range(n):
        for xp in range(n):
            neighbourhood = [int(a) for a in train_nbrs[xp]] + [xp]  # k + 1 points
            if x in neighbourhood:
                O[x] += 1
                for l in range(q):
                    if Y[xp][l] == 1:
                        OL[x][l] += 1
    return O, OL


def loop_g(O_x, lam, k):
    """Eq 19; eq 28 (lambda k <= 1 -> 0) and eq 29 (lambda = inf -> 1)."""
    t = lam * k
    if math.isinf(t):
        return 1.0
    if t <= 1:
        return 0.0
    return 1.0 - math.log(min(O_x, t)) / math.log(t)


def loop_w_d(dists, beta):
    """Eq 20; neighbours at distance 0 share the weight (the documented rule)."""
    zeros = [d == 0 for d in dists]
    if any(zeros):
        return [1.0 / sum(zeros) if z else 0.0 for z in zeros]
    if math.isinf(beta):
        return [1.0 / len(dists)] * len(dists)
    expo = -2.0 / (beta - 1.0)
    powers = [d**expo for d in dists]
    total = sum(powers)
    return [p / total for p in powers]


def loop_w_h(O_nbrs, n):
    """Eq 25 (any log base); all-zero denominator -> uniform 1/k."""
    terms = [math.log(n) - math.log(o) for o in O_nbrs]
    total = sum(terms)
    if total == 0:
        return [1.0 / len(O_nbrs)] * len(O_nbrs)
    return [t / total for t in terms]


def loop_relevance(nbrs, dists, O, u1, u0, n, beta, variant):
    """Eqs 5-6 for one point with neighbours ``nbrs`` at distances ``dists``."""
    q = len(u1[0])
    w_d = [1.0] * len(nbrs) if variant == "d1" else loop_w_d(list(dists), beta)
    w_h = [1.0] * len(nbrs) if variant == "h1" else loop_w_h([O[x] for x in nbrs], n)
    w = [a * b for a, b in zip(w_d, w_h)]
    if sum(w) == 0:
        w = [1.0 / len(nbrs)] * len(nbrs)
    r = []
    for l in range(q):
        v1 = sum(w[j] * u1[x][l] for j, x in enumerate(nbrs))
        v0 = sum(w[j] * u0[x][l] for j, x in enumerate(nbrs))
        r.append(v1 / (v0 + v1))
    return r


def loop_mlhiknn(train_nbrs, train_dist, Y, query_nbrs, query_dist, k, lam=3.0, beta=2.0, s=1.0, variant=None):
    """MLHiKNN by Algorithms 2 (training) and 3 (prediction), with loops.

    Parameters
    ----------
    train_nbrs, train_dist : (n, k) leave-one-out neighbours of the training set.
    Y : (n, q) 0/1 labels.
    query_nbrs, query_dist : (m, k) neighbours of the queries.

    Returns
    -------
    dict with O, OL, g, u1, u0, r_train, r_query, proba, pred
    """
    Y = [[int(v) for v in row] for row in np.asarray(Y)]
    n, q = len(Y), len(Y[0])
    O, OL = loop_occurrences(train_nbrs, Y)
    g, u1, u0 = [], [], []
    for x in range(n):  # Algorithm 2 lines 4-10
        if variant == "g1":
            gx = 1.0
        elif variant == "g0":
            gx = 0.0
        else:
            gx = loop_g(O[x], lam, k)
        g.append(gx)
        row1, row0 = [], []
        for l in range(q):
            p1 = (OL[x][l] + s) / (O[x] + s * 2)  # eq 7
            p0 = 1 - p1  # eq 8
            row1.append(gx * Y[x][l] + (1 - gx) * p1)  # eq 9
            row0.append(gx * (1 - Y[x][l]) + (1 - gx) * p0)  # eq 10
        u1.append(row1)
        u0.append(row0)
    r_train = [  # Algorithm 2 lines 11-20
        loop_relevance([int(a) for a in train_nbrs[x]], train_dist[x], O, u1, u0, n, beta, variant) for x in range(n)
    ]
    r_query = [  # Algorithm 3 lines 2-10
        loop_relevance([int(a) for a in query_nbrs[t]], query_dist[t], O, u1, u0, n, beta, variant)
        for t in range(len(query_nbrs))
    ]
    m = len(r_query)
    proba = [[0.0] * q for _ in range(m)]
    pred = [[0] * q for _ in range(m)]
    for l in range(q):  # Algorithm 2 lines 21-23, Algorithm 3 lines 11-13
        target = [Y[x][l] for x in range(n)]
        if variant == "fo":
            for t in range(m):
                proba[t][l] = r_query[t][l]
                pred[t][l] = 1 if r_query[t][l] >= 0.5 else 0
            continue
        if len(set(target)) == 1:
            for t in range(m):
                proba[t][l] = float(target[0])
                pred[t][l] = target[0]
            continue
        model = LogisticRegression(**EXACT_LOGISTIC).fit(np.array(r_train), np.array(target))
        p = model.predict_proba(np.array(r_query))[:, 1]
        for t in range(m):
            proba[t][l] = float(p[t])
            pred[t][l] = 1 if p[t] > 0.5 else 0
    return {
        "O": np.array(O),
        "OL": np.array(OL),
        "g": np.array(g),
        "u1": np.array(u1),
        "u0": np.array(u0),
        "r_train": np.array(r_train),
        "r_query": np.array(r_query),
        "proba": np.array(proba),
        "pred": np.array(pred),
    }


# ------------------------------------------------------------------ hubness
def loop_k_occurrence(nbrs, n_train):
    """O_k(x): how many rows list x."""
    occ = [0] * n_train
    for row in nbrs:
        for x in row:
            occ[int(x)] += 1
    return occ


def loop_hubness_measures(occ, k):
    """S_k (eq 1), H_occ (eq 26, hub: O_k > 2k), A_occ (eq 27)."""
    n = len(occ)
    mu = sum(occ) / n
    var = sum((o - mu) ** 2 for o in occ) / n
    third = sum((o - mu) ** 3 for o in occ) / n
    s_k = third / var**1.5
    h_occ = sum(o for o in occ if o > 2 * k) / (n * k)
    a_occ = sum(1 for o in occ if o == 0) / n
    return s_k, h_occ, a_occ


def _dist(a, b):
    return math.sqrt(sum((float(u) - float(v)) ** 2 for u, v in zip(a, b)))


def _kth(dists_sorted, k):
    return dists_sorted[k - 1]


def loop_secondary(method, X_train, X_query, k):
    """Secondary dissimilarities of every (point, training point) pair, exactly.

    ``X_query=None``: training pairs in D (Algorithm 5 line 3), the pair's own
    point excluded. Otherwise each query joins the set, D u {t} (Algorithm 4
    line 2), on its own. Returns a list of dicts {training index: value}.
    """
    D = [list(map(float, x)) for x in np.asarray(X_train)]
    n = len(D)
    out = []
    rows = range(n) if X_query is None else range(len(X_query))
    for i in rows:
        if X_query is None:
            S = {j: D[j] for j in range(n)}  # the set
            a_key = i
        else:
            S = {j: D[j] for j in range(n)}
            S["t"] = list(map(float, np.asarray(X_query)[i]))
            a_key = "t"
        keys = list(S)

        def dists_from(key):
            return {j: _dist(S[key], S[j]) for j in keys if j != key}

        da = dists_from(a_key)
        row = {}
        for x in range(n):
            if x == a_key:
                continue
            dx = dists_from(x)
            d12 = da[x]
            if method == "ls":
                sa = sorted(da.values())[k - 1]
                sx = sorted(dx.values())[k - 1]
                if sa * sx == 0:
                    val = 0.0 if d12 == 0 else 1.0
                else:
                    val = 1 - math.exp(-(d12**2) / (sa * sx))
            elif method == "mp":
                others = [j for j in keys if j not in (a_key, x)]
                cnt = sum(1 for j in others if da[j] > d12 and dx[j] > d12)
                val = 1 - cnt / (len(keys) - 2)
            elif method == "mp-gauss":
                def sf(d, values):
                    mu = sum(values) / len(values)
                    sd = math.sqrt(sum((v - mu) ** 2 for v in values) / len(values))
                    if sd == 0:
                        return 1.0 if d < mu else (0.0 if d > mu else 0.5)
                    return 0.5 * math.erfc((d - mu) / (sd * math.sqrt(2)))

                val = 1 - sf(d12, list(da.values())) * sf(d12, list(dx.values()))
            elif method == "dsl":
                def centroid_sq(key, dd):
                    # ties: a training point before the query (t enters only when strictly closer)
                    near = sorted(dd, key=lambda j: (dd[j], 1, 0) if j == "t" else (dd[j], 0, j))[:k]
                    c = [sum(S[j][f] for j in near) / k for f in range(len(S[key]))]
                    return sum((u - v) ** 2 for u, v in zip(S[key], c))

                val = d12**2 - centroid_sq(a_key, da) - centroid_sq(x, dx)
            else:
                raise ValueError(method)
            row[x] = (val, d12)
        out.append(row)
    return out


def loop_rerank(secondary_rows, k):
    """k smallest secondary values per row; ties by primary distance, then index."""
    ind, sec = [], []
    for row in secondary_rows:
        order = sorted(row, key=lambda x: (row[x][0], row[x][1], x))[:k]
        ind.append(order)
        sec.append([row[x][0] for x in order])
    return np.array(ind), np.array(sec)
