"""Preprocessing fitted on a training part and applied to its test part.

Three steps, each a parameter of an experiment (see :mod:`mlknn.experiments`):

* :class:`RareLabelFilter` - remove labels with fewer than ``min_count``
  positive instances (Teng et al. 2025 remove labels with fewer than 20);
* :class:`MultiLabelChi2Selector` - chi-square feature selection keeping a
  fraction (or a number) of the features (Younes et al. 2011 keep 20% for medical and
  enron). Default multi-label rule: a chi-square statistic per label (the label
  as a binary class, exactly ``sklearn.feature_selection.chi2``), combined by
  the **maximum over labels**, so a feature is kept when it is strongly
  associated with at least one label; ``rule=`` selects Yang and Pedersen's
  presence statistic (:func:`presence_chi2`) or another combination;
* :class:`FeatureScaler` - min-max or z-score scaling; sparse input stays
  sparse (max-abs scaling instead of min-max, z-score without centring).

:class:`FoldPreprocessor` chains them in that order (labels, features,
scaling) and is what the experiment harness fits on each training fold.

A sparse (CSR) label matrix stays sparse through all of them: label counts are
taken from its column indices (:func:`label_counts`, :func:`labelled_rows`),
and the chi-square scores of a sparse Y are computed a batch of labels at a
time (never a (q, d) or (n, q) array).
"""

from ._chi2 import CHI2_RULES, MultiLabelChi2Selector, multilabel_chi2, presence_chi2
from ._labels import label_counts, labelled_rows
from ._preprocess import FeatureScaler, FoldPreprocessor, RareLabelFilter

__all__ = [
    "CHI2_RULES",
    "FeatureScaler",
    "FoldPreprocessor",
    "MultiLabelChi2Selector",
    "RareLabelFilter",
    "label_counts",
    "labelled_rows",
    "multilabel_chi2",
    "presence_chi2",
]
