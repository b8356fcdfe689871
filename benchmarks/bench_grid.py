"""Cost per cell of seed 001's kNN grid, end to end through the experiment harness.

Seed 001 (MLHiKNN, Figures 2-7) runs five kNN algorithms (MLHiKNN, MLkNN, DMLkNN,
IBLR, BRkNN-a) at k in {5, 10, 15, 20, 25}, 5 x 2-fold CV: 25 algorithm x k
combinations x 10 folds = 250 cells per dataset. This benchmark runs that grid on
emotions, scene and yeast with :func:`mlknn.experiments.run_experiment` into a
fresh SQLite database (the preset's preprocessing: min-max scaling, labels with at
least 20 positives) and reports the wall time, the cells computed and the cost per
cell, split into the harness's own columns (neighbour search once per fold for the
largest k, fit, predict) and the rest (loading, splitting, metrics, database).

Nothing is compared within this section; it is an absolute cost, so read it with
the load average recorded beside it.
"""

import tempfile
import time
from pathlib import Path

from _common import load_average, log, markdown_table

ALGORITHMS = ("mlhiknn", "mlknn", "dmlknn", "iblr", "brknna")
K = (5, 10, 15, 20, 25)


def run(datasets=("emotions", "scene", "yeast"), algorithms=ALGORITHMS, k=K, n_repeats=5):
    from mlknn.experiments import (
        ExperimentConfig,
        PreprocessingConfig,
        ProtocolConfig,
        ResultsDB,
        run_experiment,
    )

    rows = []
    for name in datasets:
        config = ExperimentConfig(
            datasets=(name,), algorithms=tuple(algorithms), k=tuple(k),
            protocol=ProtocolConfig("5x2", n_repeats=n_repeats, seed=0),
            preprocessing=PreprocessingConfig(scaling="minmax", min_label_count=20, label_scope="dataset"),
        )
        with tempfile.TemporaryDirectory() as tmp:
            db_path = Path(tmp) / "grid.sqlite"
            load0 = load_average()
            t = time.perf_counter()
            summary = run_experiment(config, str(db_path))
            wall = time.perf_counter() - t
            with ResultsDB(str(db_path)) as db:
                per_cell = {}
                for r in db.rows():
                    key = (r["algorithm"], r["params"], r["repeat"], r["fold"])
                    per_cell[key] = (r["fit_seconds"] or 0.0, r["predict_seconds"] or 0.0, r["search_seconds"] or 0.0)
        cells = summary["computed"]
        fit = sum(v[0] for v in per_cell.values())
        pred = sum(v[1] for v in per_cell.values())
        # The search is shared by every cell of a fold: count it once per fold.
        folds = {(key[2], key[3]): v[2] for key, v in per_cell.items()}
        search = sum(folds.values())
        by_alg = {}
        for key, v in per_cell.items():
            a = by_alg.setdefault(key[0], [0, 0.0])
            a[0] += 1
            a[1] += v[0] + v[1]
        rows.append({
            "dataset": name, "cells": cells, "wall_s": wall, "per_cell_ms": 1e3 * wall / max(cells, 1),
            "search_s": search, "fit_s": fit, "predict_s": pred, "other_s": wall - search - fit - pred,
            "fit_predict_ms_by_algorithm": {a: 1e3 * s / c for a, (c, s) in sorted(by_alg.items())},
            "loadavg": f"{load0} -> {load_average()}",
        })
        log(f"grid {name}: {cells} cells in {wall:.1f}s ({rows[-1]['per_cell_ms']:.1f} ms/cell; search {search:.1f}s, "
            f"fit {fit:.1f}s, predict {pred:.1f}s)")
    return rows


def table(rows):
    header = ["dataset", "cells", "wall (s)", "ms per cell", "search (s, once per fold)", "fit (s)", "predict (s)",
              "rest: load, split, metrics, DB (s)", "fit + predict ms per cell, by algorithm", "load average"]
    body = [[r["dataset"], r["cells"], r["wall_s"], r["per_cell_ms"], r["search_s"], r["fit_s"], r["predict_s"],
             r["other_s"], ", ".join(f"{a} {v:.1f}" for a, v in r["fit_predict_ms_by_algorithm"].items()),
             r["loadavg"]] for r in rows]
    if rows:
        cells = sum(r["cells"] for r in rows)
        wall = sum(r["wall_s"] for r in rows)
        body.append(["all", cells, wall, 1e3 * wall / max(cells, 1), sum(r["search_s"] for r in rows),
                     sum(r["fit_s"] for r in rows), sum(r["predict_s"] for r in rows),
                     sum(r["other_s"] for r in rows), "", ""])
    return markdown_table(header, body)


if __name__ == "__main__":
    import sys

    names = tuple(sys.argv[1].split(",")) if len(sys.argv) > 1 else ("emotions", "scene", "yeast")
    print(table(run(names)))
