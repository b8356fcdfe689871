"""The first version of mlknn's brute-force search (commit 1490657), kept verbatim for
the before/after comparison of benchmarks/bench_graph.py. Not part of the package.

Original docstring: exact brute-force k-nearest-neighbour search, chunked and BLAS-backed.

Why our own kernel rather than ``sklearn.neighbors.NearestNeighbors``: mlknn's
contract is stricter than scikit-learn's. We need (a) a deterministic tie rule
(equal distances ordered by the lower training index) so that every backend, the
distributed path and the loop references agree exactly, and (b) distances that are
exact enough for duplicates to come out as 0 (the GEMM expansion
``|q|^2 - 2 q.x + |x|^2`` does not give 0 for identical rows).

The algorithm, per chunk of queries (memory bounded by ``working_memory``):

1. approximate squared distances with one matrix product (float32 when X is
   float32, else float64);
2. the k-th smallest value per row plus a rounding tolerance gives a candidate set
   that certainly contains every true neighbour and every tie at the boundary;
3. the candidates' distances are recomputed exactly in float64 (direct
   differences for dense input), then ordered by (distance, index).

No n x n matrix is allocated: a chunk is ``chunk_rows x n_train``.
"""

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_array

# Relative rounding error of the GEMM expansion that step 2 must cover.
_GEMM_RTOL = {np.dtype(np.float32): 2e-5, np.dtype(np.float64): 1e-11}
_METRICS = ("euclidean", "sqeuclidean", "cosine")


class LegacyBruteNeighbors:
    """Exact Euclidean (or squared Euclidean, or cosine) neighbours.

    Parameters
    ----------
    metric : {"euclidean", "sqeuclidean", "cosine"}, default="euclidean"
        ``cosine`` is ``1 - cos(a, b)``, computed as half the squared Euclidean
        distance between the L2-normalised rows.
    working_memory : float, default=256
        Megabytes one chunk of the distance matrix may take.
    n_jobs : int, optional
        Unused: BLAS already uses every core (kept for a uniform signature).
    random_state : ignored

    Attributes
    ----------
    n_samples_fit_ : int
    n_features_in_ : int
    """

    exact = True

    def __init__(self, metric="euclidean", working_memory=256, n_jobs=None, random_state=None):
        self.metric = metric
        self.working_memory = working_memory
        self.n_jobs = n_jobs
        self.random_state = random_state

    def get_params(self, deep=True):
        return {
            "metric": self.metric,
            "working_memory": self.working_memory,
            "n_jobs": self.n_jobs,
            "random_state": self.random_state,
        }

    def set_params(self, **params):
        for key, value in params.items():
            setattr(self, key, value)
        return self

    def _prepare(self, X):
        X = check_array(X, accept_sparse="csr", dtype=[np.float64, np.float32])
        if sp.issparse(X):
            X = X.tocsr()
            X.sum_duplicates()  # also sorts indices; explicit zeros are harmless
        if self.metric == "cosine":
            X = _l2_normalize(X)
        return X

    def fit(self, X, y=None):
        """Index the training points.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        self
        """
        if self.metric not in _METRICS:
            raise ValueError(
                f"The 'metric' parameter of the brute backend must be one of {_METRICS}. "
                f"Got {self.metric!r} instead."
            )
        X = self._prepare(X)
        self._fit_X = X
        self._fit_sqnorm = _row_sqnorms(X)
        self.n_samples_fit_ = X.shape[0]
        self.n_features_in_ = X.shape[1]
        return self

    def kneighbors(self, X=None, n_neighbors=10, return_distance=True):
        """Find the ``n_neighbors`` nearest training points of each query.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_queries, n_features), optional
            None means the training points themselves, each excluding its own
            index (leave-one-out).
        n_neighbors : int
        return_distance : bool, default=True

        Returns
        -------
        distances : ndarray of shape (n_queries, n_neighbors), float64
            Only when ``return_distance``.
        indices : ndarray of shape (n_queries, n_neighbors), intp
        """
        loo = X is None
        n_fit = self.n_samples_fit_
        limit = n_fit - 1 if loo else n_fit
        if not (1 <= n_neighbors <= limit):
            what = "n_samples_fit - 1 (leave-one-out)" if loo else "n_samples_fit"
            raise ValueError(
                f"Expected 1 <= n_neighbors <= {what} = {limit}, but n_neighbors = {n_neighbors}."
            )
        if loo:
            Q, q_sqnorm = self._fit_X, self._fit_sqnorm
        else:
            Q = self._prepare(X)
            if Q.shape[1] != self.n_features_in_:
                raise ValueError(
                    f"X has {Q.shape[1]} features, but the index was fitted with "
                    f"{self.n_features_in_} features."
                )
            q_sqnorm = _row_sqnorms(Q)
        n_q = Q.shape[0]
        dist = np.empty((n_q, n_neighbors), dtype=np.float64)
        ind = np.empty((n_q, n_neighbors), dtype=np.intp)
        # ~3 float buffers of chunk_rows x n_fit live at once.
        itemsize = 8
        chunk = max(1, int(self.working_memory * 2**20 // (3 * itemsize * max(n_fit, 1))))
        for start in range(0, n_q, chunk):
            stop = min(start + chunk, n_q)
            d, i = self._chunk(Q[start:stop], q_sqnorm[start:stop], start if loo else None, n_neighbors)
            dist[start:stop], ind[start:stop] = d, i
        if self.metric == "euclidean":
            np.sqrt(dist, out=dist)
        elif self.metric == "cosine":
            dist *= 0.5  # |a-b|^2 = 2 - 2cos for unit vectors
        return (dist, ind) if return_distance else ind

    def _chunk(self, Qc, qn, loo_offset, k):
        X, xn = self._fit_X, self._fit_sqnorm
        n_rows = Qc.shape[0]
        # Step 1: approximate squared distances.
        prod = Qc @ X.T
        D = prod.toarray() if sp.issparse(prod) else np.asarray(prod)
        D *= -2
        D += qn[:, None].astype(D.dtype)
        D += xn[None, :].astype(D.dtype)
        rows = np.arange(n_rows)
        if loo_offset is not None:
            D[rows, rows + loo_offset] = np.inf  # exclude the point itself only
        # Step 2: threshold = k-th smallest + rounding tolerance.
        kth = np.partition(D, k - 1, axis=1)[:, k - 1]
        scale = qn + xn.max(initial=0.0)
        tol = _GEMM_RTOL.get(D.dtype, 1e-11) * scale + 1e-300
        mask = D <= (kth + tol)[:, None].astype(D.dtype)
        if loo_offset is not None:
            mask[rows, rows + loo_offset] = False
        r, c = np.nonzero(mask)
        del D, mask
        # Step 3: exact recomputation on the candidates, then (distance, index) order.
        exact = _exact_sqdist(Qc, X, qn, xn, r, c)
        order = np.lexsort((c, exact, r))
        r, c, exact = r[order], c[order], exact[order]
        counts = np.bincount(r, minlength=n_rows)
        starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
        take = starts[:, None] + np.arange(k)[None, :]
        return exact[take], c[take]


def _row_sqnorms(X):
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1), dtype=np.float64).ravel()
    X64 = X.astype(np.float64, copy=False)
    return np.einsum("ij,ij->i", X64, X64)


def _l2_normalize(X):
    norms = np.sqrt(_row_sqnorms(X))
    norms[norms == 0] = 1.0  # an all-zero row stays zero (distance 1 to all)
    if sp.issparse(X):
        return sp.csr_matrix(sp.diags(1.0 / norms) @ X, dtype=X.dtype)
    return (X / norms[:, None]).astype(X.dtype, copy=False)


def _exact_sqdist(Qc, X, qn, xn, r, c, block=1 << 16):
    """Squared distances of the pairs (Qc[r], X[c]) in float64, block by block."""
    out = np.empty(r.shape[0], dtype=np.float64)
    for s in range(0, r.shape[0], block):
        rr, cc = r[s : s + block], c[s : s + block]
        if sp.issparse(X):
            A = Qc[rr].astype(np.float64)
            B = X[cc].astype(np.float64)
            dots = np.asarray(A.multiply(B).sum(axis=1)).ravel()
            v = qn[rr] + xn[cc] - 2.0 * dots
            np.maximum(v, 0.0, out=v)
        else:
            diff = np.asarray(Qc[rr], dtype=np.float64) - np.asarray(X[cc], dtype=np.float64)
            v = np.einsum("ij,ij->i", diff, diff)
        out[s : s + block] = v
    return out

