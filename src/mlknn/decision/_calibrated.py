"""CalibratedProba: each label's posterior mapped through a calibrator fitted out of sample."""

from typing import Any, Self

import numpy as np
from scipy.special import expit
from sklearn.base import clone

# Platt's fit as CalibratedClassifierCV runs it (private in scikit-learn; imported here, not
# in the shared shim, so that importing mlknn does not load sklearn.calibration).
from sklearn.calibration import _sigmoid_calibration as sigmoid_calibration
from sklearn.isotonic import IsotonicRegression
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from ..utils._docstrings import fill_doc
from ..utils._param_validation import HasMethods, StrOptions, _fit_context
from ..utils._typing import MatrixLike, NDArray
from ._base import PosteriorRuleBase, estimator_has


@fill_doc
class CalibratedProba(PosteriorRuleBase):
    """Posteriors recalibrated label by label on out-of-sample posteriors.

    Fits ``estimator`` on all the data and, for each label, a one-dimensional
    calibrator from the training set's out-of-sample posterior of that label to its
    0/1 relevance: scikit-learn's :class:`~sklearn.isotonic.IsotonicRegression`
    (Zadrozny and Elkan 2002) or Platt's sigmoid (Platt 1999), the two calibrators of
    :class:`~sklearn.calibration.CalibratedClassifierCV`. ``predict_proba`` maps the
    fitted estimator's posteriors through them.

    Parameters
    ----------
    estimator : estimator with ``fit`` and ``predict_proba``
        Any multi-label estimator whose ``predict_proba`` returns one (n, q) array.
    method : {"isotonic", "sigmoid"}, default="isotonic"
        Isotonic regression is monotone and free-form (it needs a few hundred
        instances per label not to overfit); the sigmoid ``1 / (1 + exp(a p + b))``
        has two parameters per label, with Platt's smoothed targets.
    cv : "loo", int or cross-validation splitter, default="loo"
        How the out-of-sample posteriors are made:
        :func:`mlknn.model_selection.loo_predict_proba`'s ``cv``.
    {random_state}
        Passed to :func:`mlknn.model_selection.loo_predict_proba` (shuffling folds).

    Attributes
    ----------
    estimator_ : estimator
        ``estimator`` fitted on all the data.
    calibrators_ : list of IsotonicRegression or None
        One fitted isotonic regression per label ("isotonic"); None for "sigmoid".
    sigmoid_coef_ : ndarray of shape (n_labels, 2) or None
        Platt's ``(a, b)`` per label ("sigmoid"); None for "isotonic".
    oof_proba_ : ndarray of shape (n_samples, n_labels)
        The out-of-sample posteriors the calibrators were fitted on.
    n_labels_ : int
        Number of labels q.
    classes_ : list of ndarray
        ``[0, 1]`` for every label.

    See Also
    --------
    mlknn.metrics.expected_calibration_error : How far posteriors are from frequencies.
    mlknn.plots.ReliabilityDisplay : The reliability diagram before and after.
    TunedThresholds : Tuning the decision instead of the posteriors.

    Notes
    -----
    ``predict`` is ``predict_proba > 0.5`` on the calibrated posteriors, which is not
    the wrapped estimator's own rule. Calibration is marginal, per label: it says
    nothing about the joint label set.

    References
    ----------
    J. Platt, "Probabilistic outputs for support vector machines and comparisons to
    regularized likelihood methods", Advances in Large Margin Classifiers, 1999.
    B. Zadrozny and C. Elkan, "Transforming classifier scores into accurate multiclass
    probability estimates", KDD 2002.

    Examples
    --------
    >>> from mlknn import MLkNN
    >>> from mlknn.datasets import make_multilabel
    >>> from mlknn.decision import CalibratedProba
    >>> data = make_multilabel(n_samples=200, n_labels=4, random_state=0)
    >>> clf = CalibratedProba(MLkNN(n_neighbors=5), method="sigmoid").fit(data.X, data.Y)
    >>> clf.predict_proba(data.X[:2]).shape
    (2, 4)
    """

    _parameter_constraints: dict[str, list[Any]] = {
        "estimator": [HasMethods(["fit", "predict_proba"])],
        "method": [StrOptions({"isotonic", "sigmoid"})],
        "cv": [StrOptions({"loo"}), "cv_object"],
        "random_state": ["random_state"],
    }

    def __init__(self, estimator: Any, *, method: str = "isotonic", cv: Any = "loo", random_state: Any = None) -> None:
        self.estimator = estimator
        self.method = method
        self.cv = cv
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X: MatrixLike, Y: MatrixLike) -> Self:
        """Fit ``estimator`` and one calibrator per label.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The training instances.
        Y : array-like of shape (n_samples, n_labels)
            Binary indicator matrix (0/1).

        Returns
        -------
        self
        """
        Y = self._check_labels(Y)
        self.estimator_ = clone(self.estimator).fit(X, Y)
        P = self._out_of_sample_proba(X, Y)
        self.oof_proba_ = P
        # scikit-learn's calibrators are one-dimensional: one fit per label.
        self.calibrators_: list[IsotonicRegression] | None = None
        self.sigmoid_coef_: NDArray[np.float64] | None = None
        if self.method == "isotonic":
            self.calibrators_ = [
                IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(P[:, j], Y[:, j])
                for j in range(Y.shape[1])
            ]
        else:
            self.sigmoid_coef_ = np.array([sigmoid_calibration(P[:, j], Y[:, j]) for j in range(Y.shape[1])],
                                          dtype=np.float64).reshape(-1, 2)
        return self

    def calibrate(self, P: MatrixLike) -> NDArray[np.float64]:
        """Map posteriors of the wrapped estimator through the fitted calibrators.

        Parameters
        ----------
        P : array-like of shape (n, n_labels)
            Posteriors as ``estimator_.predict_proba`` gives them.

        Returns
        -------
        ndarray of shape (n, n_labels)
            Calibrated posteriors in [0, 1].
        """
        check_is_fitted(self)
        P = np.asarray(P, dtype=np.float64)
        if self.sigmoid_coef_ is not None:
            out: NDArray[np.float64] = expit(-(self.sigmoid_coef_[:, 0] * P + self.sigmoid_coef_[:, 1]))
            return out
        calibrators = self.calibrators_ or []
        return np.column_stack([c.predict(P[:, j]) for j, c in enumerate(calibrators)]).astype(np.float64)

    @fill_doc
    def predict_proba(self, X: MatrixLike) -> NDArray[np.float64]:
        """Calibrated posteriors.

        Parameters
        ----------
        {X_query}

        Returns
        -------
        ndarray of shape (n_queries, n_labels)
        """
        return self.calibrate(super().predict_proba(X))

    @fill_doc
    def predict(self, X: MatrixLike) -> NDArray[Any]:
        """Labels whose calibrated posterior exceeds 0.5.

        Parameters
        ----------
        {X_query}

        Returns
        -------
        ndarray of shape (n_queries, n_labels)
            0/1, in the dtype of the Y given to ``fit``.
        """
        return (self.predict_proba(X) > 0.5).astype(self._y_dtype)

    @available_if(estimator_has("predict_topk"))  # type: ignore[untyped-decorator]  # scikit-learn has no stubs
    def predict_topk(self, X: MatrixLike, k: int = 5) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """The wrapped estimator's k best labels, with calibrated scores.

        Isotonic calibration is monotone but not strictly, and each label has its own
        map, so the order is the wrapped estimator's, not re-sorted.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_queries, n_features)
        k : int, default=5

        Returns
        -------
        labels : ndarray of shape (n_queries, k)
        scores : ndarray of shape (n_queries, k)
            The calibrated posteriors of those labels.
        """
        check_is_fitted(self)
        labels, _ = self.estimator_.predict_topk(X, k)
        P = self.predict_proba(X)
        return labels, np.take_along_axis(P, labels, axis=1)
