"""The distributed exact search as a neighbours backend: ``neighbors="dask"``.

Registered when :mod:`mlknn.distributed` is imported; answers exactly what
``neighbors="brute"`` answers (see ``_graph.py`` for why).
"""

from typing import Any, Self

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from ..neighbors import check_n_neighbors, register_backend
from ..utils._typing import MatrixLike, NDArray
from ._client import Client, get_client
from ._graph import TrainingIndex

__all__ = ["DaskNeighbors"]


class DaskNeighbors(BaseEstimator):
    """The distributed exact search as a neighbours backend: ``neighbors="dask"``.

    Registered when :mod:`mlknn.distributed` is imported. Honours the same
    ``kneighbors`` contract as every backend (answers identical, bit for bit, to
    ``neighbors="brute"``; ``X=None`` is leave-one-out), so any kNN estimator can
    search on the cluster with ``MLkNN(neighbors="dask")``; the scoring stays in
    this process (:class:`DistributedKNN` also moves it to the workers).

    Parameters
    ----------
    metric : {"euclidean", "sqeuclidean", "cosine"}, default="euclidean"
        The distance the neighbours are ranked by.
    client : distributed.Client, optional
        Default: the default client of this process when ``fit`` runs.
    train_block, query_block : int, optional
        As for :func:`kneighbors_graph`.
    retries : int, default=1
        Passed to every ``client.submit`` (a task that raises is run again).
    n_jobs, random_state : ignored
        The cluster's workers set the parallelism; the search is exact.

    Attributes
    ----------
    index_ : TrainingIndex
    n_samples_fit_, n_features_in_ : int

    See Also
    --------
    DistributedKNN : Moves the scoring to the workers too.
    mlknn.neighbors.BruteNeighbors : The local backend with the same answers.

    Notes
    -----
    A fitted estimator holding this backend keeps a connection to the cluster:
    save it (``mlknn.persistence``) after refitting with a local backend.

    Examples
    --------
    >>> # not run in the doctests: starting a Dask cluster takes seconds
    >>> import numpy as np
    >>> from mlknn import MLkNN
    >>> from mlknn.datasets import make_multilabel
    >>> data = make_multilabel(n_samples=80, n_features=5, n_labels=3, random_state=0)
    >>> from distributed import Client  # doctest: +SKIP
    >>> client = Client(n_workers=2, threads_per_worker=1)  # doctest: +SKIP
    >>> clf = MLkNN(n_neighbors=5, neighbors="dask").fit(data.X, data.Y)  # doctest: +SKIP
    >>> clf.predict(data.X[:3]).shape  # doctest: +SKIP
    (3, 3)
    >>> client.close()  # doctest: +SKIP
    """

    exact = True

    index_: TrainingIndex
    n_samples_fit_: int
    n_features_in_: int

    def __init__(self, metric: str = "euclidean", client: Client | None = None, *, train_block: int | None = None,
                 query_block: int | None = None, retries: int = 1, n_jobs: int | None = None,
                 random_state: Any = None) -> None:
        self.metric = metric
        self.client = client
        self.train_block = train_block
        self.query_block = query_block
        self.retries = retries
        self.n_jobs = n_jobs
        self.random_state = random_state

    def __sklearn_clone__(self) -> "DaskNeighbors":
        # Share the client (a connection) instead of deep-copying it.
        params = self.get_params(deep=False)
        return type(self)(**params)

    def fit(self, X: MatrixLike, y: None = None) -> Self:
        """Send the training blocks to the cluster.

        Parameters
        ----------
        X : {ndarray, sparse matrix, dask array} of shape (n_samples, n_features)
            Training points.
        y : None
            Ignored (scikit-learn's signature).

        Returns
        -------
        self
            The fitted backend.
        """
        client = get_client(self.client, "neighbors='dask'")
        self.index_ = TrainingIndex(X, client, metric=self.metric, train_block=self.train_block,
                                    query_block=self.query_block, retries=self.retries)
        self.n_samples_fit_ = self.index_.n_samples_fit_
        self.n_features_in_ = self.index_.n_features_in_
        return self

    def kneighbors(
        self, X: MatrixLike = None, n_neighbors: int = 10, return_distance: bool = True
    ) -> tuple[NDArray[np.float64], NDArray[np.intp]] | NDArray[np.intp]:
        """The ``n_neighbors`` nearest training points of each query (None: leave-one-out).

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
        check_is_fitted(self, "index_")
        k = check_n_neighbors(n_neighbors, self.n_samples_fit_, X is None)
        queries = None if X is None else self.index_.query_blocks(X, self.query_block)
        dist, ind = self.index_.kneighbors(queries, k)
        return (dist, ind) if return_distance else ind


def _make_dask(metric: str = "euclidean", n_jobs: int | None = None, random_state: Any = None,
               **params: Any) -> DaskNeighbors:
    return DaskNeighbors(metric=metric, n_jobs=n_jobs, random_state=random_state, **params)


register_backend("dask", _make_dask, exact=True, requires="distributed")
