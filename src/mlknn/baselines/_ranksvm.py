"""Rank-SVM (Zhang and Zhou 2014), with the review's stacking threshold model.

Sensitive to feature scales: put it behind a ``StandardScaler`` in a pipeline,
as the benchmark in docs/baselines.md does.
"""


from typing import Any, cast

import numpy as np
from scipy.optimize import minimize
from sklearn.kernel_approximation import Nystroem

from ..utils._docstrings import fill_doc
from ..utils._param_validation import Interval, Real, StrOptions
from ..utils._typing import MatrixLike, NDArray
from ._base import (
    POSITIVE_INT,
    SOLVER_CONSTRAINTS,
    BaselineClassifier,
    DecisionScoresMixin,
    cite,
    safe_dot,
)
from ._threshold import fit_threshold_model, threshold_margin

#: Width of the quadratic zone of the smoothed hinge (see RankSVM).
HUBER_WIDTH = 0.1


def huber_hinge(
    z: NDArray[np.float64],
    width: float = HUBER_WIDTH,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Smoothed hinge on margin z and its derivative.

    0 for z >= 1; (1 - z)^2 / (2 width) for 1 - width < z < 1; 1 - z - width / 2
    below. Differs from the hinge max(0, 1 - z) by at most width / 2.
    """
    u = 1.0 - z
    loss = np.where(u <= 0, 0.0, np.where(u < width, u * u / (2 * width), u - width / 2))
    grad = np.where(u <= 0, 0.0, np.where(u < width, -u / width, -1.0))
    return loss, grad


def ranking_pairs(Y: NDArray[Any], chunk: int = 4096) -> Any:
    """All (i, j, k) with y_ij = 1 and y_ik = 0, and the weights ``1 / (|Y_i| |Ybar_i|)``.

    Vectorised per block of ``chunk`` instances (the block loop bounds the
    (chunk, q, q) mask). Instances with no relevant or no irrelevant label give
    no pair.
    """
    Y = np.asarray(Y).astype(bool)
    m, q = Y.shape
    n_rel = Y.sum(axis=1)
    w_inst = np.zeros(m)
    ok = (n_rel > 0) & (n_rel < q)
    w_inst[ok] = 1.0 / (n_rel[ok] * (q - n_rel[ok]))
    parts_i, parts_j, parts_k = [], [], []
    for start in range(0, m, chunk):
        Yb = Y[start : start + chunk]
        mask = Yb[:, :, None] & ~Yb[:, None, :]
        i, j, k = np.nonzero(mask)
        parts_i.append(i + start)
        parts_j.append(j)
        parts_k.append(k)
    i = np.concatenate(parts_i) if parts_i else np.zeros(0, dtype=np.intp)
    j = np.concatenate(parts_j) if parts_j else np.zeros(0, dtype=np.intp)
    k = np.concatenate(parts_k) if parts_k else np.zeros(0, dtype=np.intp)
    return i, j, k, w_inst[i]


def ranksvm_loss_grad(
    params: NDArray[np.float64],
    Phi: MatrixLike,
    pairs: tuple[NDArray[Any], ...],
    q: int,
    C: float,
) -> tuple[float, NDArray[np.float64]]:
    """Rank-SVM's primal objective (smoothed hinge) and its gradient.

    ``params`` is ``[W.ravel(), b]`` with W of shape (p, q); ``pairs`` is
    :func:`ranking_pairs`'s output. Vectorised over all pairs (bincount scatter).
    """
    i, j, k, w = pairs
    m = Phi.shape[0]
    p = Phi.shape[1]
    W = params[: p * q].reshape(p, q)
    b = params[p * q :]
    F = safe_dot(Phi, W) + b
    loss, dl = huber_hinge(F[i, j] - F[i, k])
    g = C * w * dl
    G = np.bincount(i * q + j, weights=g, minlength=m * q) - np.bincount(i * q + k, weights=g, minlength=m * q)
    G = G.reshape(m, q)
    value = float((W**2).sum() + C * (w * loss).sum())
    gW = np.asarray(Phi.T @ G) + 2.0 * W
    return value, np.concatenate([gW.ravel(), G.sum(axis=0)])


@cite
@fill_doc
class RankSVM(DecisionScoresMixin, BaselineClassifier):
    """Rank-SVM (Zhang and Zhou 2014, section on Rank-SVM, Elisseeff and Weston 2002) with its stacking threshold.

    Minimises, over q linear scorers ``f_j(x) = <w_j, phi(x)> + b_j``::

        sum_j ||w_j||^2 + C sum_i 1/(|Y_i| |Ybar_i|) sum_{(j, k) in Y_i x Ybar_i} l(f_j(x_i) - f_k(x_i))

    with l the hinge ``max(0, 1 - z)`` (the slack of the review's Rank-SVM QP at its optimum).

    **Solver (a documented reformulation, not the dual QP).** The QP is solved in
    the primal, without slack variables, by L-BFGS (``scipy.optimize.minimize``)
    on the hinge smoothed in a quadratic zone of width ``HUBER_WIDTH`` = 0.1
    (:func:`huber_hinge`; it differs from the hinge by at most 0.05 per pair), all
    pairs vectorised. Biases are not penalised (as in the QP).

    **Kernels.** ``kernel='linear'`` uses phi(x) = x (dense or sparse). Other
    kernels use scikit-learn's :class:`~sklearn.kernel_approximation.Nystroem`
    map on ``n_components`` training instances: with ``n_components >= m``
    every training instance is a landmark and, by the representer theorem, the
    primal in that map is the exact kernel problem; with fewer it is a low-rank
    approximation. The map costs O(m n_components) memory.

    **Threshold.** The stacking threshold model of the review's section on threshold calibration is fitted on the
    training scores: ``predict`` is ``f_j(x) > t(x) = <w*, f(x)> + b*``.
    ``decision_function`` is ``f(x) - t(x)`` (positive for the predicted labels,
    as scikit-learn expects), ``predict_proba`` is ``logistic(f(x) - t(x))`` (a
    monotone score, not a probability) and ``label_scores`` the raw f(x).

    Limitations: the pairs are materialised (memory ``O(sum_i |Y_i| |Ybar_i|)``);
    fine for emotions, scene and yeast, too big for label-rich sets like delicious.

    Parameters
    ----------
    C : float, default=1.0
        Weight of the ranking loss against the norm of the weights.
    kernel : {'linear', 'poly', 'rbf'}, default='linear'
        Younes et al. (2011) used a polynomial kernel ("as reported in [Elisseeff and
        Weston]"; the degree is not given in the paper).
    degree : int, default=2
        Degree of the polynomial kernel.
    gamma : float, default=None
        Kernel coefficient (scikit-learn's default: 1 / n_features).
    coef0 : float, default=1.0
        Constant term of the polynomial kernel.
    n_components : int, default=1000
        Nystroem landmarks (non-linear kernels only).
    max_iter : int, default=500
        L-BFGS iterations.
    tol : float, default=1e-6
        L-BFGS gradient tolerance.
    {random_state}
        Seeds the landmark choice.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features_mapped, n_labels)
    intercept_ : ndarray of shape (n_labels,)
    feature_map_ : Nystroem or None
    threshold_coef_ : ndarray of shape (n_labels,)
    threshold_intercept_ : float
    n_iter_ : int
    n_features_in_ : int
        Number of features seen in ``fit``.
    n_labels_ : int
        Number of labels q.
    classes_ : list of ndarray
        ``[0, 1]`` for every label (scikit-learn's multi-label form).

    See Also
    --------
    BPMLL : a neural-network ranker with the same threshold model.
    ThresholdCalibration : the threshold model around any scorer.

    References
    ----------
    %(elisseeff2002)s

    %(review)s, section on Rank-SVM.

    Examples
    --------
    >>> from mlknn.baselines import RankSVM
    >>> from mlknn.datasets import make_multilabel
    >>> data = make_multilabel(n_samples=100, random_state=0)
    >>> clf = RankSVM(max_iter=50).fit(data.X, data.Y)
    >>> clf.label_scores(data.X[:2]).shape
    (2, 5)
    """

    _parameter_constraints = {
        "C": [Interval(Real, 0, None, closed="neither")],
        "kernel": [StrOptions({"linear", "poly", "rbf"})],
        "degree": POSITIVE_INT,
        "gamma": [Interval(Real, 0, None, closed="neither"), None],
        "coef0": [Interval(Real, None, None, closed="neither")],
        "n_components": POSITIVE_INT,
        **SOLVER_CONSTRAINTS,
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        C: float = 1.0,
        *,
        kernel: str = "linear",
        degree: int = 2,
        gamma: float | None = None,
        coef0: float = 1.0,
        n_components: int = 1000,
        max_iter: int = 500,
        tol: float = 1e-6,
        random_state: Any = None,
    ) -> None:
        self.C = C
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.n_components = n_components
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def _phi(self, X: MatrixLike) -> MatrixLike:
        if self.feature_map_ is None:
            return X
        return self.feature_map_.transform(X)

    def _fit(self, X: MatrixLike, Y: NDArray[Any]) -> None:
        m, q = Y.shape
        if self.kernel == "linear":
            self.feature_map_ = None
        else:
            self.feature_map_ = Nystroem(
                kernel=self.kernel,
                gamma=self.gamma,
                degree=self.degree,
                coef0=self.coef0,
                n_components=min(self.n_components, m),
                random_state=self.random_state,
            ).fit(X)
        Phi = self._phi(X)
        p = Phi.shape[1]
        pairs = ranking_pairs(Y)

        res = minimize(
            ranksvm_loss_grad,
            np.zeros(p * q + q),
            args=(Phi, pairs, q, self.C),
            jac=True,
            method="L-BFGS-B",
            options={"maxiter": self.max_iter, "gtol": self.tol},
        )
        self.coef_ = res.x[: p * q].reshape(p, q)
        self.intercept_ = res.x[p * q :]
        self.n_iter_ = int(res.nit)
        F = self._scores_mapped(Phi)
        self.threshold_coef_, self.threshold_intercept_ = fit_threshold_model(F, Y)

    def _scores_mapped(self, Phi: MatrixLike) -> NDArray[np.float64]:
        return cast(NDArray[np.float64], safe_dot(Phi, self.coef_) + self.intercept_)

    def _decision(self, X: MatrixLike) -> NDArray[np.float64]:
        """``f_j(x) - t(x)``: positive exactly for the predicted labels; shape (n, n_labels)."""
        return threshold_margin(self._scores_mapped(self._phi(X)), self.threshold_coef_, self.threshold_intercept_)

    @fill_doc
    def label_scores(self, X: MatrixLike) -> NDArray[np.float64]:
        """The raw Rank-SVM scores f_j(x) (before the threshold); shape (n, n_labels).

        Parameters
        ----------
        {X_query}

        Returns
        -------
        ndarray of shape (n_queries, n_labels)
            The scores.
        """
        X = self._validate_predict_data(X)
        return self._scores_mapped(self._phi(X))
