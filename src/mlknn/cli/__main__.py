"""``python -m mlknn.cli``: the ``mlknn`` command."""

from ._main import main

# Guarded so that importing the module (a type or docstring check walking the
# package) does not run the command.
if __name__ == "__main__":
    main()
