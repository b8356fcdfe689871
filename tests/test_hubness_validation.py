"""Parameter validation of the hubness reductions and make_reduction, through scikit-learn's.

Every parameter of every reduction has a ``_parameter_constraints`` entry checked at
``fit`` (also when an estimator fits the reduction, whose own validation does not see
the reduction's parameters); ``make_reduction`` is wrapped by ``validate_params``. A bad
value raises ``InvalidParameterError`` (a ValueError and a TypeError), whose message
names the parameter, the rule and the value.
"""

from numbers import Integral, Real

import numpy as np
import pytest

from mlknn import MLkNN
from mlknn.hubness import (
    DisSimLocal,
    LocalScaling,
    MutualProximity,
    antihub_occurrence,
    hub_occurrence,
    hubness_stats,
    k_occurrence,
    make_reduction,
    skewness,
)
from mlknn.hubness._constraints import NonBoolInterval, Value, WordedStrOptions
from mlknn.neighbors import BruteNeighbors, build_graph
from mlknn.utils._param_validation import InvalidParameterError

REDUCTIONS = [LocalScaling, MutualProximity, DisSimLocal]

#: (parameter, bad values) shared by every reduction.
SHARED_BAD = {
    "n_neighbors": [None, 0, -3, True, np.bool_(True), 2.5, "3"],
    "n_candidates": [0, -2, True, 1.5, "all"],
    "metric": [3, None],
    "working_memory": [0, -1, np.inf, -np.inf, np.nan, True, "big", None],
}


@pytest.fixture(scope="module")
def problem():
    X = np.random.default_rng(0).normal(size=(40, 5))
    return X, build_graph(BruteNeighbors().fit(X), None, 10)


def _every_parameter_is_covered(cls, bad):
    assert set(cls().get_params()) == set(bad), "a reduction parameter has no bad-value test"


@pytest.mark.parametrize("cls", REDUCTIONS)
def test_every_parameter_has_a_constraint(cls):
    assert set(cls._parameter_constraints) == set(cls().get_params())


@pytest.mark.parametrize("cls", REDUCTIONS)
def test_bad_value_of_every_parameter_raises(cls, problem):
    X, loo = problem
    bad = dict(SHARED_BAD)
    if cls is MutualProximity:
        bad["method"] = ["uniform", None, 1]
        bad["metric"] = bad["metric"] + ["manhattan"]
    if cls is DisSimLocal:
        bad["metric"] = bad["metric"] + ["cosine"]
    _every_parameter_is_covered(cls, bad)
    for name, values in bad.items():
        for value in values:
            params = {"n_neighbors": 3, name: value}
            with pytest.raises(InvalidParameterError, match=rf"The '{name}' parameter of {cls.__name__} must be .*Got"):
                cls(**params).fit(loo, X)


@pytest.mark.parametrize("cls", REDUCTIONS)
def test_good_values_pass(cls, problem):
    X, loo = problem
    for params in ({"n_candidates": None}, {"n_candidates": -1}, {"n_candidates": np.int64(8)},
                   {"working_memory": np.int64(64)}, {"working_memory": 0.5}, {"n_neighbors": np.int32(2)}):
        reduction = cls(**{"n_neighbors": 3, **params}).fit(loo, X)
        # Accepted values are used, not just let through: the re-ranked graph has the
        # asked width and neighbours in ascending secondary order.
        out = reduction.transform(loo, X)
        assert out.indices.shape == (X.shape[0], int(reduction.n_neighbors))
        assert np.all(np.diff(out.distances, axis=1) >= 0)


def test_messages_word_the_rule():
    X = np.random.default_rng(0).normal(size=(20, 3))
    loo = build_graph(BruteNeighbors().fit(X), None, 10)
    with pytest.raises(InvalidParameterError) as err:
        LocalScaling(3, n_candidates=0).fit(loo)
    assert str(err.value) == (
        "The 'n_candidates' parameter of LocalScaling must be None, -1 or an int in the range [1, inf). "
        "Got 0 instead."
    )
    with pytest.raises(InvalidParameterError) as err:
        MutualProximity(3, method="uniform").fit(loo, X)
    assert str(err.value) == (
        "The 'method' parameter of MutualProximity must be a str among {'empiric', 'gaussian'}. "
        "Got 'uniform' instead."
    )
    with pytest.raises(InvalidParameterError) as err:
        LocalScaling().search_width()
    assert "'n_neighbors' parameter of LocalScaling must be an int in the range [1, inf) (an estimator's" in str(err.value)


def test_estimator_fit_validates_the_reduction_object():
    # The estimator's own validation checks only that hubness= has the three methods;
    # the reduction's parameters are checked when the estimator fits it, even though
    # the estimator's fit skips nested validation.
    X = np.random.default_rng(1).normal(size=(30, 4))
    Y = (X[:, :2] > 0).astype(int)
    with pytest.raises(InvalidParameterError, match="'n_candidates' parameter of LocalScaling"):
        MLkNN(3, hubness=LocalScaling(n_candidates=0)).fit(X, Y)
    with pytest.raises(InvalidParameterError, match="'working_memory' parameter of MutualProximity"):
        MLkNN(3, hubness=MutualProximity(working_memory=np.nan)).fit(X, Y)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"hubness": "csls", "n_neighbors": 3}, "hubness"),
        ({"hubness": None, "n_neighbors": 3}, "hubness"),
        ({"hubness": object(), "n_neighbors": 3}, "hubness"),
        ({"hubness": "ls", "n_neighbors": 0}, "n_neighbors"),
        ({"hubness": "ls", "n_neighbors": True}, "n_neighbors"),
        ({"hubness": "ls", "n_neighbors": None}, "n_neighbors"),
        ({"hubness": "ls", "n_neighbors": 2.0}, "n_neighbors"),
        ({"hubness": "ls", "n_neighbors": 3, "metric": 1}, "metric"),
    ],
)
def test_make_reduction_bad_values(kwargs, name):
    with pytest.raises(InvalidParameterError, match=f"'{name}' parameter"):
        make_reduction(**kwargs)


def test_make_reduction_has_validate_params():
    # Every parameter is declared to scikit-learn's validate_params (hubness by its own
    # dispatch, whose message the hubness tests pin).
    assert set(make_reduction._skl_parameter_constraints) == {"hubness", "n_neighbors", "metric"}


def test_constraints_can_fail():
    # The custom constraints refuse what scikit-learn's Interval would accept.
    k = NonBoolInterval(Integral, 1, None, closed="left")
    assert k.is_satisfied_by(1) and not k.is_satisfied_by(True) and not k.is_satisfied_by(np.bool_(True))
    budget = NonBoolInterval(Real, 0, None, closed="neither", finite=True, description="finite")
    assert budget.is_satisfied_by(1.5) and not budget.is_satisfied_by(np.inf) and not budget.is_satisfied_by(np.nan)
    assert str(budget) == "finite" and str(k) == "an int in the range [1, inf)"
    minus_one = Value(-1)
    assert minus_one.is_satisfied_by(-1) and minus_one.is_satisfied_by(np.int64(-1)) and not minus_one.is_satisfied_by(1)
    assert str(minus_one) == "-1"
    worded = WordedStrOptions({"a", "b"}, description="'a' or 'b'")
    assert worded.is_satisfied_by("a") and not worded.is_satisfied_by("c") and str(worded) == "'a' or 'b'"


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"n_neighbors": True}, "n_neighbors"),
        ({"n_neighbors": 2.5}, "n_neighbors"),
        ({"metric": 1}, "metric"),
        ({"neighbors": "no-such-backend"}, "neighbors"),
        ({"hubness": "csls"}, "hubness"),
        ({"include_self": "yes"}, "include_self"),
    ],
)
def test_hubness_stats_bad_values(kwargs, name):
    X = np.random.default_rng(2).normal(size=(20, 3))
    with pytest.raises(InvalidParameterError, match=f"The '{name}' parameter of hubness_stats must be"):
        hubness_stats(X, **{"n_neighbors": 3, **kwargs})


def test_measure_functions_bad_values():
    from mlknn.neighbors import NeighborGraph

    g = NeighborGraph(np.array([[1], [0]]), np.ones((2, 1)), loo=True)
    for n_train in (-1, True, "2"):
        with pytest.raises(InvalidParameterError, match="The 'n_train' parameter of k_occurrence must be"):
            k_occurrence(g, n_train)
    with pytest.raises(InvalidParameterError, match="The 'n_neighbors' parameter of hub_occurrence must be"):
        hub_occurrence([1, 2], 0)
    for func in (skewness, antihub_occurrence):
        with pytest.raises(InvalidParameterError, match=f"The 'occurrence' parameter of {func.__name__} must be"):
            func(3)
