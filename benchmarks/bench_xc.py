"""Extreme-classification benchmark (issue 12 point 6): P@k / PSP@k and scale in q.

One command::

    python benchmarks/bench_xc.py            # both sections, full size
    python benchmarks/bench_xc.py --quick    # a few minutes: bibtex only, small scale run
    python benchmarks/bench_xc.py --section real|scale [--n-train N --n-test N --q 1000,10000]

Writes ``benchmarks/xc_results.md`` (and ``.json``) and the section between the
``bench_xc`` markers of ``docs/extreme.md``.

Section "real": bibtex and delicious with their fixed MULAN splits (the sizes
of the Extreme Classification Repository's splits: bibtex 4,880 / 2,515,
delicious 12,920 / 3,185), one exact leave-one-out graph per metric
(Euclidean, cosine) at the largest k, shared by every kNN estimator and every
k in {5, 10, 20, 30} (``fit_from_graph`` / ``predict_topk_from_graph``). P@1/3/5
and PSP@1/3/5 (inverse propensities of the training labels, A = 0.55,
B = 1.5) beside the repository's published columns. Each estimator runs in a
forked child with a time limit, so one slow method cannot stall the table.
Besides the estimators' defaults, BR-kNN with a weighted vote: ``brknn-distance``
(``weights="distance"``, 1/d) and, with cosine only, ``brknn-cos4`` /
``brknn-cos5`` (``weights=(1 - d)^p``, the cosine similarity to the 4th / 5th
power), and ``iblr-c1``, IBLR with a real penalty (``C=1.0``; at its default, Weka's
ridge 1e-8, the fit takes minutes, docs/notes/iblr.md). The best configuration per
estimator is chosen on the test set; the
choice made on the training rows alone is ``bench_xc_select.py``'s.

Section "scale": ``make_extreme_multilabel`` with n_train + n_test rows,
d = 128, q in {1,000, 10,000, 100,000}, MLkNN(k=10, cosine) with the exact
backend and HNSW (hnswlib, faiss-hnsw): wall time of index + leave-one-out
graph + fit + query graph + predict_topk(k=5), and peak RSS, each in its own
child process; P@1/3/5 and the approximate graph's recall@10 (against exact
search on 1,000 sampled test queries).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import sys
import time
import traceback
from functools import partial
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import load_average, machine_info, markdown_table  # noqa: E402

DOC = HERE.parent / "docs" / "extreme.md"
START, END = "<!-- bench_xc:start -->", "<!-- bench_xc:end -->"

#: The Extreme Classification Repository's published columns (percent).
PUBLISHED = {
    "bibtex": {
        "kNN": {"P@1": 57.04, "P@3": 34.38, "P@5": 25.44, "PSP@1": 43.71},
        "1-vs-All": {"P@1": 62.62, "P@3": 39.09, "P@5": 28.79},
    },
    "delicious": {"kNN": {"P@1": 64.95, "P@3": 58.89, "P@5": 54.11, "PSP@1": 31.03}},
}
ESTIMATORS = (
    "mlknn",
    "brknn",
    "brknna",
    "brknnb",
    "bmlknn",
    "nc",
    "dmlknn",
    "iblr",
    "iblr-c1",
    "mlhiknn",
    "brknn-distance",
    "brknn-cos4",
    "brknn-cos5",
)
MEASURES = ("P@1", "P@3", "P@5", "PSP@1", "PSP@3", "PSP@5")
#: (features, metric): the raw ARFF features with both metrics, and TF-IDF
#: weighted features (scikit-learn's TfidfTransformer fitted on the training
#: rows: idf weights, L2-normalised rows) with cosine.
CONFIGS = (("raw", "euclidean"), ("raw", "cosine"), ("tfidf", "cosine"))


def _cosine_power(d, p):
    """BR-kNN vote weight ``max(1 - d, 0)^p``: the cosine similarity to the p-th power.

    Clipped at 0: the cosine distance of orthogonal rows can round to 1 + 4e-16, and an
    odd power of the tiny negative similarity would be a (refused) negative weight.
    """
    return np.maximum(1.0 - d, 0.0) ** p


#: Weighted BR-kNN rows (``weights=``): registry name and constructor arguments, and
#: the metrics they apply to ((1 - d)^p is a similarity only for the cosine distance).
VARIANTS = {
    "brknn-distance": ("brknn", {"weights": "distance"}, ("euclidean", "cosine")),
    "brknn-cos4": ("brknn", {"weights": partial(_cosine_power, p=4)}, ("cosine",)),
    "brknn-cos5": ("brknn", {"weights": partial(_cosine_power, p=5)}, ("cosine",)),
    # IBLR with a real penalty: at its default (Weka's ridge 1e-8) the rare labels'
    # regressions are nearly separated and the fit takes minutes (docs/notes/iblr.md).
    "iblr-c1": ("iblr", {"C": 1.0}, ("euclidean", "cosine")),
}


def _at_k(Y_true, pair, w):
    from mlknn.metrics import precision_at_k, psprecision_at_k

    out = {}
    for k in (1, 3, 5):
        out[f"P@{k}"] = 100 * precision_at_k(Y_true, pair, k=k)
        out[f"PSP@{k}"] = 100 * psprecision_at_k(Y_true, pair, w, k=k)
    return out


# --------------------------------------------------------------------------
# Section "real"
# --------------------------------------------------------------------------


def _estimator_cells(name, metric, ks, graphs, data, w, queue):
    """Child: every k of one estimator on one metric's shared graphs."""
    from mlknn._registry import get_estimator_class

    Xtr, Ytr, Xte, Yte = data
    G_train, G_test, index = graphs
    base, kwargs, _ = VARIANTS.get(name, (name, {}, ()))
    cls = get_estimator_class(base)
    for k in ks:
        try:
            est = cls(n_neighbors=k, metric=metric, **kwargs)
            uses_x = est.knn_capabilities()["uses_features"]
            t = time.perf_counter()
            est.fit_from_graph(G_train, Ytr, X=Xtr if uses_x else None, index=index)
            pair = est.predict_topk_from_graph(G_test, Xte if uses_x else None, k=5)
            seconds = time.perf_counter() - t
            queue.put(
                {
                    "estimator": name,
                    "metric": metric,
                    "k": k,
                    "seconds": seconds,
                    **_at_k(Yte, pair, w),
                }
            )
        except Exception as exc:  # reported in the table, not fatal
            queue.put(
                {
                    "estimator": name,
                    "metric": metric,
                    "k": k,
                    "error": f"{type(exc).__name__}: {exc}"[:200],
                }
            )
    queue.put(None)


def run_real(datasets, estimators, ks, limit):
    import scipy.sparse as sp

    from mlknn.datasets import load
    from mlknn.metrics import inverse_propensity
    from mlknn.neighbors import build_graph, get_backend

    rows = []
    for ds in datasets:
        tr, te = load(ds, split="train"), load(ds, split="test")
        Ytr, Yte = sp.csr_array(tr.Y), sp.csr_array(te.Y)
        w = inverse_propensity(Ytr, A=0.55, B=1.5)
        print(
            f"[real] {ds}: train {tr.X.shape}, test {te.X.shape}, q={Ytr.shape[1]}, load {load_average()}",
            flush=True,
        )
        for features, metric in CONFIGS:
            Xtr, Xte = tr.X, te.X
            if features == "tfidf":
                from sklearn.feature_extraction.text import TfidfTransformer

                tfidf = TfidfTransformer().fit(tr.X)
                Xtr, Xte = tfidf.transform(tr.X), tfidf.transform(te.X)
            t = time.perf_counter()
            index = get_backend("brute", metric=metric).fit(Xtr)
            graphs = (
                build_graph(index, None, max(ks)),
                build_graph(index, Xte, max(ks)),
                index,
            )
            graph_s = time.perf_counter() - t
            print(
                f"[real] {ds} {features} {metric}: graphs in {graph_s:.1f} s",
                flush=True,
            )
            for name in estimators:
                if name in VARIANTS and metric not in VARIANTS[name][2]:
                    continue
                queue = mp.get_context("fork").Queue()
                child = mp.get_context("fork").Process(
                    target=_estimator_cells,
                    args=(name, metric, ks, graphs, (Xtr, Ytr, Xte, Yte), w, queue),
                )
                child.start()
                deadline, got = time.monotonic() + limit, []
                while True:
                    try:
                        item = queue.get(timeout=max(0.1, deadline - time.monotonic()))
                    except Exception:
                        break  # time limit
                    if item is None:
                        break
                    item.update(dataset=ds, features=features, graph_seconds=graph_s)
                    got.append(item)
                    print(f"[real]   {_fmt_cell(item)}", flush=True)
                if child.is_alive():
                    child.terminate()
                child.join()
                done = {g["k"] for g in got}
                for k in ks:
                    if k not in done:
                        got.append(
                            {
                                "dataset": ds,
                                "features": features,
                                "estimator": name,
                                "metric": metric,
                                "k": k,
                                "error": f"did not finish within the {limit:.0f} s limit",
                            }
                        )
                rows += got
    return rows


def _fmt_cell(c):
    if "error" in c:
        return f"{c['estimator']} {c['metric']} k={c['k']}: {c['error']}"
    return (
        f"{c['estimator']} {c['metric']} k={c['k']}: "
        + " ".join(f"{m} {c[m]:.2f}" for m in MEASURES)
        + f" ({c['seconds']:.1f} s)"
    )


def real_tables(rows):
    out = []
    for ds in sorted({r["dataset"] for r in rows}):
        pub = PUBLISHED.get(ds, {})
        body = [
            [f"XC repository: {col}", "", "", "", *[f"{v[m]:.2f}" if m in v else "" for m in MEASURES], ""]
            for col, v in pub.items()
        ]
        best = {}
        for r in rows:
            if r["dataset"] != ds:
                continue
            if "error" in r:
                body.append(
                    [
                        r["estimator"],
                        r["features"],
                        r["metric"],
                        r["k"],
                        *["" for _ in MEASURES],
                        r["error"],
                    ]
                )
                continue
            body.append(
                [
                    r["estimator"],
                    r["features"],
                    r["metric"],
                    r["k"],
                    *[f"{r[m]:.2f}" for m in MEASURES],
                    round(r["seconds"], 1),
                ]
            )
            key = (r["estimator"], r["metric"])
            if key not in best or r["P@1"] > best[key]["P@1"]:
                best[key] = r
        out.append(f"### {ds}\n")
        out.append(
            markdown_table(
                ["estimator", "features", "metric", "k", *MEASURES, "fit+predict s"],
                body,
            )
        )
        knn = pub.get("kNN", {})
        ova = pub.get("1-vs-All")
        summary = []
        for (name, _), r in sorted(best.items(), key=lambda kv: (kv[0][1], -kv[1]["P@1"])):
            reach = all(r[m] >= knn[m] for m in ("P@1", "P@3", "P@5")) if knn else ""
            line = [
                name,
                f"{r['features']} {r['metric']} k={r['k']}",
                *[f"{r[m]:.2f}" for m in ("P@1", "P@3", "P@5", "PSP@1")],
                "yes" if reach is True else ("no" if reach is False else ""),
            ]
            if ova:
                line.append(" / ".join(f"{r[m] - ova[m]:+.2f}" for m in ("P@1", "P@3", "P@5")))
            summary.append(line)
        head = [
            "estimator",
            "best config (by P@1)",
            "P@1",
            "P@3",
            "P@5",
            "PSP@1",
            ">= kNN column on P@1/3/5",
        ]
        if ova:
            head.append("vs 1-vs-All (P@1 / P@3 / P@5)")
        out.append(f"\nBest configuration per estimator and metric on {ds} (chosen on the test set):\n")
        out.append(markdown_table(head, summary))
        out.append("")
    return "\n".join(out)


# --------------------------------------------------------------------------
# Section "scale"
# --------------------------------------------------------------------------

#: The child process of one scale cell (its peak RSS is the cell's own).
_SCALE_CHILD = HERE / "_xc_scale_child.py"


def run_scale(n_train, n_test, qs, backends, d, k, n_jobs, limit):
    import subprocess

    rows = []
    for q in qs:
        for backend in backends:
            cfg = {
                "n_train": n_train,
                "n_test": n_test,
                "q": q,
                "d": d,
                "k": k,
                "backend": backend,
                "n_jobs": n_jobs,
            }
            print(
                f"[scale] q={q} {backend} n_train={n_train} n_test={n_test} (load {load_average()})",
                flush=True,
            )
            t = time.perf_counter()
            try:
                proc = subprocess.run(
                    [sys.executable, str(_SCALE_CHILD), json.dumps(cfg)],
                    capture_output=True,
                    text=True,
                    timeout=limit,
                    check=False,
                )
                line = next(
                    (ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")),
                    None,
                )
                res = json.loads(line[7:]) if line else {"error": (proc.stderr or proc.stdout)[-300:]}
            except subprocess.TimeoutExpired:
                res = {"error": f"did not finish within the {limit:.0f} s limit"}
            res.update(cfg, wall_child_s=time.perf_counter() - t)
            print(f"[scale]   {json.dumps(res)[:400]}", flush=True)
            rows.append(res)
    return rows


def scale_table(rows):
    head = [
        "q",
        "backend",
        "index s",
        "LOO graph s",
        "fit s",
        "query graph s",
        "predict_topk s",
        "total s",
        "CPU s",
        "peak RSS MB",
        "RSS after data MB",
        "P@1",
        "P@3",
        "P@5",
        "PSP@1",
        "graph recall@k",
        "load start / end",
    ]
    body = []
    for r in rows:
        if "error" in r:
            body.append([r["q"], r["backend"], *[""] * (len(head) - 3), r["error"][:120]])
            continue
        body.append(
            [
                r["q"],
                r["backend"],
                *(
                    round(r[c], 1)
                    for c in (
                        "index_s",
                        "loo_graph_s",
                        "fit_s",
                        "query_graph_s",
                        "predict_topk_s",
                        "total_s",
                    )
                ),
                round(r["cpu_s"], 1) if "cpu_s" in r else "-",
                round(r["peak_rss_mb"]),
                round(r["rss_after_data_mb"]),
                *(f"{r[m]:.2f}" for m in ("P@1", "P@3", "P@5", "PSP@1")),
                round(r.get("graph_recall@k", 1.0), 3) if r["backend"] != "brute" else "exact",
                f"{r['load_start']} / {r['load_end']}",
            ]
        )
    return markdown_table(head, body)


# --------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------


def _merge(old, new, key):
    """Rows of an earlier run, kept unless this run measured the same key."""
    seen = {key(r) for r in new}
    return [r for r in old if key(r) not in seen] + new


def write_outputs(info, real_rows, scale_rows, args):
    run = (
        f"`{' '.join(['python benchmarks/bench_xc.py', *sys.argv[1:]])}`, {info['date']}; "
        f"{info['cores']} cores, {info.get('cpu', '?')}; BLAS {info.get('blas', '?')}; "
        f"load average at start {info['loadavg_start']}, at end {load_average()}"
    )
    runs = [] if args.render else [run]
    previous = HERE / "xc_results.json"
    if previous.exists():  # a section run alone keeps the other rows
        old = json.loads(previous.read_text())
        runs = old.get("runs", []) + runs
        real_rows = _merge(
            old.get("real", []),
            real_rows,
            lambda r: (
                r["dataset"],
                r["features"],
                r["metric"],
                r["estimator"],
                r["k"],
            ),
        )
        scale_rows = _merge(
            old.get("scale", []),
            scale_rows,
            lambda r: (r["n_train"], r["q"], r["backend"]),
        )
    parts = [
        "Runs (the machine is shared with other jobs: times are indicative, compare rows of one run):\n",
        *[f"* {r}" for r in runs],
        "",
    ]
    if real_rows:
        parts.append("## Bibtex and delicious (fixed MULAN splits)\n")
        parts.append(real_tables(real_rows))
    for n_train in sorted({r["n_train"] for r in scale_rows}, reverse=True):
        rows = [r for r in scale_rows if r["n_train"] == n_train]
        r0 = rows[0]
        parts.append(
            f"## Scale in q (make_extreme_multilabel, n_train = {n_train:,}, "
            f"n_test = {r0['n_test']:,}, d = {r0['d']}, MLkNN k = {r0['k']}, cosine, "
            f"n_jobs = {r0['n_jobs']})\n"
        )
        parts.append(scale_table(rows))
        sample = next((r for r in scale_rows if "blas" in r), None)
        if sample:
            parts.append(f"\nBLAS in the children: {sample['blas']}.\n")
    text = "\n".join(parts) + "\n"
    (HERE / "xc_results.md").write_text("# bench_xc results\n\n" + text)
    (HERE / "xc_results.json").write_text(
        json.dumps(
            {"runs": runs, "machine": info, "real": real_rows, "scale": scale_rows},
            indent=1,
            default=str,
        )
    )
    if DOC.exists():
        doc = DOC.read_text()
        if START in doc and END in doc:
            a, b = doc.index(START) + len(START), doc.index(END)
            DOC.write_text(doc[:a] + "\n" + text + doc[b:])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--quick",
        action="store_true",
        help="bibtex only, k in {10, 20}, a small scale run",
    )
    p.add_argument("--section", choices=("all", "real", "scale"), default="all")
    p.add_argument("--datasets", default="bibtex,delicious")
    p.add_argument("--estimators", default=",".join(ESTIMATORS))
    p.add_argument("--ks", default="5,10,20,30")
    p.add_argument(
        "--limit",
        type=float,
        default=900.0,
        help="seconds per estimator (real) / per child (scale)",
    )
    p.add_argument("--n-train", type=int, default=200_000)
    p.add_argument("--n-test", type=int, default=20_000)
    p.add_argument("--q", default="1000,10000,100000")
    p.add_argument("--backends", default="brute,hnswlib,faiss-hnsw")
    p.add_argument("--d", type=int, default=128)
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--n-jobs", type=int, default=2)
    p.add_argument(
        "--render",
        action="store_true",
        help="only rewrite the tables from xc_results.json",
    )
    args = p.parse_args(argv)
    if args.quick:
        args.datasets, args.ks, args.n_train, args.n_test, args.q = (
            "bibtex",
            "10,20",
            20_000,
            2_000,
            "1000,10000",
        )
    if not os.environ.get("MLKNN_DATA") and args.section != "scale":
        default = HERE.parent.parent / "shared" / "datasets"
        if (default / "MANIFEST.tsv").exists():
            os.environ["MLKNN_DATA"] = str(default)
    info = machine_info()
    print(
        f"[bench_xc] {info['date']} load {info['loadavg_start']} BLAS {info.get('blas', '?')}",
        flush=True,
    )
    real_rows, scale_rows = [], []
    if args.render:
        args.section = "none"
    try:
        if args.section in ("all", "real"):
            real_rows = run_real(
                args.datasets.split(","),
                args.estimators.split(","),
                [int(k) for k in args.ks.split(",")],
                args.limit,
            )
        if args.section in ("all", "scale"):
            scale_rows = run_scale(
                args.n_train,
                args.n_test,
                [int(q) for q in args.q.split(",")],
                args.backends.split(","),
                args.d,
                args.k,
                args.n_jobs,
                args.limit,
            )
    except KeyboardInterrupt:  # keep what was measured
        traceback.print_exc()
    write_outputs(info, real_rows, scale_rows, args)
    print(f"[bench_xc] wrote {HERE / 'xc_results.md'}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
