"""Peak resident memory of MLkNN fit + predict against the input size.

Each size runs in a fresh interpreter (started through /bin/sh, see
``_common.run_subprocess``) that builds the data, records its RSS, resets the
high-water mark (``/proc/self/clear_refs``), fits MLkNN (k = 10, LOO graph of the
training set), predicts a test set of n / 4 points, and reports the high-water
mark ``VmHWM`` and ``resource.getrusage(RUSAGE_SELF).ru_maxrss`` (the peak of the
whole process). Peak minus the RSS before fit is what the search and the
algorithm added; an n x n float32 distance matrix is shown for scale (mlknn never
allocates one: the chunk of the distance matrix is at most 2048 x n).
"""

import json

from _common import log, markdown_table, run_subprocess

# Shared by both child scripts: read /proc/self/status, reset the high-water mark.
_PRELUDE = r"""
import json, resource, time, warnings

def status(key):
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        return None

def reset_peak():  # the high-water mark back to the current RSS (Linux >= 4.0)
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass
"""

_CODE = _PRELUDE + r"""
import numpy as np
from mlknn import MLkNN

n, d, q, backend = {n}, {d}, {q}, {backend!r}
rng = np.random.default_rng(0)
X = rng.standard_normal((n, d)).astype(np.float32)
Xt = rng.standard_normal((n // 4, d)).astype(np.float32)
Y = (rng.random((n, q)) < 0.1).astype(np.uint8)
before = status("VmRSS")
reset_peak()
t = time.perf_counter()
MLkNN(n_neighbors=10, neighbors=backend).fit(X, Y).predict(Xt)
secs = time.perf_counter() - t
print(json.dumps({{"before_kb": before, "hwm_kb": status("VmHWM"),
                  "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "seconds": secs,
                  "input_mb": (X.nbytes + Xt.nbytes + Y.nbytes) / 2**20}}))
"""


def run(sizes=(5000, 10000, 20000, 40000), d=120, q=20, backend="brute"):
    rows = []
    for n in sizes:
        log(f"memory n={n} d={d} ({backend})")
        out = json.loads(run_subprocess(_CODE.format(n=n, d=d, q=q, backend=backend)).strip().splitlines()[-1])
        hwm = out["hwm_kb"] if out["hwm_kb"] is not None else out["maxrss_kb"]
        before = out["before_kb"] if out["before_kb"] is not None else 0
        rows.append({
            "n": n, "d": d, "input_mb": out["input_mb"], "maxrss_mb": out["maxrss_kb"] / 1024,
            "before_mb": before / 1024, "peak_fit_mb": hwm / 1024, "added_mb": (hwm - before) / 1024,
            "nxn_mb": n * n * 4 / 2**20, "seconds": out["seconds"],
        })
        log(f"  peak {rows[-1]['peak_fit_mb']:.0f} MB (added {rows[-1]['added_mb']:.0f} MB; n x n would be "
            f"{rows[-1]['nxn_mb']:.0f} MB)")
    return rows


def table(rows):
    header = ["n (train)", "input (MB)", "ru_maxrss (MB)", "RSS before fit (MB)", "peak during fit+predict (MB)",
              "added (MB)", "added / input", "n x n float32 (MB)", "fit+predict (s)"]
    body = [[r["n"], r["input_mb"], r["maxrss_mb"], r["before_mb"], r["peak_fit_mb"], r["added_mb"],
             r["added_mb"] / r["input_mb"], r["nxn_mb"], r["seconds"]] for r in rows]
    return markdown_table(header, body)


_ESTIMATOR_CODE = _PRELUDE + r"""
from mlknn._registry import get_estimator_class
from mlknn.datasets import load

tr, te = load({dataset!r}, split="train"), load({dataset!r}, split="test")
cls = get_estimator_class({name!r})
try:
    est = cls(n_neighbors=10)
except TypeError:
    est = cls()
before = status("VmRSS")
reset_peak()
t = time.perf_counter()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    est.fit(tr.X, tr.Y).predict(te.X)
secs = time.perf_counter() - t
print(json.dumps({{"before_kb": before, "hwm_kb": status("VmHWM"),
                  "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "seconds": secs,
                  "estimator": cls.__name__, "shape": [tr.X.shape[0], te.X.shape[0], tr.X.shape[1], tr.Y.shape[1]]}}))
"""


def run_estimators(dataset="tmc2007-500", names=None):
    """Peak RSS of each kNN estimator's fit + predict on a real dataset.

    One fresh interpreter per estimator (see the module docstring). ``ru_maxrss``
    is the peak of the whole process, loading the data included; ``VmHWM`` after
    the reset is the peak during fit + predict only.
    """
    from mlknn._registry import KNN_ESTIMATORS, available_estimators

    names = names or [n for n in KNN_ESTIMATORS if n in available_estimators()]
    rows = []
    for name in names:
        log(f"memory {dataset}: {name}")
        out = json.loads(run_subprocess(_ESTIMATOR_CODE.format(dataset=dataset, name=name)).strip().splitlines()[-1])
        hwm = out["hwm_kb"] if out["hwm_kb"] is not None else out["maxrss_kb"]
        before = out["before_kb"] if out["before_kb"] is not None else 0
        n_train, n_test, d, q = out["shape"]
        rows.append({"dataset": dataset, "estimator": out["estimator"], "n_train": n_train, "n_test": n_test,
                     "maxrss_mb": out["maxrss_kb"] / 1024, "before_mb": before / 1024,
                     "peak_fit_mb": hwm / 1024, "added_mb": (hwm - before) / 1024, "seconds": out["seconds"]})
        log(f"  ru_maxrss {rows[-1]['maxrss_mb']:.0f} MB, added {rows[-1]['added_mb']:.0f} MB, "
            f"{out['seconds']:.1f} s")
    return rows


def table_estimators(rows):
    header = ["dataset", "estimator", "train x test", "ru_maxrss, whole process (MB)", "RSS before fit (MB)",
              "peak during fit+predict (MB)", "added (MB)", "fit+predict (s)"]
    body = [[r["dataset"], r["estimator"], f"{r['n_train']} x {r['n_test']}", r["maxrss_mb"], r["before_mb"],
             r["peak_fit_mb"], r["added_mb"], r["seconds"]] for r in rows]
    return markdown_table(header, body)
