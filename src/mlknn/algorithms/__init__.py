"""The multi-label kNN algorithms (private modules; public names live in mlknn)."""
