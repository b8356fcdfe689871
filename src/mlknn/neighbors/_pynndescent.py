"""pynndescent backend (approximate): ``neighbors="pynndescent"``.

Optional: ``pip install 'mlknn[pynndescent]'`` (pulls numba; the first use in a
fresh environment spends a few seconds compiling). Imported only when fitted.

NN-descent builds an approximate kNN graph of the training set; the leave-one-out
graph is read from it (when it is wide enough, else the training points are
queried), queries go through its search graph. As for every mlknn backend the
candidates' distances are recomputed exactly in float64, ordered by (distance,
index), and leave-one-out removes the point's own index wherever it appears.
Sparse CSR input is supported.
"""

from typing import Any

import numpy as np

from ..utils import check_optional_dependency
from ..utils._threads import resolve_n_jobs
from ..utils._typing import MatrixLike, NDArray
from ._approximate import _CandidateBackend
from ._base import register_backend


class PyNNDescentNeighbors(_CandidateBackend):
    """Approximate neighbours with pynndescent's NN-descent.

    Parameters
    ----------
    metric : {"euclidean", "sqeuclidean", "cosine"}, default="euclidean"
        ``"euclidean"``, ``"sqeuclidean"`` (the same neighbours) or ``"cosine"`` (``1 -
        cos(a, b)``).
    graph_neighbors : int, default=30
        Width of the NN-descent graph built at fit (pynndescent's ``n_neighbors``).
        Leave-one-out searches wider than this query the training points instead.
    epsilon : float, default=0.1
        Search slack of ``NNDescent.query`` (higher: better recall, slower).
    n_jobs : int, optional
        Threads of NN-descent. None: as many as the BLAS pool holds (the rule of
        every backend, usually all cores); -1: all cores.
    random_state : int, optional
        Seeds NN-descent's random initialisation and search trees: with a seed and
        ``n_jobs=1`` the graph is reproducible.

    Attributes
    ----------
    n_samples_fit_ : int
        Number of training points.
    n_features_in_ : int
        Number of features of the training points.

    See Also
    --------
    HnswlibNeighbors : An HNSW approximate backend.
    estimate_recall : Measure the recall of an approximate index.

    Examples
    --------
    >>> # skipped in the doctests: numba compiles pynndescent on first use (slow)
    >>> import numpy as np
    >>> X = np.random.RandomState(0).rand(100, 4)
    >>> from mlknn.neighbors import PyNNDescentNeighbors
    >>> index = PyNNDescentNeighbors(random_state=0).fit(X)  # doctest: +SKIP
    >>> index.kneighbors(X[:2], n_neighbors=3, return_distance=False)[:, 0].tolist()  # doctest: +SKIP
    [0, 1]
    """

    _name = "pynndescent"
    _accepts_sparse = True
    _graph_width: int
    _X32: MatrixLike  # float32, dense or CSR
    _index: Any  # a pynndescent.NNDescent (pynndescent has no type information)

    def __init__(self, metric: str = "euclidean", graph_neighbors: int = 30, epsilon: float = 0.1,
                 n_jobs: int | None = None, random_state: int | None = None) -> None:
        self.metric = metric
        self.graph_neighbors = graph_neighbors
        self.epsilon = epsilon
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _build(self, X32: MatrixLike) -> None:
        pynndescent = check_optional_dependency("pynndescent", f"neighbors={self._name!r}")
        n = X32.shape[0]
        self._graph_width = max(2, min(int(self.graph_neighbors), n - 1))
        self._X32 = X32
        self._index = pynndescent.NNDescent(
            X32,
            metric="euclidean",
            n_neighbors=self._graph_width,
            random_state=self.random_state,
            n_jobs=resolve_n_jobs(self.n_jobs),
            verbose=False,
        )

    def _loo_reads_built_graph(self, n_neighbors: int) -> bool:
        return self._loo_width(n_neighbors) <= self._graph_width

    def _search(self, Q32: MatrixLike | None, width: int) -> tuple[NDArray[np.intp], NDArray[np.float64]]:
        if Q32 is None and width <= self._graph_width:
            ind, dist = self._index.neighbor_graph
            ind, dist = ind[:, :width], dist[:, :width]
        else:
            Q32 = self._X32 if Q32 is None else Q32
            ind, dist = self._index.query(Q32, k=width, epsilon=float(self.epsilon))
        # pynndescent reports Euclidean distances; the re-ranking only reads squares.
        dist = np.asarray(dist, dtype=np.float64)
        return np.asarray(ind, dtype=np.intp), dist * dist


def _make(metric: str = "euclidean", n_jobs: int | None = None, random_state: int | None = None,
          **params: Any) -> PyNNDescentNeighbors:
    return PyNNDescentNeighbors(metric=metric, n_jobs=n_jobs, random_state=random_state, **params)


register_backend("pynndescent", _make, exact=False, requires="pynndescent")
