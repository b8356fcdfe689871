"""mlknn.distributed on a LocalCluster of 2 worker processes (one thread each).

Everything is compared for exact equality with the single-machine path: the
neighbour graph with BruteNeighbors (ties, duplicates, leave-one-out), every kNN
estimator's predict_proba / predict, and a small experiment grid, also when a
worker process dies in the middle of the grid.
"""

import functools
import os
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")

import cloudpickle  # noqa: E402  (a dependency of distributed)

from mlknn._registry import KNN_ESTIMATORS, get_estimator_class  # noqa: E402
from mlknn.distributed import (  # noqa: E402
    DaskExecutor,
    DaskNeighbors,
    DistributedKNN,
    kneighbors_graph,
    merge_topk,
)
from mlknn.distributed import (  # noqa: E402
    run_experiment as run_distributed,
)
from mlknn.experiments import ExperimentConfig, ProtocolConfig, ResultsDB, run_experiment  # noqa: E402
from mlknn.experiments._runner import _run_fold_job  # noqa: E402
from mlknn.neighbors import BruteNeighbors  # noqa: E402

# The workers cannot import this test module: send its functions by value.
cloudpickle.register_pickle_by_value(sys.modules[__name__])


@pytest.fixture(scope="module")
def client():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cluster = distributed.LocalCluster(
            n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None, silence_logs=50
        )
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def _tied_data(dtype=np.float64):
    """Few distinct values: many exact duplicates and distance ties."""
    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, size=(230, 3)).astype(dtype)
    Q = rng.integers(0, 3, size=(41, 3)).astype(dtype)
    return X, Q


def _assert_graph_equal(graph, dist, ind, loo):
    assert graph.loo is loo
    assert graph.indices.dtype == np.intp and graph.distances.dtype == np.float64
    np.testing.assert_array_equal(graph.indices, ind)
    np.testing.assert_array_equal(graph.distances, dist)  # bit for bit


# ----------------------------------------------------------------- the graph
@pytest.mark.parametrize(
    "metric, dtype",
    [("euclidean", np.float64), ("euclidean", np.float32), ("sqeuclidean", np.float32), ("cosine", np.float64)],
)
def test_graph_equals_brute_with_ties_and_duplicates(client, metric, dtype):
    X, Q = _tied_data(dtype)
    ref = BruteNeighbors(metric=metric).fit(X)
    # Blocks that do not divide n; k larger than a block (partial lists shorter than k).
    for k, block in [(1, 80), (7, 60), (60, 50)]:
        dist, ind = ref.kneighbors(None, k)
        g = kneighbors_graph(X, None, k, client=client, metric=metric, train_block=block)
        _assert_graph_equal(g, dist, ind, loo=True)  # query blocks = training blocks
        g = kneighbors_graph(X, None, k, client=client, metric=metric, train_block=block, query_block=15)
        _assert_graph_equal(g, dist, ind, loo=True)  # query blocks inside training blocks
        dist, ind = ref.kneighbors(Q, k)
        g = kneighbors_graph(X, Q, k, client=client, metric=metric, train_block=block, query_block=15)
        _assert_graph_equal(g, dist, ind, loo=False)


def test_graph_loo_keeps_duplicates_and_excludes_only_self(client):
    X = np.array([[0.0, 0], [1, 1], [0, 0], [1, 1], [5, 5], [0, 0], [0.1, 0]])
    g = kneighbors_graph(X, None, 3, client=client, train_block=2)
    assert g.indices[0].tolist() == [2, 5, 6]  # duplicates of 0 from other blocks, lower index first
    assert g.distances[0].tolist() == [0.0, 0.0, 0.1]
    assert g.indices[2].tolist() == [0, 5, 6]
    # every point's whole leave-one-out list (k = n - 1), blocks of one row
    dist, ind = BruteNeighbors().fit(X).kneighbors(None, 6)
    _assert_graph_equal(kneighbors_graph(X, None, 6, client=client, train_block=1), dist, ind, loo=True)
    _assert_graph_equal(kneighbors_graph(X, None, 6, client=client, query_block=2), dist, ind, loo=True)
    # more than k + 1 duplicates with lower indices: the own index is not among the
    # top k + 1 of its training block (the last one is dropped instead)
    X = np.zeros((50, 3))
    X[::7] += 1.0
    dist, ind = BruteNeighbors().fit(X).kneighbors(None, 5)
    for tb, qb in [(None, 4), (20, 3), (50, 50)]:
        _assert_graph_equal(kneighbors_graph(X, None, 5, client=client, train_block=tb, query_block=qb), dist, ind, loo=True)


def test_graph_sparse_and_dask_inputs(client):
    Xs = sp.random(300, 40, density=0.08, random_state=0, format="csr")
    Xs.data = np.round(Xs.data * 4)  # ties
    ref = BruteNeighbors().fit(Xs)
    dist, ind = ref.kneighbors(None, 8)
    _assert_graph_equal(kneighbors_graph(Xs, None, 8, client=client, train_block=70), dist, ind, loo=True)
    _assert_graph_equal(kneighbors_graph(Xs, None, 8, client=client, query_block=32), dist, ind, loo=True)
    dist, ind = ref.kneighbors(Xs[:45], 8)
    g = kneighbors_graph(Xs, Xs[:45], 8, client=client, train_block=70, query_block=20)
    _assert_graph_equal(g, dist, ind, loo=False)

    X, Q = _tied_data(np.float32)
    ref = BruteNeighbors().fit(X)
    dist, ind = ref.kneighbors(None, 9)
    g = kneighbors_graph(da.from_array(X, chunks=(40, 3)), None, 9, client=client, query_block=30)
    _assert_graph_equal(g, dist, ind, loo=True)
    dist, ind = ref.kneighbors(Q, 9)
    g = kneighbors_graph(da.from_array(X, chunks=(40, 1)), da.from_array(Q, chunks=(10, 3)), 9, client=client, train_block=64)
    _assert_graph_equal(g, dist, ind, loo=False)


def test_merge_topk_orders_by_distance_then_index():
    a = (np.array([[0.0, 1.0]]), np.array([[7, 3]]))
    b = (np.array([[0.0, 1.0]]), np.array([[2, 9]]))
    d, i = merge_topk(3, a, b)
    assert i.tolist() == [[2, 7, 3]] and d.tolist() == [[0.0, 0.0, 1.0]]


def test_graph_errors(client):
    X, Q = _tied_data()
    with pytest.raises(ValueError, match="n_samples_fit - 1"):
        kneighbors_graph(X, None, X.shape[0], client=client)
    with pytest.raises(ValueError, match="n_samples_fit = 230"):
        kneighbors_graph(X, Q, 231, client=client)
    with pytest.raises(ValueError, match="features"):
        kneighbors_graph(X, Q[:, :2], 3, client=client)
    with pytest.raises(ValueError, match="train_block"):
        kneighbors_graph(X, None, 3, client=client, train_block=0)
    with pytest.raises(ValueError, match="metric"):
        kneighbors_graph(X, None, 3, client=client, metric="manhattan")
    # client=None: the default client of this process (the fixture's)
    dist, ind = BruteNeighbors().fit(X).kneighbors(None, 4)
    _assert_graph_equal(kneighbors_graph(X, None, 4), dist, ind, loo=True)


def test_import_does_not_import_dask():
    code = "import sys, mlknn.distributed; print(any(m.split('.')[0] in ('dask', 'distributed') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ------------------------------------------------------------- estimators
def _problem():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(160, 5))
    X[100:106] = X[3]  # duplicates
    Q = rng.normal(size=(50, 5))
    Q[:2] = X[3]
    Y = (X @ rng.normal(size=(5, 4)) + 0.5 * rng.normal(size=(160, 4)) > 0.3).astype(np.uint8)
    return X, Y, Q


def test_dask_backend_honours_the_kneighbors_contract(client):
    """neighbors="dask": the distributed search as a backend, identical to brute."""
    from mlknn import MLkNN
    from mlknn.neighbors import available_backends, get_backend

    X, Y, Q = _problem()
    assert "dask" in available_backends()
    for metric in ("euclidean", "cosine"):
        ref = BruteNeighbors(metric=metric).fit(X)
        got = get_backend("dask", metric=metric, train_block=48, query_block=15).fit(X)
        for q in (None, Q):
            for a, b in zip(got.kneighbors(q, 7), ref.kneighbors(q, 7)):
                np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="n_samples_fit - 1"):
        got.kneighbors(None, X.shape[0])
    est = MLkNN(n_neighbors=6, neighbors=DaskNeighbors(client=client, train_block=48)).fit(X, Y)
    assert isinstance(est.nn_, DaskNeighbors) and est.nn_.client is client  # cloned, client shared
    np.testing.assert_array_equal(est.predict_proba(Q), MLkNN(n_neighbors=6).fit(X, Y).predict_proba(Q))


_CASES = [(name, {}) for name in KNN_ESTIMATORS] + [
    ("mlknn", {"hubness": "mp"}),
    ("mlhiknn", {"hubness": "dsl"}),
    ("brknn", {"hubness": "ls"}),
    ("iblr", {"include_features": True}),
    ("nc", {"radius": 1.5}),  # radius beyond the graph: counts through the index
    ("mlknn", {"metric": "cosine"}),
]


@pytest.mark.parametrize("name, params", _CASES, ids=[f"{n}-{'-'.join(map(str, p.values()))}" for n, p in _CASES])
def test_estimators_equal_single_machine(client, name, params):
    X, Y, Q = _problem()
    cls = get_estimator_class(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = cls(n_neighbors=6, **params).fit(X, Y)
        model = DistributedKNN(cls(n_neighbors=6, **params), client, train_block=48, query_block=15).fit(X, Y)
        P, L = model.predict_proba(Q), model.predict(Q)
    np.testing.assert_array_equal(P, ref.predict_proba(Q))
    np.testing.assert_array_equal(L, ref.predict(Q))
    assert L.dtype == ref.predict(Q).dtype
    assert model.estimator_.n_features_in_ == X.shape[1]
    row_wise = name not in ("iblr", "mlhiknn")
    assert model._scoring_mode() == ("workers" if row_wise else "client")


def test_scoring_modes(client):
    X, Y, Q = _problem()
    mlknn, iblr = get_estimator_class("mlknn"), get_estimator_class("iblr")
    ref = mlknn(n_neighbors=4).fit(X, Y).predict_proba(Q)
    for scoring in ("workers", "client"):
        model = DistributedKNN(mlknn(n_neighbors=4), client, query_block=16, scoring=scoring).fit(X, Y)
        np.testing.assert_array_equal(model.predict_proba(Q), ref)
    # IBLR scored block by block on the workers: BLAS may change the last bit.
    ref = iblr(n_neighbors=4, include_features=True).fit(X, Y).predict_proba(Q)
    model = DistributedKNN(iblr(n_neighbors=4, include_features=True), client, query_block=16, scoring="workers")
    np.testing.assert_allclose(model.fit(X, Y).predict_proba(Q), ref, rtol=1e-13, atol=1e-15)
    with pytest.raises(ValueError, match="scoring"):
        DistributedKNN(mlknn(n_neighbors=4), client, scoring="gpu").fit(X, Y).predict(Q)


def test_estimator_dask_and_sparse_inputs(client):
    X, Y, Q = _problem()
    dX, dY, dQ = da.from_array(X, chunks=(50, 5)), da.from_array(Y, chunks=(50, 4)), da.from_array(Q, chunks=(20, 5))
    for est in (get_estimator_class("mlknn")(n_neighbors=5), get_estimator_class("iblr")(n_neighbors=5, include_features=True)):
        from sklearn.base import clone

        ref = clone(est).fit(X, Y)
        model = DistributedKNN(est, client).fit(dX, dY)
        np.testing.assert_array_equal(model.predict_proba(dQ), ref.predict_proba(Q))
        np.testing.assert_array_equal(model.predict(Q), ref.predict(Q))  # numpy queries too
    Xs = sp.csr_matrix(np.where(np.abs(X) > 0.8, np.round(X, 1), 0.0))
    Qs = sp.csr_matrix(np.where(np.abs(Q) > 0.8, np.round(Q, 1), 0.0))
    mlknn = get_estimator_class("mlknn")
    ref = mlknn(n_neighbors=5).fit(Xs, Y)
    model = DistributedKNN(mlknn(n_neighbors=5), client, train_block=40).fit(Xs, Y)
    np.testing.assert_array_equal(model.predict_proba(Qs), ref.predict_proba(Qs))
    g = model.kneighbors_graph(Qs)
    np.testing.assert_array_equal(g.indices, ref.query_graph(Qs)[0].indices)


def test_estimator_errors(client):
    from sklearn.exceptions import NotFittedError

    from mlknn.baselines import BinaryRelevance

    X, Y, Q = _problem()
    with pytest.raises(TypeError, match="kNN estimator"):
        DistributedKNN(BinaryRelevance(), client).fit(X, Y)
    with pytest.raises(NotFittedError):
        DistributedKNN(get_estimator_class("mlknn")(), client).predict(Q)
    with pytest.raises(ValueError, match="n_neighbors"):
        DistributedKNN(get_estimator_class("mlknn")(n_neighbors=160), client).fit(X, Y)
    model = DistributedKNN(get_estimator_class("mlknn")(n_neighbors=3), client).fit(X, Y)
    with pytest.raises(ValueError, match="features"):
        model.predict(Q[:, :3])


def test_estimator_is_a_scikit_learn_meta_estimator(client):
    from sklearn.base import clone
    from sklearn.model_selection import GridSearchCV, KFold

    X, Y, Q = _problem()
    mlknn = get_estimator_class("mlknn")
    model = DistributedKNN(mlknn(n_neighbors=3), client, query_block=16)
    params = model.get_params(deep=True)
    assert params["estimator__n_neighbors"] == 3 and params["client"] is client
    model.set_params(estimator__n_neighbors=5)
    assert model.estimator.n_neighbors == 5
    twin = clone(model)
    assert twin.client is client  # shared, not deep-copied
    assert twin.estimator is not model.estimator and twin.estimator.n_neighbors == 5
    assert twin.query_block == 16 and not hasattr(twin, "estimator_")
    np.testing.assert_array_equal(twin.fit(X, Y).predict_proba(Q), mlknn(n_neighbors=5).fit(X, Y).predict_proba(Q))

    cv = KFold(3)
    search = GridSearchCV(model, {"estimator__n_neighbors": [2, 6]}, cv=cv).fit(X, Y)
    plain = GridSearchCV(mlknn(), {"n_neighbors": [2, 6]}, cv=cv).fit(X, Y)
    np.testing.assert_allclose(search.cv_results_["mean_test_score"], plain.cv_results_["mean_test_score"])
    assert search.best_params_["estimator__n_neighbors"] == plain.best_params_["n_neighbors"]
    assert repr(model).startswith("DistributedKNN(")


def test_estimator_survives_a_restarted_worker(client):
    # A worker that dies between fit and predict takes its scattered training blocks
    # with it: they are sent again from the client and the block indices refitted.
    X, Y, Q = _problem()
    mlknn = get_estimator_class("mlknn")
    ref = mlknn(n_neighbors=5).fit(X, Y).predict_proba(Q)
    model = DistributedKNN(mlknn(n_neighbors=5), client, train_block=20).fit(X, Y)
    worker = sorted(client.scheduler_info()["workers"])[0]
    client.restart_workers([worker])
    client.wait_for_workers(2, timeout=60)
    np.testing.assert_array_equal(model.predict_proba(Q), ref)
    assert model.train_.blocks.n_blocks == 8


# ---------------------------------------------------------- experiment grid
_COMPARED = ("dataset", "algorithm", "params", "preprocessing", "search", "protocol", "repeat", "fold", "metric", "value")


def _grid():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(120, 4))
    Y = (X @ rng.normal(size=(4, 3)) > 0.2).astype(np.uint8)
    X[10:14] = X[0]
    config = ExperimentConfig(
        datasets=("toy",), algorithms=("mlknn", "brknn"), k=(3, 5),
        protocol=ProtocolConfig(name="kfold", n_splits=3, n_repeats=2),
    )  # fmt: skip
    return config, {"toy": (X, Y)}


def _rows(path):
    with ResultsDB(path) as db:
        return [tuple(r[c] for c in _COMPARED) for r in db.rows()]


@pytest.fixture(scope="module")
def reference_rows(tmp_path_factory):
    config, data = _grid()
    path = tmp_path_factory.mktemp("grid") / "single.db"
    run_experiment(config, path, data=data)
    return _rows(path)


def test_grid_equals_single_machine_and_resumes(client, tmp_path, reference_rows):
    config, data = _grid()
    path = tmp_path / "dask.db"
    summary = run_distributed(config, path, client=client, data=data)
    assert summary["computed"] == summary["total"] == 4 * 6
    assert summary["dask"]["tasks"] == 6 and summary["dask"]["lost_workers"] == 0
    rows = _rows(path)
    assert len(rows) == len(set(rows)) == len(reference_rows)
    assert rows == reference_rows
    again = run_distributed(config, path, client=client, data=data)  # nothing left to do
    assert again["computed"] == 0 and again["dask"]["tasks"] == 0
    assert _rows(path) == reference_rows


def _crash_once(task, X, Y, marker):
    """Kill this worker process the first time any fold task starts (marker file)."""
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return _run_fold_job(task, X, Y)
    time.sleep(0.2)
    os._exit(1)


def test_grid_survives_a_killed_worker(client, tmp_path, reference_rows):
    config, data = _grid()
    marker = tmp_path / "crashed"
    executor = DaskExecutor(client, fold_function=functools.partial(_crash_once, marker=str(marker)))
    summary = run_experiment(config, tmp_path / "fault.db", data=data, executor=executor)
    assert marker.exists()  # a worker really died
    assert summary["computed"] == summary["total"]
    rows = _rows(tmp_path / "fault.db")
    assert len(rows) == len(set(rows)) == len(reference_rows)  # nothing lost, nothing twice
    assert rows == reference_rows
    assert executor.stats["lost_workers"] == 1
    assert executor.stats["rescheduled"] >= 1
    assert "1 worker(s) lost" in executor.report()
    client.wait_for_workers(2, timeout=60)  # the nanny restarted it


def test_grid_task_errors_propagate(client, tmp_path):
    config, data = _grid()
    config = config.with_overrides(k=(200,))  # larger than any training part
    with pytest.raises(ValueError, match="n_neighbors"):
        run_distributed(config, tmp_path / "err.db", client=client, data=data, retries=0)
    with ResultsDB(tmp_path / "err.db") as db:
        assert db.count() == 0


def test_cli_grid_on_a_scheduler(client, tmp_path, capsys):
    from mlknn.cli._main import main

    args = ["run", "simulated2d", "--algorithms", "mlknn,brknn", "--k", "5", "--protocol", "holdout", "--repeats", "2"]
    main(args + ["--db", str(tmp_path / "single.db")])
    main(args + ["--db", str(tmp_path / "dask.db"), "--scheduler", client.scheduler.address])
    out = capsys.readouterr().out
    assert "dask: 2 fold task(s); 0 worker(s) lost" in out
    assert _rows(tmp_path / "dask.db") == _rows(tmp_path / "single.db")
    with pytest.raises(SystemExit):
        main(args + ["--db", str(tmp_path / "x.db"), "--scheduler", client.scheduler.address, "--dask-workers", "2"])
    assert "exactly one of --scheduler" in capsys.readouterr().err
