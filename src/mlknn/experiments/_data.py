"""The data of an experiment: loading by name and dataset-level preprocessing.

A label matrix keeps its kind through the harness: a dense Y stays a dense
ndarray (as loaded), a sparse Y (the extreme-classification loader's CSR, or a
CSR given in ``data=``) stays sparse through splitting, preprocessing and the
estimators (see docs/experiments.md, "Sparse labels").
"""

import os
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..utils._typing import LabelMatrix, MatrixLike


def as_label_matrix(Y: MatrixLike) -> LabelMatrix:
    """A sparse Y as given (row slicing works on CSR), anything else as an ndarray.

    ``np.asarray`` of a scipy sparse matrix is a 0-d object array, so a sparse Y
    must not go through it.
    """
    if sp.issparse(Y):
        return Y.tocsr() if Y.format != "csr" else Y
    return np.asarray(Y)


def load_dataset(
    name: str, data_home: str | os.PathLike[str] | None = None
) -> tuple[MatrixLike, LabelMatrix]:
    """X, Y of a dataset name (``$MLKNN_DATA``), a data file path or ``simulated2d``.

    Y is an ndarray, or CSR when the loader returns sparse labels.

    Parameters
    ----------
    name : str
        A dataset of ``MANIFEST.tsv``, a path to a data file, or ``"simulated2d"``
        (:func:`mlknn.datasets.make_simulated_2d`).
    data_home : str or path-like, default=None
        Dataset folder; default ``$MLKNN_DATA``.

    Returns
    -------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
        The features.
    Y : ndarray or CSR matrix of shape (n_samples, n_labels)
        The labels.

    See Also
    --------
    mlknn.datasets.load : The loader behind dataset names and paths.
    run_experiment : Loads its datasets with this function.

    Examples
    --------
    >>> from mlknn.experiments import load_dataset
    >>> X, Y = load_dataset("simulated2d")
    >>> X.shape, Y.shape
    ((1019, 2), (1019, 3))
    """
    if name == "simulated2d":
        from ..datasets import make_simulated_2d

        b = make_simulated_2d(random_state=0)
        return b.X, as_label_matrix(b.Y)
    from ..datasets import load

    b = load(name, data_home=data_home)
    return b.X, as_label_matrix(b.Y)


def apply_prefilter(
    X: MatrixLike, Y: LabelMatrix, prefilter: dict[str, Any] | None
) -> tuple[MatrixLike, LabelMatrix]:
    """Dataset-level preprocessing (before splitting): drop rare labels, then the
    instances left without any label. Returns X, Y (Y sparse if it was)."""
    if prefilter is None:
        return X, Y
    from ..preprocessing import RareLabelFilter, labelled_rows

    Y = RareLabelFilter(prefilter["min_label_count"]).fit_transform(Y)
    if prefilter.get("drop_unlabelled"):
        keep = np.flatnonzero(labelled_rows(Y))
        if keep.size < Y.shape[0]:
            X, Y = X[keep], Y[keep]
    return X, Y
