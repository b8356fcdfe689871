"""MLLS, multi-label least squares with a shared subspace (Zhang and Zhou 2014, section on MLLS).

Sensitive to feature scales: put it behind a ``StandardScaler`` in a pipeline.
"""


from typing import Any, cast

import numpy as np
import scipy.sparse as sp
from scipy.linalg import eigh, qr

from ..utils._param_validation import Interval, Real
from ..utils._typing import MatrixLike, NDArray
from ._base import POSITIVE_INT, BaselineClassifier, DecisionScoresMixin, cite, safe_dot


@cite
class MLLS(DecisionScoresMixin, BaselineClassifier):
    """Multi-label least squares with a shared subspace (Zhang and Zhou 2014, section on MLLS, Ji et al. 2008).

    Minimises ``1/m ||X U - Y||_F^2 + alpha ||U - Theta^T V||_F^2 + beta ||U||_F^2``
    over U, V and an orthonormal Theta (r x d), with targets Y in {-1, +1}, in
    closed form (Zhang and Zhou 2014, section on MLLS):

    * ``M = X^T X / m + (alpha + beta) I``, ``S1 = I - alpha M^-1``,
      ``S2 = M^-1 X^T Y Y^T X M^-1``;
    * Theta maximises ``trace((Theta S1 Theta^T)^-1 Theta S2 Theta^T)``: the top r
      generalised eigenvectors Z of the pencil (S2, S1), i.e. ``S2 z = lambda S1 z``
      (the review writes ``S1 z = lambda S2 z``, whose top eigenvectors would be
      those of the inverse pencil; S2 has rank <= q, so (S2, S1) is the pencil
      whose largest eigenvalues maximise the trace), orthonormalised by a reduced
      QR, ``Theta = Q^T``; solved with ``scipy.linalg.eigh`` (S1 is positive
      definite);
    * ``U = (M - alpha Theta^T Theta)^-1 X^T Y / m``, ``V = Theta U``.

    ``fit_intercept`` centres X and Y (training means) and adds the intercept back.
    ``predict`` is ``x^T U + b > 0``; ``predict_proba`` is ``logistic(2 (x^T U + b))``.
    Uses d x d matrices (O(d^2) memory, O(d^3) time): fine up to a few thousand
    features; X may be sparse (only X^T X and X^T Y are formed).

    Parameters
    ----------
    alpha : float, default=0.5
        Weight of the shared subspace.
    beta : float, default=1.0
        Ridge penalty. The review gives no values for alpha and beta; these were
        chosen by 5-fold cross-validation on the training halves of emotions and
        yeast over alpha in {0.1, 0.5, 1} x beta in {0.01, 0.1, 1, 3, 10} (alpha
        barely matters there; docs/baselines.md).
    n_components : int, default=None
        r; None: ``max(1, q - 1)``. Capped at n_features.
    fit_intercept : bool, default=True
        Centre X and Y and fit an intercept per label.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features, n_labels)
        U.
    intercept_ : ndarray of shape (n_labels,)
    subspace_ : ndarray of shape (r, n_features)
        Theta.
    shared_coef_ : ndarray of shape (r, n_labels)
        V.
    n_features_in_ : int
        Number of features seen in ``fit``.
    n_labels_ : int
        Number of labels q.
    classes_ : list of ndarray
        ``[0, 1]`` for every label (scikit-learn's multi-label form).

    See Also
    --------
    BinaryRelevance : independent per-label models, no shared subspace.

    References
    ----------
    S. Ji, L. Tang, S. Yu and J. Ye, "Extracting shared subspace for multi-label
    classification", KDD 2008, pp. 381-389.

    %(review)s, section on MLLS.

    Examples
    --------
    >>> from mlknn.baselines import MLLS
    >>> from mlknn.datasets import make_multilabel
    >>> data = make_multilabel(n_samples=100, random_state=0)
    >>> clf = MLLS().fit(data.X, data.Y)
    >>> clf.subspace_.shape, clf.coef_.shape
    ((4, 20), (20, 5))
    """

    _parameter_constraints = {
        "alpha": [Interval(Real, 0, None, closed="left")],
        "beta": [Interval(Real, 0, None, closed="neither")],
        "n_components": [*POSITIVE_INT, None],
        "fit_intercept": ["boolean"],
    }

    #: predict_proba = logistic(2 (x^T U + b)): the scores were fitted to +-1 targets.
    _proba_scale = 2.0

    def __init__(
        self,
        alpha: float = 0.5,
        beta: float = 1.0,
        *,
        n_components: int | None = None,
        fit_intercept: bool = True,
    ) -> None:
        self.alpha = alpha
        self.beta = beta
        self.n_components = n_components
        self.fit_intercept = fit_intercept

    def _fit(self, X: MatrixLike, Y: NDArray[Any]) -> None:
        m, d = X.shape
        q = Y.shape[1]
        T = 2.0 * Y - 1.0
        G = np.asarray((X.T @ X).toarray() if sp.issparse(X) else X.T @ X, dtype=np.float64)
        XtT = np.asarray(X.T @ T, dtype=np.float64)
        if self.fit_intercept:
            mu = np.asarray(X.mean(axis=0)).ravel()
            tmean = T.mean(axis=0)
            G = G - m * np.outer(mu, mu)
            XtT = XtT - m * np.outer(mu, tmean)
        else:
            mu, tmean = np.zeros(d), np.zeros(q)
        a, b = self.alpha, self.beta
        M = G / m + (a + b) * np.eye(d)
        Minv = np.linalg.inv(M)
        Minv = 0.5 * (Minv + Minv.T)
        S1 = np.eye(d) - a * Minv
        A = Minv @ XtT
        S2 = A @ A.T
        S1 = 0.5 * (S1 + S1.T)
        S2 = 0.5 * (S2 + S2.T)
        r = min(self.n_components or max(1, q - 1), d)
        _, Z = eigh(S2, S1, subset_by_index=[d - r, d - 1])
        Qm, _ = qr(Z, mode="economic")
        Theta = Qm.T
        U = np.linalg.solve(M - a * Theta.T @ Theta, XtT) / m
        self.subspace_ = Theta
        self.coef_ = U
        self.shared_coef_ = Theta @ U
        self.intercept_ = tmean - mu @ U

    def objective(self, X: MatrixLike, Y: NDArray[Any], U: NDArray[Any], Theta: NDArray[Any]) -> float:
        """The review's MLLS objective at ``V = Theta U`` (for tests); X centred by the caller.

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features)
            Centred training features.
        Y : ndarray of shape (n_samples, n_labels)
            Training targets in {-1, +1}.
        U : ndarray of shape (n_features, n_labels)
            The linear weights.
        Theta : ndarray of shape (r, n_features)
            The orthonormal shared subspace.

        Returns
        -------
        float
            The value of the objective.
        """
        T = 2.0 * np.asarray(Y) - 1.0
        R = np.asarray(X @ U) - T
        P = U - Theta.T @ (Theta @ U)
        m = X.shape[0]
        return float((R**2).sum() / m + self.alpha * (P**2).sum() + self.beta * (U**2).sum())

    def _decision(self, X: MatrixLike) -> NDArray[np.float64]:
        """``x^T U + b``; shape (n, n_labels)."""
        return cast(NDArray[np.float64], safe_dot(X, self.coef_) + self.intercept_)
