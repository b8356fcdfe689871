"""Hubness measures: k-occurrence, its skewness S_k, hub and antihub occurrence.

Teng et al. (2025, the MLHiKNN paper), section 1 and section 4.1.1:

* k-occurrence ``O_k(x)``: the number of times x appears among the k nearest
  neighbours of all *other* points (the size of x's k reverse neighbourhood);
* skewness ``S_k = E[(O_k - mu)^3] / sigma^3`` (eq 1), the standardised third
  central moment with population moments (``scipy.stats.skew`` with its default
  ``bias=True``);
* hub occurrence ``H_occ^k = sum_{x in D_hub} O_k(x) / (n k)`` (eq 26), the share
  of the n k neighbour slots taken by hubs, a hub being a point with
  ``O_k(x) > 2 k``;
* antihub occurrence ``A_occ^k = |{x : O_k(x) = 0}| / n`` (eq 27).

These are the plain measures of Table 1: the points are *not* appended to their
own neighbourhoods here (MLHiKNN does that, see :mod:`mlknn.algorithms._mlhiknn`).
"""

from dataclasses import asdict, dataclass
from numbers import Integral
from typing import Any

import numpy as np

from ..neighbors import NEIGHBORS_CONSTRAINT, NeighborGraph, build_graph, get_backend
from ..utils._param_validation import validate_params
from ..utils._typing import ArrayLike, MatrixLike, NDArray
from ._constraints import HUBNESS_CONSTRAINT, NonBoolInterval

__all__ = ["HubnessStats", "hubness_stats", "k_occurrence", "skewness", "hub_occurrence", "antihub_occurrence"]


@validate_params(
    # graph: checked below (a TypeError whose wording the tests pin).
    {"graph": "no_validation", "n_train": [NonBoolInterval(Integral, 0, None, closed="left"), None]},
    prefer_skip_nested_validation=True,
)
def k_occurrence(graph: NeighborGraph, n_train: int | None = None) -> NDArray[np.int64]:
    """How often each training point appears in the neighbour lists of a graph.

    Parameters
    ----------
    graph : NeighborGraph
        Rows are points, columns their neighbours (training indices).
    n_train : int, optional
        Number of training points (length of the result). Defaults to
        ``graph.n_points`` for a leave-one-out graph; required otherwise.

    Returns
    -------
    ndarray of shape (n_train,), int64
        ``O_k(x)`` for every training point x, with k the graph's width.

    See Also
    --------
    skewness : S_k of this distribution.
    hubness_stats : The hubness measures of a dataset.

    References
    ----------
    "A Hubness Information-Based k-Nearest Neighbor Approach for Multi-Label
    Learning", Mathematics 2025, eq 1 and Figure 1 (the k-occurrence O_k).

    M. Radovanovic, A. Nanopoulos and M. Ivanovic, "Hubs in Space: Popular
    Nearest Neighbors in High-Dimensional Data", Journal of Machine Learning
    Research 11, 2010.

    Examples
    --------
    >>> import numpy as np
    >>> from mlknn.neighbors import NeighborGraph
    >>> g = NeighborGraph(np.array([[1], [0], [1]]), np.ones((3, 1)), loo=True)
    >>> k_occurrence(g).tolist()
    [1, 2, 0]
    """
    if not isinstance(graph, NeighborGraph):
        raise TypeError(f"The 'graph' parameter must be a NeighborGraph. Got {type(graph).__name__} instead.")
    if n_train is None:
        if not graph.loo:
            raise ValueError(
                "The 'n_train' parameter is required for a query graph (loo=False): the number of "
                "training points cannot be inferred from the neighbour lists. Got None instead."
            )
        n_train = graph.n_points
    n_train = int(n_train)
    ind = graph.indices.ravel()
    if ind.size and (ind.min() < 0 or ind.max() >= n_train):
        raise ValueError(
            f"The 'n_train' parameter must exceed every neighbour index of the graph "
            f"(max index {int(ind.max())}, min {int(ind.min())}). Got {n_train} instead."
        )
    return np.bincount(ind, minlength=n_train).astype(np.int64)


@validate_params({"occurrence": ["array-like"]}, prefer_skip_nested_validation=True)
def skewness(occurrence: ArrayLike) -> float:
    """S_k of eq 1: population skewness of the k-occurrence distribution.

    A constant distribution (every point occurs equally often) has no
    asymmetry: S_k is defined as 0 there (scipy returns NaN).

    Parameters
    ----------
    occurrence : array-like of shape (n,)
        The k-occurrences ``O_k`` (:func:`k_occurrence`).

    Returns
    -------
    float

    See Also
    --------
    k_occurrence : The distribution this measures.
    hubness_stats : S_k, H_occ^k and A_occ^k of a dataset at once.

    References
    ----------
    "A Hubness Information-Based k-Nearest Neighbor Approach for Multi-Label
    Learning", Mathematics 2025, eq 1.

    Examples
    --------
    >>> import numpy as np
    >>> occurrence = np.array([0, 0, 1, 1, 2, 2, 2, 7, 0, 5])  # O_k of 10 points at k = 2
    >>> from mlknn.hubness import skewness
    >>> round(skewness(occurrence), 4)
    1.1981
    >>> skewness(np.full(5, 2))  # no asymmetry
    0.0
    """
    o = np.asarray(occurrence, dtype=np.float64)
    mu = o.mean()
    c = o - mu
    m2 = np.mean(c * c)
    if m2 <= (1e-14 * max(abs(mu), 1.0)) ** 2:
        return 0.0
    return float(np.mean(c**3) / m2**1.5)


@validate_params(
    {"occurrence": ["array-like"], "n_neighbors": [NonBoolInterval(Integral, 1, None, closed="left")]},
    prefer_skip_nested_validation=True,
)
def hub_occurrence(occurrence: ArrayLike, n_neighbors: int) -> float:
    """H_occ^k of eq 26: share of the n k slots occupied by hubs (O_k > 2 k).

    Parameters
    ----------
    occurrence : array-like of shape (n,)
        The k-occurrences ``O_k`` (:func:`k_occurrence`).
    n_neighbors : int
        k: a hub is a point with ``O_k > 2 k``.

    Returns
    -------
    float
        In [0, 1].

    See Also
    --------
    antihub_occurrence : The share of points that are no one's neighbour.
    hubness_stats : The three measures of a dataset at once.

    References
    ----------
    "A Hubness Information-Based k-Nearest Neighbor Approach for Multi-Label
    Learning", Mathematics 2025, eq 26.

    Examples
    --------
    >>> import numpy as np
    >>> occurrence = np.array([0, 0, 1, 1, 2, 2, 2, 7, 0, 5])  # O_k of 10 points at k = 2
    >>> from mlknn.hubness import hub_occurrence
    >>> round(hub_occurrence(occurrence, n_neighbors=2), 4)  # (7 + 5) / (10 * 2)
    0.6
    """
    o = np.asarray(occurrence, dtype=np.float64)
    return float(o[o > 2 * n_neighbors].sum() / (o.shape[0] * n_neighbors))


@validate_params({"occurrence": ["array-like"]}, prefer_skip_nested_validation=True)
def antihub_occurrence(occurrence: ArrayLike) -> float:
    """A_occ^k of eq 27: share of points that are no one's neighbour (O_k = 0).

    Parameters
    ----------
    occurrence : array-like of shape (n,)
        The k-occurrences ``O_k`` (:func:`k_occurrence`).

    Returns
    -------
    float
        In [0, 1].

    See Also
    --------
    hub_occurrence : The share of neighbour slots taken by hubs.
    hubness_stats : The three measures of a dataset at once.

    References
    ----------
    "A Hubness Information-Based k-Nearest Neighbor Approach for Multi-Label
    Learning", Mathematics 2025, eq 27.

    Examples
    --------
    >>> import numpy as np
    >>> occurrence = np.array([0, 0, 1, 1, 2, 2, 2, 7, 0, 5])  # O_k of 10 points at k = 2
    >>> from mlknn.hubness import antihub_occurrence
    >>> antihub_occurrence(occurrence)
    0.3
    """
    o = np.asarray(occurrence)
    return float(np.mean(o == 0))


@dataclass(frozen=True)
class HubnessStats:
    """The hubness measures of Teng et al.'s (2025) Table 1 for one dataset.

    Returned by :func:`hubness_stats`; the constructor takes the attributes
    below, in order.

    Parameters
    ----------
    skewness, hub_occurrence, antihub_occurrence : float
        The three measures, as described under Attributes.
    n_neighbors, n_samples, max_occurrence : int
        The neighbourhood size k, the number of points n and the largest
        k-occurrence, as described under Attributes.

    Attributes
    ----------
    skewness : float
        S_k (eq 1).
    hub_occurrence : float
        H_occ^k (eq 26), hubs being points with k-occurrence > 2k.
    antihub_occurrence : float
        A_occ^k (eq 27).
    n_neighbors : int
        k.
    n_samples : int
        n.
    max_occurrence : int
        The largest k-occurrence (the biggest hub's reverse-neighbourhood size).

    See Also
    --------
    hubness_stats : computes them for a dataset or a leave-one-out graph.

    References
    ----------
    Teng et al. (2025, the MLHiKNN paper), eqs 1, 26, 27 and Table 1.

    Examples
    --------
    >>> from mlknn.hubness import HubnessStats
    >>> s = HubnessStats(1.5, 0.1, 0.2, 10, 100, 40)
    >>> s["skewness"], s.as_dict()["max_occurrence"]
    (1.5, 40)
    """

    skewness: float
    hub_occurrence: float
    antihub_occurrence: float
    n_neighbors: int
    n_samples: int
    max_occurrence: int

    def as_dict(self) -> dict[str, Any]:
        """The measures as a plain dict (also usable as ``stats["skewness"]``).

        Returns
        -------
        dict
            Field name to value.
        """
        return asdict(self)

    def __getitem__(self, key: str) -> Any:
        return getattr(self, key)


@validate_params(
    {
        "X": "no_validation",  # data or a NeighborGraph, checked below
        "n_neighbors": [NonBoolInterval(Integral, 1, None, closed="left")],
        "metric": [str],
        "neighbors": list(NEIGHBORS_CONSTRAINT),
        "hubness": list(HUBNESS_CONSTRAINT),
        "include_self": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def hubness_stats(
    X: MatrixLike,  # or a NeighborGraph (MatrixLike is Any)
    n_neighbors: int = 10,
    *,
    metric: str = "euclidean",
    neighbors: Any = "brute",
    hubness: Any = None,
    include_self: bool = False,
) -> "HubnessStats":
    """S_k, H_occ^k and A_occ^k of a dataset (Teng et al. 2025, eqs 1, 26, 27; Table 1).

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features), or NeighborGraph
        The data, or an already computed leave-one-out graph (then only its first
        ``n_neighbors`` columns are used and ``metric`` / ``neighbors`` are ignored).
    n_neighbors : int, default=10
        k (Table 1 uses 10).
    metric : str, default="euclidean"
        The distance of the neighbour search.
    neighbors : str or object, default="brute"
        Neighbour-search backend (:func:`mlknn.neighbors.get_backend`).
    hubness : {None, "ls", "mp", "mp-gauss", "dsl"} or reduction object, default=None
        Measure the hubness of the graph *after* this hubness reduction
        (:mod:`mlknn.hubness`), with the reduction's default candidate width.
        Needs ``X`` (not a graph).
    include_self : bool, default=False
        False: the definition of the text, O_k(x) counts the *other* points that
        have x among their k nearest neighbours (leave-one-out search). True: the
        data are searched against themselves, so each point is normally its own
        first neighbour and has k - 1 others (with more than k exact duplicates the
        lower-index copies come first). This convention reproduces the values of
        Teng et al.'s (2025) Table 1 (see docs/notes/hubness.md). Needs ``X``, not a graph, and no
        ``hubness``.

    Returns
    -------
    HubnessStats

    See Also
    --------
    k_occurrence, skewness, hub_occurrence, antihub_occurrence : The pieces.
    make_reduction : The hubness reductions ``hubness=`` names.

    References
    ----------
    "A Hubness Information-Based k-Nearest Neighbor Approach for Multi-Label
    Learning", Mathematics 2025, eqs 1, 26, 27 and Table 1.

    Examples
    --------
    >>> import numpy as np
    >>> from mlknn.hubness import hubness_stats
    >>> X = np.random.default_rng(0).normal(size=(300, 50))
    >>> s = hubness_stats(X, n_neighbors=10)
    >>> s.skewness > 0
    True
    """
    k = int(n_neighbors)
    if include_self and (hubness is not None or isinstance(X, NeighborGraph)):
        raise ValueError(
            "The 'include_self' parameter of hubness_stats needs the data X and hubness=None; "
            f"got include_self=True with {'a NeighborGraph' if isinstance(X, NeighborGraph) else f'hubness={hubness!r}'}."
        )
    if isinstance(X, NeighborGraph):
        if hubness is not None:
            raise ValueError(
                "The 'hubness' parameter of hubness_stats needs the data X, not a graph. "
                f"Got hubness={hubness!r} with a NeighborGraph."
            )
        if not X.loo:
            raise ValueError(
                "The 'X' parameter of hubness_stats, when a NeighborGraph, must be a leave-one-out "
                "graph (loo=True). Got a NeighborGraph with loo=False instead."
            )
        graph = X.take(k)
    else:
        from sklearn.utils import check_array

        X = check_array(X, accept_sparse="csr", dtype=[np.float64, np.float32])
        n = X.shape[0]
        limit = n if include_self else n - 1
        if k > limit:
            raise ValueError(
                f"The 'n_neighbors' parameter of hubness_stats must be <= {'n_samples' if include_self else 'n_samples - 1'} "
                f"= {limit}{'' if include_self else ' (leave-one-out)'}. Got {k} instead."
            )
        index = get_backend(neighbors, metric=metric).fit(X)
        if include_self:
            graph = build_graph(index, X, k)
        elif hubness is None:
            graph = build_graph(index, None, k)
        else:
            from ._factory import make_reduction

            reduction = make_reduction(hubness, n_neighbors=k, metric=metric)
            width = max(k, min(reduction.search_width(k), n - 1))
            reduction.fit(build_graph(index, None, width), X)
            graph = reduction.fit_graph_
    occ = k_occurrence(graph, graph.n_points if graph.loo else X.shape[0])
    return HubnessStats(
        skewness=skewness(occ),
        hub_occurrence=hub_occurrence(occ, k),
        antihub_occurrence=antihub_occurrence(occ),
        n_neighbors=k,
        n_samples=int(graph.n_points),
        max_occurrence=int(occ.max(initial=0)),
    )
