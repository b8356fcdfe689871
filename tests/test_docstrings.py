"""The docstrings of the whole package: runnable examples and uniform sections.

CI runs this file, so every ``Examples`` section in every module of mlknn is executed (the
equivalent of ``pytest --doctest-modules src/mlknn``; the ``__main__`` modules are skipped
because importing them runs the command line), every public class of the estimator
subpackages has the numpydoc sections the GUIDE asks for, and every registered estimator's
documented fitted attributes exist after ``fit`` (``tests/test_numpydoc.py`` checks every
public object with numpydoc itself).
"""

import doctest
import importlib
import importlib.util
import inspect
import pkgutil
import re

import pytest

PACKAGES = ["mlknn.algorithms", "mlknn.hubness", "mlknn.baselines", "mlknn.metrics"]
SECTIONS = ["Parameters", "Attributes", "See Also", "References", "Examples"]


def _modules():
    """Every module of the package, except the ``__main__`` ones (importing them runs the CLI)."""
    pkg = importlib.import_module("mlknn")
    names = ["mlknn"] + [m.name for m in pkgutil.walk_packages(pkg.__path__, prefix="mlknn.")]
    return sorted(n for n in names if n.rsplit(".", 1)[-1] != "__main__")


def _public_classes():
    """Classes exported by the packages (and mlknn itself) and defined in them."""
    found = {}
    for pkg_name in ["mlknn", *PACKAGES]:
        pkg = importlib.import_module(pkg_name)
        for name in getattr(pkg, "__all__", []):
            obj = getattr(pkg, name)
            # exceptions and warnings take their message only (numpydoc checks them in test_numpydoc)
            if (
                inspect.isclass(obj)
                and obj.__module__.startswith(tuple(PACKAGES))
                and not issubclass(obj, (Exception, Warning))
            ):
                found[name] = obj
    return [found[n] for n in sorted(found)]


MODULES = _modules()
CLASSES = _public_classes()

#: Modules whose examples need an optional dependency: skipped, not failed, without it
#: (the examples run wherever the dependency is installed).
NEEDS = {"mlknn.neighbors._faiss": "faiss", "mlknn.neighbors._pynndescent": "pynndescent"}


def test_the_lists_are_not_empty():
    assert len(MODULES) >= 100
    assert {"mlknn.neighbors", "mlknn.datasets", "mlknn.model_selection", "mlknn.stats"} <= set(MODULES)
    names = {c.__name__ for c in CLASSES}
    assert {"MLkNN", "DMLkNN", "MLHiKNN", "IBLR", "BRkNNb", "MutualProximity", "RAkEL", "CML"} <= names


@pytest.mark.parametrize("module_name", MODULES)
def test_examples_run(module_name):
    if module_name in NEEDS:
        pytest.importorskip(NEEDS[module_name], reason=f"the examples of {module_name} need {NEEDS[module_name]}")
    module = importlib.import_module(module_name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} doctest examples failed in {module_name}"


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_class_docstring_has_numpydoc_sections(cls):
    doc = inspect.cleandoc(cls.__doc__ or "")
    missing = [s for s in SECTIONS if not re.search(rf"^{s}\n-{{{len(s)}}}$", doc, re.MULTILINE)]
    assert not missing, f"{cls.__name__} docstring lacks the section(s) {missing}"
    examples = doc.split("Examples\n--------", 1)[1]
    assert ">>> " in examples, f"{cls.__name__}: the Examples section has no runnable example"


def _registry_instances():
    from _estimator_checks import make_estimator
    from test_common import SMALL_PARAMS

    from mlknn._registry import available_estimators

    out = []
    for name in available_estimators():
        params = dict(SMALL_PARAMS.get(name, {}))
        if name == "thresholdcalibration":
            params["estimator"] = make_estimator("br")
        out.append(pytest.param(make_estimator(name, **params), id=name))
    return out


def _fit_backend(cls, **kw):
    from mlknn.datasets import make_multilabel

    return cls(**kw).fit(make_multilabel(n_samples=40, n_features=5, n_labels=3, random_state=0).X)


def _fit_reduction(cls):
    from mlknn.datasets import make_multilabel
    from mlknn.neighbors import BruteNeighbors, build_graph

    X = make_multilabel(n_samples=40, n_features=5, n_labels=3, random_state=0).X
    return cls(n_neighbors=5).fit(build_graph(BruteNeighbors().fit(X), n_neighbors=20), X)


def _fit_preprocessor(make):
    from mlknn.datasets import make_multilabel

    data = make_multilabel(n_samples=40, n_features=5, n_labels=3, random_state=0)
    return make(data.X, data.Y)


def _other_fitted():
    """Fitted backends, hubness reductions and preprocessing steps (built by the test)."""
    from mlknn import hubness, neighbors
    from mlknn import preprocessing as pre

    return [
        pytest.param(lambda: _fit_backend(neighbors.BruteNeighbors), id="BruteNeighbors"),
        pytest.param(lambda: _fit_backend(neighbors.FaissIVFNeighbors, random_state=0), id="FaissIVFNeighbors",
                     marks=pytest.mark.skipif(importlib.util.find_spec("faiss") is None, reason="needs faiss")),
        pytest.param(lambda: _fit_reduction(hubness.LocalScaling), id="LocalScaling"),
        pytest.param(lambda: _fit_reduction(hubness.MutualProximity), id="MutualProximity"),
        pytest.param(lambda: _fit_reduction(hubness.DisSimLocal), id="DisSimLocal"),
        pytest.param(lambda: _fit_preprocessor(lambda X, Y: pre.FeatureScaler().fit(X)), id="FeatureScaler"),
        pytest.param(lambda: _fit_preprocessor(lambda X, Y: pre.RareLabelFilter(2).fit(Y)), id="RareLabelFilter"),
        pytest.param(
            lambda: _fit_preprocessor(lambda X, Y: pre.MultiLabelChi2Selector(2).fit(X, Y)), id="MultiLabelChi2Selector"
        ),
        pytest.param(
            lambda: _fit_preprocessor(lambda X, Y: pre.FoldPreprocessor("minmax", 2, 2).fit(X, Y)),
            id="FoldPreprocessor",
        ),
    ]


def _check_attributes(fitted):
    """Documented ``attr_`` set (unless documented as set "only" sometimes), and set ones documented."""
    ClassDoc = pytest.importorskip("numpydoc.docscrape", reason="pip install numpydoc (in the dev extra)").ClassDoc
    documented = {
        name.strip(): " ".join(attr.desc) + " " + attr.type
        for attr in ClassDoc(type(fitted))["Attributes"]
        for name in attr.name.split(",")
    }
    missing = [
        name for name, desc in documented.items()
        if name.endswith("_") and not hasattr(fitted, name) and "only" not in desc
    ]  # fmt: skip
    assert not missing, f"{type(fitted).__name__} documents {missing} but fit does not set them"
    # and the other way round: what fit sets is documented (feature_names_in_ is scikit-learn's)
    undocumented = [
        name for name in vars(fitted)
        if name.endswith("_") and not name.startswith("_") and name not in documented
        and name != "feature_names_in_"
    ]  # fmt: skip
    assert not undocumented, f"{type(fitted).__name__}.fit sets {undocumented}, not in its Attributes"


@pytest.mark.parametrize("make_fitted", _other_fitted())
def test_documented_fitted_attributes_of_other_steps(make_fitted):
    """As below, for the neighbour backends, hubness reductions and preprocessing steps."""
    _check_attributes(make_fitted())


@pytest.mark.parametrize("estimator", _registry_instances())
def test_documented_fitted_attributes_exist(estimator):
    """Every ``attr_`` of a registered estimator's Attributes section is set by ``fit``, unless
    its description says when it is set ("only ..."), and every ``attr_`` fit sets is there."""
    import warnings

    from mlknn.datasets import make_multilabel

    data = make_multilabel(n_samples=40, n_features=5, n_labels=3, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tiny data: convergence and scale warnings are expected
        estimator.fit(data.X, data.Y)
    _check_attributes(estimator)


@pytest.mark.parametrize("module_name", MODULES)
def test_no_shared_parameter_placeholder_is_left_unfilled(module_name):
    # A docstring that names a shared description ({Y_true}, ...) must go through
    # mlknn.utils._docstrings.fill_doc; else the placeholder reaches the user.
    from mlknn.utils._docstrings import SHARED_PARAMETERS

    module = importlib.import_module(module_name)
    placeholders = [f"{{{name}}}" for name in SHARED_PARAMETERS]
    left = [
        name
        for name, obj in vars(module).items()
        if (inspect.isfunction(obj) or inspect.isclass(obj)) and getattr(obj, "__module__", None) == module_name
        and any(p in (obj.__doc__ or "") for p in placeholders)
    ]
    assert not left, f"{module_name}: unfilled shared-parameter placeholders in {left} (decorate with fill_doc)"


def test_fill_doc_indents_the_shared_entry_and_leaves_other_braces():
    from mlknn.utils._docstrings import fill_doc

    def f():
        """Summary.

        Parameters
        ----------
        {Y_true}
        ties : {"pessimistic", "optimistic"}
        """

    doc = fill_doc(f).__doc__
    assert "        Y_true : array-like or sparse matrix of shape (n_samples, n_labels)\n" in doc
    assert "            Ground-truth 0/1 indicator matrix.\n" in doc
    assert '{"pessimistic", "optimistic"}' in doc and "{Y_true}" not in doc
