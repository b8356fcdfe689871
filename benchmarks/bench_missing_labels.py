"""Macro-AUC with 0, 10, 30 and 50 % of the training label entries hidden (issue 28 point 6).

For each dataset, each fraction and each count-based estimator, the harness
(``missing_labels`` setting: a seeded fraction of every training part's label
entries hidden, the test part untouched) runs the estimator twice: learning
from the observed entries only (``missing_labels="ignore"``) and reading the
hidden entries as negative (``missing_labels="negative"``). Protocol: hold-out
80/20, ``--repeats`` repetitions (seed 0), min-max scaling fitted on each
training part, k = 10. Prints a markdown table (mean macro-AUC over the
repetitions, x 100) for docs/incomplete_labels.md.

Usage::

    MLKNN_DATA=../shared/datasets python benchmarks/bench_missing_labels.py \\
        --datasets emotions yeast scene --repeats 3
"""

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from mlknn.experiments import ExperimentConfig, PreprocessingConfig, ProtocolConfig, ResultsDB, run_experiment

FRACTIONS = (0.0, 0.1, 0.3, 0.5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", nargs="+", default=["emotions", "yeast", "scene"])
    parser.add_argument("--algorithms", nargs="+", default=["mlknn", "brknn", "dmlknn"])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--k", type=int, default=10)
    args = parser.parse_args()
    table: dict[tuple[str, str, str, float], float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for fraction in FRACTIONS:
            config = ExperimentConfig(
                datasets=tuple(args.datasets), algorithms=tuple(args.algorithms), k=(args.k,),
                params=(("*", "missing_labels", ("ignore", "negative")),),
                protocol=ProtocolConfig("holdout", n_repeats=args.repeats, seed=0),
                preprocessing=PreprocessingConfig(scaling="minmax", missing_labels=fraction),
            )
            db = ResultsDB(Path(tmp) / f"r{fraction}.db")
            start = time.perf_counter()
            run_experiment(config, db)
            print(f"# {fraction:.0%} hidden: {time.perf_counter() - start:.1f} s", flush=True)
            for row in db.rows("metric = ?", ("macro_auc",)):
                reading = json.loads(row["params"])["missing_labels"]
                key = (row["dataset"], row["algorithm"], reading, fraction)
                table.setdefault(key, []).append(row["value"])  # type: ignore[attr-defined]
            db.close()
    header = "| dataset | algorithm | reading | " + " | ".join(f"{f:.0%} hidden" for f in FRACTIONS) + " |"
    print(header)
    print("|" + "---|" * (3 + len(FRACTIONS)))
    for dataset in args.datasets:
        for algorithm in args.algorithms:
            for reading, label in (("ignore", "missing-aware"), ("negative", "missing-as-negative")):
                cells = [100 * float(np.mean(table[(dataset, algorithm, reading, f)])) for f in FRACTIONS]
                print(f"| {dataset} | {algorithm} | {label} | " + " | ".join(f"{c:.2f}" for c in cells) + " |")


if __name__ == "__main__":
    main()
