"""partial_fit with an approximate backend that grows its index (the HNSW ones).

The contract (docs/streams.md): each new row's list is the grown index's answer
(queried after the batch was added, its own index removed); each old row's list
takes a new row exactly when that row is strictly closer than the list's k-th
neighbour; the model is then ``fit_from_graph`` on that graph. The graph is built
here by hand from the index's ``kneighbors`` and numpy distances, and the streamed
model must equal ``fit_from_graph`` on it.
"""

import importlib.util

import numpy as np
import pytest

from mlknn import DMLkNN, MLkNN
from mlknn.neighbors import BruteNeighbors, FaissHNSWNeighbors, HnswlibNeighbors, NeighborGraph, VoyagerNeighbors

# Each growing backend with a deliberately poor HNSW (recall well below 1 here): the
# contract graph then differs from the exact one, so the test tells the two apart.
_WEAK = {
    "voyager": lambda: VoyagerNeighbors(M=2, ef_construction=4, ef=1, random_state=0, n_jobs=1),
    "hnswlib": lambda: HnswlibNeighbors(M=2, ef_construction=4, ef=1, random_state=0, n_jobs=1),
    "faiss-hnsw": lambda: FaissHNSWNeighbors(M=2, ef_construction=4, ef_search=1, n_jobs=1),
}
_MODULE = {"voyager": "voyager", "hnswlib": "hnswlib", "faiss-hnsw": "faiss"}
GROWING = [pytest.param(name, marks=pytest.mark.skipif(importlib.util.find_spec(module) is None,
                                                        reason=f"{module} is not installed"))
           for name, module in _MODULE.items()]


def _fitted(model):
    return {k: v for k, v in vars(model).items() if k.endswith("_") and not k.startswith("_") and k != "nn_"}


def _merge(ind, dist, cand, cand_dist, k):
    """The first k of a list and candidates, by (distance, index)."""
    all_ind, all_dist = np.concatenate([ind, cand]), np.concatenate([dist, cand_dist])
    order = np.lexsort((all_ind, all_dist))[:k]
    return all_ind[order], all_dist[order]


def _contract_graph(model, X, cuts, k, start):
    """Stream X in batches ``cuts`` through ``model`` (starting with ``start``) and
    build, beside it, the graph the contract describes."""
    dist = lambda i, j: np.sqrt(((X[i] - X[j]) ** 2).sum(axis=-1))  # noqa: E731
    bounds = np.concatenate([[0], cuts, [X.shape[0]]])
    getattr(model, start)(X[: bounds[1]], Y[: bounds[1]])
    ind = list(model.nn_.kneighbors(n_neighbors=k, return_distance=False))
    lists = [(np.asarray(r), dist(i, np.asarray(r))) for i, r in enumerate(ind)]
    lists = [_merge(r, d, np.empty(0, int), np.empty(0), k) for r, d in lists]
    for lo, hi in zip(bounds[1:-1], bounds[2:]):
        model.partial_fit(X[lo:hi], Y[lo:hi])
        new = np.arange(lo, hi)
        for i in range(lo):
            r, d = lists[i]
            dn = dist(i, new)
            closer = dn < d[-1]
            lists[i] = _merge(r, d, new[closer], dn[closer], k)
        found = model.nn_.kneighbors(X[lo:hi], n_neighbors=k + 1, return_distance=False)
        for j, row in zip(new, found):
            row = row[row != j][:k]
            lists.append(_merge(row, dist(j, row), np.empty(0, int), np.empty(0), k))
    ind = np.array([r for r, _ in lists])
    dists = np.array([d for _, d in lists])
    return NeighborGraph(ind, dists, loo=True)


rng = np.random.default_rng(4)
X = rng.normal(size=(160, 24))
Y = (rng.random((160, 4)) < 0.3).astype(np.uint8)


@pytest.mark.parametrize("backend", GROWING)
@pytest.mark.parametrize("start", ["partial_fit", "fit"])
@pytest.mark.parametrize("estimator", [MLkNN, DMLkNN])
def test_growing_backend_equals_fit_from_graph_on_its_contract_graph(estimator, start, backend):
    def make():
        return estimator(n_neighbors=5, neighbors=_WEAK[backend]())

    model = make()
    graph = _contract_graph(model, X, [50, 90, 91, 130], 5, start)
    exact = BruteNeighbors().fit(X).kneighbors(n_neighbors=5, return_distance=False)
    assert (graph.indices[:, :5] != exact).any(axis=1).sum() > 10
    ref = make().fit_from_graph(graph, Y, X, index=model.nn_)
    fa, fb = _fitted(ref), _fitted(model)
    assert fa.keys() == fb.keys()
    for key, value in fa.items():
        if isinstance(value, np.ndarray):
            assert np.array_equal(value, fb[key]), key
    np.testing.assert_allclose(model.predict_proba(X[:20]), ref.predict_proba(X[:20]), rtol=0, atol=1e-12)
    # Rows the batches brought in are in the index the model predicts with.
    assert model.nn_.n_samples_fit_ == X.shape[0]


@pytest.mark.parametrize("backend", GROWING)
def test_growing_backend_refuses_a_window_naming_the_exact_backends(backend):
    with pytest.raises(ValueError, match="max_samples.*brute"):
        MLkNN(n_neighbors=3, neighbors=backend, max_samples=50).partial_fit(X[:20], Y[:20])


@pytest.mark.parametrize("backend", ["pynndescent", "faiss-ivf"])
def test_backends_that_cannot_grow_name_the_ones_that_can(backend):
    with pytest.raises(ValueError, match="voyager.*hnswlib.*faiss-hnsw"):
        MLkNN(n_neighbors=3, neighbors=backend).partial_fit(X[:20], Y[:20])


@pytest.mark.parametrize("backend", GROWING)
def test_refused_batch_leaves_the_grown_index_unchanged(backend):
    model = MLkNN(n_neighbors=3, neighbors=backend).partial_fit(X[:30], Y[:30])
    nn, proba = model.nn_, model.predict_proba(X[:5])
    with pytest.raises(ValueError):
        model.partial_fit(X[30:40, :3], Y[30:40])
    assert model.nn_ is nn and nn.n_samples_fit_ == 30
    np.testing.assert_array_equal(model.predict_proba(X[:5]), proba)
    model.partial_fit(X[30:40], Y[30:40])
    assert model.nn_ is not nn and nn.n_samples_fit_ == 30 and model.nn_.n_samples_fit_ == 40
