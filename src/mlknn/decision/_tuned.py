"""TunedThresholds: the decision rule chosen on out-of-sample posteriors."""

from typing import Any, Self

import numpy as np
from sklearn.base import clone
from sklearn.utils.validation import check_is_fitted

from ..utils._docstrings import fill_doc
from ..utils._param_validation import HasMethods, Integral, Interval, Real, StrOptions, _fit_context
from ..utils._typing import MatrixLike, NDArray
from ._base import PosteriorRuleBase
from ._rules import above, top_labels, with_at_least
from ._search import (
    LABEL_SCORINGS,
    LOSSES,
    MATRIX_SCORINGS,
    global_threshold,
    label_f1,
    per_label_thresholds,
    proportional_thresholds,
    rank_cut,
)

#: Strategies that choose something by maximising ``scoring``, and the measures each takes.
_SCORINGS_OF = {"per-label": LABEL_SCORINGS, "global": MATRIX_SCORINGS, "rcut": MATRIX_SCORINGS}


@fill_doc
class TunedThresholds(PosteriorRuleBase):
    """A multi-label classifier whose decision rule is tuned on out-of-sample posteriors.

    Fits ``estimator`` on all the data for prediction and chooses how its posteriors
    become label sets from the training set's out-of-sample posteriors (exact
    leave-one-out for the kNN estimators that support it, cross-fitting otherwise),
    so the rule is not tuned on scores the model has already seen.

    Parameters
    ----------
    estimator : estimator with ``fit`` and ``predict_proba``
        Any multi-label estimator whose ``predict_proba`` returns one (n, q) array:
        every mlknn estimator and baseline.
    strategy : {"per-label", "global", "rcut", "pcut", "fixed"}, default="per-label"
        * ``"per-label"``: label l is predicted where ``p_l > t_l``, each ``t_l``
          maximising that label's ``scoring``;
        * ``"global"``: one threshold ``t`` for every label, maximising ``scoring``
          over the whole matrix;
        * ``"rcut"``: the r highest-scoring labels of each instance (equal scores:
          the lower label index), r chosen to maximise ``scoring``;
        * ``"pcut"``: ``t_l`` such that label l is predicted, on the out-of-sample
          posteriors, for as many training instances as it is relevant to (its
          training frequency; Yang 2001);
        * ``"fixed"``: ``p_l > threshold`` (no search and no out-of-sample posteriors).
    scoring : {"f1", "macro_f1", "micro_f1", "hamming_loss"}, default="f1"
        What "per-label", "global" and "rcut" maximise (a loss is minimised). Per
        label, "f1" and "macro_f1" are each label's F1 and "hamming_loss" its error
        rate ("micro_f1" couples the labels and is refused). Over the whole matrix the
        names are those of :func:`mlknn.metrics.evaluate`: "f1" is the example-based F1.
    cv : "loo", int or cross-validation splitter, default="loo"
        How the out-of-sample posteriors are made:
        :func:`mlknn.model_selection.loo_predict_proba`'s ``cv``.
    min_labels : int, default=0
        Every instance gets at least its ``min_labels`` highest-scoring labels, added
        after the rule (the search does not take them into account).
    threshold : float, default=0.5
        The threshold of ``strategy="fixed"``, and of the labels that fall back
        (``fallback_below``).
    fallback_below : float or None, default=None
        "per-label" with an F1 ``scoring`` only: a label whose best out-of-sample F1 is
        below this keeps ``threshold`` instead of its tuned one (Yang 2001's SCut.FBR). A
        label with one or two training positives and no neighbour evidence otherwise gets
        the cut that predicts it for every instance (F1 2 / (n + 1) beats 0); 0.1 is a
        common choice on datasets with rare labels. None: no fallback.
    {random_state}
        Passed to :func:`mlknn.model_selection.loo_predict_proba` (shuffling folds).

    Attributes
    ----------
    estimator_ : estimator
        ``estimator`` fitted on all the data; gives the posteriors at prediction.
    thresholds_ : ndarray of shape (n_labels,) or None
        Label l is predicted where ``p_l > thresholds_[l]`` (one value repeated for
        "global" and "fixed"); None for "rcut".
    n_top_labels_ : int or None
        The r of "rcut"; None otherwise.
    oof_proba_ : ndarray of shape (n_samples, n_labels) or None
        The out-of-sample posteriors the rule was chosen on; None for "fixed".
    best_score_ : float or None
        ``scoring`` of the chosen rule on ``oof_proba_`` (per label: the mean over
        labels); None for "pcut" and "fixed".
    fallback_labels_ : ndarray of shape (n_labels,), bool
        The labels that kept ``threshold`` under ``fallback_below`` (all False
        otherwise).
    n_labels_ : int
        Number of labels q.
    classes_ : list of ndarray
        ``[0, 1]`` for every label.

    See Also
    --------
    mlknn.model_selection.loo_predict_proba : The out-of-sample posteriors.
    mlknn.baselines.ThresholdCalibration : An instance-wise threshold ``t(x)`` fitted
        by least squares (Elisseeff and Weston 2002).
    ConformalLabelSets : Label sets with a coverage guarantee instead of a tuned measure.

    Notes
    -----
    Each search sorts the scores once and evaluates every cut between consecutive
    distinct scores by cumulative sums (the machinery of the stacking threshold model,
    Zhang and Zhou 2014, Knowl 6); thresholds are midpoints between the scores they
    separate. Among equally good cuts the middle one is taken.

    References
    ----------
    Y. Yang, "A study of thresholding strategies for text categorization", SIGIR 2001
    (rcut, pcut, scut). M.-L. Zhang and Z.-H. Zhou, "A Review on Multi-Label Learning
    Algorithms", IEEE TKDE 2014 (the thresholding function t(x)).

    Examples
    --------
    >>> from mlknn import MLkNN
    >>> from mlknn.datasets import make_multilabel
    >>> from mlknn.decision import TunedThresholds
    >>> data = make_multilabel(n_samples=200, n_labels=4, random_state=0)
    >>> clf = TunedThresholds(MLkNN(n_neighbors=5)).fit(data.X, data.Y)
    >>> clf.thresholds_.shape
    (4,)
    >>> clf.predict(data.X[:3]).shape
    (3, 4)
    """

    _parameter_constraints: dict[str, list[Any]] = {
        "estimator": [HasMethods(["fit", "predict_proba"])],
        "strategy": [StrOptions({"per-label", "global", "rcut", "pcut", "fixed"})],
        "scoring": [StrOptions(set(MATRIX_SCORINGS))],
        "cv": [StrOptions({"loo"}), "cv_object"],
        "min_labels": [Interval(Integral, 0, None, closed="left")],
        "threshold": [Interval(Real, None, None, closed="neither")],
        "fallback_below": [Interval(Real, None, None, closed="neither"), None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        estimator: Any,
        *,
        strategy: str = "per-label",
        scoring: str = "f1",
        cv: Any = "loo",
        min_labels: int = 0,
        threshold: float = 0.5,
        fallback_below: float | None = None,
        random_state: Any = None,
    ) -> None:
        self.estimator = estimator
        self.strategy = strategy
        self.scoring = scoring
        self.cv = cv
        self.min_labels = min_labels
        self.threshold = threshold
        self.fallback_below = fallback_below
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X: MatrixLike, Y: MatrixLike) -> Self:
        """Fit ``estimator`` and choose the decision rule.

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
        if self.fallback_below is not None and (self.strategy != "per-label" or self.scoring in LOSSES):
            raise ValueError(
                "The 'fallback_below' parameter of TunedThresholds applies to strategy='per-label' with an F1 "
                f"scoring only; got strategy={self.strategy!r}, scoring={self.scoring!r}. Set it to None."
            )
        allowed = _SCORINGS_OF.get(self.strategy)
        if allowed is not None and self.scoring not in allowed:
            raise ValueError(
                f"The 'scoring' parameter of TunedThresholds must be one of {sorted(allowed)} with "
                f"strategy={self.strategy!r} (a per-label search optimises each label's own measure); "
                f"got {self.scoring!r}."
            )
        Y = self._check_labels(Y)
        self.estimator_ = clone(self.estimator).fit(X, Y)
        q = Y.shape[1]
        self.n_top_labels_: int | None = None
        self.best_score_: float | None = None
        self.fallback_labels_ = np.zeros(q, dtype=bool)
        if self.strategy == "fixed":
            self.oof_proba_: NDArray[np.float64] | None = None
            self.thresholds_: NDArray[np.float64] | None = np.full(q, float(self.threshold))
            return self
        P = self._out_of_sample_proba(X, Y)
        self.oof_proba_ = P
        if self.strategy == "per-label":
            self.thresholds_, values = per_label_thresholds(P, Y, self.scoring)
            if self.fallback_below is not None:
                self.fallback_labels_ = values < self.fallback_below
                self.thresholds_[self.fallback_labels_] = self.threshold
                values[self.fallback_labels_] = label_f1(P[:, self.fallback_labels_] > self.threshold,
                                                         Y[:, self.fallback_labels_])
            self.best_score_ = float(values.mean())
        elif self.strategy == "global":
            t, self.best_score_ = global_threshold(P, Y, self.scoring)
            self.thresholds_ = np.full(q, t)
        elif self.strategy == "rcut":
            self.n_top_labels_, self.best_score_ = rank_cut(P, Y, self.scoring)
            self.thresholds_ = None
        else:  # pcut
            self.thresholds_ = proportional_thresholds(P, Y)
        return self

    def _decide(self, P: NDArray[Any]) -> NDArray[Any]:
        if self.thresholds_ is None:
            decisions = top_labels(P, int(self.n_top_labels_ or 0))
        else:
            decisions = above(P, self.thresholds_)
        return with_at_least(decisions, P, self.min_labels).astype(self._y_dtype, copy=False)

    @fill_doc
    def predict(self, X: MatrixLike) -> NDArray[Any]:
        """Label sets under the tuned rule.

        Parameters
        ----------
        {X_query}

        Returns
        -------
        ndarray of shape (n_queries, n_labels)
            0/1, in the dtype of the Y given to ``fit``.
        """
        check_is_fitted(self)
        return self._decide(self.estimator_.predict_proba(X))
