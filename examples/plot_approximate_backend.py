"""
An approximate neighbour backend and its measured recall
========================================================

Every kNN estimator takes ``neighbors=``. An approximate backend trades exactness for speed;
``neighbor_recall()`` says how many of the exact neighbours it found, so the trade is
measured rather than assumed.
"""

# %%
import numpy as np

from mlknn import MLkNN
from mlknn.datasets import make_multilabel
from mlknn.metrics import evaluate
from mlknn.neighbors import available_backends

data = make_multilabel(n_samples=3000, n_features=32, n_labels=10, random_state=0)
X, Y = data.X, data.Y
X = X.astype(np.float32)
X_train, X_test, Y_train, Y_test = X[:2000], X[2000:], Y[:2000], Y[2000:]
print("installed backends:", ", ".join(available_backends()))

# %%
# The exact search is the reference; ``faiss-hnsw`` (or ``hnswlib``) is approximate.
approximate = next((b for b in ("faiss-hnsw", "hnswlib", "pynndescent") if b in available_backends()), None)
for backend in ["brute"] + ([approximate] if approximate else []):
    clf = MLkNN(n_neighbors=10, neighbors=backend).fit(X_train, Y_train)
    metrics = evaluate(Y_test, clf.predict(X_test), clf.predict_proba(X_test))
    recall = clf.neighbor_recall(X_test, n_samples=500, random_state=0)
    print(f"{backend:>11}: recall@10 = {recall:.3f}, macro AUC = {metrics['macro_auc']:.4f}")
