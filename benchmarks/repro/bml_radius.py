"""Seed 002: how BML-kNN's and NC's cells move with the radius it does not give.

For each dataset: the median leave-one-out distance to the k-th neighbour (r_auto,
what ``radius="auto"`` uses) on the whole (unscaled) dataset, then the five
measures of Tables 6-10 on the first R of the preset's 80/20 splits at radius =
factor x r_auto, beside the published BML-kNN row.

    python benchmarks/repro/bml_radius.py scene yeast --repeats 3
"""

import argparse
import math
import subprocess
import sys
from pathlib import Path

import numpy as np

from mlknn.experiments import load_dataset
from mlknn.neighbors import compute_graphs

HERE = Path(__file__).resolve().parent


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("datasets", nargs="+")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--factors", default="0.75,1,1.5,2,3")
    a = ap.parse_args()
    for ds in a.datasets:
        X, _ = load_dataset(ds)
        _, g, _ = compute_graphs(X, None, 10)
        r = float(np.median(g.metric_distances[:, 9]))
        print(f"## {ds}: r_auto = {r:.4g}")
        algs = []
        for f in a.factors.split(","):
            rad = math.inf if f == "inf" else float(f) * r
            algs += ["--alg", f"bmlknn:radius={rad!r}"]
        cmd = [sys.executable, str(HERE / "probe.py"), "bmlknn", ds, "--repeats", str(a.repeats), *algs,
               "--alg", "mlknn"]  # fmt: skip
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        keep = ("hamming_loss", "one_error", "coverage  ", "average_precision", "ranking_loss")
        for line in out.splitlines():
            if line.startswith(("#", "paper BML", "paper ML-kNN")) or any(k in line for k in keep):
                if "macro" not in line and "micro" not in line:
                    print(line)


if __name__ == "__main__":
    main()
