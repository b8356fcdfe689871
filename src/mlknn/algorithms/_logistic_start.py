"""Where the Newton iterations of the batched logistic regressions start.

Shared by the numpy iteration (``_logistic.py``) and the compiled one
(``_logistic_fused.py``), which both start every label from the same point.
"""

import numpy as np

from ..utils._typing import FloatArray, MatrixLike


def start_point(
    T: MatrixLike, p: int, init: tuple[FloatArray, FloatArray] | None
) -> tuple[FloatArray, FloatArray]:
    """Where the Newton iterations start: W (p, m) and b (m,).

    The intercept-only optimum ``b = logit(mean of t)``, ``W = 0``; or, for the
    columns whose ``init`` intercept is not NaN, ``init`` (a warm start).
    """
    W = np.zeros((p, T.shape[1]))
    mean = T.mean(axis=0)
    b = np.log(mean) - np.log1p(-mean)
    if init is not None:
        given = ~np.isnan(init[1])
        W[:, given] = init[0][given].T
        b = np.where(given, init[1], b)
    return W, b
