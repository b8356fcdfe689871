"""Beyond one machine: mlknn on a Dask cluster (``pip install 'mlknn[dask]'``).

* :func:`kneighbors_graph` -- the exact neighbour graph, block by block on the
  workers, identical to :class:`mlknn.neighbors.BruteNeighbors`;
* :class:`DistributedKNN` -- fit / predict any kNN estimator of mlknn with the
  searches and the scoring on the cluster (identical results);
* :class:`DaskNeighbors` -- the same search as a neighbours backend,
  ``neighbors="dask"`` on any kNN estimator (registered on import);
* :func:`checkpointed_graph` -- the same blocks on one machine, out of core (X may
  be a memory-mapped ``.npy``) and checkpointed, so a killed run resumes;
* :class:`DaskExecutor` / :func:`run_experiment` -- an experiment grid whose fold
  tasks run on the cluster while this process writes the results database.

Importing this package does not import dask; every entry point imports it on
first use (:func:`mlknn.utils.check_optional_dependency`). See docs/distributed.md.
"""

from ..neighbors import merge_topk
from ._backend import DaskNeighbors
from ._checkpoint import checkpointed_graph
from ._client import get_client
from ._estimators import DistributedKNN
from ._experiments import DaskExecutor, dask_executor, local_client, run_experiment
from ._graph import TrainingIndex, kneighbors_graph

__all__ = [
    "DaskExecutor",
    "DaskNeighbors",
    "DistributedKNN",
    "dask_executor",
    "TrainingIndex",
    "checkpointed_graph",
    "get_client",
    "kneighbors_graph",
    "local_client",
    "merge_topk",
    "run_experiment",
]
