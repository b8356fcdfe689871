"""``mlknn run`` on one dataset is one cell of the harness (protocol "given"): the same
split and the same numbers, to the bit, as fitting the estimator directly on that split."""

import io
from contextlib import nullcontext

import numpy as np
import pytest
from rich.console import Console
from sklearn.model_selection import train_test_split

from mlknn import FeatureScaleWarning
from mlknn._registry import make_estimator
from mlknn.cli._run import single_run
from mlknn.datasets import load, make_simulated_2d
from mlknn.metrics import evaluate
from mlknn.model_selection import GivenSplit
from mlknn.preprocessing import FoldPreprocessor


def _direct(X_train, X_test, Y_train, Y_test, algorithm, scaling=None, **params):
    """The reference: what ``mlknn run`` computed before it went through the harness."""
    if scaling:
        pre = FoldPreprocessor(scaling, None, 0).fit(X_train, Y_train)
        X_train, X_test = pre.transform(X_train), pre.transform(X_test)
    est = make_estimator(algorithm, **params).fit(X_train, Y_train)
    P = est.predict(X_test)
    P = P.toarray() if hasattr(P, "toarray") else np.asarray(P)
    return evaluate(Y_test, P, est.predict_proba(X_test))


def _quiet():
    return Console(file=io.StringIO(), width=200)


@pytest.mark.parametrize("seed", [0, 3, 17])
def test_given_split_draws_the_rows_train_test_split_draws(seed):
    data = make_simulated_2d(random_state=seed)
    X_tr, X_te, Y_tr, Y_te = train_test_split(data.X, data.Y, test_size=0.5, random_state=seed)
    (fold,) = GivenSplit(random_state=seed).split(data.X, data.Y)
    np.testing.assert_array_equal(data.X[fold.train], X_tr)  # same rows, same order
    np.testing.assert_array_equal(data.X[fold.test], X_te)
    np.testing.assert_array_equal(data.Y[fold.train], Y_tr)
    np.testing.assert_array_equal(data.Y[fold.test], Y_te)


def test_given_split_with_n_test_is_the_last_rows():
    X = np.arange(10.0).reshape(5, 2)
    (fold,) = GivenSplit(n_test=2).split(X)
    assert fold.train.tolist() == [0, 1, 2] and fold.test.tolist() == [3, 4]
    assert GivenSplit(n_test=2).get_n_splits() == 1
    with pytest.raises(ValueError, match=r"'n_test' parameter of GivenSplit must be in \[1, n_samples - 1\]"):
        next(GivenSplit(n_test=5).split(X))


@pytest.mark.parametrize(("algorithm", "k"), [("mlknn", 10), ("brknn", 5), ("dmlknn", 7), ("iblr", 10)])
def test_single_run_equals_the_direct_fit_on_the_simulated_data(algorithm, k):
    data = make_simulated_2d(random_state=0)
    X_tr, X_te, Y_tr, Y_te = train_test_split(data.X, data.Y, test_size=0.5, random_state=0)
    params = {"n_neighbors": k, "random_state": 0} if algorithm != "brknn" else {"n_neighbors": k}
    expected = _direct(X_tr, X_te, Y_tr, Y_te, algorithm, **params)
    got = single_run(None, algorithm, k, 0, _quiet())
    assert list(got) == list(expected)
    assert got == expected  # bit for bit


@pytest.mark.parametrize("scaling", [None, "minmax"])
def test_single_run_equals_the_direct_fit_on_emotions_fixed_split(data_dir, monkeypatch, scaling):
    monkeypatch.setenv("MLKNN_DATA", str(data_dir))
    train, test = load("emotions", split="train"), load("emotions", split="test")
    expected = _direct(train.X, test.X, train.Y, test.Y, "mlknn", scaling, n_neighbors=10)
    with pytest.warns(FeatureScaleWarning) if scaling is None else nullcontext():
        got = single_run("emotions", "mlknn", 10, 0, _quiet(), scaling=scaling)
    assert list(got) == list(expected)
    assert got == expected


def test_single_run_raises_again_what_the_fit_warned():
    from mlknn.algorithms._iblr import IllPosedFitWarning

    with pytest.warns(IllPosedFitWarning, match="ill-posed logistic regressions"):
        single_run(None, "iblr", 10, 0, _quiet())


def test_protocol_given_is_the_given_split_and_n_test_belongs_to_it():
    from mlknn.experiments import ProtocolConfig

    splitter = ProtocolConfig("given", seed=4, n_test=3).splitter()
    assert isinstance(splitter, GivenSplit) and splitter.params()["n_test"] == 3
    assert ProtocolConfig("given").n_folds() == 1
    with pytest.raises(ValueError, match="'n_test' setting is for protocol 'given'"):
        ProtocolConfig("holdout", n_test=3).splitter()
