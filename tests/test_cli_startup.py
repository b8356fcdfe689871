"""The command line answers ``--help`` without importing the numerical stack.

``mlknn --help`` and ``mlknn run --help`` should be near-instant; what makes them slow is
importing numpy, scipy and scikit-learn, which only the commands themselves need. The test
checks the set of loaded modules (not a wall-clock time) in a fresh interpreter.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("numpy", "scipy", "sklearn")

_SCRIPT = """
import sys
import mlknn.cli._main as cli

try:
    cli.main({argv!r})
except SystemExit:
    pass
heavy = sorted({{name.split(".")[0] for name in sys.modules}} & set({heavy!r}))
print("HEAVY=" + ",".join(heavy))
"""


def _heavy_modules_after(argv: list[str]) -> tuple[list[str], str]:
    src = str(Path(__file__).resolve().parents[1] / "src")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([src, os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run(
        [sys.executable, "-c", _SCRIPT.format(argv=argv, heavy=HEAVY)],
        capture_output=True, text=True, env=env, timeout=120, check=True,
    )  # fmt: skip
    last = proc.stdout.strip().splitlines()[-1]
    assert last.startswith("HEAVY="), proc.stdout
    names = [n for n in last.removeprefix("HEAVY=").split(",") if n]
    return names, proc.stdout


@pytest.mark.parametrize("argv", [["--help"], ["run", "--help"], ["datasets", "--help"]])
def test_help_imports_no_numerical_library(argv: list[str]) -> None:
    heavy, output = _heavy_modules_after(argv)
    assert "Usage" in output  # the help was really printed
    assert heavy == [], f"mlknn {' '.join(argv)} imported {heavy}"


def test_the_check_sees_a_command_that_needs_numpy() -> None:
    # The same probe after a real (tiny) run does see numpy: the check can fail.
    heavy, _ = _heavy_modules_after(["algorithms"])
    assert "numpy" in heavy or "sklearn" in heavy
