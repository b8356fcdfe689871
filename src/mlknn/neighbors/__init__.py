"""Neighbour search: the only place in mlknn that computes distances.

Every algorithm receives a :class:`NeighborGraph` from here. Backends plug in by
name through :func:`register_backend`; :func:`get_backend` returns one.
"""

from ._base import (
    NeighborsIndex,
    available_backends,
    build_graph,
    get_backend,
    is_exact,
    register_backend,
)
from ._brute import BruteNeighbors
from ._graph import NeighborGraph

__all__ = [
    "BruteNeighbors",
    "NeighborGraph",
    "NeighborsIndex",
    "available_backends",
    "build_graph",
    "get_backend",
    "is_exact",
    "register_backend",
]
