"""MLkNN on a large sparse label space: fit + top-k, before and after sparse labels (issue 12).

Issue 12's example: 15,000 training and 5,000 test rows, d = 64, a CSR Y with
q = 20,000 labels and 5 labels per row (before: fit 16 s, predict_proba 4.3 s,
8 GB peak RSS). Each measurement runs in its own subprocess (peak RSS from
``resource.getrusage(RUSAGE_SELF).ru_maxrss``), so that the two code bases are
measured side by side in the same run, under the same load:

* ``--before PATH``: a source tree of mlknn before sparse labels (e.g.
  ``git worktree add /tmp/b_before <commit>``; its ``src`` is put first on
  PYTHONPATH). It has no ``predict_topk``: it is measured as fit + dense
  ``predict_proba`` + the top k of the dense scores (``np.argsort``).
* the installed mlknn (after): fit + ``predict_topk`` (and, with
  ``--also-proba``, fit + dense ``predict_proba``).
* ``--dense``: both trees get a dense Y and run fit + ``predict_proba`` +
  ``predict``; "same output" compares the bytes of both outputs (the dense path
  must stay bit-identical, and as fast or faster).

The child can be capped with ``--mem-limit-gb`` (RLIMIT_AS): a run that does not
fit is reported as ``MemoryError`` instead of pushing the machine into swap.

Usage::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/bench_sparse_labels.py \\
        --before /tmp/b_before --q 4000 20000

Prints one JSON line per run and a table of the ratios before / after.
"""

import argparse
import json
import os
import subprocess
import sys
import time

CHILD = r"""
import json, resource, sys, time, warnings
import numpy as np, scipy.sparse as sp
cfg = json.loads(sys.argv[1])
if cfg["mem_limit_gb"]:
    lim = int(cfg["mem_limit_gb"] * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
warnings.simplefilter("ignore")
rng = np.random.default_rng(cfg["seed"])
n_tr, n_te, d, q, card = cfg["n_train"], cfg["n_test"], cfg["d"], cfg["q"], cfg["card"]
n = n_tr + n_te
# Clustered embeddings whose neighbours share labels: each row belongs to one of
# n_clusters clusters; a cluster owns a pool of 2 * card labels (drawn with a
# power-law frequency over q), a row takes card of them.
n_clusters = max(1, n // 20)
centers = rng.normal(size=(n_clusters, d)).astype(np.float32)
which = rng.integers(0, n_clusters, size=n)
X = centers[which] + 0.3 * rng.normal(size=(n, d)).astype(np.float32)
weights = 1.0 / np.arange(1, q + 1) ** 0.8
weights /= weights.sum()
pools = rng.choice(q, size=(n_clusters, 2 * card), p=weights)
pick = np.argsort(rng.random((n, 2 * card)), axis=1)[:, :card]
cols = np.take_along_axis(pools[which], pick, axis=1)
rows = np.repeat(np.arange(n), card)
Y = sp.csr_matrix((np.ones(rows.size, np.uint8), (rows, cols.ravel())), shape=(n, q))
Y.sum_duplicates(); Y.data[:] = 1
Xtr, Xte, Ytr = X[:n_tr], X[n_tr:], Y[:n_tr]
if cfg["dense"]:
    Ytr = Ytr.toarray()
from threadpoolctl import threadpool_info
from mlknn import MLkNN
out = {"mode": cfg["mode"], "q": q, "n_train": n_tr, "n_test": n_te, "d": d, "nnz_Y": int(Y[:n_tr].nnz)}
try:
    est = MLkNN(n_neighbors=cfg["k_neighbors"])
    t0 = time.perf_counter(); est.fit(Xtr, Ytr); out["fit_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    if cfg["dense"]:  # the dense path of both trees: fit + predict_proba + predict, bit for bit
        S = est.predict_proba(Xte)
        P = est.predict(Xte)
        labels = np.argsort(-S, axis=1, kind="stable")[:, :cfg["k"]]
        out["proba_sha"] = __import__("hashlib").sha256(S.tobytes() + np.asarray(P).tobytes()).hexdigest()[:16]
    elif cfg["mode"] == "after":
        labels, scores = est.predict_topk(Xte, k=cfg["k"])
    else:
        S = est.predict_proba(Xte)
        labels = np.argsort(-S, axis=1, kind="stable")[:, :cfg["k"]]
    out["predict_s"] = time.perf_counter() - t0
    if cfg["mode"] == "after" and cfg["also_proba"]:
        t0 = time.perf_counter(); S = est.predict_proba(Xte); out["predict_proba_s"] = time.perf_counter() - t0
    # The label part alone (the search excluded, which other changes also touch):
    # fit_from_graph + scoring from precomputed graphs.
    from mlknn.neighbors import build_graph
    g_tr = build_graph(est.nn_, None, cfg["k_neighbors"])
    g_te = build_graph(est.nn_, Xte, cfg["k_neighbors"])
    t0 = time.perf_counter()
    est2 = MLkNN(n_neighbors=cfg["k_neighbors"]).fit_from_graph(g_tr, Ytr, index=est.nn_)
    out["label_fit_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    if cfg["mode"] == "after" and not cfg["dense"]:
        est2.predict_topk_from_graph(g_te, k=cfg["k"])
    else:
        S2 = est2.predict_proba_from_graph(g_te)
        np.argsort(-S2, axis=1, kind="stable")[:, :cfg["k"]]
        if cfg["dense"]:
            est2.predict_from_graph(g_te)
    out["label_predict_s"] = time.perf_counter() - t0
    hits = np.asarray(Y[n_tr:][np.arange(n_te)[:, None], labels[:, :1]].todense()).mean()
    out["p_at_1"] = float(hits)
    out["top_labels_sha"] = __import__("hashlib").sha256(np.ascontiguousarray(labels).tobytes()).hexdigest()[:16]
except MemoryError as exc:
    out["error"] = f"MemoryError: {str(exc)[:120]}"
out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
out["blas"] = sorted({(i.get("internal_api"), i.get("architecture")) for i in threadpool_info()}, key=str)
print(json.dumps(out))
"""


def run(mode, q, args, before=None):
    cfg = {"mode": mode, "q": q, "n_train": args.n_train, "n_test": args.n_test, "d": args.d,
           "card": args.card, "k": args.k, "k_neighbors": args.n_neighbors, "seed": args.seed,
           "mem_limit_gb": args.mem_limit_gb, "also_proba": args.also_proba, "dense": args.dense}
    env = dict(os.environ)
    if before:
        env["PYTHONPATH"] = os.path.join(before, "src") + os.pathsep + env.get("PYTHONPATH", "")
    t0 = time.perf_counter()
    res = subprocess.run([sys.executable, "-c", CHILD, json.dumps(cfg)], capture_output=True, text=True, env=env)
    line = res.stdout.strip().splitlines()[-1] if res.stdout.strip() else "{}"
    try:
        out = json.loads(line)
    except json.JSONDecodeError:
        out = {"mode": mode, "q": q}
    if res.returncode != 0:
        out["error"] = out.get("error") or f"exit {res.returncode}: {res.stderr.strip()[-300:]}"
    out["wall_s"] = time.perf_counter() - t0
    print(json.dumps(out), flush=True)
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--before", help="source tree of mlknn before sparse labels (its src/ goes on PYTHONPATH)")
    p.add_argument("--q", type=int, nargs="+", default=[20000])
    p.add_argument("--before-max-q", type=int, default=None,
                   help="measure 'before' only up to this q (its dense arrays grow with n q)")
    p.add_argument("--n-train", type=int, default=15000)
    p.add_argument("--n-test", type=int, default=5000)
    p.add_argument("--d", type=int, default=64)
    p.add_argument("--card", type=int, default=5, help="labels per row")
    p.add_argument("--n-neighbors", type=int, default=10)
    p.add_argument("--k", type=int, default=5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--mem-limit-gb", type=float, default=0.0)
    p.add_argument("--also-proba", action="store_true")
    p.add_argument("--dense", action="store_true",
                   help="give both trees a dense Y: fit + predict_proba + predict (speed and bit-identity of the dense path)")
    args = p.parse_args(argv)
    print(json.dumps({"loadavg": os.getloadavg()}), flush=True)
    rows = []
    for q in args.q:
        before = None
        if args.before and (args.before_max_q is None or q <= args.before_max_q):
            before = run("before", q, args, before=args.before)
        after = run("after", q, args)
        rows.append((q, before, after))
    print(json.dumps({"loadavg": os.getloadavg()}), flush=True)
    what = "predict_proba + predict" if args.dense else "top-k"
    print(f"\n| q | fit s (before / after) | {what} s (before / after) | label part: fit_from_graph s "
          f"| label part: {what} from graph s | peak RSS MB (before / after) | same output |")
    print("|---|---|---|---|---|---|---|")
    for q, b, a in rows:
        def cell(key, b=b, a=a):
            if b is None or key not in b:
                return f"- / {a.get(key, float('nan')):.2f}"
            return f"{b[key]:.2f} / {a[key]:.2f} ({b[key] / a[key]:.1f}x)"
        key = "proba_sha" if args.dense else "top_labels_sha"
        same = "-" if b is None or key not in b else str(b[key] == a.get(key))
        print(f"| {q} | {cell('fit_s')} | {cell('predict_s')} | {cell('label_fit_s')} | {cell('label_predict_s')} "
              f"| {cell('peak_rss_mb')} | {same} |")


if __name__ == "__main__":
    main()
