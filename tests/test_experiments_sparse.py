"""Sparse (CSR) label matrices through the harness: splitting, preprocessing, the grid, the DB."""

import math

import numpy as np
import pytest
import scipy.sparse as sp

from mlknn.experiments import (
    ExperimentConfig,
    PreprocessingConfig,
    ProtocolConfig,
    ResultsDB,
    run_experiment,
)
from mlknn.model_selection import RepeatedHoldout, RepeatedMultilabelKFold
from mlknn.model_selection._stratify import (
    stratified_holdout_split,
    stratified_kfold_test_folds,
)
from mlknn.preprocessing import (
    MultiLabelChi2Selector,
    RareLabelFilter,
    label_counts,
    labelled_rows,
    multilabel_chi2,
)


def _refuse_densify(monkeypatch):
    """Make densifying any scipy sparse matrix fail (the sparse path must never)."""

    def refuse(self, *a, **k):
        raise AssertionError(f"densified a sparse matrix of shape {self.shape}")

    for cls in (sp.csr_array, sp.csr_matrix, sp.csc_array, sp.csc_matrix, sp.coo_array, sp.coo_matrix):
        monkeypatch.setattr(cls, "toarray", refuse)
        monkeypatch.setattr(cls, "todense", refuse)


@pytest.fixture
def no_densify(monkeypatch):
    _refuse_densify(monkeypatch)


def _problem(n=90, q=7, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    Y = (X @ rng.normal(size=(d, q)) + rng.normal(size=(n, q)) > 1.0).astype(np.uint8)
    Y[:4] = 0  # unlabelled rows
    Y[4:6, -1] = 1
    Y[6:, -1] = 0  # a rare label (2 positives)
    return X, Y


# ------------------------------------------------------------ stratification
@pytest.mark.parametrize("seed", range(20))
def test_csr_stratification_equals_iterstrat(seed):
    # Labels of very different frequencies (many with one or two examples), so the
    # minimum moves up and down and the kept tie set is rebuilt and updated.
    from iterstrat.ml_stratifiers import (
        MultilabelStratifiedKFold,
        MultilabelStratifiedShuffleSplit,
    )

    rng = np.random.default_rng(seed)
    n, q, n_splits = int(rng.integers(8, 120)), int(rng.integers(2, 30)), int(rng.integers(2, 6))
    Y = (rng.random((n, q)) < rng.random(q) ** 2 * 0.5).astype(np.uint8)
    Y[: n // 4] = 0  # rows without labels go through the last step of the algorithm
    ref = [te for _, te in MultilabelStratifiedKFold(n_splits, shuffle=True, random_state=seed).split(np.zeros((n, 1)), Y)]
    folds = stratified_kfold_test_folds(sp.csr_array(Y), n_splits, seed)
    assert all(np.array_equal(np.flatnonzero(folds == f), te) for f, te in enumerate(ref))
    test_size = float(rng.uniform(0.1, 0.5))
    tr, te = next(iter(MultilabelStratifiedShuffleSplit(1, test_size=test_size, random_state=seed).split(np.zeros((n, 1)), Y)))
    tr2, te2 = stratified_holdout_split(sp.csr_matrix(Y), math.ceil(test_size * n), seed)
    assert np.array_equal(np.sort(tr), tr2) and np.array_equal(np.sort(te), te2)


def test_stratified_splitters_give_the_same_folds_for_csr_and_dense(no_densify):
    _, Y = _problem()
    S = sp.csr_array(Y)
    for cv in (RepeatedMultilabelKFold(3, 2, stratify=True, random_state=1),
               RepeatedHoldout(0.3, 2, stratify=True, random_state=1)):  # fmt: skip
        dense = list(cv.split(np.zeros((len(Y), 1)), Y))
        sparse = list(cv.split(np.zeros((len(Y), 1)), S))
        assert len(dense) == len(sparse)
        for a, b in zip(dense, sparse):
            assert np.array_equal(a.train, b.train) and np.array_equal(a.test, b.test)


def test_stratification_of_a_wide_csr_y(no_densify):
    # q = 50,000 labels, 400 rows: iterstrat would hold a 20 MB dense copy and recount
    # it at every step; the CSR path holds nnz. Empty labels change nothing: the folds
    # are iterstrat's on the 40 labels in use.
    from iterstrat.ml_stratifiers import MultilabelStratifiedKFold

    rng = np.random.default_rng(3)
    n, q = 400, 50_000
    rows = np.repeat(np.arange(n), 3)
    cols = rng.choice(40, size=rows.size)  # 40 labels used, the rest empty
    Y = sp.csr_array((np.ones(rows.size, dtype=np.uint8), (rows, cols)), shape=(n, q))
    Y.sum_duplicates()
    Y.data[:] = 1
    folds = stratified_kfold_test_folds(Y, 4, 0)
    used = np.zeros((n, 40), dtype=np.uint8)
    used[rows, cols] = 1
    ref = MultilabelStratifiedKFold(4, shuffle=True, random_state=0).split(np.zeros((n, 1)), used)
    assert all(np.array_equal(np.flatnonzero(folds == f), te) for f, (_, te) in enumerate(ref))


# ------------------------------------------------------------- preprocessing
def test_label_preprocessing_keeps_csr_and_equals_dense(no_densify):
    _, Y = _problem()
    S = sp.csr_matrix(Y)
    assert np.array_equal(label_counts(S), Y.sum(axis=0)) and np.array_equal(labelled_rows(S), Y.any(axis=1))
    f_dense, f_sparse = RareLabelFilter(3).fit(Y), RareLabelFilter(3).fit(S)
    assert np.array_equal(f_dense.support_, f_sparse.support_) and Y.shape[1] - 1 == f_sparse.support_.size
    out = f_sparse.transform(S)
    assert isinstance(out, sp.csr_matrix) and (out != sp.csr_matrix(f_dense.transform(Y))).nnz == 0


def test_chi2_of_a_sparse_y_equals_dense_and_batches_labels(monkeypatch):
    from mlknn.preprocessing import _preprocess

    rng = np.random.default_rng(1)
    X = rng.random((50, 8))
    Y = (rng.random((50, 6)) < 0.3).astype(np.uint8)
    for Xi in (X, sp.csr_matrix(X * (X > 0.5))):
        np.testing.assert_allclose(multilabel_chi2(Xi, sp.csr_array(Y)), multilabel_chi2(Xi, Y), rtol=1e-12, equal_nan=True)
        dense = MultiLabelChi2Selector(3).fit(Xi, Y)
        monkeypatch.setattr(_preprocess, "_CHI2_LABEL_BATCH", 2)  # 3 label batches, running max
        sparse = MultiLabelChi2Selector(3).fit(Xi, sp.csr_array(Y))
        monkeypatch.undo()
        np.testing.assert_allclose(sparse.scores_, dense.scores_, rtol=1e-12)
        assert np.array_equal(sparse.support_, dense.support_)


# ---------------------------------------------------------------- the grid
ALGORITHMS = ("mlknn", "mlknn:skml", "brknn", "brknna", "bmlknn", "nc", "dmlknn", "br")


def _grid(**kw):
    base = {
        "datasets": ("d",),
        "algorithms": ALGORITHMS,
        "k": (3, 5),
        "protocol": ProtocolConfig("kfold", n_splits=3, n_repeats=1, stratify=True, seed=0),
        "preprocessing": PreprocessingConfig(min_label_count=3),
        "dataset_preprocessing": (("d", PreprocessingConfig(min_label_count=3, label_scope="dataset")),),
    }
    base.update(kw)
    return ExperimentConfig(**base)


def _db_rows(path):
    with ResultsDB(path) as db:
        rows = {(r["algorithm"], r["params"], r["repeat"], r["fold"], r["metric"]): r for r in db.rows()}
        folds = [(f["repeat"], f["fold"], f["train"].tolist(), f["test"].tolist()) for f in db.folds()]
    return rows, folds


@pytest.mark.parametrize("at_k", [(), (1, 3)])
def test_a_csr_y_through_the_grid_gives_the_dense_results(tmp_path, at_k):
    X, Y = _problem()
    cfg = _grid(at_k=at_k)
    run_experiment(cfg, tmp_path / "dense.db", data={"d": (X, Y)})
    run_experiment(cfg, tmp_path / "sparse.db", data={"d": (X, sp.csr_matrix(Y))})
    dense, dense_folds = _db_rows(tmp_path / "dense.db")
    sparse, sparse_folds = _db_rows(tmp_path / "sparse.db")
    assert sparse_folds == dense_folds  # the same stratified folds, after the same prefilter
    assert set(sparse) == set(dense)
    assert {r["n_labels"] for r in dense.values()} == {Y.shape[1] - 1}  # the rare label went
    if at_k:
        assert {"precision@3", "ndcg@1", "psprecision@3"} <= {key[-1] for key in dense}
    for key, r in dense.items():
        got = sparse[key]["value"]
        if np.isnan(r["value"]):
            assert np.isnan(got), key
        else:
            assert got == pytest.approx(r["value"], rel=1e-12, abs=1e-15), key


@pytest.mark.parametrize("limit", ["label budget", "metric cells"])
def test_a_large_label_space_is_evaluated_from_predict_topk(tmp_path, monkeypatch, limit):
    # Dense (n_test, q) scores over a limit: the kNN cells with sparse labels predict
    # the top k instead (dense scores are refused below) and record the @k measures;
    # the numbers equal the dense run's. "label budget": the estimators' dense-label
    # budget is exceeded, evaluate still affords the bipartition measures.
    # "metric cells": over evaluate's DENSE_METRICS_MAX_CELLS too, only the @k
    # measures remain and nothing (n, q) is made (densifying is refused).
    from mlknn.base import KNNMultiLabelBase
    from mlknn.metrics import _evaluate_at_k

    X, Y = _problem(n=120, q=9)
    cfg = _grid(algorithms=("mlknn", "brknn", "bmlknn"), at_k=(1, 3), preprocessing=PreprocessingConfig(),
                dataset_preprocessing=())  # fmt: skip
    run_experiment(cfg, tmp_path / "dense.db", data={"d": (X, Y)})
    dense, _ = _db_rows(tmp_path / "dense.db")

    def no_dense_scores(self, *a, **k):
        raise AssertionError("dense scores requested on the top-k path")

    monkeypatch.setattr(KNNMultiLabelBase, "predict_proba_from_graph", no_dense_scores)
    if limit == "label budget":
        monkeypatch.setenv("MLKNN_DENSE_LABEL_BUDGET", "64")  # bytes
    else:
        monkeypatch.setattr(_evaluate_at_k, "DENSE_METRICS_MAX_CELLS", 100)
        _refuse_densify(monkeypatch)
    run_experiment(cfg, tmp_path / "sparse.db", data={"d": (X, sp.csr_array(Y))})
    sparse, _ = _db_rows(tmp_path / "sparse.db")
    measures = {key[-1] for key in sparse}
    assert {"precision@1", "precision@3", "recall@3", "ndcg@3", "psprecision@1", "psndcg@3"} <= measures
    assert not measures & {"ranking_loss", "coverage", "macro_auc", "one_error"}  # they need every score
    assert ({"hamming_loss", "micro_f1"} <= measures) == (limit == "label budget")
    for key, r in sparse.items():
        assert r["value"] == pytest.approx(dense[key]["value"], rel=1e-12, abs=1e-15, nan_ok=True), key
    with ResultsDB(tmp_path / "sparse.db") as db:
        skipped = [w for w in db.warnings() if w["stage"] == "evaluate" and "MetricSkippedWarning" in w["category"]]
    assert skipped and all("ranking_loss" in w["message"] for w in skipped)


def test_an_extreme_classification_file_runs_by_path_with_sparse_labels(tmp_path):
    # The grid loads the XC text format (CSR Y) by path and keeps Y sparse; the same
    # labels given densely give the same results.
    from mlknn.experiments import load_dataset

    X, Y = _problem(n=60, q=6)
    lines = [f"{X.shape[0]} {X.shape[1]} {Y.shape[1]}"]
    for x, y in zip(X.astype(np.float32), Y):
        lines.append(",".join(str(j) for j in np.flatnonzero(y)) + " " + " ".join(f"{j}:{v!r}" for j, v in enumerate(x.tolist())))
    path = tmp_path / "tiny_xc.txt"
    path.write_text("\n".join(lines) + "\n")
    Xl, Yl = load_dataset(str(path))
    assert sp.issparse(Yl) and (sp.csr_array(Yl) != sp.csr_array(Y)).nnz == 0
    cfg = _grid(datasets=(str(path),), algorithms=("mlknn", "brknn"), dataset_preprocessing=())
    run_experiment(cfg, tmp_path / "file.db")
    run_experiment(cfg, tmp_path / "dense.db", data={str(path): (Xl.toarray() if sp.issparse(Xl) else Xl, Y)})
    got, _ = _db_rows(tmp_path / "file.db")
    want, _ = _db_rows(tmp_path / "dense.db")
    assert set(got) == set(want) and len(got) > 0
    for key, r in want.items():
        assert got[key]["value"] == pytest.approx(r["value"], rel=1e-9, nan_ok=True), key


def test_a_wide_label_space_never_allocates_an_n_by_q_array(tmp_path):
    # q = 100,000 labels (60 in use), 6,000 rows: one (n_test, q) array would take at
    # least 120 MB (uint8; float64 scores 960 MB). The whole grid (stratified split,
    # rare-label counts, search, MLkNN and BR-kNN on sparse labels, top-k
    # evaluation) stays far below: what it holds is O(nnz + n k + q k).
    import tracemalloc

    rng = np.random.default_rng(5)
    n, q = 6000, 100_000
    X = rng.normal(size=(n, 6))
    used = rng.choice(q, size=60, replace=False)
    topic = np.abs(X[:, :3]).argmax(axis=1)  # neighbours share a topic's 20 labels
    rows = np.repeat(np.arange(n), 3)
    cols = used[(topic.repeat(3) * 20 + rng.integers(0, 20, size=rows.size)) % 60]
    Y = sp.csr_array((np.ones(rows.size, dtype=np.uint8), (rows, cols)), shape=(n, q))
    Y.sum_duplicates()
    Y.data[:] = 1
    cfg = _grid(algorithms=("mlknn", "brknn"), k=(3,), at_k=(1, 3), preprocessing=PreprocessingConfig(),
                dataset_preprocessing=(), protocol=ProtocolConfig("holdout", n_repeats=1, stratify=True))  # fmt: skip
    tracemalloc.start()
    try:
        run_experiment(cfg, tmp_path / "r.db", data={"d": (X, Y)})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 100 * 2**20, f"peak {peak / 2**20:.0f} MiB"
    with ResultsDB(tmp_path / "r.db") as db:
        rows = db.rows()
    assert {r["n_labels"] for r in rows} == {q} and {"precision@1", "ndcg@3"} <= {r["metric"] for r in rows}
    assert min(r["value"] for r in rows if r["metric"] == "precision@1") > 2 * 3 / 60  # above chance
