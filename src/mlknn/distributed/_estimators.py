"""Fit and predict any mlknn kNN estimator with the heavy parts on a Dask cluster.

What runs where
---------------
On the workers:

* the neighbour searches (all the O(n^2 d) work): the training set's
  leave-one-out graph for ``fit`` and the queries' graph for ``predict*``
  (:class:`~mlknn.distributed.TrainingIndex`, exact, block by block);
* the scoring of the estimators whose scores are computed row by row (ML-kNN,
  DML-kNN, BML-kNN, NC, BR-kNN and its variants): each query block's graph stays
  on the worker that merged it and is turned into scores there by the fitted
  estimator (scattered once per fit) with ``predict_proba_from_graph`` /
  ``predict_from_graph``.

On the client (small, and what makes the model):

* the training leave-one-out graph (n x k indices and distances), gathered once;
* ``estimator.fit_from_graph(graph, Y, X)``: ML-kNN's prior and likelihood tables,
  DMLkNN's and BMLkNN's count tables, MLHiKNN's k-occurrences and per-label
  logistic regressions, IBLR's per-label logistic regressions, the hubness
  reduction's statistics. These are O(n k q) (plus the q regressions) and need
  the whole graph at once;
* Y, and X when the estimator reads the training features (IBLR-ML+, hubness
  reduction MP / DSL, the radius counts of NeighborhoodClassifier);
* the scoring of IBLR and MLHiKNN (and MP-Gauss hubness reduction): the query
  graph is gathered and scored in one call (``scoring="auto"``). Their scores
  go through BLAS matrix products, and BLAS computes a row with different kernels
  depending on how many rows are multiplied at once, so scoring the queries in
  blocks changes the last bit of some scores -- on one machine too
  (``est.predict_proba(Q)`` vs. stacking ``est.predict_proba(Q[i:i+25])``).
  ``scoring="workers"`` scores them on the workers anyway (equal to ~1e-16).

The results equal the single-machine estimator's exactly: same graph (see
:mod:`mlknn.distributed._graph`), same ``fit_from_graph``, and scoring is row-wise.
"""

import warnings
from numbers import Integral
from typing import TYPE_CHECKING, Any, Self

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.utils.validation import check_is_fitted

from ..base import MultiLabelMixin
from ..neighbors import BruteNeighbors, NeighborGraph, is_exact
from ..utils._param_validation import Interval, StrOptions
from ..utils._typing import FloatArray, MatrixLike, NDArray
from ._blocks import Blocks, _is_dask_array, _validate_local
from ._client import Client, Future, get_client
from ._graph import TrainingIndex, _gather_with_recovery

if TYPE_CHECKING:
    from ..base import KNNMultiLabelBase

__all__ = ["DistributedKNN"]


def _check_knn_estimator(estimator: Any) -> "KNNMultiLabelBase":
    from sklearn.base import clone

    from ..base import KNNMultiLabelBase

    if not isinstance(estimator, KNNMultiLabelBase):
        raise TypeError(
            "DistributedKNN needs a kNN estimator of mlknn (a KNNMultiLabelBase: "
            f"MLkNN, DMLkNN, MLHiKNN, BMLkNN, BRkNN, IBLR, ...). Got {type(estimator).__name__} instead."
        )
    est: KNNMultiLabelBase = clone(estimator)
    est._validate_params()
    neighbors = est.neighbors
    if isinstance(neighbors, str) and neighbors == "precomputed":
        raise ValueError("DistributedKNN searches neighbours itself; neighbors='precomputed' cannot be used.")
    if not is_exact(neighbors):
        warnings.warn(
            f"DistributedKNN always searches exactly (the brute kernel); the estimator's approximate "
            f"neighbors={neighbors!r} backend is not used.",
            UserWarning,
            stacklevel=3,
        )
    return est


# What an estimator needs is read from its declared capabilities
# (``KNNMultiLabelBase.knn_capabilities``), never guessed from private names:
#
# * ``"uses_features"``: fit_from_graph / predict read X as well as the graph;
# * ``"radius_counts"``: it counts radius neighbourhoods through a fitted index
#   (NeighborhoodClassifier), so a single-machine index is kept;
# * ``"row_scoring"``: its scores are computed row by row with no BLAS product over
#   the query rows (hubness reduction included), so scoring the queries in blocks
#   is bit-identical to scoring them at once. The others (IBLR and MLHiKNN compute
#   ``Z @ coef_.T``: BLAS picks different kernels for different numbers of rows;
#   MP-Gauss sums over blocks sized by the rows) are scored on the client unless
#   ``scoring="workers"``.
def _capability(est: "KNNMultiLabelBase", key: str) -> bool:
    # A missing key reads False: the safe choice (X sent, index kept, client scoring).
    return bool(est.knn_capabilities().get(key, False))


def _score_block(
    estimator: "KNNMultiLabelBase", part: tuple[NDArray[Any], NDArray[Any]], X_block: MatrixLike, method: str
) -> MatrixLike:
    """Worker side: one query block's graph -> scores (or 0/1 predictions)."""
    dist, ind = part
    graph = NeighborGraph(ind, dist, loo=False)
    if X_block is not None and not hasattr(X_block, "shape"):
        X_block = np.asarray(X_block)
    return getattr(estimator, method)(graph, X_block)


def _local(X: Any) -> MatrixLike:
    return X.compute() if _is_dask_array(X) else X


class DistributedKNN(MultiLabelMixin, MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    """A kNN estimator of mlknn fitted and applied on a Dask cluster.

    ``DistributedKNN(MLkNN(n_neighbors=10), client).fit(X, Y).predict_proba(Q)``
    equals ``MLkNN(n_neighbors=10).fit(X, Y).predict_proba(Q)`` exactly (every kNN
    estimator, every metric of the brute backend, hubness reduction included).

    Parameters
    ----------
    estimator : KNNMultiLabelBase
        The unfitted estimator (cloned; the user's object is not changed). Its
        ``neighbors`` backend is replaced by the exact distributed search.
    client : distributed.Client, optional
        Default: the current default client.
    train_block, query_block : int, optional
        Rows per block of the training set / of the queries (see
        :func:`mlknn.distributed.kneighbors_graph`).
    retries : int, default=1
        ``retries=`` of every task.
    scoring : {"auto", "workers", "client"}, default="auto"
        Where the queries' graphs become scores. "workers": each query block is
        scored on the worker that merged its graph (the fitted estimator is
        scattered to every worker). "client": the query graph (n_queries x k) is
        gathered and scored here in one call, exactly what the single-machine
        ``predict_proba`` computes. "auto": "workers" for the estimators whose
        scores do not depend on how the queries are blocked (ML-kNN, DML-kNN,
        BML-kNN, NC, BR-kNN/-a/-b; hubness none, LS, MP or DSL), "client" for the
        others (IBLR, MLHiKNN, MP-Gauss), whose BLAS products can differ in the
        last bit when the queries are split, even on one machine.
    keep_index : bool or "auto", default="auto"
        Also fit a single-machine index on the client and keep it as the fitted
        estimator's ``nn_`` (needs the training set here; makes
        ``estimator_.predict(X)`` work without a cluster). "auto": only for the
        estimators that need it (NeighborhoodClassifier's radius counts).

    Attributes
    ----------
    estimator_ : KNNMultiLabelBase
        The fitted estimator (a plain mlknn estimator, picklable and savable).
    train_ : TrainingIndex
        The training blocks and block indices on the cluster.
    n_features_in_ : int

    See Also
    --------
    DaskNeighbors : Only the neighbour search on the cluster (``neighbors="dask"``).
    kneighbors_graph : The exact distributed search behind both.

    Notes
    -----
    See the module docstring for what runs on the workers and what stays on the
    client. Inputs may be numpy arrays, scipy sparse matrices or dask arrays; a
    dask array is read by the workers, and only computed here when the estimator
    needs the training features (IBLR-ML+, MP / DSL hubness reduction,
    NeighborhoodClassifier) or for Y.

    A scikit-learn meta-estimator: ``get_params(deep=True)`` exposes the wrapped
    estimator's parameters as ``estimator__<name>`` (so ``GridSearchCV`` and
    ``set_params(estimator__n_neighbors=20)`` work), and ``sklearn.base.clone``
    clones the wrapped estimator but keeps the *same* ``client`` object (a Dask
    client is a connection, not a value to deep-copy).

    Examples
    --------
    >>> # not run in the doctests: starting a Dask cluster takes seconds
    >>> import numpy as np
    >>> from mlknn import MLkNN
    >>> from mlknn.datasets import make_multilabel
    >>> from mlknn.distributed import DistributedKNN
    >>> data = make_multilabel(n_samples=80, n_features=5, n_labels=3, random_state=0)
    >>> from distributed import Client  # doctest: +SKIP
    >>> client = Client(n_workers=2, threads_per_worker=1)  # doctest: +SKIP
    >>> est = DistributedKNN(MLkNN(n_neighbors=5), client).fit(data.X, data.Y)  # doctest: +SKIP
    >>> local = MLkNN(n_neighbors=5).fit(data.X, data.Y)
    >>> bool(np.array_equal(est.predict_proba(data.X), local.predict_proba(data.X)))  # doctest: +SKIP
    True
    >>> client.close()  # doctest: +SKIP
    """

    _parameter_constraints: dict[str, Any] = {
        "estimator": "no_validation",  # a kNN estimator of mlknn: checked in fit (TypeError)
        "client": "no_validation",  # a distributed.Client (a connection, not a value)
        "train_block": [Interval(Integral, 1, None, closed="left"), None],
        "query_block": [Interval(Integral, 1, None, closed="left"), None],
        "retries": [Interval(Integral, 0, None, closed="left")],
        "scoring": [StrOptions({"auto", "workers", "client"})],
        "keep_index": ["boolean", StrOptions({"auto"})],
    }

    estimator_: "KNNMultiLabelBase"
    train_: TrainingIndex
    _client: Client
    _estimator_future: Future | None

    def __init__(
        self,
        estimator: "KNNMultiLabelBase",
        client: Client | None = None,
        *,
        train_block: int | None = None,
        query_block: int | None = None,
        retries: int = 1,
        scoring: str = "auto",
        keep_index: bool | str = "auto",
    ) -> None:
        self.estimator = estimator
        self.scoring = scoring
        self.client = client
        self.train_block = train_block
        self.query_block = query_block
        self.retries = retries
        self.keep_index = keep_index

    def __sklearn_clone__(self) -> "DistributedKNN":
        # BaseEstimator's clone would deep-copy ``client``; share it instead.
        params = self.get_params(deep=False)
        client = params.pop("client")
        return type(self)(client=client, **{name: clone(value, safe=False) for name, value in params.items()})

    # ---------------------------------------------------------------- fit
    def fit(self, X: MatrixLike, Y: MatrixLike) -> Self:
        """Search the training set's leave-one-out graph on the cluster, fit here.

        Parameters
        ----------
        X : {ndarray, sparse matrix, dask array} of shape (n_samples, n_features)
            Training points, scattered to the workers once for every later search.
        Y : {array-like, dask array} of shape (n_samples, n_labels)
            Their binary label matrix.

        Returns
        -------
        self
        """
        self._validate_params()
        est = _check_knn_estimator(self.estimator)
        client = get_client(self.client, "DistributedKNN.fit")
        if Y is None:
            raise ValueError(f"{type(est).__name__} requires y to be passed, but the target y is None.")
        Y = _local(Y)
        if not _is_dask_array(X):
            X = _validate_local(X, "X")
        train = TrainingIndex(
            X, client, metric=est.metric, train_block=self.train_block, query_block=self.query_block, retries=self.retries
        )
        n = train.n_samples_fit_
        width = est.search_width(n)
        dist, ind = train.kneighbors(None, width)  # checks 1 <= width <= n - 1
        graph = NeighborGraph(ind, dist, loo=True)
        need_index = self.keep_index is True or (self.keep_index == "auto" and _capability(est, "radius_counts"))
        X_fit = None
        if not _is_dask_array(X):
            X_fit = X
        elif need_index or _capability(est, "uses_features"):
            X_fit = _validate_local(X.compute(), "X")
        index = None
        if need_index:
            index = BruteNeighbors(metric=est.metric).fit(X_fit)
        est.fit_from_graph(graph, Y, X=X_fit, index=index)
        self.estimator_ = est
        self.train_ = train
        self.n_features_in_ = train.n_features_in_
        self._client = client
        self._estimator_future = None
        return self

    # ------------------------------------------------------------ predict
    def _check_fitted(self) -> None:
        check_is_fitted(self, "estimator_")

    def _query_blocks(self, X: MatrixLike) -> Blocks:
        # TrainingIndex.query_blocks validates X and checks its features against
        # the training set's (this object's n_features_in_).
        return self.train_.query_blocks(X, self.query_block)

    def _scattered_estimator(self) -> Future:
        fut = self._estimator_future
        if fut is None or fut.status != "finished":
            fut = self._client.scatter(self.estimator_, broadcast=True, hash=False)
            self._estimator_future = fut
        return fut

    def _apply(self, X: MatrixLike, method: str) -> MatrixLike:
        self._check_fitted()
        queries = self._query_blocks(X)
        width = self.estimator_.search_width(self.estimator_.n_train_)
        client = self._client

        def build() -> list[Future]:
            est = self._scattered_estimator()
            parts, _ = self.train_.graph_futures(queries, width)
            return [
                client.submit(_score_block, est, part, qf, method, retries=self.retries, pure=False)
                for part, qf in zip(parts, queries.futures)
            ]

        def rebuild() -> list[Future]:
            self._estimator_future = None
            return build()

        if self._scoring_mode() == "workers":
            blocks = _gather_with_recovery(self.train_, queries, build(), rebuild)
            return np.concatenate(blocks, axis=0)
        dist, ind = self.train_.kneighbors(queries, width)
        X_local = None
        if not _is_dask_array(X):
            X_local = queries.local
        elif _capability(self.estimator_, "uses_features"):
            X_local = _validate_local(X.compute(), "X")
        return getattr(self.estimator_, method)(NeighborGraph(ind, dist, loo=False), X_local)

    def _scoring_mode(self) -> str:
        if self.scoring == "auto":
            return "workers" if _capability(self.estimator_, "row_scoring") else "client"
        return self.scoring

    def predict_proba(self, X: MatrixLike) -> FloatArray:
        """Scores in [0, 1], shape (n_queries, n_labels), computed on the workers.

        Parameters
        ----------
        X : {ndarray, sparse matrix, dask array} of shape (n_queries, n_features)
            Query points.

        Returns
        -------
        ndarray of shape (n_queries, n_labels)
            Equal to the wrapped estimator's ``predict_proba``.
        """
        scores: FloatArray = self._apply(X, "predict_proba_from_graph")
        return scores

    def predict(self, X: MatrixLike) -> MatrixLike:
        """0/1 predictions, shape (n_queries, n_labels), dtype of the Y given to fit.

        Parameters
        ----------
        X : {ndarray, sparse matrix, dask array} of shape (n_queries, n_features)
            Query points.

        Returns
        -------
        ndarray or CSR matrix of shape (n_queries, n_labels)
            As the wrapped estimator's ``predict``.
        """
        return self._apply(X, "predict_from_graph")

    def kneighbors_graph(self, X: MatrixLike = None) -> NeighborGraph:
        """The neighbour graph (``_search_width()`` wide) of X on the cluster (None: training LOO).

        Parameters
        ----------
        X : {ndarray, sparse matrix, dask array} of shape (n_queries, n_features), default=None
            Queries; None: the leave-one-out graph of the training set.

        Returns
        -------
        NeighborGraph
            The graph, gathered in this process.
        """
        self._check_fitted()
        queries = None if X is None else self._query_blocks(X)
        width = self.estimator_.search_width(self.estimator_.n_train_)
        dist, ind = self.train_.kneighbors(queries, width)
        return NeighborGraph(ind, dist, loo=X is None)

    def score(self, X: MatrixLike, Y: MatrixLike) -> float:
        """Subset accuracy, as the estimator's ``score``.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array} of shape (n_samples, n_features)
            Test points.
        Y : {array-like, sparse matrix} of shape (n_samples, n_labels)
            Their true labels.

        Returns
        -------
        float
            :func:`sklearn.metrics.accuracy_score` of ``predict(X)``.
        """
        from sklearn.metrics import accuracy_score

        accuracy: float = accuracy_score(np.asarray(_local(Y)), self.predict(X))
        return accuracy
