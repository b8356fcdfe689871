"""mlknn's MLkNN against scikit-multilearn's MLkNN: time and agreement.

scikit-multilearn 0.2.0 calls ``NearestNeighbors(self.k)`` positionally, which
scikit-learn >= 1.0 rejects; the benchmark patches that one call (in its own
process, never in mlknn) to ``NearestNeighbors(n_neighbors=k)``.

Why predictions differ (reported per variant):

* ``ignore_first_neighbours=0`` (default): in ``fit`` each training point is its own
  first neighbour, so its counts include its own labels (ML-kNN's paper uses the
  other k points: leave-one-out). Predictions of test points use the right k.
* ``ignore_first_neighbours=1``: ``fit`` drops the first neighbour (the point itself,
  unless a duplicate comes first), which matches leave-one-out, but ``predict``
  *also* drops each test point's true nearest neighbour and uses neighbours 2..k+1.
* ``hybrid``: fitted with 1, then set to 0 before ``predict``: the same neighbours as
  mlknn. What remains is the decision at an exact tie ``P(H1)P(E|H1) = P(H0)P(E|H0)``:
  scikit-multilearn predicts 1 (``>=``), mlknn predicts 0 (the strict MAP rule, see
  ``MLkNN``'s docstring), and the neighbour sets of queries with a distance tie at
  the k-th neighbour (mlknn takes the lower training index; scikit-learn's selection
  takes whichever its partition returns). tmc2007-500 has binary features, so such
  ties are common there; on yeast (continuous features) the hybrid is identical.
"""

import numpy as np
from _common import log, markdown_table, timed


def _patched_skml():
    import skmultilearn.adapt.mlknn as skml_mod
    from sklearn.neighbors import NearestNeighbors

    class _NN(NearestNeighbors):
        def __init__(self, n_neighbors=5, **kw):  # accepts the positional k
            super().__init__(n_neighbors=n_neighbors, **kw)

    skml_mod.NearestNeighbors = _NN
    return skml_mod.MLkNN


def _skml_fit(X, Y, k, ignore):
    import scipy.sparse as sp

    SkMLkNN = _patched_skml()
    return SkMLkNN(k=k, ignore_first_neighbours=ignore).fit(X, sp.lil_matrix(Y))


def _skml_predict(clf, Xt, ignore):
    clf.ignore_first_neighbours = ignore
    return np.asarray(clf.predict(Xt).toarray(), dtype=np.uint8)


def run(datasets=("yeast", "tmc2007-500"), k=10, repeats=2, max_train=None, max_test=None):
    from mlknn import MLkNN
    from mlknn.datasets import load

    rows = []
    for name in datasets:
        tr, te = load(name, split="train"), load(name, split="test")
        X, Y, Xt = tr.X[:max_train], tr.Y[:max_train], te.X[:max_test]
        log(f"skml {name}: train {X.shape}, test {Xt.shape}")

        def ours():
            return MLkNN(n_neighbors=k).fit(X, Y).predict(Xt)

        t_ours = min(timed(ours)[0] for _ in range(repeats))
        pred = ours()
        t_fit, clf = timed(_skml_fit, X, Y, k, 0)
        t_pred, sk_default = timed(_skml_predict, clf, Xt, 0)
        t_sk = t_fit + t_pred
        clf1 = _skml_fit(X, Y, k, 1)
        sk_ignore1 = _skml_predict(clf1, Xt, 1)
        sk_hybrid = _skml_predict(clf1, Xt, 0)
        # mlknn with scikit-multilearn's tie rule (>=), to isolate the tie decision.
        est = MLkNN(n_neighbors=k).fit(X, Y)
        graph = est.query_graph(Xt)[0]
        counts = np.asarray(Y)[graph.indices].sum(axis=1)  # C_t(l), from public attributes
        cols = np.arange(Y.shape[1])[None, :]
        j1 = est.prior_ * est.cond_prob_true_[counts, cols]
        j0 = (1.0 - est.prior_) * est.cond_prob_false_[counts, cols]
        pred_ge = (j1 >= j0).astype(np.uint8)
        # Queries whose k-th and (k+1)-th neighbours are at the same distance: there
        # the neighbour set depends on the tie rule (mlknn: lower index; scikit-learn:
        # whatever its selection returns).
        dk = est.nn_.kneighbors(Xt, k + 1)[0]
        boundary_ties = float(np.mean(dk[:, k - 1] == dk[:, k]))
        row = {
            "dataset": name + ("" if max_train is None and max_test is None else " (subset)"),
            "n_train": X.shape[0], "n_test": Xt.shape[0], "q": Y.shape[1],
            "ours_s": t_ours, "skml_s": t_sk, "speedup": t_sk / t_ours,
            "same_default": float(np.mean(pred == sk_default)),
            "same_ignore1": float(np.mean(pred == sk_ignore1)),
            "same_hybrid": float(np.mean(pred == sk_hybrid)),
            "same_hybrid_ge": float(np.mean(pred_ge == sk_hybrid)),
            "rows_same_hybrid_ge": float(np.mean(np.all(pred_ge == sk_hybrid, axis=1))),
            "ties": int(np.sum(j1 == j0)),
            "boundary_ties": boundary_ties,
        }
        rows.append(row)
        log(f"  mlknn {t_ours:.3f}s skml {t_sk:.2f}s -> {row['speedup']:.0f}x; identical "
            f"default {row['same_default']:.4f} ignore1 {row['same_ignore1']:.4f} hybrid "
            f"{row['same_hybrid']:.4f} hybrid with >= {row['same_hybrid_ge']:.4f}")
    return rows


def table(rows):
    header = ["dataset", "train x test", "mlknn fit+predict (s)", "scikit-multilearn (s)", "speed-up",
              "identical: default", "ignore_first=1", "hybrid", "hybrid, mlknn with >=",
              "posterior ties (P1 = P0)", "test rows with a distance tie at the k-th neighbour"]
    body = [[r["dataset"], f"{r['n_train']} x {r['n_test']}", r["ours_s"], r["skml_s"], f"{r['speedup']:.0f}x",
             f"{r['same_default']:.4f}", f"{r['same_ignore1']:.4f}", f"{r['same_hybrid']:.4f}",
             f"{r['same_hybrid_ge']:.4f}", r["ties"], f"{r['boundary_ties']:.3f}"] for r in rows]
    return markdown_table(header, body)


#: Pause before each timed function's repeats. After a multi-threaded product
#: OpenBLAS's idle threads spin for 2^28 cycles (0.11 s of CPU measured on the Intel
#: host) before they sleep; without the pause the function timed next shares a core
#: with them: mlknn's two-thread small path ran 9.8 instead of 6.2 ms right after
#: the GEMMs (OPENBLAS_THREAD_TIMEOUT=4, which shortens the spin, gave 6.2 there).
SPIN_PAUSE_S = 0.15


def run_small(name="yeast", k=10, repeats=7, skml_repeats=3, seed=0):
    """Small problems: fit + predict on a seeded 50/50 split, against scikit-multilearn and two GEMMs.

    yeast's 2,417 rows split by ``train_test_split(test_size=0.5, random_state=0)``
    (1,208 train, 1,209 test, d = 103). Three things timed interleaved, minimum
    of several repeats each: mlknn's ``MLkNN`` fit + predict; scikit-multilearn's
    (default ``ignore_first_neighbours=0``), fit + predict; and the two matrix
    products any exact kNN search of this problem needs, float32 ``Xtr @ Xtr.T``
    and ``Xte @ Xtr.T`` (2 (n_train + n_test) n_train d flops), each function's
    repeats after a pause of ``SPIN_PAUSE_S`` (OpenBLAS's spinning threads). Targets: mlknn
    40x faster than scikit-multilearn, and under 3x the two GEMMs. The same three
    are timed again in CPU time with one BLAS thread (``time.process_time``), which
    the load of a shared machine disturbs much less than wall time. Where numba is
    installed, mlknn runs its compiled selection; it is also timed with the numpy
    fallback (``ours_numpy_s``: ``mlknn.neighbors._exact._compiled.ENABLED = False``), in the
    same interleaved loop.
    """
    import time

    from sklearn.model_selection import train_test_split

    import mlknn.neighbors._exact._compiled as compiled
    from mlknn import MLkNN
    from mlknn.datasets import load

    data = load(name)
    X, Y = np.asarray(data.X), np.asarray(data.Y)
    X, Xt, Y, _ = train_test_split(X, Y, test_size=0.5, random_state=seed)
    X32, Xt32 = X.astype(np.float32), Xt.astype(np.float32)
    log(f"small {name}: train {X.shape}, test {Xt.shape}")

    def ours():
        MLkNN(n_neighbors=k).fit(X, Y).predict(Xt)

    has_numba = compiled.kernels() is not None

    def ours_numpy():  # the same with the compiled selection switched off
        compiled.ENABLED = False
        try:
            ours()
        finally:
            compiled.ENABLED = True

    def sk():
        _skml_predict(_skml_fit(X, Y, k, 0), Xt, 0)

    out1, out2 = np.empty((X.shape[0], X.shape[0]), np.float32), np.empty((Xt.shape[0], X.shape[0]), np.float32)

    def gemms():
        np.matmul(X32, X32.T, out=out1)
        np.matmul(Xt32, X32.T, out=out2)

    ours()  # the first call imports numba and loads its compiled code (once per process)
    timed_fns = (("gemms", gemms, 5), ("ours", ours, 3), ("ours_numpy", ours_numpy if has_numba else None, 3),
                 ("skml", sk, 1))
    best = dict.fromkeys(("ours", "ours_numpy", "skml", "gemms"), np.inf)
    for r in range(repeats):
        for key, fn, times in timed_fns:
            if fn is None or (key == "skml" and r >= skml_repeats):
                continue
            time.sleep(SPIN_PAUSE_S)  # the previous function's BLAS threads stop spinning
            for _ in range(times):
                t = time.perf_counter()
                fn()
                best[key] = min(best[key], time.perf_counter() - t)
    # The same in CPU time on one BLAS thread: independent of the load.
    from threadpoolctl import threadpool_limits

    cpu = dict.fromkeys(("ours", "ours_numpy", "skml", "gemms"), np.inf)
    with threadpool_limits(limits=1, user_api="blas"):
        for r in range(repeats):
            for key, fn, times in timed_fns:
                if fn is None or (key == "skml" and r >= skml_repeats):
                    continue
                for _ in range(times):
                    t = time.process_time()
                    fn()
                    cpu[key] = min(cpu[key], time.process_time() - t)
    row = {"dataset": name, "n_train": X.shape[0], "n_test": Xt.shape[0], "d": X.shape[1],
           "ours_s": best["ours"], "skml_s": best["skml"], "gemms_s": best["gemms"],
           "speedup": best["skml"] / best["ours"], "over_gemms": best["ours"] / best["gemms"],
           "cpu_ours_s": cpu["ours"], "cpu_skml_s": cpu["skml"], "cpu_gemms_s": cpu["gemms"],
           "cpu_speedup": cpu["skml"] / cpu["ours"], "cpu_over_gemms": cpu["ours"] / cpu["gemms"],
           "compiled": has_numba, "ours_numpy_s": best["ours_numpy"], "cpu_ours_numpy_s": cpu["ours_numpy"]}
    log(f"  mlknn {best['ours'] * 1e3:.1f} ms, scikit-multilearn {best['skml'] * 1e3:.0f} ms "
        f"({row['speedup']:.0f}x), two GEMMs {best['gemms'] * 1e3:.1f} ms ({row['over_gemms']:.1f}x); one-thread CPU "
        f"time: {cpu['ours'] * 1e3:.1f} ms, {row['cpu_speedup']:.0f}x, {row['cpu_over_gemms']:.1f}x")
    if has_numba:
        log(f"  numpy fallback (compiled selection off): {best['ours_numpy'] * 1e3:.1f} ms wall, "
            f"{cpu['ours_numpy'] * 1e3:.1f} ms one-thread CPU")
    return row


def small_table(rows):
    header = ["dataset", "train x test x d", "mlknn fit+predict (ms)", "scikit-multilearn (ms)", "speed-up",
              "two GEMMs (ms)", "mlknn / GEMMs", "1-thread CPU: mlknn (ms)", "scikit-multilearn (ms)", "speed-up",
              "two GEMMs (ms)", "mlknn / GEMMs"]
    body = [[r["dataset"], f"{r['n_train']} x {r['n_test']} x {r['d']}", 1e3 * r["ours_s"], 1e3 * r["skml_s"],
             f"{r['speedup']:.0f}x", 1e3 * r["gemms_s"], r["over_gemms"], 1e3 * r["cpu_ours_s"],
             1e3 * r["cpu_skml_s"], f"{r['cpu_speedup']:.0f}x", 1e3 * r["cpu_gemms_s"], r["cpu_over_gemms"]]
            for r in rows]
    return markdown_table(header, body)


if __name__ == "__main__":
    import argparse

    from _common import load_average, machine_info

    p = argparse.ArgumentParser(description="mlknn's MLkNN against scikit-multilearn's (see the module docstring).")
    p.add_argument("--small", action="store_true", help="only run_small: yeast's seeded 50/50 split vs two GEMMs")
    p.add_argument("--repeats", type=int, default=7, help="repeats of run_small (minimum taken)")
    args = p.parse_args()
    info = machine_info()
    log(f"{info['cpu']}, {info['cores']} cores, BLAS {info.get('blas', '?')}, load {info['loadavg_start']}")
    if args.small:
        print(small_table([run_small(repeats=args.repeats)]))
    else:
        print(table(run()))
    log(f"load at the end {load_average()}")
