"""Reports from a results database: Markdown + one self-contained HTML file.

:func:`build_report` reads a :class:`mlknn.experiments.ResultsDB` and writes

* ``report.md`` (figures as PNG files under ``figures/``) and
* ``report.html`` (the same content, figures embedded as base64: one file to
  send around),

shaped like a paper's results section, for every experiment group (same
protocol and neighbour search):

* the setup in words (protocol, search, the preprocessing of every dataset);
* one summary table (configurations x metrics, mean ± sd, best in bold,
  average rank);
* per metric, the table of the MLHiKNN paper (rows datasets, ``mean(rank) ±
  sd``, average rank and win/tie/loss rows);
* the rank tests across datasets (Friedman / Iman-Davenport, Nemenyi CD
  diagram, pairwise Wilcoxon with Bonferroni), only with enough datasets
  (:data:`~mlknn.report._build.MIN_DATASETS_FOR_RANK_TESTS`, after Demšar 2006),
  else a sentence saying how many are needed and why;
* per dataset, the table of Younes et al. (2011) transposed (rows metrics),
  with the fold-wise paired t-test and a test designed for cross-validation
  (Dietterich's 5x2cv t-test for 5 x 2 CV, else the corrected resampled
  t-test), each marked;
* run times; the warnings recorded with the cells;
* the figures that have data: metric versus k, metric versus radius for
  BML-kNN, per dataset the k-occurrence distribution and the label
  co-occurrence matrix.

Tables are split by columns so that the HTML fits a 1280-px window; file names
of figures are safe for any dataset name (a path, spaces, unicode), and tables
show a path's file stem.
"""

from ._build import MIN_DATASETS_FOR_RANK_TESTS, build_report

__all__ = ["MIN_DATASETS_FOR_RANK_TESTS", "build_report"]
