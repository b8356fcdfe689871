"""Mutual proximity (MP), Teng et al. (2025) eq 4: empiric, and the Gaussian model.

The distances to all training points come from the neighbours layer's all-pairs
API, streamed in blocks of training columns (never an n x n array).
"""

from collections.abc import Iterator
from typing import Any

import numpy as np
from scipy.special import log_ndtr

from ..neighbors import NeighborGraph, pairwise_distances, pairwise_distances_chunked
from ..utils._param_validation import get_chunk_n_rows
from ..utils._typing import FloatArray, MatrixLike, NDArray
from ._base import _GraphReduction
from ._constraints import WordedStrOptions

#: The metrics of mlknn's kernels (what the all-pairs API computes).
_BLOCK_METRICS = ("euclidean", "sqeuclidean", "cosine")
#: MP empiric compares every (pair, training point): it streams blocks of at most
#: this many training columns, and row chunks whose temporaries take about
#: _EMPIRIC_CHUNK_BYTES, so that they stay in cache and are reused (several times
#: faster than one working_memory-sized chunk).
_EMPIRIC_BLOCK_COLS = 128
_EMPIRIC_CHUNK_BYTES = 2**20


class MutualProximity(_GraphReduction):
    """Mutual proximity (MP), Teng et al. (2025) eq 4, empiric or with a Gaussian model.

    ``method="empiric"`` (eq 4)::

        MP(x1, x2) = |{j : d(x1, j) > d(x1, x2)} n {j : d(x2, j) > d(x2, x1)}| / (n - 2)

    with j over the set other than x1 and x2 (n its size); the secondary distance
    is ``1 - MP``. Exact over all training points, streamed in column blocks.

    ``method="gaussian"`` (the model Teng et al. (2025) used through scikit-hubness): each
    point's distances to all other points are modelled as a normal distribution
    N(mu_x, sigma_x^2) (population standard deviation) and the two ends are taken
    as independent, ``MP(x1, x2) = SF(d; mu_1, sigma_1) SF(d; mu_2, sigma_2)``,
    SF the normal survival function. Ranking uses ``log SF`` (no underflow).
    A point whose distances are all equal (sigma = 0) gets the step
    ``SF = 1, 1/2, 0`` for d below, at, above mu.

    Parameters
    ----------
    n_neighbors : int, optional
        k, the output width; set by the estimator.
    method : {"empiric", "gaussian"}, default="empiric"
        "empiric": eq 4's counts over the training points; "gaussian": each point's
        distances modelled as a normal distribution.
    n_candidates : int, optional
        Candidate width W (default max(5 k, 100); -1: all training points).
    metric : str, default="euclidean"
        Distance of the primary neighbour search (set by the estimator).
    working_memory : float, default=256
        Megabytes per streamed block of distances.

    Attributes
    ----------
    mean_, std_ : ndarray of shape (n_train,)
        Gaussian model only: each training point's distance mean and std over the
        other training points.
    fit_graph_ : HubnessGraph
    n_train_ : int
        Number of training points of the fitted graph.

    See Also
    --------
    LocalScaling, DisSimLocal

    References
    ----------
    Schnitzer et al., JMLR 13, 2012 (Teng et al. 2025, refs [40, 41]).

    Examples
    --------
    >>> import numpy as np
    >>> from mlknn.neighbors import BruteNeighbors, build_graph
    >>> from mlknn.hubness import MutualProximity
    >>> X = np.random.default_rng(0).normal(size=(60, 20))
    >>> index = BruteNeighbors().fit(X)
    >>> mp = MutualProximity(5, n_candidates=30).fit(build_graph(index, None, 30), X)
    >>> float(mp.fit_graph_.distances.max()) <= 1.0
    True
    """

    _needs_X = True

    _parameter_constraints: dict[str, list[Any]] = {
        **_GraphReduction._parameter_constraints,
        "metric": [WordedStrOptions(set(_BLOCK_METRICS), description=f"one of {_BLOCK_METRICS} (the metrics of the "
                                                                     "brute backend)")],
        # Worded: a set's order (and so StrOptions' message) changes between runs.
        "method": [WordedStrOptions({"empiric", "gaussian"}, description="a str among {'empiric', 'gaussian'}")],
    }

    mean_: NDArray[np.float64]
    std_: NDArray[np.float64]
    _count: NDArray[np.float64]
    _m2: NDArray[np.float64]

    def __init__(
        self,
        n_neighbors: int | None = None,
        *,
        method: str = "empiric",
        n_candidates: int | None = None,
        metric: str = "euclidean",
        working_memory: float = 256,
    ) -> None:
        super().__init__(n_neighbors, n_candidates=n_candidates, metric=metric, working_memory=working_memory)
        self.method = method

    @property
    def rowwise(self) -> bool:
        """False for the Gaussian model: a query's distance sums run over column blocks
        sized by the number of query rows, so their last bit depends on the call."""
        return self.method != "gaussian"

    def _distance_blocks(self, A: MatrixLike, max_cols: int | None = None) -> Iterator[tuple[slice, FloatArray]]:
        """Blocks of training columns of the distances from the rows of A (neighbours layer)."""
        return pairwise_distances_chunked(A, self._X, metric=self.metric,
                                          working_memory=self.working_memory, max_cols=max_cols)

    def _fit_stats(self, graph: NeighborGraph, X: MatrixLike) -> None:
        self._X = X
        if self.method == "gaussian":
            n = X.shape[0]
            rows = np.arange(n)
            count = np.zeros(n)
            mean = np.zeros(n)
            m2 = np.zeros(n)
            for sl, D in self._distance_blocks(X):
                cols = np.arange(sl.start, sl.stop)
                mask = rows[:, None] != cols[None, :]  # leave the point itself out
                nb = mask.sum(axis=1).astype(float)
                with np.errstate(invalid="ignore", divide="ignore"):
                    mb = np.where(nb > 0, (D * mask).sum(axis=1) / np.maximum(nb, 1), 0.0)
                m2b = (((D - mb[:, None]) ** 2) * mask).sum(axis=1)
                # Chan et al.'s pairwise combination of (count, mean, M2).
                tot = count + nb
                delta = mb - mean
                with np.errstate(invalid="ignore", divide="ignore"):
                    frac = np.where(tot > 0, nb / np.maximum(tot, 1), 0.0)
                mean = mean + delta * frac
                m2 = m2 + m2b + delta * delta * count * frac
                count = tot
            self._count = count
            self.mean_ = mean
            self._m2 = m2
            self.std_ = np.sqrt(m2 / np.maximum(count, 1))

    @staticmethod
    def _log_sf(d: FloatArray, mu: FloatArray, sigma: FloatArray) -> FloatArray:
        with np.errstate(divide="ignore", invalid="ignore"):
            z = (d - mu) / sigma
            out = log_ndtr(-z)
        step = np.where(d < mu, 0.0, np.where(d > mu, -np.inf, np.log(0.5)))
        return np.where(sigma > 0, out, step)

    def _gauss(
        self, d: FloatArray, mu1: FloatArray, s1: FloatArray, mu2: FloatArray, s2: FloatArray
    ) -> tuple[FloatArray, FloatArray]:
        logmp = self._log_sf(d, mu1, s1) + self._log_sf(d, mu2, s2)
        return -np.expm1(logmp), -logmp

    def _secondary_train(self, graph: NeighborGraph) -> tuple[FloatArray, FloatArray | None]:
        if self.method == "gaussian":
            ind = graph.indices
            return self._gauss(graph.distances, self.mean_[:, None], self.std_[:, None], self.mean_[ind], self.std_[ind])
        counts = self._empiric_counts(self._X, graph, rows_are_train=True)
        n = self.n_train_
        denom = n - 2
        mp = counts / denom if denom > 0 else np.ones_like(counts, dtype=float)
        return 1.0 - mp, None

    def _secondary_query(self, graph: NeighborGraph, X: MatrixLike) -> tuple[FloatArray, FloatArray | None]:
        d = graph.distances
        ind = graph.indices
        n = self.n_train_
        if self.method == "gaussian":
            # The query's distribution over all of D ...
            mt = np.zeros(X.shape[0])
            s1 = np.zeros(X.shape[0])
            s2 = np.zeros(X.shape[0])
            # two passes (mean, then squared deviations) for accuracy
            for _, D in self._distance_blocks(X):
                s1 += D.sum(axis=1)
            mt = s1 / n
            for _, D in self._distance_blocks(X):
                s2 += ((D - mt[:, None]) ** 2).sum(axis=1)
            st = np.sqrt(s2 / n)
            # ... and each candidate's, with d(x, t) added (Welford's update).
            cnt = self._count[ind] + 1.0
            mu = self.mean_[ind]
            delta = d - mu
            mu_new = mu + delta / cnt
            m2_new = self._m2[ind] + delta * (d - mu_new)
            sx = np.sqrt(m2_new / cnt)
            return self._gauss(d, mt[:, None], st[:, None], mu_new, sx)
        counts = self._empiric_counts(X, graph, rows_are_train=False)
        denom = n - 1  # |D u {t}| - 2
        return 1.0 - counts / denom, None

    def _empiric_counts(self, A: MatrixLike, graph: NeighborGraph, rows_are_train: bool) -> NDArray[np.float64]:
        """``#{j in D, j not in {a, x}: d(a, j) > d(a, x) and d(x, j) > d(x, a)}`` per pair.

        For each block of training columns j: one gather of the candidates'
        distance rows and two comparisons with the pair's threshold
        ``t = d(a, x)``, counted over the block; the two excluded points j = x
        and j = a are then taken back out for the O(n_rows W) pairs where they
        fall in the block (instead of two more masks over the whole block).
        The (rows, W, block) temporaries take about ``_EMPIRIC_CHUNK_BYTES``
        (never more than ``working_memory``) and are reused from one row chunk to
        the next. For training rows the candidates' distance rows are rows of
        the same block, so only one distance block is computed.
        """
        d = graph.distances
        cand = graph.indices
        n_rows, W = cand.shape
        counts = np.zeros((n_rows, W), dtype=np.int64)
        if rows_are_train:
            rows_of = cand  # the rows are the training points, in order
        else:
            uniq, rows_of = np.unique(cand, return_inverse=True)
            rows_of = rows_of.reshape(cand.shape)
        for cols, DA in self._distance_blocks(A, _EMPIRIC_BLOCK_COLS):  # (n_rows, b): d(a, j)
            start, stop = cols.start, cols.stop
            b = stop - start
            DU = DA if rows_are_train else pairwise_distances(self._X[uniq], self._X[cols], self.metric)  # d(x, j)
            # Bytes per (row, candidate, column) element: the gathered float64
            # distances and two boolean masks; about _EMPIRIC_CHUNK_BYTES in all.
            budget = min(self.working_memory, _EMPIRIC_CHUNK_BYTES / 2**20)
            chunk = get_chunk_n_rows(row_bytes=10 * W * b, max_n_rows=n_rows, working_memory=budget)
            gathered = np.empty((chunk, W, b))
            ok = np.empty((chunk, W, b), dtype=bool)
            tmp = np.empty((chunk, W, b), dtype=bool)
            for s in range(0, n_rows, chunk):
                e = min(s + chunk, n_rows)
                c = e - s
                thr = d[s:e, :, None]
                np.take(DU, rows_of[s:e], axis=0, out=gathered[:c])
                np.greater(gathered[:c], thr, out=ok[:c])
                np.greater(DA[s:e, None, :], thr, out=tmp[:c])
                ok[:c] &= tmp[:c]
                counts[s:e] += np.add.reduce(ok[:c].view(np.uint8), axis=2, dtype=np.int64)
            # Take j = x (the candidate itself) back out where it lies in the block ...
            r, w = np.nonzero((cand >= start) & (cand < stop))
            t = d[r, w]
            jx = cand[r, w] - start
            counts[r, w] -= (DA[r, jx] > t) & (DU[rows_of[r, w], jx] > t)
            # ... and j = a (a training row is not its own third point).
            if rows_are_train and start < n_rows:
                a = np.arange(start, min(stop, n_rows))
                t = d[a]
                ja = (a - start)[:, None]
                counts[a] -= (DA[a[:, None], ja] > t) & (DU[rows_of[a], ja] > t)
        return counts.astype(np.float64)

