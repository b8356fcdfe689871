"""ConformalLabelSets: label sets with a distribution-free coverage guarantee."""

import math
import warnings
from numbers import Integral
from typing import Any, Self

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import train_test_split
from sklearn.utils.validation import check_is_fitted

from ..utils._docstrings import fill_doc
from ..utils._param_validation import HasMethods, Interval, Real, StrOptions, _fit_context
from ..utils._typing import MatrixLike, NDArray
from ._base import PosteriorRuleBase
from ._conformal_quantiles import fnr_threshold, label_thresholds, set_threshold, smallest_alpha


class UncertifiedLabelWarning(UserWarning):
    """A label has too few relevant calibration instances for ``guarantee="label"``.

    Such a label is always predicted (which covers it with probability 1).
    """


@fill_doc
class ConformalLabelSets(PosteriorRuleBase):
    """Label sets ``{l : p_l >= t_l}`` with a finite-sample, distribution-free guarantee.

    The thresholds come from posteriors of a calibration part the model was not fitted
    on. Under exchangeability of the calibration and test instances (e.g. i.i.d.), for
    a new instance ``(X, Y)`` and ``alpha`` in (0, 1):

    * ``guarantee="set"``: ``P(Y subset of Yhat(X)) >= 1 - alpha``; split conformal
      prediction with the score ``max_{l in Y} (1 - p_l)`` (Vovk et al. 2005).
    * ``guarantee="fnr"``: ``E[|Y minus Yhat(X)| / |Y|] <= alpha`` (an instance with no
      label counts 0): conformal risk control (Angelopoulos et al. 2022).
    * ``guarantee="label"``: for every label l, ``P(l in Yhat(X) | l in Y) >= 1 - alpha``:
      one split conformal quantile per label over its relevant calibration instances
      (class-conditional, "Mondrian").

    The probabilities are over the calibration draw and the new instance together
    (marginal), not for one instance or one calibration set, and they hold with
    ``method="split"``. See the user guide's "Decisions" page.

    Parameters
    ----------
    estimator : estimator with ``fit`` and ``predict_proba``
        Any multi-label estimator whose ``predict_proba`` returns one (n, q) array.
    alpha : float, default=0.1
        Miss rate allowed, in (0, 1); at least ``1 / (n_calibration + 1)``.
    guarantee : {"set", "fnr", "label"}, default="set"
        Which guarantee (above).
    method : {"split", "loo"}, default="split"
        "split": ``estimator`` is fitted on a ``1 - calibration_size`` part and the
        thresholds calibrated on the rest (the guarantee above, exact). "loo": fitted on
        all the data and calibrated on the leave-one-out posteriors of every training
        instance (:func:`mlknn.model_selection.loo_predict_proba`): the jackknife of
        Barber et al. (2021), which uses every instance twice but has no finite-sample
        guarantee in general (the jackknife+ of the same paper, 1 - 2 alpha, needs the
        n leave-one-out models at each test point); its coverage is measured in the
        user guide.
    calibration_size : float or int, default=0.3
        With "split": the calibration part, a fraction in (0, 1) or a number of rows.
    cv : "loo", int or cross-validation splitter, default="loo"
        With "loo": :func:`mlknn.model_selection.loo_predict_proba`'s ``cv`` (an estimator
        without exact leave-one-out posteriors is cross-fitted).
    {random_state}
        Seeds the draw of the calibration part ("split") or the shuffling of the folds ("loo").

    Attributes
    ----------
    estimator_ : estimator
        The fitted estimator giving the posteriors at prediction.
    thresholds_ : ndarray of shape (n_labels,)
        Label l is in the set where ``p_l >= thresholds_[l]`` (one value repeated for
        "set" and "fnr"; ``-inf``: always, ``+inf``: never).
    certified_ : ndarray of shape (n_labels,), bool
        "label": False for labels with fewer than ``1 / alpha - 1`` relevant
        calibration instances, which are always predicted (an
        :class:`UncertifiedLabelWarning` says how many). True everywhere otherwise.
    n_calibration_ : int
        Number of calibration instances.
    calibration_proba_ : ndarray of shape (n_calibration, n_labels)
        The posteriors the thresholds were calibrated on.
    n_labels_ : int
        Number of labels q.
    classes_ : list of ndarray
        ``[0, 1]`` for every label.

    See Also
    --------
    TunedThresholds : Sets that optimise a measure, with no guarantee.
    mlknn.model_selection.loo_predict_proba : The posteriors of ``method="loo"``.

    References
    ----------
    V. Vovk, A. Gammerman and G. Shafer, "Algorithmic Learning in a Random World",
    Springer 2005. A. N. Angelopoulos, S. Bates, A. Fisch, L. Lei and T. Schuster,
    "Conformal Risk Control", ICLR 2024 (arXiv 2022). R. F. Barber, E. J. Candes,
    A. Ramdas and R. J. Tibshirani, "Predictive inference with the jackknife+",
    Annals of Statistics 49(1), 2021.

    Examples
    --------
    >>> from mlknn import MLkNN
    >>> from mlknn.datasets import make_multilabel
    >>> from mlknn.decision import ConformalLabelSets
    >>> data = make_multilabel(n_samples=300, n_labels=4, random_state=0)
    >>> sets = ConformalLabelSets(MLkNN(n_neighbors=5), alpha=0.1, random_state=0).fit(data.X, data.Y)
    >>> sets.predict(data.X[:2]).shape
    (2, 4)
    """

    _parameter_constraints: dict[str, list[Any]] = {
        "estimator": [HasMethods(["fit", "predict_proba"])],
        "alpha": [Interval(Real, 0, 1, closed="neither")],
        "guarantee": [StrOptions({"set", "fnr", "label"})],
        "method": [StrOptions({"split", "loo"})],
        "calibration_size": [Interval(Real, 0, 1, closed="neither"), Interval(Integral, 1, None, closed="left")],
        "cv": [StrOptions({"loo"}), "cv_object"],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        estimator: Any,
        *,
        alpha: float = 0.1,
        guarantee: str = "set",
        method: str = "split",
        calibration_size: float = 0.3,
        cv: Any = "loo",
        random_state: Any = None,
    ) -> None:
        self.estimator = estimator
        self.alpha = alpha
        self.guarantee = guarantee
        self.method = method
        self.calibration_size = calibration_size
        self.cv = cv
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X: MatrixLike, Y: MatrixLike) -> Self:
        """Fit ``estimator`` and calibrate the thresholds.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The training instances.
        Y : array-like of shape (n_samples, n_labels)
            Binary indicator matrix (0/1).

        Returns
        -------
        self

        Raises
        ------
        ValueError
            If ``alpha`` is below ``1 / (n_calibration + 1)``, the smallest miss rate
            the calibration part can certify (the message gives it).
        """
        Y = self._check_labels(Y)
        n = Y.shape[0]
        n_calibration = n if self.method == "loo" else _calibration_rows(self.calibration_size, n)
        if self.alpha < smallest_alpha(n_calibration):
            raise ValueError(
                f"The 'alpha' parameter of ConformalLabelSets must be >= 1 / (n_calibration + 1) = "
                f"{smallest_alpha(n_calibration):.4g} with {n_calibration} calibration instances "
                f"(a smaller miss rate cannot be certified); got {self.alpha!r}. Use a larger "
                f"calibration part or a larger alpha."
            )
        if self.method == "loo":
            self.estimator_ = clone(self.estimator).fit(X, Y)
            P_cal = self._out_of_sample_proba(X, Y)
            Y_cal = Y
        else:
            X_fit, X_cal, Y_fit, Y_cal = train_test_split(X, Y, test_size=n_calibration,
                                                          random_state=self.random_state)
            self.estimator_ = clone(self.estimator).fit(X_fit, Y_fit)
            P_cal = np.asarray(self.estimator_.predict_proba(X_cal), dtype=np.float64)
        self.n_calibration_ = n_calibration
        self.calibration_proba_ = P_cal
        q = Y.shape[1]
        self.certified_ = np.ones(q, dtype=bool)
        if self.guarantee == "set":
            self.thresholds_ = np.full(q, set_threshold(P_cal, Y_cal, self.alpha))
        elif self.guarantee == "fnr":
            self.thresholds_ = np.full(q, fnr_threshold(P_cal, Y_cal, self.alpha))
        else:
            self.thresholds_, self.certified_ = label_thresholds(P_cal, Y_cal, self.alpha)
            if not self.certified_.all():
                warnings.warn(
                    f"{int((~self.certified_).sum())} of {q} labels have fewer than 1 / alpha - 1 = "
                    f"{1 / self.alpha - 1:.3g} relevant calibration instances; they are always predicted "
                    "(see certified_).",
                    UncertifiedLabelWarning,
                    stacklevel=2,
                )
        return self

    @fill_doc
    def predict(self, X: MatrixLike) -> NDArray[Any]:
        """The conformal label sets.

        Parameters
        ----------
        {X_query}

        Returns
        -------
        ndarray of shape (n_queries, n_labels)
            0/1, in the dtype of the Y given to ``fit``.
        """
        check_is_fitted(self)
        P = np.asarray(self.estimator_.predict_proba(X), dtype=np.float64)
        return (P >= self.thresholds_).astype(self._y_dtype)


def _calibration_rows(calibration_size: float, n: int) -> int:
    """The calibration part's size in rows, leaving at least one row to fit on."""
    # train_test_split rounds a fractional test_size up.
    rows = int(calibration_size) if isinstance(calibration_size, Integral) else math.ceil(calibration_size * n)
    if not 1 <= rows <= n - 1:
        raise ValueError(
            f"The 'calibration_size' parameter of ConformalLabelSets must leave at least one row "
            f"to fit on and one to calibrate on; got {calibration_size!r} with n_samples = {n}."
        )
    return rows

