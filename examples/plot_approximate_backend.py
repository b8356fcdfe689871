"""
An approximate neighbour backend and its measured recall
========================================================

Every kNN estimator takes ``neighbors=``. An approximate backend trades exactness for
speed; ``neighbor_recall()`` says how many of the exact neighbours it found, so the trade
is measured rather than assumed.
"""

# sphinx_gallery_thumbnail_number = 1

# %%
import matplotlib.pyplot as plt
import numpy as np

from mlknn import MLkNN
from mlknn.datasets import make_multilabel
from mlknn.metrics import evaluate
from mlknn.neighbors import available_backends

data = make_multilabel(n_samples=3000, n_features=32, n_labels=10, random_state=0)
X, Y = data.X.astype(np.float32), data.Y
X_train, X_test, Y_train, Y_test = X[:2000], X[2000:], Y[:2000], Y[2000:]
print("installed backends:")
for name in available_backends():
    print("  " + name)

# %%
# The exact search is the reference; ``faiss-hnsw`` (or ``hnswlib``, ``pynndescent``) is
# approximate.
candidates = ("faiss-hnsw", "hnswlib", "pynndescent")
approximate = next((b for b in candidates if b in available_backends()), None)
backends = ["brute"] + ([approximate] if approximate else [])
recalls, aucs = [], []
for backend in backends:
    clf = MLkNN(n_neighbors=10, neighbors=backend).fit(X_train, Y_train)
    metrics = evaluate(Y_test, clf.predict(X_test), clf.predict_proba(X_test))
    recalls.append(clf.neighbor_recall(X_test, n_samples=500, random_state=0))
    aucs.append(metrics["macro_auc"])
    print(f"{backend:>11}: recall@10 = {recalls[-1]:.3f}, macro AUC = {aucs[-1]:.4f}")

# %%
# Recall of the neighbours and the accuracy that follows, side by side.
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(7, 3), constrained_layout=True)
ax1.bar(backends, recalls, color="tab:blue")
ax1.set_ylim(0, 1.05)
ax1.set_title("recall@10 of the neighbours")
ax2.bar(backends, aucs, color="tab:orange")
ax2.set_ylim(min(aucs) - 0.05, max(aucs) + 0.02)
ax2.set_title("macro AUC")
plt.show()
