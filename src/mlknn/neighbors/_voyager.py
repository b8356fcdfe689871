"""voyager backend (approximate HNSW from binary wheels): ``neighbors="voyager"``.

Optional: ``pip install 'mlknn[ann]'`` (or ``'mlknn[voyager]'``); imported only when
the backend is fitted. Spotify's voyager ships wheels for every common platform, so
this HNSW needs no compiler (hnswlib's current release does). The HNSW graph
proposes ``k + 8`` candidates (``k + 9`` for leave-one-out, whose own index is then
removed wherever it appears); their distances are recomputed exactly in float64 and
ordered by (distance, index), as for every mlknn backend. Recall below 1 is
possible: measure it with ``neighbor_recall`` or :func:`mlknn.neighbors.estimate_recall`.
Dense input only (sparse input raises an error naming the backend).
"""

import io
from typing import Any

import numpy as np

from ..utils import check_optional_dependency
from ..utils._typing import NDArray
from ._base import register_backend
from ._hnswlib import HnswlibNeighbors


class VoyagerNeighbors(HnswlibNeighbors):
    """Approximate neighbours with voyager's HNSW index (binary wheels, no compiler).

    The parameters, and the HNSW search they set, are those of
    :class:`HnswlibNeighbors`; only the library differs.

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
        Threads for building and searching (see :class:`HnswlibNeighbors`).
    random_state : int, optional
        Seed of the level assignment.

    Attributes
    ----------
    n_samples_fit_ : int
        Number of training points.
    n_features_in_ : int
        Number of features of the training points.

    See Also
    --------
    HnswlibNeighbors : The same HNSW search through hnswlib (builds from source).
    FaissHNSWNeighbors : The HNSW index of faiss.
    estimate_recall : Measure the recall of an approximate index.

    Examples
    --------
    >>> # needs pip install 'mlknn[ann]'
    >>> import numpy as np
    >>> X = np.random.RandomState(0).rand(100, 4)
    >>> from mlknn.neighbors import VoyagerNeighbors
    >>> index = VoyagerNeighbors(random_state=0).fit(X)  # doctest: +SKIP
    >>> index.kneighbors(X[:2], n_neighbors=3, return_distance=False)[:, 0].tolist()  # doctest: +SKIP
    [0, 1]
    """

    _name = "voyager"
    _X32: NDArray[np.float32]
    _index: Any  # a voyager.Index

    def _build(self, X32: NDArray[np.float32]) -> None:
        voyager = check_optional_dependency("voyager", f"neighbors={self._name!r}")
        n, d = X32.shape
        seed = 1 if self.random_state is None else int(self.random_state) % (2**31)
        # Euclidean candidates also for cosine: the base class has normalised the rows.
        index = voyager.Index(voyager.Space.Euclidean, num_dimensions=d, M=int(self.M),
                              ef_construction=int(self.ef_construction), random_seed=seed, max_elements=n)
        index.add_items(X32, np.arange(n), num_threads=self._threads())
        self._X32 = X32
        self._index = index

    def _reserve(self, n_total: int) -> None:
        # voyager resizes its index past max_elements by itself.
        pass

    def _search(self, Q32: NDArray[np.float32] | None, width: int) -> tuple[NDArray[np.intp], NDArray[np.float32]]:
        Q32 = self._X32 if Q32 is None else Q32
        width = min(width, self._X32.shape[0])
        ids, dist = self._index.query(Q32, k=width, num_threads=self._threads(), query_ef=max(int(self.ef), width))
        return np.asarray(ids, dtype=np.intp), np.asarray(dist, dtype=np.float32)

    # voyager's index does not pickle; its own byte format does (as faiss's backends do).
    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        index = state.pop("_index", None)
        if index is not None:
            state["_index_bytes"] = bytes(index.as_bytes())
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        data = state.pop("_index_bytes", None)
        self.__dict__.update(state)
        if data is not None:
            voyager = check_optional_dependency("voyager", f"neighbors={self._name!r}")
            self._index = voyager.Index.load(io.BytesIO(data))


def _make(metric: str = "euclidean", n_jobs: int | None = None, random_state: int | None = None,
          **params: Any) -> VoyagerNeighbors:
    return VoyagerNeighbors(metric=metric, n_jobs=n_jobs, random_state=random_state, **params)


register_backend("voyager", _make, exact=False, requires="voyager")
