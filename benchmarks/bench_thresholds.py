"""Decision rules on each dataset's fixed split: the 0.5 rule against tuned thresholds.

For MLkNN, MLHiKNN and BRkNNa (``n_neighbors=10``, features min-max scaled on the
training part; sparse features max-abs scaled, as the harness does), on each dataset's
fixed train/test split:

* ``0.5``: the estimator's own ``predict`` (MLkNN, MLHiKNN: posterior > 0.5; BRkNNa:
  confidence >= 0.5, with its top label when nothing reaches 0.5);
* ``per-label``: :class:`mlknn.decision.TunedThresholds` with ``strategy="per-label"``
  (each label's F1);
* ``per-label fbr``: the same with ``fallback_below=0.1`` (a label whose best
  out-of-sample F1 is below 0.1 keeps 0.5; Yang 2001's SCut.FBR);
* ``global``: one threshold for every label maximising micro-F1.

Both tuned rules are chosen on the training part only, on its out-of-sample posteriors
(``cv="loo"``: exact leave-one-out for MLkNN and BRkNNa, 5-fold cross-fitting for
MLHiKNN, folds seeded with random_state=0), and evaluated once on the test part. Writes
``benchmarks/thresholds.json`` and prints the markdown table of docs/decisions.md.

Usage::

    python benchmarks/bench_thresholds.py emotions yeast scene
"""

import json
import sys
import time
import warnings
from pathlib import Path

from _common import log, machine_info, markdown_table

HERE = Path(__file__).resolve().parent
DEFAULT_DATASETS = ("emotions", "scene", "yeast", "medical", "enron")


def run(datasets=DEFAULT_DATASETS):
    from mlknn import BRkNNa, MLHiKNN, MLkNN
    from mlknn.datasets import load
    from mlknn.decision import TunedThresholds
    from mlknn.decision._search import global_threshold, per_label_thresholds
    from mlknn.metrics import macro_f1, micro_f1
    from mlknn.preprocessing import FeatureScaler

    estimators = {"MLkNN": MLkNN, "MLHiKNN": MLHiKNN, "BRkNNa": BRkNNa}
    rows = []
    for ds in datasets:
        train, test = load(ds, split="train"), load(ds, split="test")
        scaler = FeatureScaler("minmax").fit(train.X)
        X_train, X_test = scaler.transform(train.X), scaler.transform(test.X)
        log(f"thresholds {ds}: train {X_train.shape} test {X_test.shape} q={train.Y.shape[1]}")
        for name, cls in estimators.items():
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tuned = TunedThresholds(cls(n_neighbors=10), strategy="per-label", scoring="f1",
                                        fallback_below=0.1, random_state=0).fit(X_train, train.Y)
            P = tuned.predict_proba(X_test)
            # The other rules' searches on the same out-of-sample posteriors (no second
            # leave-one-out pass).
            t_label, _ = per_label_thresholds(tuned.oof_proba_, train.Y, "f1")
            t_global, _ = global_threshold(tuned.oof_proba_, train.Y, "micro_f1")
            predictions = {
                "0.5": tuned.estimator_.predict(X_test),
                "per-label": (P > t_label).astype("uint8"),
                "per-label fbr": tuned.predict(X_test),
                "global": (P > t_global).astype("uint8"),
            }
            seconds = time.perf_counter() - start
            row = {"dataset": ds, "estimator": name, "seconds": round(seconds, 1), "global_threshold": t_global}
            for rule, pred in predictions.items():
                row[f"macro_f1 {rule}"] = macro_f1(test.Y, pred)
                row[f"micro_f1 {rule}"] = micro_f1(test.Y, pred)
                row[f"empty {rule}"] = float((pred.sum(axis=1) == 0).mean())
            rows.append(row)
            log(f"  {name}: " + ", ".join(f"{m} " + " / ".join(f"{row[f'{m} {r}']:.3f}" for r in predictions)
                                          for m in ("macro_f1", "micro_f1")) + f" ({seconds:.1f} s)")
    return rows


def table(rows):
    rules = ("0.5", "per-label", "per-label fbr", "global")
    header = ["dataset", "estimator", *(f"macro-F1 {r}" for r in rules), *(f"micro-F1 {r}" for r in rules),
              "empty 0.5", "seconds"]
    body = [[r["dataset"], r["estimator"], *(f"{r[f'macro_f1 {x}']:.3f}" for x in rules),
             *(f"{r[f'micro_f1 {x}']:.3f}" for x in rules), f"{100 * r['empty 0.5']:.1f} %", f"{r['seconds']:.1f}"]
            for r in rows]
    return markdown_table(header, body)


if __name__ == "__main__":
    datasets = sys.argv[1:] or DEFAULT_DATASETS
    rows = run(datasets)
    out = HERE / "thresholds.json"
    previous = json.loads(out.read_text()) if out.exists() else {"rows": []}
    kept = [r for r in previous["rows"] if r["dataset"] not in datasets]
    out.write_text(json.dumps({"machine": machine_info(), "rows": kept + rows}, indent=1) + "\n")
    print(table(kept + rows))
