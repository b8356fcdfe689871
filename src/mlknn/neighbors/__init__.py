"""Neighbour search: the only place in mlknn that computes distances.

Every algorithm receives a :class:`NeighborGraph` from here. Backends plug in by
name through :func:`register_backend` (one registry: the estimators' ``neighbors=``
validation reads it, see :data:`NEIGHBORS_CONSTRAINT`); :func:`get_backend` returns one.

Registered names (``neighbors=`` of every kNN estimator):

=================  =======  ===========================================================
name               exact    needs
=================  =======  ===========================================================
``auto``           yes      nothing: the fastest exact backend measured (``brute``)
``brute``          yes      nothing (BLAS); dense or sparse input
``faiss``          yes      ``pip install 'mlknn[faiss]'``; dense input
``faiss-ivf``      no       ``pip install 'mlknn[faiss]'``; dense input
``faiss-hnsw``     no       ``pip install 'mlknn[faiss]'``; dense input
``voyager``        no       ``pip install 'mlknn[ann]'`` (HNSW, binary wheels); dense input
``hnswlib``        no       ``pip install 'mlknn[hnswlib]'`` (builds from source: needs a C++ compiler); dense input
``pynndescent``    no       ``pip install 'mlknn[pynndescent]'``; dense or sparse input
``torch``          yes      ``pip install 'mlknn[gpu]'``; dense input; CUDA when available
``faiss-gpu``      yes      ``pip install 'mlknn[gpu]'`` (faiss's CUDA 12 wheel) and a CUDA device
``faiss-gpu-ivf``  no       ``pip install 'mlknn[gpu]'`` and a CUDA device
``precomputed``    (given)  X is a kNN distance graph (see ``PrecomputedNeighbors``)
=================  =======  ===========================================================

``n_jobs=None`` means the same on every backend: as many threads as the BLAS pool
holds (respecting ``threadpoolctl`` limits; usually all cores); ``-1`` all cores
(:func:`resolve_n_jobs`). Every backend whose search is random (pynndescent, faiss-ivf
training, hnswlib's and voyager's levels) takes ``random_state``.

The ``kneighbors`` contract, once (:func:`check_n_neighbors`, :func:`drop_own_index`,
:func:`merge_topk`), is shared by every backend and by :mod:`mlknn.distributed`.

All-pairs distances (mutual proximity needs each point's distance to every training
point): :func:`pairwise_distances`, :func:`pairwise_distances_chunked` (blocks of
columns under ``working_memory``).

Helpers: :func:`compute_graphs` / :class:`GraphCache` search once for the largest k
(reuse with ``fit_from_graph``); :func:`recall_at_k` / :func:`estimate_recall` measure
an approximate backend against exact search; :func:`graph_to_csr` converts a graph
for ``"precomputed"``. Measurements: ``docs/performance.md``.

The optional libraries are imported only when their backend is fitted.
"""

from ..utils._threads import resolve_n_jobs
from ._base import (
    NEIGHBORS_CONSTRAINT,
    NeighborsIndex,
    RegisteredBackend,
    available_backends,
    build_graph,
    get_backend,
    is_exact,
    register_backend,
    unchecked_graph,
)
from ._brute import BruteNeighbors
from ._contract import check_n_neighbors, drop_own_index, merge_topk
from ._faiss import FaissHNSWNeighbors, FaissIVFNeighbors, FaissNeighbors
from ._faiss_gpu import FaissGPUIVFNeighbors, FaissGPUNeighbors
from ._graph import NeighborGraph, knn_to_csr
from ._hnswlib import HnswlibNeighbors
from ._pairwise import pairwise_distances, pairwise_distances_chunked, row_sqnorms
from ._precomputed import PrecomputedNeighbors, graph_to_csr
from ._pynndescent import PyNNDescentNeighbors
from ._reuse import GraphCache, compute_graphs, estimate_recall, recall_at_k
from ._torch import TorchNeighbors
from ._voyager import VoyagerNeighbors

__all__ = [
    "NEIGHBORS_CONSTRAINT",
    "BruteNeighbors",
    "FaissGPUIVFNeighbors",
    "FaissGPUNeighbors",
    "FaissHNSWNeighbors",
    "FaissIVFNeighbors",
    "FaissNeighbors",
    "GraphCache",
    "HnswlibNeighbors",
    "NeighborGraph",
    "NeighborsIndex",
    "PrecomputedNeighbors",
    "PyNNDescentNeighbors",
    "RegisteredBackend",
    "TorchNeighbors",
    "VoyagerNeighbors",
    "available_backends",
    "build_graph",
    "check_n_neighbors",
    "compute_graphs",
    "drop_own_index",
    "estimate_recall",
    "get_backend",
    "graph_to_csr",
    "is_exact",
    "knn_to_csr",
    "merge_topk",
    "pairwise_distances",
    "pairwise_distances_chunked",
    "recall_at_k",
    "register_backend",
    "resolve_n_jobs",
    "row_sqnorms",
    "unchecked_graph",
]

# For mlknn's other packages, not in __all__ (no public promise): FoldGraphs is the type of
# one fold's (index, train graph, test graph) that compute_graphs builds for the harness.
from ._reuse import FoldGraphs as FoldGraphs
