"""MULAN's reading of BR-kNN, BR-kNN-a and BR-kNN-b (``variant="mulan"``).

What ``mulan.classifier.lazy.BRkNN`` (MULAN's last commit, with Weka 3.7.12)
does differently from the paper reading of :mod:`._brknn` (read to learn;
nothing is copied; the full table is in docs/notes/brknn.md):

1. **Ties at the k-th distance.** Weka's ``LinearNNSearch`` returns every
   training instance tied with the k-th distance, so a query has k' >= k
   neighbours and all of them vote. :func:`tie_extended_neighbourhoods` finds
   them from exact float64 distances, searching wider only for the rows whose
   graph ends in a tie.
2. **Weka's float arithmetic.** ``getConfidences`` starts every label at
   ``1/n`` and the total at ``q/n``, adds 1.0 per neighbour (per voting
   neighbour for a label), and divides: :func:`weka_tables` reproduces those
   sums in the same order, so confidences are bit-identical to MULAN's and the
   0.5 comparisons and the ``Math.round`` of BR-kNN-b fall the same way.
3. **Random ties.** BR-kNN-a and -b draw among tied labels with a
   ``java.util.Random(1)`` (:mod:`._java_random`), consumed query by query:
   :func:`exta_select`, :func:`extb_select`.

Confidences are strictly increasing in the vote count within a row, so the
selections work on counts (see :mod:`._brknn_votes`). The draws are sequential
by nature (one stream, in test-row order): they run as a Python loop over the
rows that draw, and only those; everything else is vectorised.
"""

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..neighbors import NeighborGraph
from ..utils._typing import ArrayLike, BoolArray, MatrixLike, NDArray, SparseMatrix
from ._brknn_votes import (
    entry_rows,
    indicator,
    kth_absent,
    row_max_ties,
    row_sums,
    top_by_count,
)
from ._java_random import JavaRandom

# Width factor between two searches of the rows whose graph still ends in a tie. The
# exact kernel's cost grows with the width (it re-ranks every candidate in float64),
# so doubling costs no more than bigger jumps: more rounds, but narrower ones
# (docs/performance.md, "Figures behind the source's constants").
_GROWTH = 2

#: ``research(rows, width)``: the graph of some query rows, ``width`` wide.
_Research = Callable[[NDArray[np.intp], int], NeighborGraph]
_Int64 = NDArray[np.int64]
_Float64 = NDArray[np.float64]


def tie_extended_neighbourhoods(
    graph: NeighborGraph, k: int, n_train: int, research: _Research | None = None
) -> tuple[SparseMatrix, _Int64]:
    """The k nearest neighbours of each query plus every training point tied with the k-th.

    A row is complete when its graph has a column beyond the k-th whose distance
    is larger than the k-th distance, or when it already holds all ``n_train``
    points; the other rows (their last column still ties) are searched again,
    doubling the width each time, through ``research``. Distances are compared exactly
    (``==`` on the backend's float64 distances), as Weka does.

    Parameters
    ----------
    graph : NeighborGraph
        The queries' graph, at least k wide, sorted by (distance, index).
    k : int
    n_train : int
    research : callable, optional
        ``research(rows, width) -> NeighborGraph`` of the given query rows, ``width``
        wide. None: a row that needs it raises.

    Returns
    -------
    adjacency : csr_array of shape (n_queries, n_train), int64
        1 for each of a row's k' neighbours.
    k_prime : ndarray of shape (n_queries,), int64
    """
    n_queries = graph.n_points
    keep, complete = _tie_mask(graph.indices.shape[1], graph.distances, k, n_train)
    pieces_rows = [np.nonzero(keep & complete[:, None])[0]]
    pieces_cols = [graph.indices[keep & complete[:, None]]]
    rows = np.flatnonzero(~complete)
    width = graph.indices.shape[1]
    while rows.size:
        if research is None:
            raise ValueError(
                f"variant='mulan' counts every training instance tied with the k-th distance (k = {k}), "
                f"but {rows.size} query rows of the given graph end in a tie and no wider search is "
                "possible: pass X to predict_*_from_graph and index= to fit_from_graph, or a wider graph."
            )
        asked = min(n_train, max(_GROWTH * width, k + 1))
        wide = research(rows, asked)
        if wide.n_neighbors <= width:  # e.g. a precomputed graph with nothing beyond
            raise ValueError(
                f"variant='mulan': {rows.size} query rows end in a tie at the k-th distance (k = {k}) "
                f"and the backend returned {wide.n_neighbors} neighbours when asked for {asked}."
            )
        width = wide.n_neighbors
        keep, complete = _tie_mask(width, wide.distances, k, n_train)
        done = keep & complete[:, None]
        pieces_rows.append(rows[np.nonzero(done)[0]])
        pieces_cols.append(wide.indices[done])
        rows = rows[~complete]
    r = np.concatenate(pieces_rows)
    c = np.concatenate(pieces_cols)
    adjacency = sp.csr_array((np.ones(r.size, dtype=np.int64), (r, c)), shape=(n_queries, n_train))
    adjacency.sum_duplicates()
    return adjacency, np.diff(adjacency.indptr).astype(np.int64)


def _tie_mask(width: int, distances: NDArray[Any], k: int, n_train: int) -> tuple[BoolArray, BoolArray]:
    kth = distances[:, k - 1 : k]
    keep = np.zeros(distances.shape, dtype=bool)
    keep[:, :k] = True
    keep[:, k:] = distances[:, k:] == kth
    # A tie in the last column may continue beyond it, unless nothing is left.
    complete = ~keep[:, -1] | (width >= n_train)
    return keep, complete


def research_with(
    index: Any, X: MatrixLike, build_graph: Callable[[Any, MatrixLike, int], NeighborGraph]
) -> _Research:
    """``research`` for :func:`tie_extended_neighbourhoods`: query ``index`` again."""

    def research(rows: NDArray[np.intp], width: int) -> NeighborGraph:
        return build_graph(index, X[rows], width)

    return research


def weka_tables(n_train: int, n_labels: int, k_max: int) -> tuple[_Float64, _Float64]:
    """Weka's running sums: ``num[c]`` = 1/n + c ones, ``total[k']`` = q/n + k' ones.

    ``getConfidences`` adds ``weight = 1.0`` once per (neighbour, label) vote and
    once per neighbour to the total, starting from ``1.0 / max(1, n)`` and
    ``q / max(1, n)``. ``np.cumsum`` adds sequentially, in that order, so
    ``num[c] / total[k']`` is bit for bit MULAN's confidence (division, as Weka's
    ``Utils.normalize(doubles, sum)`` does).

    Returns
    -------
    num, total : ndarrays of shape (k_max + 1,), float64
    """
    n = max(1, int(n_train))
    ones = np.ones(int(k_max))
    num = np.cumsum(np.concatenate([[1.0 / n], ones]))
    total = np.cumsum(np.concatenate([[n_labels / n], ones]))
    return num, total


def java_round(x: ArrayLike) -> _Int64:
    """Java's ``Math.round`` (since Java 7): the nearest integer, halves up, exactly.

    ``floor(x + 0.5)`` would round 0.49999999999999994 up; ``x - floor(x)`` is
    exact for these magnitudes, so the comparison with 0.5 is too.
    """
    x = np.asarray(x, dtype=np.float64)
    low = np.floor(x)
    rounded: _Int64 = (low + (x - low >= 0.5)).astype(np.int64)
    return rounded


def mulan_proba_dense(counts: NDArray[Any], k_prime: _Int64, num: _Float64, total: _Float64) -> _Float64:
    """MULAN's (n, q) confidences from dense counts."""
    conf: _Float64 = num[counts] / total[k_prime][:, None]
    return conf


def mulan_majority(C: SparseMatrix, k_prime: _Int64, num: _Float64, total: _Float64) -> tuple[_Int64, _Int64]:
    """Rows and labels with ``conf >= 0.5`` (a label without votes never has it:
    ``(1/n) / (q/n + k') < 0.5`` for n >= 2)."""
    rows = entry_rows(C)
    hit = num[C.data] / total[k_prime[rows]] >= 0.5
    return rows[hit], C.indices[hit].astype(np.int64)


def exta_select(C: SparseMatrix, k_prime: _Int64, num: _Float64, total: _Float64, rng: JavaRandom) -> SparseMatrix:
    """BR-kNN-a (``labelsFromConfidences2``) on count-space CSR counts.

    The labels with ``conf >= 0.5``; a row with none gets the label of highest
    confidence, and among tied maxima (``Util.RandomIndexOfMax``: tied indices in
    increasing order) the one at ``rng.next_int(#tied)``. A row with a single
    maximum does not draw. A row without any vote has all q labels tied.

    Returns
    -------
    csr_array of shape (n, q), uint8
    """
    n, q = C.shape
    maj_rows, maj_labels = mulan_majority(C, k_prime, num, total)
    empty = np.ones(n, dtype=bool)
    empty[maj_rows] = False
    voted = np.diff(C.indptr) > 0
    fallback = np.flatnonzero(empty & voted)
    n_tied, _, tied_labels = row_max_ties(C, fallback)
    first = np.cumsum(n_tied) - n_tied
    # Rows without votes: every label ties; the i-th tied index is label i.
    silent = np.flatnonzero(empty & ~voted)
    draw_rows = np.concatenate([fallback, silent])
    draw_sizes = np.concatenate([n_tied, np.full(silent.size, q, dtype=np.int64)])
    order = np.argsort(draw_rows, kind="stable")  # the stream runs in test-row order
    picks = np.zeros(draw_rows.size, dtype=np.int64)
    # Sequential by nature: each draw advances the one stream. Only rows with a tie draw.
    for i in order[draw_sizes[order] > 1]:
        picks[i] = rng.next_int(int(draw_sizes[i]))
    n_fb = fallback.size
    chosen = np.concatenate([tied_labels[first + picks[:n_fb]], picks[n_fb:]])
    return indicator(np.concatenate([maj_rows, draw_rows]), np.concatenate([maj_labels, chosen]), (n, q))


def extb_sizes(C: SparseMatrix, k_prime: _Int64, total: _Float64) -> _Int64:
    """MULAN's ``avgPredictedLabels = Math.round(L / total)`` per row (before any clipping)."""
    return java_round(row_sums(C) / total[k_prime])


def extb_select(C: SparseMatrix, k_prime: _Int64, total: _Float64, rng: JavaRandom) -> SparseMatrix:
    """BR-kNN-b (``labelsFromConfidences3``) on count-space CSR counts.

    With ``s = Math.round(L / (q/n + k'))`` and Weka's ``stableSort`` (ascending
    confidence, ties by ascending index; sorted position ``p``): the pivot is the
    label at ``p = q - s``; MULAN walks down from ``p = q - 1`` to ``p = 1``
    (position 0 is never visited), sets every label above the pivot's
    confidence, collects the labels equal to it (in decreasing index order), and
    fills the ``s - #above`` remaining slots by ``rng.next_int(#collected)``,
    rejecting labels already chosen. Every row draws at least once.

    Where MULAN fails, mlknn chooses: ``s = 0`` (an index out of bounds there) is
    raised to 1, as in the paper reading; ``s = q`` (``nextInt(0)`` or an endless
    draw there) selects every label without drawing.

    Returns
    -------
    csr_array of shape (n, q), uint8
    """
    n, q = C.shape
    s = np.maximum(extb_sizes(C, k_prime, total), 1)
    nnz = np.diff(C.indptr)
    everything = np.flatnonzero(s >= q)
    s_rank = np.where(s >= q, 0, s)
    # The pivot count: the s-th highest count (0 where fewer than s labels are voted).
    _, _, top_counts = top_by_count(C, s_rank)
    last = np.cumsum(s_rank) - 1
    pivot = np.zeros(n, dtype=np.int64)
    ranked = s_rank > 0
    pivot[ranked] = top_counts[last[ranked]]
    rows = entry_rows(C)
    above = (C.data > pivot[rows]) & (s[rows] < q)  # rows with s = q take every label below
    n_above = np.bincount(rows[above], minlength=n)
    # Voted labels at the pivot, ascending; MULAN collects them descending. The
    # never-visited position 0 (the lowest-index label of minimum count) is one of
    # them only when every label is voted and the pivot is the minimum.
    at_pivot = C.data == pivot[rows]
    full = nnz == q
    row_min = np.zeros(n, dtype=np.int64)
    if full.any():
        row_min[full] = _row_min(C, np.flatnonzero(full))
    skip_first = full & (pivot == row_min)
    n_at = np.bincount(rows[at_pivot], minlength=n)
    at_labels = C.indices[at_pivot].astype(np.int64)
    at_first = np.cumsum(n_at) - n_at
    # pivot == 0: the zero-vote labels tie, all but the lowest one (position 0).
    zero_pivot = (pivot == 0) & ranked
    size = np.where(zero_pivot, q - nnz - 1, n_at - skip_first)
    need = s_rank - n_above
    draw = np.flatnonzero(ranked)
    pick_rows, pick_pos = _draw_distinct(rng, draw, size[draw], need[draw])
    # Position j of MULAN's list (descending labels, without the skipped lowest):
    # the (size - 1 - j)-th of the ascending tied labels, counted after the skip.
    asc = size[pick_rows] - 1 - pick_pos
    z = zero_pivot[pick_rows]
    chosen = np.empty(pick_rows.size, dtype=np.int64)
    chosen[z] = kth_absent(C, pick_rows[z], asc[z] + 1)
    nz = ~z
    chosen[nz] = at_labels[at_first[pick_rows[nz]] + skip_first[pick_rows[nz]] + asc[nz]]
    every_rows = np.repeat(everything, q)
    every_labels = np.tile(np.arange(q, dtype=np.int64), everything.size)
    return indicator(
        np.concatenate([rows[above], pick_rows, every_rows]),
        np.concatenate([C.indices[above].astype(np.int64), chosen, every_labels]),
        (n, q),
    )


def _row_min(C: SparseMatrix, rows: NDArray[Any]) -> NDArray[Any]:
    sub = C[rows]
    return np.minimum.reduceat(sub.data, sub.indptr[:-1])


def _draw_distinct(
    rng: JavaRandom, rows: NDArray[Any], sizes: NDArray[Any], needs: NDArray[Any]
) -> tuple[_Int64, _Int64]:
    """MULAN's fill loop: ``next = nextInt(size)``, kept if not chosen yet, until ``need`` are.

    Sequential by nature (one stream, query by query; the number of draws of a
    row depends on the values drawn), so a Python loop over the drawing rows.

    Returns
    -------
    rows, positions : ndarrays of shape (sum(needs),), int64
    """
    out_rows, out_pos = [], []
    for r, size, need in zip(rows.tolist(), sizes.tolist(), needs.tolist()):
        taken: list[int] = []
        while len(taken) < need:
            j = rng.next_int(size)
            if j not in taken:  # need is at most a handful: a list is the cheap set
                taken.append(j)
        out_rows.extend([r] * need)
        out_pos.extend(taken)
    return np.asarray(out_rows, dtype=np.int64), np.asarray(out_pos, dtype=np.int64)
