"""The harness's ``missing_labels`` setting: seeded hidden training entries, unknown to the
estimators that learn from incomplete labels and 0 to the others."""

import json

import numpy as np
import pytest
import scipy.sparse as sp

from mlknn import BRkNN, MLkNN
from mlknn.datasets import make_multilabel
from mlknn.experiments import ExperimentConfig, PreprocessingConfig, ProtocolConfig, ResultsDB, run_experiment
from mlknn.experiments._missing import hide_labels
from mlknn.metrics import evaluate


def test_hide_labels_seeded_and_container_independent():
    Y = make_multilabel(n_samples=400, n_labels=6, random_state=0).Y
    a, hidden = hide_labels(Y, 0.3, seed=1, repeat=2)
    b, again = hide_labels(Y, 0.3, seed=1, repeat=2)
    assert np.array_equal(hidden, again) and np.array_equal(a, b)
    assert not np.array_equal(hidden, hide_labels(Y, 0.3, seed=1, repeat=3)[1])
    rows = np.array([5, 17, 3])  # a row keeps its hidden entries in any training part
    assert np.array_equal(hide_labels(Y[rows], 0.3, seed=1, repeat=2, rows=rows)[1], hidden[rows])
    # binomial tolerance: 2400 entries at p = 0.3, 5 standard deviations
    assert abs(hidden.mean() - 0.3) < 5 * np.sqrt(0.3 * 0.7 / hidden.size)
    assert not a[hidden == 1].any() and np.array_equal(a[hidden == 0], Y[hidden == 0])
    sa, shidden = hide_labels(sp.csr_array(Y), 0.3, seed=1, repeat=2)
    assert np.array_equal(shidden.toarray(), hidden) and np.array_equal(sa.toarray(), a)
    assert hide_labels(Y, 0.0, 0)[1] is None


def test_setting_validated_and_keyed():
    with pytest.raises(ValueError, match="'missing_labels' parameter must be a fraction in \\[0, 1\\)"):
        PreprocessingConfig(missing_labels=1.0)
    assert "missing_labels" not in PreprocessingConfig().params()  # earlier keys unchanged
    assert PreprocessingConfig(missing_labels=0.3).params()["missing_labels"] == 0.3


def test_cells_equal_fits_on_the_hidden_fold(tmp_path):
    toy = make_multilabel(n_samples=150, n_features=5, n_labels=4, random_state=3)
    config = ExperimentConfig(
        datasets=("toy",), algorithms=("mlknn", "brknn"), k=(5,),
        params=(("*", "missing_labels", ("ignore", "negative")),),
        protocol=ProtocolConfig("holdout", n_repeats=1, seed=4),
        preprocessing=PreprocessingConfig(missing_labels=0.3),
    )
    db = ResultsDB(tmp_path / "r.db")
    run_experiment(config, db, data={"toy": (toy.X, toy.Y)})
    fold = next(iter(config.protocol.splitter().split(toy.X, toy.Y)))
    Y_tr, hidden = hide_labels(toy.Y[fold.train], 0.3, 4, fold.repeat, fold.train)
    X_tr, X_te, Y_te = toy.X[fold.train], toy.X[fold.test], toy.Y[fold.test]
    for name, cls in (("mlknn", MLkNN), ("brknn", BRkNN)):
        for reading in ("ignore", "negative"):
            est = cls(5, missing_labels=reading).fit(X_tr, Y_tr, Y_missing=hidden)
            expected = evaluate(Y_te, est.predict(X_te), est.predict_proba(X_te))["macro_auc"]
            got = [r["value"] for r in db.rows("metric = ? AND algorithm = ?", ("macro_auc", name))
                   if json.loads(r["params"])["missing_labels"] == reading]
            assert got == [expected], (name, reading)
    aware = [r["value"] for r in db.rows("metric = ? AND algorithm = 'mlknn'", ("hamming_loss",))]
    assert len(set(aware)) == 2  # the two readings differ on this fold


def test_sparse_labels_give_the_dense_numbers(tmp_path):
    """The same hidden entries and the same cells for a CSR Y, estimators with and without missing_labels."""
    toy = make_multilabel(n_samples=150, n_features=5, n_labels=4, random_state=3)
    config = ExperimentConfig(datasets=("toy",), algorithms=("mlknn", "dmlknn", "mlhiknn"), k=(5,),
                              protocol=ProtocolConfig("holdout", n_repeats=1),
                              preprocessing=PreprocessingConfig(missing_labels=0.3))
    values = []
    for i, Y in enumerate((toy.Y, sp.csr_matrix(toy.Y))):
        db = ResultsDB(tmp_path / f"r{i}.db")
        run_experiment(config, db, data={"toy": (toy.X, Y)})
        values.append({(r["algorithm"], r["metric"]): r["value"] for r in db.rows()})
    assert values[0].keys() == values[1].keys()
    for key, value in values[0].items():
        assert value == values[1][key] or (np.isnan(value) and np.isnan(values[1][key])), key


def test_sparse_hiding_makes_no_dense_array_and_hides_the_fraction():
    """q = 50,000: the draw is read in pieces; the peak stays far below one byte per (row, label) entry."""
    import tracemalloc

    n, q, fraction = 600, 50_000, 0.01
    rng = np.random.default_rng(0)
    Y = sp.csr_array(sp.random_array((n, q), density=2e-4, format="csr", rng=rng) > 0).astype(np.float64)
    rows = rng.permutation(2 * n)[:n]  # training rows of a larger dataset
    tracemalloc.start()
    kept, hidden = hide_labels(Y, fraction, seed=5, repeat=1, rows=rows)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < n * q / 2, peak  # a dense uint8 mask alone would be n * q bytes, the float64 draw 8 n q
    assert sp.issparse(hidden) and sp.issparse(kept) and hidden.shape == kept.shape == (n, q)
    # binomial tolerance, 5 standard deviations
    assert abs(hidden.nnz / (n * q) - fraction) < 5 * np.sqrt(fraction * (1 - fraction) / (n * q))
    assert not kept.multiply(hidden).count_nonzero()
    hidden_stored = Y.multiply(hidden).count_nonzero()
    assert kept.count_nonzero() == Y.count_nonzero() - hidden_stored
    # the stored entries are hidden at the same rate as the others
    stored = Y.count_nonzero()
    assert abs(hidden_stored / stored - fraction) < 5 * np.sqrt(fraction * (1 - fraction) / stored)
    # a row keeps its hidden entries in a smaller training part
    assert (hide_labels(Y[:50], fraction, seed=5, repeat=1, rows=rows[:50])[1] != hidden[:50]).nnz == 0
