"""
Decisions: tuned thresholds, calibrated posteriors and conformal label sets
===========================================================================

ML-kNN's default rule (posterior > 0.5) predicts no label at all for some instances and is
not tuned to any measure. This example, on the emotions dataset's fixed split (needs
$MLKNN_DATA), chooses thresholds on the training part's leave-one-out posteriors, checks how
well calibrated the posteriors are, builds label sets with a coverage guarantee, and shows
the neighbours that voted for one instance's labels.
"""

# %%
# The data, min-max scaled on the training part.
import matplotlib.pyplot as plt
import numpy as np

from mlknn import MLkNN
from mlknn.datasets import load
from mlknn.decision import CalibratedProba, ConformalLabelSets, TunedThresholds
from mlknn.metrics import expected_calibration_error, macro_f1, micro_f1
from mlknn.plots import ReliabilityDisplay
from mlknn.preprocessing import FeatureScaler

train, test = load("emotions", split="train"), load("emotions", split="test")
scaler = FeatureScaler("minmax").fit(train.X)
X_train, X_test = scaler.transform(train.X), scaler.transform(test.X)
Y_train, Y_test = train.Y, test.Y

# %%
# Tuned thresholds. Every rule is chosen on the exact leave-one-out posteriors of the
# training set (``cv="loo"``), never on the test part.
rules = {
    "0.5 (predict)": TunedThresholds(
        MLkNN(n_neighbors=10), strategy="fixed", threshold=0.5
    ),
    "per-label F1": TunedThresholds(
        MLkNN(n_neighbors=10), strategy="per-label", scoring="f1"
    ),
    "global micro-F1": TunedThresholds(
        MLkNN(n_neighbors=10), strategy="global", scoring="micro_f1"
    ),
    "rcut example F1": TunedThresholds(
        MLkNN(n_neighbors=10), strategy="rcut", scoring="f1"
    ),
    "0.5, min 1 label": TunedThresholds(
        MLkNN(n_neighbors=10), strategy="fixed", min_labels=1
    ),
}
for name, rule in rules.items():
    pred = rule.fit(X_train, Y_train).predict(X_test)
    print(
        f"{name:>17}: macro-F1 {macro_f1(Y_test, pred):.3f}"
        f"  micro-F1 {micro_f1(Y_test, pred):.3f}"
        f"  empty sets {np.mean(pred.sum(axis=1) == 0):5.1%}"
    )
per_label = rules["per-label F1"]
print("per-label thresholds:")
for label_name, threshold in zip(train.label_names, per_label.thresholds_):
    print(f"  {label_name:>22} {threshold:.3f}")

# %%
# Calibration: ML-kNN's posteriors against the observed frequencies on the test part,
# before and after an isotonic map fitted on the leave-one-out posteriors.
calibrated = CalibratedProba(MLkNN(n_neighbors=10), method="isotonic").fit(
    X_train, Y_train
)
raw_test = calibrated.estimator_.predict_proba(X_test)
cal_test = calibrated.predict_proba(X_test)
print(
    f"ECE (macro) raw {expected_calibration_error(Y_test, raw_test):.3f}, "
    f"isotonic {expected_calibration_error(Y_test, cal_test):.3f}"
)

fig, axes = plt.subplots(1, 3, figsize=(13, 4))
ReliabilityDisplay.from_predictions(
    Y_test,
    raw_test,
    labels=[0, 3],
    label_names=train.label_names,
    title="ML-kNN posteriors (test)",
).plot(ax=axes[0])
ReliabilityDisplay.from_predictions(
    Y_test,
    cal_test,
    labels=[0, 3],
    label_names=train.label_names,
    title="after isotonic calibration",
).plot(ax=axes[1])

# %%
# Conformal label sets: with probability at least 90 % the whole true label set is
# inside the predicted set (split conformal, 30 % of the training part calibrates).
sets = ConformalLabelSets(
    MLkNN(n_neighbors=10), alpha=0.1, guarantee="set", random_state=0
).fit(X_train, Y_train)
S = sets.predict(X_test)
covered = np.all((S == 1) | (Y_test == 0), axis=1)
print(
    f"set guarantee: coverage {covered.mean():.3f} (>= 0.9 expected),"
    f" mean set size {S.sum(axis=1).mean():.2f}"
)
fnr_sets = ConformalLabelSets(
    MLkNN(n_neighbors=10), alpha=0.1, guarantee="fnr", random_state=0
).fit(X_train, Y_train)
F = fnr_sets.predict(X_test)
fnr = ((Y_test == 1) & (F == 0)).sum(axis=1) / np.maximum(Y_test.sum(axis=1), 1)
print(
    f"fnr guarantee: false-negative rate {fnr.mean():.3f} (<= 0.1 expected),"
    f" mean set size {F.sum(axis=1).mean():.2f}"
)

i = 0
proba = sets.predict_proba(X_test[i : i + 1])[0]
print(f"instance {i}: threshold {sets.thresholds_[0]:.3f}")
for j in np.argsort(-proba):
    mark = "in set" if S[i, j] else ""
    truth = "relevant" if Y_test[i, j] else ""
    print(f"  {train.label_names[j]:>22}  p = {proba[j]:.3f}  {mark:>6}  {truth}")

# %%
# Why those posteriors: the explanation of the same instance, from the fitted ML-kNN inside
# the conformal sets (its neighbours, their labels, and each label's neighbour count with
# the prior and likelihoods that turn it into the posterior). The neighbour indices are rows
# of the part the conformal model was fitted on.
explanation = sets.estimator_.explain(X_test[i : i + 1])
print(explanation.summary(0, top=3, label_names=train.label_names))

# %%
# The per-label thresholds against the 0.5 rule.
axes[2].barh(
    train.label_names, per_label.thresholds_, color="C0", label="per-label (F1)"
)
axes[2].axvline(0.5, color="k", ls="--", lw=1, label="0.5 rule")
axes[2].axvline(
    rules["global micro-F1"].thresholds_[0], color="C1", lw=1, label="global (micro-F1)"
)
axes[2].set_xlabel("threshold on the posterior")
axes[2].set_title("tuned thresholds")
axes[2].legend(fontsize=7)
fig.tight_layout()
plt.show()
