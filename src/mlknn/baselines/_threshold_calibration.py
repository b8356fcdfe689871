"""Threshold calibration of any multi-label scorer (Zhang and Zhou 2014, section on threshold calibration).

Wraps an estimator's real-valued label scores with the stacking threshold model
of :mod:`._threshold` (Elisseeff and Weston 2002).
"""

from typing import Any

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import check_cv
from sklearn.utils import check_random_state

from ..utils._docstrings import fill_doc
from ..utils._param_validation import HasMethods, StrOptions
from ..utils._typing import MatrixLike, NDArray
from ._base import (
    BaselineClassifier,
    DecisionScoresMixin,
    cite,
    proba_list_to_matrix,
)
from ._binary_relevance import BinaryRelevance
from ._threshold import fit_threshold_model, threshold_margin


def multilabel_scores(
    estimator: Any,
    X: MatrixLike,
    response_method: str = "auto",
) -> tuple[NDArray[np.float64], str]:
    """(n, q) real scores of a fitted multi-label estimator, and which method gave them.

    'auto' prefers ``predict_proba`` (a list of per-label (n, 2) arrays, as
    MultiOutputClassifier returns, is turned into one (n, q) array of P(1)), then
    ``decision_function``.
    """
    methods = ["predict_proba", "decision_function"] if response_method == "auto" else [response_method]
    for name in methods:
        if hasattr(estimator, name):
            S = getattr(estimator, name)(X)
            if isinstance(S, list):
                S = proba_list_to_matrix(S)
            S = np.asarray(S, dtype=np.float64)
            if S.ndim == 1:
                S = S.reshape(-1, 1)
            return S, name
    raise ValueError(
        "The 'estimator' parameter of ThresholdCalibration must have "
        f"{' or '.join(methods)} (real-valued label scores); got {type(estimator).__name__}."
    )


@cite
@fill_doc
class ThresholdCalibration(DecisionScoresMixin, BaselineClassifier):
    """Stacking threshold calibration (Zhang and Zhou 2014) around any multi-label scorer.

    Fits ``estimator``, takes its training scores f(x_i) (in-sample, as the review's section on threshold calibration,
    Rank-SVM and BP-MLL do, or cross-validated with ``cv``), computes each
    instance's error-minimising threshold s(x_i) and fits
    ``t(x) = <w*, f(x)> + b*`` by least squares; predicts
    ``{y_j : f(x, y_j) > t(x)}``.

    Parameters
    ----------
    estimator : multi-label estimator, default=None
        Anything whose ``predict_proba`` or ``decision_function`` gives (n, q)
        scores (or MultiOutputClassifier's list). None: ``BinaryRelevance()``.
    cv : None, int or cross-validation splitter, default=None
        None: in-sample training scores. Otherwise the training scores are
        cross-validated (an int is KFold without shuffling); ``estimator`` is still
        refitted on all the data for prediction.
    response_method : {'auto', 'predict_proba', 'decision_function'}, default='auto'
        Which scores of the wrapped estimator are thresholded; 'auto': predict_proba if
        it has one, else decision_function.
    {random_state}
        Seeds the default ``BinaryRelevance()``. A given ``estimator`` is cloned
        as it is: seed it yourself (its own ``random_state`` is left alone, so
        a deliberate None stays None). The same seeded clone is used for the
        cross-validated scores and the final fit.

    Attributes
    ----------
    estimator_ : estimator
    coef_ : ndarray of shape (n_labels,)
        w*.
    intercept_ : float
        b*.
    response_method_ : str
    n_features_in_ : int
        Number of features seen in ``fit``.
    n_labels_ : int
        Number of labels q.
    classes_ : list of ndarray
        ``[0, 1]`` for every label (scikit-learn's multi-label form).

    See Also
    --------
    RankSVM, BPMLL : rankers that fit the same threshold model on their outputs.

    Notes
    -----
    ``decision_function(X) = f(x) - t(x)`` is positive exactly for the predicted
    labels, and ``predict_proba`` is its logistic function (a monotone score that
    is > 0.5 for the predicted labels, not a probability); the wrapped
    estimator's own scores are ``estimator_.predict_proba`` /
    ``estimator_.decision_function``.

    References
    ----------
    %(elisseeff2002)s

    %(review)s, section on threshold calibration.

    Examples
    --------
    >>> from mlknn.baselines import BinaryRelevance, ThresholdCalibration
    >>> from mlknn.datasets import make_multilabel
    >>> data = make_multilabel(n_samples=100, random_state=0)
    >>> clf = ThresholdCalibration(BinaryRelevance(random_state=0)).fit(data.X, data.Y)
    >>> bool(((clf.decision_function(data.X) > 0) == clf.predict(data.X)).all())
    True
    """

    _parameter_constraints = {
        "estimator": [HasMethods(["fit"]), None],
        "cv": ["cv_object", None],
        "response_method": [StrOptions({"auto", "predict_proba", "decision_function"})],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        estimator: Any = None,
        *,
        cv: Any = None,
        response_method: str = "auto",
        random_state: Any = None,
    ) -> None:
        self.estimator = estimator
        self.cv = cv
        self.response_method = response_method
        self.random_state = random_state

    def _fit(self, X: MatrixLike, Y: NDArray[Any]) -> None:
        if self.estimator is None:
            # One integer seed drawn once, so that the CV models and the final
            # model get the same (deterministic) trees even from a RandomState.
            seed = check_random_state(self.random_state).randint(np.iinfo(np.int32).max)
            proto = BinaryRelevance(random_state=None if self.random_state is None else seed)
        else:
            proto = self.estimator
        self.estimator_ = clone(proto).fit(X, Y)
        F, self.response_method_ = multilabel_scores(self.estimator_, X, self.response_method)
        if F.shape != Y.shape:
            raise ValueError(
                f"The 'estimator' parameter of ThresholdCalibration must give scores of shape "
                f"(n_samples, n_labels) = {Y.shape}; got {F.shape}."
            )
        if self.cv is not None:
            F = np.zeros(Y.shape)
            for train, test in check_cv(self.cv).split(X, Y):
                model = clone(proto).fit(X[train], Y[train])
                F[test] = multilabel_scores(model, X[test], self.response_method_)[0]
        self.coef_, self.intercept_ = fit_threshold_model(F, Y)

    def _scores(self, X: MatrixLike) -> NDArray[np.float64]:
        return multilabel_scores(self.estimator_, X, self.response_method_)[0]

    def _decision(self, X: MatrixLike) -> NDArray[np.float64]:
        """``f(x, y_j) - t(x)``: positive for the predicted labels; shape (n, q)."""
        return threshold_margin(self._scores(X), self.coef_, self.intercept_)
