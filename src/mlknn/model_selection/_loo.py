"""Out-of-sample posteriors of the training set: exact leave-one-out, or K-fold cross-fitting.

Row i of :func:`loo_predict_proba` is what the estimator, fitted on every
training row but i, gives for ``X[i]``. The count methods compute that exactly
from one fit (docs/loo.md): the estimator declares it with two private hooks,
read here by duck typing so that this module needs nothing from the estimator
packages (the layer rule of docs/DEVELOPING.md):

* ``_loo_exact_supported()``: whether its current parameters allow it;
* ``_loo_exact(X, Y, k=None)``: fit on (X, Y), return the (n, q) leave-one-out
  posteriors, or with ``k`` their top k (labels, scores) without any (n, q) array.

Every other estimator with ``predict_proba`` is cross-fitted: each row's scores
come from the fold model that did not see it.
"""

from numbers import Integral
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.model_selection import KFold

from ..utils._docstrings import fill_doc
from ..utils._param_validation import Interval, StrOptions, validate_params
from ..utils._topk import topk_from_dense
from ..utils._typing import Estimator, FloatArray, MatrixLike, NDArray, TopK

#: Folds of the cross-fitting that ``cv="loo"`` falls back to without an exact update.
DEFAULT_FOLDS = 5

_CV = [StrOptions({"loo"}), Interval(Integral, 2, None, closed="left"), "cv_object"]
_COMMON = {
    "estimator": "no_validation",
    "X": ["array-like", "sparse matrix"],
    "Y": ["array-like", "sparse matrix"],
    "cv": _CV,
    "random_state": ["random_state"],
}


def has_exact_loo(estimator: Estimator) -> bool:
    """Whether ``estimator`` computes exact leave-one-out posteriors from one fit.

    Parameters
    ----------
    estimator : estimator
        Fitted or not; only its class and parameters are read.

    Returns
    -------
    bool
        True for :class:`~mlknn.MLkNN` (every ``variant``) and the other count
        methods listed in docs/loo.md, with parameters that allow it (no
        ``hubness`` reduction).

    See Also
    --------
    loo_predict_proba : The posteriors themselves.

    Examples
    --------
    >>> from mlknn import MLkNN
    >>> from mlknn.model_selection import has_exact_loo
    >>> has_exact_loo(MLkNN()), has_exact_loo(MLkNN(hubness="ls"))
    (True, False)
    """
    supported = getattr(estimator, "_loo_exact_supported", None)
    return bool(callable(supported) and hasattr(estimator, "_loo_exact") and supported())


@validate_params(_COMMON, prefer_skip_nested_validation=True)
@fill_doc
def loo_predict_proba(
    estimator: Estimator, X: MatrixLike, Y: MatrixLike, *, cv: Any = "loo", random_state: Any = None
) -> FloatArray:
    """Out-of-sample posteriors of the training set: row i from a model that never saw row i.

    With ``cv="loo"`` and an estimator that supports it (:func:`has_exact_loo`:
    ML-kNN in every ``variant`` and the other count methods of docs/loo.md),
    row i is exactly what the estimator fitted on every row but i gives for
    ``X[i]`` (``cross_val_predict`` with ``LeaveOneOut``, to rounding), computed
    from one fit that searches one neighbour wider. Any other estimator with
    ``predict_proba`` (MLHiKNN, IBLR, the baselines, or a count method with
    hubness reduction) is cross-fitted: K folds (5 for ``cv="loo"``), row i
    scored by the model fitted on the other folds. So is a Y with unknown
    (NaN) entries, which the exact updates do not model.

    Parameters
    ----------
    estimator : estimator with ``fit`` and ``predict_proba``
        Not modified: a clone is fitted.
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        The instances (features).
    Y : {array-like, sparse matrix} of shape (n_samples, n_labels)
        0/1 label matrix.
    cv : "loo", int >= 2 or a cross-validation splitter, default="loo"
        "loo": exact leave-one-out where the estimator supports it, else
        5-fold cross-fitting. An int: that many shuffled folds
        (:class:`~sklearn.model_selection.KFold`). A splitter (an object with
        ``split``) must put every row in exactly one test fold.
    {random_state}
        Seeds the shuffling of the folds of the cross-fitting (unused by the exact path).

    Returns
    -------
    ndarray of shape (n_samples, n_labels), float64
        Out-of-sample scores (what ``predict_proba`` returns, in [0, 1]).

    See Also
    --------
    loo_predict_topk : The same rows as top k, for large sparse label spaces.
    has_exact_loo : Whether an estimator takes the exact path.

    Examples
    --------
    >>> from mlknn import MLkNN
    >>> from mlknn.datasets import make_multilabel
    >>> from mlknn.model_selection import loo_predict_proba
    >>> data = make_multilabel(n_samples=100, random_state=0)
    >>> loo_predict_proba(MLkNN(n_neighbors=5), data.X, data.Y).shape
    (100, 5)
    """
    est = clone(estimator)
    if cv == "loo" and has_exact_loo(est) and not _has_unknown(Y):
        return np.asarray(est._loo_exact(X, Y), dtype=np.float64)
    return _cross_fit(est, X, Y, cv, random_state, k=None)  # type: ignore[return-value]


@validate_params({**_COMMON, "k": [Interval(Integral, 1, None, closed="left")]},
                 prefer_skip_nested_validation=True)
@fill_doc
def loo_predict_topk(
    estimator: Estimator, X: MatrixLike, Y: MatrixLike, k: int, *, cv: Any = "loo", random_state: Any = None
) -> TopK:
    """The k best labels of every training row under its out-of-sample posteriors.

    The rows of :func:`loo_predict_proba` as top k (ties by the lower label
    index, as ``predict_topk``). With a sparse Y and an estimator that keeps
    labels sparse, no (n_samples, n_labels) array is formed on the exact path
    or in the cross-fitting (which calls each fold model's ``predict_topk``).

    Parameters
    ----------
    estimator : estimator with ``fit`` and ``predict_proba`` (or ``predict_topk``)
        Not modified: a clone is fitted.
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        The instances (features).
    Y : {array-like, sparse matrix} of shape (n_samples, n_labels)
        0/1 label matrix.
    k : int
        ``1 <= k <= n_labels``.
    cv : "loo", int >= 2 or a cross-validation splitter, default="loo"
        As in :func:`loo_predict_proba`.
    {random_state}
        As in :func:`loo_predict_proba`.

    Returns
    -------
    labels : ndarray of shape (n_samples, k), int64
        Label indices by decreasing score.
    scores : ndarray of shape (n_samples, k), float64

    See Also
    --------
    loo_predict_proba : The dense scores.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from mlknn import MLkNN
    >>> from mlknn.datasets import make_multilabel
    >>> from mlknn.model_selection import loo_predict_topk
    >>> data = make_multilabel(n_samples=100, random_state=0)
    >>> labels, scores = loo_predict_topk(MLkNN(n_neighbors=5), data.X, sp.csr_matrix(data.Y), k=2)
    >>> labels.shape, scores.shape
    ((100, 2), (100, 2))
    """
    n_labels = Y.shape[1] if hasattr(Y, "shape") and len(Y.shape) == 2 else np.asarray(Y).shape[-1]
    if k > n_labels:
        raise ValueError(
            f"The 'k' parameter of loo_predict_topk must be <= n_labels = {n_labels} (the number of "
            f"labels). Got k = {k} instead."
        )
    est = clone(estimator)
    if cv == "loo" and has_exact_loo(est) and not _has_unknown(Y):
        labels, scores = est._loo_exact(X, Y, k=int(k))
        return np.asarray(labels, dtype=np.int64), np.asarray(scores, dtype=np.float64)
    return _cross_fit(est, X, Y, cv, random_state, k=int(k))  # type: ignore[return-value]


def _has_unknown(Y: MatrixLike) -> bool:
    """Whether a dense Y marks unknown entries with NaN (docs/incomplete_labels.md): the exact
    updates assume a complete Y, so such a Y is cross-fitted."""
    if sp.issparse(Y):
        return False
    values = np.asarray(Y)
    return bool(values.dtype.kind == "f" and np.isnan(values).any())


def _splitter(cv: Any, random_state: Any) -> Any:
    if cv == "loo":
        return KFold(DEFAULT_FOLDS, shuffle=True, random_state=random_state)
    if isinstance(cv, Integral):
        return KFold(int(cv), shuffle=True, random_state=random_state)
    return cv


def _take_rows(A: MatrixLike, rows: NDArray[np.intp]) -> MatrixLike:
    if sp.issparse(A):
        return sp.csr_array(A)[rows] if isinstance(A, sp.sparray) else sp.csr_matrix(A)[rows]
    if hasattr(A, "iloc"):
        return A.iloc[rows]
    return np.asarray(A)[rows]


def _cross_fit(
    est: Estimator, X: MatrixLike, Y: MatrixLike, cv: Any, random_state: Any, k: int | None
) -> FloatArray | TopK:
    """Each row's scores (or top k) from the fold model fitted without it.

    A kNN estimator that can (``_cross_fit_supported()``) fits its fold models
    from one neighbour search of the whole set; any other estimator is cloned,
    fitted and asked fold by fold.
    """
    if not hasattr(est, "predict_proba"):
        raise ValueError(
            f"The 'estimator' parameter must have predict_proba (out-of-sample posteriors). "
            f"Got {type(est).__name__}, which has none."
        )
    n = X.shape[0] if hasattr(X, "shape") else len(X)
    if (Y.shape[0] if hasattr(Y, "shape") else len(Y)) != n:
        raise ValueError(f"X and Y must have the same number of rows. Got {n} and {Y.shape[0]} instead.")
    if isinstance(cv, Integral) and int(cv) > n:
        raise ValueError(f"The 'cv' parameter must be <= n_samples = {n} folds. Got cv = {cv} instead.")
    folds = [(np.asarray(train), np.asarray(test)) for train, test in _splitter(cv, random_state).split(np.zeros((n, 1)))]
    seen = np.zeros(n, dtype=np.int64)
    for _, test in folds:
        seen[test] += 1
    if not folds or not np.all(seen == 1):
        bad = int(np.flatnonzero(seen != 1)[0]) if folds else 0
        raise ValueError(
            f"The 'cv' parameter must put every row in exactly one test fold; row {bad} is in "
            f"{int(seen[bad])}. Got cv = {cv!r}."
        )
    supported = getattr(est, "_cross_fit_supported", None)
    if callable(supported) and supported() and not _has_unknown(Y):
        return est._cross_fit(X, Y, folds, k)  # type: ignore[no-any-return]
    out: Any = None
    for train, test in folds:
        model = clone(est).fit(_take_rows(X, train), _take_rows(Y, train))
        Xt = _take_rows(X, test)
        if k is None:
            part = np.asarray(model.predict_proba(Xt), dtype=np.float64)
            out = np.empty((n, part.shape[1]), dtype=np.float64) if out is None else out
            out[test] = part
            continue
        if hasattr(model, "predict_topk"):
            lab, sc = model.predict_topk(Xt, k=k)
        else:
            lab, sc = topk_from_dense(np.asarray(model.predict_proba(Xt), dtype=np.float64), k)
        out = (np.empty((n, k), dtype=np.int64), np.empty((n, k), dtype=np.float64)) if out is None else out
        out[0][test], out[1][test] = lab, sc
    return out  # type: ignore[no-any-return]
