"""mlknn.river: river's progressive validation sees the harness's prequential predictions."""

import numpy as np
import pytest

river = pytest.importorskip("river", reason="river is not installed (pip install --only-binary :all: river)")

from river import evaluate, metrics  # noqa: E402

from mlknn import MLkNN  # noqa: E402
from mlknn.experiments import ExperimentConfig, ProtocolConfig, ResultsDB, run_experiment  # noqa: E402
from mlknn.river import RiverMultiLabel  # noqa: E402


class _Recording(RiverMultiLabel):
    """Keeps every prediction river asks for (the test's window on what river sees)."""

    def predict_one(self, x, **kwargs):
        out = super().predict_one(x, **kwargs)
        self.seen = [*getattr(self, "seen", []), out]
        return out


def _emotions():
    from mlknn.experiments._data import load_dataset

    try:
        X, Y = load_dataset("emotions")
    except Exception as exc:  # noqa: BLE001
        pytest.skip(f"emotions not available ($MLKNN_DATA): {exc}")
    X = (X - X.min(axis=0)) / np.where(np.ptp(X, axis=0) > 0, np.ptp(X, axis=0), 1)
    return np.asarray(X, dtype=np.float64), np.asarray(Y.toarray() if hasattr(Y, "toarray") else Y, dtype=np.uint8)


def test_progressive_val_score_equals_the_prequential_protocol(tmp_path):
    X, Y = _emotions()
    batch, q = 100, Y.shape[1]
    config = ExperimentConfig(datasets=("emotions",), algorithms=("mlknn",), k=(10,),
                              protocol=ProtocolConfig("prequential", batch=batch))
    db = ResultsDB(tmp_path / "r.db")
    run_experiment(config, db, data={"emotions": (X, Y)})
    stream = [({f"f{j}": v for j, v in enumerate(row)}, {f"l{l}": bool(v) for l, v in enumerate(labels)})
              for row, labels in zip(X, Y)]
    model = _Recording(MLkNN(n_neighbors=10), batch=batch, n_initial=batch)
    score = evaluate.progressive_val_score(stream, model, metrics.multioutput.MicroAverage(metrics.F1()))
    seen = model.seen
    assert all(p == {} for p in seen[:batch]) and all(len(p) == q for p in seen[batch:])
    P = np.array([[p[f"l{l}"] for l in range(q)] for p in seen[batch:]], dtype=np.uint8)
    # per batch: river's predictions give the harness's stored measures
    for r in db.rows("metric = ?", ("hamming_loss",)):
        rows = slice(r["fold"] * batch, r["fold"] * batch + r["n_test"])
        assert r["n_train"] == batch + r["fold"] * batch
        assert np.mean(P[rows] != Y[batch:][rows]) == pytest.approx(r["value"], abs=1e-12)
    # river's own metric, over the instances it scored, from the same predictions
    micro = metrics.multioutput.MicroAverage(metrics.F1())
    for p, y in zip(seen[batch:], stream[batch:]):
        micro.update(y[1], p)
    tp = int((P & Y[batch:]).sum())
    assert micro.get() == pytest.approx(2 * tp / (P.sum() + Y[batch:].sum()), abs=1e-12)
    assert 0 < score.get() <= micro.get()  # progressive_val_score also scored the empty warm-up predictions


def test_unknown_label_in_y_is_learned_as_unknown():
    X = np.random.RandomState(0).rand(30, 2)
    model = RiverMultiLabel(MLkNN(n_neighbors=3), labels=["a", "b"], batch=1, n_initial=10)
    for i, row in enumerate(X):
        model.learn_one({"u": row[0], "v": row[1]}, {"a": bool(i % 2)} if i % 3 else {"a": True, "b": False})
    assert model.predict_proba_one({"u": 0.5, "v": 0.5}).keys() == {"a", "b"}
    assert model.model_._missing is not None  # "b" was unknown where absent from y
    with pytest.raises(ValueError, match="outside the label space"):
        model.learn_one({"u": 0.1, "v": 0.2}, {"c": True})
