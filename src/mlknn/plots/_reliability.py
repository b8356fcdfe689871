"""Reliability diagram of multi-label posteriors: per label and pooled."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Self

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..metrics import calibration_bins, expected_calibration_error
from ._displays import _axes, _no_data, shorten_label

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure, SubFigure


class ReliabilityDisplay:
    """Reliability diagram: relevant fraction against mean posterior, bin by bin.

    A calibrated posterior lies on the diagonal (of the instances given 0.7, 70 % have
    the label). One curve for every (instance, label) entry pooled and one per chosen
    label, each over the equal-width bins of :func:`mlknn.metrics.calibration_bins`
    (empty bins left out), with its expected calibration error in the legend.

    Parameters
    ----------
    curves : dict of str to (ndarray, ndarray)
        Name -> (mean posterior, relevant fraction) of the non-empty bins.
    ece : dict of str to float
        Name -> expected calibration error.
    title : str, default="reliability"
        Title of the figure.

    Attributes
    ----------
    figure_ : matplotlib Figure
    ax_ : matplotlib Axes

    See Also
    --------
    mlknn.metrics.expected_calibration_error : The number each curve summarises.
    mlknn.decision.CalibratedProba : Recalibrates the posteriors.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from mlknn.plots import ReliabilityDisplay
    >>> Y = [[1, 0], [0, 0], [1, 1], [0, 1]]
    >>> P = [[0.9, 0.2], [0.2, 0.1], [0.7, 0.8], [0.4, 0.6]]
    >>> d = ReliabilityDisplay.from_predictions(Y, P, labels=[0], n_bins=2).plot()
    >>> sorted(d.curves)
    ['label 0', 'pooled']
    """

    figure_: Figure | SubFigure
    ax_: Axes

    def __init__(self, curves: dict[str, tuple[NDArray[np.float64], NDArray[np.float64]]],
                 ece: dict[str, float], title: str = "reliability") -> None:
        self.curves = curves
        self.ece = ece
        self.title = title

    @classmethod
    def from_predictions(
        cls,
        Y_true: ArrayLike,
        Y_prob: ArrayLike,
        *,
        labels: Sequence[int] | None = None,
        label_names: Sequence[str] | None = None,
        n_bins: int = 10,
        pooled: bool = True,
        title: str = "reliability",
    ) -> Self:
        """From 0/1 relevance and posteriors.

        Parameters
        ----------
        Y_true : array-like of shape (n_samples, n_labels)
            0/1 relevance.
        Y_prob : array-like of shape (n_samples, n_labels)
            Posteriors in [0, 1].
        labels : sequence of int, default=None
            Label columns to draw one curve each for; None: none (the pooled curve only).
        label_names : sequence of str, default=None
            Names of all the labels (legend); None: "label j".
        n_bins : int, default=10
            Equal-width bins on [0, 1].
        pooled : bool, default=True
            Draw the curve of every entry pooled.
        title : str, default="reliability"
            Title of the figure.

        Returns
        -------
        ReliabilityDisplay
            Not drawn yet: call :meth:`plot`.
        """
        Y = np.asarray(Y_true)
        P = np.asarray(Y_prob, dtype=np.float64)
        curves: dict[str, tuple[NDArray[np.float64], NDArray[np.float64]]] = {}
        ece: dict[str, float] = {}
        if Y.size == 0:
            return cls(curves, ece, title)
        if pooled:
            count, mean_p, frac = calibration_bins(Y, P, n_bins=n_bins, pooled=True)
            keep = count[0] > 0
            curves["pooled"] = (mean_p[0, keep], frac[0, keep])
            ece["pooled"] = float(expected_calibration_error(Y, P, n_bins=n_bins, average="micro"))
        if labels:
            chosen = list(labels)
            count, mean_p, frac = calibration_bins(Y[:, chosen], P[:, chosen], n_bins=n_bins)
            per_label: Any = expected_calibration_error(Y[:, chosen], P[:, chosen], n_bins=n_bins, average=None)
            for row, j in enumerate(chosen):
                name = shorten_label(label_names[j], 20) if label_names is not None else f"label {j}"
                keep = count[row] > 0
                curves[name] = (mean_p[row, keep], frac[row, keep])
                ece[name] = float(per_label[row])
        return cls(curves, ece, title)

    def plot(self, ax: Axes | None = None) -> Self:
        """Draw the diagonal and one curve per entry of ``curves``.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Where to draw; None creates a figure.

        Returns
        -------
        self
            With ``figure_`` and ``ax_`` set.
        """
        fig, ax = _axes(ax, (4.5, 4.5))
        self.figure_, self.ax_ = fig, ax
        if not self.curves:
            _no_data(ax, self.title, "no posteriors")
            return self
        ax.plot([0, 1], [0, 1], ls="--", color="0.6", lw=1, label="calibrated")
        for name, (mean_p, frac) in self.curves.items():
            pooled = name == "pooled"
            ax.plot(mean_p, frac, marker="o", ms=4 if pooled else 3, lw=2 if pooled else 1,
                    color="k" if pooled else None, label=f"{name} (ECE {self.ece[name]:.3f})")
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_xlabel("mean posterior in bin")
        ax.set_ylabel("fraction relevant in bin")
        ax.set_title(self.title)
        ax.legend(fontsize=7, loc="upper left")
        return self
