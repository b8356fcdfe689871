"""Type information shipped with mlknn: the py.typed marker and the strict modules' annotations.

The type check itself is ``mypy`` (configured in pyproject.toml, run by .ci/run). These
tests are its cheap guard inside pytest: a module listed as strict in ``[tool.mypy]``
keeps every function and method annotated (what ``disallow_untyped_defs`` and
``disallow_incomplete_defs`` require), read off the live objects with :mod:`inspect`.
"""

import importlib
import inspect
import pkgutil
import tomllib
from pathlib import Path

import pytest

import mlknn

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = Path(mlknn.__file__).resolve().parent


def _expand(pattern):
    """Module names matched by a mypy module pattern (``pkg.*`` = the package and its modules)."""
    if not pattern.endswith(".*"):
        return [pattern]
    pkg = importlib.import_module(pattern[:-2])
    return [pkg.__name__] + [f"{pkg.__name__}.{m.name}" for m in pkgutil.iter_modules(pkg.__path__)]


def _all_modules():
    """Every module of the installed package, subpackages included."""
    names = [mlknn.__name__]
    names += [m.name for m in pkgutil.walk_packages(mlknn.__path__, prefix=f"{mlknn.__name__}.")]
    return names


def _strict_modules():
    """The modules mypy holds to ``disallow_untyped_defs``, as pyproject's [tool.mypy] configures it.

    With the global ``strict = true`` that is every module but those an override exempts
    (``disallow_untyped_defs = false``); otherwise the modules of the overrides that set it.
    """
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    overrides = config.get("overrides", [])
    if config.get("strict"):
        exempt = {m for o in overrides if o.get("disallow_untyped_defs") is False for p in o["module"] for m in _expand(p)}
        return sorted(set(_all_modules()) - exempt)
    patterns = [m for o in overrides if o.get("disallow_untyped_defs") for m in o["module"]]
    return sorted({name for pattern in patterns for name in _expand(pattern)})


STRICT = _strict_modules()


def _functions(module):
    """Every function and method defined in ``module`` (not imported into it)."""
    for obj in vars(module).values():
        if inspect.isfunction(obj) and obj.__module__ == module.__name__:
            yield obj.__qualname__, obj
        elif inspect.isclass(obj) and obj.__module__ == module.__name__:
            for name, member in vars(obj).items():
                # Plain, static and class methods, and property getters.
                func = member.fget if isinstance(member, property) else getattr(member, "__func__", member)
                # Only those written in the module (not typing.Protocol's injected
                # methods, nor the ones @dataclass generates).
                if inspect.isfunction(func) and func.__code__.co_filename == module.__file__:
                    yield f"{obj.__qualname__}.{name}", func


def _missing(func):
    """Parameters (and 'return') of ``func`` without an annotation."""
    sig = inspect.signature(func)
    params = list(sig.parameters.values())
    if params and params[0].name in ("self", "cls"):
        params = params[1:]
    missing = [p.name for p in params if p.annotation is inspect.Parameter.empty]
    if sig.return_annotation is inspect.Signature.empty:
        missing.append("return")
    return missing


def test_py_typed_marker_is_shipped():
    # PEP 561: without the marker, type checkers ignore the annotations of an installed mlknn.
    assert (PACKAGE / "py.typed").is_file()
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "py.typed" in config["tool"]["setuptools"]["package-data"]["mlknn"]


def test_strict_modules_are_listed():
    # The public estimator API is among them (a typo in the config would empty the list).
    for name in ("mlknn", "mlknn.base", "mlknn.algorithms._mlknn", "mlknn.baselines._base", "mlknn.utils._validation"):
        assert name in STRICT


@pytest.mark.parametrize("module_name", STRICT)
def test_strict_module_is_fully_annotated(module_name):
    module = importlib.import_module(module_name)
    bare = {name: m for name, func in _functions(module) if (m := _missing(func))}
    assert not bare, f"{module_name}: unannotated (parameter or 'return'): {bare}"


def test_the_check_fails_on_an_unannotated_function():
    # The checker itself can fail: a planted function without annotations is reported.
    def planted(x, y: int = 0):
        return x

    def typed(x: int) -> int:
        return x

    assert _missing(planted) == ["x", "return"]
    assert _missing(typed) == []
