"""Leave-one-out posteriors by brute force: n refits, one per left-out row.

What ``cross_val_predict(clone(est), X, Y, cv=LeaveOneOut(), method="predict_proba")``
computes, stacked into one (n, q) array (scikit-learn's own function expects a
list of per-label arrays from a multi-label ``predict_proba``, so the loop is
written out here).
"""

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.model_selection import LeaveOneOut


def loop_loo_proba(estimator, X, Y):
    """Row i: ``clone(estimator)`` fitted on every row but i, scoring ``X[i]``."""
    X = sp.csr_matrix(X) if sp.issparse(X) else np.asarray(X)
    Y = Y.toarray() if sp.issparse(Y) else np.asarray(Y)
    out = np.empty(Y.shape, dtype=np.float64)
    for train, test in LeaveOneOut().split(np.zeros((X.shape[0], 1))):
        out[test] = clone(estimator).fit(X[train], Y[train]).predict_proba(X[test])
    return out
