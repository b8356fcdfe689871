"""hnswlib backend (approximate): ``neighbors="hnswlib"``.

Optional: ``pip install 'mlknn[hnswlib]'``; imported only when the backend is fitted.
The HNSW graph proposes ``k + 8`` candidates (``k + 9`` for leave-one-out, whose own
index is then removed wherever it appears); their distances are recomputed exactly
in float64 and ordered by (distance, index), as for every mlknn backend. Recall
below 1 is possible: measure it with :func:`mlknn.neighbors.estimate_recall`.
Dense input only (sparse input raises an error naming the backend).
"""

from typing import Any

import numpy as np

from ..utils import check_optional_dependency
from ..utils._threads import resolve_n_jobs
from ..utils._typing import NDArray
from ._approximate import _CandidateBackend
from ._base import register_backend


class HnswlibNeighbors(_CandidateBackend):
    """Approximate neighbours with hnswlib's HNSW index.

    Parameters
    ----------
    metric : {"euclidean", "sqeuclidean", "cosine"}, default="euclidean"
        ``"euclidean"``, ``"sqeuclidean"`` (the same neighbours) or ``"cosine"`` (``1 -
        cos(a, b)``).
    M : int, default=16
        Graph degree.
    ef_construction : int, default=100
        Beam of the graph's construction: larger builds a more accurate graph, more
        slowly.
    ef : int, default=64
        Search beam; raised to the number of candidates when that is larger.
    n_jobs : int, optional
        Threads for building and searching. None: as many as the BLAS pool holds
        (the rule of every backend, usually all cores); -1: all cores.
    random_state : int, optional
        Seed of the level assignment (the multi-threaded build is still not
        bit-reproducible).

    Attributes
    ----------
    n_samples_fit_ : int
        Number of training points.
    n_features_in_ : int
        Number of features of the training points.

    See Also
    --------
    FaissHNSWNeighbors : The HNSW index of faiss.
    PyNNDescentNeighbors : Another approximate backend, for sparse input too.
    estimate_recall : Measure the recall of an approximate index.

    Examples
    --------
    >>> # needs pip install 'mlknn[hnswlib]'
    >>> import numpy as np
    >>> X = np.random.RandomState(0).rand(100, 4)
    >>> from mlknn.neighbors import HnswlibNeighbors
    >>> index = HnswlibNeighbors(random_state=0).fit(X)  # doctest: +SKIP
    >>> index.kneighbors(X[:2], n_neighbors=3, return_distance=False)[:, 0].tolist()  # doctest: +SKIP
    [0, 1]
    """

    _name = "hnswlib"
    _X32: NDArray[np.float32]
    _index: Any  # an hnswlib.Index (hnswlib has no type information)

    def __init__(self, metric: str = "euclidean", M: int = 16, ef_construction: int = 100, ef: int = 64,
                 n_jobs: int | None = None, random_state: int | None = None) -> None:
        self.metric = metric
        self.M = M
        self.ef_construction = ef_construction
        self.ef = ef
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _threads(self) -> int:
        return resolve_n_jobs(self.n_jobs)

    def _build(self, X32: NDArray[np.float32]) -> None:
        hnswlib = check_optional_dependency("hnswlib", f"neighbors={self._name!r}")
        n, d = X32.shape
        index = hnswlib.Index(space="l2", dim=d)
        seed = 100 if self.random_state is None else int(self.random_state) % (2**31)
        index.init_index(max_elements=n, ef_construction=int(self.ef_construction), M=int(self.M),
                         random_seed=seed)
        index.add_items(X32, np.arange(n), num_threads=self._threads())
        self._X32 = X32
        self._index = index

    def _grow(self, X32: NDArray[np.float32]) -> None:
        # The new points take the next indices, as in the base class's add().
        n = self._X32.shape[0]
        self._reserve(n + X32.shape[0])
        self._index.add_items(X32, np.arange(n, n + X32.shape[0]), num_threads=self._threads())
        self._X32 = np.vstack([self._X32, X32])

    def _reserve(self, n_total: int) -> None:
        """Make room for ``n_total`` points (hnswlib's index has a fixed capacity)."""
        self._index.resize_index(n_total)

    def _search(self, Q32: NDArray[np.float32] | None, width: int) -> tuple[NDArray[np.intp], NDArray[np.float32]]:
        Q32 = self._X32 if Q32 is None else Q32
        self._index.set_ef(max(int(self.ef), width))
        labels, dist = self._index.knn_query(Q32, k=width, num_threads=self._threads())
        return labels.astype(np.intp), dist


def _make(metric: str = "euclidean", n_jobs: int | None = None, random_state: int | None = None,
          **params: Any) -> HnswlibNeighbors:
    return HnswlibNeighbors(metric=metric, n_jobs=n_jobs, random_state=random_state, **params)


register_backend("hnswlib", _make, exact=False, requires="hnswlib")
