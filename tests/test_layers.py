"""The layer rule of docs/DEVELOPING.md: which mlknn package may import which.

Lower layers never import higher ones, so the spine stays one-way:
``utils`` <- ``neighbors`` <- ``hubness`` <- ``base`` <- ``algorithms`` / ``baselines``
<- ``experiments`` <- ``report`` / ``cli``. The rule is read off every ``import`` statement
(including imports inside functions, which is where lazy imports live), so a new dependency
against the rule fails here rather than in a review.
"""

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

import mlknn

ROOT = Path(mlknn.__file__).resolve().parent

#: package (first component below mlknn) -> the mlknn packages it may import.
ALLOWED = {
    "utils": set(),
    "neighbors": {"utils"},
    "hubness": {"neighbors", "utils"},
    "metrics": {"utils"},
    "stats": {"utils"},
    "datasets": {"utils"},
    "model_selection": {"utils"},
    "preprocessing": {"utils", "metrics"},
    "base": {"neighbors", "hubness", "utils"},
    "algorithms": {"base", "neighbors", "hubness", "utils"},
    "baselines": {"base", "utils"},
    "_registry": {"utils"},
    "persistence": {"utils", "__version__"},
    "plots": {"hubness", "metrics", "neighbors", "stats", "utils"},
    # Decision rules wrap any fitted estimator: its public API, the base mixin, the metrics.
    "decision": {"base", "metrics", "model_selection", "utils"},
    # The harness reaches estimators through the registry and their public API only.
    "experiments": {"__version__", "_registry", "base", "datasets", "decision", "metrics", "model_selection",
                    "neighbors", "preprocessing", "stats", "utils"},
    "distributed": {"base", "experiments", "neighbors", "utils", "_registry"},
    "river": {"utils"},
    "report": {"datasets", "experiments", "metrics", "plots", "preprocessing", "stats", "utils", "__version__"},
    # The CLI is thin: estimators by name through the registry, never an algorithm module.
    "cli": {"_registry", "datasets", "distributed", "experiments", "hubness", "metrics", "report", "neighbors",
            "utils", "__version__", "preprocessing", "stats", "model_selection", "persistence"},
    "__init__": {"_registry", "algorithms", "persistence", "base", "utils"},
    "__main__": {"cli"},
}


def _package(path):
    parts = path.relative_to(ROOT).parts
    return parts[0] if len(parts) > 1 else parts[0].removesuffix(".py")


def _imported_packages(path):
    """The mlknn packages (first component below mlknn) that one source file imports."""
    module = ["mlknn", *path.relative_to(ROOT).with_suffix("").parts]
    is_package = module[-1] == "__init__"
    if is_package:
        module = module[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = module[: len(module) - node.level + (1 if is_package else 0)]
                base = ".".join(anchor + ([node.module] if node.module else []))
                targets = [base] if node.module else [f"{base}.{alias.name}" for alias in node.names]
            else:
                targets = [node.module or ""]
        elif isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            continue
        for target in targets:
            parts = target.split(".")
            if parts[0] == "mlknn":
                found.add(parts[1] if len(parts) > 1 else "__init__")
    return found


SOURCES = sorted(ROOT.rglob("*.py"))


def test_every_package_has_a_rule():
    packages = {_package(path) for path in SOURCES}
    assert packages - set(ALLOWED) == set(), "add the new package to ALLOWED (and to docs/DEVELOPING.md)"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_follow_the_layer_rule(path):
    package = _package(path)
    imported = _imported_packages(path) - {package}
    forbidden = imported - ALLOWED.get(package, set())
    assert not forbidden, f"{path.relative_to(ROOT)} ({package}) imports {sorted(forbidden)}, against the layer rule"


def test_the_rule_detects_a_violation(tmp_path, monkeypatch):
    # The checker itself can fail: a fake neighbours module importing the harness.
    fake_root = tmp_path / "mlknn"
    (fake_root / "neighbors").mkdir(parents=True)
    offender = fake_root / "neighbors" / "_bad.py"
    offender.write_text("from ..experiments import run_experiment\n", encoding="utf-8")
    monkeypatch.setattr(__import__(__name__), "ROOT", fake_root)
    assert _imported_packages(offender) == {"experiments"}


# ------------------------------------------------------------ private modules across packages
#: Imports of another package's private module (``mlknn.<pkg>._<module>``) that are
#: allowed, each with its reason. ``utils``'s private modules are open to every
#: package (the shared toolbox: typing aliases, parameter validation, the thread
#: runtime), and the package root (``mlknn/__init__.py``, ``__main__.py``) assembles
#: the public API from its subpackages. Everything else crosses a package through that
#: package's public ``__init__``; a new entry here needs a reason a reviewer accepts.
ALLOWED_PRIVATE = {
    # The numba switch (MLKNN_NUMBA, disable after a failure) that the fused logistic
    # passes share with the exact search, so that one failure turns both off.
    ("algorithms", "neighbors._exact"): "one numba switch for the whole library",
    # The bound evaluate(at_k=...) reads from its own module at call time; the harness reads
    # the same global (not a copy in metrics/__init__) so that one setting moves both.
    ("experiments", "metrics._evaluate_at_k"): "DENSE_METRICS_MAX_CELLS, one mutable bound",
    # partial_fit's exact neighbour-list updates (issue 28 point 1, still moving): they
    # want a public name in mlknn.neighbors once their interface settles.
    ("algorithms", "neighbors._incremental"): "partial_fit's incremental neighbour lists",
}


def _imported_modules(path):
    """Every ``mlknn....`` module a source file names in an import (lazy ones included)."""
    module = ["mlknn", *path.relative_to(ROOT).with_suffix("").parts]
    is_package = module[-1] == "__init__"
    if is_package:
        module = module[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = module[: len(module) - node.level + (1 if is_package else 0)]
                base = ".".join(anchor + ([node.module] if node.module else []))
                found.update([base] if node.module else [f"{base}.{alias.name}" for alias in node.names])
            else:
                base = node.module or ""
                found.add(base)
            # ``from ..pkg import _module`` names a private module too.
            found.update(f"{base}.{a.name}" for a in node.names if node.module and a.name.startswith("_"))
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name.split(".")[0] == "mlknn"}


def _private_crossings(path):
    own = _package(path)
    if own in ("__init__", "__main__"):
        return set()
    out = set()
    for name in _imported_modules(path):
        parts = name.split(".")
        if len(parts) < 3 or parts[1] in (own, "utils"):
            continue
        if any(part.startswith("_") for part in parts[2:]):
            out.add((own, ".".join(parts[1:3])))
    return out


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_private_module_of_another_package(path):
    crossing = {pair for pair in _private_crossings(path) if pair not in ALLOWED_PRIVATE}
    assert not crossing, (
        f"{path.relative_to(ROOT)} imports another package's private module {sorted(c[1] for c in crossing)}: "
        "give the name a public home in that package's __init__ (or justify it in ALLOWED_PRIVATE)"
    )


def test_the_private_allow_list_has_no_stale_entries():
    used = set().union(*(_private_crossings(path) for path in SOURCES))
    assert set(ALLOWED_PRIVATE) <= used, f"remove from ALLOWED_PRIVATE: {sorted(set(ALLOWED_PRIVATE) - used)}"


# ------------------------------------------------------------ no import cycle inside a package
#: Module cycles inside a package that are known, with their reason; can only shrink.
KNOWN_CYCLES = {
    # partial_fit's mixin reads MLkNN's count kernel lazily; MLkNN mixes the mixin in.
    frozenset({"mlknn.algorithms._mlknn", "mlknn.algorithms._partial_fit"}),
}


def _module_name(path):
    parts = ["mlknn", *path.relative_to(ROOT).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _package_cycles():
    """Strongly connected sets of two or more modules of one package (its __init__ aside),
    over every import statement (lazy and TYPE_CHECKING ones included)."""
    names = {_module_name(path): path for path in SOURCES}

    def resolve(name):
        while name and name not in names:
            name = name.rpartition(".")[0]
        return name

    graph = {}
    for name, path in names.items():
        parent = name.rpartition(".")[0]
        targets = {resolve(t) for t in _imported_modules(path)}
        graph[name] = {t for t in targets if t != name and t != parent and t.rpartition(".")[0] == parent}
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []

    def visit(v):  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(frozenset(component))

    for v in graph:
        if v not in index:
            visit(v)
    return set(cycles)


def test_no_import_cycle_inside_a_package():
    cycles = _package_cycles()
    assert cycles <= KNOWN_CYCLES, f"import cycles inside a package: {sorted(map(sorted, cycles - KNOWN_CYCLES))}"
    assert KNOWN_CYCLES <= cycles, f"fixed, remove from KNOWN_CYCLES: {sorted(map(sorted, KNOWN_CYCLES - cycles))}"


def test_the_cycle_check_detects_a_cycle(tmp_path, monkeypatch):
    fake_root = tmp_path / "mlknn"
    (fake_root / "pkg").mkdir(parents=True)
    (fake_root / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (fake_root / "pkg" / "_a.py").write_text("from ._b import x\n", encoding="utf-8")
    (fake_root / "pkg" / "_b.py").write_text("def f():\n    from ._a import y\n", encoding="utf-8")
    monkeypatch.setattr(__import__(__name__), "ROOT", fake_root)
    monkeypatch.setattr(__import__(__name__), "SOURCES", sorted(fake_root.rglob("*.py")))
    assert _package_cycles() == {frozenset({"mlknn.pkg._a", "mlknn.pkg._b"})}


# ------------------------------------------------------------ comments say why, in words
#: A duration (a number with a unit of time or of speed). ``2 s + m`` and ``2 s)`` are
#: formulas (the smoothing s of the count estimators), not durations.
_TIMING = re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|µs|us|seconds|GFLOP/s|s(?!\s*[-+*/)=,^]))(?![\w/])")


def _comment_and_docstring_lines(path):
    text = path.read_text(encoding="utf-8")
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT:
            yield tok.start[0], tok.string
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                yield getattr(node, "lineno", 1), doc


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_timing_figures_in_source_comments(path):
    # Timings belong in docs/performance.md (with how and when they were measured),
    # history in the CHANGELOG: a comment says why in words, and stays true.
    found = [(line, m.group(0)) for line, text in _comment_and_docstring_lines(path) for m in _TIMING.finditer(text)]
    assert not found, f"{path.relative_to(ROOT)}: timing figures {found} (move them to docs/performance.md)"


def test_the_timing_rule_tells_durations_from_formulas():
    assert _TIMING.search("# measured 0.2 s on one thread") and _TIMING.search("(35 ms instead of 320 ms)")
    assert not _TIMING.search("(s + u) / (2 s + n)") and not _TIMING.search("(O_k(x) + 2 s)")
