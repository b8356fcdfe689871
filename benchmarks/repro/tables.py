"""Markdown tables of docs/reproduction.md from ``mlknn reproduce``'s comparison.csv files.

    python benchmarks/repro/tables.py cells results/reproduce-mlhiknn2025/comparison.csv
    python benchmarks/repro/tables.py counts results/reproduce-dmlknn2011/comparison.csv

``cells``: one row per published cell and reading (paper, ours, z, within 2 sd);
``counts``: cells within 2 sd per dataset and column (one column per reading);
``db``: the cells straight from a results database, also while its run is incomplete
(``python benchmarks/repro/tables.py db mlhiknn2025 results.db enron,llog``);
``db-counts``: the counts from a database, under the preset's tie readings or, with a
last argument ``pessimistic``, with every ranking measure read pessimistically
(``python benchmarks/repro/tables.py db-counts dmlknn2011 results.db all pessimistic``).
"""

import csv
import re
import sys
from collections import defaultdict

# The tie rule a ranking cell is read under, as the comparison appends it to the reading.
_TIES_SUFFIX = re.compile(r" \(ties: [^)]+\)$")


def _rows(path):
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def cells(path):
    rows = _rows(path)
    # Tables of one measure (seed 001's macro AUC) have no tie rule: no column for it.
    with_ties = any(r.get("ties") not in (None, "", "None") for r in rows)
    print("| dataset | paper column | ours |" + (" metric | ties |" if with_ties else "")
          + " paper | ours | z | within 2 sd |")
    print("|---|---|---|" + ("---|---|" if with_ties else "") + "---|---|---|---|")
    for r in rows:
        sd = "" if r["paper_std"] in ("", "None") else f" ± {float(r['paper_std']):.3f}"
        ours = "-" if r["our_mean"] in ("", "nan") else f"{float(r['our_mean']):.3f} ± {float(r['our_std']):.3f}"
        z = "-" if r["z"] in ("", "nan") else f"{float(r['z']):+.2f}"
        within = {"True": "yes", "False": "no"}.get(r["within_2sd"], "-")
        extra = ""
        if with_ties:
            extra = f" {r['metric']} | {r['ties'] if r['ties'] not in ('', 'None') else '-'} |"
        print(f"| {r['dataset']} | {r['paper_algorithm']} | {_TIES_SUFFIX.sub('', r['ours'])} |{extra} "
              f"{float(r['paper_mean']):.3f}{sd} | {ours} | {z} | {within} |")


def counts(path):
    got = defaultdict(lambda: [0, 0])
    datasets, readings = [], []
    for r in _rows(path):
        reading = _TIES_SUFFIX.sub("", r["ours"])  # one column per algorithm reading, whatever the tie rule
        key = (r["dataset"], reading)
        if r["dataset"] not in datasets:
            datasets.append(r["dataset"])
        if reading not in readings:
            readings.append(reading)
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


def from_db(preset_name, db_path, datasets, ties="preset", show=None):
    import tempfile
    from dataclasses import replace
    from pathlib import Path

    from mlknn.experiments import get_preset
    from mlknn.experiments._presets import write_comparison
    from mlknn.experiments._results import ResultsDB

    preset = get_preset(preset_name)
    rows = []
    with ResultsDB(db_path) as db:
        names = preset.datasets if datasets == "all" else datasets.split(",")
        for ds in names:
            cfg, cols = preset.config([ds])
            if ties == "pessimistic":
                cols = [replace(c, ties=()) for c in cols]
            rows += preset.compare(db.rows("dataset = ?", (ds,)), cfg, cols)
    with tempfile.TemporaryDirectory() as tmp:
        csv_path, _ = write_comparison(rows, Path(tmp))
        (show or cells)(csv_path)


if __name__ == "__main__":
    if sys.argv[1] == "db":
        from_db(*sys.argv[2:5])
    elif sys.argv[1] == "db-counts":
        from_db(*sys.argv[2:6], show=counts)
    else:
        {"cells": cells, "counts": counts}[sys.argv[1]](sys.argv[2])
