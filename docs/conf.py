"""Sphinx configuration of mlknn's documentation site.

Build locally with ``.venv/bin/pip install -e '.[docs]'`` then
``.venv/bin/sphinx-build -W --keep-going -b html docs docs/_build/html``.

The API reference is generated at build time from every public subpackage's ``__all__``
(:func:`write_api_pages`), so a name added to an ``__all__`` appears in the reference without
editing this site, and a name whose docstring does not render is a build error.
"""

import importlib
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "src"))

import mlknn  # noqa: E402

project = "mlknn"
author = "the mlknn developers"
copyright = "2026, the mlknn developers"
release = mlknn.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "auto_examples/*.ipynb", "auto_examples/*.py", "auto_examples/*.zip",
                    "auto_examples/*.json", "auto_examples/*.md5", "**.ipynb_checkpoints"]
templates_path = ["_templates"]
myst_enable_extensions = ["dollarmath", "amsmath", "deflist"]
myst_heading_anchors = 3
# The design notes link to each other and to repository files (``../src/...``,
# ``benchmarks/results.md``) as they do on GitHub; such links are not site pages.
suppress_warnings = ["myst.xref_missing", "myst.header", "myst.xref_ambiguous"]

autosummary_generate = True
# No "Bases:" line (show-inheritance off): the estimators' bases are private mixins (mlknn.base._...), which mean
# nothing to a reader of the class page.
autodoc_default_options = {"members": True, "inherited-members": False}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

intersphinx_mapping = {
    "python": ("https://docs.python.org/3", None),
    "numpy": ("https://numpy.org/doc/stable", None),
    "scipy": ("https://docs.scipy.org/doc/scipy", None),
    "sklearn": ("https://scikit-learn.org/stable", None),
}
# The build machine may have no network: intersphinx then only warns, so it is off unless asked.
if not os.environ.get("MLKNN_DOCS_INTERSPHINX"):
    intersphinx_mapping = {}

# MathJax renders the equations ($...$ and $$...$$, MyST's dollarmath). The default loads it
# from a CDN; MLKNN_DOCS_MATHJAX names a local MathJax.js instead (Debian's libjs-mathjax,
# MathJax 2), for a build checked offline in a browser (.ci/run).
if os.environ.get("MLKNN_DOCS_MATHJAX"):
    mathjax_path = "file://" + str(Path(os.environ["MLKNN_DOCS_MATHJAX"]).resolve()) + "?config=TeX-AMS-MML_HTMLorMML"
    # MathJax 2 reads its own configuration: render the elements MyST marks as math inside
    # the containers it marks to be ignored (MathJax 3+ gets the same from MyST itself).
    mathjax2_config = {"tex2jax": {"processClass": "tex2jax_process|mathjax_process|math|output_area",
                                   "ignoreClass": "tex2jax_ignore|mathjax_ignore"}}

html_theme = "pydata_sphinx_theme"
html_title = f"mlknn {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    # The gallery's pages are code and figures: no "on this page" column there, so lines of
    # 88 characters fit at 1280 px (with it, about 70 do).
    "secondary_sidebar_items": {"auto_examples/*": []},
}
html_static_path = ["_static"]
html_css_files = ["mlknn.css"]



def _stop(message):
    # Sphinx answers any error raised here (ConfigError, SystemExit) with its crash report
    # and a request to file an issue with Sphinx; a missing data folder is the user's to fix,
    # so it gets one line and exit status 2 instead.
    sys.stderr.write(f"docs: {message}\n")
    sys.stderr.flush()
    os._exit(2)


def _absolute_data_folder():
    """Make ``$MLKNN_DATA`` absolute, or stop the build with one line saying what to set.

    The gallery runs each example from the examples' folder, so a relative path (as the
    README's commands write it) is resolved here against the folder sphinx-build was started
    in (the shell's ``$PWD``: Sphinx reads this file from the docs folder).
    """
    value = os.environ.get("MLKNN_DATA")
    if not value:
        _stop("set MLKNN_DATA to the benchmark-data folder, which the gallery's examples read "
              "(for example MLKNN_DATA=../shared/datasets)")
    start = Path(os.environ.get("PWD") or os.getcwd())
    path = (start / Path(value).expanduser()).resolve()
    if not path.is_dir():
        _stop(f"MLKNN_DATA={value} is not a folder (looked in {path})")
    os.environ["MLKNN_DATA"] = str(path)


_absolute_data_folder()

# Examples run at build time; the dataset examples read $MLKNN_DATA (made absolute above).
sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "remove_config_comments": True,
    "abort_on_example_error": True,
    "matplotlib_animations": False,
    "reset_modules_order": "both",
}

#: The public subpackages documented in the reference, with one line each.
API_MODULES = {
    "mlknn": "The kNN family, persistence and versions.",
    "mlknn.baselines": "The classic multi-label baselines.",
    "mlknn.neighbors": "Neighbour backends and the neighbour graph.",
    "mlknn.hubness": "Hubness measures and reductions.",
    "mlknn.metrics": "Multi-label metrics and ``evaluate``.",
    "mlknn.datasets": "Loaders, the dataset cache and synthetic data.",
    "mlknn.model_selection": "Cross-validation protocols.",
    "mlknn.preprocessing": "Per-fold preprocessing.",
    "mlknn.experiments": "Experiment grids, the results database and reproduction presets.",
    "mlknn.stats": "Statistical tests of the literature.",
    "mlknn.decision": "Decision rules: tuned thresholds, calibration, conformal label sets.",
    "mlknn.plots": "Displays.",
    "mlknn.report": "The experiment report.",
    "mlknn.distributed": "Dask: graphs, estimators and grids on a cluster.",
    "mlknn.river": "mlknn's estimators as river multi-label classifiers (streams).",
    "mlknn.utils": "Utilities: optional dependencies and validation helpers.",
}


def _documented_names(module):
    # Constants (dicts, tuples) in __all__ have no docstring of their own worth a page.
    names = []
    for name in getattr(module, "__all__", []):
        if name.startswith("__"):
            continue
        obj = getattr(module, name)
        if callable(obj):
            names.append(name)
    return sorted(names, key=str.lower)


def write_api_pages():
    """Write ``api/<module>.rst`` with one autosummary table per public subpackage."""
    out = HERE / "api"
    out.mkdir(exist_ok=True)
    index = ["API reference", "=============", "",
             "Every public name, by package; each page lists its names with a one-line summary.", "",
             ".. list-table::", "   :widths: 30 70", ""]
    toctree = ["", ".. toctree::", "   :hidden:", ""]
    for modname, blurb in API_MODULES.items():
        try:
            module = importlib.import_module(modname)
        except ImportError:  # a package whose optional dependency is missing (river) has no page
            continue
        names = _documented_names(module)
        index += [f"   * - :doc:`{modname}`", f"     - {blurb} {len(names)} names."]
        toctree.append(f"   {modname}")
        lines = [modname, "=" * len(modname), "", blurb, "", f".. currentmodule:: {modname}", "",
                 ".. autosummary::", "   :toctree: generated", "   :nosignatures:", ""]
        lines += [f"   {name}" for name in names]
        (out / f"{modname}.rst").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (out / "index.rst").write_text("\n".join(index + toctree) + "\n", encoding="utf-8")


# At import time: autosummary reads the pages when the builder starts, before any hook of ours.
write_api_pages()


def _skip_foreign_members(app, what, name, obj, skip, options):
    # Methods inherited from scikit-learn (score, get_params, the metadata-routing
    # set_*_request generated on every estimator) are documented by scikit-learn; their
    # docstrings cross-reference its site, which this one does not build.
    module = getattr(obj, "__module__", None) or ""
    if name.startswith("set_") and name.endswith("_request"):
        return True
    if callable(obj) and module and not module.startswith("mlknn"):
        return True
    return None


def setup(app):
    app.connect("autodoc-skip-member", _skip_foreign_members)
