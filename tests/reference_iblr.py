"""Slow loop reading of IBLR-ML / IBLR-ML+ (Cheng and Huellermeier 2009).

The meta-features (fraction of the k neighbours having each label), the
standardisation of the inputs and the prediction are written as explicit loops,
one instance / label / neighbour at a time. The per-label optimisation itself is
not re-implemented: it is scikit-learn's ``LogisticRegression`` with its exact
Newton solver (``newton-cholesky``, run to tol 1e-12), label by label, where
mlknn runs its own batched Newton-CG over all labels at once; the comparison
checks the data given to the fit, that both reach the same optimum (to mlknn's
stated tolerance) and how the coefficients are applied.
"""

import math

import numpy as np
from sklearn.linear_model import LogisticRegression


def loop_meta_features(nbrs, Y, k):
    """f[i][j] = (number of the k neighbours of i with label j) / k."""
    n_points = nbrs.shape[0]
    q = Y.shape[1]
    meta = np.zeros((n_points, q))
    for i in range(n_points):
        for j in range(q):
            count = 0
            for col in range(k):
                if Y[nbrs[i, col], j] == 1:
                    count += 1
            meta[i, j] = count / k
    return meta


def loop_iblr(train_nbrs, Y, query_nbrs, k, X_train=None, X_query=None, C=5e7, max_iter=1000, tol=1e-12):
    """IBLR-ML (X_train None) or IBLR-ML+ (dense X_train / X_query given).

    Parameters
    ----------
    train_nbrs : (n, >= k) leave-one-out neighbours of the training instances.
    Y : (n, q) 0/1 labels.
    query_nbrs : (m, >= k) neighbours of the queries.

    Returns
    -------
    proba : (m, q), prediction : (m, q) int (score >= 0), meta_train : (n, q)
    """
    n, q = Y.shape
    meta_train = loop_meta_features(train_nbrs, Y, k)
    meta_query = loop_meta_features(query_nbrs, Y, k)

    def rows(X, meta):
        out = []
        for i in range(meta.shape[0]):
            row = [] if X is None else [float(v) for v in X[i]]
            row.extend(float(v) for v in meta[i])
            out.append(row)
        return out

    Ztr = rows(X_train, meta_train)
    Zq = rows(X_query, meta_query)
    p = len(Ztr[0])
    # Standardise each column: centre by the mean, divide by the sample standard
    # deviation (n - 1); a constant column keeps scale 1.
    mean = [0.0] * p
    scale = [1.0] * p
    # Sums run over the rows in order (so the standardised matrix is bit for bit the
    # one mlknn builds: the nearly unpenalised fit is ill-conditioned enough that a
    # 1-ulp difference in its input can move the fitted probabilities visibly).
    for j in range(p):
        column = [Ztr[i][j] for i in range(n)]
        total = 0.0
        for v in column:
            total += v
        mean[j] = total / n
        if max(column) != min(column):
            squares = 0.0
            for v in column:
                squares += (v - mean[j]) * (v - mean[j])
            scale[j] = math.sqrt(squares / (n - 1))
    Zs = np.array([[(Ztr[i][j] - mean[j]) / scale[j] for j in range(p)] for i in range(n)])

    m = len(Zq)
    proba = np.zeros((m, q))
    prediction = np.zeros((m, q), dtype=int)
    for label in range(q):
        values = set(int(Y[i, label]) for i in range(n))
        if len(values) == 1:  # constant in training: predict the constant
            value = values.pop()
            for t in range(m):
                proba[t, label] = float(value)
                prediction[t, label] = value
            continue
        model = LogisticRegression(C=C, solver="newton-cholesky", max_iter=max_iter, tol=tol)
        model.fit(Zs, Y[:, label])
        w = model.coef_[0]
        b = model.intercept_[0]
        for t in range(m):
            z = b
            for j in range(p):
                z += w[j] * (Zq[t][j] - mean[j]) / scale[j]
            if z >= 0:
                proba[t, label] = 1.0 / (1.0 + math.exp(-z))
            else:  # the same value, without overflow for very negative z
                proba[t, label] = math.exp(z) / (1.0 + math.exp(z))
            prediction[t, label] = 1 if z >= 0 else 0
    return proba, prediction, meta_train
