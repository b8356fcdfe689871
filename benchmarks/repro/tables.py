"""Markdown tables of docs/reproduction.md from ``mlknn reproduce``'s comparison.csv files.

    python benchmarks/repro/tables.py cells results/reproduce-mlhiknn2025/comparison.csv
    python benchmarks/repro/tables.py counts results/reproduce-dmlknn2011/comparison.csv

``cells``: one row per published cell and reading (paper, ours, z, within 2 sd);
``counts``: cells within 2 sd per dataset and column (one column per reading);
``db``: the cells straight from a results database, also while its run is incomplete
(``python benchmarks/repro/tables.py db mlhiknn2025 results.db enron,llog``).
"""

import csv
import sys
from collections import defaultdict


def _rows(path):
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def cells(path):
    print("| dataset | paper column | ours | paper | ours | z | within 2 sd |")
    print("|---|---|---|---|---|---|---|")
    for r in _rows(path):
        sd = "" if r["paper_std"] in ("", "None") else f" ± {float(r['paper_std']):.3f}"
        ours = "-" if r["our_mean"] in ("", "nan") else f"{float(r['our_mean']):.3f} ± {float(r['our_std']):.3f}"
        z = "-" if r["z"] in ("", "nan") else f"{float(r['z']):+.2f}"
        within = {"True": "yes", "False": "no"}.get(r["within_2sd"], "-")
        print(f"| {r['dataset']} | {r['paper_algorithm']} | {r['ours']} | {float(r['paper_mean']):.3f}{sd} | "
              f"{ours} | {z} | {within} |")


def counts(path):
    got = defaultdict(lambda: [0, 0])
    datasets, readings = [], []
    for r in _rows(path):
        key = (r["dataset"], r["ours"])
        if r["dataset"] not in datasets:
            datasets.append(r["dataset"])
        if r["ours"] not in readings:
            readings.append(r["ours"])
        got[key][1] += 1
        got[key][0] += r["within_2sd"] == "True"
    print("| dataset | " + " | ".join(readings) + " |")
    print("|---|" + "---|" * len(readings))
    total = [0, 0]
    for d in datasets:
        cells_ = []
        for rd in readings:
            n_in, n = got.get((d, rd), (0, 0))
            total[0] += n_in
            total[1] += n
            cells_.append(f"{n_in}/{n}" if n else "-")
        print(f"| {d} | " + " | ".join(cells_) + " |")
    print(f"\nTotal {total[0]}/{total[1]}.")


def from_db(preset_name, db_path, datasets):
    import tempfile
    from pathlib import Path

    from mlknn.experiments import get_preset
    from mlknn.experiments._presets import write_comparison
    from mlknn.experiments._results import ResultsDB

    preset = get_preset(preset_name)
    rows = []
    with ResultsDB(db_path) as db:
        for ds in datasets.split(","):
            cfg, cols = preset.config([ds])
            rows += preset.compare(db.rows("dataset = ?", (ds,)), cfg, cols)
    with tempfile.TemporaryDirectory() as tmp:
        csv_path, _ = write_comparison(rows, Path(tmp))
        cells(csv_path)


if __name__ == "__main__":
    if sys.argv[1] == "db":
        from_db(*sys.argv[2:5])
    else:
        {"cells": cells, "counts": counts}[sys.argv[1]](sys.argv[2])
