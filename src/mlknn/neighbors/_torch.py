"""PyTorch backend (exact, GPU when there is one): ``neighbors="torch"``.

Beside ``neighbors="faiss-gpu"`` (faiss's CUDA 12 wheel, ``faiss-gpu-cu12``, Linux
x86-64 only; :mod:`mlknn.neighbors._faiss_gpu`): torch's CUDA wheels exist for more
platforms, and torch's CPU wheel runs the same code, so this backend is tested in CI
on the CPU and runs unchanged on a CUDA machine. Optional:
``pip install 'mlknn[gpu]'`` (a CUDA build of torch pulls several GB of wheels, so
the extra is kept out of ``dev`` and out of the default install).

How it follows mlknn's contract (see ``_CandidateBackend`` in ``_approximate.py``):

1. on the device, per chunk of queries, one matrix product gives the float32
   squared distances ``|q|^2 + |x|^2 - 2 q.x`` and ``torch.topk`` keeps the
   ``k + 8`` smallest (``k + 9`` for leave-one-out, whose own index is then
   removed wherever it appears, duplicates kept);
2. on the host, the candidates' squared distances are recomputed exactly in
   float64 from direct differences and each row is ordered by (distance, index);
3. each row is verified: its k-th exact distance must be below the smallest
   float32 distance any non-candidate can have (the last candidate's, minus the
   float32 rounding bound). A row that fails (a tie or near tie at the boundary,
   which ``topk`` cannot order by index) is answered by the host's brute kernel.

So ``neighbors="torch"`` returns exactly what ``neighbors="brute"`` returns, tie
rule included, on the GPU or the CPU. The matrix products run in full float32
(TF32 is switched off for them: its 10-bit mantissa would widen the rounding band
tenfold). Dense input only; sparse input raises an error naming the backend.
"""

import contextlib
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import numpy as np

from ..utils import check_optional_dependency
from ..utils._typing import NDArray
from ._approximate import _CandidateBackend
from ._base import register_backend

# Default bytes of one chunk's (rows x n_fit) float32 distance block on the device.
_CHUNK_MB = {"cpu": 256, "cuda": 2048}


def _torch() -> ModuleType:
    return check_optional_dependency("torch", "neighbors='torch'")


@contextlib.contextmanager
def _full_float32(torch: ModuleType) -> Iterator[None]:
    """Matrix products in IEEE float32 (no TF32) inside the block, restored after."""
    previous = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("highest")
    try:
        yield
    finally:
        torch.set_float32_matmul_precision(previous)


class TorchNeighbors(_CandidateBackend):
    """Exact neighbours with PyTorch: candidates on the device, exact re-ranking on the host.

    Parameters
    ----------
    metric : {"euclidean", "sqeuclidean", "cosine"}, default="euclidean"
        ``"euclidean"``, ``"sqeuclidean"`` (the same neighbours) or ``"cosine"`` (``1 -
        cos(a, b)``).
    device : str, optional
        A torch device (``"cuda"``, ``"cuda:1"``, ``"cpu"``). None: ``"cuda"`` when
        ``torch.cuda.is_available()``, else ``"cpu"``.
    working_memory : float, optional
        Megabytes of one chunk of float32 distances on the device; default 2048
        on CUDA, 256 on the CPU.
    n_jobs : int, optional
        CPU threads of torch (``torch.set_num_threads``, process-wide) when the
        device is the CPU; None leaves torch's setting.
    random_state : ignored
        Accepted so that every backend takes the same parameters; this search draws
        nothing at random.

    Attributes
    ----------
    device_ : str
        The device the index lives on.
    n_samples_fit_ : int
    n_features_in_ : int

    See Also
    --------
    BruteNeighbors : The same exact neighbours on the CPU with BLAS.

    Notes
    -----
    Gives the same indices and distances as :class:`BruteNeighbors` (see the
    module docstring). The training matrix is held on the device in float32
    (``4 n d`` bytes) and on the host as given.

    Examples
    --------
    >>> # needs pip install 'mlknn[gpu]'; uses CUDA when available
    >>> import numpy as np
    >>> X = np.random.RandomState(0).rand(100, 4)
    >>> from mlknn.neighbors import TorchNeighbors
    >>> index = TorchNeighbors(device="cpu").fit(X)  # doctest: +SKIP
    >>> index.kneighbors(X[:2], n_neighbors=3, return_distance=False)[:, 0].tolist()  # doctest: +SKIP
    [0, 1]
    >>> from mlknn.neighbors import BruteNeighbors
    >>> bool((index.kneighbors(X, 5)[1] == BruteNeighbors().fit(X).kneighbors(X, 5)[1]).all())  # doctest: +SKIP
    True
    """

    exact = True
    _name = "torch"
    _param_names = ("metric", "device", "working_memory", "n_jobs", "random_state")
    device_: str
    _X32: NDArray[np.float32]
    # torch.Tensor (float32, on device_): Any here, so that the type check does not
    # need torch, an optional dependency.
    _Xt: Any
    _xn: Any

    def __init__(self, metric: str = "euclidean", device: str | None = None, working_memory: float | None = None,
                 n_jobs: int | None = None, random_state: int | None = None) -> None:
        self.metric = metric
        self.device = device
        self.working_memory = working_memory
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _resolve_device(self, torch: ModuleType) -> str:
        if self.device is not None:
            return str(self.device)
        return "cuda" if torch.cuda.is_available() else "cpu"

    def _build(self, X32: NDArray[np.float32]) -> None:
        torch = _torch()
        self.device_ = self._resolve_device(torch)
        if self.n_jobs is not None and self.device_.startswith("cpu"):
            import os

            n = (os.cpu_count() or 1) if self.n_jobs < 0 else self.n_jobs
            torch.set_num_threads(max(1, int(n)))
        d = X32.shape[1]
        # The float32 rounding bound of |q|^2 + |x|^2 - 2 q.x, relative to
        # |q|^2 + max |x|^2: a sum of d products errs by at most about d eps
        # (worst case; typical sqrt(d) eps). 1e-4 as for faiss, more for wide data.
        self._rtol = max(1e-4, 4.0 * (d + 2) * 2.0**-24)
        self._X32 = X32
        self._to_device(torch)

    def _to_device(self, torch: ModuleType) -> None:
        X = torch.from_numpy(self._X32).to(self.device_)
        self._Xt = X
        self._xn = (X * X).sum(dim=1)  # |x|^2 in float32, on the device

    def _chunk_rows(self, n_fit: int) -> int:
        mb = self.working_memory
        if mb is None:
            mb = _CHUNK_MB["cuda" if self.device_.startswith("cuda") else "cpu"]
        return max(1, min(int(mb * 2**20 // (4 * max(n_fit, 1))), 1 << 16))

    def _search(self, Q32: NDArray[np.float32] | None, width: int) -> tuple[NDArray[np.intp], NDArray[np.float32]]:
        torch = _torch()
        if getattr(self, "_Xt", None) is None:  # unpickled: tensors are rebuilt lazily
            self._to_device(torch)
        Q32 = self._X32 if Q32 is None else Q32
        n_q, n_fit = Q32.shape[0], self._X32.shape[0]
        ind = np.empty((n_q, width), dtype=np.intp)
        dist = np.empty((n_q, width), dtype=np.float32)
        rows = self._chunk_rows(n_fit)
        X, xn = self._Xt, self._xn
        with torch.inference_mode(), _full_float32(torch):
            for a in range(0, n_q, rows):
                b = min(a + rows, n_q)
                Q = torch.from_numpy(np.ascontiguousarray(Q32[a:b])).to(self.device_)
                # |q|^2 + |x|^2 - 2 q.x, the product and the row term fused in addmm.
                D = torch.addmm(xn[None, :], Q, X.T, beta=1.0, alpha=-2.0)
                D += (Q * Q).sum(dim=1, keepdim=True)
                vals, idx = torch.topk(D, width, dim=1, largest=False, sorted=False)
                ind[a:b] = idx.cpu().numpy()
                dist[a:b] = vals.cpu().numpy()
        return ind, dist

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.pop("_Xt", None)  # device tensors: rebuilt from _X32 on first search
        state.pop("_xn", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        if "device_" in state and self.device is None:
            # Pickled on a GPU machine, loaded on one without (or vice versa).
            self.device_ = self._resolve_device(_torch())


def _make(metric: str = "euclidean", n_jobs: int | None = None, random_state: int | None = None,
          **params: Any) -> TorchNeighbors:
    return TorchNeighbors(metric=metric, n_jobs=n_jobs, random_state=random_state, **params)


register_backend("torch", _make, exact=True, requires="torch")
