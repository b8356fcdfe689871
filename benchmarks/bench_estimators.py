"""Fit + predict time of every kNN estimator that imports, per dataset, vs MLkNN.

Estimators come from ``mlknn._registry`` (``KNN_ESTIMATORS`` that import here;
ones still being written are skipped). Each runs with ``n_neighbors=10`` (or its
defaults if it has no such parameter) on the dataset's fixed train/test split,
default backend. The time is the best of ``repeats`` fit + predict runs.
"""

import warnings

from _common import log, markdown_table, timed


def _make(cls):
    try:
        return cls(n_neighbors=10)
    except TypeError:
        return cls()


def run(datasets=("emotions", "yeast", "scene", "tmc2007-500"), repeats=2, big_repeats=1):
    from mlknn._registry import KNN_ESTIMATORS, available_estimators, get_estimator_class
    from mlknn.datasets import load

    names = [n for n in KNN_ESTIMATORS if n in available_estimators()]
    if "mlknn" in names:  # MLkNN first: the others are reported as multiples of it
        names.remove("mlknn")
        names.insert(0, "mlknn")
    rows = []
    for ds in datasets:
        tr, te = load(ds, split="train"), load(ds, split="test")
        reps = big_repeats if tr.X.shape[0] > 10000 else repeats
        log(f"estimators {ds}: train {tr.X.shape} test {te.X.shape}")
        base = None
        for name in names:
            cls = get_estimator_class(name)

            def fit_predict():
                est = _make(cls)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    est.fit(tr.X, tr.Y)
                    return est.predict(te.X)

            try:
                t = min(timed(fit_predict)[0] for _ in range(reps))
                err = ""
            except Exception as exc:  # report, do not stop the benchmark
                t, err = None, f"{type(exc).__name__}: {str(exc)[:80]}"
            if name == "mlknn":
                base = t
            rows.append({"dataset": ds, "estimator": cls.__name__, "seconds": t,
                         "x_mlknn": None if (t is None or not base) else t / base, "error": err})
            log(f"  {cls.__name__}: {t if t is None else round(t, 3)} {err}")
    return rows


def table(rows):
    header = ["dataset", "estimator", "fit+predict (s)", "x MLkNN", "note"]
    body = [[r["dataset"], r["estimator"], r["seconds"], r["x_mlknn"], r["error"]] for r in rows]
    return markdown_table(header, body)
