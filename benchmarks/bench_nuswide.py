"""End-to-end MLkNN at NUS-WIDE scale with approximate backends (``--full`` only).

NUS-WIDE (cVLAD+ features) has 161,789 training and 107,859 test images, 128
dense features and 81 concepts, label cardinality about 1.9. The data here are
synthetic with that shape and a real label *structure*:

* 200 latent "scenes"; each prefers a few of the 81 labels (Dirichlet), mixed with
  Zipf-skewed global label frequencies, so that labels co-occur and some are rare;
* each example draws a scene and 1 + Poisson(0.9) distinct labels from the mixture
  (Gumbel top-k, vectorised);
* features (float32) = the scene's Gaussian centre + the sum of its labels'
  Gaussian embeddings / sqrt(#labels) + Gaussian noise.

Reported per backend: time of the index, of the two searches and of MLkNN on the
graphs (end to end), recall@10 against exact search on 2,000 sampled training rows
(leave-one-out) and 2,000 sampled test rows, the macro AUC of all test points, and
on the sampled test rows the macro AUC with the approximate graph vs the exact one
(same fitted model). Exact search of all 161,789 training rows would take 2 n^2 d
= 6.7 TFLOP; it is not run.
"""

import numpy as np
from _common import log, markdown_table, timed

N_TRAIN, N_TEST, D, Q = 161_789, 107_859, 128, 81


def make_data(n_train=N_TRAIN, n_test=N_TEST, d=D, q=Q, n_scenes=200, seed=0):
    rng = np.random.default_rng(seed)
    n = n_train + n_test
    zipf = 1.0 / np.arange(1, q + 1) ** 0.9
    zipf = rng.permutation(zipf / zipf.sum())
    pref = rng.dirichlet(np.full(q, 0.05), size=n_scenes)  # a few labels per scene
    scene_p = 0.5 * pref + 0.5 * zipf[None, :]
    scene = rng.integers(0, n_scenes, size=n)
    n_labels = np.minimum(1 + rng.poisson(0.9, size=n), q)
    keys = np.log(scene_p[scene]) + rng.gumbel(size=(n, q))
    order = np.argsort(-keys, axis=1)
    Y = np.zeros((n, q), dtype=np.uint8)
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(q)[None, :].repeat(n, axis=0), axis=1)
    Y[rank < n_labels[:, None]] = 1
    centres = rng.standard_normal((n_scenes, d)).astype(np.float32)
    emb = rng.standard_normal((q, d)).astype(np.float32)
    X = centres[scene]
    X += (Y.astype(np.float32) @ emb) / np.sqrt(n_labels)[:, None].astype(np.float32)
    X += rng.standard_normal((n, d), dtype=np.float32)
    return X[:n_train], Y[:n_train], X[n_train:], Y[n_train:]


def run(backends=("hnswlib", "faiss-ivf", "faiss-hnsw"), k=10, n_sample=2000, scale=1.0):
    from mlknn import MLkNN
    from mlknn.metrics import macro_auc
    from mlknn.neighbors import BruteNeighbors, available_backends, build_graph, get_backend, recall_at_k
    from mlknn.neighbors._reuse import _drop_own

    n_train, n_test = int(N_TRAIN * scale), int(N_TEST * scale)
    t_data, (X, Y, Xt, Yt) = timed(make_data, n_train, n_test)
    log(f"nus-wide-like data {X.shape} + {Xt.shape}, q={Y.shape[1]}, cardinality "
        f"{Y.sum(1).mean():.2f}, made in {t_data:.1f}s")
    rng = np.random.default_rng(1)
    tr_rows = np.sort(rng.choice(n_train, n_sample, replace=False))
    te_rows = np.sort(rng.choice(n_test, n_sample, replace=False))
    exact = BruteNeighbors().fit(X)
    t_exact, (E_tr, E_te) = timed(lambda: (
        _drop_own(exact.kneighbors(X[tr_rows], k + 1)[1], tr_rows, k), exact.kneighbors(Xt[te_rows], k)))
    E_te_graph = E_te
    log(f"  exact neighbours of the {2 * n_sample} sampled rows: {t_exact:.1f}s")
    rows = []
    for name in backends:
        if name not in available_backends():
            log(f"  {name}: not installed, skipped")
            continue
        log(f"  {name}: building")
        t_index, index = timed(lambda: get_backend(name, random_state=0).fit(X))
        t_train, g_train = timed(build_graph, index, None, k)
        t_test, g_test = timed(build_graph, index, Xt, k)
        clf = MLkNN(n_neighbors=k)
        def fit_predict(clf=clf, g_train=g_train, index=index, g_test=g_test):
            return clf.fit_from_graph(g_train, Y, index=index).predict_proba_from_graph(g_test)

        t_model, proba = timed(fit_predict)
        total = t_index + t_train + t_test + t_model
        from mlknn.neighbors import NeighborGraph

        exact_sample = NeighborGraph(E_te_graph[1], E_te_graph[0], loo=False)
        proba_exact_sample = clf.predict_proba_from_graph(exact_sample)
        row = {
            "backend": name, "index_s": t_index, "train_graph_s": t_train, "test_graph_s": t_test,
            "mlknn_s": t_model, "total_s": total,
            "recall_train": recall_at_k(g_train.indices[tr_rows], E_tr, k),
            "recall_test": recall_at_k(g_test.indices[te_rows], E_te[1], k),
            "auc_all": macro_auc(Yt, proba),
            "auc_sample_approx": macro_auc(Yt[te_rows], proba[te_rows]),
            "auc_sample_exact": macro_auc(Yt[te_rows], proba_exact_sample),
            "params": _params(index),
        }
        rows.append(row)
        log(f"  {name}: total {total:.1f}s (index {t_index:.1f}, LOO graph {t_train:.1f}, test graph "
            f"{t_test:.1f}, MLkNN {t_model:.1f}); recall train {row['recall_train']:.4f} test "
            f"{row['recall_test']:.4f}; macro AUC {row['auc_all']:.4f} (sample: approx "
            f"{row['auc_sample_approx']:.4f}, exact {row['auc_sample_exact']:.4f})")
        del index, g_train, g_test
    return {"n_train": n_train, "n_test": n_test, "d": X.shape[1], "q": Y.shape[1],
            "cardinality": float(Y.sum(1).mean()), "data_s": t_data, "exact_sample_s": t_exact, "rows": rows}


def _params(index):
    keys = ("M", "ef", "ef_construction", "ef_search", "nlist_", "nprobe_")
    return ", ".join(f"{k}={getattr(index, k)}" for k in keys if hasattr(index, k))


def table(result):
    header = ["backend", "params", "index (s)", "LOO graph (s)", "test graph (s)", "MLkNN (s)", "total (s)",
              "recall@10 train", "recall@10 test", "macro AUC (all test)", "macro AUC sample: approx",
              "exact"]
    body = [[r["backend"], r["params"], r["index_s"], r["train_graph_s"], r["test_graph_s"], r["mlknn_s"],
             r["total_s"], f"{r['recall_train']:.4f}", f"{r['recall_test']:.4f}", f"{r['auc_all']:.4f}",
             f"{r['auc_sample_approx']:.4f}", f"{r['auc_sample_exact']:.4f}"] for r in result["rows"]]
    return markdown_table(header, body)
