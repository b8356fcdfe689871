"""Pure-ndarray counting kernels shared by the kNN algorithms."""

import numpy as np

from ..neighbors import NeighborGraph


def neighbor_label_counts(graph: NeighborGraph, Y, weights=None):
    """Count, for every point and label, how many of its neighbours have the label.

    This is the membership counting vector C_x of ML-kNN (seed 003 Knowl 11,
    seed 004 step "C_x(l)"). Computed as one sparse-by-dense product, so memory is
    O(n k + n q) and there is no Python loop over instances or labels.

    Parameters
    ----------
    graph : NeighborGraph
        Rows are points, columns their k neighbours (training indices).
    Y : ndarray of shape (n_train, n_labels)
        Training label matrix (0/1).
    weights : ndarray of shape (n_points, k), optional
        Weight of each neighbour (default 1: plain counts).

    Returns
    -------
    ndarray of shape (n_points, n_labels)
        int64 counts when unweighted, float64 sums otherwise.
    """
    A = graph.to_csr(Y.shape[0], weights)
    if weights is None:
        A = A.astype(np.int64)
        return np.asarray(A @ Y.astype(np.int64))
    return np.asarray(A @ Y.astype(np.float64))


def count_histograms(counts, Y, n_bins):
    """Per-label histograms of neighbour counts, split by the instance's own label.

    Returns ``c1[j, l]`` = number of training instances with label l whose count of
    l-labelled neighbours is j, and ``c0[j, l]`` the same for instances without l
    (seed 004's c[j] and c'[j]).

    Parameters
    ----------
    counts : ndarray of shape (n, q), int
    Y : ndarray of shape (n, q), 0/1
    n_bins : int
        k + 1.

    Returns
    -------
    c1, c0 : ndarrays of shape (n_bins, q), int64
    """
    n, q = counts.shape
    key = (counts * q + np.arange(q)[None, :]).ravel()
    pos = Y.ravel().astype(bool)
    c1 = np.bincount(key[pos], minlength=n_bins * q).reshape(n_bins, q)
    c0 = np.bincount(key[~pos], minlength=n_bins * q).reshape(n_bins, q)
    return c1, c0
