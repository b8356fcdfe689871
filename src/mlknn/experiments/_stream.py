"""The prequential protocol's models carried from batch to batch (``partial_fit``).

Batch b of the prequential protocol is tested by a model trained on the stream's
first ``n_b`` rows. Refitting that model for every batch costs a neighbour search
over everything seen, every time. When a cell's model can be updated exactly, the
harness instead keeps it between batches and gives it the rows that arrived since
(``partial_fit``), which is, bit for bit, the model a refit would give (the
estimators' guarantee, docs/streams.md), so the stored measures are the same.

A cell is updated only when all of these hold; otherwise it is refitted:

* its preprocessing does not depend on the training part (no scaling, no feature
  selection, no per-part label filter): a scaler or a selector fitted per batch
  changes the features of every row already learnt, so the kept model would hold
  rows the refit path no longer has;
* the estimator's ``partial_fit`` is exact (not MLHiKNN's or IBLR's warm-started
  regressions, equal to a refit only to the solver's tolerance) and keeps every row
  (``max_samples`` unset);
* the search is exact and Euclidean, as the estimator's own (``partial_fit``
  maintains exact lists; the grid's shared search answers the refit path);
* the carried models fit in memory: each keeps its own copy of the rows seen, their
  labels and leave-one-out lists (:func:`carried_bytes`), where the refit path holds
  one batch's data at a time; cells that would take the models past the resource
  guards' limit are refitted. The limit is the cell's estimator's own: its
  ``max_memory`` parameter when set, else :func:`mlknn.config_context`'s
  ``max_memory`` (default half the available memory).
"""

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..utils._typing import Estimator, LabelMatrix, MatrixLike
from ._settings import PreprocessingConfig

#: Searches whose neighbours the kept models' exact lists reproduce.
_EXACT_SEARCHES = ("auto", "brute")


@dataclass
class StreamModel:
    """A cell's model kept between batches: fitted on the stream's first ``n_seen`` rows."""

    estimator: Estimator
    n_seen: int


def updates_in_place(preprocessing: PreprocessingConfig) -> bool:
    """Whether the fold-level preprocessing leaves every training row as it is.

    Parameters
    ----------
    preprocessing : PreprocessingConfig

    Returns
    -------
    bool
    """
    prep = preprocessing.fold_level()
    return prep["scaling"] == "none" and prep["feature_selection"] is None and prep["min_label_count"] == 0


def can_update(est: Estimator, preprocessing: PreprocessingConfig, search: dict[str, Any]) -> bool:
    """Whether a prequential cell of ``est`` may be carried by ``partial_fit`` (see the module).

    Parameters
    ----------
    est : estimator
    preprocessing : PreprocessingConfig
    search : dict
        The grid's shared search (``neighbors``, ``metric``).

    Returns
    -------
    bool
    """
    return (
        updates_in_place(preprocessing)
        and bool(getattr(est, "_partial_fit_exact", False))
        and getattr(est, "max_samples", None) is None
        and search.get("neighbors") in _EXACT_SEARCHES
        and getattr(est, "neighbors", None) in _EXACT_SEARCHES
        and search.get("metric") == getattr(est, "metric", None) == "euclidean"
    )


def _bytes_of(A: MatrixLike) -> int:
    if sp.issparse(A):
        return int(A.data.nbytes + A.indices.nbytes + A.indptr.nbytes)
    return int(np.asarray(A).nbytes)


def carried_bytes(X: MatrixLike, Y: LabelMatrix, width: int) -> float:
    """Memory one carried model holds once it has learnt every row of (X, Y).

    The rows as validated (float64) and the index's copy of them, the labels, and
    the leave-one-out lists (``width`` squared distances and indices per row).

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, d)
    Y : ndarray or sparse matrix of shape (n, q)
    width : int
        Neighbours kept per row (the widest search of the grid's cells).

    Returns
    -------
    float
        Bytes.
    """
    n = X.shape[0]
    rows = _bytes_of(X) * max(1.0, 8 / X.dtype.itemsize)
    return float(2.0 * rows + _bytes_of(Y) + 16.0 * n * (width + 2))
