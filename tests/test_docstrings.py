"""The docstrings of the finished subpackages: runnable examples and uniform sections.

CI runs this file, so every ``Examples`` section in mlknn.algorithms,
mlknn.hubness, mlknn.baselines and mlknn.metrics is executed (the equivalent of
``pytest --doctest-modules`` on those folders), and every public class there has
the numpydoc sections the GUIDE asks for.
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
    names = []
    for pkg_name in PACKAGES:
        pkg = importlib.import_module(pkg_name)
        names.append(pkg_name)
        names += [m.name for m in pkgutil.walk_packages(pkg.__path__, prefix=pkg_name + ".")]
    return sorted(names)


def _public_classes():
    """Classes exported by the packages (and mlknn itself) and defined in them."""
    found = {}
    for pkg_name in ["mlknn", *PACKAGES]:
        pkg = importlib.import_module(pkg_name)
        for name in getattr(pkg, "__all__", []):
            obj = getattr(pkg, name)
            if inspect.isclass(obj) and obj.__module__.startswith(tuple(PACKAGES)):
                found[name] = obj
    return [found[n] for n in sorted(found)]


MODULES = _modules()
CLASSES = _public_classes()


def test_the_lists_are_not_empty():
    assert len(MODULES) >= 15
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
    missing = [s for s in SECTIONS if not re.search(rf"^{s}\n-{{{len(s)}}}$", doc, re.M)]
    assert not missing, f"{cls.__name__} docstring lacks the section(s) {missing}"
    examples = doc.split("Examples\n--------", 1)[1]
    assert ">>> " in examples, f"{cls.__name__}: the Examples section has no runnable example"
