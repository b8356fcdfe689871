"""faiss backends: exact flat search, and the approximate IVF and HNSW indexes.

``neighbors="faiss"`` (exact), ``"faiss-ivf"`` and ``"faiss-hnsw"`` (approximate).
faiss is optional: ``pip install 'mlknn[faiss]'`` (the ``faiss-cpu`` wheel). It is
imported only when one of these backends is fitted.

How faiss's answer is mapped to mlknn's contract (see ``_CandidateBackend``):

* faiss returns squared L2 distances in float32; mlknn recomputes the candidates'
  distances exactly in float64, orders them by (distance, index) and takes the
  square root (``metric="euclidean"``);
* leave-one-out searches k + 1 (+ a margin) and removes the query's *own index*,
  wherever faiss put it (with duplicates at distance 0 faiss may list another copy
  first); when the point is not among the results at all (more than k + margin
  duplicates) the last candidate is dropped;
* ``"faiss"`` searches ``k + 8`` candidates and checks each row: when the k-th
  exact distance is not clearly below the last candidate's float32 distance (a tie
  or near tie at the boundary, which faiss cannot order by index) the row is
  recomputed by brute force. faiss alone does not guarantee the lower-index tie
  rule; with this check the backend returns exactly what ``neighbors="brute"``
  returns;
* sparse input is refused with an error naming the backend (faiss indexes dense
  float32 vectors); float64 input is indexed in float32 and re-ranked in float64.
"""

import math
from collections.abc import Callable
from types import ModuleType
from typing import Any, TypeVar

import numpy as np

from ..utils import check_optional_dependency
from ..utils._threads import resolve_n_jobs
from ..utils._typing import NDArray
from ._approximate import _CandidateBackend
from ._base import register_backend


def _faiss(name: str) -> ModuleType:
    return check_optional_dependency("faiss", f"neighbors={name!r}")


class _FaissBase(_CandidateBackend):
    _X32: NDArray[np.float32]
    _index: Any  # a faiss.Index (faiss has no type information)

    def _set_threads(self, faiss: ModuleType) -> None:
        # faiss's thread count is process-wide (OpenMP); set it from the shared rule.
        faiss.omp_set_num_threads(resolve_n_jobs(self.n_jobs))

    def _search(self, Q32: NDArray[np.float32] | None, width: int) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
        Q32 = self._X32 if Q32 is None else Q32
        self._prepare_search(width)
        dist, ind = self._index.search(Q32, width)
        return ind, dist

    def _prepare_search(self, width: int) -> None:
        pass

    def _on_device(self, faiss: ModuleType, index: Any) -> Any:
        """The index where it is searched: here, as built (the GPU backends copy it to the device)."""
        return index

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        index = state.pop("_index", None)
        if index is not None:
            state["_index_bytes"] = _faiss(self._name).serialize_index(index)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        data = state.pop("_index_bytes", None)
        self.__dict__.update(state)
        if data is not None:
            self._index = _faiss(self._name).deserialize_index(data)


class FaissNeighbors(_FaissBase):
    """Exact neighbours with faiss's flat (brute-force) L2 index.

    Parameters
    ----------
    metric : {"euclidean", "sqeuclidean", "cosine"}, default="euclidean"
        ``"euclidean"``, ``"sqeuclidean"`` (the same neighbours) or ``"cosine"`` (``1 -
        cos(a, b)``).
    n_jobs : int, optional
        OpenMP threads for faiss (a process-wide setting). None: as many as the
        BLAS pool holds (the rule of every backend); -1: all cores.
    random_state : ignored
        Accepted so that every backend takes the same parameters; this search draws
        nothing at random.

    Attributes
    ----------
    n_samples_fit_ : int
        Number of training points.
    n_features_in_ : int
        Number of features of the training points.

    See Also
    --------
    BruteNeighbors : The same exact neighbours without faiss.
    FaissIVFNeighbors, FaissHNSWNeighbors : faiss's approximate indexes.

    Notes
    -----
    Gives the same indices and distances as :class:`BruteNeighbors` (ties by the
    lower index included): rows whose boundary faiss cannot resolve in float32 are
    recomputed by brute force. See the module docstring.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.RandomState(0).rand(100, 4)
    >>> from mlknn.neighbors import FaissNeighbors
    >>> index = FaissNeighbors().fit(X)
    >>> index.kneighbors(X[:2], n_neighbors=3, return_distance=False)[:, 0].tolist()
    [0, 1]
    >>> from mlknn.neighbors import BruteNeighbors
    >>> bool((index.kneighbors(X, 5)[1] == BruteNeighbors().fit(X).kneighbors(X, 5)[1]).all())
    True
    """

    exact = True
    _name = "faiss"

    def __init__(self, metric: str = "euclidean", n_jobs: int | None = None, random_state: int | None = None) -> None:
        self.metric = metric
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _build(self, X32: NDArray[np.float32]) -> None:
        faiss = _faiss(self._name)
        self._set_threads(faiss)
        self._X32 = X32
        self._index = self._on_device(faiss, faiss.IndexFlatL2(X32.shape[1]))
        self._index.add(X32)


class FaissIVFNeighbors(_FaissBase):
    """Approximate neighbours with faiss's inverted-file index (IVF-Flat).

    Parameters
    ----------
    metric : {"euclidean", "sqeuclidean", "cosine"}, default="euclidean"
        ``"euclidean"``, ``"sqeuclidean"`` (the same neighbours) or ``"cosine"`` (``1 -
        cos(a, b)``).
    nlist : int, optional
        Number of k-means cells; default ``4 sqrt(n)``, at most ``n / 39`` (faiss
        wants 39 training points per cell).
    nprobe : int, optional
        Cells visited per query; default ``max(16, sqrt(nlist))``. Higher: better
        recall, slower.
    n_jobs : int, optional
        Threads of the search. None: as many as the BLAS pool holds (the rule of every
        backend, usually all cores); -1: all cores.
    random_state : int, optional
        Seed of the k-means training.

    Attributes
    ----------
    n_samples_fit_ : int
        Number of training points.
    n_features_in_ : int
        Number of features of the training points.
    nlist_ : int
        The number of k-means cells used.
    nprobe_ : int
        The cells visited per query.

    See Also
    --------
    FaissNeighbors : faiss's exact flat index.
    FaissHNSWNeighbors : faiss's HNSW graph index.
    estimate_recall : Measure the recall of an approximate index.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.RandomState(0).rand(100, 4)
    >>> from mlknn.neighbors import FaissIVFNeighbors, estimate_recall
    >>> index = FaissIVFNeighbors(random_state=0).fit(X)
    >>> index.kneighbors(X[:2], n_neighbors=3, return_distance=False)[:, 0].tolist()
    [0, 1]
    >>> 0.0 <= estimate_recall(index, X, n_neighbors=5) <= 1.0
    True
    """

    _name = "faiss-ivf"
    nlist_: int
    nprobe_: int
    _quantizer: Any  # a faiss.IndexFlatL2

    def __init__(self, metric: str = "euclidean", nlist: int | None = None, nprobe: int | None = None,
                 n_jobs: int | None = None, random_state: int | None = None) -> None:
        self.metric = metric
        self.nlist = nlist
        self.nprobe = nprobe
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _build(self, X32: NDArray[np.float32]) -> None:
        faiss = _faiss(self._name)
        self._set_threads(faiss)
        n, d = X32.shape
        nlist = self.nlist
        if nlist is None:
            nlist = max(1, min(int(4 * math.sqrt(n)), n // 39))
        nlist = max(1, min(int(nlist), n))
        self.nlist_ = nlist
        # sqrt(nlist) cells: each query scans about n / (4 sqrt(nlist)) ~ n^(3/4) / 8
        # points, sub-quadratic in total (nlist / 16 would scan n / 16: quadratic).
        default = max(16, int(round(math.sqrt(nlist))))
        self.nprobe_ = min(nlist, self.nprobe if self.nprobe is not None else default)
        quantizer = faiss.IndexFlatL2(d)
        index = faiss.IndexIVFFlat(quantizer, d, nlist, faiss.METRIC_L2)
        index.cp.seed = 1234 if self.random_state is None else int(self.random_state) % (2**31)
        index = self._on_device(faiss, index)
        index.train(X32)
        index.add(X32)
        index.nprobe = self.nprobe_
        self._quantizer = quantizer  # keep the quantizer alive with the index
        self._X32 = X32
        self._index = index

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        if getattr(self, "_index", None) is not None:
            self._index.nprobe = self.nprobe_


class FaissHNSWNeighbors(_FaissBase):
    """Approximate neighbours with faiss's HNSW graph index (IndexHNSWFlat).

    Parameters
    ----------
    metric : {"euclidean", "sqeuclidean", "cosine"}, default="euclidean"
        ``"euclidean"``, ``"sqeuclidean"`` (the same neighbours) or ``"cosine"`` (``1 -
        cos(a, b)``).
    M : int, default=32
        Graph degree.
    ef_construction : int, default=80
        Beam of the graph's construction: larger builds a more accurate graph, more
        slowly.
    ef_search : int, default=64
        Search beam; raised to the number of candidates when that is larger.
    n_jobs : int, optional
        Threads of the search. None: as many as the BLAS pool holds (the rule of every
        backend, usually all cores); -1: all cores.
    random_state : ignored
        Accepted so that every backend takes the same parameters; faiss's HNSW build
        is multi-threaded and not seeded.

    Attributes
    ----------
    n_samples_fit_ : int
        Number of training points.
    n_features_in_ : int
        Number of features of the training points.

    See Also
    --------
    HnswlibNeighbors : The HNSW index of hnswlib.
    FaissIVFNeighbors : faiss's inverted-file index.
    estimate_recall : Measure the recall of an approximate index.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.RandomState(0).rand(100, 4)
    >>> from mlknn.neighbors import FaissHNSWNeighbors, estimate_recall
    >>> index = FaissHNSWNeighbors(random_state=0).fit(X)
    >>> index.kneighbors(X[:2], n_neighbors=3, return_distance=False)[:, 0].tolist()
    [0, 1]
    >>> 0.0 <= estimate_recall(index, X, n_neighbors=5) <= 1.0
    True
    """

    _name = "faiss-hnsw"

    def __init__(self, metric: str = "euclidean", M: int = 32, ef_construction: int = 80, ef_search: int = 64,
                 n_jobs: int | None = None, random_state: int | None = None) -> None:
        self.metric = metric
        self.M = M
        self.ef_construction = ef_construction
        self.ef_search = ef_search
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _build(self, X32: NDArray[np.float32]) -> None:
        faiss = _faiss(self._name)
        self._set_threads(faiss)
        index = faiss.IndexHNSWFlat(X32.shape[1], int(self.M))
        index.hnsw.efConstruction = int(self.ef_construction)
        index.add(X32)
        self._X32 = X32
        self._index = index

    def _grow(self, X32: NDArray[np.float32]) -> None:
        # faiss numbers added points after the existing ones, as the base class's add() does.
        self._set_threads(_faiss(self._name))
        self._index.add(X32)
        self._X32 = np.vstack([self._X32, X32])

    def _prepare_search(self, width: int) -> None:
        self._index.hnsw.efSearch = max(int(self.ef_search), width)


_Faiss = TypeVar("_Faiss", bound=_FaissBase)


def _factory(cls: type[_Faiss]) -> Callable[..., _Faiss]:
    def make(metric: str = "euclidean", n_jobs: int | None = None, random_state: int | None = None,
             **params: Any) -> _Faiss:
        return cls(metric=metric, n_jobs=n_jobs, random_state=random_state, **params)

    return make


register_backend("faiss", _factory(FaissNeighbors), exact=True, requires="faiss")
register_backend("faiss-ivf", _factory(FaissIVFNeighbors), exact=False, requires="faiss")
register_backend("faiss-hnsw", _factory(FaissHNSWNeighbors), exact=False, requires="faiss")
