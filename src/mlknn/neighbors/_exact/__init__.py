"""Exact k-nearest-neighbour search: one index, its strategies and its compiled kernels.

Why our own kernel rather than ``sklearn.neighbors.NearestNeighbors``: mlknn's
contract is stricter than scikit-learn's. We need (a) a deterministic tie rule
(equal distances ordered by the lower training index) so that every backend, the
distributed path and the loop references agree exactly, and (b) distances exact
enough for duplicates to come out as 0 (the GEMM expansion
``|q|^2 - 2 q.x + |x|^2`` does not give 0 for identical rows).

The algorithm, per chunk of queries (memory bounded by ``working_memory``):

1. one matrix product gives the ranking key ``v = |x|^2 / 2 - q.x`` for every
   (query, training point) pair (``_layout.py``): the training matrix is stored
   centred and augmented with a ``|x|^2 / 2`` column, the queries with a ``-1``
   column, so the GEMM writes ``v`` directly. ``v`` orders the training points of a
   row exactly as the squared distance does;
2. a threshold that is at least the k-th smallest ``v`` of the row, from the minima
   of interleaved column groups, plus twice the GEMM rounding bound;
3. the members of the groups under the threshold are the candidates; their squared
   distances are recomputed exactly in float64 and ordered by (distance, index)
   (``_kernel.py``).

The modules:

* ``_index.py``: :class:`ExactIndex`, which owns the fitted layout and offers
  ``kneighbors`` (new queries, or the leave-one-out graph) and ``radius_counts``;
  the strategy of each call is chosen by named guards (``..._is_usable_for``);
* ``_layout.py``: step 1 (:class:`KeyLayout`);
* ``_kernel.py``: steps 2-3 of one chunk, the exact distances, the (distance, index)
  ordering;
* ``_loo.py``: the leave-one-out graph on the symmetric Gram matrix (half the GEMM);
* ``_radius.py``: radius counts on the same keys;
* ``_compiled.py``: the numba kernels (``_numba_*.py``) where numba is installed,
  with the numpy path as the fallback giving the same bits.

The threads are the process-wide pool of :mod:`mlknn.utils._threads`.
"""

from ._index import ExactIndex
from ._kernel import exact_sqdist, topk_sorted

__all__ = ["ExactIndex", "exact_sqdist", "topk_sorted"]
