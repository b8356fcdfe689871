"""The prequential protocol: models carried by ``partial_fit`` against a refit per batch.

For each stream (default: yeast, 2,417 rows, and a synthetic stream of 6,000 rows;
shuffled, batch 100), runs the same grid (MLkNN and BRkNN, k = 10) through
``run_experiment`` twice, interleaved over the rounds: ``incremental=True`` (each
cell's model carried from batch to batch by ``partial_fit``) and
``incremental=False`` (a fit on everything seen, with the grid's shared search,
for every batch). Reports the minimum over the rounds of the wall-clock and CPU
seconds of each path and their ratio, and checks that the two databases hold the
same values (every measure of every batch). The machine is shared: the minimum
over interleaved rounds is the least disturbed run of each; the load average is printed.

Usage::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE MLKNN_DATA=/path/to/datasets \\
        python benchmarks/bench_prequential.py [--streams yeast synthetic-6000] [--repeats 3]

Prints one JSON line per stream, then a markdown table.
"""

import argparse
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))

from _common import load_average, log, machine_info, markdown_table  # noqa: E402


def _stream(name):
    from mlknn.datasets import load, make_multilabel

    if name.startswith("synthetic-"):
        toy = make_multilabel(n_samples=int(name.split("-")[1]), n_features=40, n_labels=20, random_state=0)
        return toy.X, toy.Y
    data = load(name)
    return data.X, data.Y


def _run(config, data, incremental):
    from mlknn.experiments import ResultsDB, run_experiment

    with tempfile.TemporaryDirectory() as folder:
        db = ResultsDB(os.path.join(folder, "r.db"))
        wall, cpu = time.perf_counter(), time.process_time()
        run_experiment(config, db, data=data, incremental=incremental)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        values = {(r["algorithm"], r["params"], r["fold"], r["metric"]): r["value"] for r in db.rows()}
        db.close()
    return wall, cpu, values


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", nargs="+", default=["yeast", "synthetic-6000"])
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    import warnings

    import numpy as np

    from mlknn.experiments import ExperimentConfig, ProtocolConfig

    warnings.simplefilter("ignore")
    log(json.dumps(machine_info()))
    rows = []
    for name in args.streams:
        X, Y = _stream(name)
        config = ExperimentConfig(datasets=(name,), algorithms=("mlknn", "brknn"), k=(10,),
                                  protocol=ProtocolConfig("prequential", batch=args.batch, shuffle=True, seed=0))
        best = {True: [np.inf, np.inf], False: [np.inf, np.inf]}
        stored = {}
        for _ in range(args.repeats):
            for incremental in (True, False):
                wall, cpu, stored[incremental] = _run(config, {name: (X, Y)}, incremental)
                best[incremental] = [min(best[incremental][0], wall), min(best[incremental][1], cpu)]
        same = stored[True].keys() == stored[False].keys() and all(
            a == stored[False][k] or (a != a and stored[False][k] != stored[False][k]) for k, a in stored[True].items())
        n_batches = 1 + max(k[2] for k in stored[True])
        record = {"stream": name, "rows": int(X.shape[0]), "batches": n_batches,
                  "partial_fit_wall": best[True][0], "refit_wall": best[False][0],
                  "partial_fit_cpu": best[True][1], "refit_cpu": best[False][1],
                  "cpu_ratio": best[False][1] / best[True][1], "same_values": bool(same), "load": load_average()}
        print(json.dumps(record), flush=True)
        rows.append([name, record["rows"], n_batches, record["refit_wall"], record["partial_fit_wall"],
                     record["refit_cpu"], record["partial_fit_cpu"], record["cpu_ratio"], str(same)])
    print(markdown_table(["stream", "rows", "batches", "refit wall s", "partial_fit wall s", "refit CPU s",
                          "partial_fit CPU s", "refit / partial_fit (CPU)", "same values"], rows))


if __name__ == "__main__":
    main()
