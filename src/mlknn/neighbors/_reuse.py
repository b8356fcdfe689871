"""Search once, reuse everywhere; and how good an approximate graph is.

An experiment evaluates many algorithms at many k on the same fold. The
neighbours do not depend on the algorithm, and the graph for the largest k holds
the graph for every smaller k (rows are sorted, :meth:`NeighborGraph.take`). So::

    index, train_graph, test_graph = compute_graphs(X_train, X_test, max_k)
    for k in ks:
        for est in estimators:
            est.set_params(n_neighbors=k)
            est.fit_from_graph(train_graph, Y_train, X=X_train, index=index)
            scores = est.predict_proba_from_graph(test_graph, X_test)

gives the same predictions as ``est.fit(X_train, Y_train).predict_proba(X_test)``
with one search per fold instead of one per (algorithm, k). :class:`GraphCache`
wraps the same thing.

:func:`recall_at_k` and :func:`estimate_recall` measure an approximate backend
against exact search.
"""

from typing import Any

import numpy as np

from ..utils._docstrings import fill_doc
from ..utils._param_validation import HasMethods, Integral, Interval, validate_params
from ..utils._typing import ArrayLike, Estimator, LabelMatrix, MatrixLike, NDArray
from ._base import NeighborsIndex, build_graph, get_backend
from ._contract import drop_own_index
from ._graph import NeighborGraph

#: What :func:`compute_graphs` returns: the fitted index, the training (leave-one-out)
#: graph and the test graph (None without test points).
FoldGraphs = tuple[NeighborsIndex, NeighborGraph, NeighborGraph | None]


@validate_params(
    {
        "X_train": ["array-like", "sparse matrix"],
        "X_test": ["array-like", "sparse matrix", None],
        "max_k": [Interval(Integral, 1, None, closed="left")],
        "neighbors": [str, HasMethods(["fit", "kneighbors"])],
        "metric": [str],
        "n_jobs": [Integral, None],
    },
    prefer_skip_nested_validation=True,
)
def compute_graphs(
    X_train: MatrixLike,
    X_test: MatrixLike = None,
    max_k: int = 10,
    neighbors: str | NeighborsIndex = "auto",
    metric: str = "euclidean",
    n_jobs: int | None = None,
    **params: Any,
) -> FoldGraphs:
    """Fit one index and search the training (leave-one-out) and test graphs once.

    Parameters
    ----------
    X_train : {array-like, sparse matrix} of shape (n_train, n_features)
        The training points, searched among.
    X_test : {array-like, sparse matrix} of shape (n_test, n_features), optional
        The test points; their graph against ``X_train`` is computed too when given.
    max_k : int
        The widest neighbourhood any later use needs (for an estimator:
        ``est.search_width()`` at its largest k). Capped at ``n_train - 1``.
    neighbors : str or object, default="auto"
        Backend (see :func:`mlknn.neighbors.available_backends`).
    metric : str, default="euclidean"
        ``"euclidean"``, ``"sqeuclidean"`` (the same neighbours) or ``"cosine"`` (``1 -
        cos(a, b)``).
    n_jobs : int, optional
        Threads of the search. None: as many as the BLAS pool holds (the rule of every
        backend, usually all cores); -1: all cores.
    **params
        Extra backend parameters.

    Returns
    -------
    index : fitted backend
        Pass it as ``index=`` to ``fit_from_graph`` so that plain ``predict`` also works.
    train_graph : NeighborGraph
        Leave-one-out graph of the training set, ``max_k`` wide.
    test_graph : NeighborGraph or None
        Graph of the test points (None without ``X_test``).

    See Also
    --------
    GraphCache : The same, kept with its split, with ``predict_proba`` for several estimators.
    build_graph : Query one fitted backend.

    Examples
    --------
    >>> from mlknn import MLkNN
    >>> from mlknn.datasets import make_multilabel
    >>> from mlknn.neighbors import compute_graphs
    >>> d = make_multilabel(n_samples=60, n_features=4, n_labels=3, random_state=0)
    >>> index, train_graph, test_graph = compute_graphs(d.X[:50], d.X[50:], max_k=8, neighbors="brute")
    >>> train_graph.indices.shape, test_graph.indices.shape
    ((50, 8), (10, 8))
    >>> clf = MLkNN(n_neighbors=5).fit_from_graph(train_graph, d.Y[:50], index=index)
    >>> clf.predict(d.X[50:]).shape
    (10, 3)
    """
    index = get_backend(neighbors, metric=metric, n_jobs=n_jobs, **params).fit(X_train)
    n_train = index.n_samples_fit_
    width = int(min(max_k, n_train - 1))
    if width < 1:
        raise ValueError(f"Expected max_k >= 1 and n_train >= 2; got max_k = {max_k}, n_train = {n_train}.")
    train_graph = build_graph(index, None, width)
    test_graph = None if X_test is None else build_graph(index, X_test, min(max_k, n_train))
    return index, train_graph, test_graph


def fold_graphs(
    X_train: MatrixLike,
    X_test: MatrixLike,
    width: int,
    neighbors: str | NeighborsIndex = "auto",
    metric: str = "euclidean",
    **params: Any,
) -> FoldGraphs:
    """``compute_graphs`` under the name the experiment runner looks for."""
    return compute_graphs(X_train, X_test, width, neighbors=neighbors, metric=metric, **params)


class GraphCache:
    """The graphs of one train/test split, searched once for the largest k.

    Parameters
    ----------
    X_train, X_test : {array-like, sparse matrix}
        The training and test points, as for :func:`compute_graphs`.
    max_k : int
        The widest neighbourhood any later use needs, as for :func:`compute_graphs`.
    neighbors, metric, n_jobs, **params
        As for :func:`compute_graphs`.

    Attributes
    ----------
    index, train_graph, test_graph
        As returned by :func:`compute_graphs`.

    See Also
    --------
    compute_graphs : The function behind it.

    Examples
    --------
    >>> from mlknn import MLkNN
    >>> from mlknn.datasets import make_multilabel
    >>> d = make_multilabel(n_samples=120, random_state=0)
    >>> cache = GraphCache(d.X[:100], d.X[100:], max_k=10, neighbors="brute")
    >>> cache.predict_proba(MLkNN(n_neighbors=5), d.Y[:100]).shape
    (20, 5)
    """

    index: NeighborsIndex
    train_graph: NeighborGraph
    test_graph: NeighborGraph | None

    def __init__(
        self,
        X_train: MatrixLike,
        X_test: MatrixLike = None,
        max_k: int = 10,
        neighbors: str | NeighborsIndex = "auto",
        metric: str = "euclidean",
        n_jobs: int | None = None,
        **params: Any,
    ) -> None:
        self.X_train = X_train
        self.X_test = X_test
        self.max_k = max_k
        self.index, self.train_graph, self.test_graph = compute_graphs(
            X_train, X_test, max_k, neighbors=neighbors, metric=metric, n_jobs=n_jobs, **params
        )

    def fit(self, estimator: Estimator, Y_train: MatrixLike) -> Estimator:
        """Clone ``estimator`` and fit it from the cached training graph.

        Parameters
        ----------
        estimator : kNN estimator
            Unfitted; cloned, the user's object is not changed.
        Y_train : {array-like, sparse matrix} of shape (n_train, n_labels)
            Training labels.

        Returns
        -------
        estimator
            The fitted clone.
        """
        from sklearn.base import clone

        est = clone(estimator)
        width = est.search_width(self.train_graph.n_points)
        if width > self.train_graph.n_neighbors:
            raise ValueError(
                f"The cache holds {self.train_graph.n_neighbors} neighbours per point, but the "
                f"estimator needs {width}; build it with a larger max_k."
            )
        return est.fit_from_graph(self.train_graph, Y_train, X=self.X_train, index=self.index)

    def predict_proba(self, estimator: Estimator, Y_train: MatrixLike) -> NDArray[np.float64]:
        """Scores of the cached test points, from a clone fitted on the cached graphs.

        Parameters
        ----------
        estimator : kNN estimator
            Unfitted; cloned, the user's object is not changed.
        Y_train : {array-like, sparse matrix} of shape (n_train, n_labels)
            Training labels.

        Returns
        -------
        ndarray of shape (n_test, n_labels)
            The clone's ``predict_proba`` of the cached test points.
        """
        est = self.fit(estimator, Y_train)
        scores: NDArray[np.float64] = est.predict_proba_from_graph(self._test(), self.X_test)
        return scores

    def predict(self, estimator: Estimator, Y_train: MatrixLike) -> LabelMatrix:
        """0/1 predictions of the cached test points.

        Parameters
        ----------
        estimator : kNN estimator
            Unfitted; cloned, the user's object is not changed.
        Y_train : {array-like, sparse matrix} of shape (n_train, n_labels)
            Training labels.

        Returns
        -------
        ndarray or CSR matrix of shape (n_test, n_labels)
            The clone's ``predict`` of the cached test points.
        """
        est = self.fit(estimator, Y_train)
        return est.predict_from_graph(self._test(), self.X_test)

    def _test(self) -> NeighborGraph:
        if self.test_graph is None:
            raise ValueError("This GraphCache was built without X_test.")
        return self.test_graph


# ------------------------------------------------------------------ recall
@validate_params(
    {"approx_indices": ["array-like"], "exact_indices": ["array-like"],
     "k": [Interval(Integral, 1, None, closed="left"), None]},
    prefer_skip_nested_validation=True,
)
def recall_at_k(approx_indices: ArrayLike, exact_indices: ArrayLike, k: int | None = None) -> float:
    """Mean fraction of the exact k nearest neighbours that the approximate search found.

    Parameters
    ----------
    approx_indices, exact_indices : ndarray of shape (n_queries, >= k)
        Neighbour indices of the same queries; only the first ``k`` columns count.
    k : int, optional
        Default: the width of ``exact_indices``.

    Returns
    -------
    float
        In [0, 1]; 1 when every row holds the same set (order is ignored).

    See Also
    --------
    estimate_recall : Recall of a fitted backend, searched on a sample.

    Examples
    --------
    >>> import numpy as np
    >>> from mlknn.neighbors import recall_at_k
    >>> exact = np.array([[0, 1, 2], [3, 4, 5]])
    >>> approx = np.array([[2, 0, 9], [3, 4, 5]])
    >>> round(recall_at_k(approx, exact), 4)
    0.8333
    """
    A = np.asarray(approx_indices)
    E = np.asarray(exact_indices)
    if A.ndim != 2 or E.ndim != 2 or A.shape[0] != E.shape[0]:
        raise ValueError(
            f"Expected two 2-D index arrays with the same number of rows; got {A.shape} and {E.shape}."
        )
    k = E.shape[1] if k is None else int(k)
    if not (1 <= k <= min(A.shape[1], E.shape[1])):
        raise ValueError(f"Expected 1 <= k <= {min(A.shape[1], E.shape[1])}, but k = {k}.")
    if A.shape[0] == 0:
        return 1.0
    A, E = A[:, :k], E[:, :k]
    # Set intersection per row without a loop: sort both rows, then count the
    # matches of each exact entry in the approximate row by binary search.
    stride = int(max(A.max(initial=0), E.max(initial=0))) + 2
    A = np.where(A < 0, stride - 1, A)  # missing slots (-1) match nothing
    As = np.sort(A, axis=1)
    offset = (np.arange(A.shape[0], dtype=np.int64) * stride)[:, None]
    flatA = (As + offset).ravel()
    flatE = (E + offset).ravel()
    pos = np.searchsorted(flatA, flatE)
    pos = np.minimum(pos, flatA.size - 1)
    hits = flatA[pos] == flatE
    return float(hits.sum() / (A.shape[0] * k))


@validate_params(
    {
        "index": [HasMethods(["kneighbors"])],
        "X_train": ["array-like", "sparse matrix"],
        "X_query": ["array-like", "sparse matrix", None],
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "n_samples": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "approx_indices": ["array-like", None],
    },
    prefer_skip_nested_validation=True,
)
@fill_doc
def estimate_recall(
    index: NeighborsIndex,
    X_train: MatrixLike,
    X_query: MatrixLike = None,
    n_neighbors: int = 10,
    n_samples: int = 1000,
    random_state: int | np.random.RandomState | None = None,
    approx_indices: NDArray[np.integer[Any]] | None = None,
) -> float:
    """Recall@k of a fitted (approximate) backend against exact search, on a sample.

    Parameters
    ----------
    index : fitted backend
        The approximate index, fitted on ``X_train``.
    X_train : {array-like, sparse matrix}
        Its training points (exact search runs on them with ``neighbors="brute"``).
    X_query : {array-like, sparse matrix}, optional
        Queries; None measures the leave-one-out graph of the training set.
    {n_neighbors}
    n_samples : int, default=1000
        Queries (or training rows) drawn without replacement; all if fewer.
    random_state : int, optional
        Seed of the randomised parts of the search, where the backend has any.
    approx_indices : ndarray of shape (n_queries or n_train, >= n_neighbors), optional
        The approximate graph already computed for *all* the queries (or all the
        training rows, leave-one-out); else the sampled rows are searched with
        ``index``: ``kneighbors(X_query[rows])``, or, leave-one-out,
        ``kneighbors(X_train[rows], k + 1)`` without each row's own index.

    Returns
    -------
    float

    See Also
    --------
    recall_at_k : The measure, from two neighbour lists.
    is_exact : Whether a backend needs this check at all.

    Examples
    --------
    >>> import numpy as np
    >>> from mlknn.neighbors import BruteNeighbors, estimate_recall
    >>> X = np.random.RandomState(0).rand(40, 3)
    >>> estimate_recall(BruteNeighbors().fit(X), X, n_neighbors=5)  # an exact backend
    1.0
    """
    from sklearn.utils import check_random_state

    from ._brute import BruteNeighbors

    loo = X_query is None
    source = X_train if loo else X_query
    n = source.shape[0]
    rng = check_random_state(random_state)
    rows = np.sort(rng.choice(n, size=min(n_samples, n), replace=False))
    Qs = source[rows]
    exact = BruteNeighbors(metric=getattr(index, "metric", "euclidean")).fit(X_train)
    k = n_neighbors
    if loo:
        E = drop_own_index(exact.kneighbors(Qs, k + 1)[1], rows)
        A = (approx_indices[rows, :k] if approx_indices is not None
             else drop_own_index(index.kneighbors(Qs, k + 1)[1], rows))
    else:
        E = exact.kneighbors(Qs, k)[1]
        A = approx_indices[rows, :k] if approx_indices is not None else index.kneighbors(Qs, k)[1]
    return recall_at_k(A, E, k)

