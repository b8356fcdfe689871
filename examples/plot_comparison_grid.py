"""
A comparison grid and its report
================================

The harness runs every (dataset, algorithm, k) cell over the folds of a protocol into a
resumable SQLite database (interrupt it and run it again: finished cells are kept), then
writes a report with the papers' tables, ranks, statistical tests and figures. Here: three
kNN methods and two values of k on emotions with 2 x 2-fold cross-validation, features
min-max scaled inside each fold.
"""

# sphinx_gallery_thumbnail_number = 1

# %%
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt

from mlknn.experiments import (
    ExperimentConfig,
    PreprocessingConfig,
    ProtocolConfig,
    ResultsDB,
    run_experiment,
)
from mlknn.report import build_report

config = ExperimentConfig(
    datasets=("emotions",),
    algorithms=("mlknn", "dmlknn", "brknna"),
    k=(10, 20),
    protocol=ProtocolConfig(name="kfold", n_splits=2, n_repeats=2, seed=0),
    preprocessing=PreprocessingConfig(scaling="minmax"),
)
workdir = Path(tempfile.mkdtemp())
summary = run_experiment(config, workdir / "grid.db")
print(", ".join(f"{key} {value}" for key, value in summary.items()))

# %%
# One row per cell (a column per parameter and measure): the mean and sd of macro AUC of
# each configuration over the folds.
with ResultsDB(workdir / "grid.db") as db:
    frame = db.to_frame()
auc = frame.groupby(["algorithm", "n_neighbors"])["macro_auc"].agg(["mean", "std"])
print(auc.round(4))

fig, ax = plt.subplots(figsize=(6, 3), constrained_layout=True)
for algorithm, part in auc.groupby(level="algorithm"):
    ks = part.index.get_level_values("n_neighbors")
    ax.errorbar(
        ks, part["mean"], yerr=part["std"], marker="o", capsize=3, label=algorithm
    )
ax.set_xlabel("k")
ax.set_ylabel("macro AUC (± sd over folds)")
ax.set_title("emotions, 2 x 2-fold cross-validation")
ax.legend()
plt.show()

# %%
# The report: ``report.md`` and one self-contained ``report.html`` with the figures.
written = build_report(workdir / "grid.db", workdir / "report", dataset_figures=False)
print("wrote", Path(written["html"]).name, "and", Path(written["markdown"]).name)
