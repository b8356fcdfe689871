"""Shared machinery of the baselines: validation, the one-label wrapper, seeding.

Every baseline subclasses :class:`BaselineClassifier`, which gives it the
multi-label tags (:class:`mlknn.base.MultiLabelMixin`), the input checks of the
project (``validate_data`` + :func:`mlknn.utils._validation.check_label_matrix`)
and the ``predict`` / ``predict_proba`` contract: one ``(n, q)`` array, ``predict``
in the dtype of the Y given to ``fit``.
"""

import numbers
from collections.abc import Callable
from typing import Any, Self, TypeVar, cast

import numpy as np
import scipy.sparse as sp
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from ..base import MultiLabelMixin
from ..utils._docstrings import fill_doc
from ..utils._param_validation import (
    HasMethods,
    Integral,
    Interval,
    Real,
    StrOptions,
    _fit_context,
)
from ..utils._typing import ArrayLike, MatrixLike, NDArray
from ..utils._validation import validate_features

_T = TypeVar("_T")

#: dtypes accepted for X (others are converted to float64).
_X_DTYPES = [np.float64, np.float32]

#: Constraint shared by every ``estimator`` parameter.
ESTIMATOR_CONSTRAINT = [HasMethods(["fit", "predict"]), None]

#: Constraints shared by the baselines' parameters of one meaning (defined once).
POSITIVE_INT = [Interval(Integral, 1, None, closed="left")]
#: The member estimator of a problem transformation and the seed of the members.
MEMBER_CONSTRAINTS = {"estimator": ESTIMATOR_CONSTRAINT, "random_state": ["random_state"]}
#: Stopping rule of the iterative solvers (Rank-SVM, BP-MLL, CML).
SOLVER_CONSTRAINTS = {"max_iter": POSITIVE_INT, "tol": [Interval(Real, 0, None, closed="left")]}
#: Vote of the ensembles (ECC, RAkEL): "hard" majority or "soft" mean, cut at threshold.
VOTING_CONSTRAINTS = {"voting": [StrOptions({"hard", "soft"})], "threshold": [Interval(Real, 0, 1, closed="both")]}

_MAX_SEED = np.iinfo(np.int32).max


#: Citations shared by several baselines' docstrings (``%(name)s`` there; see :func:`cite`).
CITATIONS = {
    "review": 'M.-L. Zhang and Z.-H. Zhou, "A Review on Multi-Label Learning Algorithms",\n'
              "    IEEE TKDE 26(8):1819-1837, 2014",
    "elisseeff2002": 'A. Elisseeff and J. Weston, "A kernel method for multi-labelled\n'
                     '    classification", Advances in Neural Information Processing Systems 14\n'
                     "    (NIPS 2001), pp. 681-687, 2002.",
    "read2011": 'J. Read, B. Pfahringer, G. Holmes and E. Frank, "Classifier chains for\n'
                '    multi-label classification", Machine Learning 85(3):333-359, 2011.',
}


def cite(cls: type[_T]) -> type[_T]:
    """Class decorator: put the :data:`CITATIONS` in place of their ``%(name)s``.

    Plain text replacement (not ``%`` formatting), so other ``%`` and braces in a
    docstring are left alone.
    """
    doc: Any = cls.__doc__
    for name, text in CITATIONS.items():
        doc = doc.replace(f"%({name})s", text)
    cls.__doc__ = doc
    return cls


class BaselineClassifier(MultiLabelMixin, ClassifierMixin, BaseEstimator):
    """Base class of every estimator in :mod:`mlknn.baselines`.

    Subclasses implement ``_fit(X, Y)`` (X validated, Y an (n, q) uint8 matrix),
    ``_predict(X)`` (0/1 array) and ``_predict_proba(X)`` ((n, q) in [0, 1]).
    """

    #: Sparse formats accepted by ``validate_data`` (False: dense only).
    _accept_sparse = ("csr", "csc")

    def _validate_fit_data(self, X: MatrixLike, Y: MatrixLike) -> tuple[MatrixLike, NDArray[np.uint8]]:
        # The fit checks of every mlknn estimator (sets n_labels_, classes_, _y_dtype).
        return self._validate_multilabel_fit(X, Y, accept_sparse=self._accept_sparse, dtype=_X_DTYPES)

    def _validate_predict_data(self, X: MatrixLike) -> MatrixLike:
        check_is_fitted(self)
        return validate_features(self, X, accept_sparse=self._accept_sparse, dtype=_X_DTYPES, reset=False)

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X: MatrixLike, Y: NDArray[Any]) -> Self:
        """Fit from training data.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The training instances.
        Y : array-like of shape (n_samples, n_labels)
            Binary indicator matrix (0/1). A single label is ``(n_samples, 1)``.

        Returns
        -------
        self
        """
        X, Y = self._validate_fit_data(X, Y)
        self._fit(X, Y)
        return self

    @fill_doc
    def predict(self, X: MatrixLike) -> NDArray[Any]:
        """Predicted label sets as a 0/1 indicator matrix.

        Parameters
        ----------
        {X_query}

        Returns
        -------
        ndarray of shape (n_queries, n_labels)
            Same dtype as the Y given to ``fit``.
        """
        X = self._validate_predict_data(X)
        return np.asarray(self._predict(X)).astype(self._y_dtype, copy=False)

    @fill_doc
    def predict_proba(self, X: MatrixLike) -> NDArray[np.float64]:
        """Scores in [0, 1] for each label (see the class docstring for their meaning).

        Parameters
        ----------
        {X_query}

        Returns
        -------
        ndarray of shape (n_queries, n_labels)
            One array, not MultiOutputClassifier's list of per-label arrays.
        """
        X = self._validate_predict_data(X)
        return np.asarray(self._predict_proba(X), dtype=np.float64)


class DecisionScoresMixin:
    """``decision_function``, ``predict`` and ``predict_proba`` from one real score.

    For the baselines whose decision is the sign of a real-valued score per
    label (Rank-SVM and BP-MLL against their threshold model, ML-RBF, MLLS,
    AdaBoost.MH, ThresholdCalibration). Subclasses implement ``_decision(X)``
    on validated X, shape (n, q), positive exactly for the predicted labels;
    then ``predict`` is ``_decision(X) > 0`` and ``predict_proba`` is
    ``logistic(_proba_scale * _decision(X))``, a monotone score in [0, 1] that
    is > 0.5 exactly for the predicted labels (not a calibrated probability).
    """

    #: Multiplier inside the logistic: 2 for scores read as half log-odds
    #: (real AdaBoost) or trained on +-1 targets (ML-RBF, MLLS), else 1.
    _proba_scale = 1.0

    # Provided by the estimator class it is mixed into.
    _validate_predict_data: Callable[[MatrixLike], MatrixLike]
    _decision: Callable[[MatrixLike], NDArray[np.float64]]

    @fill_doc
    def decision_function(self, X: MatrixLike) -> NDArray[np.float64]:
        """Real-valued label scores, positive exactly for the predicted labels.

        Parameters
        ----------
        {X_query}

        Returns
        -------
        ndarray of shape (n_queries, n_labels)
            See the class docstring for what the score is.
        """
        X = self._validate_predict_data(X)
        return self._decision(X)

    def _predict(self, X: MatrixLike) -> NDArray[Any]:
        return (self._decision(X) > 0).astype(np.uint8)

    def _predict_proba(self, X: MatrixLike) -> NDArray[np.float64]:
        return cast(NDArray[np.float64], expit(self._proba_scale * self._decision(X)))


def class_one_proba(P: ArrayLike, classes: ArrayLike) -> NDArray[np.float64]:
    """The column of P(class 1) in a classifier's ``predict_proba`` output, as (n,) float64.

    Zeros when class 1 is not among ``classes`` (a target that never had it).
    """
    P = np.asarray(P)
    hit = np.flatnonzero(np.asarray(classes) == 1)
    if hit.size == 0:
        return np.zeros(P.shape[0])
    return P[:, hit[0]].astype(np.float64, copy=False)


def default_tree(random_state: Any) -> Any:
    """The C4.5 / J48 stand-in of Teng et al. (2025): an unpruned CART tree (entropy is not
    used, scikit-learn's default gini criterion is kept)."""
    return DecisionTreeClassifier(random_state=random_state)


def resolve_estimator(estimator: Any, random_state: Any) -> Any:
    """``estimator`` cloned, or the default decision tree seeded with ``random_state``."""
    if estimator is None:
        return default_tree(random_state)
    return clone(estimator)


def set_random_states(estimator: Any, random_state: Any) -> Any:
    """Give every ``random_state`` parameter of ``estimator`` (nested too) an int
    drawn from ``random_state``, so that ensemble members differ (as scikit-learn's
    bagging does; a seed the user set on the base estimator is overwritten, and
    the ensemble's own ``random_state`` makes the result reproducible)."""
    rng = check_random_state(random_state)
    to_set = {}
    for key in sorted(estimator.get_params(deep=True)):
        if key == "random_state" or key.endswith("__random_state"):
            to_set[key] = int(rng.randint(_MAX_SEED))
    if to_set:
        estimator.set_params(**to_set)
    return estimator


def member_seeds(random_state: Any, n: int) -> NDArray[np.int_]:
    """``n`` int seeds for ensemble members."""
    rng = check_random_state(random_state)
    return cast(NDArray[np.int_], rng.randint(_MAX_SEED, size=n))


def is_int(value: object) -> bool:
    """True for ints (numpy ones too), False for bools and floats."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def hstack(X: MatrixLike, Z: MatrixLike) -> MatrixLike:
    """``[X, Z]`` for dense or sparse X (Z dense)."""
    if sp.issparse(X):
        return sp.hstack([X, sp.csr_matrix(Z)], format="csr")
    return np.hstack([X, Z])


def positive_scores(estimator: Any, X: MatrixLike) -> NDArray[np.float64]:
    """P(class 1) from a fitted binary classifier, as one (n,) array.

    Uses ``predict_proba`` when the estimator has it, else the logistic of
    ``decision_function`` (a monotone score, not a calibrated probability), else
    the 0/1 prediction.
    """
    classes = np.asarray(estimator.classes_)
    if hasattr(estimator, "predict_proba"):
        return class_one_proba(estimator.predict_proba(X), classes)
    if hasattr(estimator, "decision_function"):
        d = np.asarray(estimator.decision_function(X), dtype=np.float64).reshape(-1)
        # decision_function is positive for classes_[1].
        return cast(NDArray[np.float64], expit(d) if classes[-1] == 1 else expit(-d))
    return cast(NDArray[np.float64], (np.asarray(estimator.predict(X)) == 1).astype(np.float64))


class LabelClassifier(ClassifierMixin, BaseEstimator):
    """One binary label: ``estimator`` when y has two classes, a constant otherwise.

    Base classifiers (LogisticRegression, SVC, ...) refuse a training target with
    one class, and sklearn's ClassifierChain indexes ``predict_proba[:, 1]``; this
    wrapper always reports ``classes_ = [0, 1]`` and a two-column
    ``predict_proba``, so that a label that is constant in training (or in a
    bootstrap sample, a cross-validation fold, a pairwise subset) predicts that
    constant.

    Parameters
    ----------
    estimator : classifier
        Fitted only when y has both classes.

    Attributes
    ----------
    estimator_ : classifier or None
        None when the training target was constant.
    constant_ : int or None
        The constant 0/1 prediction, or None.
    classes_ : ndarray, always ``[0, 1]``
    """

    def __init__(self, estimator: Any) -> None:
        self.estimator = estimator

    def fit(self, X: MatrixLike, y: NDArray[Any], **fit_params: Any) -> Self:
        y = np.asarray(y).reshape(-1)
        self.classes_ = np.array([0, 1])
        values = np.unique(y)
        if values.size == 1:
            self.constant_: int | None = int(values[0])
            self.estimator_ = None
        else:
            self.constant_ = None
            self.estimator_ = clone(self.estimator).fit(X, y, **fit_params)
        if hasattr(X, "shape"):
            self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X: MatrixLike) -> NDArray[Any]:
        check_is_fitted(self, "classes_")
        if self.estimator_ is None:
            return np.full(X.shape[0], self.constant_, dtype=np.int64)
        return cast(NDArray[np.int64], (np.asarray(self.estimator_.predict(X)) == 1).astype(np.int64))

    def predict_proba(self, X: MatrixLike) -> NDArray[np.float64]:
        check_is_fitted(self, "classes_")
        if self.estimator_ is None:
            p1 = np.full(X.shape[0], float(cast(int, self.constant_)))  # set when estimator_ is None
        else:
            p1 = positive_scores(self.estimator_, X)
        return np.column_stack([1.0 - p1, p1])

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


def fit_label(estimator: Any, X: MatrixLike, y: NDArray[Any]) -> "LabelClassifier":
    """A fitted :class:`LabelClassifier` for one label."""
    return LabelClassifier(estimator).fit(X, y)


def label_scores(model: Any, X: MatrixLike) -> NDArray[np.float64]:
    """(n,) P(label = 1) from a fitted :class:`LabelClassifier`."""
    return cast(NDArray[np.float64], model.predict_proba(X)[:, 1])


def proba_list_to_matrix(probas: list[Any]) -> NDArray[np.float64]:
    """MultiOutputClassifier's list of (n, 2) arrays -> one (n, q) array of P(1)."""
    return np.column_stack([np.asarray(P)[:, -1] for P in probas])


def member_estimator(estimator: Any, seed: int) -> Any:
    """A fresh ensemble member: the default tree or a re-seeded clone."""
    if estimator is None:
        return resolve_estimator(None, int(seed))
    return set_random_states(clone(estimator), int(seed))


def safe_dot(X: MatrixLike, W: NDArray[Any]) -> NDArray[np.float64]:
    """``X @ W`` as an ndarray (X dense or sparse)."""
    return np.asarray(X @ W)
