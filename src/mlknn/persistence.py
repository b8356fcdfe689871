"""Safe persistence of fitted estimators: arrays in .npz, metadata in JSON.

``save(estimator, path)`` writes one ``.npz`` file (a zip) with no pickled object in
it: every array is a plain numeric (or fixed-width string) array, and the structure
of the estimator is a JSON document stored as a byte array beside them. ``load``
rebuilds the estimator by importing classes by name, **only** from an allow-list of
module prefixes (``mlknn.``, ``sklearn.``, ``numpy``), and sets their attributes; it
never unpickles and never calls a constructor with data from the file.

Integrity: the JSON records the format version and the SHA-256 of every array; a
truncated file, an edited array or a file written by a newer format raises
:class:`PersistenceError` naming the file and the problem.

A model fitted on sparse labels is saved as it is held: the training labels as
CSR arrays (data, indices, indptr), never densified.

Pickle and joblib keep working as for any scikit-learn estimator, but a pickle file
runs code when it is loaded: never load one from an untrusted source.
"""

import hashlib
import importlib
import json
import os
import zipfile
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from .utils._param_validation import validate_params
from .utils._typing import NDArray

#: The arrays of a saved file, by their key in the npz archive.
_Arrays = dict[str, NDArray[Any]]

FORMAT_NAME = "mlknn-estimator"
FORMAT_VERSION = 1
_ALLOWED_PREFIXES = ("mlknn.", "sklearn.", "numpy.")
_META_KEY = "__mlknn_meta__"


class PersistenceError(ValueError):
    """A saved estimator file is unreadable, tampered with, or of an unknown format."""


@validate_params({"estimator": "no_validation", "path": [str, os.PathLike]}, prefer_skip_nested_validation=True)
def save(estimator: object, path: str | os.PathLike[str]) -> Path:
    """Save a (fitted or unfitted) estimator to ``path`` safely.

    Parameters
    ----------
    estimator : object
        An mlknn estimator (or any object built from mlknn / scikit-learn classes,
        numpy arrays, scipy sparse matrices and plain Python values).
    path : str or Path
        Destination; ``.npz`` is appended by numpy when missing, so give it.

    Returns
    -------
    Path
        The written file.

    See Also
    --------
    load : Read the file back.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from mlknn import MLkNN
    >>> from mlknn.datasets import make_multilabel
    >>> from mlknn.persistence import save, load
    >>> data = make_multilabel(n_samples=60, n_features=5, n_labels=3, random_state=0)
    >>> clf = MLkNN(n_neighbors=5).fit(data.X, data.Y)
    >>> path = save(clf, os.path.join(tempfile.mkdtemp(), "mlknn.npz"))
    >>> again = load(path)
    >>> again.get_params() == clf.get_params()
    True
    >>> bool(np.array_equal(again.predict_proba(data.X), clf.predict_proba(data.X)))
    True
    """
    path = Path(path)
    arrays: _Arrays = {}
    tree = _encode(estimator, arrays)
    meta = {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "mlknn_version": _mlknn_version(),
        "tree": tree,
        "sha256": {key: _digest(arr) for key, arr in arrays.items()},
    }
    payload: dict[str, Any] = dict(arrays)
    payload[_META_KEY] = np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as fh:
        np.savez_compressed(fh, **payload)
    tmp.replace(path)  # atomic: a crash never leaves a half-written file at `path`
    return path


@validate_params({"path": [str, os.PathLike]}, prefer_skip_nested_validation=True)
def load(path: str | os.PathLike[str]) -> Any:
    """Load an estimator written by :func:`save`.

    Parameters
    ----------
    path : str or Path
        File written by :func:`save`.

    Returns
    -------
    object
        The estimator, with the same parameters and fitted state.

    Raises
    ------
    PersistenceError
        If the file is not an mlknn estimator file, is truncated or corrupt, was
        modified after saving, or comes from a newer format version.

    See Also
    --------
    save : Write an estimator to such a file.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from mlknn import MLkNN
    >>> from mlknn.datasets import make_multilabel
    >>> from mlknn.persistence import save, load
    >>> data = make_multilabel(n_samples=60, n_features=5, n_labels=3, random_state=0)
    >>> clf = MLkNN(n_neighbors=5).fit(data.X, data.Y)
    >>> path = save(clf, os.path.join(tempfile.mkdtemp(), "mlknn.npz"))
    >>> again = load(path)
    >>> again.get_params() == clf.get_params()
    True
    >>> bool(np.array_equal(again.predict_proba(data.X), clf.predict_proba(data.X)))
    True
    """
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as npz:
            if _META_KEY not in npz.files:
                raise PersistenceError(f"{path}: not an mlknn estimator file (no metadata).")
            meta = json.loads(npz[_META_KEY].tobytes().decode("utf-8"))
            arrays = {key: npz[key] for key in npz.files if key != _META_KEY}
    except PersistenceError:
        raise
    except FileNotFoundError:
        raise
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, KeyError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise PersistenceError(f"{path}: unreadable or truncated estimator file ({exc}).") from exc
    if meta.get("format") != FORMAT_NAME:
        raise PersistenceError(f"{path}: not an mlknn estimator file (format {meta.get('format')!r}).")
    version = meta.get("version")
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise PersistenceError(
            f"{path}: written with format version {version!r}, newer than this mlknn "
            f"understands ({FORMAT_VERSION}); upgrade mlknn."
        )
    expected = meta.get("sha256", {})
    if set(expected) != set(arrays):
        raise PersistenceError(f"{path}: the arrays in the file do not match its metadata (tampered?).")
    for key, arr in arrays.items():
        if _digest(arr) != expected[key]:
            raise PersistenceError(f"{path}: array {key!r} fails its SHA-256 check (tampered or corrupt).")
    try:
        return _decode(meta["tree"], arrays)
    except PersistenceError:
        raise
    except Exception as exc:
        raise PersistenceError(f"{path}: invalid estimator description ({type(exc).__name__}: {exc}).") from exc


# ---------------------------------------------------------------- encoding
def _encode(obj: Any, arrays: _Arrays) -> Any:
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, int):
        return {"__int__": str(obj)} if abs(obj) > 2**53 else obj
    if isinstance(obj, float):
        if np.isfinite(obj):
            return obj
        return {"__float__": repr(obj)}
    if isinstance(obj, np.generic):
        return {"__npscalar__": _add_array(np.asarray(obj), arrays)}
    if isinstance(obj, np.dtype):
        return {"__dtype__": obj.str}
    if isinstance(obj, np.ndarray):
        if obj.dtype.hasobject:
            return {"__objarray__": [_encode(x, arrays) for x in obj.ravel().tolist()], "shape": list(obj.shape)}
        return {"__array__": _add_array(obj, arrays)}
    if sp.issparse(obj):
        csr = obj.tocsr()
        return {
            "__sparse__": {
                "format": obj.format,
                "array": isinstance(obj, sp.sparray),
                "data": _add_array(csr.data, arrays),
                "indices": _add_array(csr.indices, arrays),
                "indptr": _add_array(csr.indptr, arrays),
                "shape": list(csr.shape),
            }
        }
    if isinstance(obj, (list, tuple)):
        return {"__list__" if isinstance(obj, list) else "__tuple__": [_encode(x, arrays) for x in obj]}
    if isinstance(obj, dict):
        if all(isinstance(k, str) for k in obj):
            return {"__dict__": {k: _encode(v, arrays) for k, v in obj.items()}}
        return {"__pairs__": [[_encode(k, arrays), _encode(v, arrays)] for k, v in obj.items()]}
    if isinstance(obj, np.random.RandomState):
        rs_state: Any = obj.get_state()  # legacy tuple: (name, keys, pos, has_gauss, cached)
        return {"__randomstate__": [rs_state[0], _add_array(rs_state[1], arrays), *map(_encode_plain, rs_state[2:])]}
    cls = type(obj)
    qualname = f"{cls.__module__}.{cls.__qualname__}"
    if not qualname.startswith(_ALLOWED_PREFIXES):
        raise TypeError(
            f"save() can store mlknn, scikit-learn and numpy objects only; got an object of "
            f"type {qualname}. Use pickle/joblib for other objects (trusted sources only)."
        )
    if is_dataclass(obj):
        state = {f.name: getattr(obj, f.name) for f in fields(obj)}
    elif hasattr(obj, "__dict__"):
        state = dict(vars(obj))
    else:
        # Extension types without a __dict__ (scikit-learn's Cython tree): store the
        # constructor arguments and state of their __reduce__, as plain data only.
        reduced = obj.__reduce__()
        if not (isinstance(reduced, tuple) and len(reduced) >= 3 and reduced[0] is cls):
            raise TypeError(f"save() cannot store objects of type {qualname}")
        return {
            "__reduced__": qualname,
            "args": _encode(tuple(reduced[1]), arrays),
            "state": _encode(reduced[2], arrays),
        }
    return {"__object__": qualname, "state": {k: _encode(v, arrays) for k, v in state.items()}}


def _encode_plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def _add_array(arr: NDArray[Any], arrays: _Arrays) -> str:
    key = f"a{len(arrays)}"
    # np.ascontiguousarray would turn a 0-d array (a numpy scalar) into shape (1,).
    arrays[key] = arr if arr.flags.c_contiguous else arr.copy(order="C")
    return key


def _digest(arr: NDArray[Any]) -> str:
    h = hashlib.sha256()
    h.update(str(arr.shape).encode())
    if arr.dtype.names:
        # Structured arrays: hash field by field (padding bytes are not data).
        for name in arr.dtype.names:
            h.update(name.encode())
            h.update(np.ascontiguousarray(arr[name]).tobytes())
    else:
        h.update(str(arr.dtype.str).encode())
        h.update(np.ascontiguousarray(arr).tobytes())
    return h.hexdigest()


# ---------------------------------------------------------------- decoding
def _decode(node: Any, arrays: _Arrays) -> Any:
    if node is None or isinstance(node, (bool, int, float, str)):
        return node
    if not isinstance(node, dict) or len(node) == 0:
        raise PersistenceError(f"unexpected node {node!r}")
    if "__int__" in node:
        return int(node["__int__"])
    if "__float__" in node:
        return float(node["__float__"])
    if "__npscalar__" in node:
        return arrays[node["__npscalar__"]][()]
    if "__dtype__" in node:
        return np.dtype(node["__dtype__"])
    if "__array__" in node:
        return arrays[node["__array__"]]
    if "__objarray__" in node:
        items = [_decode(x, arrays) for x in node["__objarray__"]]
        out = np.empty(len(items), dtype=object)
        out[:] = items
        return out.reshape(node["shape"])
    if "__sparse__" in node:
        s = node["__sparse__"]
        cls = sp.csr_array if s["array"] else sp.csr_matrix
        mat = cls((arrays[s["data"]], arrays[s["indices"]], arrays[s["indptr"]]), shape=tuple(s["shape"]))
        return mat.asformat(s["format"])
    if "__list__" in node:
        return [_decode(x, arrays) for x in node["__list__"]]
    if "__tuple__" in node:
        return tuple(_decode(x, arrays) for x in node["__tuple__"])
    if "__dict__" in node:
        return {k: _decode(v, arrays) for k, v in node["__dict__"].items()}
    if "__pairs__" in node:
        return {_decode(k, arrays): _decode(v, arrays) for k, v in node["__pairs__"]}
    if "__randomstate__" in node:
        name, key, *rest = node["__randomstate__"]
        rs = np.random.RandomState()
        rs.set_state((name, arrays[key], *rest))
        return rs
    if "__object__" in node:
        cls = _import_allowed(node["__object__"])
        state = {k: _decode(v, arrays) for k, v in node["state"].items()}
        obj = cls.__new__(cls)
        if is_dataclass(cls):
            for key, value in state.items():
                object.__setattr__(obj, key, value)
        else:
            obj.__dict__.update(state)
        return obj
    if "__reduced__" in node:
        cls = _import_allowed(node["__reduced__"])
        args = _decode(node["args"], arrays)
        if not all(isinstance(a, (int, float, str, bool, np.ndarray, np.generic)) for a in args):
            raise PersistenceError(f"constructor arguments of {node['__reduced__']!r} must be plain data")
        obj = cls(*args)
        obj.__setstate__(_decode(node["state"], arrays))
        return obj
    raise PersistenceError(f"unknown node type {sorted(node)}")


def _import_allowed(qualname: str) -> Any:  # a class
    if not qualname.startswith(_ALLOWED_PREFIXES):
        raise PersistenceError(f"refusing to load class {qualname!r}: not an mlknn/scikit-learn/numpy class")
    module_name, _, attr_path = qualname.partition(".")
    # Find the longest importable module prefix, then walk attributes.
    parts = qualname.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        module_name = ".".join(parts[:cut])
        try:
            obj = importlib.import_module(module_name)
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        if not isinstance(obj, type):
            raise PersistenceError(f"{qualname!r} is not a class")
        return obj
    raise PersistenceError(f"cannot import {qualname!r}")


def _mlknn_version() -> str:
    from . import __version__

    return __version__
