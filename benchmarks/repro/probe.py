"""Probe one cause of a reproduction gap on a preset's own folds (issue 15, point 6).

Runs some algorithms of a preset on one dataset, on the first R repetitions of the
preset's protocol (the same folds as ``mlknn reproduce``: same splitter, seed and
dataset-level label filter), with a chosen preprocessing (scaling; chi-square rule,
amount and where it is fitted), evaluates every ranking measure under several tie
rules, and prints ours beside the published cells with z (the preset's rule).

    python benchmarks/repro/probe.py dmlknn2011 enron --repeats 1 \
        --alg brknn --alg mlknn:smoothing=1 --select presence-max:0.2 --ties pessimistic,mulan

An algorithm is ``NAME[:param=value,...]`` with NAME a registry name or harness alias
(``mlknn:skml`` is written ``mlknn/skml``); values are parsed as int, float or str.
"""

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from chi2_rules import lp_chi2, presence_chi2  # noqa: E402

from mlknn.experiments import get_preset, load_dataset  # noqa: E402
from mlknn.experiments._config import AlgorithmSpec  # noqa: E402
from mlknn.experiments._data import apply_prefilter, as_label_matrix  # noqa: E402
from mlknn.experiments._preset_model import STD_FLOOR  # noqa: E402
from mlknn.experiments._runner import make_estimator  # noqa: E402
from mlknn.metrics import evaluate  # noqa: E402
from mlknn.neighbors import compute_graphs  # noqa: E402
from mlknn.preprocessing import FeatureScaler, multilabel_chi2  # noqa: E402

RANKING = ("one_error", "coverage", "ranking_loss", "average_precision", "macro_auc", "micro_auc")


def _value(v):
    for cast in (int, float):
        try:
            return cast(v)
        except ValueError:
            pass
    return {"inf": math.inf, "True": True, "False": False, "None": None}.get(v, v)


def parse_alg(text, k):
    name, _, rest = text.partition(":")
    name = name.replace("/", ":")
    params = {"n_neighbors": k}
    for item in filter(None, rest.split(",")):
        key, _, val = item.partition("=")
        params[key] = _value(val)
    return AlgorithmSpec(name, tuple(sorted(params.items())))


def chi2_scores(X, Y, rule):
    Yd = np.asarray(Y.toarray() if sp.issparse(Y) else Y)
    if rule.startswith("mass"):
        s = np.nan_to_num(multilabel_chi2(X, Yd))
        prior = Yd.mean(axis=0)
        return {"mass-max": lambda: s.max(0), "mass-mean": lambda: s.mean(0),
                "mass-avg": lambda: (prior[:, None] * s).sum(0)}[rule]()  # fmt: skip
    if rule.startswith("presence"):
        s, prior = presence_chi2(X, Yd)
        return {"presence-max": lambda: s.max(0), "presence-mean": lambda: s.mean(0),
                "presence-avg": lambda: (prior[:, None] * s).sum(0)}[rule]()  # fmt: skip
    if rule == "lp":
        return lp_chi2(X, Yd)
    raise ValueError(f"unknown chi-square rule {rule!r}")


def select(X, Y, rule, amount):
    d = X.shape[1]
    m = int(amount) if amount >= 1 else max(1, math.ceil(amount * d - 1e-9))
    s = chi2_scores(X, Y, rule)
    order = np.lexsort((np.arange(d), -s))
    return np.sort(order[:m])


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("preset")
    ap.add_argument("dataset")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--alg", action="append", required=True)
    ap.add_argument("--scaling", default=None, help="default: the preset's")
    ap.add_argument("--select", default="preset", help="none | RULE:AMOUNT[:dataset] (default: the preset's)")
    ap.add_argument("--ties", default="pessimistic")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)

    preset = get_preset(a.preset)
    cfg, _ = preset.config([a.dataset], seed=a.seed)
    prep = cfg.preprocessing_for(a.dataset)
    scaling = a.scaling or prep.scaling
    if a.select == "preset":
        sel = None if prep.feature_selection is None else ("mass-max", float(prep.feature_selection), "train")
    elif a.select == "none":
        sel = None
    else:
        parts = a.select.split(":")
        sel = (parts[0], float(parts[1]), parts[2] if len(parts) > 2 else "train")
    ties = a.ties.split(",")
    specs = [parse_alg(t, preset.k) for t in a.alg]

    X, Y = load_dataset(a.dataset)
    X, Y = apply_prefilter(X, as_label_matrix(Y), prep.dataset_level())
    Y = np.asarray(Y.toarray() if sp.issparse(Y) else Y)
    if prep.min_label_count and prep.label_scope == "train":
        raise SystemExit("probe.py: per-fold label filtering is not implemented")
    global_keep = None
    if sel is not None and sel[2] == "dataset":
        global_keep = select(X, Y, sel[0], sel[1])
    folds = [f for f in cfg.protocol.splitter().split(X, Y) if f.repeat < a.repeats]
    vals = {}  # (alg, ties, metric) -> list
    t0 = time.time()
    for f in folds:
        Xtr, Xte, Ytr, Yte = X[f.train], X[f.test], Y[f.train], Y[f.test]
        if sel is not None:
            keep = global_keep if global_keep is not None else select(Xtr, Ytr, sel[0], sel[1])
            Xtr, Xte = Xtr[:, keep], Xte[:, keep]
        sc = FeatureScaler(scaling).fit(Xtr)
        Xtr, Xte = sc.transform(Xtr), sc.transform(Xte)
        ests = [make_estimator(s, cfg.protocol.seed) for s in specs]
        width = max(e.search_width(Xtr.shape[0]) for e in ests)
        index, g_tr, g_te = compute_graphs(Xtr, Xte, width)
        for s, e in zip(specs, ests):
            e.fit_from_graph(g_tr, Ytr, X=Xtr, index=index)
            P = e.predict_from_graph(g_te, Xte)
            S = e.predict_proba_from_graph(g_te, Xte)
            P = P.toarray() if hasattr(P, "toarray") else np.asarray(P)
            readings = [(s.label(), P)]
            if s.base == "brknn" and e.get_params().get("variant", "paper") == "paper":
                # A hand-written BR-kNN deciding count >= k/2 (a half vote assigned), not
                # MULAN's smoothed conf >= 0.5 (a half vote falls just under 0.5 for q >= 3).
                n, q, kk = Ytr.shape[0], Ytr.shape[1], e.n_neighbors
                counts = np.rint(np.asarray(S) * (q / n + kk) - 1 / n)
                readings.append((s.label() + " [count>=k/2]", (2 * counts >= kk).astype(int)))
            for label, Pr in readings:
                for t in ties:
                    for m, v in evaluate(Yte, Pr, S, ties=t).items():
                        if t != ties[0] and m not in RANKING:
                            continue
                        vals.setdefault((label, t, m), []).append(float(v))
                    if t == "mulan":
                        # Matlab's max() takes the first (lowest-index) maximum: MULAN's rule
                        # on the labels in reverse order gives the lower index the better rank.
                        oe = evaluate(Yte[:, ::-1], Pr[:, ::-1], np.asarray(S)[:, ::-1], ties="mulan")["one_error"]
                        vals.setdefault((label, "mulan-rev", "one_error"), []).append(float(oe))
    pub = {}
    for r in preset.published_rows():
        if r["dataset"] == a.dataset:
            pub.setdefault(r["algorithm"], {})[r["metric"]] = r
    print(f"# {a.preset} {a.dataset}: {len(folds)} folds, scaling={scaling}, select={sel}, "
          f"{time.time() - t0:.0f} s")
    out = []
    for (alg, t, m), v in vals.items():
        mean = float(np.mean(v))
        sd = float(np.std(v, ddof=1)) if len(v) > 1 else math.nan
        out.append({"alg": alg, "ties": t, "metric": m, "mean": mean, "sd": sd, "n": len(v)})
    for r in out:
        print(f"{r['alg']:45s} {r['ties']:12s} {r['metric']:18s} {r['mean']:.4f} ± {r['sd']:.4f}")
    metrics = {r["metric"] for r in out}
    for alg, cells in pub.items():
        shown = [f"{m} {c['mean']}" + (f" ± {c['std']}" if c["std"] is not None else "")
                 for m, c in cells.items() if m in metrics]
        if shown:
            print(f"paper {alg}: " + "; ".join(shown))
    if a.json:
        Path(a.json).write_text(json.dumps({"args": vars(a), "rows": out, "std_floor": STD_FLOOR}, indent=1))


if __name__ == "__main__":
    main()
