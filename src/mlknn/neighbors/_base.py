"""Backend protocol and registry.

A backend is any object with ``fit(X)`` and ``kneighbors(X=None, n_neighbors=k)``
following scikit-learn's contract: returns ``(distances, indices)``, each of shape
``(n_queries, k)``, distances ascending; ``X=None`` means leave-one-out on the
training set (each point's own index excluded, duplicates kept).
"""

from collections.abc import Callable
from typing import Any, Protocol, Self, runtime_checkable

import numpy as np

from ..utils._param_validation import (
    HasMethods,
    Integral,
    Interval,
    StrOptions,
    validate_params,
)
from ..utils._typing import MatrixLike
from ._graph import NeighborGraph


@runtime_checkable
class NeighborsIndex(Protocol):
    """What mlknn needs from a neighbour-search backend.

    Parameters
    ----------
    *args, **kwargs
        None: a protocol is a type to check against, not a class to instantiate.

    See Also
    --------
    register_backend : Make a class with these methods a named backend.
    BruteNeighbors : The default backend, a complete implementation.

    Examples
    --------
    >>> from mlknn.neighbors import BruteNeighbors, NeighborsIndex
    >>> isinstance(BruteNeighbors(), NeighborsIndex)
    True
    """

    def fit(self, X: MatrixLike) -> Self:
        """Index the training points.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_train, n_features)
            Training points.

        Returns
        -------
        self
            The fitted index, with ``n_samples_fit_``.
        """
        ...

    def kneighbors(
        self, X: MatrixLike = None, n_neighbors: int = 10, return_distance: bool = True
    ) -> Any:
        """The k nearest training points of each query, by (distance, training index).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_queries, n_features), default=None
            Queries; None: the leave-one-out graph of the training points.
        n_neighbors : int, default=10
            k (mlknn always passes it).
        return_distance : bool, default=True
            Also return the distances.

        Returns
        -------
        distances : ndarray of shape (n_queries, n_neighbors)
            Only when ``return_distance`` is True.
        indices : ndarray of shape (n_queries, n_neighbors)
            Training indices.
        """
        ...


#: The one registry of backends: name -> {"factory", "exact", "requires"}. Read by
#: :func:`get_backend` and, through :class:`RegisteredBackend`, by the estimators'
#: parameter validation (``neighbors=``), so a registered name works everywhere.
_REGISTRY: dict[str, dict[str, Any]] = {}


@validate_params(
    {
        "name": [str],
        "factory": [callable],
        "exact": ["boolean"],
        "requires": [str, None],
    },
    prefer_skip_nested_validation=True,
)
def register_backend(
    name: str, factory: Callable[..., Any], *, exact: bool, requires: str | None = None
) -> None:
    """Register a backend factory under ``name``.

    After registration every kNN estimator accepts ``neighbors=name`` (their
    ``_parameter_constraints`` read this registry), and :func:`get_backend`,
    :func:`compute_graphs` and the harness build the backend by calling
    ``factory``. Registering an existing name replaces it.

    Parameters
    ----------
    name : str
        Any name except ``"auto"`` (reserved: the fastest exact backend).
    factory : callable
        ``factory(metric=..., n_jobs=..., random_state=..., **params)`` returns an
        unfitted backend: an object with ``fit(X)`` and ``kneighbors(X=None,
        n_neighbors=k, return_distance=True)`` honouring the contract of this
        module's docstring.
    exact : bool
        Whether the backend returns the exact neighbours.
    requires : str, optional
        Importable module the backend needs; used by :func:`available_backends`.

    See Also
    --------
    available_backends : The registered names whose dependencies are importable.
    get_backend : Build a registered backend.

    Examples
    --------
    >>> from mlknn import MLkNN
    >>> from mlknn.neighbors import BruteNeighbors, register_backend
    >>> register_backend("my-brute", lambda metric="euclidean", n_jobs=None,
    ...                  random_state=None: BruteNeighbors(metric=metric), exact=True)
    >>> MLkNN(neighbors="my-brute").get_params()["neighbors"]
    'my-brute'
    """
    if name == "auto":
        raise ValueError("The 'name' parameter of register_backend must not be 'auto' (reserved).")
    _REGISTRY[name] = {"factory": factory, "exact": bool(exact), "requires": requires}


class RegisteredBackend(StrOptions):
    """Parameter constraint: ``"auto"`` or a name in the live backend registry.

    Used in the estimators' ``_parameter_constraints["neighbors"]``; unlike a fixed
    ``StrOptions`` it sees backends registered after import.

    See Also
    --------
    register_backend : Add a name to the registry.
    available_backends : The registered names whose dependencies are importable.

    Examples
    --------
    >>> from mlknn.neighbors import RegisteredBackend
    >>> constraint = RegisteredBackend()
    >>> constraint.is_satisfied_by("brute"), constraint.is_satisfied_by("no-such-backend")
    (True, False)
    """

    def __init__(self) -> None:
        super().__init__({"auto"})

    @property
    def options(self) -> set[str]:
        return {"auto", *_REGISTRY}

    @options.setter
    def options(self, value: object) -> None:  # StrOptions.__init__ assigns it; the registry is the truth
        pass


#: The constraint of the estimators' ``neighbors`` parameter.
NEIGHBORS_CONSTRAINT = [RegisteredBackend(), HasMethods(["fit", "kneighbors"])]


def available_backends() -> list[str]:
    """Names of the backends whose dependencies are importable here.

    Returns
    -------
    list of str

    See Also
    --------
    register_backend : Add a backend to the registry.
    get_backend : Build one of these backends.

    Examples
    --------
    >>> from mlknn.neighbors import available_backends
    >>> {"brute", "precomputed"} <= set(available_backends())
    True
    """
    import importlib.util

    names = []
    for name, spec in _REGISTRY.items():
        req = spec["requires"]
        if req is None or importlib.util.find_spec(req) is not None:
            names.append(name)
    return names


def get_backend(
    neighbors: Any = "brute",
    *,
    metric: str = "euclidean",
    n_jobs: int | None = None,
    random_state: Any = None,
    **params: Any,
) -> Any:
    """Return an unfitted backend for a name or a user object.

    Parameters
    ----------
    neighbors : str or object with ``fit`` and ``kneighbors``
        A registered name (see :func:`available_backends`) or an object, which is
        cloned (if it is a scikit-learn estimator) so the user's object is never
        mutated.
    metric : str
        ``"euclidean"``, ``"sqeuclidean"`` (the same neighbours) or ``"cosine"`` (``1 -
        cos(a, b)``).
    n_jobs : int, optional
        Threads of the search. None: as many as the BLAS pool holds (the rule of every
        backend, usually all cores); -1: all cores.
    random_state : int, optional
        Seed of the randomised parts of the search, where the backend has any.
    **params
        Extra backend parameters.

    Returns
    -------
    backend

    See Also
    --------
    available_backends : The names accepted here.
    register_backend : Add a name.

    Examples
    --------
    >>> from mlknn.neighbors import get_backend
    >>> type(get_backend("brute", metric="cosine")).__name__
    'BruteNeighbors'
    """
    if isinstance(neighbors, str):
        if neighbors == "auto":
            neighbors = _auto_backend()
        if neighbors not in _REGISTRY:
            raise ValueError(
                f"The 'neighbors' parameter must be one of {sorted(_REGISTRY) + ['auto']} "
                f"or an object with fit and kneighbors methods. Got {neighbors!r} instead."
            )
        spec = _REGISTRY[neighbors]
        if spec["requires"] is not None:
            from ..utils import check_optional_dependency

            check_optional_dependency(spec["requires"], f"neighbors={neighbors!r}")
        return spec["factory"](metric=metric, n_jobs=n_jobs, random_state=random_state, **params)
    if not (hasattr(neighbors, "fit") and hasattr(neighbors, "kneighbors")):
        raise ValueError(
            "The 'neighbors' parameter must be a backend name or an object with fit and "
            f"kneighbors methods. Got {type(neighbors).__name__} instead."
        )
    try:
        from sklearn.base import clone

        return clone(neighbors)
    except TypeError:
        import copy

        return copy.deepcopy(neighbors)


def _auto_backend() -> str:
    # Exact search only: "auto" must never change results. Measured (benchmarks/,
    # docs/performance.md): mlknn's brute kernel is as fast as or faster than faiss's
    # exact flat index plus exact re-ranking at n = 5k-50k, d = 120 (faiss / brute
    # = 1.0-1.7), and brute also takes sparse input, which faiss refuses. So "auto"
    # is brute; list a faster exact backend first here if one appears.
    for name in ("brute",):
        if name in available_backends():
            return name
    return "brute"


def is_exact(neighbors: Any) -> bool:
    """Whether the backend named (or given) returns exact neighbours.

    Parameters
    ----------
    neighbors : str or object
        A registered name (``"auto"`` is exact) or a backend object, exact when
        its ``exact`` attribute is true.

    Returns
    -------
    bool
        True if the backend returns the exact k nearest neighbours.

    See Also
    --------
    register_backend : Declares each name's exactness.
    estimate_recall : Measures how far an approximate backend is from exact.

    Examples
    --------
    >>> from mlknn.neighbors import is_exact
    >>> is_exact("brute"), is_exact("hnswlib")
    (True, False)
    """
    if isinstance(neighbors, str):
        if neighbors == "auto":
            return True
        return bool(_REGISTRY.get(neighbors, {}).get("exact", False))
    return bool(getattr(neighbors, "exact", False))


@validate_params(
    {
        "index": [HasMethods(["kneighbors"])],
        "X": ["array-like", "sparse matrix", None],
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def build_graph(index: Any, X: MatrixLike = None, n_neighbors: int = 10) -> NeighborGraph:
    """Query a fitted backend and wrap the answer as a :class:`NeighborGraph`.

    Parameters
    ----------
    index : fitted backend
        Anything with ``kneighbors(X, n_neighbors, return_distance=True)``.
    X : array-like or sparse matrix, optional
        Queries; None for the leave-one-out graph of the training set.
    n_neighbors : int
        k, the number of neighbours.

    Returns
    -------
    NeighborGraph

    See Also
    --------
    compute_graphs : Fit one index and build the training and test graphs.
    NeighborGraph : The returned container.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0], [3.0, 3.0], [1.0, 1.0]])
    >>> from mlknn.neighbors import BruteNeighbors, build_graph
    >>> graph = build_graph(BruteNeighbors().fit(X), n_neighbors=2)  # leave-one-out
    >>> graph.indices.tolist()
    [[1, 4], [0, 4], [4, 0], [4, 2], [1, 0]]
    """
    return unchecked_graph(index, X, n_neighbors)


def unchecked_graph(index: Any, X: MatrixLike, n_neighbors: int) -> NeighborGraph:
    """The neighbour graph of ``X``, as :func:`build_graph`, without its argument checks.

    For callers that have checked them (the estimators: a fitted backend, validated
    X, a checked width): the checks cost a visible share of a small problem's fit +
    predict. Anything unchecked here fails inside the backend, not with a message
    naming the argument: outside mlknn's estimators, call :func:`build_graph`.

    Parameters
    ----------
    index : fitted neighbour backend
        Anything with ``kneighbors(X, n_neighbors, return_distance=True)``.
    X : {array-like, sparse matrix} of shape (n_queries, n_features) or None
        The queries, already validated; None: the leave-one-out graph.
    n_neighbors : int
        Neighbours per row, already checked against the index.

    Returns
    -------
    NeighborGraph
        Indices (intp) and distances (float64), C-contiguous.

    See Also
    --------
    build_graph : The same graph, arguments checked.

    Examples
    --------
    >>> import numpy as np
    >>> from mlknn.neighbors import BruteNeighbors, unchecked_graph
    >>> X = np.array([[0.0], [1.0], [3.0]])
    >>> unchecked_graph(BruteNeighbors().fit(X), None, 1).indices.ravel().tolist()
    [1, 0, 1]
    """
    dist, ind = index.kneighbors(X, n_neighbors=n_neighbors, return_distance=True)
    return NeighborGraph(
        np.ascontiguousarray(ind, dtype=np.intp),
        np.ascontiguousarray(dist, dtype=np.float64),
        loo=X is None,
    )
