"""
ML-kNN in five lines
====================

Fit ML-kNN (Zhang and Zhou, 2007) on the simulated 2-D data of Younes et al. (2011), predict
label sets and scores, and compute the literature's metrics.
"""

# %%
# The data: 1,019 points from seven Gaussians, each one label set over three labels.
import matplotlib.pyplot as plt
from sklearn.model_selection import train_test_split

from mlknn import MLkNN
from mlknn.datasets import make_simulated_2d
from mlknn.metrics import evaluate

data = make_simulated_2d(random_state=0)
X_train, X_test, Y_train, Y_test = train_test_split(
    data.X, data.Y, test_size=0.5, random_state=0
)

# %%
# Fit, predict, evaluate. ``predict`` returns an (n, q) 0/1 array and ``predict_proba``
# one (n, q) array of posteriors.
clf = MLkNN(n_neighbors=8).fit(X_train, Y_train)
scores = evaluate(Y_test, clf.predict(X_test), clf.predict_proba(X_test))
for name in ("hamming_loss", "one_error", "average_precision", "macro_f1", "macro_auc"):
    print(f"{name:>18}: {scores[name]:.4f}")

# %%
# The posterior of the first label over the plane.
fig, ax = plt.subplots(figsize=(5, 4))
points = ax.scatter(
    X_test[:, 0], X_test[:, 1], c=clf.predict_proba(X_test)[:, 0], s=8, cmap="viridis"
)
fig.colorbar(points, ax=ax, label="P(label 1 | neighbourhood)")
ax.set_xlabel("x1")
ax.set_ylabel("x2")
ax.set_title("ML-kNN posterior of label 1")
plt.show()
