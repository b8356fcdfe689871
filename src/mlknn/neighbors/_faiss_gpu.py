"""faiss on a CUDA GPU: ``neighbors="faiss-gpu"`` (exact flat) and ``"faiss-gpu-ivf"`` (IVF-Flat).

The indexes of ``"faiss"`` and ``"faiss-ivf"``, copied to the GPU before they are
filled (the IVF's k-means trains there too); the candidates come back to the host,
where their distances are recomputed exactly in float64 and ordered by (distance,
index), and ``"faiss-gpu"`` verifies each row as ``"faiss"`` does, so it returns
exactly what ``neighbors="brute"`` returns. ``pip install 'mlknn[gpu]'`` installs
faiss's CUDA 12 wheel (``faiss-gpu-cu12``, Linux x86-64) beside torch; it provides
the same module ``faiss`` as ``faiss-cpu``, so keep one of the two in an environment.

A faiss without GPU support (``faiss-cpu``) or a machine without a CUDA device
fails at ``fit`` with an error that says which, never a deep faiss traceback.
"""

from types import ModuleType
from typing import Any

from ._base import register_backend
from ._faiss import FaissIVFNeighbors, FaissNeighbors, _factory, _faiss


def gpu_faiss(name: str) -> ModuleType:
    """faiss, checked for GPU support and a visible CUDA device.

    Raises
    ------
    ImportError
        faiss is missing, or is a build without GPU support.
    RuntimeError
        faiss has GPU support but sees no CUDA device.
    """
    faiss = _faiss(name)
    if not hasattr(faiss, "StandardGpuResources") or not hasattr(faiss, "index_cpu_to_gpu"):
        version = getattr(faiss, "__version__", "?")
        raise ImportError(
            f"neighbors={name!r} needs faiss built with GPU support; the installed faiss {version} has "
            "none (faiss-cpu). On Linux x86-64 with CUDA 12: pip uninstall faiss-cpu, then "
            "pip install 'mlknn[gpu]' (faiss-gpu-cu12). Without a GPU use neighbors='faiss' or 'faiss-ivf'."
        )
    if faiss.get_num_gpus() < 1:
        raise RuntimeError(
            f"neighbors={name!r}: faiss has GPU support but sees no CUDA device (check nvidia-smi and "
            "CUDA_VISIBLE_DEVICES). Use neighbors='faiss' or 'faiss-ivf' on the CPU."
        )
    return faiss


class _GpuMixin:
    """Copy the index to GPU 0 when built and back to the host when pickled."""

    _name: str
    _index: Any
    _gpu_resources: Any

    def _on_device(self, faiss: ModuleType, index: Any) -> Any:
        faiss = gpu_faiss(self._name)
        self._gpu_resources = faiss.StandardGpuResources()
        return faiss.index_cpu_to_gpu(self._gpu_resources, 0, index)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.pop("_gpu_resources", None)
        index = state.pop("_index", None)
        if index is not None:
            faiss = _faiss(self._name)
            state["_index_bytes"] = faiss.serialize_index(faiss.index_gpu_to_cpu(index))
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        data = state.pop("_index_bytes", None)
        self.__dict__.update(state)
        if data is not None:
            faiss = gpu_faiss(self._name)
            self._index = self._on_device(faiss, faiss.deserialize_index(data))
            if hasattr(self, "nprobe_"):
                self._index.nprobe = self.nprobe_


class FaissGPUNeighbors(_GpuMixin, FaissNeighbors):
    """Exact neighbours with faiss's flat L2 index on a CUDA GPU.

    :class:`FaissNeighbors` on the device: the same answer as ``neighbors="brute"``
    (candidates re-ranked exactly in float64 on the host, boundary ties recomputed).

    Parameters
    ----------
    metric : {"euclidean", "sqeuclidean", "cosine"}, default="euclidean"
        ``"euclidean"``, ``"sqeuclidean"`` (the same neighbours) or ``"cosine"`` (``1 -
        cos(a, b)``).
    n_jobs : int, optional
        Host threads of the re-ranking.
    random_state : int, optional
        Unused (the flat search is deterministic); accepted as by every backend.

    Attributes
    ----------
    n_samples_fit_ : int
        Number of training points.
    n_features_in_ : int
        Number of features of the training points.

    See Also
    --------
    FaissGPUIVFNeighbors : The IVF index on the GPU (approximate).
    TorchNeighbors : Exact search on a GPU through torch.

    Examples
    --------
    >>> # needs pip install 'mlknn[gpu]' and a CUDA device
    >>> import numpy as np
    >>> from mlknn.neighbors import FaissGPUNeighbors
    >>> X = np.random.RandomState(0).rand(100, 4)
    >>> FaissGPUNeighbors().fit(X).kneighbors(X[:2], 3, return_distance=False)[:, 0].tolist()  # doctest: +SKIP
    [0, 1]
    """

    _name = "faiss-gpu"


class FaissGPUIVFNeighbors(_GpuMixin, FaissIVFNeighbors):
    """Approximate neighbours with faiss's IVF-Flat index on a CUDA GPU.

    :class:`FaissIVFNeighbors` on the device (k-means training included).

    Parameters
    ----------
    metric : {"euclidean", "sqeuclidean", "cosine"}, default="euclidean"
        ``"euclidean"``, ``"sqeuclidean"`` (the same neighbours) or ``"cosine"`` (``1 -
        cos(a, b)``).
    nlist : int, optional
        Number of k-means cells; default ``4 sqrt(n)``, at most ``n / 39``.
    nprobe : int, optional
        Cells visited per query; default ``max(16, sqrt(nlist))``.
    n_jobs : int, optional
        Host threads of the re-ranking.
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
    FaissGPUNeighbors : The exact flat index on the GPU.
    estimate_recall : Measure the recall of an approximate index.

    Examples
    --------
    >>> # needs pip install 'mlknn[gpu]' and a CUDA device
    >>> import numpy as np
    >>> from mlknn.neighbors import FaissGPUIVFNeighbors
    >>> X = np.random.RandomState(0).rand(100, 4)
    >>> FaissGPUIVFNeighbors(random_state=0).fit(X).nprobe_ >= 1  # doctest: +SKIP
    True
    """

    _name = "faiss-gpu-ivf"


register_backend("faiss-gpu", _factory(FaissGPUNeighbors), exact=True, requires="faiss")
register_backend("faiss-gpu-ivf", _factory(FaissGPUIVFNeighbors), exact=False, requires="faiss")
