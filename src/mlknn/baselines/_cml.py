"""CML, the collective multi-label classifier (Zhang and Zhou 2014, section on CML).

Sensitive to feature scales: put it behind a ``StandardScaler`` in a pipeline.
"""

from itertools import combinations
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.optimize import minimize
from scipy.special import logsumexp

from ..utils._budget import WORK_BYTES
from ..utils._docstrings import fill_doc
from ..utils._param_validation import Interval, Real, StrOptions
from ..utils._typing import MatrixLike, NDArray, SparseMatrix
from ._base import (
    SOLVER_CONSTRAINTS,
    BaselineClassifier,
    cite,
    safe_dot,
)

#: Largest q for label_sets='all' (2^q label sets).
CML_MAX_ALL_LABELS = 12


def pair_features(S: NDArray[Any]) -> SparseMatrix:
    """The review's CML label-pair indicators for label sets S (K, q) as a sparse (K, 4 P)
    matrix, P = q (q - 1) / 2: column ``4 p + 2 y_j1 + y_j2`` is 1 for pair p = (j1, j2)."""
    S = np.asarray(S, dtype=np.intp)
    K, q = S.shape
    pairs = np.array(list(combinations(range(q), 2)), dtype=np.intp).reshape(-1, 2)
    P = pairs.shape[0]
    if P == 0:
        return sp.csr_matrix((K, 0))
    cols = 4 * np.arange(P)[None, :] + 2 * S[:, pairs[:, 0]] + S[:, pairs[:, 1]]
    rows = np.repeat(np.arange(K), P)
    return sp.csr_matrix((np.ones(K * P), (rows, cols.ravel())), shape=(K, 4 * P))


#: Bytes of one (rows, label sets) block of CML's potentials. With
#: label_sets='observed' the number K of label sets can approach the number of
#: instances (label-rich data), so the (n, K) potentials, their exponentials and
#: the set probabilities are built a block of rows at a time.
_CML_BLOCK_BYTES = WORK_BYTES


def _cml_row_blocks(n_rows: int, n_sets: int) -> list[slice]:
    """Row slices whose (rows, n_sets) float64 blocks take about _CML_BLOCK_BYTES."""
    step = max(1, _CML_BLOCK_BYTES // (8 * max(n_sets, 1)))
    return [slice(s, min(s + step, n_rows)) for s in range(0, n_rows, step)]


def cml_loss_grad(
    params: NDArray[np.float64],
    X: MatrixLike,
    S: NDArray[Any],
    Phi: MatrixLike,
    t: Any,
    counts: Any,
    inv_var: Any,
) -> Any:
    """CML's negative penalised log-likelihood (Zhang and Zhou 2014, section on CML) over the label sets S and
    its gradient.

    ``params`` is ``[W.ravel(), b, pair_coef]``; S (K, q) float 0/1 label sets;
    Phi = :func:`pair_features` (S); t (m,) the index in S of each training label
    set; counts = bincount(t, minlength=K); inv_var = 1 / epsilon^2.
    """
    m, d = X.shape
    q = S.shape[1]
    W = params[: d * q].reshape(d, q)
    b = params[d * q : d * q + q]
    pc = params[d * q + q :]
    A = safe_dot(X, W) + b
    pair_scores = Phi @ pc
    St = S[t]
    logZ = np.empty(m)
    G = np.empty((m, q))
    set_proba_sum = np.zeros(S.shape[0])
    for rows in _cml_row_blocks(m, S.shape[0]):  # (rows, K) potentials, never (m, K)
        E = A[rows] @ S.T + pair_scores
        logZ[rows] = logsumexp(E, axis=1)
        Pm = np.exp(E - logZ[rows, None])
        G[rows] = St[rows] - Pm @ S
        set_proba_sum += Pm.sum(axis=0)
    ll = (A * St).sum() + pair_scores[t].sum() - logZ.sum()
    gW = np.asarray(X.T @ G)
    gb = G.sum(axis=0)
    gp = Phi.T @ (counts - set_proba_sum)
    value = float(-ll + 0.5 * inv_var * (params**2).sum())
    grad = -np.concatenate([gW.ravel(), gb, gp]) + inv_var * params
    return value, grad


@cite
class CML(BaselineClassifier):
    """Collective multi-label classifier (Zhang and Zhou 2014, section on CML, Ghamrawi and McCallum 2005).

    A conditional maximum-entropy model over label vectors,
    ``p(y | x) = exp(sum_j [y_j = 1] (<w_j, x> + b_j) + sum_{j1<j2} theta_{j1 j2}(y_j1, y_j2)) / Z(x)``,
    with the d q feature-label constraints (plus a bias per label) and the
    4 C(q, 2) label-pair constraints of the review's section on CML, a Gaussian prior
    N(0, ``prior_variance``) on every parameter, fitted by L-BFGS on the penalised
    log-likelihood (vectorised gradient).

    **Pruning.** The sum over 2^q label vectors (in Z(x), the gradient and the
    MAP inference) is restricted to the label sets seen in training
    (``label_sets='observed'``, Ghamrawi and McCallum's "supported
    combinations"); ``label_sets='all'`` enumerates all 2^q for q <= 12.

    ``predict`` is the MAP label set; ``predict_proba`` the marginals
    ``P(y_j = 1 | x)`` under the model (so ``predict`` is not in general
    ``predict_proba > 0.5``).

    Parameters
    ----------
    prior_variance : float, default=0.01
        epsilon^2 of the review's section on CML. The review gives no value; 0.01 was chosen by 5-fold
        cross-validation on the training halves of emotions and yeast over
        {0.001, 0.003, 0.01, 0.03, 0.1, 1, 10} (docs/baselines.md). The unary
        feature weights live on the scale of standardised features.
    label_sets : {'observed', 'all'}, default='observed'
        The label sets the model normalises over: those seen in training ('observed'),
        or all 2^q (q <= 12).
    max_iter : int, default=200
        Most L-BFGS iterations.
    tol : float, default=1e-6
        L-BFGS gradient tolerance.

    Attributes
    ----------
    label_sets_ : ndarray of shape (K, n_labels)
    coef_ : ndarray of shape (n_features, n_labels)
    intercept_ : ndarray of shape (n_labels,)
    pair_coef_ : ndarray of shape (4 C(q, 2),)
    n_iter_ : int
    n_features_in_ : int
        Number of features seen in ``fit``.
    n_labels_ : int
        Number of labels q.
    classes_ : list of ndarray
        ``[0, 1]`` for every label (scikit-learn's multi-label form).

    See Also
    --------
    LabelPowerset : whole label sets as classes, without pairwise terms.

    References
    ----------
    N. Ghamrawi and A. McCallum, "Collective multi-label classification",
    CIKM 2005, pp. 195-200.

    %(review)s, section on CML.

    Examples
    --------
    >>> from mlknn.baselines import CML
    >>> from mlknn.datasets import make_multilabel
    >>> data = make_multilabel(n_samples=100, random_state=0)
    >>> clf = CML(max_iter=30).fit(data.X, data.Y)
    >>> P = clf.predict_proba(data.X[:2])
    >>> P.shape, bool(((P >= 0) & (P <= 1)).all())
    ((2, 5), True)
    """

    _parameter_constraints = {
        "prior_variance": [Interval(Real, 0, None, closed="neither")],
        "label_sets": [StrOptions({"observed", "all"})],
        **SOLVER_CONSTRAINTS,
    }

    def __init__(
        self,
        prior_variance: float = 0.01,
        *,
        label_sets: str = "observed",
        max_iter: int = 200,
        tol: float = 1e-6,
    ) -> None:
        self.prior_variance = prior_variance
        self.label_sets = label_sets
        self.max_iter = max_iter
        self.tol = tol

    def _fit(self, X: MatrixLike, Y: NDArray[Any]) -> None:
        m, d = X.shape
        q = Y.shape[1]
        if self.label_sets == "all":
            if q > CML_MAX_ALL_LABELS:
                raise ValueError(
                    f"The 'label_sets' parameter of CML may be 'all' only for n_labels <= "
                    f"{CML_MAX_ALL_LABELS} (2^q label sets); got n_labels = {q}. Use 'observed'."
                )
            codes = np.arange(2**q)
            S = ((codes[:, None] >> np.arange(q)[::-1]) & 1).astype(np.uint8)
            t = Y.astype(np.int64) @ (1 << np.arange(q)[::-1])
        else:
            S, t = np.unique(Y, axis=0, return_inverse=True)
            t = np.asarray(t).reshape(-1)
        self.label_sets_ = S
        Sf = S.astype(np.float64)
        Phi = pair_features(S)
        n_pair = Phi.shape[1]
        K = S.shape[0]
        counts = np.bincount(t, minlength=K).astype(np.float64)
        data = (X, Sf, Phi, t, counts, 1.0 / self.prior_variance)
        res = minimize(
            cml_loss_grad,
            np.zeros(d * q + q + n_pair),
            args=data,
            jac=True,
            method="L-BFGS-B",
            options={"maxiter": self.max_iter, "gtol": self.tol},
        )
        self.coef_ = res.x[: d * q].reshape(d, q)
        self.intercept_ = res.x[d * q : d * q + q]
        self.pair_coef_ = res.x[d * q + q :]
        self.n_iter_ = int(res.nit)

    def _log_potential_blocks(self, X: MatrixLike) -> Any:
        """(rows, log-potentials of those rows over ``label_sets_``), block by block."""
        A = safe_dot(X, self.coef_) + self.intercept_
        pair_scores = pair_features(self.label_sets_) @ self.pair_coef_
        S = self.label_sets_.T.astype(np.float64)
        for rows in _cml_row_blocks(A.shape[0], S.shape[1]):
            yield rows, A[rows] @ S + pair_scores

    @fill_doc
    def predict_log_set_proba(self, X: MatrixLike) -> Any:
        """log p(label set k | x) over ``label_sets_``; shape (n, K).

        Parameters
        ----------
        {X_query}

        Returns
        -------
        ndarray of shape (n_queries, n_label_sets)
            Log-probability of each label set of ``label_sets_``.
        """
        X = self._validate_predict_data(X)
        out = np.empty((X.shape[0], self.label_sets_.shape[0]))
        for rows, E in self._log_potential_blocks(X):
            out[rows] = E - logsumexp(E, axis=1, keepdims=True)
        return out

    def _predict(self, X: MatrixLike) -> NDArray[Any]:
        out = np.empty((X.shape[0], self.n_labels_), dtype=self.label_sets_.dtype)
        for rows, E in self._log_potential_blocks(X):
            out[rows] = self.label_sets_[np.argmax(E, axis=1)]
        return out

    def _predict_proba(self, X: MatrixLike) -> NDArray[np.float64]:
        S = self.label_sets_.astype(np.float64)
        out = np.empty((X.shape[0], self.n_labels_))
        for rows, E in self._log_potential_blocks(X):
            out[rows] = np.exp(E - logsumexp(E, axis=1, keepdims=True)) @ S
        # A marginal is a sum of set probabilities: rounding can take it 1 ulp past 1.
        return np.clip(out, 0.0, 1.0, out=out)
