"""Every kNN estimator with a ``hubness`` parameter reads the reduced graph.

Oracle: fitting with ``hubness=h`` must equal fitting the plain estimator from the
graph that the reduction produces (``fit_from_graph`` / ``predict_proba_from_graph``).
"""

import numpy as np
import pytest

from mlknn._registry import KNN_ESTIMATORS, get_estimator_class
from mlknn.hubness import make_reduction
from mlknn.neighbors import BruteNeighbors, build_graph

WITH_HUBNESS = [n for n in KNN_ESTIMATORS if "hubness" in get_estimator_class(n)().get_params()]


def test_the_main_kNN_estimators_accept_hubness():
    assert {"mlknn", "dmlknn", "mlhiknn", "bmlknn", "brknn", "brknna", "brknnb", "iblr"} <= set(WITH_HUBNESS)


@pytest.mark.parametrize("name", WITH_HUBNESS)
@pytest.mark.parametrize("method", ["ls", "mp", "dsl"])
def test_hubness_parameter_equals_fit_from_reduced_graph(name, method):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(90, 6))
    Y = (X[:, :3] + 0.4 * rng.normal(size=(90, 3)) > 0).astype(np.uint8)
    Xq = rng.normal(size=(15, 6))
    k = 5
    cls = get_estimator_class(name)
    est = cls(n_neighbors=k, hubness=method).fit(X, Y)

    reduction = make_reduction(method, n_neighbors=k)
    width = max(k, min(reduction.search_width(k), X.shape[0] - 1))  # as the base class caps it
    index = BruteNeighbors().fit(X)
    reduction.fit(build_graph(index, None, width), X)
    train_graph = reduction.fit_graph_
    query_graph = reduction.transform(build_graph(index, Xq, width), Xq)
    plain = cls(n_neighbors=k).fit_from_graph(train_graph, Y, X=X, index=index)

    np.testing.assert_allclose(est.predict_proba(Xq), plain.predict_proba_from_graph(query_graph, X=Xq), atol=1e-12)
    # The reduction changes something (otherwise the test proves nothing).
    base = cls(n_neighbors=k).fit(X, Y).predict_proba(Xq)
    assert not np.allclose(base, est.predict_proba(Xq))
