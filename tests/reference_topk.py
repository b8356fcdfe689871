"""Loop references for top-k prediction and the library readings of ML-kNN.

Nothing here is vectorised on purpose (see reference_impls.py).
"""

import numpy as np
from reference_impls import loop_mlknn


def loop_topk(scores, k):
    """Each row's k best labels: sorted by (score descending, label ascending)."""
    scores = np.asarray(scores, dtype=np.float64)
    labels = np.zeros((scores.shape[0], k), dtype=np.int64)
    values = np.zeros((scores.shape[0], k))
    for i, row in enumerate(scores):
        order = sorted(range(row.size), key=lambda l, row=row: (-row[l], l))[:k]
        labels[i] = order
        values[i] = [row[l] for l in order]
    return labels, values


def loop_mlknn_skmultilearn(train_nbrs, Y, query_nbrs, k, s=1.0):
    """scikit-multilearn's MLkNN: training neighbourhoods contain the point itself.

    ``train_nbrs`` are the leave-one-out neighbours; scikit-multilearn's
    ``kneighbors(X_train, k)`` on the training set returns each point first,
    then its k - 1 nearest others. The tables are seed 004's over those
    neighbourhoods (:func:`reference_impls.loop_mlknn`); scores are
    ``P(H1) P(E_C | H1)`` (not normalised); the decision is the MAP rule.
    """
    m, q = Y.shape
    self_nbrs = np.array([[i, *list(train_nbrs[i, : k - 1])] for i in range(m)])
    _, pred, prior, cond_true, _ = loop_mlknn(self_nbrs, Y, query_nbrs, k, s)
    scores = np.zeros((query_nbrs.shape[0], q))
    for t in range(query_nbrs.shape[0]):
        for l in range(q):
            C = sum(Y[a, l] for a in query_nbrs[t, :k])
            scores[t, l] = prior[l] * cond_true[C, l]
    return scores, pred
