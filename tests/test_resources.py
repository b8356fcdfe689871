"""Resource guards: mlknn.config_context and the memory / time estimates of every fit and prediction."""

import inspect
import json
import pickle
import subprocess
import sys
import textwrap
import threading
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

import mlknn
from mlknn import InsufficientMemoryError, LabelSpaceTooLargeError, LongFitWarning, MLkNN
from mlknn._registry import KNN_ESTIMATORS, get_estimator_class
from mlknn.algorithms._footprint import SPARSE_LABEL_ALTERNATIVE
from mlknn.utils._config import parse_memory_size


def _data(n=200, q=6, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    Y = (rng.random((n, q)) < 0.3).astype(np.uint8)
    Y[0] = 1
    Y[1] = 0
    return X, Y


# ---------------------------------------------------------------- settings
def test_config_context_sets_and_restores():
    before = mlknn.get_config()
    with mlknn.config_context(max_memory="2GB", warn_seconds=5):
        assert mlknn.get_config()["max_memory"] == "2GB"
        assert mlknn.get_config()["warn_seconds"] == 5.0
        assert mlknn.get_config()["blas_flops"] == before["blas_flops"]
    assert mlknn.get_config() == before
    with pytest.raises(RuntimeError), mlknn.config_context(max_memory=10):
        raise RuntimeError
    assert mlknn.get_config() == before


def test_set_config_keeps_what_is_not_passed():
    before = mlknn.get_config()
    try:
        mlknn.set_config(max_memory="1GiB")
        mlknn.set_config(blas_flops=1e9)
        assert mlknn.get_config()["max_memory"] == "1GiB"
        assert mlknn.get_config()["blas_flops"] == 1e9
    finally:
        mlknn.set_config(**before)
    assert mlknn.get_config() == before


def test_config_is_per_thread():
    seen = {}

    def other():
        seen["other"] = mlknn.get_config()["max_memory"]

    with mlknn.config_context(max_memory="3GB"):
        thread = threading.Thread(target=other)
        thread.start()
        thread.join()
    assert seen["other"] is None


@pytest.mark.parametrize(("value", "expected"), [
    (None, None), (1000, 1000.0), ("8GB", 8e9), ("512 MiB", 512 * 2**20), ("1.5g", 1.5e9),
    ("off", float("inf")), (float("inf"), float("inf")),
])
def test_memory_sizes_read(value, expected):
    assert parse_memory_size(value) == expected


@pytest.mark.parametrize("value", ["lots", "8XB", -1, 0, True, "-3GB"])
def test_bad_settings_name_the_setting(value):
    with pytest.raises(ValueError, match="max_memory"):
        mlknn.set_config(max_memory=value)
    with pytest.raises(ValueError, match="max_memory"), mlknn.config_context(max_memory=value):
        pass
    with pytest.raises(TypeError, match="unknown setting"), mlknn.config_context(max_mem=1):
        pass


# ----------------------------------------------------------------- refusal
def test_refusal_names_the_need_and_leaves_a_fitted_model_unchanged():
    X, Y = _data()
    clf = MLkNN(n_neighbors=5).fit(X, Y)
    before = clf.predict_proba(X[:5])
    with mlknn.config_context(max_memory="1MB"), pytest.raises(InsufficientMemoryError) as info:
        clf.fit(X[:100], Y[:100, :3])
    message = str(info.value)
    assert "MLkNN.fit refused" in message and "bytes (" in message and "MiB) of memory" in message and "the configured max_memory" in message
    assert "config_context(max_memory" in message
    assert isinstance(info.value, LabelSpaceTooLargeError) and isinstance(info.value, MemoryError)
    assert clf.n_labels_ == 6
    np.testing.assert_array_equal(clf.predict_proba(X[:5]), before)
    for method in ("predict", "predict_proba"):
        with mlknn.config_context(max_memory=1000), pytest.raises(InsufficientMemoryError, match=method):
            getattr(clf, method)(X)
    with mlknn.config_context(max_memory=1000), pytest.raises(InsufficientMemoryError, match="predict_topk"):
        clf.predict_topk(X, 2)


@pytest.mark.parametrize("name", ["MLHiKNN", "DMLkNN", "IBLR"])
def test_fit_from_graph_is_guarded_too(name):
    from mlknn.neighbors import BruteNeighbors, build_graph

    X, Y = _data(n=60, q=5)
    graph = build_graph(BruteNeighbors().fit(X), None, 5)
    with mlknn.config_context(max_memory="100KB"), pytest.raises(InsufficientMemoryError, match="fit refused"):
        getattr(mlknn, name)(n_neighbors=5).fit_from_graph(graph, sp.csr_array(Y))
    getattr(mlknn, name)(n_neighbors=5).fit_from_graph(graph, Y)


def test_override_lets_the_call_through():
    X, Y = _data()
    with mlknn.config_context(max_memory="off"):
        assert MLkNN(n_neighbors=5).fit(X, Y).predict(X).shape == Y.shape
    with mlknn.config_context(max_memory=10**12):
        MLkNN(n_neighbors=5).fit(X, Y)


@pytest.mark.parametrize("name", ["MLHiKNN", "DMLkNN", "IBLR"])
def test_dense_in_q_refusal_names_the_sparse_label_estimators(name):
    X, Y = _data(n=60, q=5)
    with mlknn.config_context(max_memory="100KB"), pytest.raises(InsufficientMemoryError) as info:
        getattr(mlknn, name)(n_neighbors=5).fit(X, sp.csr_array(Y))
    assert "MLkNN, BRkNN" in str(info.value)


def test_sparse_label_alternative_lists_exactly_the_sparse_label_estimators():
    sparse = [get_estimator_class(key).__name__ for key in KNN_ESTIMATORS
              if get_estimator_class(key)().knn_capabilities()["sparse_labels"]]
    listed = SPARSE_LABEL_ALTERNATIVE.split(": ")[1].split(" (")[0].replace(" or ", ", ").split(", ")
    assert sorted(listed) == sorted(sparse)


_CHILD = textwrap.dedent("""
    import json, resource, sys, time
    import numpy as np, scipy.sparse as sp
    import mlknn
    name, n, q = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    # "config": the global limit; "param": the estimator's max_memory, the global one off.
    limit = sys.argv[4] if len(sys.argv) > 4 else "config"
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, 32)).astype(np.float32)
    rows = np.repeat(np.arange(n), 5)
    Y = sp.csr_matrix((np.ones(rows.size), (rows, rng.integers(0, q, rows.size))), shape=(n, q))
    Y.data[:] = 1
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    try:
        with mlknn.config_context(max_memory="off" if limit == "param" else "4GB"):
            getattr(mlknn, name)(n_neighbors=10, max_memory="4GB" if limit == "param" else None).fit(X, Y)
        message = None
    except mlknn.InsufficientMemoryError as exc:
        message = str(exc)
    print(json.dumps({"message": message, "seconds": time.perf_counter() - start,
                      "grew_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before}))
""")


@pytest.mark.parametrize(("name", "limit"), [("MLHiKNN", "config"), ("DMLkNN", "config"), ("IBLR", "config"),
                                           ("MLHiKNN", "param")])
def test_refusal_comes_before_any_large_allocation(name, limit):
    # The case that was killed for memory at 24 GB: q = 50,000 labels, 15,000 rows, CSR Y.
    out = subprocess.run([sys.executable, "-c", _CHILD, name, "15000", "50000", limit], capture_output=True,
                         text=True, check=True, timeout=120)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["message"] is not None, "the fit was not refused"
    assert f"{name}.fit refused" in result["message"] and "GiB) of memory" in result["message"]
    source = f"{name}'s max_memory='4GB'" if limit == "param" else "the configured max_memory"
    assert f"the limit is 3.73 GiB ({source}" in result["message"]
    assert "q = 50,000 labels" in result["message"]
    # Refused before densifying Y (0.75 GB as uint8) or any (n, q) array (6 GB as float64).
    assert result["grew_kib"] < 200 * 1024


_MEASURE = textwrap.dedent("""
    import gc, json, sys
    import numpy as np, scipy.sparse as sp
    import mlknn
    from mlknn.utils._resources import ProblemSize
    name, n, q, sparse = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
    def status(key):
        with open("/proc/self/status") as fh:
            return [int(line.split()[1]) * 1024 for line in fh if line.startswith(key)][0]
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, 16))
    rows = np.repeat(np.arange(n), 5)
    Y = sp.csr_array((np.ones(rows.size, dtype=np.uint8), (rows, rng.integers(0, q, rows.size))), shape=(n, q))
    Y.sum_duplicates(); Y.data[:] = 1
    est = getattr(mlknn, name)(n_neighbors=10)
    # Warm the compiled kernels on a small problem so that their code is not counted.
    est.fit(X[:300], Y[:300])
    size = ProblemSize(n, n, 16, q, int(Y.nnz), 10, sparse)
    need = est._resource_estimate(size, "fit").bytes
    gc.collect()
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")
    base = status("VmRSS")
    est.fit(X, Y)
    print(json.dumps({"need": need, "peak": status("VmHWM") - base}))
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
@pytest.mark.parametrize(("name", "n", "q", "sparse"), [("DMLkNN", 5000, 1500, False)])
def test_estimate_within_half_again_of_the_measured_peak(name, n, q, sparse):
    out = subprocess.run([sys.executable, "-c", _MEASURE, name, str(n), str(q), "1" if sparse else "0"],
                         capture_output=True, text=True, check=True, timeout=240)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["peak"] / 1.5 <= result["need"] <= 1.5 * result["peak"], result


def test_long_fit_warns_once():
    X, Y = _data(n=80, q=8)
    with mlknn.config_context(blas_flops=1.0, warn_seconds=1.0):
        with pytest.warns(LongFitWarning, match="MLHiKNN.fit is estimated to take about"):
            mlknn.MLHiKNN(n_neighbors=5).fit(X, Y)
        with warnings.catch_warnings():
            warnings.simplefilter("error", LongFitWarning)
            mlknn.MLHiKNN(n_neighbors=5).fit(X, Y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", LongFitWarning)
        MLkNN(n_neighbors=5).fit(X, Y)  # the count estimators have no dense products


# ------------------------------------------------- the estimators' max_memory parameter
# None follows the global setting; any other value overrides it for that estimator,
# in both directions. Every estimator behind the guards: the kNN family of the registry.
GUARDED = sorted({get_estimator_class(key).__name__ for key in KNN_ESTIMATORS})


def _make(name, **params):
    return getattr(mlknn, name)(n_neighbors=4, **params)


def test_every_guarded_estimator_has_the_parameter_last_with_default_none():
    from mlknn.base import KNNMultiLabelBase

    assert len(GUARDED) == len(KNN_ESTIMATORS)
    for name in GUARDED:
        cls = getattr(mlknn, name)
        assert issubclass(cls, KNNMultiLabelBase)
        last = list(inspect.signature(cls).parameters.values())[-1]
        assert (last.name, last.default) == ("max_memory", None), name
        assert cls().get_params()["max_memory"] is None


@pytest.mark.parametrize("name", GUARDED)
def test_parameter_refuses_where_the_global_setting_allows(name):
    X, Y = _data(n=60, q=4, d=3)
    with mlknn.config_context(max_memory="off"), pytest.raises(InsufficientMemoryError) as info:
        _make(name, max_memory="1KB").fit(X, Y)
    message = str(info.value)
    assert f"{name}.fit refused" in message and "bytes (" in message
    assert f"the limit is 1000 bytes ({name}'s max_memory='1KB'" in message
    assert "set_params(max_memory=...)" in message and "the configured max_memory" not in message


@pytest.mark.parametrize("name", GUARDED)
def test_parameter_allows_where_the_global_setting_refuses(name):
    X, Y = _data(n=60, q=4, d=3)
    expected = _make(name).fit(X, Y).predict_proba(X[:10])
    with mlknn.config_context(max_memory="1KB"):
        for limit in ("off", 10**12, float("inf"), "64GB"):
            clf = _make(name, max_memory=limit).fit(X, Y)
            np.testing.assert_array_equal(clf.predict_proba(X[:10]), expected)
            clf.predict(X[:10])
            clf.predict_topk(X[:10], 2)


def test_none_follows_the_global_setting():
    X, Y = _data(n=60, q=4, d=3)
    clf = _make("MLkNN", max_memory=None)
    with mlknn.config_context(max_memory="1KB"), pytest.raises(InsufficientMemoryError) as info:
        clf.fit(X, Y)
    assert "the configured max_memory" in str(info.value) and "max_memory=None" not in str(info.value)
    clf.fit(X, Y)  # outside the block: the default limit, half the available memory


def test_predictions_are_guarded_by_the_parameter_too():
    X, Y = _data(n=60, q=4, d=3)
    clf = _make("MLkNN").fit(X, Y)
    clf.set_params(max_memory=1000)
    with mlknn.config_context(max_memory="off"):
        for call in (clf.predict, clf.predict_proba, lambda Z: clf.predict_topk(Z, 2)):
            with pytest.raises(InsufficientMemoryError, match=r"max_memory=1000"):
                call(X)


@pytest.mark.parametrize("name", ["MLkNN", "DMLkNN", "IBLR"])
def test_a_refused_fit_leaves_the_fitted_model_unchanged(name):
    X, Y = _data(n=60, q=4, d=3)
    clf = _make(name).fit(X, Y)
    before = clf.predict_proba(X[:10])
    clf.set_params(max_memory="1KB")
    with pytest.raises(InsufficientMemoryError, match="max_memory='1KB'"):
        clf.fit(X[:40], Y[:40, :2])
    assert clf.n_labels_ == 4 and clf.n_train_ == 60
    clf.set_params(max_memory=None)
    np.testing.assert_array_equal(clf.predict_proba(X[:10]), before)


@pytest.mark.parametrize("value", ["abc", "8XB", "-3GB", -1, 0, True, float("nan"), [1]])
def test_invalid_values_name_the_parameter_at_fit(value):
    X, Y = _data(n=60, q=4, d=3)
    with pytest.raises(ValueError, match=r"'max_memory' parameter of MLkNN must be .*Got"):
        _make("MLkNN", max_memory=value).fit(X, Y)


def test_clone_and_get_params_carry_the_parameter():
    clf = _make("DMLkNN", max_memory="16GB")
    assert clf.get_params()["max_memory"] == "16GB"
    assert clone(clf).max_memory == "16GB"
    assert "max_memory='16GB'" in repr(clf)


def test_a_model_saved_before_the_parameter_existed_follows_the_global_setting(tmp_path):
    X, Y = _data(n=60, q=4, d=3)
    clf = _make("MLkNN").fit(X, Y)
    expected = clf.predict_proba(X[:10])
    del clf.max_memory  # what a model saved before the parameter holds
    for back in (pickle.loads(pickle.dumps(clf)), mlknn.load(mlknn.save(clf, tmp_path / "old.npz"))):
        assert "max_memory" not in vars(back)
        assert back.get_params()["max_memory"] is None and clone(back).max_memory is None
        np.testing.assert_array_equal(back.predict_proba(X[:10]), expected)
        with mlknn.config_context(max_memory="1KB"), pytest.raises(InsufficientMemoryError,
                                                                   match="the configured max_memory"):
            back.predict(X[:10])
