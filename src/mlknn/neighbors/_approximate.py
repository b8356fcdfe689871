"""The base class of the approximate (and wrapped exact) backends: faiss, hnswlib, pynndescent.

The wrapped library proposes candidates; this module turns them into mlknn's
``kneighbors`` contract with the exact kernel's float64 re-ranking.
"""

from abc import ABCMeta, abstractmethod
from typing import Literal, Self, overload

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils import gen_batches
from sklearn.utils.validation import check_is_fitted

from ..utils._docstrings import fill_doc
from ..utils._typing import FloatArray, IntArray, MatrixLike, NDArray
from ._brute import BruteNeighbors
from ._contract import (
    check_metric,
    check_n_neighbors,
    check_query_features,
    drop_own_index,
    merge_topk,
    prepare_points,
    prepared_sqnorms,
)
from ._exact import exact_sqdist

#: ``kneighbors``' answer with distances: (float64 distances, intp indices), each (n_queries, k).
KNeighbors = tuple[NDArray[np.float64], NDArray[np.intp]]


class _CandidateBackend(BaseEstimator, metaclass=ABCMeta):
    """Base of the backends that wrap another library's search (faiss, hnswlib, ...).

    The wrapped library proposes candidates (``_search``: indices and approximate
    squared distances, ``-1`` for a missing slot); this class turns them into
    mlknn's contract:

    * each candidate's squared distance is recomputed exactly in float64 (as in
      :class:`BruteNeighbors`) and a row is ordered by (distance, training index);
    * leave-one-out (``X=None``) searches the training points with one extra slot
      and removes the point's own index wherever it appears (never "the first
      column": with duplicates the point itself need not come first). When the
      point is absent (more duplicates than slots) the last candidate is dropped;
    * a row with fewer than k valid candidates is answered by brute force;
    * ``exact = True`` subclasses also verify each row: the k-th exact distance
      must be below the smallest approximate distance any non-candidate can have
      (the last candidate's, minus a rounding bound). A row that fails (ties or
      near-ties at the boundary) is recomputed by brute force, so an exact backend
      returns exactly what ``neighbors="brute"`` returns, tie rule included.

    Subclasses set ``_name``, ``exact``, ``_accepts_sparse`` and implement
    ``_build(X32)`` and ``_search(Q32 or None, width)``.
    """

    exact: bool = False
    _name: str = "?"
    _accepts_sparse: bool = False
    #: Extra candidates searched beyond k (+1 for leave-one-out) before re-ranking.
    _margin: int = 8
    #: Rounding bound of the wrapped float32 distances, relative to |q|^2 + max |x|^2.
    _rtol: float = 1e-4

    # Set by the subclasses' __init__ (metric, n_jobs) and by fit.
    metric: str
    n_jobs: int | None
    n_samples_fit_: int
    n_features_in_: int
    _fit_X: MatrixLike
    _fit_sqnorm: NDArray[np.float64]
    _fit_sqnorm_max: float
    _brute: BruteNeighbors | None

    # -------------------------------------------------------------- input
    def _prepare(self, X: MatrixLike) -> MatrixLike:
        if sp.issparse(X) and not self._accepts_sparse:
            raise TypeError(
                f"neighbors={self._name!r} does not accept sparse input (it indexes dense "
                "float32 vectors). Densify X (X.toarray()) or use neighbors='brute' or "
                "neighbors='pynndescent'."
            )
        return prepare_points(X, self.metric, accept_sparse=self._accepts_sparse)

    @staticmethod
    def _as_float32(X: MatrixLike) -> MatrixLike:
        if sp.issparse(X):
            return X.astype(np.float32)
        return np.ascontiguousarray(X, dtype=np.float32)

    def fit(self, X: MatrixLike, y: object = None) -> Self:
        """Index the training points.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Sparse input only where the backend supports it.
        y : None
            Ignored (scikit-learn's signature).

        Returns
        -------
        self
            The fitted backend.
        """
        check_metric(self.metric, f"the {self._name} backend")
        X = self._prepare(X)
        self._fit_X = X
        self._fit_sqnorm = prepared_sqnorms(X)
        self._fit_sqnorm_max = float(self._fit_sqnorm.max(initial=0.0))
        self._brute = None
        self.n_samples_fit_ = X.shape[0]
        self.n_features_in_ = X.shape[1]
        self._build(self._as_float32(X))
        return self

    @fill_doc
    def recall(
        self,
        X: MatrixLike = None,
        n_neighbors: int = 10,
        n_samples: int = 1000,
        random_state: int | np.random.RandomState | None = None,
    ) -> float:
        """Recall@k of this fitted index against exact search, on a sample.

        :func:`mlknn.neighbors.estimate_recall` on the training points the index
        keeps (1.0 up to sampling for an exact backend).

        Parameters
        ----------
        X : {array-like, sparse matrix}, optional
            Queries; None measures the leave-one-out graph of the training set.
        {n_neighbors}
        n_samples : int, default=1000
            Rows drawn without replacement; all if fewer.
        random_state : int, optional
            Seed of the randomised parts of the search, where the backend has any.

        Returns
        -------
        float
        """
        from ._reuse import estimate_recall

        check_is_fitted(self, "n_samples_fit_")
        approx = None
        if X is not None:
            X = self._prepare(X)
        elif self._loo_reads_built_graph(n_neighbors):
            # The leave-one-out answer comes from a graph built at fit, not from
            # searching the training points as queries: measure that graph itself.
            approx = self.kneighbors(None, n_neighbors, return_distance=False)
        return estimate_recall(self, self._fit_X, X, n_neighbors=n_neighbors, n_samples=n_samples,
                               random_state=random_state, approx_indices=approx)

    @abstractmethod
    def _build(self, X32: MatrixLike) -> None:
        """Index the float32 training points (each subclass wraps its library here)."""

    def add(self, X: MatrixLike) -> Self:
        """Append points to the fitted index (backends whose library can add points).

        The new points take the indices ``n_samples_fit_, ...`` in their order; the
        index is grown, not rebuilt, so its graph is not the one ``fit`` on all the
        points would build (the approximate contract is the library's, as for ``fit``).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The points to add.

        Returns
        -------
        self
        """
        check_is_fitted(self, "n_samples_fit_")
        X = check_query_features(self._prepare(X), self.n_features_in_)
        self._grow(self._as_float32(X))
        stack = sp.vstack if sp.issparse(X) else np.vstack
        self._fit_X = stack([self._fit_X, X])
        self._fit_sqnorm = np.concatenate([self._fit_sqnorm, prepared_sqnorms(X)])
        self._fit_sqnorm_max = float(self._fit_sqnorm.max(initial=0.0))
        self._brute = None
        self.n_samples_fit_ = self._fit_X.shape[0]
        return self

    def _grow(self, X32: MatrixLike) -> None:
        """Add float32 points to the built index (only backends that can)."""
        raise NotImplementedError(f"neighbors={self._name!r} cannot add points to a fitted index.")

    @abstractmethod
    def _search(self, Q32: MatrixLike | None, width: int) -> tuple[IntArray, FloatArray]:
        """``width`` candidates of each query (None: the training points, leave-one-out):
        indices (``-1`` for a missing slot) and approximate squared distances."""

    def _loo_width(self, n_neighbors: int) -> int:
        """Candidates asked of the library for a leave-one-out search: one slot for
        the point itself, plus the re-ranking margin."""
        return min(n_neighbors + 1 + self._margin, self.n_samples_fit_)

    def _loo_reads_built_graph(self, n_neighbors: int) -> bool:
        """Whether ``kneighbors(None, n_neighbors)`` reads a graph built at fit
        (then measuring it costs no search) rather than searching the training points."""
        return False

    def _fallback(self) -> BruteNeighbors:
        if self._brute is None:
            # Shares the data; the brute index only adds |x|^2 and its own GEMM layout.
            self._brute = BruteNeighbors(metric="sqeuclidean").fit(self._fit_X)
        return self._brute

    # ------------------------------------------------------------- search
    @overload
    def kneighbors(
        self, X: MatrixLike = None, n_neighbors: int = 10, return_distance: Literal[True] = True
    ) -> KNeighbors: ...

    @overload
    def kneighbors(
        self, X: MatrixLike, n_neighbors: int, return_distance: Literal[False]
    ) -> NDArray[np.intp]: ...

    @overload
    def kneighbors(
        self, X: MatrixLike = None, n_neighbors: int = 10, *, return_distance: Literal[False]
    ) -> NDArray[np.intp]: ...

    @overload
    def kneighbors(
        self, X: MatrixLike = None, n_neighbors: int = 10, return_distance: bool = True
    ) -> KNeighbors | NDArray[np.intp]: ...

    def kneighbors(
        self, X: MatrixLike = None, n_neighbors: int = 10, return_distance: bool = True
    ) -> KNeighbors | NDArray[np.intp]:
        """The ``n_neighbors`` nearest training points of each query.

        Same contract as :meth:`BruteNeighbors.kneighbors`: distances ascending,
        ties by the lower index, exact float64 distances for the neighbours
        returned, ``X=None`` for leave-one-out.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_queries, n_features), default=None
            Queries; None: the leave-one-out graph of the training points.
        n_neighbors : int, default=10
            k.
        return_distance : bool, default=True
            Also return the distances.

        Returns
        -------
        distances : ndarray of shape (n_queries, n_neighbors)
            Float64, ascending; only when ``return_distance`` is True.
        indices : ndarray of shape (n_queries, n_neighbors)
            Training indices (ties by the lower index).
        """
        check_is_fitted(self, "n_samples_fit_")
        loo = X is None
        n_fit = self.n_samples_fit_
        k = check_n_neighbors(n_neighbors, n_fit, loo)
        if loo:
            Q, qn, own = self._fit_X, self._fit_sqnorm, np.arange(n_fit)
        else:
            Q = check_query_features(self._prepare(X), self.n_features_in_)
            qn, own = prepared_sqnorms(Q), None
        width = self._loo_width(k) if loo else min(k + self._margin, n_fit)
        cand, approx = self._search(None if loo else self._as_float32(Q), width)
        cand, approx = np.asarray(cand), np.asarray(approx)
        sq = np.empty((Q.shape[0], k))
        ind = np.empty((Q.shape[0], k), dtype=np.intp)
        redo = np.zeros(Q.shape[0], dtype=bool)
        # 8192 rows re-ranked at once: bounds the float64 copies of the queries.
        for rows in gen_batches(Q.shape[0], 8192):
            sq[rows], ind[rows], redo[rows] = self._rerank(
                Q[rows], qn[rows], None if own is None else own[rows], cand[rows], approx[rows], k
            )
        if redo.any():
            rows = np.flatnonzero(redo)
            sq[rows], ind[rows] = self._brute_rows(Q, rows, own, k)
        if self.metric == "euclidean":
            np.sqrt(sq, out=sq)
        elif self.metric == "cosine":
            sq *= 0.5
        return (sq, ind) if return_distance else ind

    def _rerank(
        self,
        Q: MatrixLike,
        qn: NDArray[np.float64],
        own: NDArray[np.intp] | None,
        cand: IntArray,
        approx: FloatArray,
        k: int,
    ) -> tuple[NDArray[np.float64], NDArray[np.intp], NDArray[np.bool_]]:
        n_q, width = cand.shape
        n_fit = self.n_samples_fit_
        cand = cand.astype(np.intp, copy=False)
        valid = (cand >= 0) & (cand < n_fit)
        if own is not None:
            valid &= cand != own[:, None]
        r, c = np.divmod(np.flatnonzero(valid), width)
        exact = np.full((n_q, width), np.inf)
        exact[r, c] = exact_sqdist(Q, self._fit_X, r, cand[r, c])
        keys = np.where(valid, cand, n_fit)
        sq, ind = merge_topk(k, (exact, keys))
        redo = valid.sum(axis=1) < k
        if self.exact and width < n_fit:
            # Every point outside the candidates has an approximate distance of at
            # least the last candidate's; its exact one is at least that minus delta.
            last = np.where(cand >= 0, approx, -np.inf).max(axis=1).astype(np.float64)
            delta = self._rtol * (qn + self._fit_sqnorm_max)
            redo |= ~(sq[:, -1] < last - delta)
        return sq, ind, redo

    def _brute_rows(
        self, Q: MatrixLike, rows: NDArray[np.intp], own: NDArray[np.intp] | None, k: int
    ) -> KNeighbors:
        """Exact answer for some rows: brute-force queries (k + 1 and self removed for LOO)."""
        brute = self._fallback()
        sq: NDArray[np.float64]
        ind: NDArray[np.intp]
        if own is None:
            sq, ind = brute.kneighbors(Q[rows], k)
            return sq, ind
        # The exact (k+1)-list without the point's own index is its leave-one-out k-list.
        sq, ind = brute.kneighbors(Q[rows], k + 1)
        sq, ind = drop_own_index(ind, own[rows], sq)
        return sq, ind

