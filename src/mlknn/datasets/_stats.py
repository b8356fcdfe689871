"""Multi-label dataset indicators (label cardinality, density, diversity).

Definitions follow Zhang and Zhou's (2014) review (its problem setting) and the
MLHiKNN paper (Teng et al. 2025, Table 1): LCard is the mean number of relevant labels
per instance, LDen = LCard / q, LDiv the number of distinct label sets and
PLDiv = LDiv / n.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypedDict

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ..utils._typing import MatrixLike

__all__ = ["dataset_stats", "label_stats"]


class DatasetStats(TypedDict):
    """The dict :func:`dataset_stats` returns (its keys are documented there)."""

    n: int
    d: int | None
    q: int
    lcard: float
    ldens: float
    ldiv: int
    pldiv: float


class LabelStats(TypedDict):
    """The dict :func:`label_stats` returns (its keys are documented there)."""

    count: NDArray[np.int64]
    frequency: NDArray[np.float64]
    irlbl: NDArray[np.float64]
    mean_ir: float
    label_names: list[str] | None


def _as_binary(Y: MatrixLike) -> NDArray[np.bool_]:
    if sp.issparse(Y):
        Y = Y.toarray()
    A = np.asarray(Y)
    if A.ndim != 2:
        raise ValueError(f"Y must be 2-D (n_samples, n_labels), got shape {A.shape}")
    if A.dtype != bool and not np.isin(A, (0, 1)).all():
        raise ValueError("Y must contain only 0/1 values")
    return A.astype(bool, copy=False)


def dataset_stats(Y: MatrixLike, X: MatrixLike | None = None) -> DatasetStats:
    """Size and label indicators of a multi-label dataset.

    Parameters
    ----------
    Y : array-like or sparse matrix of shape (n_samples, n_labels)
        Binary label matrix.
    X : array-like or sparse matrix of shape (n_samples, n_features), default=None
        Feature matrix; only its number of columns is used.

    Returns
    -------
    stats : dict
        ``n`` (instances), ``d`` (features, None without ``X``), ``q``
        (labels), ``lcard`` (label cardinality, mean labels per instance),
        ``ldens`` (label density, lcard / q), ``ldiv`` (label diversity,
        number of distinct label sets, the empty set included), ``pldiv``
        (ldiv / n).

    See Also
    --------
    label_stats : Per-label frequencies and imbalance ratios.
    list_datasets : The same statistics as recorded in ``MANIFEST.tsv``.

    References
    ----------
    M.-L. Zhang and Z.-H. Zhou, "A Review on Multi-Label Learning Algorithms",
    IEEE Transactions on Knowledge and Data Engineering, 2014, section on problem setting
    (label cardinality, density and diversity).

    Examples
    --------
    >>> import numpy as np
    >>> s = dataset_stats(np.array([[1, 0], [1, 1], [1, 0]]))
    >>> s["lcard"], s["ldiv"]
    (1.3333333333333333, 2)
    """
    Yb = _as_binary(Y)
    n, q = Yb.shape
    x_shape = None if X is None else (X.shape if hasattr(X, "shape") else np.shape(X))
    if x_shape is not None and x_shape[0] != n:
        raise ValueError(f"X has {x_shape[0]} rows but Y has {n}")
    lcard = float(Yb.sum()) / n if n else 0.0
    if n:
        # Pack each label row into bytes so that np.unique compares short
        # byte rows instead of q booleans (delicious: 983 labels -> 123 bytes).
        packed = np.packbits(Yb, axis=1)
        ldiv = int(np.unique(packed, axis=0).shape[0])
    else:
        ldiv = 0
    return {
        "n": int(n),
        "d": None if x_shape is None else int(x_shape[1]),
        "q": int(q),
        "lcard": lcard,
        "ldens": lcard / q if q else 0.0,
        "ldiv": ldiv,
        "pldiv": ldiv / n if n else 0.0,
    }


def label_stats(Y: MatrixLike, label_names: Sequence[str] | None = None) -> LabelStats:
    """Per-label frequencies and imbalance ratios.

    Parameters
    ----------
    Y : array-like or sparse matrix of shape (n_samples, n_labels)
        Binary label matrix.
    label_names : list of str, default=None
        Names to carry along in the result.

    Returns
    -------
    stats : dict
        ``count`` (int array, positives per label), ``frequency`` (count / n),
        ``irlbl`` (imbalance ratio per label, max(count) / count; inf for a
        label that never occurs), ``mean_ir`` (mean of the finite ``irlbl``),
        ``label_names`` (list or None). ``count`` is what rare-label
        filtering needs, e.g. ``Y[:, label_stats(Y)["count"] >= 20]``
        (the MLHiKNN protocol removes labels with fewer than 20 instances).

    See Also
    --------
    dataset_stats : Cardinality, density and diversity of the whole label matrix.
    mlknn.preprocessing.RareLabelFilter : Drops the labels with too few instances.

    References
    ----------
    F. Charte, A. J. Rivera, M. J. del Jesus and F. Herrera, "Addressing
    Imbalance in Multilabel Classification: Measures and Random Resampling
    Algorithms", Neurocomputing 163, 2015 (IRLbl and MeanIR).

    Examples
    --------
    >>> import numpy as np
    >>> from mlknn.datasets import label_stats
    >>> s = label_stats(np.array([[1, 0], [1, 1], [1, 0], [0, 0]]), label_names=["a", "b"])
    >>> s["count"].tolist(), s["frequency"].tolist(), s["irlbl"].tolist(), s["mean_ir"]
    ([3, 1], [0.75, 0.25], [1.0, 3.0], 2.0)
    """
    Yb = _as_binary(Y)
    n, q = Yb.shape
    if label_names is not None and len(label_names) != q:
        raise ValueError(f"{len(label_names)} label names for {q} labels")
    count = Yb.sum(axis=0).astype(np.int64)
    frequency = count / n if n else np.zeros(q)
    with np.errstate(divide="ignore"):
        irlbl = np.where(count > 0, count.max(initial=0) / np.maximum(count, 1), np.inf)
    finite = irlbl[np.isfinite(irlbl)]
    return {
        "count": count,
        "frequency": frequency,
        "irlbl": irlbl,
        "mean_ir": float(finite.mean()) if finite.size else float("nan"),
        "label_names": None if label_names is None else list(label_names),
    }
