"""Utilities shared by the mlknn subpackages (validation, optional dependencies)."""

from ._optional import check_optional_dependency

__all__ = ["check_optional_dependency"]
