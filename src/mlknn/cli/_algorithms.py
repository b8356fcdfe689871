"""``mlknn algorithms``: the names ``mlknn run`` accepts, their aliases and what each computes."""

import re
from typing import Any

from rich.console import Console


def _summary(doc: str) -> str:
    """A docstring's summary paragraph on one line, without citations in parentheses or RST markup."""
    paragraph = " ".join(doc.strip().split("\n\n")[0].split())
    paragraph = re.sub(r"\s*\([^()]*\b(19|20)\d\d\b[^()]*\)", "", paragraph)
    return paragraph.replace("``", "").rstrip(".")


def algorithm_rows() -> list[dict[str, Any]]:
    """One dict per registered name: ``name``, ``family``, ``class`` and a one-line ``description``.

    The description is the first line of the class's docstring; a harness alias
    (``mlknn:skml``) gets its own row, described by what it fixes.
    """
    from .._registry import ESTIMATORS, KNN_ESTIMATORS, get_estimator_class
    from ..experiments import ALIASES, VARIANTS

    rows = []
    for name in sorted(ESTIMATORS, key=lambda n: (n not in KNN_ESTIMATORS, n)):
        cls = get_estimator_class(name)
        summary = _summary(cls.__doc__ or "")
        family = "kNN" if name in KNN_ESTIMATORS else "baseline"
        rows.append({"name": name, "family": family, "class": cls.__name__, "description": summary})
        for (base, variant), fixed in ALIASES.items():
            if base == name and variant is not None:
                what = VARIANTS.get((base, variant), "").split(":", 1)[-1].strip()
                first = what.split(". ")[0].split(": ")[0].split(" (")[0]
                params = ", ".join(f"{k}={v!r}" for k, v in fixed.items())
                rows.append({"name": f"{base}:{variant}", "family": "alias",
                             "class": f"{cls.__name__}({params})", "description": first})
    return rows


def algorithms_command() -> None:
    """List the algorithms `mlknn run --algorithm/--algorithms` accepts, with their aliases."""
    console = Console()
    rows = algorithm_rows()
    width = max(len(r["name"]) for r in rows) + 2
    titles = {"kNN": "kNN methods (mlknn)", "baseline": "baselines (mlknn.baselines)"}
    family = None
    for row in rows:
        if row["family"] != "alias" and row["family"] != family:
            family = row["family"]
            console.print(("" if family == "kNN" else "\n") + titles[family], style="bold")
        if row["family"] == "alias":
            text = f"alias: {row['class']}, {row['description']}"
        else:
            text = f"{row['class']}: {row['description']}"
        console.print(f"  {row['name']:<{width}}{text}", markup=False, highlight=False, soft_wrap=True)
    console.print("\nA grid takes several (--algorithms mlknn,dmlknn); parameters: --param name=v1,v2 (every algorithm "
                  "with that parameter) or --param algo.name=v. Each class's page of the API reference lists them.",
                  markup=False, highlight=False, soft_wrap=True)
