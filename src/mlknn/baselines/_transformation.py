"""Problem-transformation baselines (seed 003, Knowl 6-10 and 17).

Each method turns the multi-label problem into binary or multi-class problems
solved by a base ``estimator``; the default is scikit-learn's
``DecisionTreeClassifier(random_state=random_state)``, the stand-in for the C4.5 /
J48 trees that seed 001 used with MULAN (an unpruned CART tree, not C4.5: the
split criterion is Gini and there is no pessimistic pruning).

A label that is constant in a training set (the whole set, a bootstrap sample,
a fold, or a pairwise subset) is predicted as that constant: see
:class:`mlknn.baselines._base.LabelClassifier`.
"""

from itertools import combinations
from math import comb

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import clone
from sklearn.model_selection import KFold, check_cv
from sklearn.multioutput import ClassifierChain as _SkClassifierChain
from sklearn.multioutput import MultiOutputClassifier
from sklearn.utils import check_random_state

from ..utils._param_validation import HasMethods, Integral, Interval, Real, StrOptions
from ._base import (
    ESTIMATOR_CONSTRAINT,
    BaselineClassifier,
    DecisionScoresMixin,
    LabelClassifier,
    fit_label,
    hstack,
    is_int,
    label_scores,
    member_seeds,
    proba_list_to_matrix,
    resolve_estimator,
    set_random_states,
)
from ._threshold import fit_threshold_model, threshold_margin

__all__ = [
    "BinaryRelevance",
    "CalibratedLabelRanking",
    "ClassifierChain",
    "EnsembleClassifierChains",
    "LabelPowerset",
    "RAkEL",
    "RAkELd",
    "StackedBinaryRelevance",
    "ThresholdCalibration",
]


def _member(estimator, seed):
    """A fresh member estimator: the default tree or a re-seeded clone."""
    if estimator is None:
        return resolve_estimator(None, int(seed))
    return set_random_states(clone(estimator), int(seed))


# --------------------------------------------------------------------------- BR
class BinaryRelevance(BaselineClassifier):
    """Binary relevance (Knowl 7): one independent binary classifier per label.

    Fits scikit-learn's :class:`~sklearn.multioutput.MultiOutputClassifier` over
    the labels, with each label's classifier wrapped so that a constant label
    is predicted as that constant.

    Parameters
    ----------
    estimator : classifier, default=None
        Base binary learner B. None: ``DecisionTreeClassifier(random_state=random_state)``.
    t_criterion : bool, default=False
        Knowl 7's T-criterion: when no label is predicted for an instance,
        predict the one with the highest score. Off by default (MULAN's BR, used by
        seed 001, does not apply it).
    n_jobs : int, default=None
        Labels fitted in parallel (joblib).
    random_state : int, RandomState instance or None, default=None
        Seeds the default tree.

    Attributes
    ----------
    estimators_ : list of LabelClassifier
        One per label.
    n_labels_ : int
    n_features_in_ : int

    See Also
    --------
    ClassifierChain : binary relevance with the preceding labels as inputs.
    StackedBinaryRelevance : binary relevance stacked on its own outputs.
    mlknn.BRkNN : binary relevance with a kNN vote.

    Notes
    -----
    ``predict_proba`` is the base learner's P(label = 1) (the logistic of
    ``decision_function`` for learners without ``predict_proba``); ``predict`` is
    the base learner's own prediction, as in Knowl 7 (``g_j(x) > 0``).

    References
    ----------
    M. R. Boutell, J. Luo, X. Shen and C. M. Brown, "Learning multi-label scene
    classification", Pattern Recognition 37(9):1757-1771, 2004.

    M.-L. Zhang and Z.-H. Zhou, "A Review on Multi-Label Learning Algorithms",
    IEEE TKDE 26(8):1819-1837, 2014 (seed 003), Knowl 7.

    Examples
    --------
    >>> from mlknn.baselines import BinaryRelevance
    >>> from mlknn.datasets import make_multilabel
    >>> data = make_multilabel(n_samples=100, random_state=0)
    >>> clf = BinaryRelevance(random_state=0).fit(data.X, data.Y)
    >>> clf.predict(data.X[:2]).shape
    (2, 5)
    """

    _parameter_constraints = {
        "estimator": ESTIMATOR_CONSTRAINT,
        "t_criterion": ["boolean"],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
    }

    def __init__(self, estimator=None, *, t_criterion=False, n_jobs=None, random_state=None):
        self.estimator = estimator
        self.t_criterion = t_criterion
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _fit(self, X, Y):
        base = resolve_estimator(self.estimator, self.random_state)
        self.multi_output_ = MultiOutputClassifier(LabelClassifier(base), n_jobs=self.n_jobs).fit(X, Y)
        self.estimators_ = self.multi_output_.estimators_

    def _predict_proba(self, X):
        return proba_list_to_matrix(self.multi_output_.predict_proba(X))

    def _predict(self, X):
        pred = np.asarray(self.multi_output_.predict(X)).astype(np.uint8)
        if self.t_criterion:
            empty = np.flatnonzero(pred.sum(axis=1) == 0)
            if empty.size:
                P = self._predict_proba(X[empty])
                pred[empty, np.argmax(P, axis=1)] = 1
        return pred


# --------------------------------------------------------------------------- CC
def _check_order(order, n_labels):
    if order is None or isinstance(order, str):
        return order
    arr = np.asarray(order)
    if arr.ndim != 1 or sorted(arr.tolist()) != list(range(n_labels)):
        raise ValueError(
            "The 'order' parameter of ClassifierChain must be None, 'random' or a "
            f"permutation of range(n_labels) = range({n_labels}); got {order!r}."
        )
    return arr


class ClassifierChain(BaselineClassifier):
    """Classifier chain (Knowl 8): label tau(j) is learnt from ``[x, y_tau(1..j-1)]``.

    Training appends the true preceding labels; prediction appends the chain's
    own 0/1 predictions. Fitted by scikit-learn's
    :class:`~sklearn.multioutput.ClassifierChain` (``chain_method="predict"``)
    over constant-safe label classifiers, with ``predict_proba`` returned as one
    (n, q) array in the original label order.

    Parameters
    ----------
    estimator : classifier, default=None
        None: ``DecisionTreeClassifier(random_state=random_state)``.
    order : None, 'random' or array-like of shape (n_labels,), default=None
        tau. None: ``0, 1, ..., q - 1``; 'random': a permutation drawn from
        ``random_state``.
    random_state : int, RandomState instance or None, default=None

    Attributes
    ----------
    order_ : ndarray of shape (n_labels,)
    estimators_ : list of LabelClassifier
        In chain order.
    n_labels_ : int

    See Also
    --------
    EnsembleClassifierChains : an ensemble of chains with random orders.
    BinaryRelevance : the same without the chain.

    References
    ----------
    J. Read, B. Pfahringer, G. Holmes and E. Frank, "Classifier chains for
    multi-label classification", Machine Learning 85(3):333-359, 2011.

    M.-L. Zhang and Z.-H. Zhou, "A Review on Multi-Label Learning Algorithms",
    IEEE TKDE 26(8):1819-1837, 2014 (seed 003), Knowl 8.

    Examples
    --------
    >>> from mlknn.baselines import ClassifierChain
    >>> from mlknn.datasets import make_multilabel
    >>> data = make_multilabel(n_samples=100, random_state=0)
    >>> clf = ClassifierChain(order="random", random_state=0).fit(data.X, data.Y)
    >>> sorted(clf.order_.tolist())
    [0, 1, 2, 3, 4]
    """

    _parameter_constraints = {
        "estimator": ESTIMATOR_CONSTRAINT,
        "order": ["array-like", StrOptions({"random"}), None],
        "random_state": ["random_state"],
    }

    def __init__(self, estimator=None, *, order=None, random_state=None):
        self.estimator = estimator
        self.order = order
        self.random_state = random_state

    def _fit(self, X, Y):
        order = _check_order(self.order, Y.shape[1])
        base = resolve_estimator(self.estimator, self.random_state)
        rs = check_random_state(self.random_state)
        self.chain_ = _SkClassifierChain(LabelClassifier(base), order=order, random_state=rs).fit(X, Y)
        self.order_ = np.asarray(self.chain_.order_)
        self.estimators_ = self.chain_.estimators_

    def _predict_proba(self, X):
        return np.asarray(self.chain_.predict_proba(X))

    def _predict(self, X):
        return np.asarray(self.chain_.predict(X))


class EnsembleClassifierChains(BaselineClassifier):
    """Ensemble of classifier chains (Knowl 8).

    ``n_estimators`` chains, each with a random label order, trained on a bootstrap
    replica (``bootstrap=True``: ``|D^(r)| = |D|`` with replacement) or a
    subsample without replacement (``bootstrap=False``: 67% of D by default);
    predictions are aggregated by thresholded voting.

    Parameters
    ----------
    estimator : classifier, default=None
        None: a decision tree (seeded per chain).
    n_estimators : int, default=10
        Number of chains (MULAN's default, used by seed 001).
    bootstrap : bool, default=True
        Sample with replacement (seed 001: "sampling with replacement ... 100% of
        the instances").
    max_samples : int, float or None, default=None
        Sample size: a float in (0, 1] is a fraction of n, an int a count. None:
        1.0 with bootstrap, 0.67 without (Knowl 8).
    voting : {'hard', 'soft'}, default='hard'
        'hard': the score of a label is the fraction of chains that predict it;
        'soft': the mean of the chains' P(label = 1).
    threshold : float, default=0.5
        A label is predicted when its score is strictly greater.
    n_jobs : int, default=None
    random_state : int, RandomState instance or None, default=None

    Attributes
    ----------
    estimators_ : list of ClassifierChain
    samples_ : list of ndarray
        Training row indices of each chain.

    See Also
    --------
    ClassifierChain : one chain.
    RAkEL : an ensemble of label-powerset models.

    References
    ----------
    J. Read, B. Pfahringer, G. Holmes and E. Frank, "Classifier chains for
    multi-label classification", Machine Learning 85(3):333-359, 2011.

    M.-L. Zhang and Z.-H. Zhou, "A Review on Multi-Label Learning Algorithms",
    IEEE TKDE 26(8):1819-1837, 2014 (seed 003), Knowl 8.

    Examples
    --------
    >>> from mlknn.baselines import EnsembleClassifierChains
    >>> from mlknn.datasets import make_multilabel
    >>> data = make_multilabel(n_samples=100, random_state=0)
    >>> clf = EnsembleClassifierChains(n_estimators=3, random_state=0).fit(data.X, data.Y)
    >>> len(clf.estimators_), clf.predict(data.X[:2]).shape
    (3, (2, 5))
    """

    _parameter_constraints = {
        "estimator": ESTIMATOR_CONSTRAINT,
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "bootstrap": ["boolean"],
        "max_samples": [Interval(Real, 0, 1, closed="right"), Interval(Integral, 1, None, closed="left"), None],
        "voting": [StrOptions({"hard", "soft"})],
        "threshold": [Interval(Real, 0, 1, closed="both")],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        estimator=None,
        *,
        n_estimators=10,
        bootstrap=True,
        max_samples=None,
        voting="hard",
        threshold=0.5,
        n_jobs=None,
        random_state=None,
    ):
        self.estimator = estimator
        self.n_estimators = n_estimators
        self.bootstrap = bootstrap
        self.max_samples = max_samples
        self.voting = voting
        self.threshold = threshold
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _sample_size(self, m):
        ms = self.max_samples
        if ms is None:
            ms = 1.0 if self.bootstrap else 0.67
        if is_int(ms):
            if ms > m and not self.bootstrap:
                raise ValueError(
                    f"The 'max_samples' parameter of EnsembleClassifierChains must be <= "
                    f"n_samples = {m} when bootstrap=False; got {ms}."
                )
            return int(ms)
        return max(1, int(round(float(ms) * m)))

    def _fit(self, X, Y):
        m = X.shape[0]
        rng = check_random_state(self.random_state)
        size = self._sample_size(m)
        seeds = member_seeds(rng, self.n_estimators)
        self.samples_ = [np.sort(rng.choice(m, size=size, replace=self.bootstrap)) for _ in range(self.n_estimators)]

        def fit_one(seed, rows):
            chain = ClassifierChain(_member(self.estimator, seed), order="random", random_state=int(seed))
            return chain.fit(X[rows], Y[rows])

        self.estimators_ = Parallel(n_jobs=self.n_jobs)(
            delayed(fit_one)(seed, rows) for seed, rows in zip(seeds, self.samples_)
        )

    def _predict_proba(self, X):
        total = np.zeros((X.shape[0], self.n_labels_))
        for chain in self.estimators_:
            if self.voting == "hard":
                total += chain._predict(X)
            else:
                total += chain._predict_proba(X)
        return total / len(self.estimators_)

    def _predict(self, X):
        return (self._predict_proba(X) > self.threshold).astype(np.uint8)


# --------------------------------------------------------------------------- LP
def _fit_powerset(estimator, X, Y):
    """Label-powerset model of Y: (distinct label sets (K, k), fitted classifier or None)."""
    sets, codes = np.unique(Y, axis=0, return_inverse=True)
    codes = np.asarray(codes).reshape(-1)
    if sets.shape[0] == 1:
        return sets, None
    return sets, estimator.fit(X, codes)


def _powerset_outputs(sets, model, X):
    """(predicted label sets (n, k) 0/1, marginal P(label = 1) (n, k)) of one LP model."""
    n = X.shape[0]
    if model is None:
        pred = np.repeat(sets, n, axis=0)
        return pred, pred.astype(np.float64)
    classes = np.asarray(model.classes_)
    if hasattr(model, "predict_proba"):
        P = np.zeros((n, sets.shape[0]))
        P[:, classes] = model.predict_proba(X)
        pred = sets[np.argmax(P, axis=1)]
    else:
        pred = sets[np.asarray(model.predict(X))]
        P = None
    # A marginal is a sum of class probabilities: rounding can take it 1 ulp past 1.
    marg = pred.astype(np.float64) if P is None else np.clip(P @ sets, 0.0, 1.0)
    return pred, marg


class LabelPowerset(BaselineClassifier):
    """Label powerset: one multi-class problem whose classes are the label sets seen
    in training (the building block of RAkEL, Knowl 10).

    ``predict`` returns the label set of the predicted class (so it never predicts
    a label set that was not seen in training); ``predict_proba`` returns the
    marginals ``P(y_j = 1 | x) = sum over classes c with y_j in c of P(c | x)``, so
    ``predict`` is not in general ``predict_proba > 0.5``.

    Parameters
    ----------
    estimator : classifier, default=None
        Multi-class learner M. None: ``DecisionTreeClassifier(random_state=random_state)``.
    random_state : int, RandomState instance or None, default=None

    Attributes
    ----------
    label_sets_ : ndarray of shape (n_classes, n_labels)
        Class c is the label set ``label_sets_[c]``.
    estimator_ : classifier or None
        None when training has a single label set.

    See Also
    --------
    RAkEL, RAkELd : label powersets on random subsets of the labels.
    CML : a model of whole label sets with pairwise label terms.

    References
    ----------
    G. Tsoumakas and I. Katakis, "Multi-label classification: an overview",
    International Journal of Data Warehousing and Mining 3(3):1-13, 2007.

    M.-L. Zhang and Z.-H. Zhou, "A Review on Multi-Label Learning Algorithms",
    IEEE TKDE 26(8):1819-1837, 2014 (seed 003), Knowl 10.

    Examples
    --------
    >>> from mlknn.baselines import LabelPowerset
    >>> from mlknn.datasets import make_multilabel
    >>> data = make_multilabel(n_samples=100, random_state=0)
    >>> clf = LabelPowerset(random_state=0).fit(data.X, data.Y)
    >>> clf.label_sets_.shape[1], clf.predict(data.X[:2]).shape
    (5, (2, 5))
    """

    _parameter_constraints = {
        "estimator": ESTIMATOR_CONSTRAINT,
        "random_state": ["random_state"],
    }

    def __init__(self, estimator=None, *, random_state=None):
        self.estimator = estimator
        self.random_state = random_state

    def _fit(self, X, Y):
        base = resolve_estimator(self.estimator, self.random_state)
        self.label_sets_, self.estimator_ = _fit_powerset(base, X, Y)

    def _predict(self, X):
        return _powerset_outputs(self.label_sets_, self.estimator_, X)[0]

    def _predict_proba(self, X):
        return _powerset_outputs(self.label_sets_, self.estimator_, X)[1]


def _draw_labelsets(rng, q, k, n):
    """``n`` distinct k-subsets of range(q), each sorted, drawn uniformly."""
    total = comb(q, k)
    if total <= 200_000:
        allsets = np.array(list(combinations(range(q), k)), dtype=np.intp).reshape(total, k)
        return allsets[np.sort(rng.choice(total, size=n, replace=False))]
    seen, out = set(), []
    while len(out) < n:  # loop over ensemble members, not instances
        s = tuple(sorted(rng.choice(q, size=k, replace=False).tolist()))
        if s not in seen:
            seen.add(s)
            out.append(s)
    return np.array(out, dtype=np.intp)


class RAkEL(BaselineClassifier):
    """Random k-labelsets, overlapping version (Knowl 10).

    ``n_estimators`` distinct random k-labelsets, a label powerset model on each;
    for label y_j, ``tau_j`` counts the models whose labelset contains it and
    ``mu_j`` those among them whose predicted label set contains it. The score is
    ``mu_j / tau_j`` (``voting='hard'``) and label j is predicted when the score
    is > ``threshold`` (0.5).

    Parameters
    ----------
    estimator : classifier, default=None
        Multi-class learner M. None: a decision tree (seeded per model).
    labelset_size : int, default=3
        k (Knowl 10 and seed 001). Capped at q.
    n_estimators : int, default=None
        n. None: ``min(2 q, C(q, k))`` (Knowl 10's n = 2q, at most the number of
        distinct k-labelsets). An explicit value must be <= C(q, k).
    voting : {'hard', 'soft'}, default='hard'
        'soft' replaces the 0/1 votes by each model's marginal P(y_j = 1).
    threshold : float, default=0.5
    n_jobs : int, default=None
    random_state : int, RandomState instance or None, default=None

    Attributes
    ----------
    labelsets_ : ndarray of shape (n_models, k)
    estimators_ : list of (label_sets, classifier) pairs
    label_frequency_ : ndarray of shape (n_labels,)
        Training frequency of each label: the score of a label that no labelset
        covers (possible when n * k < q, or by chance).

    See Also
    --------
    RAkELd : the disjoint version.
    LabelPowerset : one model over all the labels.

    Notes
    -----
    A label covered by no labelset (tau_j = 0; Knowl 10 leaves mu/tau undefined)
    gets its training frequency as score.

    References
    ----------
    G. Tsoumakas, I. Katakis and I. Vlahavas, "Random k-labelsets for multilabel
    classification", IEEE TKDE 23(7):1079-1089, 2011.

    M.-L. Zhang and Z.-H. Zhou, "A Review on Multi-Label Learning Algorithms",
    IEEE TKDE 26(8):1819-1837, 2014 (seed 003), Knowl 10.

    Examples
    --------
    >>> from mlknn.baselines import RAkEL
    >>> from mlknn.datasets import make_multilabel
    >>> data = make_multilabel(n_samples=100, random_state=0)
    >>> clf = RAkEL(labelset_size=3, random_state=0).fit(data.X, data.Y)
    >>> clf.labelsets_.shape
    (10, 3)
    """

    _parameter_constraints = {
        "estimator": ESTIMATOR_CONSTRAINT,
        "labelset_size": [Interval(Integral, 1, None, closed="left")],
        "n_estimators": [Interval(Integral, 1, None, closed="left"), None],
        "voting": [StrOptions({"hard", "soft"})],
        "threshold": [Interval(Real, 0, 1, closed="both")],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        estimator=None,
        *,
        labelset_size=3,
        n_estimators=None,
        voting="hard",
        threshold=0.5,
        n_jobs=None,
        random_state=None,
    ):
        self.estimator = estimator
        self.labelset_size = labelset_size
        self.n_estimators = n_estimators
        self.voting = voting
        self.threshold = threshold
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _fit(self, X, Y):
        q = Y.shape[1]
        k = min(self.labelset_size, q)
        total = comb(q, k)
        n = min(2 * q, total) if self.n_estimators is None else self.n_estimators
        if n > total:
            raise ValueError(
                f"The 'n_estimators' parameter of RAkEL must be <= C(n_labels, labelset_size) "
                f"= C({q}, {k}) = {total} (the number of distinct labelsets); got {n}."
            )
        rng = check_random_state(self.random_state)
        self.labelsets_ = _draw_labelsets(rng, q, k, n)
        seeds = member_seeds(rng, n)
        self.label_frequency_ = Y.mean(axis=0)
        self.estimators_ = Parallel(n_jobs=self.n_jobs)(
            delayed(_fit_powerset)(_member(self.estimator, s), X, Y[:, ls])
            for s, ls in zip(seeds, self.labelsets_)
        )

    def _predict_proba(self, X):
        n, q = X.shape[0], self.n_labels_
        mu = np.zeros((n, q))
        tau = np.zeros(q)
        for ls, (sets, model) in zip(self.labelsets_, self.estimators_):
            pred, marg = _powerset_outputs(sets, model, X)
            mu[:, ls] += pred if self.voting == "hard" else marg
            tau[ls] += 1
        covered = tau > 0
        out = np.tile(self.label_frequency_, (n, 1)).astype(np.float64)
        out[:, covered] = mu[:, covered] / tau[covered]
        return out

    def _predict(self, X):
        return (self._predict_proba(X) > self.threshold).astype(np.uint8)


class RAkELd(BaselineClassifier):
    """Random k-labelsets, disjoint version: a random partition of the labels into
    ``ceil(q / k)`` labelsets (the last one smaller when k does not divide q), one
    label powerset model on each.

    ``predict`` is each model's predicted label set; ``predict_proba`` its marginals.

    Parameters
    ----------
    estimator : classifier, default=None
        None: a decision tree (seeded per model).
    labelset_size : int, default=3
    random_state : int, RandomState instance or None, default=None

    Attributes
    ----------
    labelsets_ : list of ndarray
        The partition.
    estimators_ : list of (label_sets, classifier) pairs

    See Also
    --------
    RAkEL : the overlapping version.
    LabelPowerset : one model over all the labels.

    References
    ----------
    G. Tsoumakas, I. Katakis and I. Vlahavas, "Random k-labelsets for multilabel
    classification", IEEE TKDE 23(7):1079-1089, 2011.

    Examples
    --------
    >>> from mlknn.baselines import RAkELd
    >>> from mlknn.datasets import make_multilabel
    >>> data = make_multilabel(n_samples=100, random_state=0)
    >>> clf = RAkELd(labelset_size=2, random_state=0).fit(data.X, data.Y)
    >>> [len(ls) for ls in clf.labelsets_]
    [2, 2, 1]
    """

    _parameter_constraints = {
        "estimator": ESTIMATOR_CONSTRAINT,
        "labelset_size": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, estimator=None, *, labelset_size=3, random_state=None):
        self.estimator = estimator
        self.labelset_size = labelset_size
        self.random_state = random_state

    def _fit(self, X, Y):
        q = Y.shape[1]
        k = min(self.labelset_size, q)
        rng = check_random_state(self.random_state)
        perm = rng.permutation(q)
        self.labelsets_ = [np.sort(perm[i : i + k]) for i in range(0, q, k)]
        seeds = member_seeds(rng, len(self.labelsets_))
        self.estimators_ = [
            _fit_powerset(_member(self.estimator, s), X, Y[:, ls]) for s, ls in zip(seeds, self.labelsets_)
        ]

    def _outputs(self, X):
        pred = np.zeros((X.shape[0], self.n_labels_), dtype=np.uint8)
        marg = np.zeros((X.shape[0], self.n_labels_))
        for ls, (sets, model) in zip(self.labelsets_, self.estimators_):
            p, mg = _powerset_outputs(sets, model, X)
            pred[:, ls] = p
            marg[:, ls] = mg
        return pred, marg

    def _predict(self, X):
        return self._outputs(X)[0]

    def _predict_proba(self, X):
        return self._outputs(X)[1]


# -------------------------------------------------------------------------- CLR
class CalibratedLabelRanking(BaselineClassifier):
    """Calibrated label ranking (Knowl 9): q(q-1)/2 pairwise classifiers plus q
    classifiers against the virtual label y_V.

    ``g_jk`` is trained on the instances where exactly one of y_j, y_k is relevant,
    with target 1 when it is y_j; ``g_jV`` is the binary-relevance classifier of
    y_j. Votes (``voting='hard'``, Knowl 9):

    * ``zeta(x, y_j) = sum_{k<j} [g_kj(x) <= 0] + sum_{k>j} [g_jk(x) > 0] + [g_jV(x) > 0]``
    * ``zeta(x, y_V) = sum_j [g_jV(x) <= 0]``

    and ``Y = {y_j : zeta(x, y_j) > zeta(x, y_V)}``. With ``voting='soft'`` each
    0/1 vote is replaced by the classifier's P(target = 1) (and its complement).

    ``predict_proba`` is ``(zeta(x, y_j) - zeta(x, y_V) + q) / (2 q)`` in [0, 1]:
    it ranks the labels as zeta does and is > 0.5 exactly for the predicted labels.

    A pair (j, k) with no training instance where the two labels differ has no
    classifier; its vote is split 1/2 - 1/2.

    Parameters
    ----------
    estimator : classifier, default=None
        None: ``DecisionTreeClassifier(random_state=random_state)``.
    voting : {'hard', 'soft'}, default='hard'
    n_jobs : int, default=None
    random_state : int, RandomState instance or None, default=None

    Attributes
    ----------
    pairs_ : ndarray of shape (q (q - 1) / 2, 2)
        (j, k) with j < k.
    pairwise_estimators_ : list of LabelClassifier or None
    virtual_estimators_ : list of LabelClassifier

    See Also
    --------
    BinaryRelevance : the virtual-label classifiers alone.
    RankSVM : a ranking learnt by one large-margin model.

    References
    ----------
    J. Fuernkranz, E. Huellermeier, E. Loza Mencia and K. Brinker, "Multilabel
    classification via calibrated label ranking", Machine Learning 73(2):133-153,
    2008.

    M.-L. Zhang and Z.-H. Zhou, "A Review on Multi-Label Learning Algorithms",
    IEEE TKDE 26(8):1819-1837, 2014 (seed 003), Knowl 9.

    Examples
    --------
    >>> from mlknn.baselines import CalibratedLabelRanking
    >>> from mlknn.datasets import make_multilabel
    >>> data = make_multilabel(n_samples=100, random_state=0)
    >>> clf = CalibratedLabelRanking(random_state=0).fit(data.X, data.Y)
    >>> len(clf.pairwise_estimators_), len(clf.virtual_estimators_)
    (10, 5)
    """

    _parameter_constraints = {
        "estimator": ESTIMATOR_CONSTRAINT,
        "voting": [StrOptions({"hard", "soft"})],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
    }

    def __init__(self, estimator=None, *, voting="hard", n_jobs=None, random_state=None):
        self.estimator = estimator
        self.voting = voting
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _fit(self, X, Y):
        q = Y.shape[1]
        base = resolve_estimator(self.estimator, self.random_state)
        self.pairs_ = np.array(list(combinations(range(q), 2)), dtype=np.intp).reshape(-1, 2)

        def fit_pair(j, k):
            rows = np.flatnonzero(Y[:, j] != Y[:, k])
            if rows.size == 0:
                return None
            return fit_label(base, X[rows], Y[rows, j])

        self.pairwise_estimators_ = Parallel(n_jobs=self.n_jobs)(delayed(fit_pair)(j, k) for j, k in self.pairs_)
        self.virtual_estimators_ = Parallel(n_jobs=self.n_jobs)(
            delayed(fit_label)(base, X, Y[:, j]) for j in range(q)
        )

    def _vote(self, model, X):
        if model is None:
            return np.full(X.shape[0], 0.5)
        if self.voting == "hard":
            return model.predict(X).astype(np.float64)
        return label_scores(model, X)

    def _zeta(self, X):
        n, q = X.shape[0], self.n_labels_
        zeta = np.zeros((n, q))
        zeta_v = np.zeros(n)
        for (j, k), model in zip(self.pairs_, self.pairwise_estimators_):
            v = self._vote(model, X)
            zeta[:, j] += v
            zeta[:, k] += 1.0 - v
        for j, model in enumerate(self.virtual_estimators_):
            v = self._vote(model, X)
            zeta[:, j] += v
            zeta_v += 1.0 - v
        return zeta, zeta_v

    def _predict_proba(self, X):
        zeta, zeta_v = self._zeta(X)
        q = self.n_labels_
        return (zeta - zeta_v[:, None] + q) / (2.0 * q)

    def _predict(self, X):
        zeta, zeta_v = self._zeta(X)
        return (zeta > zeta_v[:, None]).astype(np.uint8)


# --------------------------------------------------------------------- stacking
class StackedBinaryRelevance(BaselineClassifier):
    """Stacked binary relevance ("stacked aggregation", Knowl 7 / 17; Godbole and
    Sarawagi's 2BR).

    Level 1 is binary relevance on x. Level 2 is binary relevance on
    ``[x, f(x)]`` (or ``f(x)`` alone with ``passthrough=False``), where the
    training rows of f are the level-1 outputs obtained by cross-validation
    (each row predicted by a level-1 model that did not see it); at prediction
    time f is the level-1 model refitted on all the training data.

    Parameters
    ----------
    estimator : classifier, default=None
        Level-1 learner. None: a decision tree seeded with ``random_state``.
    meta_estimator : classifier, default=None
        Level-2 learner. None: same as ``estimator``.
    cv : int or cross-validation splitter, default=5
        An int is ``KFold(cv, shuffle=True, random_state=random_state)``.
    stack_method : {'predict_proba', 'predict'}, default='predict_proba'
        Level-1 output appended: P(y_j = 1) or the 0/1 prediction.
    passthrough : bool, default=True
        Keep x in the level-2 input.
    random_state : int, RandomState instance or None, default=None

    Attributes
    ----------
    base_ : BinaryRelevance
        Level 1, fitted on all the training data.
    meta_ : BinaryRelevance
        Level 2.

    See Also
    --------
    BinaryRelevance : level 1 alone.
    ClassifierChain : label dependencies through a chain instead of stacking.

    References
    ----------
    S. Godbole and S. Sarawagi, "Discriminative methods for multi-labeled
    classification", PAKDD 2004, LNCS 3056, pp. 22-30.

    M.-L. Zhang and Z.-H. Zhou, "A Review on Multi-Label Learning Algorithms",
    IEEE TKDE 26(8):1819-1837, 2014 (seed 003), Knowl 7 and 17.

    Examples
    --------
    >>> from mlknn.baselines import StackedBinaryRelevance
    >>> from mlknn.datasets import make_multilabel
    >>> data = make_multilabel(n_samples=100, random_state=0)
    >>> clf = StackedBinaryRelevance(cv=3, random_state=0).fit(data.X, data.Y)
    >>> clf.predict(data.X[:2]).shape
    (2, 5)
    """

    _parameter_constraints = {
        "estimator": ESTIMATOR_CONSTRAINT,
        "meta_estimator": ESTIMATOR_CONSTRAINT,
        "cv": ["cv_object"],
        "stack_method": [StrOptions({"predict_proba", "predict"})],
        "passthrough": ["boolean"],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        estimator=None,
        *,
        meta_estimator=None,
        cv=5,
        stack_method="predict_proba",
        passthrough=True,
        random_state=None,
    ):
        self.estimator = estimator
        self.meta_estimator = meta_estimator
        self.cv = cv
        self.stack_method = stack_method
        self.passthrough = passthrough
        self.random_state = random_state

    def _level1_outputs(self, model, X):
        return model._predict_proba(X) if self.stack_method == "predict_proba" else model._predict(X)

    def _splitter(self):
        if is_int(self.cv):
            return KFold(int(self.cv), shuffle=True, random_state=self.random_state)
        return check_cv(self.cv)

    def _fit(self, X, Y):
        rs = check_random_state(self.random_state)
        seed1, seed2 = (int(s) for s in member_seeds(rs, 2))
        level1 = BinaryRelevance(self.estimator, random_state=seed1)
        meta_est = self.meta_estimator if self.meta_estimator is not None else self.estimator
        Z = np.zeros(Y.shape, dtype=np.float64)
        for train, test in self._splitter().split(X, Y):
            model = clone(level1).fit(X[train], Y[train])
            Z[test] = self._level1_outputs(model, X[test])
        self.base_ = clone(level1).fit(X, Y)
        self.meta_ = BinaryRelevance(meta_est, random_state=seed2).fit(self._meta_input(X, Z), Y)

    def _meta_input(self, X, Z):
        return hstack(X, Z) if self.passthrough else Z

    def _meta_X(self, X):
        return self._meta_input(X, self._level1_outputs(self.base_, X).astype(np.float64))

    def _predict(self, X):
        return self.meta_._predict(self._meta_X(X))

    def _predict_proba(self, X):
        return self.meta_._predict_proba(self._meta_X(X))


# --------------------------------------------------------- threshold calibration
def multilabel_scores(estimator, X, response_method="auto"):
    """(n, q) real scores of a fitted multi-label estimator, and which method gave them.

    'auto' prefers ``predict_proba`` (a list of per-label (n, 2) arrays, as
    MultiOutputClassifier returns, is turned into one (n, q) array of P(1)), then
    ``decision_function``.
    """
    methods = ["predict_proba", "decision_function"] if response_method == "auto" else [response_method]
    for name in methods:
        if hasattr(estimator, name):
            S = getattr(estimator, name)(X)
            if isinstance(S, list):
                S = proba_list_to_matrix(S)
            S = np.asarray(S, dtype=np.float64)
            if S.ndim == 1:
                S = S.reshape(-1, 1)
            return S, name
    raise ValueError(
        "The 'estimator' parameter of ThresholdCalibration must have "
        f"{' or '.join(methods)} (real-valued label scores); got {type(estimator).__name__}."
    )


class ThresholdCalibration(DecisionScoresMixin, BaselineClassifier):
    """Stacking threshold calibration (Knowl 6) around any multi-label scorer.

    Fits ``estimator``, takes its training scores f(x_i) (in-sample, as Knowl 6,
    Rank-SVM and BP-MLL do, or cross-validated with ``cv``), computes each
    instance's error-minimising threshold s(x_i) and fits
    ``t(x) = <w*, f(x)> + b*`` by least squares; predicts
    ``{y_j : f(x, y_j) > t(x)}``.

    Parameters
    ----------
    estimator : multi-label estimator, default=None
        Anything whose ``predict_proba`` or ``decision_function`` gives (n, q)
        scores (or MultiOutputClassifier's list). None: ``BinaryRelevance()``.
    cv : None, int or cross-validation splitter, default=None
        None: in-sample training scores. Otherwise the training scores are
        cross-validated (an int is KFold without shuffling); ``estimator`` is still
        refitted on all the data for prediction.
    response_method : {'auto', 'predict_proba', 'decision_function'}, default='auto'
    random_state : int, RandomState instance or None, default=None
        Seeds the default ``BinaryRelevance()``. A given ``estimator`` is cloned
        as it is: seed it yourself (its own ``random_state`` is left alone, so
        a deliberate None stays None). The same seeded clone is used for the
        cross-validated scores and the final fit.

    Attributes
    ----------
    estimator_ : estimator
    coef_ : ndarray of shape (n_labels,)
        w*.
    intercept_ : float
        b*.
    response_method_ : str

    See Also
    --------
    RankSVM, BPMLL : rankers that fit the same threshold model on their outputs.

    Notes
    -----
    ``decision_function(X) = f(x) - t(x)`` is positive exactly for the predicted
    labels, and ``predict_proba`` is its logistic function (a monotone score that
    is > 0.5 for the predicted labels, not a probability); the wrapped
    estimator's own scores are ``estimator_.predict_proba`` /
    ``estimator_.decision_function``.

    References
    ----------
    A. Elisseeff and J. Weston, "A kernel method for multi-labelled
    classification", Advances in Neural Information Processing Systems 14
    (NIPS 2001), pp. 681-687, 2002.

    M.-L. Zhang and Z.-H. Zhou, "A Review on Multi-Label Learning Algorithms",
    IEEE TKDE 26(8):1819-1837, 2014 (seed 003), Knowl 6.

    Examples
    --------
    >>> from mlknn.baselines import BinaryRelevance, ThresholdCalibration
    >>> from mlknn.datasets import make_multilabel
    >>> data = make_multilabel(n_samples=100, random_state=0)
    >>> clf = ThresholdCalibration(BinaryRelevance(random_state=0)).fit(data.X, data.Y)
    >>> bool(((clf.decision_function(data.X) > 0) == clf.predict(data.X)).all())
    True
    """

    _parameter_constraints = {
        "estimator": [HasMethods(["fit"]), None],
        "cv": ["cv_object", None],
        "response_method": [StrOptions({"auto", "predict_proba", "decision_function"})],
        "random_state": ["random_state"],
    }

    def __init__(self, estimator=None, *, cv=None, response_method="auto", random_state=None):
        self.estimator = estimator
        self.cv = cv
        self.response_method = response_method
        self.random_state = random_state

    def _fit(self, X, Y):
        if self.estimator is None:
            # One integer seed drawn once, so that the CV models and the final
            # model get the same (deterministic) trees even from a RandomState.
            seed = check_random_state(self.random_state).randint(np.iinfo(np.int32).max)
            proto = BinaryRelevance(random_state=None if self.random_state is None else seed)
        else:
            proto = self.estimator
        self.estimator_ = clone(proto).fit(X, Y)
        F, self.response_method_ = multilabel_scores(self.estimator_, X, self.response_method)
        if F.shape != Y.shape:
            raise ValueError(
                f"The 'estimator' parameter of ThresholdCalibration must give scores of shape "
                f"(n_samples, n_labels) = {Y.shape}; got {F.shape}."
            )
        if self.cv is not None:
            F = np.zeros(Y.shape)
            for train, test in check_cv(self.cv).split(X, Y):
                model = clone(proto).fit(X[train], Y[train])
                F[test] = multilabel_scores(model, X[test], self.response_method_)[0]
        self.coef_, self.intercept_ = fit_threshold_model(F, Y)

    def _scores(self, X):
        return multilabel_scores(self.estimator_, X, self.response_method_)[0]

    def _decision(self, X):
        """``f(x, y_j) - t(x)``: positive for the predicted labels; shape (n, q)."""
        return threshold_margin(self._scores(X), self.coef_, self.intercept_)
