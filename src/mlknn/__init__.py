"""mlknn: multi-label k-nearest-neighbour classification.

Estimators follow scikit-learn's API: ``fit(X, Y)`` with Y a (n, q) 0/1 matrix,
``predict`` and ``predict_proba`` return (n, q) arrays.

The kNN family is importable from here (``from mlknn import MLkNN, DMLkNN``); the
classic baselines from :mod:`mlknn.baselines`; metrics from :mod:`mlknn.metrics`;
datasets from :mod:`mlknn.datasets`.
"""

from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

from .utils._config import config_context, get_config, set_config

if TYPE_CHECKING:  # the lazy names of __getattr__, for type checkers
    from ._registry import make_estimator
    from .algorithms._bmlknn import BMLkNN, NeighborhoodClassifier
    from .algorithms._brknn import BRkNN, BRkNNa, BRkNNb
    from .algorithms._dmlknn import DMLkNN
    from .algorithms._iblr import IBLR
    from .algorithms._mlhiknn import MLHiKNN
    from .algorithms._mlknn import MLkNN
    from .base import Explanation
    from .persistence import load, save
    from .utils._resources import InsufficientMemoryError, LongFitWarning
    from .utils._validation import FeatureScaleWarning, LabelSpaceTooLargeError

try:
    __version__ = version("mlknn")
except PackageNotFoundError:  # running from a source tree
    __version__ = "0.0.0+unknown"

#: Names imported on first use (module, attribute): importing mlknn loads neither an
#: algorithm module nor scikit-learn, so that the command line starts (and answers --help)
#: without them.
_LAZY = {
    "make_estimator": ("._registry", "make_estimator"),
    "get_estimator_class": ("._registry", "get_estimator_class"),
    "ESTIMATORS": ("._registry", "ESTIMATORS"),
    "KNN_ESTIMATORS": ("._registry", "KNN_ESTIMATORS"),
    "Explanation": (".base", "Explanation"),
    "FeatureScaleWarning": (".utils._validation", "FeatureScaleWarning"),
    "LabelSpaceTooLargeError": (".utils._validation", "LabelSpaceTooLargeError"),
    "InsufficientMemoryError": (".utils._resources", "InsufficientMemoryError"),
    "LongFitWarning": (".utils._resources", "LongFitWarning"),
}

__all__ = [
    "BMLkNN",
    "BRkNN",
    "BRkNNa",
    "BRkNNb",
    "DMLkNN",
    "Explanation",
    "FeatureScaleWarning",
    "IBLR",
    "InsufficientMemoryError",
    "LabelSpaceTooLargeError",
    "LongFitWarning",
    "MLHiKNN",
    "MLkNN",
    "NeighborhoodClassifier",
    "__version__",
    "config_context",
    "get_config",
    "load",
    "make_estimator",
    "save",
    "set_config",
    "show_versions",
]


def __getattr__(name: str) -> Any:
    from importlib import import_module

    if name in _LAZY:
        module, attribute = _LAZY[name]
        return getattr(import_module(module, __name__), attribute)
    from ._registry import ESTIMATORS, KNN_ESTIMATORS, get_estimator_class

    knn_classes = {ESTIMATORS[key][1]: key for key in KNN_ESTIMATORS}
    if name in knn_classes:
        return get_estimator_class(knn_classes[name])
    if name in ("save", "load"):
        from . import persistence

        return getattr(persistence, name)
    raise AttributeError(f"module 'mlknn' has no attribute {name!r}")


def show_versions() -> None:
    """Print the versions of mlknn and its main dependencies.

    See Also
    --------
    mlknn.utils.check_optional_dependency : Names the extra to install for a missing optional package.

    Examples
    --------
    >>> import mlknn
    >>> mlknn.show_versions()  # doctest: +ELLIPSIS
    mlknn: ...
    python: ...
    numpy: ...
    ...
    """
    import platform
    from importlib.metadata import version as _v

    print(f"mlknn: {__version__}")
    print(f"python: {platform.python_version()} ({platform.machine()})")
    for name in ("numpy", "scipy", "scikit-learn", "liac-arff", "joblib", "faiss-cpu", "voyager", "hnswlib", "pynndescent", "dask",
                 "river"):
        try:
            print(f"{name}: {_v(name)}")
        except PackageNotFoundError:
            print(f"{name}: not installed")
