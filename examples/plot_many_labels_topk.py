"""
Many labels: sparse Y, exact top-k and the extreme-classification metrics
=========================================================================

With 10^4 labels or more a dense (n, q) score matrix is the cost to avoid. ML-kNN, BR-kNN and
BML-kNN keep a sparse label matrix sparse and answer ``predict_topk`` exactly: the same labels
and scores as the top k of ``predict_proba``, at a cost that grows with the labels present in
the neighbourhoods, not with q. This example uses the power-law synthetic generator (a few very
frequent labels, most labels with a handful of examples, about 5 labels per row) with 20,000
labels and evaluates P@k, nDCG@k and the propensity-scored PSP@k of Jain et al. (2016).
"""

# %%
import matplotlib.pyplot as plt
import numpy as np

from mlknn import MLkNN
from mlknn.datasets import make_extreme_multilabel
from mlknn.metrics import (
    inverse_propensity,
    ndcg_at_k,
    precision_at_k,
    psprecision_at_k,
)

data = make_extreme_multilabel(
    n_samples=6000, n_features=64, n_labels=20000, random_state=0
)
X, Y = data.X, data.Y  # X float32 embeddings, Y a CSR label matrix
X_train, X_test, Y_train, Y_test = X[:5000], X[5000:], Y[:5000], Y[5000:]
per_row = Y.nnz / Y.shape[0]
print(f"Y: {Y.shape}, {Y.nnz} non-zeros ({per_row:.1f} labels per row), {type(Y).__name__}")

# %%
# Fit on the sparse labels with cosine neighbours, and ask for the 5 best labels per
# query.
clf = MLkNN(n_neighbors=20, metric="cosine").fit(X_train, Y_train)
labels, scores = clf.predict_topk(X_test, k=5)
print("first query's top 5 labels:", labels[0])
print("and their scores:          ", np.round(scores[0], 3))

# %%
# The metrics take the (labels, scores) pair directly; nothing (n, q) is ever built.
inv_p = inverse_propensity(Y_train)
# (sums of uint8 come back unsigned)
label_counts = np.asarray(Y_train.sum(axis=0)).ravel().astype(np.int64)
frequency_baseline = np.argsort(-label_counts, kind="stable")[:5]
baseline = (
    np.tile(frequency_baseline, (X_test.shape[0], 1)),
    np.ones((X_test.shape[0], 5)),
)
for name, pair in (("ML-kNN", (labels, scores)), ("most frequent labels", baseline)):
    at_k = "  ".join(
        f"P@{k} {precision_at_k(Y_test, pair, k=k):.3f}" for k in (1, 3, 5)
    )
    ndcg = ndcg_at_k(Y_test, pair, k=5)
    psp = psprecision_at_k(Y_test, pair, inv_p, k=5)
    print(f"{name:>21}: {at_k}  nDCG@5 {ndcg:.3f}  PSP@5 {psp:.3f}")

# %%
# The label frequencies follow a power law: a handful of head labels, a long tail.
counts = np.sort(label_counts)[::-1]
fig, ax = plt.subplots(figsize=(5, 3.5))
ax.loglog(np.arange(1, counts.size + 1), np.maximum(counts, 0.5))
ax.set_xlabel("label rank")
ax.set_ylabel("training examples")
ax.set_title("Label frequencies of the generator")
plt.show()
