"""Evaluation protocols: seeded, optionally multi-label-stratified splitters.

The three protocols of the papers mlknn reproduces:

=========  ===============================  =========================================
name       what                             paper
=========  ===============================  =========================================
kfold      5 repetitions of 10-fold CV      Younes et al. (2011), DML-kNN, Tables 4-8
5x2        5 repetitions of 2-fold CV       Teng et al. (2025), MLHiKNN, Tables 3-15
holdout    10 random 80/20 train/test       the BML-kNN paper, Tables 5-10
=========  ===============================  =========================================

Every splitter yields :class:`Fold` objects (repeat, fold, sorted train and test
indices), is deterministic given ``random_state`` and, with ``stratify=True``,
uses iterative stratification (Sechidis et al. 2011, package
``iterative-stratification``) so that every label's positives are spread evenly.

:func:`encode_indices` / :func:`decode_indices` store an index set compactly
(a zlib-compressed bit mask) so that the exact folds can be recorded beside the
results.

:func:`loo_predict_proba` / :func:`loo_predict_topk` give the training set's
out-of-sample posteriors: exact leave-one-out from one fit for the count methods
(docs/loo.md), K-fold cross-fitting for the others.
"""

from ._given import GivenSplit
from ._loo import has_exact_loo, loo_predict_proba, loo_predict_topk
from ._split import (
    PROTOCOLS,
    Fold,
    RepeatedHoldout,
    RepeatedMultilabelKFold,
    decode_indices,
    encode_indices,
    make_protocol,
)

__all__ = [
    "PROTOCOLS",
    "Fold",
    "GivenSplit",
    "RepeatedHoldout",
    "RepeatedMultilabelKFold",
    "decode_indices",
    "encode_indices",
    "has_exact_loo",
    "loo_predict_proba",
    "loo_predict_topk",
    "make_protocol",
]

# For mlknn's other packages, not in __all__ (no public promise): the results database
# records each fold's indices_checksum to tell a changed split from a stored one, and the
# harness's prequential protocol splits with PrequentialSplit (its documentation is still
# short of the public API's).
from ._prequential import PrequentialSplit as PrequentialSplit
from ._split import indices_checksum as indices_checksum
