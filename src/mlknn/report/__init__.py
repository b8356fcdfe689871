"""Reports from a results database: Markdown + one self-contained HTML file.

:func:`build_report` reads a :class:`mlknn.experiments.ResultsDB` and writes

* ``report.md`` (figures as PNG files under ``figures/``) and
* ``report.html`` (the same content, figures embedded as base64: one file to
  send around),

with, for every experiment group (same protocol and neighbour search):

* per metric, the table of seed 001 (rows datasets, columns algorithm
  configurations, ``mean(rank) ± std`` with a bullet on the best, an average
  rank row and a win/tie/loss row from pairwise Wilcoxon tests over folds),
  the Friedman / Iman-Davenport test, the Nemenyi critical difference with its
  diagram, and the pairwise one-sided Wilcoxon p-values with Bonferroni
  correction;
* per dataset, the table of seed 000 (rows algorithms, columns metrics,
  ``mean ± std`` with bullet / circle markers from paired t-tests against the
  best, an average rank column);
* run times (fit, predict, shared neighbour search);
* metric versus k (seed 001 Figures 2-7) and metric versus radius for
  BML-kNN (seed 002 Figures 2-5), when the database holds such grids;
* per dataset, the k-occurrence distribution (seed 001 Figure 1) and the
  label co-occurrence matrix (seed 000 Figure 1), when the data can be loaded.
"""

from ._build import build_report

__all__ = ["build_report"]
