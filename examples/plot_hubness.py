"""
Hubness: diagnose it, then reduce it
====================================

In high dimensions a few points ("hubs") appear in very many neighbour lists and most points
in few. Teng et al. (2025) measure it with the skewness S_k of the k-occurrence distribution
and the hub/antihub occurrence H_occ / A_occ, and reduce it with local scaling (LS), mutual
proximity (MP) or DisSimLocal (DSL). This example diagnoses scene (294 features) and compares
ML-kNN and BR-kNN-a with and without a reduction.
"""

# %%
# Diagnosis on the training split of scene (needs $MLKNN_DATA).
import matplotlib.pyplot as plt

from mlknn import BRkNNa, MLkNN
from mlknn.datasets import load
from mlknn.hubness import hubness_stats
from mlknn.metrics import evaluate
from mlknn.plots import KOccurrenceDisplay

train, test = load("scene", split="train"), load("scene", split="test")
for reduction in (None, "ls", "mp", "dsl"):
    stats = hubness_stats(train.X, n_neighbors=10, hubness=reduction)
    print(
        f"{str(reduction):>5}: S_k = {stats.skewness:6.3f}"
        f"  H_occ = {stats.hub_occurrence:.3f}  A_occ = {stats.antihub_occurrence:.3f}"
    )

# %%
# The k-occurrence distribution before reduction: a long right tail is the hubs.
KOccurrenceDisplay.from_data(train.X, n_neighbors=10)
plt.show()

# %%
# Classification with and without a reduction (same k, fixed MULAN split).
for cls in (MLkNN, BRkNNa):
    for reduction in (None, "ls", "dsl"):
        clf = cls(n_neighbors=10, hubness=reduction).fit(train.X, train.Y)
        m = evaluate(test.Y, clf.predict(test.X), clf.predict_proba(test.X))
        print(
            f"{cls.__name__:>6} hubness={str(reduction):>4}: "
            f"macro AUC {m['macro_auc']:.4f}, Hamming loss {m['hamming_loss']:.4f}"
        )
