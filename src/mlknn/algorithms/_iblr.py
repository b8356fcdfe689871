"""IBLR-ML and IBLR-ML+ (Cheng and Huellermeier 2009), used in Teng et al. (2025).

Instance-based learning by logistic regression: for every label a logistic model
whose inputs are the label frequencies among the k nearest neighbours of all q
labels (IBLR-ML), optionally with the original features too (IBLR-ML+). Teng et al. (2025)
compares MLHiKNN with IBLR (Tables 3, A2-A6, Figures 2-7; k = 20 there, k = 10
"as in the prior literature").

The reading follows the paper and the authors' own code in MULAN
(``mulan.classifier.lazy.IBLR_ML``, by Cheng, Spyromitros-Xioufis and Tsoumakas),
which fits Weka's ``Logistic`` (ridge 1e-8) per label.
"""

import warnings
from collections.abc import Iterable
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.special import expit
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.sparsefuncs import mean_variance_axis

from ..base import HUBNESS_CONSTRAINT, RANDOM_STATE_CONSTRAINT, ExplainParts, KNNMultiLabelBase, Term
from ..neighbors import NeighborGraph
from ..utils._docstrings import fill_doc
from ..utils._param_validation import Integral, Interval, Real, StrOptions
from ..utils._resources import ProblemSize, ResourceEstimate
from ..utils._typing import BoolArray, FloatArray, LabelMatrix, MatrixLike, NDArray
from ._footprint import iblr_estimate
from ._kernels import constant_labels, neighbor_label_counts
from ._logistic import fit_logistic_batched
from ._partial_fit import MAX_SAMPLES_CONSTRAINT, _PartialFitMixin

#: Weka's ``Logistic`` ridge in MULAN's IBLR_ML, as scikit-learn's C = 1 / (2 ridge).
MULAN_C = 1.0 / (2 * 1e-8)

#: Default tolerance: the largest gradient component of each label's mean
#: objective at the stop (docs/notes/iblr.md measures the probabilities against an
#: exact Newton fit).
DEFAULT_TOL = 1e-8

#: "q large against n": fewer training rows than this many per fitted input.
_ROWS_PER_INPUT = 2

#: From this C on (ridge 1 / (2 C) <= 5e-4) the fit counts as nearly unpenalised
#: for the ill-posedness warning.
_NEARLY_UNPENALISED_C = 1e3


@fill_doc
class IBLR(_PartialFitMixin, KNNMultiLabelBase):
    """Instance-based logistic regression for multi-label data (IBLR-ML / IBLR-ML+).

    **Meta-features.** For an instance x with neighbours N_k(x), the meta-feature
    of label j is the fraction of the k neighbours that have label j,

    ``f_j(x) = count_j(x) / k``,

    i.e. the mean label vector of the neighbours. This is the paper's
    ``omega_{+j}(x) = sum_{x' in N_k(x)} kappa(x, x') y_j(x')`` with the uniform
    kernel ``kappa = 1/k`` of the authors' implementation in MULAN. The paper's
    framework allows a distance-weighted kernel; it is **not** implemented here
    (the experiments of the paper and of Teng et al. (2025) use the uniform one). For the
    training instances the neighbours come from the leave-one-out graph, so an
    instance's own labels never enter its meta-features (a duplicate of it at
    another index does, as in MULAN, whose Weka search skips the query object
    only).

    **Model.** For each label l, a logistic regression

    ``P(y_l = 1 | x) = 1 / (1 + exp(-(b_l + sum_j a_lj f_j(x) [+ w_l . x])))``

    fitted on the n training meta-instances; the bracketed term is the
    IBLR-ML+ variant (``include_features=True``), which appends the original
    features. All q meta-features enter every model, so label dependencies are
    learned through the coefficients ``a_lj``.

    **Fit, nearly unregularised.** As Weka's ``Logistic`` (ridge 1e-8) in the
    original, each model minimises the negative log-likelihood plus
    ``ridge * ||a, w||^2`` (intercept not penalised) on **standardised** inputs:
    every input column is divided by its sample standard deviation and, for
    dense inputs, centred; constant columns are removed (coefficient 0), as
    Weka does. Sparse inputs (IBLR-ML+ with sparse X) are scaled but not
    centred, which keeps them sparse and leaves the optimum unchanged because
    the intercept is not penalised. ``C = 1 / (2 ridge)``, so the default
    ``C = 5e7`` is Weka's ridge 1e-8. The q regressions share their inputs and
    are solved together by the batched Newton-CG of
    :mod:`mlknn.algorithms._logistic` (one (n, p) x (p, q) product per
    conjugate-gradient step, no (p, p) Hessian per label), each label until the
    largest gradient component of its mean objective is <= ``tol``. The
    coefficients are mapped back to the original units (``coef_``,
    ``intercept_``).

    **Tolerance.** At the default ``tol=1e-8`` the probabilities no longer
    depend on the solver: on the seeded 50/50 splits of emotions, yeast and
    scene (k = 10) they are within 6e-7 of an exact Newton fit
    (scikit-learn's ``newton-cholesky`` at tol 1e-12), with no decision
    changed; lbfgs at tol 1e-4 is up to 3.1e-2 away, with 7 yeast decisions
    flipped (docs/notes/iblr.md).

    **Ill-posed problems.** With a nearly zero penalty (``C >= 1e3``) the fit
    is not determined by the data when the inputs separate a label's training
    rows (the optimum then lies far out, where only the ridge stops it) or when
    there are fewer than 2 training rows per input (q large against n). One
    :class:`IllPosedFitWarning` names those labels (``separated_labels_``);
    decrease C to get a determined fit. When Newton-CG stops at ``max_iter``
    one :class:`~sklearn.exceptions.ConvergenceWarning` names the labels; their
    coefficients are the last iterate.

    **Cost.** n training rows, p = q (+ d) inputs: O(n p q) per Newton-CG step
    over all labels, O(p^2 q) parameters; inherently dense in q, so there is no
    sparse-label path (``_supports_sparse_labels = False``: the base class
    refuses, before allocating, a Y whose dense form does not fit).

    **Readings** (``variant``; docs/notes/iblr.md):

    ===========================  ============================  ==============================
    what                         ``"paper"`` (default)         ``"mulan"``
    ===========================  ============================  ==============================
    ridge                        ``1 / (2 C)``                 1e-8 whatever ``C`` says
                                                               (UserWarning if C != 5e7)
    everything else              as MULAN's IBLR_ML            as MULAN's IBLR_ML
    ===========================  ============================  ==============================

    At the default C the two readings fit the same model; ``"mulan"`` pins
    what MULAN does not let its user change.

    **Constant labels.** A label that is constant in the training data (always
    0 or always 1) gets no model: ``predict_proba`` and ``predict`` return that
    constant.

    **Decision.** ``predict_proba`` is the logistic probability;
    ``predict`` assigns label l when the probability is >= 0.5 (MULAN's
    threshold), evaluated as ``b_l + ... >= 0`` on the linear score.

    Differences from MULAN: MULAN's Euclidean distance rescales each feature
    to [0, 1] by its training range before the neighbour search (ours searches
    the features as given); Weka's BFGS runs to its own convergence test, ours
    to ``tol`` / ``max_iter``. scikit-multilearn has no IBLR.

    Parameters
    ----------
    {n_neighbors}
    include_features : bool, default=False
        False: IBLR-ML (meta-features only). True: IBLR-ML+ (the original
        features as well; X may be sparse).
    C : float, default=5e7
        Inverse penalty of scikit-learn's ``LogisticRegression``, > 0;
        ``C = 1 / (2 ridge)`` with Weka's ridge, so 5e7 is ridge 1e-8.
        ``np.inf`` fits without any penalty (the optimum may then not exist).
        Ignored with ``variant="mulan"``.
    max_iter : int, default=100
        Newton iterations per label, >= 1.
    tol : float, default=1e-8
        Stop a label when the largest absolute gradient component of its mean
        objective (log-loss averaged over the n rows plus the ridge term) is
        <= tol, > 0.
    neighbors : str or object, default="brute"
        Neighbour-search backend (see :mod:`mlknn.neighbors`).
    {metric}
    n_jobs : int, optional
        Parallel jobs of the neighbour search (the regressions run in BLAS,
        whose threads threadpoolctl controls).
    {random_state_backend}
    hubness : {None, "ls", "mp", "mp-gauss", "dsl"} or reduction object, default=None
        Hubness reduction (:mod:`mlknn.hubness`, docs/hubness.md) applied to the
        neighbour graph before the method reads it: the neighbourhoods are the k
        nearest by the secondary distance. None uses the plain distances.
    variant : {"paper", "mulan"}, default="paper"
        Whose reading (see the table above).
    {max_samples}
    {max_memory}

    Attributes
    ----------
    coef_ : ndarray of shape (n_labels, n_inputs)
        Coefficients in the units of the inputs: the first ``n_features_in_``
        columns are the features (IBLR-ML+ only), the last ``n_labels_`` the
        meta-features ``f_1 .. f_q``. Zero for constant labels.
    intercept_ : ndarray of shape (n_labels,)
    n_iter_ : ndarray of shape (n_labels,)
        Newton iterations per label (0 for constant labels).
    separated_labels_ : ndarray of shape (n_labels,), bool
        Labels whose training rows the fitted model separates (every row on
        its own side): their fit is set by the ridge, not the data.
    constant_labels_ : ndarray of shape (n_labels,), bool
        Labels constant in the training data.
    constant_values_ : ndarray of shape (n_labels,), uint8
        Their value (0 where the label is not constant).
    nn_ : fitted neighbour backend
    n_labels_ : int
    n_features_in_ : int
    classes_ : list of ndarray
        ``[0, 1]`` for every label (scikit-learn's multi-label form).
    sparse_labels_ : bool
        Whether the sparse-label path was taken (a scipy sparse Y given to ``fit`` and kept sparse).
    n_train_ : int
        Number of training instances.

    See Also
    --------
    MLkNN : first-order Bayesian decision per label.
    BRkNN : the neighbour vote without the regression.

    References
    ----------
    W. Cheng and E. Huellermeier, "Combining instance-based learning and logistic
    regression for multilabel classification", Machine Learning 76(2-3):211-225,
    2009.

    Examples
    --------
    >>> from mlknn import IBLR
    >>> from mlknn.datasets import make_multilabel
    >>> data = make_multilabel(n_samples=200, random_state=0)
    >>> clf = IBLR(n_neighbors=5).fit(data.X, data.Y)
    >>> clf.predict_proba(data.X[:2]).shape
    (2, 5)
    """

    _parameter_constraints = {
        **KNNMultiLabelBase._parameter_constraints,
        "include_features": ["boolean"],
        "C": [Interval(Real, 0, None, closed="right")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "hubness": HUBNESS_CONSTRAINT,
        "variant": [StrOptions({"paper", "mulan"})],
        "random_state": RANDOM_STATE_CONSTRAINT,
        "max_samples": MAX_SAMPLES_CONSTRAINT,
    }

    #: All q meta-features enter every one of the q regressions: O(q^2) parameters.
    _supports_sparse_labels = False
    _partial_fit_exact = False  # the regressions warm-start: equal to a refit to the solver's tolerance
    _row_scoring = False  # scores are BLAS products over the query rows

    # The base class declares a plain class attribute; here it follows the parameter.
    @property
    def _uses_features(self) -> bool:  # type: ignore[override]  # IBLR-ML+ reads X
        return bool(self.include_features)

    def __init__(
        self,
        n_neighbors: int = 10,
        *,
        include_features: bool = False,
        C: float = 5e7,
        max_iter: int = 100,
        tol: float = DEFAULT_TOL,
        neighbors: Any = "brute",
        metric: str = "euclidean",
        n_jobs: int | None = None,
        hubness: Any = None,
        variant: str = "paper",
        random_state: Any = None,
        max_samples: int | None = None,
        max_memory: Any = None,
    ) -> None:
        self.hubness = hubness
        self.variant = variant
        self.n_neighbors = n_neighbors
        self.include_features = include_features
        self.C = C
        self.max_iter = max_iter
        self.tol = tol
        self.neighbors = neighbors
        self.metric = metric
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.max_samples = max_samples
        self.max_memory = max_memory

    # ------------------------------------------------------------ inputs
    def meta_features(self, graph: NeighborGraph) -> NDArray[np.float64]:
        """The neighbour label frequencies ``count_j / k`` for every point of a graph.

        Parameters
        ----------
        graph : NeighborGraph
            ``n_neighbors`` wide; the leave-one-out graph for training points.

        Returns
        -------
        ndarray of shape (n_points, n_labels), float64
        """
        return neighbor_label_counts(graph, self._fit_Y) / float(self.n_neighbors)

    def _inputs(self, graph: NeighborGraph, X: MatrixLike, where: str, meta: MatrixLike = None) -> MatrixLike:
        meta = self.meta_features(graph) if meta is None else meta
        if not self.include_features:
            return meta
        if X is None:
            raise ValueError(
                "IBLR with include_features=True (IBLR-ML+) needs the features X in "
                f"{where}; got X=None."
            )
        if sp.issparse(X):
            return sp.hstack([X.astype(np.float64), sp.csr_matrix(meta)], format="csr")
        return np.hstack([np.asarray(X, dtype=np.float64), meta])

    def _method_estimate(self, size: ProblemSize, action: str) -> ResourceEstimate:
        # Dense in q: see mlknn.algorithms._footprint.
        return iblr_estimate(size, action, bool(self.include_features), float(self._C()), int(self.max_iter))

    # --------------------------------------------------------------- fit
    def _fit_graph(self, graph: NeighborGraph, Y: LabelMatrix, X: MatrixLike) -> None:
        self._fit_Y = Y
        Z = self._inputs(graph, X, "fit_from_graph")
        n, p, q = Z.shape[0], Z.shape[1], Y.shape[1]
        center, scale, varying = _standardisation(Z)
        # Weka's Logistic removes constant columns; their coefficient would be 0 anyway
        # (centred to 0, or absorbed by the unpenalised intercept when sparse).
        Zs = _standardise(Z, center, scale)[:, varying]

        constant, values = constant_labels(Y)
        self.constant_labels_ = constant
        self.constant_values_ = values
        todo = np.flatnonzero(~constant)
        C = self._C()
        init = self._previous_regressions(todo)
        if init is not None:  # the previous coefficients (input units) in this fit's standardised units
            w_init = init[0][:, varying] * scale[varying]
            init = (w_init, init[1] + w_init @ (center[varying] / scale[varying]))
        w_std, b_std, iters, not_converged, separated = fit_logistic_batched(
            Zs, Y, todo, C=C, tol=self.tol, max_iter=self.max_iter, init=init
        )
        # Back to the units of the inputs: w = w_std / scale, b = b_std - w_std . (center / scale).
        coef = np.zeros((q, p))
        intercept = np.zeros(q)
        n_iter = np.zeros(q, dtype=np.int64)
        coef[np.ix_(todo, np.flatnonzero(varying))] = w_std / scale[varying]
        intercept[todo] = b_std - w_std @ (center[varying] / scale[varying])
        n_iter[todo] = iters
        self.coef_ = coef
        self.intercept_ = intercept
        self.n_iter_ = n_iter
        self.separated_labels_ = np.zeros(q, dtype=bool)
        self.separated_labels_[todo] = separated
        if not_converged:
            warnings.warn(
                f"IBLR: the Newton-CG solver reached max_iter={self.max_iter} before the gradient "
                f"fell to tol={self.tol:g} for the logistic regression of label(s) "
                f"{_some(not_converged)}; with C={C:g} the fit is nearly unpenalised, and a label "
                "that the inputs separate has its optimum far out. Their coefficients are the "
                "last iterate; increase max_iter or decrease C to change that.",
                ConvergenceWarning,
                stacklevel=4,
            )
        self._warn_ill_posed(n, int(varying.sum()), todo[separated], C)

    def _C(self) -> float:
        if self.variant != "mulan":
            return self.C
        if self.C != MULAN_C:
            warnings.warn(
                f"IBLR(variant='mulan') fits with Weka's ridge 1e-8 (C={MULAN_C:g}) as MULAN does; "
                f"the 'C' parameter ({self.C:g}) is ignored. Use variant='paper' to choose C.",
                UserWarning,
                stacklevel=5,
            )
        return MULAN_C

    def _warn_ill_posed(self, n: int, p: int, separated: NDArray[np.intp], C: float) -> None:
        """One IllPosedFitWarning when q is large against n or labels are separated."""
        reasons = []
        if (p + 1) * _ROWS_PER_INPUT > n:
            reasons.append(
                f"{p} inputs (+ intercept) for n = {n} training rows: fewer than "
                f"{_ROWS_PER_INPUT} rows per coefficient, so the data hardly determine them"
            )
        if separated.size:
            reasons.append(
                f"the inputs separate the training rows of {separated.size} label(s) "
                f"{_some(separated.tolist())}, whose optimum is then set by the penalty alone"
            )
        if reasons and C >= _NEARLY_UNPENALISED_C:  # a real penalty makes them well posed
            warnings.warn(
                f"IBLR: ill-posed logistic regressions: {'; and '.join(reasons)}. With C={C:g} "
                "the fit is nearly unpenalised: the probabilities of these labels depend on C and "
                "on the optimiser's stopping point rather than on the data (two near-unpenalised "
                "solvers can disagree by up to 1). Decrease C (e.g. C=1) for a determined fit; "
                "separated_labels_ lists the separated labels.",
                IllPosedFitWarning,
                stacklevel=4,
            )

    # ----------------------------------------------------------- predict
    def _scores(self, graph: NeighborGraph, X: MatrixLike, meta: MatrixLike = None) -> NDArray[np.float64]:
        Z = self._inputs(graph, X, "the query (predict_proba_from_graph)", meta)
        scores = np.asarray(Z @ self.coef_.T) + self.intercept_
        const = self.constant_labels_
        if const.any():
            scores[:, const] = np.where(self.constant_values_[const] == 1, np.inf, -np.inf)
        return scores

    def _predict_proba_graph(self, graph: NeighborGraph, X: MatrixLike) -> NDArray[np.float64]:
        return np.asarray(expit(self._scores(graph, X)), dtype=np.float64)

    def _predict_graph(self, graph: NeighborGraph, X: MatrixLike) -> NDArray[np.uint8]:
        return _decide(self._scores(graph, X))

    def _explain_graph(self, graph: NeighborGraph, X: MatrixLike) -> ExplainParts:
        meta = self.meta_features(graph)
        scores = self._scores(graph, X, meta)
        d = self.coef_.shape[1] - self.n_labels_  # IBLR-ML+: the features' columns come first
        terms = {
            "logit": Term(scores, "the linear term of label l's logistic regression (+-inf for a label "
                                  "constant in training, which has no regression)", ("instance", "label")),
            "neighbour_coef": Term(self.coef_[:, d:], "row l: label l's weights on the q neighbour label "
                                                      "frequencies", ("label", "input")),
            "intercept": Term(self.intercept_, "label l's intercept", ("label",)),
        }
        if d:
            Xf = sp.csr_array(X, dtype=np.float64) if sp.issparse(X) else np.asarray(X, dtype=np.float64)
            terms["feature_logit"] = Term(np.asarray(Xf @ self.coef_[:, :d].T), "IBLR-ML+: the features' "
                                          "part of the linear term", ("instance", "label"))
        evidence = "count_l / k: the fraction of the k neighbours with label l (Cheng and Huellermeier 2009)"
        return ExplainParts(meta, evidence, np.asarray(expit(scores), dtype=np.float64), terms, {}, _decide(scores))


def _decide(scores: NDArray[np.float64]) -> NDArray[np.uint8]:
    """Label l when its linear term is >= 0, i.e. P(l) >= 0.5."""
    return (scores >= 0).astype(np.uint8)


class IllPosedFitWarning(UserWarning):
    """IBLR's per-label logistic regressions are not determined by the data.

    Issued when the inputs are many against the training rows, or the inputs
    separate a label's training rows, and the penalty is nearly zero.
    """


def _some(labels: Iterable[int], at_most: int = 10) -> str:
    """A list of labels for a message: the first ``at_most``, then how many more."""
    labels = list(labels)
    if len(labels) <= at_most:
        return str(labels)
    return f"{labels[:at_most]} and {len(labels) - at_most} more"


def _standardisation(Z: MatrixLike) -> tuple[FloatArray, FloatArray, BoolArray]:
    """Centre (dense only) and scale of each input column, as Weka's Logistic.

    The scale is the sample standard deviation (n - 1 denominator); a constant
    column (max == min, so that rounding in the variance cannot make a tiny
    scale) keeps scale 1 and is reported in ``varying`` = False.
    """
    n = Z.shape[0]
    if sp.issparse(Z):
        _, var = mean_variance_axis(Z, axis=0)
        center = np.zeros(Z.shape[1])
        constant = (Z.max(axis=0) - Z.min(axis=0)).toarray().ravel() == 0
        sd = np.sqrt(var * (n / (n - 1)))
    else:
        # Sums along axis 0 of a C-ordered array accumulate row after row, so these
        # are the textbook sums (the loop oracle reproduces them bit for bit; the
        # nearly unpenalised fit can turn a 1-ulp change of its inputs into a
        # visible change of the probabilities, see docs/notes/iblr.md).
        Z = np.ascontiguousarray(Z)
        center = Z.sum(axis=0) / n
        dev = Z - center
        sd = np.sqrt((dev * dev).sum(axis=0) / (n - 1))
        constant = Z.max(axis=0) == Z.min(axis=0)
    scale = np.where(constant | ~(sd > 0), 1.0, sd)
    return center, scale, ~(constant | ~(sd > 0))


def _standardise(Z: MatrixLike, center: FloatArray, scale: FloatArray) -> MatrixLike:
    if sp.issparse(Z):
        return (Z @ sp.diags(1.0 / scale)).tocsr()
    return (Z - center) / scale
