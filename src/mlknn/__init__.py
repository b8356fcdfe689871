"""mlknn: multi-label k-nearest-neighbour classification.

Estimators follow scikit-learn's API: ``fit(X, Y)`` with Y a (n, q) 0/1 matrix,
``predict`` and ``predict_proba`` return (n, q) arrays.
"""

from importlib.metadata import PackageNotFoundError, version

from .algorithms._mlknn import MLkNN

try:
    __version__ = version("mlknn")
except PackageNotFoundError:  # running from a source tree
    __version__ = "0.0.0+unknown"

__all__ = ["MLkNN", "__version__", "show_versions"]


def show_versions():
    """Print the versions of mlknn and its main dependencies."""
    import platform

    from importlib.metadata import version as _v

    print(f"mlknn: {__version__}")
    print(f"python: {platform.python_version()} ({platform.machine()})")
    for name in ("numpy", "scipy", "scikit-learn", "liac-arff", "joblib", "faiss-cpu", "hnswlib", "pynndescent", "dask"):
        try:
            print(f"{name}: {_v(name)}")
        except PackageNotFoundError:
            print(f"{name}: not installed")
