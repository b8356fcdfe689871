"""A river client: mlknn's estimators as river multi-label classifiers.

river (https://riverml.xyz) learns from one instance at a time, as dicts. This
module adapts an mlknn estimator to river's multi-label interface
(``learn_one``, ``predict_one``, ``predict_proba_one``), so that river's
``evaluate.progressive_val_score``, pipelines and metrics drive it. Needs the
``river`` extra (``pip install 'mlknn[river]'``).

The model is updated lazily: rows given to ``learn_one`` are kept until the next
prediction after ``batch`` of them have arrived, then added with
``partial_fit`` (the count estimators: exactly the model ``fit`` gives on every
row seen, docs/streams.md) or, for an estimator without ``partial_fit``, by a
refit on every row seen. Until ``n_initial`` rows have arrived (a kNN model
needs more rows than neighbours) the predictions are empty.
"""

from ._client import RiverMultiLabel

__all__ = ["RiverMultiLabel"]
