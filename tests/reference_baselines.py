"""Slow, obviously-correct loop implementations of the baselines, used as oracles.

Each function is a line-by-line reading of the pseudo-code or formula it cites
(seed 003, Zhang and Zhou's review, "Knowl n"), with explicit Python loops over
instances, labels, pairs and thresholds; nothing is vectorised on purpose.
"""

import math
from itertools import combinations

import numpy as np


# ----------------------------------------------------------------- Knowl 8: CC
def loop_classifier_chain(X_train, Y_train, X_test, order, make_learner):
    """ClassifierChains(D, B, tau, x) of Knowl 8, predictions for every query.

    ``make_learner()`` returns a fresh binary learner with fit / predict. Labels
    are 0/1 here (the review's +-1 with sign[] -> 1 for +1).
    """
    m, q = Y_train.shape
    models = []
    for j in range(q):
        rows = []
        for i in range(m):
            pre = [Y_train[i, order[r]] for r in range(j)]
            rows.append(list(X_train[i]) + pre)
        target = [Y_train[i, order[j]] for i in range(m)]
        models.append(make_learner().fit(np.array(rows, dtype=float), np.array(target)))
    out = np.zeros((len(X_test), q), dtype=int)
    for n, x in enumerate(X_test):
        lam = []
        for j in range(q):
            z = np.array([list(x) + lam], dtype=float)
            lam.append(int(models[j].predict(z)[0]))
        for j in range(q):
            out[n, order[j]] = lam[j]
    return out


# ---------------------------------------------------------------- Knowl 9: CLR
def loop_clr(X_train, Y_train, X_test, make_learner):
    """CalibratedLabelRanking(D, B, x) of Knowl 9 (hard votes), predictions and zeta.

    A pair (j, k) whose D_jk is empty splits its vote 1/2 - 1/2 (mlknn's rule); a
    D_jk or D_jV with one class predicts that class.
    """
    m, q = Y_train.shape

    def fit(X, y):
        if len(set(y.tolist())) == 1:
            return ("const", int(y[0]))
        return ("model", make_learner().fit(X, y))

    def out(model, x):
        if model is None:
            return 0.5
        kind, obj = model
        if kind == "const":
            return float(obj)
        return float(obj.predict(np.array([x]))[0])

    g = {}
    for j in range(q - 1):
        for k in range(j + 1, q):
            rows = [i for i in range(m) if Y_train[i, j] != Y_train[i, k]]
            if not rows:
                g[j, k] = None
                continue
            X = np.array([X_train[i] for i in rows])
            y = np.array([1 if Y_train[i, j] == 1 else 0 for i in rows])
            g[j, k] = fit(X, y)
    gV = [fit(X_train, Y_train[:, j].copy()) for j in range(q)]
    preds = np.zeros((len(X_test), q), dtype=int)
    zetas = np.zeros((len(X_test), q + 1))
    for n, x in enumerate(X_test):
        zeta = [0.0] * q
        for j in range(q):
            for k in range(j):
                zeta[j] += 1.0 - out(g[k, j], x)  # [g_kj(x) <= 0]
            for k in range(j + 1, q):
                zeta[j] += out(g[j, k], x)  # [g_jk(x) > 0]
            zeta[j] += out(gV[j], x)
        zeta_v = sum(1.0 - out(gV[j], x) for j in range(q))
        for j in range(q):
            preds[n, j] = 1 if zeta[j] > zeta_v else 0
        zetas[n, :q] = zeta
        zetas[n, q] = zeta_v
    return preds, zetas


# ------------------------------------------------------------- Knowl 10: RAkEL
def loop_rakel_vote(labelsets, predicted_sets, q, threshold=0.5):
    """mu / tau of Knowl 10 for one instance.

    ``labelsets``: list of label-index tuples; ``predicted_sets``: for each model,
    the set of labels (original indices) its LP classifier predicts.
    """
    ratio = [None] * q
    pred = [0] * q
    for j in range(q):
        tau = sum(1 for ls in labelsets if j in ls)
        mu = sum(1 for ps in predicted_sets if j in ps)
        if tau > 0:
            ratio[j] = mu / tau
            pred[j] = 1 if mu / tau > threshold else 0
    return ratio, pred


# ------------------------------------------------------------- Knowl 12: ML-DT
def loop_mlent(Y):
    """MLEnt(T) of Knowl 12 (bits)."""
    n, q = len(Y), len(Y[0])
    total = 0.0
    for j in range(q):
        p = sum(Y[i][j] for i in range(n)) / n
        for v in (p, 1 - p):
            if v > 0:
                total -= v * math.log2(v)
    return total


def loop_best_split(X, Y):
    """(feature, threshold, IG) maximising IG(T, l, theta) over midpoints (Knowl 12)."""
    n, d = len(X), len(X[0])
    base = loop_mlent(Y)
    best = (None, None, -1.0)
    for f in range(d):
        values = sorted(set(X[i][f] for i in range(n)))
        for a, b in zip(values[:-1], values[1:]):
            thr = (a + b) / 2
            left = [Y[i] for i in range(n) if X[i][f] <= thr]
            right = [Y[i] for i in range(n) if X[i][f] > thr]
            ig = base - len(left) / n * loop_mlent(left) - len(right) / n * loop_mlent(right)
            if ig > best[2] + 1e-12:
                best = (f, thr, ig)
    return best


# ----------------------------------------------------------- Knowl 6: threshold
def loop_threshold_errors(f, y, a):
    """|{relevant with f <= a}| + |{irrelevant with f >= a}| (Knowl 6)."""
    return sum(1 for fj, yj in zip(f, y) if yj == 1 and fj <= a) + sum(
        1 for fj, yj in zip(f, y) if yj == 0 and fj >= a
    )


def loop_min_threshold_errors(f, y):
    """The minimum over a of the Knowl 6 error count, by trying every distinct
    score, every midpoint and one point beyond each end."""
    vals = sorted(set(f))
    cands = [vals[0] - 1.0, vals[-1] + 1.0] + list(vals)
    cands += [(a + b) / 2 for a, b in zip(vals[:-1], vals[1:])]
    return min(loop_threshold_errors(f, y, a) for a in cands)


# ------------------------------------------------------- Knowl 7: AdaBoost.MH
def loop_adaboost_mh(X, Y, T, eps=None):
    """Real AdaBoost.MH with stumps, by brute force over features and thresholds.

    Returns (features, thresholds, confidences (T, 2, q), normalisers).
    Ties keep the first candidate in the order (no split), then feature, then
    threshold; candidates must beat the incumbent by more than 1e-12.
    """
    m, d = len(X), len(X[0])
    q = len(Y[0])
    eps = 1.0 / (m * q) if eps is None else eps
    D = [[1.0 / (m * q)] * q for _ in range(m)]
    feats, thrs, confs, norms = [], [], [], []
    for _ in range(T):
        def z_of(block):
            z = 0.0
            for b in (0, 1):
                for j in range(q):
                    wp = sum(D[i][j] for i in range(m) if block[i] == b and Y[i][j] == 1)
                    wn = sum(D[i][j] for i in range(m) if block[i] == b and Y[i][j] == 0)
                    z += 2 * math.sqrt(wp * wn)
            return z

        best_block = [1] * m
        best = (0, -math.inf, z_of(best_block))
        for f in range(d):
            values = sorted(set(X[i][f] for i in range(m)))
            for a, b in zip(values[:-1], values[1:]):
                thr = (a + b) / 2
                block = [1 if X[i][f] > thr else 0 for i in range(m)]
                z = z_of(block)
                if z < best[2] - 1e-12:
                    best = (f, thr, z)
                    best_block = block
        c = [[0.0] * q for _ in range(2)]
        for b in (0, 1):
            for j in range(q):
                wp = sum(D[i][j] for i in range(m) if best_block[i] == b and Y[i][j] == 1)
                wn = sum(D[i][j] for i in range(m) if best_block[i] == b and Y[i][j] == 0)
                c[b][j] = 0.5 * math.log((wp + eps) / (wn + eps))
        for i in range(m):
            for j in range(q):
                s = 1 if Y[i][j] == 1 else -1
                D[i][j] *= math.exp(-s * c[best_block[i]][j])
        Z = sum(sum(row) for row in D)
        D = [[v / Z for v in row] for row in D]
        feats.append(best[0])
        thrs.append(best[1])
        confs.append(c)
        norms.append(Z)
    return feats, thrs, np.array(confs), norms


# ----------------------------------------------------------- Knowl 14: BP-MLL
def loop_bpmll(X, Y, V, gamma, W, theta):
    """Global error E and the summed update directions of Knowl 14.

    Returns E and (sum_i d_j b_u, sum_i d_j, sum_i e_u x_l, sum_i e_u): the
    per-instance updates Delta w_uj = alpha d_j b_u etc. summed over instances and
    divided by alpha (i.e. minus the gradient of E).
    """
    m, d = X.shape
    s, q = W.shape
    E = 0.0
    dW = np.zeros((s, q))
    dtheta = np.zeros(q)
    dV = np.zeros((d, s))
    dgamma = np.zeros(s)
    for i in range(m):
        b = [math.tanh(sum(X[i, l] * V[l, u] for l in range(d)) + gamma[u]) for u in range(s)]
        c = [math.tanh(sum(W[u, j] * b[u] for u in range(s)) + theta[j]) for j in range(q)]
        rel = [j for j in range(q) if Y[i, j] == 1]
        irr = [k for k in range(q) if Y[i, k] == 0]
        if not rel or not irr:
            continue
        norm = 1.0 / (len(rel) * len(irr))
        for j in rel:
            for k in irr:
                E += norm * math.exp(-(c[j] - c[k]))
        dj = [0.0] * q
        for j in range(q):
            if j in rel:
                dj[j] = norm * sum(math.exp(-(c[j] - c[k])) for k in irr) * (1 + c[j]) * (1 - c[j])
            else:
                dj[j] = -norm * sum(math.exp(-(c[k] - c[j])) for k in rel) * (1 + c[j]) * (1 - c[j])
        eu = [sum(dj[j] * W[u, j] for j in range(q)) * (1 + b[u]) * (1 - b[u]) for u in range(s)]
        for u in range(s):
            for j in range(q):
                dW[u, j] += dj[j] * b[u]
            dgamma[u] += eu[u]
            for l in range(d):
                dV[l, u] += eu[u] * X[i, l]
        for j in range(q):
            dtheta[j] += dj[j]
    return E, (dW, dtheta, dV, dgamma)


# ---------------------------------------------------------- Knowl 13: Rank-SVM
def loop_ranksvm_objective(F, W, Y, C, loss):
    """sum_j ||w_j||^2 + C sum_i 1/(|Y_i||Ybar_i|) sum_pairs loss(f_j - f_k)."""
    m, q = Y.shape
    total = float((W**2).sum())
    for i in range(m):
        rel = [j for j in range(q) if Y[i, j] == 1]
        irr = [k for k in range(q) if Y[i, k] == 0]
        if not rel or not irr:
            continue
        for j in rel:
            for k in irr:
                total += C / (len(rel) * len(irr)) * loss(F[i, j] - F[i, k])
    return total


# ---------------------------------------------------------------- Knowl 15: CML
def loop_cml_log_likelihood(X, Y, label_sets, W, b, pair_coef):
    """sum_i log p(y_i | x_i), with Z(x) summed over ``label_sets`` (Knowl 15's
    features: [y_j = 1] x_l, a bias [y_j = 1], and one indicator per label pair
    and value pair (b1, b2), indexed 4 p + 2 b1 + b2 over pairs p in
    combinations order)."""
    q = Y.shape[1]
    pairs = list(combinations(range(q), 2))

    def potential(x, y):
        total = 0.0
        for j in range(q):
            if y[j] == 1:
                total += sum(x[l] * W[l, j] for l in range(len(x))) + b[j]
        for p, (j1, j2) in enumerate(pairs):
            total += pair_coef[4 * p + 2 * int(y[j1]) + int(y[j2])]
        return total

    ll = 0.0
    for x, y in zip(X, Y):
        logZ = math.log(sum(math.exp(potential(x, s)) for s in label_sets))
        ll += potential(x, y) - logZ
    return ll


# ---------------------------------------------------------------- ML-RBF
def loop_mlrbf_sigma(centers, mu):
    """sigma = mu * mean distance over pairs of prototypes (Zhang 2009)."""
    L = len(centers)
    dists = []
    for a in range(L):
        for b in range(a + 1, L):
            dists.append(math.sqrt(sum((u - v) ** 2 for u, v in zip(centers[a], centers[b]))))
    return mu * sum(dists) / len(dists)


def loop_mlrbf_hidden(X, centers, sigma):
    """Hidden-layer outputs exp(-||x - c||^2 / (2 sigma^2)) plus a bias unit 1."""
    H = []
    for x in X:
        row = [math.exp(-sum((u - v) ** 2 for u, v in zip(x, c)) / (2 * sigma**2)) for c in centers]
        H.append(row + [1.0])
    return np.array(H)
