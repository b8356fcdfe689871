"""The ``mlknn`` command line (typer + rich); thin layer over the library."""
