"""Algorithm-adaptation baselines (seed 003, Knowl 12-16; seed 000 for ML-RBF).

MLDT (Knowl 12), RankSVM (Knowl 13), BPMLL (Knowl 14), MLRBF (Zhang 2009),
CML (Knowl 15) and MLLS (Knowl 16). The methods that use distances, dot
products or a neural network (all but MLDT) are sensitive to feature scales;
put them behind a ``StandardScaler`` in a pipeline as the benchmark in
docs/baselines.md does.
"""

from itertools import combinations

import numpy as np
import scipy.sparse as sp
from scipy.linalg import eigh, qr
from scipy.optimize import minimize
from scipy.spatial.distance import pdist
from scipy.special import logsumexp
from sklearn.cluster import KMeans
from sklearn.kernel_approximation import Nystroem
from sklearn.metrics.pairwise import euclidean_distances
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils import check_random_state

from ..utils._param_validation import Integral, Interval, Real, StrOptions
from ._base import BaselineClassifier, DecisionScoresMixin, class_one_proba, member_seeds
from ._threshold import fit_threshold_model, threshold_margin

__all__ = ["BPMLL", "CML", "MLDT", "MLLS", "MLRBF", "RankSVM"]


def _safe_dot(X, W):
    out = X @ W
    return np.asarray(out)


# ------------------------------------------------------------------------ ML-DT
class MLDT(BaselineClassifier):
    """Multi-label decision tree (Knowl 12, Clare and King 2001).

    Splits maximise the information gain of the multi-label entropy
    ``MLEnt(T) = sum_j -p_j log2 p_j - (1 - p_j) log2(1 - p_j)``; a leaf predicts
    the labels with ``p_j > 0.5`` and ``predict_proba`` returns the leaf's p_j.

    scikit-learn's multi-output ``DecisionTreeClassifier(criterion="entropy")``
    is exactly this tree: its impurity of a node is the mean over outputs of the
    binary entropies, i.e. ``MLEnt(T) / q``, so its impurity decrease is the IG of
    Knowl 12 divided by the constant q and selects the same split (thresholds are
    midpoints between consecutive distinct values); its prediction per output is
    the majority class of the leaf, i.e. ``p_j > 0.5`` (a tie at 0.5 predicts 0).
    That tree is fitted here; ties between equally good splits are broken by the
    random feature order of ``random_state``.

    The review leaves the stopping criterion C open; the default grows the tree
    until the leaves are pure or no split has positive gain (no pruning).

    Parameters
    ----------
    max_depth : int, default=None
    min_samples_split : int, default=2
    min_samples_leaf : int, default=1
    min_impurity_decrease : float, default=0.0
        In scikit-learn's units: weighted IG / q (bits).
    random_state : int, RandomState instance or None, default=None

    Attributes
    ----------
    tree_ : DecisionTreeClassifier

    See Also
    --------
    BinaryRelevance : one tree per label instead of one multi-label tree.

    References
    ----------
    A. Clare and R. D. King, "Knowledge discovery in multi-label phenotype data",
    PKDD 2001, LNCS 2168, pp. 42-53.

    M.-L. Zhang and Z.-H. Zhou, "A Review on Multi-Label Learning Algorithms",
    IEEE TKDE 26(8):1819-1837, 2014 (seed 003), Knowl 12.

    Examples
    --------
    >>> from mlknn.baselines import MLDT
    >>> from mlknn.datasets import make_multilabel
    >>> data = make_multilabel(n_samples=100, random_state=0)
    >>> clf = MLDT(max_depth=3, random_state=0).fit(data.X, data.Y)
    >>> clf.predict_proba(data.X[:2]).shape
    (2, 5)
    """

    _parameter_constraints = {
        "max_depth": [Interval(Integral, 1, None, closed="left"), None],
        "min_samples_split": [Interval(Integral, 2, None, closed="left")],
        "min_samples_leaf": [Interval(Integral, 1, None, closed="left")],
        "min_impurity_decrease": [Interval(Real, 0, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        *,
        max_depth=None,
        min_samples_split=2,
        min_samples_leaf=1,
        min_impurity_decrease=0.0,
        random_state=None,
    ):
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_impurity_decrease = min_impurity_decrease
        self.random_state = random_state

    def _fit(self, X, Y):
        self.tree_ = DecisionTreeClassifier(
            criterion="entropy",
            max_depth=self.max_depth,
            min_samples_split=self.min_samples_split,
            min_samples_leaf=self.min_samples_leaf,
            min_impurity_decrease=self.min_impurity_decrease,
            random_state=self.random_state,
        ).fit(X, Y)

    def _predict_proba(self, X):
        P = self.tree_.predict_proba(X)
        if self.tree_.n_outputs_ == 1:
            P = [P]
        classes = self.tree_.classes_ if self.tree_.n_outputs_ > 1 else [self.tree_.classes_]
        # The tree returns one (n, n_classes_j) array per label: take each one's class-1 column.
        return np.column_stack([class_one_proba(Pj, cj) for Pj, cj in zip(P, classes)])

    def _predict(self, X):
        return (self._predict_proba(X) > 0.5).astype(np.uint8)


# --------------------------------------------------------------------- Rank-SVM
#: Width of the quadratic zone of the smoothed hinge (see RankSVM).
HUBER_WIDTH = 0.1


def huber_hinge(z, width=HUBER_WIDTH):
    """Smoothed hinge on margin z and its derivative.

    0 for z >= 1; (1 - z)^2 / (2 width) for 1 - width < z < 1; 1 - z - width / 2
    below. Differs from the hinge max(0, 1 - z) by at most width / 2.
    """
    u = 1.0 - z
    loss = np.where(u <= 0, 0.0, np.where(u < width, u * u / (2 * width), u - width / 2))
    grad = np.where(u <= 0, 0.0, np.where(u < width, -u / width, -1.0))
    return loss, grad


def ranking_pairs(Y, chunk=4096):
    """All (i, j, k) with y_ij = 1 and y_ik = 0, and the weights 1 / (|Y_i| |Ybar_i|).

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


def ranksvm_loss_grad(params, Phi, pairs, q, C):
    """Rank-SVM's primal objective (smoothed hinge) and its gradient.

    ``params`` is ``[W.ravel(), b]`` with W of shape (p, q); ``pairs`` is
    :func:`ranking_pairs`'s output. Vectorised over all pairs (bincount scatter).
    """
    i, j, k, w = pairs
    m = Phi.shape[0]
    p = Phi.shape[1]
    W = params[: p * q].reshape(p, q)
    b = params[p * q :]
    F = _safe_dot(Phi, W) + b
    loss, dl = huber_hinge(F[i, j] - F[i, k])
    g = C * w * dl
    G = np.bincount(i * q + j, weights=g, minlength=m * q) - np.bincount(i * q + k, weights=g, minlength=m * q)
    G = G.reshape(m, q)
    value = float((W**2).sum() + C * (w * loss).sum())
    gW = np.asarray(Phi.T @ G) + 2.0 * W
    return value, np.concatenate([gW.ravel(), G.sum(axis=0)])


class RankSVM(DecisionScoresMixin, BaselineClassifier):
    """Rank-SVM (Knowl 13, Elisseeff and Weston 2002) with its stacking threshold.

    Minimises, over q linear scorers ``f_j(x) = <w_j, phi(x)> + b_j``,

        sum_j ||w_j||^2 + C sum_i 1/(|Y_i| |Ybar_i|) sum_{(j, k) in Y_i x Ybar_i} l(f_j(x_i) - f_k(x_i))

    with l the hinge ``max(0, 1 - z)`` (the slack of Knowl 13's QP at its optimum).

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

    **Threshold.** The stacking threshold model of Knowl 6 is fitted on the
    training scores: ``predict`` is ``f_j(x) > t(x) = <w*, f(x)> + b*``.
    ``decision_function`` is ``f(x) - t(x)`` (positive for the predicted labels,
    as scikit-learn expects), ``predict_proba`` is ``logistic(f(x) - t(x))`` (a
    monotone score, not a probability) and ``label_scores`` the raw f(x).

    Limitations: the pairs are materialised (memory O(sum_i |Y_i| |Ybar_i|));
    fine for emotions, scene and yeast, too big for label-rich sets like delicious.

    Parameters
    ----------
    C : float, default=1.0
    kernel : {'linear', 'poly', 'rbf'}, default='linear'
        Seed 000 used a polynomial kernel ("as reported in [Elisseeff and
        Weston]"; the degree is not given in the seed).
    degree : int, default=2
    gamma : float, default=None
        Kernel coefficient (scikit-learn's default: 1 / n_features).
    coef0 : float, default=1.0
    n_components : int, default=1000
        Nystroem landmarks (non-linear kernels only).
    max_iter : int, default=500
        L-BFGS iterations.
    tol : float, default=1e-6
        L-BFGS gradient tolerance.
    random_state : int, RandomState instance or None, default=None
        Landmark choice.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features_mapped, n_labels)
    intercept_ : ndarray of shape (n_labels,)
    feature_map_ : Nystroem or None
    threshold_coef_ : ndarray of shape (n_labels,)
    threshold_intercept_ : float
    n_iter_ : int

    See Also
    --------
    BPMLL : a neural-network ranker with the same threshold model.
    ThresholdCalibration : the threshold model around any scorer.

    References
    ----------
    A. Elisseeff and J. Weston, "A kernel method for multi-labelled
    classification", Advances in Neural Information Processing Systems 14
    (NIPS 2001), pp. 681-687, 2002.

    M.-L. Zhang and Z.-H. Zhou, "A Review on Multi-Label Learning Algorithms",
    IEEE TKDE 26(8):1819-1837, 2014 (seed 003), Knowl 13.

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
        "degree": [Interval(Integral, 1, None, closed="left")],
        "gamma": [Interval(Real, 0, None, closed="neither"), None],
        "coef0": [Interval(Real, None, None, closed="neither")],
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        C=1.0,
        *,
        kernel="linear",
        degree=2,
        gamma=None,
        coef0=1.0,
        n_components=1000,
        max_iter=500,
        tol=1e-6,
        random_state=None,
    ):
        self.C = C
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.n_components = n_components
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def _phi(self, X):
        if self.feature_map_ is None:
            return X
        return self.feature_map_.transform(X)

    def _fit(self, X, Y):
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

    def _scores_mapped(self, Phi):
        return _safe_dot(Phi, self.coef_) + self.intercept_

    def _decision(self, X):
        """``f_j(x) - t(x)``: positive exactly for the predicted labels; shape (n, n_labels)."""
        return threshold_margin(self._scores_mapped(self._phi(X)), self.threshold_coef_, self.threshold_intercept_)

    def label_scores(self, X):
        """The raw Rank-SVM scores f_j(x) (before the threshold); shape (n, n_labels)."""
        X = self._validate_predict_data(X)
        return self._scores_mapped(self._phi(X))


# ----------------------------------------------------------------------- BP-MLL
def bpmll_loss_grad(params, X, Y, shapes, alpha):
    """BP-MLL's global error (Knowl 14) plus ``alpha / 2 (||V||^2 + ||W||^2)`` and
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
    B = np.tanh(_safe_dot(X, V) + gamma)
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


class BPMLL(DecisionScoresMixin, BaselineClassifier):
    """BP-MLL (Knowl 14, Zhang and Zhou 2006): one-hidden-layer tanh network
    trained on the pairwise exponential ranking loss, with the stacking threshold.

    The network is ``c = tanh(W^T tanh(V^T x + gamma) + theta)``; the loss is
    ``E = sum_i 1/(|Y_i||Ybar_i|) sum_{(j,k)} exp(-(c_j^i - c_k^i))`` plus the
    weight decay ``alpha / 2 (||V||^2 + ||W||^2)``. Knowl 14's updates are
    per-instance gradient steps; here the full-batch gradient (the sum of
    those per-instance terms, vectorised) is used by L-BFGS (``solver='lbfgs'``)
    or by plain gradient descent on the mean loss (``solver='gd'``: step
    ``learning_rate`` times the mean gradient, ``max_iter`` epochs).

    ``predict`` applies the Knowl 6 threshold model t(x) fitted on the training
    outputs: ``c_j > t(x)``. ``decision_function`` is ``c - t(x)``,
    ``predict_proba`` is ``logistic(c - t(x))`` (a monotone score, not a
    probability) and ``label_scores`` the raw outputs c in [-1, 1].

    Parameters
    ----------
    hidden_layer_size : int, default=None
        s. None: 20% of the number of features (at least 1), the BP-MLL paper's
        setting as we know it (the seeds give none).
    alpha : float, default=10.0
        Weight decay, added to the summed (not averaged) pairwise loss. Chosen by
        5-fold cross-validation on the training halves of emotions and yeast over
        {0.1, 1, 10, 30, 100} (docs/baselines.md): full-batch L-BFGS fits the
        training set much more closely than BP-MLL's 100 epochs of online
        gradient descent, and overfits yeast with little decay.
    solver : {'lbfgs', 'gd'}, default='lbfgs'
    learning_rate : float, default=0.05
        'gd' only.
    max_iter : int, default=100
        L-BFGS iterations or gradient-descent epochs (BP-MLL paper: 100 epochs).
    tol : float, default=1e-6
        L-BFGS gradient tolerance.
    random_state : int, RandomState instance or None, default=None
        Weight initialisation: uniform in +-1/sqrt(fan_in).

    Attributes
    ----------
    coefs_ : list of two ndarrays
        V (n_features, s) and W (s, n_labels).
    intercepts_ : list of two ndarrays
        gamma (s,) and theta (n_labels,).
    threshold_coef_, threshold_intercept_
    loss_ : float
    n_iter_ : int

    See Also
    --------
    RankSVM : a large-margin ranker with the same threshold model.
    MLRBF : a radial-basis-function network.

    References
    ----------
    M.-L. Zhang and Z.-H. Zhou, "Multilabel neural networks with applications to
    functional genomics and text categorization", IEEE TKDE 18(10):1338-1351, 2006.

    M.-L. Zhang and Z.-H. Zhou, "A Review on Multi-Label Learning Algorithms",
    IEEE TKDE 26(8):1819-1837, 2014 (seed 003), Knowl 14.

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
        "hidden_layer_size": [Interval(Integral, 1, None, closed="left"), None],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "solver": [StrOptions({"lbfgs", "gd"})],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        hidden_layer_size=None,
        *,
        alpha=10.0,
        solver="lbfgs",
        learning_rate=0.05,
        max_iter=100,
        tol=1e-6,
        random_state=None,
    ):
        self.hidden_layer_size = hidden_layer_size
        self.alpha = alpha
        self.solver = solver
        self.learning_rate = learning_rate
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def _fit(self, X, Y):
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

    def _outputs(self, X):
        B = np.tanh(_safe_dot(X, self.coefs_[0]) + self.intercepts_[0])
        return np.tanh(B @ self.coefs_[1] + self.intercepts_[1])

    def _decision(self, X):
        """``c_j(x) - t(x)``: positive exactly for the predicted labels; shape (n, n_labels)."""
        return threshold_margin(self._outputs(X), self.threshold_coef_, self.threshold_intercept_)

    def label_scores(self, X):
        """The raw network outputs c_j(x) in [-1, 1] (before the threshold)."""
        X = self._validate_predict_data(X)
        return self._outputs(X)


# ----------------------------------------------------------------------- ML-RBF
class MLRBF(DecisionScoresMixin, BaselineClassifier):
    """ML-RBF (Zhang 2009): an RBF network whose prototypes are k-means centroids
    of each label's positive instances, with a least-squares output layer.

    * For each label j, the instances U_j having it are clustered by k-means into
      ``k_j = max(1, round(fraction * |U_j|))`` clusters (a label with no positive
      instance contributes none); the L centroids of all labels are the hidden
      units.
    * ``sigma = scaling_factor * (mean distance between pairs of prototypes)``;
      the hidden outputs are ``exp(-||x - c||^2 / (2 sigma^2))`` plus a bias unit.
    * The output weights solve the least-squares problem on targets +1 (label
      relevant) / -1 (irrelevant) by SVD (``numpy.linalg.lstsq``).
    * ``predict`` is output > 0; ``predict_proba`` is ``logistic(2 output)``.

    Seed 000 set the fraction to 0.01 "as used in [Zhang 2009]"; the value of the
    scaling factor mu did not survive the text extraction of seed 000 ("and the
    scaling factor to" is followed by nothing), and Zhang (2009) is not among
    the sources. The default 2.0 was chosen by 5-fold cross-validation on the
    training halves of emotions and yeast over mu in {0.5, 1, 2, 4} (mean
    Hamming loss 0.240 / 0.211 / 0.199 / 0.201; docs/baselines.md).

    Parameters
    ----------
    fraction : float, default=0.01
    scaling_factor : float, default=2.0
    random_state : int, RandomState instance or None, default=None
        k-means initialisation.

    Attributes
    ----------
    centers_ : ndarray of shape (L, n_features)
    center_labels_ : ndarray of shape (L,)
        The label whose instances produced each centroid.
    sigma_ : float
    coef_ : ndarray of shape (L + 1, n_labels)
        Output weights; the last row is the bias.

    See Also
    --------
    BPMLL : a multi-layer perceptron trained on a ranking loss.
    mlknn.MLkNN : a lazy method over the same neighbourhood idea.

    References
    ----------
    M.-L. Zhang, "ML-RBF: RBF neural networks for multi-label learning", Neural
    Processing Letters 29(2):61-74, 2009. Seed 000 (its comparison).

    Examples
    --------
    >>> from mlknn.baselines import MLRBF
    >>> from mlknn.datasets import make_multilabel
    >>> data = make_multilabel(n_samples=100, random_state=0)
    >>> clf = MLRBF(fraction=0.1, random_state=0).fit(data.X, data.Y)
    >>> clf.coef_.shape[1], clf.predict(data.X[:2]).shape
    (5, (2, 5))
    """

    _parameter_constraints = {
        "fraction": [Interval(Real, 0, 1, closed="right")],
        "scaling_factor": [Interval(Real, 0, None, closed="neither")],
        "random_state": ["random_state"],
    }

    #: predict_proba = logistic(2 output): the outputs were fitted to +-1 targets.
    _proba_scale = 2.0

    def __init__(self, fraction=0.01, *, scaling_factor=2.0, random_state=None):
        self.fraction = fraction
        self.scaling_factor = scaling_factor
        self.random_state = random_state

    def _fit(self, X, Y):
        q = Y.shape[1]
        rng = check_random_state(self.random_state)
        seeds = member_seeds(rng, q)
        centers, owners = [], []
        for j in range(q):  # one k-means per label
            rows = np.flatnonzero(Y[:, j])
            if rows.size == 0:
                continue
            k = min(rows.size, max(1, int(round(self.fraction * rows.size))))
            km = KMeans(n_clusters=k, random_state=int(seeds[j]), n_init=1).fit(X[rows])
            centers.append(km.cluster_centers_)
            owners.append(np.full(k, j))
        if not centers:  # no label is ever relevant: one prototype at the mean
            centers = [np.asarray(X.mean(axis=0)).reshape(1, -1)]
            owners = [np.array([-1])]
        self.centers_ = np.vstack(centers)
        self.center_labels_ = np.concatenate(owners)
        if self.centers_.shape[0] >= 2:
            mean_dist = float(pdist(self.centers_).mean())
        else:
            mean_dist = 0.0
        if mean_dist <= 0.0:
            # One prototype (or all equal): fall back on the mean distance of the
            # training instances to the prototypes.
            mean_dist = float(euclidean_distances(X, self.centers_).mean()) or 1.0
        self.sigma_ = self.scaling_factor * mean_dist
        H = self._hidden(X)
        self.coef_, *_ = np.linalg.lstsq(H, 2.0 * Y - 1.0, rcond=None)

    def _hidden(self, X):
        D2 = euclidean_distances(X, self.centers_, squared=True)
        H = np.exp(-D2 / (2.0 * self.sigma_**2))
        return np.hstack([H, np.ones((H.shape[0], 1))])

    def _decision(self, X):
        """Network outputs (targets were +-1); shape (n, n_labels)."""
        return self._hidden(X) @ self.coef_


# -------------------------------------------------------------------------- CML
#: Largest q for label_sets='all' (2^q label sets).
CML_MAX_ALL_LABELS = 12


def pair_features(S):
    """Knowl 15's label-pair indicators for label sets S (K, q) as a sparse (K, 4 P)
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
_CML_BLOCK_BYTES = 16 * 2**20


def _cml_row_blocks(n_rows, n_sets):
    """Row slices whose (rows, n_sets) float64 blocks take about _CML_BLOCK_BYTES."""
    step = max(1, _CML_BLOCK_BYTES // (8 * max(n_sets, 1)))
    return [slice(s, min(s + step, n_rows)) for s in range(0, n_rows, step)]


def cml_loss_grad(params, X, S, Phi, t, counts, inv_var):
    """CML's negative penalised log-likelihood (Knowl 15) over the label sets S and
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
    A = _safe_dot(X, W) + b
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


class CML(BaselineClassifier):
    """Collective multi-label classifier (Knowl 15, Ghamrawi and McCallum 2005).

    A conditional maximum-entropy model over label vectors,
    ``p(y | x) = exp(sum_j [y_j = 1] (<w_j, x> + b_j) + sum_{j1<j2} theta_{j1 j2}(y_j1, y_j2)) / Z(x)``,
    with the d q feature-label constraints (plus a bias per label) and the
    4 C(q, 2) label-pair constraints of Knowl 15, a Gaussian prior
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
        epsilon^2 of Knowl 15. The review gives no value; 0.01 was chosen by 5-fold
        cross-validation on the training halves of emotions and yeast over
        {0.001, 0.003, 0.01, 0.03, 0.1, 1, 10} (docs/baselines.md). The unary
        feature weights live on the scale of standardised features.
    label_sets : {'observed', 'all'}, default='observed'
    max_iter : int, default=200
    tol : float, default=1e-6

    Attributes
    ----------
    label_sets_ : ndarray of shape (K, n_labels)
    coef_ : ndarray of shape (n_features, n_labels)
    intercept_ : ndarray of shape (n_labels,)
    pair_coef_ : ndarray of shape (4 C(q, 2),)
    n_iter_ : int

    See Also
    --------
    LabelPowerset : whole label sets as classes, without pairwise terms.

    References
    ----------
    N. Ghamrawi and A. McCallum, "Collective multi-label classification",
    CIKM 2005, pp. 195-200.

    M.-L. Zhang and Z.-H. Zhou, "A Review on Multi-Label Learning Algorithms",
    IEEE TKDE 26(8):1819-1837, 2014 (seed 003), Knowl 15.

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
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(self, prior_variance=0.01, *, label_sets="observed", max_iter=200, tol=1e-6):
        self.prior_variance = prior_variance
        self.label_sets = label_sets
        self.max_iter = max_iter
        self.tol = tol

    def _fit(self, X, Y):
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

    def _log_potential_blocks(self, X):
        """(rows, log-potentials of those rows over ``label_sets_``), block by block."""
        A = _safe_dot(X, self.coef_) + self.intercept_
        pair_scores = pair_features(self.label_sets_) @ self.pair_coef_
        S = self.label_sets_.T.astype(np.float64)
        for rows in _cml_row_blocks(A.shape[0], S.shape[1]):
            yield rows, A[rows] @ S + pair_scores

    def predict_log_set_proba(self, X):
        """log p(label set k | x) over ``label_sets_``; shape (n, K)."""
        X = self._validate_predict_data(X)
        out = np.empty((X.shape[0], self.label_sets_.shape[0]))
        for rows, E in self._log_potential_blocks(X):
            out[rows] = E - logsumexp(E, axis=1, keepdims=True)
        return out

    def _predict(self, X):
        out = np.empty((X.shape[0], self.n_labels_), dtype=self.label_sets_.dtype)
        for rows, E in self._log_potential_blocks(X):
            out[rows] = self.label_sets_[np.argmax(E, axis=1)]
        return out

    def _predict_proba(self, X):
        S = self.label_sets_.astype(np.float64)
        out = np.empty((X.shape[0], self.n_labels_))
        for rows, E in self._log_potential_blocks(X):
            out[rows] = np.exp(E - logsumexp(E, axis=1, keepdims=True)) @ S
        # A marginal is a sum of set probabilities: rounding can take it 1 ulp past 1.
        return np.clip(out, 0.0, 1.0, out=out)


# ------------------------------------------------------------------------- MLLS
class MLLS(DecisionScoresMixin, BaselineClassifier):
    """Multi-label least squares with a shared subspace (Knowl 16, Ji et al. 2008).

    Minimises ``1/m ||X U - Y||_F^2 + alpha ||U - Theta^T V||_F^2 + beta ||U||_F^2``
    over U, V and an orthonormal Theta (r x d), with targets Y in {-1, +1}, in
    closed form (Knowl 16):

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

    Attributes
    ----------
    coef_ : ndarray of shape (n_features, n_labels)
        U.
    intercept_ : ndarray of shape (n_labels,)
    subspace_ : ndarray of shape (r, n_features)
        Theta.
    shared_coef_ : ndarray of shape (r, n_labels)
        V.

    See Also
    --------
    BinaryRelevance : independent per-label models, no shared subspace.

    References
    ----------
    S. Ji, L. Tang, S. Yu and J. Ye, "Extracting shared subspace for multi-label
    classification", KDD 2008, pp. 381-389.

    M.-L. Zhang and Z.-H. Zhou, "A Review on Multi-Label Learning Algorithms",
    IEEE TKDE 26(8):1819-1837, 2014 (seed 003), Knowl 16.

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
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "fit_intercept": ["boolean"],
    }

    #: predict_proba = logistic(2 (x^T U + b)): the scores were fitted to +-1 targets.
    _proba_scale = 2.0

    def __init__(self, alpha=0.5, beta=1.0, *, n_components=None, fit_intercept=True):
        self.alpha = alpha
        self.beta = beta
        self.n_components = n_components
        self.fit_intercept = fit_intercept

    def _fit(self, X, Y):
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

    def objective(self, X, Y, U, Theta):
        """Knowl 16's objective at ``V = Theta U`` (for tests); X centred by the caller."""
        T = 2.0 * np.asarray(Y) - 1.0
        R = np.asarray(X @ U) - T
        P = U - Theta.T @ (Theta @ U)
        m = X.shape[0]
        return float((R**2).sum() / m + self.alpha * (P**2).sum() + self.beta * (U**2).sum())

    def _decision(self, X):
        """``x^T U + b``; shape (n, n_labels)."""
        return _safe_dot(X, self.coef_) + self.intercept_
