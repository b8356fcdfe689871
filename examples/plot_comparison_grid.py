"""
A comparison grid and its report
================================

The harness runs every (dataset, algorithm, k) cell over the folds of a protocol into a
resumable SQLite database (interrupt it and run it again: finished cells are kept), then writes
a report with the papers' tables, ranks, statistical tests and figures. Here: three kNN
methods and two values of k on emotions with 2 x 2-fold cross-validation, features min-max
scaled inside each fold.
"""

# %%
import tempfile
from pathlib import Path

from mlknn.experiments import ExperimentConfig, PreprocessingConfig, ProtocolConfig, ResultsDB, run_experiment
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
print(summary)

# %%
# The mean macro AUC of each configuration over the folds.
from collections import defaultdict
from statistics import mean

db = ResultsDB(workdir / "grid.db")
auc = defaultdict(list)
for row in db.rows():
    if row["metric"] == "macro_auc":
        auc[(row["algorithm"], row["params"])].append(row["value"])
db.close()
for (algorithm, params), values in sorted(auc.items()):
    print(f"{algorithm:>8} {params}: macro AUC {mean(values):.4f} over {len(values)} folds")

# %%
# The report: ``report.md`` and one self-contained ``report.html`` with the figures.
written = build_report(workdir / "grid.db", workdir / "report", dataset_figures=False)
print("wrote", Path(written["html"]).name, "and", Path(written["markdown"]).name)
