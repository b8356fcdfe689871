"""The docstrings of the whole package: runnable examples and uniform sections.

CI runs this file, so every ``Examples`` section in every module of mlknn is executed (the
equivalent of ``pytest --doctest-modules src/mlknn``; the ``__main__`` modules are skipped
because importing them runs the command line), and every public class of the estimator
subpackages has the numpydoc sections the GUIDE asks for (``tests/test_numpydoc.py`` checks
every public object with numpydoc itself).
"""

import doctest
import importlib
import inspect
import pkgutil
import re

import pytest

PACKAGES = ["mlknn.algorithms", "mlknn.hubness", "mlknn.baselines", "mlknn.metrics"]
SECTIONS = ["Parameters", "Attributes", "See Also", "References", "Examples"]


def _modules():
    """Every module of the package, except the ``__main__`` ones (importing them runs the CLI)."""
    pkg = importlib.import_module("mlknn")
    names = ["mlknn"] + [m.name for m in pkgutil.walk_packages(pkg.__path__, prefix="mlknn.")]
    return sorted(n for n in names if n.rsplit(".", 1)[-1] != "__main__")


def _public_classes():
    """Classes exported by the packages (and mlknn itself) and defined in them."""
    found = {}
    for pkg_name in ["mlknn", *PACKAGES]:
        pkg = importlib.import_module(pkg_name)
        for name in getattr(pkg, "__all__", []):
            obj = getattr(pkg, name)
            # exceptions and warnings take their message only (numpydoc checks them in test_numpydoc)
            if (
                inspect.isclass(obj)
                and obj.__module__.startswith(tuple(PACKAGES))
                and not issubclass(obj, (Exception, Warning))
            ):
                found[name] = obj
    return [found[n] for n in sorted(found)]


MODULES = _modules()
CLASSES = _public_classes()


def test_the_lists_are_not_empty():
    assert len(MODULES) >= 100
    assert {"mlknn.neighbors", "mlknn.datasets", "mlknn.model_selection", "mlknn.stats"} <= set(MODULES)
    names = {c.__name__ for c in CLASSES}
    assert {"MLkNN", "DMLkNN", "MLHiKNN", "IBLR", "BRkNNb", "MutualProximity", "RAkEL", "CML"} <= names


@pytest.mark.parametrize("module_name", MODULES)
def test_examples_run(module_name):
    module = importlib.import_module(module_name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} doctest examples failed in {module_name}"


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_class_docstring_has_numpydoc_sections(cls):
    doc = inspect.cleandoc(cls.__doc__ or "")
    missing = [s for s in SECTIONS if not re.search(rf"^{s}\n-{{{len(s)}}}$", doc, re.MULTILINE)]
    assert not missing, f"{cls.__name__} docstring lacks the section(s) {missing}"
    examples = doc.split("Examples\n--------", 1)[1]
    assert ">>> " in examples, f"{cls.__name__}: the Examples section has no runnable example"
