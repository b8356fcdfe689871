"""Parameter descriptions shared by many docstrings, written once.

A docstring names a shared description by a placeholder on a line of its own,
``{Y_true}``, at the indentation of a parameter entry; :func:`fill_doc` (a
decorator, innermost, so that wrappers copy the filled text) puts the entry there,
indented to match. Only the names of :data:`SHARED_PARAMETERS` are replaced, so
literal braces (``{"ignore", "negative"}``) are left alone. The idea is
imbalanced-learn's ``Substitution``; the texts are mlknn's.
"""

import re
from typing import TypeVar

T = TypeVar("T")

#: Parameter entries (name line, then the description) by placeholder name.
SHARED_PARAMETERS = {
    "Y_true": (
        "Y_true : array-like or sparse matrix of shape (n_samples, n_labels)\n"
        "    Ground-truth 0/1 indicator matrix."
    ),
    "Y_pred": (
        "Y_pred : array-like or sparse matrix of shape (n_samples, n_labels)\n"
        "    Predicted 0/1 indicator matrix."
    ),
    "Y_score": (
        "Y_score : array-like or sparse matrix of shape (n_samples, n_labels)\n"
        "    Real-valued scores, higher meaning more relevant. Must be finite."
    ),
    "neighbors": (
        'neighbors : str or object, default="brute"\n'
        "    Neighbour-search backend: a name of :func:`mlknn.neighbors.available_backends`\n"
        '    (``"brute"``, exact, the default; ``"faiss"``, ``"hnswlib"``, ``"pynndescent"``...)\n'
        "    or an object with ``fit`` and ``kneighbors``."
    ),
    "metric": (
        'metric : str, default="euclidean"\n'
        '    Distance of the neighbour search: ``"euclidean"``, ``"sqeuclidean"`` (the same\n'
        '    neighbours) or ``"cosine"`` (``1 - cos(a, b)``); every backend takes all three.'
    ),
    "n_jobs": (
        "n_jobs : int, optional\n"
        "    Threads of the neighbour search (chunks of queries in parallel). None: as many\n"
        "    as the BLAS pool holds (respects ``threadpoolctl`` limits); -1: all cores. The\n"
        "    counting and the decision rule are vectorised and take no threads of their own."
    ),
    # The entry's first sentence only: the docstring adds, on the lines after the
    # placeholder, what the estimator seeds with it.
    "random_state": (
        "random_state : int, RandomState instance or None, default=None\n"
        "    An int makes the results reproducible across calls."
    ),
    "n_neighbors": (
        "n_neighbors : int, default=10\n"
        "    k, the number of neighbours."
    ),
    "max_samples": (
        "max_samples : int or None, default=None\n"
        "    :meth:`partial_fit` only: keep the most recent ``max_samples`` rows (a\n"
        "    sliding window; the model then equals ``fit`` on exactly those rows).\n"
        "    None keeps every row. ``fit`` ignores it."
    ),
    "max_memory": (
        "max_memory : int, float, str or None, default=None\n"
        "    Memory limit of this estimator's resource guards: a fit or prediction\n"
        "    estimated to need more is refused with :class:`~mlknn.InsufficientMemoryError`\n"
        "    before it allocates. Bytes (``8e9``), a size (``\"16GB\"``, ``\"512MiB\"``) or\n"
        "    ``\"off\"`` (never refuse). None follows the global setting,\n"
        "    ``mlknn.config_context(max_memory=...)`` (by default half the memory\n"
        "    available at the call). See docs/scale.md."
    ),
    "X_query": (
        "X : {array-like, sparse matrix} of shape (n_queries, n_features)\n"
        "    The query instances."
    ),
    "X_train": (
        "X : {array-like, sparse matrix} of shape (n_samples, n_features)\n"
        "    Training features."
    ),
    "Y_train": (
        "Y : {array-like, sparse matrix} of shape (n_samples, n_labels)\n"
        "    Training labels (0/1)."
    ),
    "query_graph": (
        "graph : NeighborGraph\n"
        "    Neighbours of the queries among the training points (a leave-one-out\n"
        "    graph for the training set itself), at least :meth:`search_width` wide;\n"
        "    wider graphs are cut to that width."
    ),
    "X_graph_features": (
        "X : {array-like, sparse matrix} of shape (n_queries, n_features), default=None\n"
        "    The queries' features, for estimators that use them\n"
        '    (``knn_capabilities()["uses_features"]``); else ignored.'
    ),
    # The k-neighbour estimators draw nothing themselves; only a randomised search does.
    "random_state_backend": (
        "random_state : int, RandomState instance or None, default=None\n"
        '    Seeds a randomised neighbour backend (``neighbors="pynndescent"``).'
    ),
}

_PLACEHOLDER = re.compile(r"^(?P<indent>[ \t]*)\{(?P<name>" + "|".join(map(re.escape, SHARED_PARAMETERS)) + r")\}[ \t]*$",
                          re.MULTILINE)


def fill_doc(obj: T) -> T:
    """Replace the shared-parameter placeholders of ``obj``'s docstring (a decorator).

    Parameters
    ----------
    obj : function or class
        Its ``__doc__`` holds placeholders (a shared name in braces), each alone on a line.

    Returns
    -------
    function or class
        ``obj`` itself, its docstring filled.

    Raises
    ------
    KeyError
        Never for a known name; unknown names are not placeholders and stay as written.
    """

    def entry(match: re.Match[str]) -> str:
        indent = match.group("indent")
        return "\n".join(indent + line for line in SHARED_PARAMETERS[match.group("name")].split("\n"))

    if obj.__doc__:
        obj.__doc__ = _PLACEHOLDER.sub(entry, obj.__doc__)
    return obj
