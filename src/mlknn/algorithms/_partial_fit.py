"""Exact incremental learning: ``partial_fit`` and the ``max_samples`` sliding window.

A mixin for the kNN estimators whose fitted state is a function of the training
set's leave-one-out graph and labels (ML-kNN's count tables, DML-kNN's, BR-kNN's
label counts, BML-kNN/NC's bounded and radius counts, MLHiKNN's and IBLR's
features of their regressions). The estimator keeps, beside what ``fit`` learns,
the training rows (inside the window) and each row's exact leave-one-out list with
squared distances; a batch is merged into those lists by
:mod:`mlknn.neighbors._incremental` (the batch against every row, O(n b d); never a
search of the old rows again), and the estimator's own ``_fit_graph`` then reads a
graph that is, bit for bit, the one ``fit`` would have searched on the
concatenation. Hence the guarantee: after ``partial_fit`` on batches B1, ..., Bm,
every fitted attribute equals ``fit`` on the concatenation of B1, ..., Bm in that
order (with ``max_samples``: on its last ``max_samples`` rows).

The exact backends (``"brute"``, ``"auto"``, ``"faiss"``, ``"torch"``) keep that
guarantee: the lists are maintained by the exact kernel, whose answers those
backends equal by their contract. The HNSW backends (``"voyager"``, ``"hnswlib"``,
``"faiss-hnsw"``) grow their index instead and keep a weaker, stated one (see
``partial_fit``). A refused batch (wrong shape, NaN, empty) raises before anything
is assigned, so the fitted model is unchanged.
"""

import copy
from dataclasses import dataclass
from typing import Any, Self, cast

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_is_fitted

from ..base import KNNMultiLabelBase, container_kind, num_rows
from ..neighbors import (
    BruteNeighbors,
    FaissHNSWNeighbors,
    FaissNeighbors,
    HnswlibNeighbors,
    NeighborGraph,
    TorchNeighbors,
    get_backend,
)
from ..neighbors import _incremental as incremental
from ..utils._missing_labels import split_unknown_labels, unknown_like
from ..utils._param_validation import Integral, Interval
from ..utils._typing import LabelMatrix, MatrixLike, NDArray
from ..utils._validation import check_label_matrix, validate_features, validate_fit_data, warn_if_unscaled

#: ``max_samples``: None (keep every row) or the window's size.
MAX_SAMPLES_CONSTRAINT = [Interval(Integral, 2, None, closed="left"), None]

#: The backends whose neighbours the incremental lists reproduce (exact ones).
INCREMENTAL_BACKENDS = ("auto", "brute", "faiss", "torch")
_INCREMENTAL_TYPES = (BruteNeighbors, FaissNeighbors, TorchNeighbors)
#: Approximate backends whose index grows by the batch (their contract: docs/streams.md).
GROWING_BACKENDS = ("voyager", "hnswlib", "faiss-hnsw")
# VoyagerNeighbors subclasses HnswlibNeighbors.
_GROWING_TYPES = (HnswlibNeighbors, FaissHNSWNeighbors)

# Parameters that shape the kept state: changing one between calls needs a new start.
_STATE_PARAMS = ("n_neighbors", "metric", "neighbors", "max_samples", "hubness", "missing_labels")


@dataclass
class _StreamState:
    """What ``partial_fit`` keeps between calls (private; pickled with the model)."""

    X: MatrixLike  # the training rows (inside the window), as validated
    Y: LabelMatrix  # their labels, as the estimator's _fit_graph reads them
    unknown: MatrixLike | None  # the unknown entries of Y (None: none), as fit keeps them
    sqdist: NDArray[np.float64]  # (n, width) exact leave-one-out prefixes, squared
    indices: NDArray[np.intp]  # (n, width), incremental.PAD past the exact prefix
    kernel: Any  # the exact kernel fitted on X
    nn: Any  # the estimator's backend when the state was written (fit replaces it)
    params: dict[str, Any]  # _STATE_PARAMS at the start
    width: int  # slots per row
    n_seen: int  # rows received since the start (the window keeps the last ones)
    tables: "_KeptCounts | None" = None  # MLkNN's counts and histograms, for deltas


@dataclass
class _KeptCounts:
    """ML-kNN's training counts C (n, q) and histograms c[j], c'[j] of the kept rows."""

    counts: NDArray[np.int64]
    c1: NDArray[np.int64]
    c0: NDArray[np.int64]


class _HistogramKeeper:
    """MLkNN's ``_kept_histograms`` hook inside ``partial_fit``: c[j] and c'[j] of the
    updated graph from the previous ones, recounting only the rows whose first
    ``width`` neighbours changed, the new rows, and (subtracted) the rows that left.

    Integer counts of the same function of each row's neighbours as ``fit``'s, added
    and subtracted: the histograms are ``fit``'s exactly. ``previous=None`` counts
    every row (the first call, or after a state without counts).
    """

    def __init__(self, previous: _KeptCounts | None = None, Y_previous: LabelMatrix = None,
                 n_drop: int = 0, changed: NDArray[np.intp] | None = None, n_old: int = 0) -> None:
        self.previous, self.Y_previous = previous, Y_previous
        self.n_drop, self.changed, self.n_old = n_drop, changed, n_old
        self.result: _KeptCounts | None = None

    def __call__(self, graph: NeighborGraph, Y: LabelMatrix, n_bins: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        from ._kernels import count_histograms
        from ._mlknn import _counts

        prev = self.previous
        if prev is None:
            counts = np.asarray(_counts(graph, Y))
            c1, c0 = count_histograms(counts, Y, n_bins)
        else:
            assert self.changed is not None
            gone = np.concatenate([np.arange(self.n_drop), self.changed])
            h1, h0 = count_histograms(prev.counts[gone], self.Y_previous[gone], n_bins)
            c1, c0 = prev.c1 - h1, prev.c0 - h0
            rows = np.concatenate([self.changed - self.n_drop, np.arange(self.n_old - self.n_drop, Y.shape[0])])
            counts = np.empty((Y.shape[0], Y.shape[1]), dtype=prev.counts.dtype)
            counts[: self.n_old - self.n_drop] = prev.counts[self.n_drop :]
            fresh = np.asarray(_counts(NeighborGraph(graph.indices[rows], graph.distances[rows], loo=True), Y))
            counts[rows] = fresh
            h1, h0 = count_histograms(fresh, Y[rows], n_bins)
            c1, c0 = c1 + h1, c0 + h0
        self.result = _KeptCounts(counts, c1, c0)
        return c1, c0


class _PartialFitMixin:
    """``partial_fit(X, Y)`` and ``max_samples`` for a :class:`~mlknn.base.KNNMultiLabelBase`."""

    max_samples: int | None

    #: Whether ``partial_fit`` reaches ``fit``'s model bit for bit (not only to a
    #: solver's tolerance); the experiment harness updates only such models.
    _partial_fit_exact: bool = True

    # ------------------------------------------------------------ public API
    def partial_fit(self, X: MatrixLike, Y: MatrixLike, Y_missing: MatrixLike = None, classes: Any = None) -> Self:
        """Learn from one more batch of rows, exactly as ``fit`` on all rows so far.

        The first call is ``fit``. After calls on batches B1, ..., Bm every fitted
        attribute (count tables, priors, regressions' inputs) equals ``fit`` on the
        rows of B1, ..., Bm concatenated in that order, and ``predict_proba`` with
        them; with ``max_samples`` set, ``fit`` on the last ``max_samples`` of those
        rows. Cost per batch of b rows over n kept rows: O(n b d) for the distances
        of the batch to every row (no search of the old rows), O(n d) to refit the
        index, and the estimator's own statistics from the updated graph (see
        docs/streams.md).

        With ``neighbors`` in ``"voyager"``, ``"hnswlib"``, ``"faiss-hnsw"`` (HNSW
        indexes that can add points) the index is grown by the batch, and the model
        equals ``fit_from_graph`` on this graph instead: each new row's list is the
        grown index's answer (queried after the batch was added, its own index
        removed: the backend's approximate contract); each old row's list takes a new row exactly when that row is
        strictly closer than the list's current k-th neighbour (exact distances, as
        on the exact path). ``max_samples`` needs an exact backend.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The batch (at least one row; at least 2 rows and ``n_neighbors + 1``
            in all before the first fitted model exists).
        Y : {array-like, sparse matrix} of shape (n_samples, n_labels)
            Its 0/1 labels, with the number of labels of the first batch. Sparse
            or dense after the first call alike (the first call decides the
            fitted form, as ``fit`` does). NaN marks an unknown entry, as in ``fit``
            (estimators with a ``missing_labels`` parameter).
        Y_missing : {array-like, sparse matrix} of shape (n_samples, n_labels), optional
            1 marks an unknown entry of Y, as in ``fit``.
        classes : ignored
            scikit-learn's signature; every label is binary, ``[0, 1]``.

        Returns
        -------
        self
        """
        state: _StreamState | None = getattr(self, "_stream_", None)
        if not hasattr(self, "n_train_"):
            return cast(Self, self._start_stream(X, Y, Y_missing))
        if state is None or state.nn is not getattr(self, "nn_", None):
            # Fitted by fit: continue from its rows, read back from its index.
            state = self._state_from_fit()
        self._check_state_params(state)
        X, Y, unknown = self._validate_batch(X, Y, Y_missing, state)
        # Everything is computed on a shallow copy and assigned at the end: a failure
        # on the way leaves this model as it was.
        work = copy.copy(self)
        work._advance_stream(state, X, Y, unknown)
        self.__dict__.update(work.__dict__)
        return self

    # ------------------------------------------------------------- internals
    def _fit_from_validated_graph(self, *args: Any, **kwargs: Any) -> None:
        # Every fit (fit, fit_from_graph, and partial_fit's own, which writes a new
        # state afterwards) drops the kept state: a plain fit starts over, and the
        # old rows would only take memory (and space in a saved model).
        self.__dict__.pop("_stream_", None)
        super()._fit_from_validated_graph(*args, **kwargs)  # type: ignore[misc]

    def _start_stream(self: Any, X: MatrixLike, Y: MatrixLike, Y_missing: MatrixLike) -> Any:
        self._validate_params()
        self._check_incremental_backend()
        container = container_kind(Y)
        Y, unknown = split_unknown_labels(self, Y, Y_missing)
        X, Y, y_dtype = validate_fit_data(self, X, Y, sparse_labels=True)
        Y = self._labels_for_fit(Y)
        unknown = unknown_like(unknown, Y)
        if self.max_samples is not None and X.shape[0] > self.max_samples:
            X, Y = X[-self.max_samples :], Y[-self.max_samples :]
            unknown = _kept_unknown(unknown, slice(-self.max_samples, None))
        if not self._normalises_features:
            warn_if_unscaled(X, self)
        width = self.search_width(X.shape[0])
        self._check_n_neighbors(X.shape[0], width)
        params = {name: getattr(self, name, None) for name in _STATE_PARAMS}
        slots = self._state_width()
        nn, kernel = self._fit_indexes(X)
        sq, ind = self._first_lists(nn, kernel, slots)
        work = copy.copy(self)
        tables = work._refit_from_state(X, Y, unknown, sq, ind, kernel, nn, (y_dtype, container), _HistogramKeeper())
        work._stream_ = _StreamState(X, Y, unknown, sq, ind, kernel, nn, params, slots, X.shape[0], tables)
        self.__dict__.update(work.__dict__)
        return self

    def _state_from_fit(self: Any) -> _StreamState:
        """The kept state of a model fitted by ``fit``: its rows from the index, one
        leave-one-out search (``fit``'s cost, once)."""
        nn = getattr(self, "nn_", None)
        X, Y = getattr(nn, "_fit_X", None), getattr(self, "_fit_Y", None)
        if (X is None or Y is None or self.metric == "cosine"
                or not isinstance(nn, _INCREMENTAL_TYPES + _GROWING_TYPES)
                or X.shape[0] != self.n_train_):
            raise ValueError(
                f"This {type(self).__name__} was fitted with fit() in a way partial_fit cannot continue "
                f"(neighbors={self.neighbors!r}, metric={self.metric!r}: its rows cannot be read back "
                "exactly). Start with partial_fit on the first batch (its first call fits), or fit on all "
                "the rows again."
            )
        self._check_incremental_backend()
        slots = self._state_width()
        kernel = nn if isinstance(nn, BruteNeighbors) else BruteNeighbors(metric=self.metric, n_jobs=self.n_jobs).fit(X)
        sq, ind = self._first_lists(nn, kernel, slots)
        params = {name: getattr(self, name, None) for name in _STATE_PARAMS}
        unknown = getattr(self, "_fit_unknown", None)
        return _StreamState(X, Y, unknown, sq, ind, kernel, nn, params, slots, X.shape[0])

    def _advance_stream(
        self: Any, state: _StreamState, X: MatrixLike, Y: LabelMatrix, unknown: MatrixLike | None
    ) -> None:
        n_seen = state.n_seen + X.shape[0]
        window = self.max_samples
        keeper = _HistogramKeeper()
        if window is not None and X.shape[0] >= window:
            # The batch alone fills the window: the old rows all leave.
            X_all, Y_all = X[-window:], Y[-window:]
            unknown_all = _kept_unknown(unknown, slice(-window, None))
            nn, kernel = self._fit_indexes(X_all)
            sq, ind = incremental.loo_state(kernel, min(state.width, X_all.shape[0] - 1))
            sq, ind = _pad(sq, ind, state.width)
        else:
            n_old = state.X.shape[0]
            X_all, Y_all = _stack(state.X, X), _stack_labels(state.Y, Y)
            unknown_all = _stack_unknown(state.unknown, unknown, state.Y, Y)
            if isinstance(state.nn, _GROWING_TYPES):
                nn, kernel = self._grow_indexes(state.nn, X, X_all)
            else:
                nn, kernel = self._fit_indexes(X_all)
            sq, ind = incremental.append_rows(kernel, n_old, state.sqdist, state.indices, state.width)
            if nn is not state.nn and isinstance(nn, _GROWING_TYPES):
                # The new rows' own lists are the grown index's answer (the old rows'
                # updates above are exact: append_rows compares true distances).
                sq[n_old:], ind[n_old:] = incremental.approximate_lists(nn, kernel, X, n_old, state.width)
            n_drop = 0 if window is None else max(0, X_all.shape[0] - window)
            if n_drop:
                X_all, Y_all = X_all[n_drop:], Y_all[n_drop:]
                unknown_all = _kept_unknown(unknown_all, slice(n_drop, None))
                nn, kernel = self._fit_indexes(X_all)
                sq, ind = incremental.drop_first_rows(kernel, n_drop, sq, ind, state.width,
                                                      needed=self.search_width(X_all.shape[0]))
            if state.tables is not None:
                # The kept old rows whose first k neighbours changed (indices shift with the window).
                w = self.n_neighbors
                moved = np.any(state.indices[n_drop:, :w] - n_drop != ind[: n_old - n_drop, :w], axis=1)
                keeper = _HistogramKeeper(state.tables, state.Y, n_drop, np.flatnonzero(moved) + n_drop, n_old)
        self._check_n_neighbors(X_all.shape[0], self.search_width(X_all.shape[0]))
        # Estimators with logistic regressions (MLHiKNN, IBLR) start them from the
        # current coefficients (_previous_regressions).
        coef, intercept = getattr(self, "coef_", None), getattr(self, "intercept_", None)
        self._warm_start = None if coef is None or intercept is None else (coef, intercept)
        tables = self._refit_from_state(X_all, Y_all, unknown_all, sq, ind, kernel, nn,
                                        (self._y_dtype, self._y_container), keeper)
        self._stream_ = _StreamState(X_all, Y_all, unknown_all, sq, ind, kernel, nn, state.params, state.width,
                                     n_seen, tables)
        self._warm_start = None

    def _previous_regressions(self, labels: NDArray[np.intp]) -> tuple[NDArray[np.float64], NDArray[np.float64]] | None:
        """The model's current coefficients and intercepts of ``labels``, as a warm
        start of their logistic regressions inside ``partial_fit``; None outside it.

        A label without a regression so far (constant until now: all-zero
        coefficients and intercept) gets a NaN intercept: the solver's default start.
        """
        previous = getattr(self, "_warm_start", None)
        if previous is None:
            return None
        coef, intercept = previous[0][labels], np.array(previous[1][labels], dtype=np.float64)
        intercept[~(coef.any(axis=1) | (intercept != 0))] = np.nan
        return np.asarray(coef, dtype=np.float64), intercept

    def _refit_from_state(
        self: Any, X: MatrixLike, Y: LabelMatrix, unknown: MatrixLike | None, sq: NDArray[np.float64],
        ind: NDArray[np.intp],
        kernel: Any, nn: Any, y_kind: tuple[Any, Any], keeper: _HistogramKeeper | None = None,
    ) -> _KeptCounts | None:
        """``fit``'s last steps on the kept graph: the hubness hook and ``_fit_graph``
        (MLkNN's histograms through ``keeper`` where it can keep them); returns the
        kept counts, or None."""
        width = self.search_width(X.shape[0])
        graph = NeighborGraph(np.ascontiguousarray(ind[:, :width]),
                              incremental.metric_distances(kernel, np.ascontiguousarray(sq[:, :width])), loo=True)
        self.n_features_in_ = X.shape[1]
        self.nn_ = nn
        graph = self._transform_graph(graph, X, fit=True)
        self._kept_histograms = keeper if keeper is not None and self._keeps_counts(Y, unknown) else None
        try:
            self._fit_from_validated_graph(graph, Y, X, y_kind, unknown)
        finally:
            del self._kept_histograms
        return None if keeper is None else keeper.result

    def _keeps_counts(self: Any, Y: LabelMatrix, unknown: MatrixLike | None) -> bool:
        """Whether the count tables are updated by deltas: MLkNN on a complete dense Y
        without hubness reduction (its neighbourhoods are then the kept lists' first k)."""
        return (bool(getattr(self, "_count_deltas", False)) and not sp.issparse(Y) and unknown is None
                and getattr(self, "hubness", None) is None)

    def _fit_indexes(self: Any, X: MatrixLike) -> tuple[Any, Any]:
        """The estimator's backend on X and the exact kernel the lists are kept with
        (the same object for the brute backend)."""
        nn = get_backend(self.neighbors, metric=self.metric, n_jobs=self.n_jobs,
                         random_state=getattr(self, "random_state", None)).fit(X)
        kernel = nn if isinstance(nn, BruteNeighbors) else BruteNeighbors(metric=self.metric, n_jobs=self.n_jobs).fit(X)
        return nn, kernel

    def _first_lists(self: Any, nn: Any, kernel: Any, slots: int) -> tuple[NDArray[np.float64], NDArray[np.intp]]:
        """The first kept lists: the exact leave-one-out search, or, for a backend
        that grows, its own leave-one-out graph (with exact squared distances)."""
        if isinstance(nn, _GROWING_TYPES):
            return incremental.approximate_lists(nn, kernel, None, 0, slots)
        n = kernel._index.layout.X.shape[0]
        return _pad(*incremental.loo_state(kernel, min(slots, n - 1)), slots)

    def _grow_indexes(self: Any, nn: Any, X: MatrixLike, X_all: MatrixLike) -> tuple[Any, Any]:
        """The approximate index grown by the batch (a copy: a failure leaves the
        fitted one as it was) and the exact kernel on every row."""
        grown = copy.deepcopy(nn).add(X)
        return grown, BruteNeighbors(metric=self.metric, n_jobs=self.n_jobs).fit(X_all)

    def _state_width(self: Any) -> int:
        """Slots per row: the search width, twice that with a window (the spare
        neighbours stand in when a row's neighbours leave it)."""
        width = int(self._search_width())
        return 2 * width if self.max_samples is not None else width

    def _check_incremental_backend(self: Any) -> None:
        neighbors = self.neighbors
        ok = neighbors in INCREMENTAL_BACKENDS if isinstance(neighbors, str) else isinstance(
            neighbors, _INCREMENTAL_TYPES)
        grows = neighbors in GROWING_BACKENDS if isinstance(neighbors, str) else isinstance(
            neighbors, _GROWING_TYPES)
        name = neighbors if isinstance(neighbors, str) else type(neighbors).__name__
        if not (ok or grows):
            raise ValueError(
                f"partial_fit of {type(self).__name__} needs a backend whose neighbour lists it can "
                f"extend: an exact one, neighbors in {INCREMENTAL_BACKENDS}, or an approximate one whose "
                f"index can add points, neighbors in {GROWING_BACKENDS} (see docs/streams.md for its "
                f"contract). Got neighbors={name!r}, whose index cannot be extended (refit with fit instead)."
            )
        if grows and self.max_samples is not None:
            raise ValueError(
                f"partial_fit of {type(self).__name__} with max_samples={self.max_samples} needs an exact "
                f"backend, neighbors in {INCREMENTAL_BACKENDS} (got neighbors={name!r}: an approximate index "
                "cannot remove the rows that leave the window)."
            )
        if type(self)._transform_features is not KNNMultiLabelBase._transform_features:
            raise ValueError(f"partial_fit of {type(self).__name__} is not available: it rescales X on fit.")

    def _check_state_params(self: Any, state: _StreamState) -> None:
        changed = [name for name, value in state.params.items() if getattr(self, name, None) is not value
                   and getattr(self, name, None) != value]
        if changed:
            raise ValueError(
                f"The parameters {changed} of {type(self).__name__} changed since partial_fit started "
                "(they shape the kept neighbour lists); call fit, or start over with a fresh estimator."
            )

    def _validate_batch(
        self: Any, X: MatrixLike, Y: MatrixLike, Y_missing: MatrixLike, state: _StreamState
    ) -> tuple[MatrixLike, LabelMatrix, MatrixLike | None]:
        """The batch validated against the fitted model, or an error naming the problem."""
        check_is_fitted(self)
        name = type(self).__name__
        if num_rows(X) == 0:
            raise ValueError(f"partial_fit of {name} got an empty batch (X has 0 rows); pass at least one row.")
        X = validate_features(self, X, reset=False)
        Y, unknown = _split_batch_labels(self, Y, Y_missing)
        Y = check_label_matrix(Y, n_samples=X.shape[0], accept_sparse=True)
        if Y.shape[1] != self.n_labels_:
            raise ValueError(
                f"partial_fit of {name}: Y has {Y.shape[1]} labels, but the model was fitted with "
                f"n_labels = {self.n_labels_}."
            )
        if self.sparse_labels_:
            if not sp.issparse(Y):
                Y = check_label_matrix(sp.csr_array(Y), accept_sparse=True)
        else:
            Y = Y.toarray() if sp.issparse(Y) else Y
        if sp.issparse(X) != sp.issparse(state.X):
            kind = "sparse" if sp.issparse(state.X) else "dense"
            raise ValueError(f"partial_fit of {name} was started on {kind} X; pass every batch {kind}.")
        return X, Y, unknown_like(unknown, Y)


def _split_batch_labels(est: Any, Y: MatrixLike, Y_missing: MatrixLike) -> tuple[MatrixLike, MatrixLike | None]:
    """``split_unknown_labels`` for a batch, which may be wholly unlabelled (a row of
    a stream whose labels are all unknown): ``fit`` refuses a Y with no observed
    entry, but the rows seen so far have some, so the batch is taken as it is."""
    if getattr(est, "missing_labels", None) is None or sp.issparse(Y):
        return split_unknown_labels(est, Y, Y_missing)
    values = np.asarray(Y)
    unknown = np.isnan(values) if values.dtype.kind == "f" else np.zeros(values.shape, dtype=bool)
    if Y_missing is not None:
        mask = np.asarray(Y_missing.toarray() if sp.issparse(Y_missing) else Y_missing)
        if mask.shape == unknown.shape:
            unknown = unknown | mask.astype(bool)
    if not (unknown.size and unknown.all()):
        return split_unknown_labels(est, Y, Y_missing)
    zeros = np.zeros(values.shape, dtype=np.uint8)
    return zeros, (None if est.missing_labels == "negative" else unknown)


def _pad(sq: NDArray[np.float64], ind: NDArray[np.intp], width: int) -> tuple[NDArray[np.float64], NDArray[np.intp]]:
    """Lists narrower than ``width`` (few rows so far) padded past their end."""
    missing = width - sq.shape[1]
    if missing <= 0:
        return sq, ind
    n = sq.shape[0]
    return (np.hstack([sq, np.full((n, missing), np.inf)]),
            np.hstack([ind, np.full((n, missing), incremental.PAD, dtype=np.intp)]))


def _stack(A: MatrixLike, B: MatrixLike) -> MatrixLike:
    if sp.issparse(A):
        return sp.vstack([A, B], format="csr")
    return np.vstack([A, B.astype(np.result_type(A, B), copy=False)])


def _stack_labels(A: LabelMatrix, B: LabelMatrix) -> LabelMatrix:
    if sp.issparse(A):
        return check_label_matrix(sp.vstack([A, B], format="csr"), accept_sparse=True)
    return np.vstack([A, B])


def _kept_unknown(unknown: MatrixLike | None, rows: slice) -> MatrixLike | None:
    """The unknown entries of the kept rows; None when none is left (as fit has it)."""
    if unknown is None:
        return None
    kept = unknown[rows]
    return kept if (kept.nnz if sp.issparse(kept) else kept.any()) else None


def _stack_unknown(A: MatrixLike | None, B: MatrixLike | None, YA: LabelMatrix, YB: LabelMatrix) -> MatrixLike | None:
    if A is None and B is None:
        return None
    if sp.issparse(YA):
        A = sp.csr_array(YA.shape, dtype=np.uint8) if A is None else A
        B = sp.csr_array(YB.shape, dtype=np.uint8) if B is None else B
        out = sp.csr_array(sp.vstack([A, B], format="csr"))
        out.sort_indices()
        return out
    A = np.zeros(YA.shape, dtype=np.uint8) if A is None else A
    B = np.zeros(YB.shape, dtype=np.uint8) if B is None else B
    return np.vstack([A, B])
