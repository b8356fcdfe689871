"""The prequential protocol's figures: each measure against the number of instances seen.

A prequential cell is one batch of the stream, predicted by a model trained on
every instance before it (``n_train``); its x coordinate is the number of
instances seen once the batch is processed, ``n_train + n_test``. One line per
configuration, one panel per measure, one figure per dataset.
"""

import json
import math
from collections.abc import Sequence

import numpy as np

from ._model import Figure, Group, dataset_label, png, safe_name


def is_prequential(protocol_json: str) -> bool:
    """Whether a results group was run with the prequential protocol."""
    return bool(json.loads(protocol_json).get("protocol") == "prequential")


def prequential_figures(g: Group, idx: int, metrics: Sequence[str]) -> list[Figure]:
    """One figure per dataset: ``metrics`` (those recorded) against the instances seen, per configuration.

    Parameters
    ----------
    g : Group
        The rows of one prequential protocol and search.
    idx : int
        The group's number (figure names).
    metrics : sequence of str
        The measures to draw, when recorded (else the group's first six).

    Returns
    -------
    list of Figure
    """
    import matplotlib.pyplot as plt

    ms = [m for m in metrics if m in g.metrics] or g.metrics[:6]
    labels = dict(zip(g.configs, g.labels))
    figs: list[Figure] = []
    for ds in sorted({d for d, _ in g.datasets}):
        series: dict[tuple[str, tuple[str, str]], list[tuple[int, float]]] = {}
        for r in g.rows:
            if r["dataset"] == ds and r["metric"] in ms:
                seen = int(r["n_train"]) + int(r["n_test"])
                series.setdefault((r["metric"], (r["algorithm"], r["params"])), []).append((seen, float(r["value"])))
        if not series:
            continue
        cols = min(3, len(ms))
        rws = math.ceil(len(ms) / cols)
        fig, axes = plt.subplots(rws, cols, figsize=(4.2 * cols, 3.3 * rws), squeeze=False, constrained_layout=True)
        for ax, m in zip(axes.ravel(), ms):
            for config in g.configs:
                points = sorted(series.get((m, config), []))
                if points:
                    xy = np.asarray(points)
                    ax.plot(xy[:, 0], xy[:, 1], marker=".", label=labels[config])
            ax.set_title(m)
            ax.set_xlabel("instances seen")
        for ax in axes.ravel()[len(ms):]:
            ax.set_axis_off()
        axes.ravel()[0].legend(fontsize=7)
        label = dataset_label(ds)
        fig.suptitle(f"prequential (test-then-train, per batch): {label}", fontsize=11)
        figs.append(Figure(f"g{idx}_prequential_{safe_name(ds)}",
                           f"Each measure on each batch against the instances seen ({label}).", png(fig)))  # fmt: skip
    return figs
