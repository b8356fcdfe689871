"""The one backend registry: ``register_backend`` end to end with a user-defined backend.

The estimators' ``neighbors=`` validation reads the live registry
(``mlknn.neighbors.NEIGHBORS_CONSTRAINT``), so a name registered after import is
accepted by every kNN estimator and built through its factory.
"""

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from mlknn import BRkNN, MLkNN
from mlknn.neighbors import available_backends, get_backend, register_backend
from mlknn.neighbors._base import _REGISTRY
from mlknn.utils._param_validation import InvalidParameterError


class LoopNeighbors:
    """A user's backend: scipy distances, stable sort (ties by the lower index)."""

    calls = []

    def __init__(self, metric="euclidean", n_jobs=None, random_state=None):
        self.metric = metric
        self.n_jobs = n_jobs
        self.random_state = random_state
        LoopNeighbors.calls.append((metric, n_jobs, random_state))

    def fit(self, X, y=None):
        self.X_ = np.asarray(X, dtype=float)
        return self

    def kneighbors(self, X=None, n_neighbors=5, return_distance=True):
        loo = X is None
        D = cdist(self.X_ if loo else np.asarray(X, float), self.X_, metric=self.metric)
        if loo:
            np.fill_diagonal(D, np.inf)
        ind = np.argsort(D, axis=1, kind="stable")[:, :n_neighbors]
        dist = np.take_along_axis(D, ind, axis=1)
        return (dist, ind) if return_distance else ind


@pytest.fixture
def mine():
    LoopNeighbors.calls.clear()
    register_backend("mine", LoopNeighbors, exact=True)
    yield "mine"
    _REGISTRY.pop("mine", None)


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 4))
    Y = (rng.random((80, 3)) < 0.4).astype(np.uint8)
    return X[:60], Y[:60], X[60:]


def test_unregistered_name_is_rejected_by_the_estimator(data):
    X, Y, _ = data
    assert "mine" not in available_backends()
    with pytest.raises(InvalidParameterError, match="neighbors"):
        MLkNN(neighbors="mine").fit(X, Y)


@pytest.mark.parametrize("Est", [MLkNN, BRkNN])
def test_registered_backend_end_to_end(mine, data, Est):
    X, Y, Q = data
    assert "mine" in available_backends()
    got = Est(n_neighbors=5, neighbors=mine).fit(X, Y)
    ref = Est(n_neighbors=5, neighbors="brute").fit(X, Y)
    assert isinstance(got.nn_, LoopNeighbors)
    np.testing.assert_allclose(got.predict_proba(Q), ref.predict_proba(Q), rtol=0, atol=1e-12)
    np.testing.assert_array_equal(got.predict(Q), ref.predict(Q))
    # The factory received the estimator's metric (and n_jobs).
    assert LoopNeighbors.calls[-1][0] == "euclidean"


def test_registered_backend_gets_metric_and_random_state(mine, data):
    X, Y, Q = data
    backend = get_backend("mine", metric="cityblock", n_jobs=2, random_state=7)
    assert (backend.metric, backend.n_jobs, backend.random_state) == ("cityblock", 2, 7)
    MLkNN(n_neighbors=3, neighbors=mine, random_state=3).fit(X, Y)
    assert LoopNeighbors.calls[-1][2] == 3


def test_register_backend_validates_its_arguments():
    with pytest.raises(ValueError, match="auto"):
        register_backend("auto", LoopNeighbors, exact=True)
    with pytest.raises(InvalidParameterError, match="factory"):
        register_backend("x", "not callable", exact=True)
    with pytest.raises(InvalidParameterError, match="exact"):
        register_backend("x", LoopNeighbors, exact="yes")
    assert "x" not in available_backends()
