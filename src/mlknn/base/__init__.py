"""Estimator base class shared by every kNN method in mlknn.

:class:`KNNMultiLabelBase` (``_estimator.py``: validation, search, the hubness
hook, ``fit`` / ``predict*`` and their ``*_from_graph`` forms over precomputed
graphs) calls the label plumbing of ``_outputs.py`` (sparse or dense Y,
``predict``'s output format, the default top k) and is assembled with the
explanation (``_explain_api.py``), cross-fitting (``_loo.py``) and resource-guard
(``_guards.py``) mixins. This module only re-exports the public names.
"""

from ._estimator import HUBNESS_CONSTRAINT, RANDOM_STATE_CONSTRAINT, KNNMultiLabelBase, MultiLabelMixin
from ._explain_api import ExplainParts
from ._explanation import Explanation, Term
from ._loo import fit_one_wider
from ._outputs import container_kind, graph_rows, num_rows

__all__ = [
    "HUBNESS_CONSTRAINT",
    "RANDOM_STATE_CONSTRAINT",
    "ExplainParts",
    "Explanation",
    "KNNMultiLabelBase",
    "MultiLabelMixin",
    "Term",
    "container_kind",
    "fit_one_wider",
    "graph_rows",
    "num_rows",
]
