"""Type aliases shared by the annotated modules of mlknn.

numpy ships its own types (:mod:`numpy.typing`); scipy and scikit-learn ship none,
so their objects are typed as ``Any`` through the named aliases below: the name
still says what is expected, and a stub package for scipy would narrow them here
and nowhere else.
"""

from typing import Any, TypeAlias

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "ArrayLike",
    "BoolArray",
    "Estimator",
    "FloatArray",
    "IntArray",
    "LabelArray",
    "LabelMatrix",
    "MatrixLike",
    "NDArray",
    "SparseMatrix",
    "TopK",
]

#: A ``scipy.sparse`` matrix or array (CSR unless said otherwise); scipy has no stubs.
SparseMatrix: TypeAlias = Any
#: What a public function accepts as X or Y: array-like or scipy sparse (``Any``:
#: a union of :data:`ArrayLike` with scipy's untyped classes cannot be narrowed by
#: ``scipy.sparse.issparse``).
MatrixLike: TypeAlias = Any
#: Validated labels: a dense uint8 ndarray or a canonical uint8 ``csr_array``.
LabelMatrix: TypeAlias = Any
#: A scikit-learn estimator (scikit-learn has no stubs).
Estimator: TypeAlias = Any


FloatArray: TypeAlias = NDArray[np.floating[Any]]
IntArray: TypeAlias = NDArray[np.integer[Any]]
BoolArray: TypeAlias = NDArray[np.bool_]
#: A dense 0/1 label indicator matrix (uint8 after validation).
LabelArray: TypeAlias = NDArray[np.uint8]
#: ``predict_topk``'s result: labels (n, k) int64 and their scores (n, k) float64.
TopK: TypeAlias = tuple[NDArray[np.int64], NDArray[np.float64]]
