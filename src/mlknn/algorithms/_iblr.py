"""IBLR-ML and IBLR-ML+ (Cheng and Huellermeier 2009), used in seed 001.

Instance-based learning by logistic regression: for every label a logistic model
whose inputs are the label frequencies among the k nearest neighbours of all q
labels (IBLR-ML), optionally with the original features too (IBLR-ML+). Seed 001
compares MLHiKNN with IBLR (Tables 3, A2-A6, Figures 2-7; k = 20 there, k = 10
"as in the prior literature").

The reading follows the paper and the authors' own code in MULAN
(``mulan.classifier.lazy.IBLR_ML``, by Cheng, Spyromitros-Xioufis and Tsoumakas),
which fits Weka's ``Logistic`` (ridge 1e-8) per label.
"""

import warnings

import numpy as np
import scipy.sparse as sp
from scipy.special import expit
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.sparsefuncs import mean_variance_axis

from ..base import HUBNESS_CONSTRAINT, KNNMultiLabelBase
from ..utils._param_validation import Integral, Interval, Real
from ._kernels import constant_labels, fit_logistic_per_label, neighbor_label_counts


class IBLR(KNNMultiLabelBase):
    """Instance-based logistic regression for multi-label data (IBLR-ML / IBLR-ML+).

    **Meta-features.** For an instance x with neighbours N_k(x), the meta-feature
    of label j is the fraction of the k neighbours that have label j,

    ``f_j(x) = count_j(x) / k``,

    i.e. the mean label vector of the neighbours. This is the paper's
    ``omega_{+j}(x) = sum_{x' in N_k(x)} kappa(x, x') y_j(x')`` with the uniform
    kernel ``kappa = 1/k`` of the authors' implementation in MULAN. The paper's
    framework allows a distance-weighted kernel; it is **not** implemented here
    (the experiments of the paper and of seed 001 use the uniform one). For the
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
    every input column is divided by its sample standard deviation (columns
    with zero deviation are left as they are) and, for dense inputs, centred.
    Sparse inputs (IBLR-ML+ with sparse X) are scaled but not centred, which
    keeps them sparse and leaves the optimum unchanged because the intercept is
    not penalised. The fit is scikit-learn's ``LogisticRegression(C=C,
    solver="lbfgs")``; ``C = 1 / (2 ridge)``, so the default ``C = 5e7`` is
    Weka's ridge 1e-8. The coefficients are mapped back to the original units
    (``coef_``, ``intercept_``). When lbfgs stops at ``max_iter`` (typically a
    label that the meta-features separate, where the nearly unpenalised
    optimum lies far out), one :class:`~sklearn.exceptions.ConvergenceWarning`
    names those labels; their coefficients are the last iterate.

    **Constant labels.** A label that is constant in the training data (always
    0 or always 1) gets no model: ``predict_proba`` and ``predict`` return that
    constant.

    **Decision.** ``predict_proba`` is the logistic probability;
    ``predict`` assigns label l when the probability is >= 0.5 (MULAN's
    threshold), evaluated as ``b_l + ... >= 0`` on the linear score.

    Differences from MULAN: MULAN's Euclidean distance rescales each feature
    to [0, 1] by its training range before the neighbour search (ours searches
    the features as given); Weka's BFGS runs to its own convergence test, ours
    to scikit-learn's ``tol`` / ``max_iter``. scikit-multilearn has no IBLR.

    Parameters
    ----------
    n_neighbors : int, default=10
        k, the number of neighbours.
    include_features : bool, default=False
        False: IBLR-ML (meta-features only). True: IBLR-ML+ (the original
        features as well; X may be sparse).
    C : float, default=5e7
        Inverse penalty of scikit-learn's ``LogisticRegression``, > 0;
        ``C = 1 / (2 ridge)`` with Weka's ridge, so 5e7 is ridge 1e-8.
        ``np.inf`` fits without any penalty (the optimum may then not exist).
    max_iter : int, default=1000
        lbfgs iterations per label, >= 1.
    tol : float, default=1e-4
        lbfgs tolerance, > 0.
    neighbors : str or object, default="brute"
        Neighbour-search backend (see :mod:`mlknn.neighbors`).
    metric : str, default="euclidean"
    n_jobs : int, optional
        Parallel jobs (joblib) for the neighbour search and the q logistic
        regressions.
    hubness : {None, "ls", "mp", "mp-gauss", "dsl"} or reduction object, default=None
        Hubness reduction (:mod:`mlknn.hubness`, docs/hubness.md) applied to the
        neighbour graph before the method reads it: the neighbourhoods are the k
        nearest by the secondary distance. None uses the plain distances.

    Attributes
    ----------
    coef_ : ndarray of shape (n_labels, n_inputs)
        Coefficients in the units of the inputs: the first ``n_features_in_``
        columns are the features (IBLR-ML+ only), the last ``n_labels_`` the
        meta-features ``f_1 .. f_q``. Zero for constant labels.
    intercept_ : ndarray of shape (n_labels,)
    n_iter_ : ndarray of shape (n_labels,)
        lbfgs iterations per label (0 for constant labels).
    constant_labels_ : ndarray of shape (n_labels,), bool
        Labels constant in the training data.
    constant_values_ : ndarray of shape (n_labels,), uint8
        Their value (0 where the label is not constant).
    nn_ : fitted neighbour backend
    n_labels_ : int
    n_features_in_ : int

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
    }

    def __init__(
        self,
        n_neighbors=10,
        *,
        include_features=False,
        C=5e7,
        max_iter=1000,
        tol=1e-4,
        neighbors="brute",
        metric="euclidean",
        n_jobs=None,
        hubness=None,
    ):
        self.hubness = hubness
        self.n_neighbors = n_neighbors
        self.include_features = include_features
        self.C = C
        self.max_iter = max_iter
        self.tol = tol
        self.neighbors = neighbors
        self.metric = metric
        self.n_jobs = n_jobs

    # ------------------------------------------------------------ inputs
    def meta_features(self, graph):
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

    def _inputs(self, graph, X, where):
        meta = self.meta_features(graph)
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

    # --------------------------------------------------------------- fit
    def _fit_graph(self, graph, Y, X):
        self._fit_Y = Y
        Z = self._inputs(graph, X, "fit_from_graph")
        p, q = Z.shape[1], Y.shape[1]
        center, scale = _standardisation(Z)
        Zs = _standardise(Z, center, scale)

        constant, values = constant_labels(Y)
        self.constant_labels_ = constant
        self.constant_values_ = values
        todo = np.flatnonzero(~constant)
        params = {"C": self.C, "solver": "lbfgs", "max_iter": self.max_iter, "tol": self.tol}
        w_std, b_std, iters, not_converged = fit_logistic_per_label(Zs, Y, todo, params, n_jobs=self.n_jobs)
        # Back to the units of the inputs: w = w_std / scale, b = b_std - w_std . (center / scale).
        coef = np.zeros((q, p))
        intercept = np.zeros(q)
        n_iter = np.zeros(q, dtype=np.int64)
        coef[todo] = w_std / scale
        intercept[todo] = b_std - w_std @ (center / scale)
        n_iter[todo] = iters
        self.coef_ = coef
        self.intercept_ = intercept
        self.n_iter_ = n_iter
        if not_converged:
            warnings.warn(
                f"IBLR: lbfgs reached max_iter={self.max_iter} before converging "
                f"(tol={self.tol}) for the logistic regression of label(s) {not_converged}; "
                f"with C={self.C:g} the fit is nearly unpenalised, and a label that the "
                "inputs separate has its optimum far out. Their coefficients are the last "
                "iterate; increase max_iter or decrease C to change that.",
                ConvergenceWarning,
                stacklevel=4,
            )

    # ----------------------------------------------------------- predict
    def _scores(self, graph, X):
        Z = self._inputs(graph, X, "the query (predict_proba_from_graph)")
        scores = np.asarray(Z @ self.coef_.T) + self.intercept_
        const = self.constant_labels_
        if const.any():
            scores[:, const] = np.where(self.constant_values_[const] == 1, np.inf, -np.inf)
        return scores

    def _predict_proba_graph(self, graph, X):
        return expit(self._scores(graph, X))

    def _predict_graph(self, graph, X):
        return (self._scores(graph, X) >= 0).astype(np.uint8)


def _standardisation(Z):
    """Centre (dense only) and scale of each input column, as Weka's Logistic.

    The scale is the sample standard deviation (n - 1 denominator); a constant
    column (max == min, so that rounding in the variance cannot make a tiny
    scale) keeps scale 1.
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
        # visible change of the probabilities, see docs/iblr.md).
        Z = np.ascontiguousarray(Z)
        center = Z.sum(axis=0) / n
        dev = Z - center
        sd = np.sqrt((dev * dev).sum(axis=0) / (n - 1))
        constant = Z.max(axis=0) == Z.min(axis=0)
    scale = np.where(constant | ~(sd > 0), 1.0, sd)
    return center, scale


def _standardise(Z, center, scale):
    if sp.issparse(Z):
        return (Z @ sp.diags(1.0 / scale)).tocsr()
    return (Z - center) / scale
