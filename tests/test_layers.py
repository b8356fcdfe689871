"""The layer rule of docs/DEVELOPING.md: which mlknn package may import which.

Lower layers never import higher ones, so the spine stays one-way:
``utils`` <- ``neighbors`` <- ``hubness`` <- ``base`` <- ``algorithms`` / ``baselines``
<- ``experiments`` <- ``report`` / ``cli``. The rule is read off every ``import`` statement
(including imports inside functions, which is where lazy imports live), so a new dependency
against the rule fails here rather than in a review.
"""

import ast
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
