"""Out-of-sample posteriors of the training set, the data every decision rule is chosen on."""

from typing import Any

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import check_cv

from .. import model_selection
from ..utils._typing import MatrixLike, NDArray


def out_of_sample_proba(
    estimator: Any, X: MatrixLike, Y: NDArray[Any], *, cv: Any, random_state: Any
) -> NDArray[np.float64]:
    """Row i: the posterior of ``X[i]`` from ``estimator`` fitted without row i's fold.

    ``cv="loo"``: exact leave-one-out where the estimator supports it
    (:func:`mlknn.model_selection.loo_predict_proba`); an int or splitter: cross-fitting.
    """
    loo = getattr(model_selection, "loo_predict_proba", None)
    if loo is not None:
        return np.asarray(loo(clone(estimator), X, Y, cv=cv, random_state=random_state), dtype=np.float64)
    # Until the exact leave-one-out posteriors exist: K-fold cross-fitting (5 folds for "loo").
    folds = check_cv(5 if cv == "loo" else cv)
    out = np.zeros(np.shape(Y))
    for train, test in folds.split(X, Y):
        model = clone(estimator).fit(X[train], Y[train])
        out[test] = model.predict_proba(X[test])
    return out
