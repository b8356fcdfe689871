"""MLHiKNN, DMLkNN and IBLR at many labels, as multiples of MLkNN (issue 12 point 5).

For each dataset (default: delicious, q = 983, and bibtex, q = 159) the seeded
50/50 split ``train_test_split(X, Y, test_size=0.5, random_state=0)`` with a
dense Y; each estimator (its default parameters) runs fit + ``predict`` in its
own subprocess, with a wall-clock limit, so that one slow estimator cannot hold
up the others and each child's peak RSS is its own. MLkNN runs first and last
for every dataset; the ratio of an estimator is its time over the mean of the
two MLkNN runs (the machine is shared: the bracketing shows how much the load
moved during the dataset's runs, and the load average is printed per run).

``--profile`` runs each child under cProfile and prints its top functions by
cumulative time: where the time goes.

Each run records wall-clock seconds and the child's CPU seconds (all its
threads, ``time.process_time``) of fit + predict; on a shared, oversubscribed
machine the CPU-time ratio is the steadier of the two. An estimator may be
given with parameters, e.g. ``"IBLR(C=1.0)"`` or ``"IBLR(tol=1e-4)"``.

Before the runs, 8 GiB of memory are touched once and freed
(``--back-memory-gib``, see ``_common.back_guest_memory``): on this project's
VMs the first touch of never-used guest memory costs 2.6 s/GiB, so without it
a child's time depends on how much of its peak RSS lands on such pages.

Usage::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE MLKNN_DATA=/path/to/datasets \\
        python benchmarks/bench_many_labels.py [--datasets delicious bibtex] \\
        [--estimators DMLkNN IBLR MLHiKNN] [--timeout 1800] [--profile]

Prints one JSON line per run, then a markdown table.
"""

import argparse
import ast
import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

from _common import back_guest_memory, load_average, log, machine_info, markdown_table, run_subprocess  # noqa: E402

CHILD = r'''
import json, os, resource, sys, time, warnings
import numpy as np
from sklearn.model_selection import train_test_split
import mlknn
from mlknn.datasets import load

warnings.simplefilter("ignore")
name, est_name, params, profile = {name!r}, {est!r}, {params!r}, {profile!r}
data = load(name)
Y = data.Y.toarray() if hasattr(data.Y, "toarray") else np.asarray(data.Y)
Xtr, Xte, Ytr, Yte = train_test_split(data.X, Y, test_size=0.5, random_state=0)
est = getattr(mlknn, est_name)(**params)

def run():
    est.fit(Xtr, Ytr)
    return est.predict(Xte)

if profile:
    import cProfile, io, pstats
    prof = cProfile.Profile()
    t = time.perf_counter(); c = time.process_time()
    prof.enable(); run(); prof.disable()
    wall = time.perf_counter() - t; cpu = time.process_time() - c
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(14)
    sys.stderr.write(out.getvalue())
else:
    t = time.perf_counter(); c = time.process_time(); run()
    wall = time.perf_counter() - t; cpu = time.process_time() - c
print(json.dumps({{"dataset": name, "estimator": est_name, "n_train": int(Xtr.shape[0]),
                  "q": int(Ytr.shape[1]), "seconds": wall, "cpu_seconds": cpu,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "loadavg": " ".join(f"{{x:.1f}}" for x in os.getloadavg())}}))
'''


def parse_spec(spec):
    """``"IBLR(C=1.0, tol=1e-4)"`` -> ``("IBLR", {"C": 1.0, "tol": 1e-4})``."""
    if "(" not in spec:
        return spec, {}
    call = ast.parse(spec, mode="eval").body
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name) or call.args:
        raise ValueError(f"estimator spec {spec!r}: expected Name or Name(key=value, ...)")
    return call.func.id, {kw.arg: ast.literal_eval(kw.value) for kw in call.keywords}


def run_one(name, spec, timeout, profile):
    est, params = parse_spec(spec)
    code = CHILD.format(name=name, est=est, params=params, profile=profile)
    try:
        if profile:
            import subprocess
            import tempfile

            with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
                f.write(code)
            res = subprocess.run([sys.executable, f.name], capture_output=True, text=True, timeout=timeout)
            os.unlink(f.name)
            print(res.stderr[-6000:], file=sys.stderr)
            out = res.stdout
        else:
            out = run_subprocess(code, timeout=timeout)
        res = json.loads(out.strip().splitlines()[-1])
        res["estimator"] = spec
        return res
    except Exception as exc:  # a timeout or a crash is a result too
        import subprocess

        return {"dataset": name, "estimator": spec, "seconds": None, "error": type(exc).__name__,
                "timed_out": isinstance(exc, subprocess.TimeoutExpired), "loadavg": load_average()}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=["delicious", "bibtex"])
    ap.add_argument("--estimators", nargs="+", default=["DMLkNN", "IBLR", "MLHiKNN"])
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds per child (default 1800)")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--back-memory-gib", type=float, default=8.0,
                    help="GiB of memory touched once before the runs (0: none; see _common.back_guest_memory)")
    args = ap.parse_args(argv)
    if not os.environ.get("MLKNN_DATA"):
        ap.error("set MLKNN_DATA to the datasets folder (the one with MANIFEST.tsv)")
    info = machine_info()
    log(f"machine: {json.dumps(info)}")
    if args.back_memory_gib > 0:
        rate = back_guest_memory(args.back_memory_gib)
        info["memory_backed"] = f"{args.back_memory_gib:g} GiB touched first at {rate:.1f} GiB/s"
        log(info["memory_backed"])
    rows = []
    for name in args.datasets:
        runs = {}
        for est in ["MLkNN", *args.estimators, "MLkNN"]:
            log(f"{name}: {est} ...")
            res = run_one(name, est, args.timeout, args.profile)
            print(json.dumps(res), flush=True)
            runs.setdefault(est, []).append(res)
        base = {key: _mean([r.get(key) for r in runs["MLkNN"]]) for key in ("seconds", "cpu_seconds")}
        for est, results in runs.items():
            r = results[0]
            secs = {key: base[key] if est == "MLkNN" else r.get(key) for key in base}
            ratio = {key: None if secs[key] is None or not base[key] else secs[key] / base[key] for key in base}
            rows.append([name, r.get("q", "?"), est,
                         secs["seconds"] if secs["seconds"] is not None
                         else f">{args.timeout:.0f} s (timed out)" if r.get("timed_out")
                         else f"failed ({r.get('error')})",
                         ratio["seconds"], secs["cpu_seconds"], ratio["cpu_seconds"],
                         r.get("peak_rss_mb"), r.get("loadavg")])
    print()
    print(f"BLAS: {info.get('blas')}; load average at start {info.get('loadavg_start')}; "
          f"memory: {info.get('memory_backed', 'not touched first')}")
    print(markdown_table(["dataset", "q", "estimator", "fit + predict (s)", "x MLkNN", "CPU (s)",
                          "x MLkNN (CPU)", "peak RSS (MB)", "load avg"], rows))


def _mean(values):
    values = [v for v in values if v]
    return sum(values) / len(values) if values else None


if __name__ == "__main__":
    main()
