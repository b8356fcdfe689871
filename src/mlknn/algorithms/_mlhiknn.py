"""MLHiKNN: multi-label hubness information-based kNN (Teng et al., Mathematics 2025).

Notation follows Teng et al. (2025) section 3: D the training set (n = |D| instances), q
labels, k neighbours, ``O_k(x)`` the k-occurrence and ``O_k^l(x)`` the label
k-occurrence of a training instance x, s the smoothing parameter, lambda the
threshold parameter (here ``fuzziness``), beta the distance-weighting parameter.

The equations, as arrays (no Python loop over instances or labels):

* Algorithm 1 with each instance appended to its own k-neighbourhood:
  ``O_k(x) = 1 + #{x' != x : x in D_k(x')}`` and
  ``O_k^l(x) = y_x^l + #{x' != x : x in D_k(x'), y_{x'}^l = 1}``
  (one sparse product ``A^T Y`` with A the leave-one-out adjacency);
* eqs 7-8: ``p_1^l(x) = (O_k^l(x) + s) / (O_k(x) + 2 s)``, ``p_0 = 1 - p_1``;
* eq 19: ``g(x) = 1 - log_{lambda k} min(O_k(x), lambda k)``; eq 28:
  ``g = 0`` when ``lambda k <= 1``; eq 29: ``g = 1`` when lambda = +inf;
* eqs 9-10: ``u_1^l = g y^l + (1 - g) p_1^l``, ``u_0^l = g (1 - y^l) + (1 - g) p_0^l``;
* eq 20: ``w_d(t, x) = |t - x|^(-2/(beta-1)) / sum_{x'} |t - x'|^(-2/(beta-1))``;
* eq 25: ``w_h(t, x) = (log n - log O_k(x)) / sum_{x'} (log n - log O_k(x'))``;
* eqs 5-6: ``v_b^l(t) = sum_x w_d w_h u_b^l(x)``, ``r^l(t) = v_1 / (v_0 + v_1)``;
* Algorithm 2 lines 21-23 / Algorithm 3 lines 11-13: one logistic regression per
  label on the q relevance scores.
"""

import warnings
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.special import expit
from sklearn.exceptions import ConvergenceWarning

from ..base import HUBNESS_CONSTRAINT, RANDOM_STATE_CONSTRAINT, ExplainParts, KNNMultiLabelBase, Term
from ..hubness import k_occurrence
from ..neighbors import NeighborGraph
from ..utils._docstrings import fill_doc
from ..utils._param_validation import Interval, Real, StrOptions
from ..utils._resources import ProblemSize, ResourceEstimate
from ..utils._typing import FloatArray, LabelMatrix, MatrixLike, NDArray
from . import _logistic_fused
from ._footprint import mlhiknn_estimate
from ._kernels import constant_labels
from ._logistic import fit_logistic_batched
from ._partial_fit import MAX_SAMPLES_CONSTRAINT, _PartialFitMixin

VARIANTS = ("g1", "g0", "h1", "d1", "fo")

#: Memberships (n_train * q entries) from which the relevance product runs compiled and threaded.
_THREADED_FROM = 10**6

#: Settings of the per-label logistic regressions (see the class docstring):
#: scikit-learn's default model (C = 1), solved by the batched Newton-CG of
#: :mod:`mlknn.algorithms._logistic` until the largest gradient component of
#: each label's mean objective is <= tol.
LOGISTIC_C = 1.0
LOGISTIC_MAX_ITER = 100
LOGISTIC_TOL = 1e-8
LOGISTIC_PARAMS: dict[str, float] = {"C": LOGISTIC_C, "max_iter": LOGISTIC_MAX_ITER, "tol": LOGISTIC_TOL}

#: Teng et al. (2025) state lambda = 2 in section 3.2 (the fuzzy weight's example) and
#: lambda = 3 in sections 4.1.2 and 4.5 (the experiments); the default follows
#: the experiments (docs/notes/mlhiknn.md).
DEFAULT_FUZZINESS = 3.0


@fill_doc
class MLHiKNN(_PartialFitMixin, KNNMultiLabelBase):
    """Multi-label hubness information-based k-nearest neighbours (MLHiKNN).

    Training (Algorithm 2): from the leave-one-out k-neighbourhoods, count the
    k-occurrence ``O_k(x)`` and label k-occurrence ``O_k^l(x)`` of every training
    instance with the instance appended to its own neighbourhood (Algorithm 1 and
    the paragraph before it, so ``O_k >= 1``); turn them into fuzzy memberships
    ``u_b^l(x)`` (eqs 7-10, 19); compute each training instance's relevance scores
    ``r^l(x)`` from its leave-one-out neighbourhood (its own membership takes no
    part, Algorithm 2 line 17) with distance weights ``w_d`` (eq 20) and hubness
    weights ``w_h`` (eq 25) (eqs 5-6); fit one logistic regression per label l on
    the q scores ``(r^1(x), ..., r^q(x))`` with target ``y_x^l``.

    Prediction (Algorithm 3): the query's relevance scores from its k
    neighbourhood, then the label's logistic regression. ``predict_proba``
    returns each regression's P(label = 1); ``predict`` is ``proba > 0.5``
    (a probability of exactly 0.5 predicts 0).

    **Logistic regression settings** (``LOGISTIC_PARAMS``). scikit-learn's
    ``LogisticRegression`` default model (L2 penalty, C = 1, with intercept), as
    Teng et al. (2025) say "other parameters followed the default settings". The problem
    is strictly convex, so the solver does not change the model, only how
    exactly its optimum is reached. The q regressions share their inputs (the q
    relevance scores), so they are solved together by the batched Newton-CG of
    :mod:`mlknn.algorithms._logistic` (one (n, q) x (q, q) product per
    conjugate-gradient step, for all labels at once), each label until the
    largest gradient component of its mean objective is <= 1e-8. Measured on
    the seeded 50/50 splits of emotions, yeast and scene, the probabilities are
    within 5e-8 of per-label ``newton-cholesky`` fits at tol 1e-10, no decision
    changed (docs/notes/mlhiknn.md). The inputs are already in [0, 1], so
    no scaling is applied. A label that is constant in the training set (all 0
    or all 1) has no regression: it predicts that constant, with probability
    exactly 0 or 1. Should Newton-CG stop at ``max_iter`` for some labels, one
    :class:`~sklearn.exceptions.ConvergenceWarning` names them.

    **Cost** (n training rows, k neighbours, q labels). The occurrence counts
    ``O_k``, ``O_k^l`` are one sparse product ``A^T Y`` with the leave-one-out
    adjacency A (O(n k q), not Teng et al.'s (2025) O(n^2 q)); memberships and relevance
    scores O(n k q); the regressions O(n q^2) per Newton-CG step over all labels
    (Teng et al.'s (2025) inherent n q^2 term; a per-label Newton solver would form a
    q x q Hessian per label and step, O(n q^3)). The relevance scores are dense
    (n, q), so MLHiKNN has no sparse-label path (``_supports_sparse_labels =
    False``): the base class refuses, before allocating, a Y whose dense form
    does not fit.

    **lambda.** Teng et al. (2025) are inconsistent about its value: section 3.2 says
    "setting lambda = 2 yields good average performance", sections 4.1.2 and
    4.5 set lambda = 3 for the experiments (the default of the parameter
    analysis). ``fuzziness`` defaults to 3, the value of the experiments whose
    tables mlknn reproduces.

    **Readings of the text.**

    * ``|D|`` in eq 25 is n, the number of training instances; with the
      self-appended counts ``1 <= O_k(x) <= n``, so ``w_h >= 0``, and ``w_h = 0``
      exactly when x is in every neighbourhood (eq 21).
    * If every neighbour of a point has ``O_k = n`` the denominator of eq 25 is 0:
      the hubness weights are then uniform, 1/k (hubness tells nothing).
    * **Zero distances (eq 20).** ``|t - x|^(-2/(beta-1))`` is infinite when t
      coincides with a neighbour. The rule is the limit of eq 20 as those
      distances go to 0 together: the neighbours at distance exactly 0 share the
      weight equally and every other neighbour gets 0. For numerical safety the
      weights are computed as ``(d_min / d)^(2/(beta-1))``, normalised (the same
      value, without overflow).
    * If ``sum_x w_d w_h = 0`` (possible only when every neighbour at distance 0
      has ``w_h = 0``), eq 6 is 0/0: the product weights are then uniform.
    * eq 19 at ``lambda k = 1`` has log base 1: eq 28 gives g = 0 for every
      ``lambda <= 1/k``, which is applied.
    * The ablation variants of Table 14 (``variant``): "g1" / "g0" fix g at 1 / 0
      in eqs 9-10; "h1" / "d1" fix ``w_h`` / ``w_d`` at 1 in eq 5; "fo" drops the
      logistic regressions: ``predict_proba`` returns ``r^l`` and ``predict`` is
      ``r^l >= 0.5`` (Table 14's rule, >= not >).
    * With ``hubness`` set (not part of Teng et al. (2025), who name the combination as
      future work), the neighbourhoods D_k and the k-occurrences come from the
      re-ranked graph, and ``w_d`` keeps the primary distance ``|t - x|`` of eq 20.

    Parameters
    ----------
    n_neighbors : int, default=20
        k (Teng et al. 2025, section 4.1.2).
    fuzziness : float, default=3.0
        lambda of eqs 15 and 19 (3 as in Teng et al. (2025) sections 4.1.2 and 4.5;
        section 3.2 says 2, see above), the threshold parameter: g(x) falls from 1 at
        ``O_k(x) = 1`` to 0 at ``O_k(x) >= lambda k``. Larger values keep more of
        each instance's own labels (``np.inf``: g = 1, crisp memberships, eq 29);
        ``lambda <= 1/k`` gives g = 0 (eq 28). Must be > 0. (Named ``fuzziness``
        rather than ``lambda_``: a trailing underscore marks fitted attributes in
        scikit-learn, and ``check_is_fitted`` would take a ``lambda_`` parameter
        for a fitted attribute.)
    beta : float, default=2.0
        beta of eq 20, > 1; the exponent is ``-2/(beta-1)`` (-2 at the default;
        ``np.inf`` gives uniform distance weights).
    smoothing : float, default=1.0
        s of eq 7, >= 0 (1: Laplace smoothing).
    variant : {None, "g1", "g0", "h1", "d1", "fo"}, default=None
        An ablation variant of Table 14; None is the full model.
    hubness : {None, "ls", "mp", "mp-gauss", "dsl"} or reduction object, default=None
        Hubness reduction applied to every neighbour graph (see
        :mod:`mlknn.hubness`).
    neighbors : str or object, default="brute"
        Neighbour-search backend (see :mod:`mlknn.neighbors`).
    {metric}
    n_jobs : int, optional
        Parallel jobs of the neighbour search (the regressions run in BLAS,
        whose threads threadpoolctl controls).
    {random_state_backend}
    {max_samples}
    {max_memory}

    Attributes
    ----------
    k_occurrence_ : ndarray of shape (n_train,)
        ``O_k(x)``, self-appended (>= 1).
    label_k_occurrence_ : ndarray of shape (n_train, n_labels)
        ``O_k^l(x)``, self-appended.
    fuzzy_weight_ : ndarray of shape (n_train,)
        g(x) (eq 19, or the variant's constant).
    membership_ : ndarray of shape (n_train, n_labels)
        ``u_1^l(x)``; ``u_0^l(x) = 1 - u_1^l(x)`` (eq 11).
    train_relevance_ : ndarray of shape (n_train, n_labels)
        ``r^l(x)`` of the training instances (leave-one-out neighbourhoods), the
        inputs of the logistic regressions.
    coef_ : ndarray of shape (n_labels, n_labels)
        Row l: the weights of label l's logistic regression (zeros for a
        constant label and for ``variant="fo"``).
    intercept_ : ndarray of shape (n_labels,)
    constant_ : ndarray of shape (n_labels,)
        The training value of a constant label, NaN for the others.
    nn_ : fitted neighbour backend
    hubness_ : fitted hubness reduction (only when ``hubness`` is set)
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
    MLkNN : the Bayesian kNN rule MLHiKNN is compared with.
    IBLR : logistic regression on neighbour label counts.
    mlknn.hubness : hubness measures and reduction.

    References
    ----------
    "A Hubness Information-Based k-Nearest Neighbor Approach for Multi-Label
    Learning", Mathematics 2025, Algorithms 1-3, eqs 5-25, Table 14.

    Examples
    --------
    >>> from mlknn import MLHiKNN
    >>> from mlknn.datasets import make_multilabel
    >>> data = make_multilabel(n_samples=200, random_state=0)
    >>> clf = MLHiKNN(n_neighbors=10).fit(data.X, data.Y)
    >>> clf.predict_proba(data.X[:2]).shape
    (2, 5)
    """

    _row_scoring = False  # scores are BLAS products over the query rows

    #: The relevance scores, inputs of every regression, are dense (n, q).
    _supports_sparse_labels = False
    _partial_fit_exact = False  # the regressions warm-start: equal to a refit to the solver's tolerance

    _parameter_constraints = {
        **KNNMultiLabelBase._parameter_constraints,
        "fuzziness": [Interval(Real, 0, None, closed="right")],
        "beta": [Interval(Real, 1, None, closed="right")],
        "smoothing": [Interval(Real, 0, None, closed="left")],
        "variant": [StrOptions(set(VARIANTS)), None],
        "hubness": HUBNESS_CONSTRAINT,
        "random_state": RANDOM_STATE_CONSTRAINT,
        "max_samples": MAX_SAMPLES_CONSTRAINT,
    }

    def __init__(
        self,
        n_neighbors: int = 20,
        *,
        fuzziness: float = DEFAULT_FUZZINESS,
        beta: float = 2.0,
        smoothing: float = 1.0,
        variant: str | None = None,
        hubness: Any = None,
        neighbors: Any = "brute",
        metric: str = "euclidean",
        n_jobs: int | None = None,
        random_state: Any = None,
        max_samples: int | None = None,
        max_memory: Any = None,
    ) -> None:
        self.n_neighbors = n_neighbors
        self.fuzziness = fuzziness
        self.beta = beta
        self.smoothing = smoothing
        self.variant = variant
        self.hubness = hubness
        self.neighbors = neighbors
        self.metric = metric
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.max_samples = max_samples
        self.max_memory = max_memory

    def _method_estimate(self, size: ProblemSize, action: str) -> ResourceEstimate:
        # Dense in q: see mlknn.algorithms._footprint.
        return mlhiknn_estimate(size, action)

    # ------------------------------------------------------------ training
    def _fit_graph(self, graph: NeighborGraph, Y: LabelMatrix, X: MatrixLike) -> None:
        self._fit_Y = Y  # read back by partial_fit after a fit
        n, q = Y.shape
        k = self.n_neighbors
        O, OL = occurrence_counts(graph, Y)
        self.k_occurrence_ = O
        self.label_k_occurrence_ = OL
        if self.variant == "g1":
            g = np.ones(n)
        elif self.variant == "g0":
            g = np.zeros(n)
        else:
            g = fuzzy_weight(O, float(self.fuzziness), k)
        self.fuzzy_weight_ = g
        self.membership_ = membership(O, OL, Y, g, float(self.smoothing))
        self._fit_Y = Y  # the neighbours' labels an explanation shows
        self.train_relevance_ = self._relevance(graph)
        self.coef_ = np.zeros((q, q))
        self.intercept_ = np.zeros(q)
        const, values = constant_labels(Y)
        self.constant_ = np.where(const, values, np.nan)
        if self.variant == "fo":
            return
        todo = np.flatnonzero(~const)
        coef, intercept, _, not_converged, _ = fit_logistic_batched(
            self.train_relevance_, Y, todo, C=LOGISTIC_C, tol=LOGISTIC_TOL, max_iter=LOGISTIC_MAX_ITER,
            init=self._previous_regressions(todo),
        )
        self.coef_[todo] = coef
        self.intercept_[todo] = intercept
        if not_converged:
            warnings.warn(
                f"MLHiKNN: the Newton-CG solver reached max_iter={LOGISTIC_MAX_ITER} "
                f"before converging (tol={LOGISTIC_TOL:g}) for the logistic regression of "
                f"label(s) {not_converged}; their coefficients are the last iterate.",
                ConvergenceWarning,
                stacklevel=4,
            )

    def _relevance(self, graph: NeighborGraph) -> NDArray[np.float64]:
        """r^l(t) (eqs 5-6) for the points of a graph, shape (n_points, q)."""
        return self._relevance_terms(graph)[2]

    def _relevance_terms(self, graph: NeighborGraph) -> tuple[NDArray[np.float64], ...]:
        """w_d (eq 20), w_h (eq 25), each (n_points, k), and r^l(t) (eqs 5-6)."""
        k = self.n_neighbors
        dist = graph.metric_distances  # primary distances after hubness reduction
        wd = np.ones(dist.shape) if self.variant == "d1" else distance_weights(dist, float(self.beta))
        if self.variant == "h1":
            wh = np.ones(dist.shape)
        else:
            wh = hubness_weights(self.k_occurrence_[graph.indices], self.n_train_)
        return wd, wh, relevance_scores(graph, wd * wh, self.membership_, k)

    # ----------------------------------------------------------- prediction
    def _predict_proba_graph(self, graph: NeighborGraph, X: MatrixLike) -> NDArray[np.float64]:
        return self._proba_from_relevance(self._relevance(graph))

    def _proba_from_relevance(self, R: NDArray[np.float64]) -> NDArray[np.float64]:
        """Algorithm 3 lines 11-13: each label's logistic regression on the q relevance scores."""
        if self.variant == "fo":
            return R
        # In place: at many labels each (n, q) temporary costs as much as the product's
        # output (the same operations, the same bits).
        logit = self._logit(R)
        return self._proba_from_logit(logit, out=logit)

    def _logit(self, R: NDArray[np.float64]) -> NDArray[np.float64]:
        logit: NDArray[np.float64] = R @ self.coef_.T
        logit += self.intercept_
        return logit

    def _proba_from_logit(self, logit: NDArray[np.float64], out: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
        proba: NDArray[np.float64] = expit(logit, out=out)
        const = ~np.isnan(self.constant_)
        proba[:, const] = self.constant_[const]
        return np.asarray(proba)

    def _explain_graph(self, graph: NeighborGraph, X: MatrixLike) -> ExplainParts:
        wd, wh, R = self._relevance_terms(graph)
        terms = {
            "distance_weight": Term(wd, "w_d(t, x): the distance weight of each neighbour (MLHiKNN paper, Mathematics 2025, eq 20)",
                                    ("instance", "neighbour")),
            "hubness_weight": Term(wh, "w_h(x): the hubness weight of each neighbour, from its "
                                       "k-occurrence (eq 25)", ("instance", "neighbour")),
        }
        proba = R
        if self.variant != "fo":
            logit = self._logit(R)
            proba = self._proba_from_logit(logit)
            terms["logit"] = Term(logit, "w_l . r(t) + b_l: the linear term of label l's logistic "
                                         "regression on the q relevance scores (Algorithm 3 lines 11-13)",
                                  ("instance", "label"))
            terms["coef"] = Term(self.coef_, "w_l: row l holds label l's regression weights on r^1..r^q",
                                 ("label", "input"))
            terms["intercept"] = Term(self.intercept_, "b_l: label l's intercept", ("label",))
            terms["constant"] = Term(self.constant_, "the probability of a label constant in training "
                                                     "(no regression), NaN for the others", ("label",))
        evidence = ("r^l(t) = v_1 / (v_0 + v_1): the relevance score of label l, the w_d w_h weighted "
                    "mean of the neighbours' fuzzy memberships u_1^l (eqs 5-6, 9)")
        return ExplainParts(R, evidence, proba, terms, {}, self._decide(proba))

    def _predict_graph(self, graph: NeighborGraph, X: MatrixLike) -> NDArray[np.uint8]:
        return self._decide(self._predict_proba_graph(graph, X))

    def _decide(self, proba: NDArray[np.float64]) -> NDArray[np.uint8]:
        if self.variant == "fo":
            return (proba >= 0.5).astype(np.uint8)
        return (proba > 0.5).astype(np.uint8)


# ------------------------------------------------------------------ kernels
def occurrence_counts(graph: NeighborGraph, Y: LabelMatrix) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Self-appended k-occurrence and label k-occurrence (Algorithm 1).

    Parameters
    ----------
    graph : NeighborGraph
        Leave-one-out graph of the training set, k wide.
    Y : ndarray of shape (n, q), 0/1

    Returns
    -------
    O : ndarray of shape (n,), int64
        ``1 + #{x' != x : x in D_k(x')}``.
    OL : ndarray of shape (n, q), int64
        ``y_x^l + #{x' != x : x in D_k(x'), y_{x'}^l = 1}``.
    """
    n = graph.n_points
    O = 1 + k_occurrence(graph, n)
    A = graph.to_csr(n).astype(np.int64)
    # A^T Y through a sparse Y: its cost follows nnz(Y) k, not n k q (an order of
    # magnitude less on many labels with few per row).
    Ys = sp.csr_matrix(Y, dtype=np.int64)
    OL = np.asarray((A.T @ Ys).toarray(), dtype=np.int64)
    OL += np.asarray(Y)  # in place: no (n, q) int64 copy of Y
    return O, OL


def fuzzy_weight(O: NDArray[Any], lam: float, k: int) -> NDArray[np.float64]:
    """g(x) of eq 19 (with eqs 28-29 at the ends of lambda's range).

    Parameters
    ----------
    O : ndarray of shape (n,)
        Self-appended k-occurrences (>= 1).
    lam : float
        lambda > 0 (may be inf).
    k : int

    Returns
    -------
    ndarray of shape (n,), in [0, 1]
    """
    O = np.asarray(O, dtype=np.float64)
    t = lam * k
    if np.isinf(t):
        return np.ones_like(O)  # eq 29
    if t <= 1.0:
        return np.zeros_like(O)  # eq 28 (log base lambda k <= 1)
    return np.asarray(1.0 - np.log(np.minimum(O, t)) / np.log(t))


def membership(O: NDArray[Any], OL: NDArray[Any], Y: LabelMatrix, g: NDArray[Any], s: float) -> NDArray[np.float64]:
    """u_1^l(x) (eqs 7, 9); u_0 = 1 - u_1 (eqs 8, 10, 11). Shape (n, q)."""
    # g Y + (1 - g) p1, built in one (n, q) array (at many labels each temporary is
    # as large as the result).
    u1: NDArray[np.float64] = np.add(OL, s, dtype=np.float64)
    g = np.asarray(g, dtype=np.float64)[:, None]
    u1 *= (1.0 - g) / (np.asarray(O, dtype=np.float64)[:, None] + 2.0 * s)
    rows, cols = np.nonzero(np.asarray(Y))  # g Y only where y = 1: no (n, q) temporary
    u1[rows, cols] += g[rows, 0]
    return u1


def distance_weights(dist: NDArray[Any], beta: float) -> NDArray[np.float64]:
    """w_d of eq 20 for every row of a (n_points, k) distance array.

    Neighbours at distance 0 share the weight equally (the limit of eq 20); the
    rest is computed as ``(d_min / d)^(2/(beta-1))``, normalised, which equals
    eq 20 without overflowing for small distances.
    """
    dist = np.asarray(dist, dtype=np.float64)
    m, k = dist.shape
    if m == 0:
        return np.empty((0, k))
    e = 0.0 if np.isinf(beta) else 2.0 / (beta - 1.0)
    zero = np.less_equal(dist, 0.0)
    has_zero = zero.any(axis=1)
    dmin = dist.min(axis=1)
    safe = np.where(has_zero[:, None], 1.0, dist)
    ratio = np.where(has_zero, 1.0, dmin)[:, None] / safe
    w = ratio**e
    w = np.where(has_zero[:, None], zero.astype(np.float64), w)
    return np.asarray(w / w.sum(axis=1, keepdims=True))


def hubness_weights(O_nbrs: NDArray[Any], n: int) -> NDArray[np.float64]:
    """w_h of eq 25 from the neighbours' self-appended k-occurrences.

    Rows whose denominator is 0 (every neighbour has ``O_k = n``) get 1/k.
    """
    O_nbrs = np.asarray(O_nbrs, dtype=np.float64)
    h = np.log(float(n)) - np.log(O_nbrs)
    h = np.maximum(h, 0.0)
    tot = h.sum(axis=1, keepdims=True)
    k = O_nbrs.shape[1]
    with np.errstate(invalid="ignore", divide="ignore"):
        w = h / tot
    return np.asarray(np.where(tot > 0, w, 1.0 / k))


def relevance_scores(graph: NeighborGraph, weights: FloatArray, u1: FloatArray, k: int) -> NDArray[np.float64]:
    """r^l of eqs 5-6 with the product weights ``w_d w_h``; one sparse product.

    Rows whose weights sum to 0 use uniform weights (eq 6 would be 0/0).
    """
    w = np.asarray(weights, dtype=np.float64)
    tot = w.sum(axis=1, keepdims=True)
    w = np.where(tot > 0, w, 1.0 / k)
    # u0 = 1 - u1 (eq 8), so the denominator v0 + v1 of eq 6 is the row's weight
    # total: one product with the normalised weights instead of two.
    w = w / w.sum(axis=1, keepdims=True)
    # Many labels: the product compiled on several threads (the same terms in the
    # same order as scipy's single-threaded CSR product).
    passes = _logistic_fused.runner(graph.indices.shape[0]) if u1.size >= _THREADED_FROM else None
    if passes is not None:
        ind = np.ascontiguousarray(graph.indices, dtype=np.intp)
        out: NDArray[np.float64] = passes.weighted_rows(
            ind, np.ascontiguousarray(w), np.ascontiguousarray(u1, dtype=np.float64)
        )
        return out
    A = graph.to_csr(u1.shape[0], w)
    return np.asarray(A @ u1)
