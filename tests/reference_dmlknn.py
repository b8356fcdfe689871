"""Slow loop reference for DML-kNN: Algorithm 1 of Younes et al. 2011 (seed 000), literally.

Nothing is vectorised on purpose. Step numbers refer to Algorithm 1. Readings of
the text extraction are the ones documented in ``mlknn.algorithms._dmlknn`` and
``docs/dmlknn.md``: ``s x Q`` is s times the number of labels; the prior is not
smoothed (eq 13); the training instances' counting vectors are leave-one-out.
"""

import numpy as np


def loop_dmlknn(train_nbrs, Y, query_nbrs, k, delta, s=1.0, variant="paper"):
    """DML-kNN with explicit loops over labels, training instances and queries.

    ``variant="mulan"`` is MULAN's reading: delta = 6 whatever ``delta`` says,
    prior ``(s + u) / (2 s + n)``, decision ``p1 >= p0``, posterior ``p1`` when
    ``p1 + p0 = 0``.

    Parameters
    ----------
    train_nbrs : (n, k) leave-one-out neighbour indices of the training instances.
    Y : (n, Q) 0/1 training labels.
    query_nbrs : (m_test, k) neighbour indices of the queries.
    k : int
    delta : int
    s : float

    Returns
    -------
    posterior : (m_test, Q) r_x of step 17 (prior where both products are 0)
    prediction : (m_test, Q) y_x of step 16, ties -> 0
    prior : (Q,) Pr(H_1^q)
    v, v_prime : (m_test, Q) the counters of steps 5-12
    """
    n, Q = Y.shape
    if variant == "mulan":
        delta = 6
    # Steps 1-3.
    prior1 = [0.0] * Q
    u = [0] * Q
    u_prime = [0] * Q
    for q in range(Q):
        total = 0
        for i in range(n):
            total += int(Y[i, q])
        prior1[q] = (s + total) / (2 * s + n) if variant == "mulan" else total / n
        u[q] = total
        u_prime[q] = n - total

    def counting_vector(nbrs):
        c = [0] * Q
        for q in range(Q):
            for a in nbrs[:k]:
                c[q] += int(Y[a, q])
        return c

    m = query_nbrs.shape[0]
    posterior = np.zeros((m, Q))
    prediction = np.zeros((m, Q), dtype=int)
    v_all = np.zeros((m, Q), dtype=int)
    vp_all = np.zeros((m, Q), dtype=int)
    for t in range(m):
        # Step 4.
        cx = counting_vector(query_nbrs[t])
        # Steps 5-6.
        v = [0] * Q
        v_prime = [0] * Q
        # Steps 7-12.
        for i in range(n):
            cxi = counting_vector(train_nbrs[i])  # step 8
            ok = True
            for q in range(Q):  # step 9
                if not (cx[q] - delta <= cxi[q] <= cx[q] + delta):
                    ok = False
            if ok:
                for q in range(Q):  # step 10
                    if cxi[q] == cx[q]:  # step 11
                        if Y[i, q] == 1:  # step 12
                            v[q] += 1
                        else:
                            v_prime[q] += 1
        # Steps 13-17.
        for q in range(Q):
            d1 = s * Q + u[q]
            d0 = s * Q + u_prime[q]
            like1 = (s + v[q]) / d1 if d1 > 0 else 0.0  # step 14
            like0 = (s + v_prime[q]) / d0 if d0 > 0 else 0.0  # step 15
            p1 = prior1[q] * like1
            p0 = (1.0 - prior1[q]) * like0
            if variant == "mulan":
                prediction[t, q] = 1 if p1 >= p0 else 0
                posterior[t, q] = p1 / (p1 + p0) if p1 + p0 > 0 else p1
            else:
                prediction[t, q] = 1 if p1 > p0 else 0  # step 16
                posterior[t, q] = p1 / (p1 + p0) if p1 + p0 > 0 else prior1[q]  # step 17
            v_all[t, q] = v[q]
            vp_all[t, q] = v_prime[q]
    return posterior, prediction, np.array(prior1), v_all, vp_all
