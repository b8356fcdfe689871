"""Hubness reduction as a transformation of one neighbour graph into another.

Seed 001 (MLHiKNN, Mathematics 2025) section 2.2 and Algorithms 4-5: local scaling
(LS, eq 3), mutual proximity (MP, eq 4, empiric, and its Gaussian model) and the
local dissimilarity DSL (eq 2). A reduction replaces the primary distance d by a
secondary dissimilarity and the k nearest neighbours are re-identified under it.

Design
------
A reduction never searches. It receives

* at ``fit``: the training set's leave-one-out *candidate* graph, W >= k wide
  (W = :meth:`search_width`, what the estimator asks its backend for), and the
  training features X when the method needs them (MP, DSL);
* at ``transform``: a query graph of the same width W (and the queries' X).

It computes the secondary dissimilarity of every (point, candidate) pair, re-ranks
the W candidates and keeps the k best: the result is a :class:`HubnessGraph` of
width k whose ``distances`` are the secondary dissimilarities, ascending, ties
broken by the primary distance and then by the lower training index, and whose
``primary_distances`` are the primary distances of the same neighbours (what an
algorithm that weights by distance, such as MLHiKNN's eq 20, reads).

**Approximation: the candidate set.** Only the W primary nearest neighbours can
become secondary neighbours. With W = n_train - 1 the re-ranking is exact
(``n_candidates=-1`` asks for that). The default W = max(5 k, 100) (capped at
n_train - 1) is documented with its measured recall in ``docs/hubness.md``. The
secondary *values* of the candidates are exact (MP counts over all training
points, not over the candidates).

**Queries join the set (Algorithms 4-5, line "based on the dataset {t u D}").**
A query t's secondary dissimilarities are computed in D u {t}: t can enter a
training point's k-neighbourhood, which changes that point's scale. Each query is
joined on its own (queries do not see each other):

* LS: x's k-th neighbour distance in D u {t} is ``max(d_{k-1}(x), d(x, t))`` when
  ``d(x, t) < d_k(x)``, else ``d_k(x)`` (``d_0 = 0``);
* DSL: when ``d(x, t) < d_k(x)``, t replaces x's k-th neighbour in its centroid,
  ``c'_k(x) = c_k(x) + (t - x_(k)) / k``;
* MP empiric: the count runs over D \\ {x} (t is one end of the pair) and is
  divided by ``|D u {t}| - 2 = n - 1``;
* MP Gaussian: x's mean and standard deviation are updated with d(x, t)
  (Welford's one-value update); t's are over its distances to all of D.

Training pairs (``fit`` and ``transform`` of a leave-one-out graph) are computed
in D alone, as in Algorithm 5 lines 2-5.

Memory: LS and DSL work on the (n, W) candidate arrays only. MP needs the
distribution of each point's distances to *all* training points; it streams
blocks of training columns (``working_memory`` megabytes per block), never an
n x n array. MP empiric costs O(n_rows * W * n_train) comparisons; MP Gaussian
O(n_rows * n_train) distances. The blocks are the one place outside
:mod:`mlknn.neighbors` where distances are computed (see
``_pairwise_distances``): the k-NN protocol cannot return all n distances of a
point without sorting them.
"""

import numbers
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.special import log_ndtr
from sklearn.base import BaseEstimator, clone

from scipy.spatial.distance import cdist

from ..neighbors import NeighborGraph
from ..neighbors._brute import _l2_normalize

__all__ = [
    "HubnessGraph",
    "LocalScaling",
    "MutualProximity",
    "DisSimLocal",
    "make_reduction",
    "REDUCTIONS",
]

#: Names accepted by the ``hubness`` parameter of the kNN estimators.
REDUCTIONS = ("ls", "mp", "mp-gauss", "dsl")

_MIN_CANDIDATES = 100
_CANDIDATE_FACTOR = 5

#: MP empiric compares every (pair, training point): it streams blocks of at most
#: this many training columns, and row chunks whose temporaries take about
#: _EMPIRIC_CHUNK_BYTES, so that they stay in cache and are reused (measured on
#: yeast, W = 100: fit 6.5 s -> ~1.5 s against one working_memory-sized chunk).
_EMPIRIC_BLOCK_COLS = 128
_EMPIRIC_CHUNK_BYTES = 2**20


@dataclass(frozen=True)
class HubnessGraph(NeighborGraph):
    """A :class:`~mlknn.neighbors.NeighborGraph` re-ranked by a hubness reduction.

    ``distances`` hold the secondary dissimilarities (ascending along each row);
    ``primary_distances`` the primary (metric) distances of the same neighbours,
    in the same order (not necessarily ascending).

    Parameters
    ----------
    indices, distances, loo
        As for :class:`~mlknn.neighbors.NeighborGraph`.
    primary_distances : ndarray of shape (n_points, k)

    Attributes
    ----------
    indices : ndarray of shape (n_points, k)
        Training indices of the neighbours, by increasing secondary dissimilarity.
    distances : ndarray of shape (n_points, k)
        The secondary dissimilarities.
    primary_distances : ndarray of shape (n_points, k)
        The primary (metric) distances of the same neighbours.
    loo : bool
        True for the training set's leave-one-out graph.

    See Also
    --------
    LocalScaling, MutualProximity, DisSimLocal : the reductions that make one.

    References
    ----------
    Seed 001 (MLHiKNN, Mathematics 2025), section 2.2 and Algorithms 4-5.

    Examples
    --------
    >>> import numpy as np
    >>> from mlknn.hubness import HubnessGraph
    >>> g = HubnessGraph(np.array([[1], [0]]), np.array([[0.2], [0.2]]), True, np.array([[1.0], [1.0]]))
    >>> g.take(1) is g, g.primary_distances.shape
    (True, (2, 1))
    """

    primary_distances: np.ndarray = None

    def __post_init__(self):
        super().__post_init__()
        if self.primary_distances is None or self.primary_distances.shape != self.indices.shape:
            raise ValueError(
                "HubnessGraph needs primary_distances of the same shape as indices; got "
                f"{None if self.primary_distances is None else self.primary_distances.shape} "
                f"and {self.indices.shape}."
            )

    @property
    def metric_distances(self):
        """The primary distances: what a radius or a distance weight is compared with."""
        return self.primary_distances

    def take(self, n_neighbors):
        """The first ``n_neighbors`` columns (all three arrays sliced)."""
        base = super().take(n_neighbors)
        if base is self:
            return self
        return HubnessGraph(base.indices, base.distances, self.loo, self.primary_distances[:, :n_neighbors])


class _GraphReduction(BaseEstimator):
    """Shared machinery: validation, candidate width, re-ranking."""

    _needs_X = False

    def __init__(self, n_neighbors=None, *, n_candidates=None, metric="euclidean", working_memory=256):
        self.n_neighbors = n_neighbors
        self.n_candidates = n_candidates
        self.metric = metric
        self.working_memory = working_memory

    # ------------------------------------------------------------ public
    def search_width(self, n_neighbors=None):
        """How many primary neighbours (candidates) to ask the backend for.

        ``n_candidates`` when set (``-1``: every training point, i.e. exact
        re-ranking; the caller caps it at n_train - 1), else
        ``max(5 k, 100)``; never less than k.

        Parameters
        ----------
        n_neighbors : int, optional
            k; defaults to the reduction's ``n_neighbors``.

        Returns
        -------
        int
        """
        k = self._k(n_neighbors)
        if self.n_candidates is None:
            width = max(_CANDIDATE_FACTOR * k, _MIN_CANDIDATES)
        elif self.n_candidates == -1:
            width = np.iinfo(np.int64).max
        else:
            width = int(self.n_candidates)
        return max(k, width)

    def fit(self, graph, X=None):
        """Learn the training set's statistics from its leave-one-out candidate graph.

        Parameters
        ----------
        graph : NeighborGraph
            Leave-one-out graph of the training set, at least ``n_neighbors`` wide
            (its width is the candidate set).
        X : {array-like, sparse matrix} of shape (n_train, n_features), optional
            Training features; required by MP and DSL.

        Returns
        -------
        self
            With ``fit_graph_``, the re-ranked leave-one-out graph (width k).
        """
        self._validate()
        if not isinstance(graph, NeighborGraph) or not graph.loo:
            raise ValueError(
                f"{type(self).__name__}.fit needs the training set's leave-one-out NeighborGraph "
                f"(loo=True). Got {type(graph).__name__}"
                f"{'' if not isinstance(graph, NeighborGraph) else ' with loo=False'} instead."
            )
        k = self._check_width(graph, "fit")
        X = self._check_X(X, graph.n_points, "fit")
        self.n_train_ = graph.n_points
        self._cand_indices = graph.indices
        self._fit_stats(graph, X)
        self.fit_graph_ = self._rerank(graph, *self._secondary_train(graph))
        return self

    def transform(self, graph, X=None):
        """Re-rank a candidate graph by the secondary dissimilarity.

        Parameters
        ----------
        graph : NeighborGraph
            A query graph (each query joins the training set, Algorithm 4 line 2),
            or the training set's leave-one-out graph (secondary distances within
            the training set, Algorithm 5 line 3). At least ``n_neighbors`` wide.
        X : {array-like, sparse matrix} of shape (n_queries, n_features), optional
            The queries' features; required by MP and DSL for a query graph.

        Returns
        -------
        HubnessGraph
            Width ``n_neighbors``.
        """
        if not hasattr(self, "fit_graph_"):
            from sklearn.exceptions import NotFittedError

            raise NotFittedError(f"This {type(self).__name__} instance is not fitted yet; call fit first.")
        if not isinstance(graph, NeighborGraph):
            raise ValueError(
                f"The 'graph' parameter of {type(self).__name__}.transform must be a NeighborGraph. "
                f"Got {type(graph).__name__} instead."
            )
        k = self._check_width(graph, "transform")
        if graph.loo:
            if graph.n_points != self.n_train_:
                raise ValueError(
                    f"The 'graph' parameter of {type(self).__name__}.transform is a leave-one-out "
                    f"graph, so it must be the training set's ({self.n_train_} points). "
                    f"Got {graph.n_points} points instead."
                )
            if graph.indices.shape == self._cand_indices.shape and np.array_equal(graph.indices, self._cand_indices):
                return self.fit_graph_
            return self._rerank(graph, *self._secondary_train(graph))
        X = self._check_X(X, graph.n_points, "transform")
        if graph.n_points == 0:
            empty = np.empty((0, k))
            return HubnessGraph(np.empty((0, k), dtype=np.intp), empty, False, empty.copy())
        return self._rerank(graph, *self._secondary_query(graph, X))

    def fit_transform(self, graph, X=None):
        """``fit(graph, X).fit_graph_``."""
        return self.fit(graph, X).fit_graph_

    # ----------------------------------------------------------- helpers
    def _k(self, n_neighbors=None):
        k = self.n_neighbors if n_neighbors is None else n_neighbors
        if k is None or isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ValueError(
                f"The 'n_neighbors' parameter of {type(self).__name__} must be an int in the range "
                f"[1, inf) (an estimator's hubness= parameter sets it to the estimator's n_neighbors). "
                f"Got {k!r} instead."
            )
        return int(k)

    def _check_width(self, graph, where):
        """k, after checking that the candidate graph is at least k wide."""
        k = self._k()
        if graph.n_neighbors < k:
            raise ValueError(
                f"The 'graph' parameter of {type(self).__name__}.{where} (the candidate graph) must "
                f"be at least n_neighbors = {k} wide. Got width {graph.n_neighbors} instead."
            )
        return k

    def _validate(self):
        self._k()
        nc = self.n_candidates
        if nc is not None and (isinstance(nc, bool) or not isinstance(nc, (int, np.integer)) or (nc < 1 and nc != -1)):
            raise ValueError(
                f"The 'n_candidates' parameter of {type(self).__name__} must be None, -1 or an int "
                f">= 1. Got {nc!r} instead."
            )
        if not isinstance(self.metric, str):
            raise ValueError(f"The 'metric' parameter of {type(self).__name__} must be a str. Got {self.metric!r} instead.")
        wm = self.working_memory
        if isinstance(wm, bool) or not isinstance(wm, numbers.Real) or not (0 < wm < np.inf):
            raise ValueError(
                f"The 'working_memory' parameter of {type(self).__name__} must be a finite number > 0 "
                f"(megabytes). Got {wm!r} instead."
            )

    def _check_X(self, X, n_rows, where):
        if not self._needs_X:
            return None
        if X is None:
            raise ValueError(
                f"The hubness reduction {type(self).__name__} needs the features X in {where} "
                "(secondary distances use the data, not only the graph); got X=None. Pass X "
                "(e.g. fit_from_graph(graph, Y, X=X) / predict_proba_from_graph(graph, X))."
            )
        from sklearn.utils import check_array

        X = check_array(X, accept_sparse="csr", dtype=[np.float64, np.float32])
        if X.shape[0] != n_rows:
            raise ValueError(f"X has {X.shape[0]} rows but the graph has {n_rows} points; they must match.")
        if where == "transform" and X.shape[1] != self._X.shape[1]:
            raise ValueError(
                f"X has {X.shape[1]} features, but {type(self).__name__} was fitted with {self._X.shape[1]} features."
            )
        return X

    def _rerank(self, graph, secondary, key=None):
        """Keep the k candidates with the smallest secondary dissimilarity.

        ``key`` is a monotone (non-decreasing) function of ``secondary`` with more
        resolution (e.g. the LS exponent before it saturates at 1); ties are broken
        by the primary distance, then the lower training index.
        """
        k = self._k()
        key = secondary if key is None else key
        order = np.lexsort((graph.indices, graph.distances, key), axis=-1)[:, :k]
        take = lambda a: np.take_along_axis(a, order, axis=1)  # noqa: E731
        return HubnessGraph(
            np.ascontiguousarray(take(graph.indices), dtype=np.intp),
            np.ascontiguousarray(take(secondary), dtype=np.float64),
            graph.loo,
            np.ascontiguousarray(take(graph.distances), dtype=np.float64),
        )

    # The column blocks of training points MP streams through.
    def _column_blocks(self, n_rows, max_cols=None):
        n = self._X.shape[0]
        per_col = 8 * (n_rows + n) + 1
        b = max(1, min(n, int(self.working_memory * 2**20 // per_col)))
        if max_cols is not None:
            b = min(b, max_cols)
        for start in range(0, n, b):
            yield np.arange(start, min(start + b, n))

    def _distance_block(self, A, cols):
        """Dense primary distances from the rows of A to the training points ``cols``."""
        return _pairwise_distances(A, self._X[cols], self.metric)


class LocalScaling(_GraphReduction):
    """Local scaling (LS), seed 001 eq 3.

    ``LS(x1, x2) = 1 - exp(-d(x1, x2)^2 / (d_k(x1) d_k(x2)))`` with ``d_k(x)`` the
    distance from x to its k-th nearest neighbour (k = ``n_neighbors``; seed 001
    section 4.1.2 sets it to the kNN k, 20). Ranking uses the exponent
    ``d^2 / (d_k d_k)`` (same order, no saturation at 1).

    **Zero scale** (x has k exact duplicates, ``d_k(x) = 0``): the ratio is defined
    as 0 when ``d(x1, x2) = 0`` and +inf (LS = 1) otherwise.

    Parameters
    ----------
    n_neighbors : int, optional
        k, the output width and the scale neighbour; set by the estimator.
    n_candidates : int, optional
        Candidate width W (default max(5 k, 100); -1: all training points).
    metric : str, default="euclidean"
    working_memory : float, default=256
        Unused by LS (kept for a uniform signature).

    Attributes
    ----------
    scale_ : ndarray of shape (n_train,)
        d_k(x) of every training point.
    fit_graph_ : HubnessGraph
        The re-ranked leave-one-out graph.

    See Also
    --------
    MutualProximity, DisSimLocal

    References
    ----------
    Schnitzer, Flexer, Schedl, Widmer, "Local and global scaling reduce hubs in
    space", JMLR 13, 2012 (seed 001 refs [40, 41]).

    Examples
    --------
    >>> import numpy as np
    >>> from mlknn.neighbors import BruteNeighbors, build_graph
    >>> from mlknn.hubness import LocalScaling
    >>> X = np.random.default_rng(0).normal(size=(60, 20))
    >>> index = BruteNeighbors().fit(X)
    >>> ls = LocalScaling(5, n_candidates=30).fit(build_graph(index, None, 30))
    >>> ls.fit_graph_.indices.shape
    (60, 5)
    """

    def _fit_stats(self, graph, X):
        k = self._k()
        d = graph.distances
        self.scale_ = d[:, k - 1].copy()
        self._scale_prev = d[:, k - 2].copy() if k >= 2 else np.zeros(graph.n_points)

    @staticmethod
    def _ratio(d, s1, s2):
        num = d * d
        den = s1 * s2
        with np.errstate(divide="ignore", invalid="ignore"):
            r = num / den
        r = np.where(den > 0, r, np.where(num > 0, np.inf, 0.0))
        return r

    def _secondary_train(self, graph):
        s = self.scale_
        r = self._ratio(graph.distances, s[:, None], s[graph.indices])
        return -np.expm1(-r), r

    def _secondary_query(self, graph, X):
        k = self._k()
        d = graph.distances
        st = d[:, k - 1][:, None]
        sx = self.scale_[graph.indices]
        joined = d < sx  # t enters x's k-neighbourhood in D u {t}
        sx = np.where(joined, np.maximum(self._scale_prev[graph.indices], d), sx)
        r = self._ratio(d, st, sx)
        return -np.expm1(-r), r


class MutualProximity(_GraphReduction):
    """Mutual proximity (MP), seed 001 eq 4, empiric or with a Gaussian model.

    ``method="empiric"`` (eq 4)::

        MP(x1, x2) = |{j : d(x1, j) > d(x1, x2)} n {j : d(x2, j) > d(x2, x1)}| / (n - 2)

    with j over the set other than x1 and x2 (n its size); the secondary distance
    is ``1 - MP``. Exact over all training points, streamed in column blocks.

    ``method="gaussian"`` (the model seed 001 used through scikit-hubness): each
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
    n_candidates : int, optional
        Candidate width W (default max(5 k, 100); -1: all training points).
    metric : str, default="euclidean"
    working_memory : float, default=256
        Megabytes per streamed block of distances.

    Attributes
    ----------
    mean_, std_ : ndarray of shape (n_train,)
        Gaussian model only: each training point's distance mean and std over the
        other training points.
    fit_graph_ : HubnessGraph

    See Also
    --------
    LocalScaling, DisSimLocal

    References
    ----------
    Schnitzer et al., JMLR 13, 2012 (seed 001 refs [40, 41]).

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

    def __init__(self, n_neighbors=None, *, method="empiric", n_candidates=None, metric="euclidean", working_memory=256):
        super().__init__(n_neighbors, n_candidates=n_candidates, metric=metric, working_memory=working_memory)
        self.method = method

    def _validate(self):
        super()._validate()
        if self.metric not in _BLOCK_METRICS:
            raise ValueError(
                f"The 'metric' parameter of MutualProximity must be one of {_BLOCK_METRICS} "
                f"(the metrics of the brute backend). Got {self.metric!r} instead."
            )
        if self.method not in ("empiric", "gaussian"):
            raise ValueError(
                f"The 'method' parameter of MutualProximity must be a str among "
                f"{{'empiric', 'gaussian'}}. Got {self.method!r} instead."
            )

    def _fit_stats(self, graph, X):
        self._X = X
        if self.method == "gaussian":
            n = X.shape[0]
            rows = np.arange(n)
            count = np.zeros(n)
            mean = np.zeros(n)
            m2 = np.zeros(n)
            for cols in self._column_blocks(n):
                D = self._distance_block(X, cols)
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
    def _log_sf(d, mu, sigma):
        with np.errstate(divide="ignore", invalid="ignore"):
            z = (d - mu) / sigma
            out = log_ndtr(-z)
        step = np.where(d < mu, 0.0, np.where(d > mu, -np.inf, np.log(0.5)))
        return np.where(sigma > 0, out, step)

    def _gauss(self, d, mu1, s1, mu2, s2):
        logmp = self._log_sf(d, mu1, s1) + self._log_sf(d, mu2, s2)
        return -np.expm1(logmp), -logmp

    def _secondary_train(self, graph):
        if self.method == "gaussian":
            ind = graph.indices
            return self._gauss(graph.distances, self.mean_[:, None], self.std_[:, None], self.mean_[ind], self.std_[ind])
        counts = self._empiric_counts(self._X, graph, rows_are_train=True)
        n = self.n_train_
        denom = n - 2
        mp = counts / denom if denom > 0 else np.ones_like(counts, dtype=float)
        return 1.0 - mp, None

    def _secondary_query(self, graph, X):
        d = graph.distances
        ind = graph.indices
        n = self.n_train_
        if self.method == "gaussian":
            # The query's distribution over all of D ...
            mt = np.zeros(X.shape[0])
            s1 = np.zeros(X.shape[0])
            s2 = np.zeros(X.shape[0])
            # two passes (mean, then squared deviations) for accuracy
            for cols in self._column_blocks(X.shape[0]):
                s1 += self._distance_block(X, cols).sum(axis=1)
            mt = s1 / n
            for cols in self._column_blocks(X.shape[0]):
                s2 += ((self._distance_block(X, cols) - mt[:, None]) ** 2).sum(axis=1)
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

    def _empiric_counts(self, A, graph, rows_are_train):
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
        for cols in self._column_blocks(n_rows, _EMPIRIC_BLOCK_COLS):
            start, stop = int(cols[0]), int(cols[-1]) + 1
            b = stop - start
            DA = self._distance_block(A, cols)  # (n_rows, b): d(a, j)
            DU = DA if rows_are_train else self._distance_block(self._X[uniq], cols)  # d(x, j)
            # Bytes per (row, candidate, column) element: the gathered float64
            # distances and two boolean masks; about _EMPIRIC_CHUNK_BYTES in all.
            budget = min(self.working_memory * 2**20, _EMPIRIC_CHUNK_BYTES)
            chunk = max(1, min(n_rows, int(budget // (10 * W * b))))
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


class DisSimLocal(_GraphReduction):
    """Local dissimilarity DSL, seed 001 eq 2.

    ``DSL(x1, x2) = |x1 - x2|^2 - |x1 - c_k(x1)|^2 - |x2 - c_k(x2)|^2`` with
    ``c_k(x)`` the mean of x's k nearest neighbours (k = ``n_neighbors``; seed 001
    section 4.1.2 sets it to the kNN k). Defined for the Euclidean metric only
    (``metric`` "euclidean" or "sqeuclidean"). The values may be negative: the
    graph's ``distances`` hold them as they are (sorted), ``primary_distances``
    the Euclidean distances.

    Parameters
    ----------
    n_neighbors : int, optional
        k; set by the estimator.
    n_candidates : int, optional
        Candidate width W (default max(5 k, 100); -1: all training points).
    metric : {"euclidean", "sqeuclidean"}, default="euclidean"
    working_memory : float, default=256
        Megabytes per chunk of query pairs whose centroid the query changes.

    Attributes
    ----------
    centroid_sqdist_ : ndarray of shape (n_train,)
        ``|x - c_k(x)|^2`` of every training point (leave-one-out neighbours).
    fit_graph_ : HubnessGraph

    See Also
    --------
    LocalScaling, MutualProximity

    References
    ----------
    Hara, Suzuki, Kobayashi, Fukumizu, Radovanovic, "Flattening the density
    gradient for eliminating spatial centrality to reduce hubness", AAAI 2016
    (seed 001 ref [34]).

    Examples
    --------
    >>> import numpy as np
    >>> from mlknn.neighbors import BruteNeighbors, build_graph
    >>> from mlknn.hubness import DisSimLocal
    >>> X = np.random.default_rng(0).normal(size=(60, 20))
    >>> index = BruteNeighbors().fit(X)
    >>> dsl = DisSimLocal(5, n_candidates=30).fit(build_graph(index, None, 30), X)
    >>> dsl.fit_graph_.indices.shape
    (60, 5)
    """

    _needs_X = True

    def _validate(self):
        super()._validate()
        if self.metric not in ("euclidean", "sqeuclidean"):
            raise ValueError(
                f"The 'metric' parameter of DisSimLocal must be 'euclidean' or 'sqeuclidean' "
                f"(DSL is defined in Euclidean space). Got {self.metric!r} instead."
            )

    def _sq(self, d):
        return d if self.metric == "sqeuclidean" else d * d

    def _fit_stats(self, graph, X):
        k = self._k()
        self._X = X
        self._nbr_k = graph.indices[:, k - 1].copy()  # x_(k), the k-th neighbour
        self._dk = graph.distances[:, k - 1].copy()
        C = _centroids(X, graph.indices[:, :k])
        R = X - C  # x - c_k(x)
        self._resid = sp.csr_matrix(R) if sp.issparse(R) else np.asarray(R)
        self.centroid_sqdist_ = _row_sqnorms(self._resid)

    def _secondary_train(self, graph):
        c = self.centroid_sqdist_
        return self._sq(graph.distances) - c[:, None] - c[graph.indices], None

    def _secondary_query(self, graph, X):
        k = self._k()
        ind = graph.indices
        d = graph.distances
        Ct = _centroids_from(self._X, ind[:, :k])
        ct = _row_sqnorms(_sub(X, Ct))  # |t - c_k(t)|^2, c_k over t's k nearest in D
        cx = self.centroid_sqdist_[ind].copy()
        # Pairs where t enters x's k-neighbourhood (replacing x_(k)): recompute.
        r, c = np.nonzero(d < self._dk[ind])
        if r.size:
            x = ind[r, c]
            per = 8 * 4 * max(X.shape[1], 1)
            block = max(1, int(self.working_memory * 2**20 // per))
            for s in range(0, r.size, block):
                rr, xx, cc = r[s : s + block], x[s : s + block], c[s : s + block]
                v = _sub(self._resid[xx], _sub(X[rr], self._X[self._nbr_k[xx]]) / k)
                cx[rr, cc] = _row_sqnorms(v)
        return self._sq(d) - ct[:, None] - cx, None


# ---------------------------------------------------------------- factory
def make_reduction(hubness, *, n_neighbors, metric="euclidean"):
    """The unfitted reduction for an estimator's ``hubness`` parameter.

    Parameters
    ----------
    hubness : {"ls", "mp", "mp-gauss", "dsl"} or reduction object
        A name, or an object with ``fit``, ``transform`` and ``search_width``
        (e.g. ``LocalScaling(n_candidates=50)``), which is cloned.
    n_neighbors : int
        The estimator's k (output width; LS / DSL scale).
    metric : str
        The estimator's metric.

    Returns
    -------
    reduction
    """
    if isinstance(hubness, str):
        if hubness == "ls":
            return LocalScaling(n_neighbors, metric=metric)
        if hubness == "mp":
            return MutualProximity(n_neighbors, method="empiric", metric=metric)
        if hubness == "mp-gauss":
            return MutualProximity(n_neighbors, method="gaussian", metric=metric)
        if hubness == "dsl":
            return DisSimLocal(n_neighbors, metric=metric)
        raise ValueError(
            f"The 'hubness' parameter must be None, one of {list(REDUCTIONS)} or a reduction "
            f"object. Got {hubness!r} instead."
        )
    if not all(hasattr(hubness, m) for m in ("fit", "transform", "search_width")):
        raise ValueError(
            "The 'hubness' parameter must be None, one of "
            f"{list(REDUCTIONS)} or an object with fit, transform and search_width methods. "
            f"Got {type(hubness).__name__} instead."
        )
    reduction = clone(hubness)
    params = reduction.get_params(deep=False) if hasattr(reduction, "get_params") else {}
    update = {"n_neighbors": n_neighbors} if "n_neighbors" in params else {}
    if "metric" in params:
        update["metric"] = metric
    if update:
        reduction.set_params(**update)
    return reduction


# ---------------------------------------------------------------- features
_BLOCK_METRICS = ("euclidean", "sqeuclidean", "cosine")


def _pairwise_distances(A, B, metric):
    """All distances between the rows of A and of B, with the brute backend's formulas.

    MP needs each point's distances to *every* training point, which the k-NN
    protocol of :mod:`mlknn.neighbors` cannot return without sorting whole rows
    (and the brute backend's exact re-computation of every pair is far slower
    than one direct pass). So this one block function lives here, with the brute
    backend's definitions: dense input by exact differences
    (``scipy.spatial.distance.cdist``), sparse input by
    ``|a|^2 + |b|^2 - 2 a.b`` clipped at 0; cosine as half the squared distance
    of the L2-normalised rows.
    """
    if metric not in _BLOCK_METRICS:
        raise ValueError(
            f"The 'metric' parameter of MutualProximity must be one of {_BLOCK_METRICS} "
            f"(the metrics of the brute backend). Got {metric!r} instead."
        )
    if metric == "cosine":
        A, B = _l2_normalize(A), _l2_normalize(B)
    if sp.issparse(A) or sp.issparse(B):
        an, bn = _row_sqnorms(A), _row_sqnorms(B)
        dots = A @ B.T
        dots = dots.toarray() if sp.issparse(dots) else np.asarray(dots)
        sq = an[:, None] + bn[None, :] - 2.0 * dots.astype(np.float64, copy=False)
        np.maximum(sq, 0.0, out=sq)
    else:
        sq = cdist(np.asarray(A, dtype=np.float64), np.asarray(B, dtype=np.float64), "sqeuclidean")
    if metric == "euclidean":
        return np.sqrt(sq, out=sq)
    if metric == "cosine":
        sq *= 0.5
    return sq


def _row_sqnorms(A):
    if sp.issparse(A):
        A = sp.csr_matrix(A)
        return np.asarray(A.multiply(A).sum(axis=1), dtype=np.float64).ravel()
    A = np.asarray(A, dtype=np.float64)
    return np.einsum("ij,ij->i", A, A)


def _sub(A, B):
    out = A - B
    return sp.csr_matrix(out) if sp.issparse(out) else np.asarray(out)


def _centroids(X, nbrs):
    """Mean of each point's neighbours' rows, as one sparse-by-X product."""
    n, k = nbrs.shape
    A = sp.csr_matrix((np.full(n * k, 1.0 / k), nbrs.ravel(), np.arange(0, n * k + 1, k)), shape=(n, X.shape[0]))
    C = A @ X
    return sp.csr_matrix(C) if sp.issparse(C) else np.asarray(C)


def _centroids_from(X_train, nbrs):
    return _centroids(X_train, nbrs)
