"""Peak resident memory of MLkNN fit + predict against the input size.

Each size runs in a fresh interpreter that builds the data, records its peak RSS
(``resource.getrusage(RUSAGE_SELF).ru_maxrss``) after the data exist, then fits
MLkNN (k = 10, LOO graph of the training set) and predicts a test set of n / 4
points, and records the peak again. The difference is what the search and the
algorithm added; an n x n float32 distance matrix is shown for scale (mlknn never
allocates one: the chunk of the distance matrix is at most 2048 x n).
"""

import json

from _common import log, markdown_table, run_subprocess

_CODE = r"""
import json, resource, time
import numpy as np
from mlknn import MLkNN
n, d, q, backend = {n}, {d}, {q}, {backend!r}
rng = np.random.default_rng(0)
X = rng.standard_normal((n, d)).astype(np.float32)
Xt = rng.standard_normal((n // 4, d)).astype(np.float32)
Y = (rng.random((n, q)) < 0.1).astype(np.uint8)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.perf_counter()
MLkNN(n_neighbors=10, neighbors=backend).fit(X, Y).predict(Xt)
secs = time.perf_counter() - t
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({{"before_kb": before, "after_kb": after, "seconds": secs,
                  "input_mb": (X.nbytes + Xt.nbytes + Y.nbytes) / 2**20}}))
"""


def run(sizes=(5000, 10000, 20000, 40000), d=120, q=20, backend="brute"):
    rows = []
    for n in sizes:
        log(f"memory n={n} d={d} ({backend})")
        out = json.loads(run_subprocess(_CODE.format(n=n, d=d, q=q, backend=backend)).strip().splitlines()[-1])
        rows.append({
            "n": n, "d": d, "input_mb": out["input_mb"], "peak_mb": out["after_kb"] / 1024,
            "data_peak_mb": out["before_kb"] / 1024, "added_mb": (out["after_kb"] - out["before_kb"]) / 1024,
            "nxn_mb": n * n * 4 / 2**20, "seconds": out["seconds"],
        })
        log(f"  peak {rows[-1]['peak_mb']:.0f} MB (added {rows[-1]['added_mb']:.0f} MB; n x n would be "
            f"{rows[-1]['nxn_mb']:.0f} MB)")
    return rows


def table(rows):
    header = ["n (train)", "input (MB)", "peak RSS before fit (MB)", "peak RSS after (MB)", "added (MB)",
              "added / input", "n x n float32 (MB)", "fit+predict (s)"]
    body = [[r["n"], r["input_mb"], r["data_peak_mb"], r["peak_mb"], r["added_mb"],
             r["added_mb"] / r["input_mb"], r["nxn_mb"], r["seconds"]] for r in rows]
    return markdown_table(header, body)
