"""Lazy import of optional dependencies with an install hint."""

import importlib
from types import ModuleType

#: Maps an importable module to the pip extra of mlknn that installs it.
_EXTRAS = {
    "faiss": "faiss",
    "hnswlib": "hnswlib",
    "voyager": "ann",
    "pynndescent": "pynndescent",
    "dask": "dask",
    "distributed": "dask",
    "torch": "gpu",
    "pandas": "pandas",
}


def check_optional_dependency(module_name: str, caller_name: str) -> ModuleType:
    """Import ``module_name`` or raise an ImportError saying what to install.

    Parameters
    ----------
    module_name : str
        The importable name, e.g. ``"faiss"``.
    caller_name : str
        What needs it, used in the message (e.g. ``"neighbors='faiss'"``).

    Returns
    -------
    module
        The imported module.

    See Also
    --------
    mlknn.show_versions : Which optional packages are installed.

    Examples
    --------
    >>> from mlknn.utils import check_optional_dependency
    >>> check_optional_dependency("numpy", "this example").__name__
    'numpy'
    >>> check_optional_dependency("no_such_module", "neighbors='magic'")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ImportError: ...
    """
    try:
        return importlib.import_module(module_name)
    except ImportError as exc:
        extra = _EXTRAS.get(module_name, module_name)
        raise ImportError(
            f"{caller_name} requires the optional dependency '{module_name}', which is "
            f"not installed. Install it with: pip install 'mlknn[{extra}]'"
        ) from exc
