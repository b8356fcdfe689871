"""numpydoc validation of every public class and function (everything in an ``__all__``).

Each object's docstring is checked by :func:`numpydoc.validate.validate` for the sections the
GUIDE asks of a public API: a summary, every parameter documented (and none that does not
exist), Returns for functions, See Also, and a runnable Examples section (the examples run as
doctests in ``tests/test_docstrings.py``). Classes that are result records or exceptions need
no Examples. The public methods mlknn defines on those classes are checked for ``CHECKS``
(summary, parameters, returns). The checks are numpydoc's codes; ``CHECKS`` says which are
enforced.
"""

import importlib
import inspect
import warnings

import pytest

numpydoc_validate = pytest.importorskip("numpydoc.validate", reason="pip install numpydoc (in the dev extra)")

PUBLIC_MODULES = [
    "mlknn", "mlknn.baselines", "mlknn.neighbors", "mlknn.hubness", "mlknn.metrics", "mlknn.datasets",
    "mlknn.model_selection", "mlknn.preprocessing", "mlknn.experiments", "mlknn.stats", "mlknn.plots",
    "mlknn.report", "mlknn.distributed", "mlknn.utils", "mlknn.decision",
]

#: numpydoc codes enforced on every public object.
CHECKS = {
    "GL08",  # the object has a docstring
    "SS01",  # ... with a summary
    "PR01",  # every parameter is documented
    "PR02",  # no documented parameter that does not exist
    "RT01",  # functions document what they return
}
#: enforced as well, except on exceptions, warnings and plain result records.
CHECKS_API = {"SA01", "EX01"}
#: (public name, code) pairs known to fail, each to be fixed, not added to: empty when every
#: public object passes. A pair listed here that passes fails the test, so the list shrinks.
KNOWN_GAPS = set()


def _public_objects():
    seen = {}
    for module_name in PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        for name in getattr(module, "__all__", []):
            if name.startswith("__"):
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                obj = getattr(module, name)
            if not (inspect.isclass(obj) or inspect.isfunction(obj)):
                continue
            qualname = f"{obj.__module__}.{obj.__qualname__}"
            seen.setdefault(qualname, (f"{module_name}.{name}", obj))
    return sorted(seen.items())


OBJECTS = _public_objects()


def _is_record(obj):
    if not inspect.isclass(obj):
        return False
    if issubclass(obj, (Exception, Warning)):
        return True
    # dataclasses and named tuples returned by functions: documented by their fields
    return hasattr(obj, "__dataclass_fields__") or (issubclass(obj, tuple) and hasattr(obj, "_fields"))


def test_there_are_public_objects():
    assert len(OBJECTS) >= 100


@pytest.mark.parametrize("qualname, public", [(q, p) for q, (p, _) in OBJECTS], ids=[p for _, (p, _) in OBJECTS])
def test_numpydoc(qualname, public):
    obj = dict(OBJECTS)[qualname][1]
    result = numpydoc_validate.validate(qualname)
    enforced = CHECKS | (set() if _is_record(obj) else CHECKS_API)
    if inspect.isclass(obj):
        enforced.discard("RT01")
    codes = {code for code, _ in result["errors"] if code in enforced}
    errors = [
        f"{code}: {message}"
        for code, message in result["errors"]
        if code in enforced and (public, code) not in KNOWN_GAPS
    ]
    assert not errors, f"{public}:\n  " + "\n  ".join(errors)
    fixed = sorted(code for p, code in KNOWN_GAPS if p == public and code not in codes)
    assert not fixed, f"{public} now passes {fixed}: remove them from KNOWN_GAPS"


def _public_methods():
    """The public methods mlknn defines on the public classes (inherited ones included, once)."""
    seen = {}
    for _, (public, cls) in OBJECTS:
        if not inspect.isclass(cls):
            continue
        for name in dir(cls):
            if name.startswith("_"):
                continue
            attr = inspect.getattr_static(cls, name)
            func = attr.__func__ if isinstance(attr, (classmethod, staticmethod)) else attr
            if not inspect.isfunction(func) or not func.__module__.startswith("mlknn"):
                continue
            seen.setdefault(f"{func.__module__}.{func.__qualname__}", f"{public}.{name}")
    return sorted(seen.items())


METHODS = _public_methods()


def test_there_are_public_methods():
    assert len(METHODS) >= 100


@pytest.mark.parametrize("qualname, public", METHODS, ids=[p for _, p in METHODS])
def test_numpydoc_methods(qualname, public):
    """Methods: a summary, every parameter documented, Returns when they return (no See Also or
    Examples required: the class's own sections cover them)."""
    result = numpydoc_validate.validate(qualname)
    codes = {code for code, _ in result["errors"] if code in CHECKS}
    errors = [
        f"{code}: {message}"
        for code, message in result["errors"]
        if code in CHECKS and (public, code) not in KNOWN_GAPS
    ]
    assert not errors, f"{public}:\n  " + "\n  ".join(errors)
    fixed = sorted(code for p, code in KNOWN_GAPS if p == public and code not in codes)
    assert not fixed, f"{public} now passes {fixed}: remove them from KNOWN_GAPS"


def _undescribed(obj):
    """Names of the documented parameters of ``obj`` whose description is empty."""
    from numpydoc.docscrape import ClassDoc, FunctionDoc

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        doc = ClassDoc(obj, config={"show_class_members": False}) if inspect.isclass(obj) else FunctionDoc(obj)
    return {p.name for p in doc["Parameters"] if not "".join(p.desc).strip()}


#: (public name, parameter) pairs documented without a word: each to be described, not added
#: to. A pair listed here that has a description fails the test, so the list shrinks.
UNDESCRIBED_GAPS: set[tuple[str, str]] = set()


def _described_targets():
    targets = [(public, obj) for _, (public, obj) in OBJECTS]
    for qualname, public in METHODS:
        parts = qualname.split(".")
        for i in range(len(parts), 0, -1):
            try:
                obj = importlib.import_module(".".join(parts[:i]))
                break
            except ImportError:
                continue
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        targets.append((public, obj))
    return targets


def test_every_parameter_has_a_description():
    """numpydoc's PR01 passes on a parameter listed with its type and nothing else; a user
    reading ``metric : str`` learns nothing, so every listed parameter needs a description."""
    missing, fixed = [], []
    for public, obj in _described_targets():
        names = _undescribed(obj)
        missing += [f"{public}: {name}" for name in sorted(names) if (public, name) not in UNDESCRIBED_GAPS]
        fixed += [f"{public}: {n}" for p, n in UNDESCRIBED_GAPS if p == public and n not in names]
    assert not missing, "parameters without a description:\n  " + "\n  ".join(missing)
    assert not fixed, "now described, remove from UNDESCRIBED_GAPS:\n  " + "\n  ".join(fixed)
