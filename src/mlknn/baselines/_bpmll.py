"""BP-MLL (Zhang and Zhou 2014), with the review's stacking threshold model.

Sensitive to feature scales: put it behind a ``StandardScaler`` in a pipeline.
"""


from typing import Any, cast

import numpy as np
from scipy.optimize import minimize
from sklearn.utils import check_random_state

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


def bpmll_loss_grad(
    params: NDArray[np.float64],
    X: MatrixLike,
    Y: NDArray[Any],
    shapes: Any,
    alpha: Any,
) -> Any:
    """BP-MLL's global error (Zhang and Zhou 2014, section on BP-MLL) plus ``alpha / 2 (||V||^2 + ||W||^2)`` and
    its gradient, vectorised.

    The pairwise sum factorises: for instance i,
    ``sum_{j in Y, k in Ybar} exp(-(c_j - c_k)) = (sum_{j in Y} e^{-c_j}) (sum_{k in Ybar} e^{c_k})``,
    so the loss and gradient cost O(m q), not O(m q^2). Instances with no
    relevant or no irrelevant label have no pair and contribute 0.
    """
    (d, s), q = shapes
    V = params[: d * s].reshape(d, s)
    off = d * s
    gamma = params[off : off + s]
    off += s
    W = params[off : off + s * q].reshape(s, q)
    theta = params[off + s * q :]
    B = np.tanh(safe_dot(X, V) + gamma)
    Cout = np.tanh(B @ W + theta)
    Yb = Y.astype(bool)
    n_rel = Yb.sum(axis=1)
    norm = np.zeros(Y.shape[0])
    ok = (n_rel > 0) & (n_rel < q)
    norm[ok] = 1.0 / (n_rel[ok] * (q - n_rel[ok]))
    e_neg = np.where(Yb, np.exp(-Cout), 0.0)
    e_pos = np.where(Yb, 0.0, np.exp(Cout))
    P = e_neg.sum(axis=1)
    N = e_pos.sum(axis=1)
    value = float((norm * P * N).sum()) + 0.5 * alpha * ((V**2).sum() + (W**2).sum())
    dC = norm[:, None] * (-e_neg * N[:, None] + e_pos * P[:, None])
    dA2 = dC * (1.0 - Cout**2)
    gW = B.T @ dA2 + alpha * W
    gtheta = dA2.sum(axis=0)
    dA1 = (dA2 @ W.T) * (1.0 - B**2)
    gV = np.asarray(X.T @ dA1) + alpha * V
    ggamma = dA1.sum(axis=0)
    return value, np.concatenate([gV.ravel(), ggamma, gW.ravel(), gtheta])


@cite
@fill_doc
class BPMLL(DecisionScoresMixin, BaselineClassifier):
    """BP-MLL (Zhang and Zhou 2014, section on BP-MLL, Zhang and Zhou 2006): one-hidden-layer tanh network
    trained on the pairwise exponential ranking loss, with the stacking threshold.

    The network is ``c = tanh(W^T tanh(V^T x + gamma) + theta)``; the loss is
    ``E = sum_i 1/(|Y_i||Ybar_i|) sum_{(j,k)} exp(-(c_j^i - c_k^i))`` plus the
    weight decay ``alpha / 2 (||V||^2 + ||W||^2)``. The review's BP-MLL updates are
    per-instance gradient steps; here the full-batch gradient (the sum of
    those per-instance terms, vectorised) is used by L-BFGS (``solver='lbfgs'``)
    or by plain gradient descent on the mean loss (``solver='gd'``: step
    ``learning_rate`` times the mean gradient, ``max_iter`` epochs).

    ``predict`` applies the review's stacking threshold model t(x) fitted on the training
    outputs: ``c_j > t(x)``. ``decision_function`` is ``c - t(x)``,
    ``predict_proba`` is ``logistic(c - t(x))`` (a monotone score, not a
    probability) and ``label_scores`` the raw outputs c in [-1, 1].

    Parameters
    ----------
    hidden_layer_size : int, default=None
        s. None: 20% of the number of features (at least 1), the BP-MLL paper's
        setting as we know it (the papers give none).
    alpha : float, default=10.0
        Weight decay, added to the summed (not averaged) pairwise loss. Chosen by
        5-fold cross-validation on the training halves of emotions and yeast over
        {0.1, 1, 10, 30, 100} (docs/baselines.md): full-batch L-BFGS fits the
        training set much more closely than BP-MLL's 100 epochs of online
        gradient descent, and overfits yeast with little decay.
    solver : {'lbfgs', 'gd'}, default='lbfgs'
        'lbfgs': L-BFGS on the full-batch loss; 'gd': plain gradient descent on the mean
        loss.
    learning_rate : float, default=0.05
        'gd' only.
    max_iter : int, default=100
        L-BFGS iterations or gradient-descent epochs (BP-MLL paper: 100 epochs).
    tol : float, default=1e-6
        L-BFGS gradient tolerance.
    {random_state}
        Seeds the weight initialisation: uniform in +-1/sqrt(fan_in).

    Attributes
    ----------
    coefs_ : list of two ndarrays
        V (n_features, s) and W (s, n_labels).
    intercepts_ : list of two ndarrays
        gamma (s,) and theta (n_labels,).
    threshold_coef_, threshold_intercept_
    loss_ : float
    n_iter_ : int
    n_features_in_ : int
        Number of features seen in ``fit``.
    n_labels_ : int
        Number of labels q.
    classes_ : list of ndarray
        ``[0, 1]`` for every label (scikit-learn's multi-label form).

    See Also
    --------
    RankSVM : a large-margin ranker with the same threshold model.
    MLRBF : a radial-basis-function network.

    References
    ----------
    M.-L. Zhang and Z.-H. Zhou, "Multilabel neural networks with applications to
    functional genomics and text categorization", IEEE TKDE 18(10):1338-1351, 2006.

    %(review)s, section on BP-MLL.

    Examples
    --------
    >>> from mlknn.baselines import BPMLL
    >>> from mlknn.datasets import make_multilabel
    >>> data = make_multilabel(n_samples=100, random_state=0)
    >>> clf = BPMLL(max_iter=20, random_state=0).fit(data.X, data.Y)
    >>> clf.coefs_[0].shape, clf.coefs_[1].shape
    ((20, 4), (4, 5))
    """

    _parameter_constraints = {
        "hidden_layer_size": [*POSITIVE_INT, None],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "solver": [StrOptions({"lbfgs", "gd"})],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        **SOLVER_CONSTRAINTS,
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        hidden_layer_size: int | None = None,
        *,
        alpha: float = 10.0,
        solver: str = "lbfgs",
        learning_rate: float = 0.05,
        max_iter: int = 100,
        tol: float = 1e-6,
        random_state: Any = None,
    ) -> None:
        self.hidden_layer_size = hidden_layer_size
        self.alpha = alpha
        self.solver = solver
        self.learning_rate = learning_rate
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def _fit(self, X: MatrixLike, Y: NDArray[Any]) -> None:
        m, d = X.shape
        q = Y.shape[1]
        s = self.hidden_layer_size or max(1, int(round(0.2 * d)))
        rng = check_random_state(self.random_state)
        init = np.concatenate(
            [
                rng.uniform(-1, 1, d * s) / np.sqrt(d),
                rng.uniform(-1, 1, s) / np.sqrt(d),
                rng.uniform(-1, 1, s * q) / np.sqrt(s),
                rng.uniform(-1, 1, q) / np.sqrt(s),
            ]
        )
        shapes = ((d, s), q)
        Yf = Y.astype(np.float64)
        if self.solver == "lbfgs":
            res = minimize(
                bpmll_loss_grad,
                init,
                args=(X, Yf, shapes, self.alpha),
                jac=True,
                method="L-BFGS-B",
                options={"maxiter": self.max_iter, "gtol": self.tol},
            )
            params, self.loss_, self.n_iter_ = res.x, float(res.fun), int(res.nit)
        else:
            params = init
            for _ in range(self.max_iter):  # epochs
                value, grad = bpmll_loss_grad(params, X, Yf, shapes, self.alpha)
                params = params - self.learning_rate * grad / m
            self.loss_ = float(bpmll_loss_grad(params, X, Yf, shapes, self.alpha)[0])
            self.n_iter_ = self.max_iter
        off = d * s
        self.coefs_ = [params[:off].reshape(d, s), params[off + s : off + s + s * q].reshape(s, q)]
        self.intercepts_ = [params[off : off + s], params[off + s + s * q :]]
        self.threshold_coef_, self.threshold_intercept_ = fit_threshold_model(self._outputs(X), Y)

    def _outputs(self, X: MatrixLike) -> NDArray[np.float64]:
        B = np.tanh(safe_dot(X, self.coefs_[0]) + self.intercepts_[0])
        return cast(NDArray[np.float64], np.tanh(B @ self.coefs_[1] + self.intercepts_[1]))

    def _decision(self, X: MatrixLike) -> NDArray[np.float64]:
        """``c_j(x) - t(x)``: positive exactly for the predicted labels; shape (n, n_labels)."""
        return threshold_margin(self._outputs(X), self.threshold_coef_, self.threshold_intercept_)

    @fill_doc
    def label_scores(self, X: MatrixLike) -> NDArray[np.float64]:
        """The raw network outputs c_j(x) in [-1, 1] (before the threshold).

        Parameters
        ----------
        {X_query}

        Returns
        -------
        ndarray of shape (n_queries, n_labels)
            The network outputs.
        """
        X = self._validate_predict_data(X)
        return self._outputs(X)
