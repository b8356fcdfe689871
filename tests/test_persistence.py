import json
import pickle
import zipfile

import numpy as np
import pytest
from _estimator_checks import make_estimator

import mlknn
from mlknn._registry import available_estimators
from mlknn.persistence import PersistenceError


def _problem():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(70, 5))
    Y = (X[:, :4] + 0.5 * rng.normal(size=(70, 4)) > 0.3).astype(np.uint8)
    return X, Y


def _small(name):
    est = make_estimator(name)
    if "n_neighbors" in est.get_params():
        est.set_params(n_neighbors=5)
    return est


@pytest.mark.parametrize("name", available_estimators())
def test_round_trip_gives_identical_predictions(name, tmp_path):
    X, Y = _problem()
    est = _small(name).fit(X, Y)
    path = mlknn.save(est, tmp_path / "model.npz")
    back = mlknn.load(path)
    assert type(back) is type(est)
    assert back.get_params() == est.get_params() or repr(back) == repr(est)
    np.testing.assert_array_equal(back.predict(X), est.predict(X))
    if hasattr(est, "predict_proba"):
        np.testing.assert_array_equal(back.predict_proba(X), est.predict_proba(X))


def test_pickle_still_works():
    X, Y = _problem()
    est = mlknn.MLkNN(5).fit(X, Y)
    back = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(back.predict_proba(X), est.predict_proba(X))


@pytest.fixture
def saved(tmp_path):
    X, Y = _problem()
    return mlknn.save(mlknn.MLkNN(5).fit(X, Y), tmp_path / "m.npz")


def test_truncated_file_is_a_clear_error(saved):
    data = saved.read_bytes()
    saved.write_bytes(data[: len(data) // 2])
    with pytest.raises(PersistenceError, match="unreadable or truncated"):
        mlknn.load(saved)


def _rewrite(path, edit):
    with zipfile.ZipFile(path) as zf:
        members = {name: zf.read(name) for name in zf.namelist()}
    edit(members)
    with zipfile.ZipFile(path, "w") as zf:
        for name, blob in members.items():
            zf.writestr(name, blob)


def _meta(members):
    from io import BytesIO

    arr = np.load(BytesIO(members["__mlknn_meta__.npy"]))
    return json.loads(arr.tobytes().decode())


def _put_meta(members, meta):
    from io import BytesIO

    buf = BytesIO()
    np.save(buf, np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8))
    members["__mlknn_meta__.npy"] = buf.getvalue()


def test_tampered_array_is_detected(saved):
    def edit(members):
        from io import BytesIO

        key = next(k for k in members if k != "__mlknn_meta__.npy")
        arr = np.load(BytesIO(members[key]))
        arr = arr.copy()
        arr.flat[0] = arr.flat[0] + 1
        buf = BytesIO()
        np.save(buf, arr)
        members[key] = buf.getvalue()

    _rewrite(saved, edit)
    with pytest.raises(PersistenceError, match="SHA-256"):
        mlknn.load(saved)


def test_newer_version_is_refused(saved):
    def edit(members):
        meta = _meta(members)
        meta["version"] = 999
        _put_meta(members, meta)

    _rewrite(saved, edit)
    with pytest.raises(PersistenceError, match="newer than this mlknn"):
        mlknn.load(saved)


def test_foreign_class_is_refused(saved):
    def edit(members):
        meta = _meta(members)
        meta["tree"]["__object__"] = "os.system"
        _put_meta(members, meta)

    _rewrite(saved, edit)
    with pytest.raises(PersistenceError, match="refusing to load class 'os.system'"):
        mlknn.load(saved)


def test_saving_a_foreign_object_is_refused(tmp_path):
    class Custom:
        pass

    with pytest.raises(TypeError, match="mlknn, scikit-learn and numpy objects only"):
        mlknn.save(Custom(), tmp_path / "x.npz")


def test_not_an_estimator_file(tmp_path):
    path = tmp_path / "plain.npz"
    np.savez(path, a=np.arange(3))
    with pytest.raises(PersistenceError, match="not an mlknn estimator file"):
        mlknn.load(path)


def test_numpy_scalars_keep_their_type(tmp_path):
    from sklearn.tree import DecisionTreeClassifier

    X, Y = _problem()
    tree = DecisionTreeClassifier(random_state=0).fit(X, Y[:, 0])
    back = mlknn.load(mlknn.save(tree, tmp_path / "tree.npz"))
    assert back.n_classes_ == tree.n_classes_ and np.ndim(back.n_classes_) == 0
    np.testing.assert_array_equal(back.predict_proba(X), tree.predict_proba(X))
