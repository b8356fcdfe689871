"""``python -m mlknn``: the ``mlknn`` command."""

from .cli._main import main

# Guarded so that importing the module (a type or docstring check walking the
# package) does not run the command.
if __name__ == "__main__":
    main()
