"""Entry point of the ``mlknn`` command.

Library errors are caught here, at the edge, and printed as one line
(``Error: ...``, the form click uses for usage errors) with a non-zero exit;
``MLKNN_DEBUG=1`` shows the full traceback instead. Python warnings raised while
a command runs print as one line each (``Warning: Category: message``), without
the library's file and line.
"""

import os
import sys
import warnings
from collections.abc import Sequence
from typing import TextIO

try:
    import typer
    from rich.console import Console
except ImportError:  # pragma: no cover - typer and rich are core dependencies
    print("The mlknn command needs typer and rich: pip install 'mlknn'", file=sys.stderr)
    raise SystemExit(1) from None

from . import _datasets, _run

app = typer.Typer(
    name="mlknn",
    help="Multi-label kNN classification: run, evaluate, analyse.",
    add_completion=False,
    no_args_is_help=False,
    pretty_exceptions_enable=False,
    # Help texts are plain text: rich markup would eat "[dask]" in "mlknn[dask]".
    rich_markup_mode=None,
)
app.command("run")(_run.run_command)
app.add_typer(_datasets.app, name="datasets")

from . import _experiments  # noqa: E402  (export, report, reproduce)

_experiments.register(app)


from ._algorithms import algorithms_command  # noqa: E402

app.command("algorithms")(algorithms_command)


def _register_optional_commands() -> None:
    # Commands whose modules are written independently; a missing one is skipped.
    try:
        from ._hubness import hubness_command

        app.command("hubness")(hubness_command)
    except ImportError:
        pass
    from ._explain import explain_command

    app.command("explain")(explain_command)


_register_optional_commands()


def _version(value: bool) -> None:
    if value:
        from .. import __version__

        print(f"mlknn {__version__}")
        raise typer.Exit()


@app.callback(invoke_without_command=True)
def _root(
    ctx: typer.Context,
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    """Multi-label kNN classification. Without a command, runs `mlknn run`."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(_run.run_command, data=None, algorithm="mlknn", k=10, seed=0)


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    """One line per warning, without the library's file:line (``warnings.showwarning``)."""
    text = " ".join(str(message).split())
    Console(stderr=True).print(f"Warning: {category.__name__}: {text}", markup=False, highlight=False, soft_wrap=True)


def error_line(exc: BaseException) -> str:
    """The one line printed for an error that reaches the edge of the program (its message,
    without the exception's class name, which tells a user of the command nothing)."""
    message = str(exc).strip()
    if isinstance(exc, KeyError) and len(exc.args) == 1:
        message = str(exc.args[0])
    return f"Error: {message or type(exc).__name__}"


def main(argv: Sequence[str] | None = None) -> None:
    """Run the CLI; turn library errors into one clear line and exit code 1."""
    with warnings.catch_warnings():
        warnings.showwarning = _show_warning
        _main(argv)


def _main(argv: Sequence[str] | None) -> None:
    try:
        rv = app(args=argv, standalone_mode=False)
        # With standalone_mode=False typer *returns* the code of a typer.Exit, and
        # turns Ctrl-C into Exit(130): pass it on as the exit status.
        if isinstance(rv, int) and not isinstance(rv, bool) and rv != 0:
            if rv == 130:
                Console(stderr=True).print("interrupted")
            raise SystemExit(rv)
    except SystemExit:
        raise
    except KeyboardInterrupt:
        Console(stderr=True).print("interrupted")
        raise SystemExit(130) from None
    except Exception as exc:  # noqa: BLE001 - the edge of the program
        # typer >= 0.20 vendors click; recognise its exceptions by their interface.
        if type(exc).__name__ == "Exit":
            raise SystemExit(getattr(exc, "exit_code", 0)) from None
        if hasattr(exc, "show") and hasattr(exc, "exit_code"):
            exc.show()
            raise SystemExit(exc.exit_code) from None
        if type(exc).__name__ == "Abort":
            Console(stderr=True).print("aborted")
            raise SystemExit(1) from None
        if os.environ.get("MLKNN_DEBUG"):
            raise
        Console(stderr=True).print(error_line(exc), markup=False, highlight=False, soft_wrap=True)
        raise SystemExit(1) from None


if __name__ == "__main__":
    main()
