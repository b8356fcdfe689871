"""Learning from the observed entries of an incomplete label matrix (docs/incomplete_labels.md).

The reading shared by the count-based estimators (ML-kNN in every variant,
DML-kNN, BML-kNN, NC, BR-kNN and its -a / -b rules). An entry y_i(l) is either
observed (0 or 1) or unknown; unknown entries are assumed missing completely at
random, so that the observed entries of a label are a random sample of its
entries and estimates over the observed entries alone are unbiased (Rubin
1976, ignorability of the missing-data mechanism). Under that assumption:

* **a neighbourhood's count** C_x(l), "how many of x's N neighbours have l", is
  estimated from the N_obs neighbours whose label l is observed, rescaled to N:
  ``rint(N * C_obs / N_obs)`` (the proportion among the observed neighbours, in
  the units the likelihood tables use). With no observed neighbour the
  proportion falls back to the label's observed frequency,
  ``rint(N * f_l)``. A weighted vote is rescaled the same way without the
  rounding. A neighbourhood without unknown entries keeps its count exactly;
* **the tables learned from the training set** (priors, count histograms,
  DML-kNN's evidence counts) count an instance for label l only when its own
  y_i(l) is observed: P(H_1^l) is estimated over the observed entries of
  column l, and the histograms c[j], c'[j] over the instances whose label l is
  known.

Reading unknown as negative (``missing_labels="negative"``) is the other
choice: every unknown entry is a 0 and nothing here runs.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..utils._typing import FloatArray, LabelMatrix, MatrixLike, NDArray
from ._kernels import label_frequencies, safe_ratio


@dataclass
class MissingLabels:
    """The unknown entries of a training Y and what the counts need from them.

    A plain class, not a named tuple: :mod:`mlknn.persistence` stores tuples as
    tuples, objects with their class.
    """

    #: uint8 (n, q): 1 marks an unknown entry (ndarray, or CSR for a sparse Y).
    unknown: MatrixLike
    #: (q,) observed entries per label.
    n_observed: NDArray[np.int64]
    #: (q,) observed frequency of each label (positives / observed entries; 0 when none is observed).
    frequency: FloatArray


def missing_labels_of(Y: LabelMatrix, unknown: MatrixLike | None) -> MissingLabels | None:
    """The :class:`MissingLabels` of a validated Y (0 at its unknown entries), or None when complete."""
    if unknown is None:
        return None
    n_observed = Y.shape[0] - label_frequencies(unknown)
    return MissingLabels(unknown, n_observed, safe_ratio(label_frequencies(Y), n_observed))


def observed_counts(
    count: Callable[[LabelMatrix], MatrixLike],
    Y: LabelMatrix,
    missing: MissingLabels | None,
    sizes: int | NDArray[Any],
    *,
    rounded: bool = True,
) -> MatrixLike:
    """Neighbourhood counts over the observed labels, rescaled to the neighbourhood size.

    Parameters
    ----------
    count : callable
        The estimator's own counting of a label matrix over its neighbourhoods
        (called with Y, and with the unknown mask when there is one).
    Y : ndarray or csr_array of shape (n_train, q)
        0 at the unknown entries.
    missing : MissingLabels or None
        None: ``count(Y)`` unchanged.
    sizes : int or ndarray of shape (n_points,)
        N, each neighbourhood's size (for a weighted vote: the total it is scaled to).
    rounded : bool, default=True
        Round to the nearest integer (counts index the likelihood tables); False
        for weighted votes.

    Returns
    -------
    ndarray of shape (n_points, q) (int64 when rounded, else float64), or a
    canonical csr_array when the counts are sparse.
    """
    positive = count(Y)
    if missing is None:
        return positive
    return rescaled_counts(positive, count(missing.unknown), sizes, missing, rounded=rounded)


def rescaled_counts(
    positive: MatrixLike, unknown: MatrixLike, sizes: int | NDArray[Any], missing: MissingLabels,
    *, rounded: bool = True,
) -> MatrixLike:
    """The counts of :func:`observed_counts` from the counts of Y and of its unknown mask.

    Parameters
    ----------
    positive, unknown : ndarray or csr_array of shape (n_points, q)
        Neighbours with the label observed positive, and with it unknown.
    sizes, rounded
        As in :func:`observed_counts`.
    missing : MissingLabels

    Returns
    -------
    ndarray or csr_array of shape (n_points, q)
    """
    if sp.issparse(positive):
        return _sparse_rescaled(sp.csr_array(positive), sp.csr_array(unknown), sizes, missing.frequency, rounded)
    positive, unknown = np.asarray(positive), np.asarray(unknown)
    size = np.broadcast_to(np.asarray(sizes)[..., None] if np.ndim(sizes) else np.asarray(sizes), positive.shape)
    value = _rescale(positive, unknown, size, missing.frequency[None, :], rounded)
    return value.astype(np.int64) if rounded else value


def _rescale(positive: NDArray[Any], unknown: NDArray[Any], size: NDArray[Any], frequency: FloatArray,
             rounded: bool) -> FloatArray:
    """``N C_obs / N_obs`` where some neighbour is unknown (``N f`` where all are), else C itself."""
    observed = size - unknown
    with np.errstate(invalid="ignore", divide="ignore"):
        scaled = np.where(observed > 0, (size * positive) / np.where(observed > 0, observed, 1), size * frequency)
    value = np.where(unknown > 0, scaled, positive).astype(np.float64)
    return np.rint(value) if rounded else value


def _sparse_rescaled(P: Any, U: Any, sizes: int | NDArray[Any], frequency: FloatArray, rounded: bool) -> Any:
    """:func:`_rescale` on the union of two CSR patterns, in O(nnz log nnz); no (n, q) array."""
    n, q = P.shape
    rows = np.concatenate([np.repeat(np.arange(n, dtype=np.int64), np.diff(P.indptr)),
                           np.repeat(np.arange(n, dtype=np.int64), np.diff(U.indptr))])
    keys = rows * q + np.concatenate([P.indices, U.indices]).astype(np.int64)
    union, at = np.unique(keys, return_inverse=True)
    positive = np.zeros(union.size)
    unknown = np.zeros(union.size)
    positive[at[: P.nnz]] = P.data
    unknown[at[P.nnz:]] = U.data
    r, c = union // q, union % q
    size = np.asarray(sizes)[r] if np.ndim(sizes) else np.full(union.size, float(sizes))
    value = _rescale(positive, unknown, size, frequency[c], rounded)
    dtype = np.int64 if rounded else np.float64
    out = sp.csr_array((value.astype(dtype), (r, c)), shape=(n, q))
    out.eliminate_zeros()
    out.sort_indices()
    return out


def unobserved_histogram(counts: MatrixLike, missing: MissingLabels, n_bins: int) -> NDArray[np.int64]:
    """Per-label histogram of the counts at the unknown entries, shape (n_bins, q).

    What an ML-kNN histogram of the instances *without* label l (c'[j]) wrongly
    holds when unknown entries are read as 0: subtracting it leaves the
    histogram over the instances whose label l is observed negative.
    """
    q = counts.shape[1]
    U = missing.unknown
    if sp.issparse(counts):
        at = sp.csr_array(sp.csr_array(counts).multiply(U))
        at.eliminate_zeros()
        hist = np.bincount(at.data.astype(np.int64) * q + at.indices, minlength=n_bins * q).reshape(n_bins, q)
        hist[0] = label_frequencies(U) - hist[1:].sum(axis=0)
        return hist
    rows, cols = np.nonzero(np.asarray(U))
    key = np.asarray(counts)[rows, cols].astype(np.int64) * q + cols
    return np.bincount(key, minlength=n_bins * q).reshape(n_bins, q)
