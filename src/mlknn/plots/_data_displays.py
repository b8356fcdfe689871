"""Displays of one dataset or neighbour graph (from_data / from_graph / from_labels).

The displays of experiment results, and the helpers shared by all, are in
:mod:`mlknn.plots._displays`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Self

import numpy as np
from numpy.typing import ArrayLike

from ..hubness import k_occurrence, skewness
from ..utils._typing import MatrixLike
from ._displays import _axes, _no_data, shorten_label

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure, SubFigure

    from ..neighbors import NeighborGraph


# ------------------------------------------------------------ k-occurrence
class KOccurrenceDisplay:
    """Empirical distribution of the k-occurrence O_k (Teng et al. 2025, Figure 1).

    Parameters
    ----------
    occurrence : array-like of int, or None
        O_k of every point (how many neighbour lists contain it); None when the dataset
        did not load.
    n_neighbors : int
        k, the number of neighbours.
    name : str
        Dataset name for the title.
    skewness : float, optional
        S_k of the distribution, shown in the title.

    See Also
    --------
    mlknn.hubness.hubness_stats : S_k, H_occ and A_occ of the same distribution.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from mlknn.plots import KOccurrenceDisplay
    >>> X = np.random.default_rng(0).normal(size=(60, 3))
    >>> d = KOccurrenceDisplay.from_data(X, n_neighbors=5).plot()
    >>> int(d.occurrence.sum())  # every point lists 5 neighbours
    300
    """

    figure_: Figure | SubFigure
    ax_: Axes

    def __init__(
        self, occurrence: ArrayLike | None, n_neighbors: int, name: str = "", skewness: float | None = None
    ) -> None:
        self.occurrence = None if occurrence is None else np.asarray(occurrence)
        self.n_neighbors = int(n_neighbors)
        self.name = name
        self.skewness = skewness

    @classmethod
    def from_data(
        cls,
        X: MatrixLike,
        n_neighbors: int = 10,
        *,
        name: str = "",
        neighbors: object = "brute",
        metric: str = "euclidean",
    ) -> Self:
        """Leave-one-out graph of X (mlknn.neighbors) -> O_k (mlknn.hubness if present).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The data.
        n_neighbors : int, default=10
            k.
        name : str, default=""
            Dataset name for the title.
        neighbors : str or object, default="brute"
            Neighbour backend (:func:`mlknn.neighbors.get_backend`).
        metric : str, default="euclidean"
            Distance.

        Returns
        -------
        KOccurrenceDisplay
            Not drawn yet: call :meth:`plot`.
        """
        from ..neighbors import build_graph, get_backend

        index = get_backend(neighbors, metric=metric).fit(X)
        graph = build_graph(index, None, n_neighbors)
        return cls.from_graph(graph, name=name)

    @classmethod
    def from_graph(cls, graph: NeighborGraph, *, name: str = "") -> Self:
        """From a leave-one-out :class:`~mlknn.neighbors.NeighborGraph` (its width is k).

        Parameters
        ----------
        graph : NeighborGraph
            Leave-one-out graph of the data.
        name : str, default=""
            Dataset name for the title.

        Returns
        -------
        KOccurrenceDisplay
            Not drawn yet: call :meth:`plot`.
        """
        occ = k_occurrence(graph)
        return cls(occ, graph.n_neighbors, name, float(skewness(occ)))

    def plot(self, ax: Axes | None = None) -> Self:
        """Draw p(O_k) against O_k on a logarithmic y axis, with S_k in the title.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Where to draw; None creates a figure.

        Returns
        -------
        self
            With ``figure_`` and ``ax_`` set.
        """
        fig, ax = _axes(ax, (4.5, 3.2))
        title = f"{self.name} (k = {self.n_neighbors})"
        if self.occurrence is None or self.occurrence.size == 0:
            _no_data(ax, title, "dataset not available")
            self.figure_, self.ax_ = fig, ax
            return self
        occ = self.occurrence
        counts = np.bincount(occ)
        x = np.flatnonzero(counts)
        ax.plot(x, counts[x] / occ.size, "o-", ms=3, lw=1)
        ax.set_yscale("log")
        ax.set_xlabel("$O_k$")
        ax.set_ylabel("p($O_k$)")
        sk = "" if self.skewness is None else f", $S_k$ = {self.skewness:.2f}"
        ax.set_title(title + sk, fontsize=10)
        self.figure_, self.ax_ = fig, ax
        return self


# ------------------------------------------------------ label co-occurrence
class LabelCooccurrenceDisplay:
    """Matrix ``mat[q, r] = P(label q | label r)`` (Younes et al. 2011, Figure 1: the
    proportion of instances with label r that also have label q).

    Parameters
    ----------
    matrix : ndarray of shape (q, q) or None
        ``matrix[i, j]`` = P(label i | label j); None when the dataset did not load.
    label_names : sequence of str
        Tick labels; names longer than 14 characters are cut with an ellipsis.
    name : str
        Dataset name for the title.

    See Also
    --------
    mlknn.datasets.label_stats : Per-label counts of the same label matrix.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from mlknn.plots import LabelCooccurrenceDisplay
    >>> d = LabelCooccurrenceDisplay.from_labels([[1, 0], [1, 1], [0, 1]], ["rock", "jazz"]).plot()
    >>> float(d.matrix[1, 0])  # P(jazz | rock)
    0.5
    """

    figure_: Figure | SubFigure
    ax_: Axes

    def __init__(self, matrix: ArrayLike | None, label_names: Iterable[str] | None = None, name: str = "") -> None:
        self.matrix = None if matrix is None else np.asarray(matrix, dtype=float)
        self.label_names = list(label_names) if label_names is not None else None
        self.name = name

    @classmethod
    def from_labels(cls, Y: MatrixLike, label_names: Sequence[str] | None = None, *, name: str = "") -> Self:
        """From a 0/1 label matrix (see :func:`mlknn.metrics.label_contingency`).

        Parameters
        ----------
        Y : {array-like, sparse matrix} of shape (n_samples, n_labels)
            Label matrix.
        label_names : sequence of str, default=None
            Tick labels.
        name : str, default=""
            Dataset name for the title.

        Returns
        -------
        LabelCooccurrenceDisplay
            Not drawn yet: call :meth:`plot`.
        """
        A = Y.toarray() if hasattr(Y, "toarray") else np.asarray(Y)
        B = (A > 0).astype(np.float64)
        both = B.T @ B  # both[q, r] = #(q and r)
        count = np.diag(both)
        with np.errstate(invalid="ignore", divide="ignore"):
            mat = both / count[None, :]
        return cls(mat, label_names, name)

    def plot(self, ax: Axes | None = None, max_annotated: int = 12) -> Self:
        """Draw the matrix as an image, annotated with its values when small.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Where to draw; None creates a figure.
        max_annotated : int, default=12
            Write the values and label names in the cells up to this many labels.

        Returns
        -------
        self
            With ``figure_`` and ``ax_`` set.
        """
        fig, ax = _axes(ax, (5, 4.2))
        title = f"label co-occurrence: {self.name}"
        if self.matrix is None or self.matrix.size == 0:
            _no_data(ax, title, "dataset not available")
            self.figure_, self.ax_ = fig, ax
            return self
        q = self.matrix.shape[0]
        im = ax.imshow(self.matrix, vmin=0, vmax=1, cmap="viridis")
        fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04, label="P(q | r)")
        ax.set_xlabel("r (given label)")
        ax.set_ylabel("q")
        if q <= max_annotated:
            for i in range(q):
                for j in range(q):
                    v = self.matrix[i, j]
                    if np.isfinite(v):
                        ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=6,
                                color="w" if v < 0.6 else "k")  # fmt: skip
            if self.label_names is not None:
                # Full names (the matrix is annotated only for few labels, so they fit); only
                # an unusually long name is cut, at 40 characters.
                names = [shorten_label(n, 40) for n in self.label_names]
                ax.set_xticks(range(q), names, rotation=60, ha="right", fontsize=6)
                ax.set_yticks(range(q), names, fontsize=6)
        ax.set_title(title, fontsize=10)
        self.figure_, self.ax_ = fig, ax
        return self
