"""Step 1 of the exact search: the training points in the layout the GEMM reads.

:class:`KeyLayout` holds the prepared training points (CSR or C-contiguous,
L2-normalised for cosine) and the arrays from which one matrix product gives the
ranking key ``v = |x|^2 / 2 - q.x`` of every (query, training point) pair: ``v``
orders a row's training points exactly as the squared distance ``|q|^2 + 2 v``
does, so no elementwise pass is needed. Steps 2-3 (``_kernel.py``) select and
re-rank candidates from those keys.
"""

from typing import Any

import numpy as np
import scipy.sparse as sp

from ...utils._typing import MatrixLike, NDArray, SparseMatrix
from .._contract import prepared_sqnorms

#: The GEMM's keys (float32 for dense data; float32/float64 for sparse).
Keys = NDArray[np.floating[Any]]

#: The float64 scratch of the dense layout's blocks (about a core's L2 cache at most).
_SCRATCH_BYTES = 1 << 18


class KeyLayout:
    """The fitted training points in step 1's layout.

    Parameters
    ----------
    X : ndarray or csr_matrix of shape (n_samples, n_features)
        Prepared training points (``prepare_points``: float32/float64, canonical
        CSR or C-contiguous, L2-normalised rows for cosine).

    Attributes
    ----------
    X : ndarray or csr_matrix
        The training points as given.
    sqnorm : ndarray of shape (n_samples,), float64
        Their squared norms.
    sqnorm_max : float
        The largest of them: the rounding scale of keys computed uncentred.
    aug : ndarray of shape (n_samples, n_features + 1), float32, or None
        Dense data: ``[X - center, |X - center|^2 / 2]``, read by the GEMM directly.
        Centring keeps the rounding band (relative to the norms) narrow for data far
        from the origin; float32 halves the GEMM of float64 input, and exactness comes
        from the float64 recomputation of step 3. None for sparse data.
    key_X : csr_matrix of shape (n_samples, n_features + 1), or None
        Sparse data: ``[X, |x|^2 / 2]``, so that its product with ``[-q; 1]`` writes
        ``v`` itself. float32 when every stored value is exactly a float32 (binary,
        counts). None for dense data.
    center : ndarray of shape (n_features,), float64
        Dense data: the column means the keys are centred on (empty for sparse data).
    key_sqnorm : ndarray of shape (n_samples,), float64
        Dense data: ``|x - center|^2``, the rounding scale of the symmetric
        leave-one-out keys (empty for sparse data).
    key_sqnorm_max : float
        Dense data: the largest of ``key_sqnorm`` (0 for sparse data).
    """

    def __init__(self, X: MatrixLike) -> None:
        self.X = X
        # Dense C-ordered rows: their norms come with the keys' below, block by block.
        blockwise = not sp.issparse(X) and X.flags.c_contiguous
        self.sqnorm = np.empty(X.shape[0]) if blockwise else prepared_sqnorms(X)
        self.aug: Keys | None = None
        self.key_X: SparseMatrix | None = None
        self.center: NDArray[np.float64] = np.zeros(0)
        self.key_sqnorm: NDArray[np.float64] = np.zeros(0)
        self.key_sqnorm_max = 0.0
        if sp.issparse(X):
            # Sparse training data: the chunk's keys are computed transposed, as
            # X @ Q.T with the chunk's queries dense (d x rows, cache-resident):
            # scipy's csr_matvecs streams X once and writes contiguous rows, where
            # Q @ X.T would multiply sparse by sparse and then densify. Stored
            # augmented, so that no pass over the (n_fit, rows) keys subtracts the
            # half-norms: bit for bit the same keys (the half-norm is the last term
            # of each row's float sum either way).
            key_dtype = X.dtype
            if X.dtype == np.float64 and np.array_equal(X.data.astype(np.float32), X.data):
                key_dtype = np.dtype(np.float32)
            half = (0.5 * self.sqnorm).astype(key_dtype)
            self.key_X = sp.hstack([X.astype(key_dtype), sp.csr_matrix(half[:, None])], format="csr")
        else:
            n, d = X.shape
            self.center = X.mean(axis=0, dtype=np.float64) if n else np.zeros(d)
            aug = np.empty((n, d + 1), dtype=np.float32)
            csq = np.empty(n, dtype=np.float64)
            # Data beyond float32's range become inf here, by design: the inf keys and
            # rounding scale make every point a candidate of the exact float64 pass, so
            # the overflow is expected and its RuntimeWarning says nothing to the user.
            # Blocks of a few hundred KiB in float64 through one scratch buffer:
            # whole-array float64 copies would cost more in first-touch page faults
            # than the arithmetic. Row by row the same sums as prepared_sqnorms and
            # a whole-array einsum (each row is summed alone).
            rows = max(1, _SCRATCH_BYTES // (8 * max(d, 1)))
            scratch = np.empty((min(rows, n), d), dtype=np.float64)
            with np.errstate(over="ignore"):
                for a in range(0, n, rows):
                    b = min(a + rows, n)
                    block = scratch[: b - a]
                    if blockwise:
                        np.copyto(block, X[a:b])
                        self.sqnorm[a:b] = np.einsum("ij,ij->i", block, block)
                    np.subtract(X[a:b], self.center, out=aug[a:b, :d], casting="unsafe")
                    np.copyto(block, aug[a:b, :d])
                    csq[a:b] = np.einsum("ij,ij->i", block, block)
                aug[:, d] = 0.5 * csq
            self.aug = aug
            self.key_sqnorm = csq
            self.key_sqnorm_max = float(csq.max(initial=0.0))
        self.sqnorm_max = float(self.sqnorm.max(initial=0.0))

    @property
    def n_terms(self) -> int:
        """Products summed per key (the width of the stored key matrix)."""
        keyed = self.aug if self.aug is not None else self.key_X
        return self.X.shape[1] + 1 if keyed is None else int(keyed.shape[1])

    def ranking_keys(
        self, Qc: MatrixLike, qn: NDArray[np.float64], buf: Keys | None, loo_offset: int | None = None
    ) -> tuple[Keys, NDArray[np.float64]]:
        """Query-major keys ``v = |x|^2 / 2 - q.x``, shape (rows, n_fit), and their rounding scale.

        Parameters
        ----------
        Qc : ndarray or sparse matrix of shape (rows, n_features)
            A chunk of prepared queries.
        qn : ndarray of shape (rows,), float64
            Their squared norms.
        buf : ndarray of shape (>= rows, n_fit), or None
            Where the dense GEMM writes (reused between chunks); None: a new array.
        loo_offset : int, optional
            The queries are the training points ``loo_offset, ...``, whose centred
            float32 rows and norms the layout already holds.

        Returns
        -------
        keys : ndarray of shape (rows, n_fit)
        scale : ndarray of shape (rows,), float64
            Per row, the scale of the keys' rounding error: ``|q|^2 + max |x|^2`` in
            the space the keys were computed in (centred for dense data).
        """
        X = self.X
        n_rows = Qc.shape[0]
        if self.aug is not None:
            aug = self.aug
            d = aug.shape[1] - 1
            Qa = np.empty((n_rows, d + 1), dtype=aug.dtype)
            if loo_offset is not None:
                # The same bits as below: float32(mean - x) = -float32(x - mean),
                # and the norms of the same float32 rows.
                rows = slice(loo_offset, loo_offset + n_rows)
                np.negative(aug[rows, :d], out=Qa[:, :d])
                scale = self.key_sqnorm[rows] + self.key_sqnorm_max
            else:
                Qd = Qc.toarray() if sp.issparse(Qc) else Qc
                np.subtract(self.center, Qd, out=Qa[:, :d], casting="unsafe")  # -(q - mean)
                q64 = Qa[:, :d].astype(np.float64)
                scale = np.einsum("ij,ij->i", q64, q64) + self.key_sqnorm_max
            Qa[:, d] = 1.0
            return np.matmul(Qa, aug.T, out=None if buf is None else buf[:n_rows]), scale
        prod = Qc @ X.T
        D = prod.toarray() if sp.issparse(prod) else np.asarray(prod)
        if not D.flags.c_contiguous:
            D = np.ascontiguousarray(D)
        if D.dtype != np.float64 and D.dtype != np.float32:
            D = D.astype(np.float64)
        np.subtract((0.5 * self.sqnorm).astype(D.dtype)[None, :], D, out=D)
        return D, qn + self.sqnorm_max

    def transposed_keys(self, Qc: MatrixLike) -> Keys:
        """Training-major keys of sparse training data, shape (n_fit, rows), as ``X @ q``.

        The chunk's queries are made dense (d x rows, cache-resident): scipy's
        csr_matvecs streams X once and writes contiguous rows.

        Parameters
        ----------
        Qc : ndarray or sparse matrix of shape (rows, n_features)
            A chunk of prepared queries.

        Returns
        -------
        ndarray of shape (n_fit, rows)
        """
        Xk = self.key_X
        assert Xk is not None, "sparse training data only"
        dt = Xk.dtype
        d = Xk.shape[1] - 1
        Qa = np.empty((d + 1, Qc.shape[0]), dtype=dt)  # [-q; 1], one column per query
        np.negative(Qc.T.toarray() if sp.issparse(Qc) else Qc.T, out=Qa[:d], casting="unsafe")
        Qa[d] = 1.0
        V = np.asarray(Xk @ Qa)  # (n_fit, rows) = |x|^2 / 2 - X q
        if not V.flags.c_contiguous or V.dtype != dt:
            V = np.ascontiguousarray(V, dtype=dt)
        return V
