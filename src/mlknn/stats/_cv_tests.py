"""Paired t-tests designed for cross-validated scores.

The plain fold-wise paired t-test (:func:`mlknn.stats.paired_ttest`, Younes et al.'s (2011)
test) treats the folds as independent samples. They are not: the training sets
overlap, so the variance of the mean difference is underestimated and the test
rejects too often (Dietterich 1998; Nadeau and Bengio 2003). The two tests here
correct for that:

* :func:`cv_5x2_ttest`, Dietterich's (1998) 5 x 2 cv paired t-test, for r
  repetitions of 2-fold cross-validation (r = 5 in the paper);
* :func:`corrected_resampled_ttest`, Nadeau and Bengio's (2003) corrected
  resampled t-test, for any J train/test resamplings (k-fold repeated, hold-out
  repeated, 5 x 2): the variance term grows by ``n_test / n_train``.
"""

import math
from collections.abc import Mapping
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from ._common import _check_alpha, _paired
from ._ttest import TTestResult


def _two_sided(stat: float, df: int) -> float:
    return float(2.0 * stats.t.sf(abs(stat), df))


def cv_5x2_ttest(a: ArrayLike, b: ArrayLike, alpha: float = 0.05) -> TTestResult:
    """Dietterich's 5 x 2 cv paired t-test of a against b (two-tailed).

    With ``p_ij`` the difference of the two scores on fold j of repetition i,
    ``s_i^2 = (p_i1 - pbar_i)^2 + (p_i2 - pbar_i)^2``, the statistic is
    ``t = p_11 / sqrt(mean_i s_i^2)`` with r degrees of freedom (Dietterich 1998,
    eq. for the 5x2cv t test; r = 5 there).

    Parameters
    ----------
    a, b : array-like of shape (2 * r,)
        Scores ordered by repetition, then fold: (rep 1 fold 1, rep 1 fold 2,
        rep 2 fold 1, ...).
    alpha : float, default=0.05
        Significance level of the test.

    Returns
    -------
    TTestResult
        ``mean_difference`` is the mean of all 2r differences. With zero variance
        the test is undefined: p = 1 if ``p_11`` is 0, else 0.

    See Also
    --------
    corrected_resampled_ttest : Nadeau and Bengio's corrected t-test.
    paired_ttest : The plain paired t-test.

    References
    ----------
    T. G. Dietterich, "Approximate Statistical Tests for Comparing Supervised
    Classification Learning Algorithms", Neural Computation 10(7), 1998.

    Examples
    --------
    >>> from mlknn.stats import cv_5x2_ttest
    >>> a = [0.80, 0.82, 0.79, 0.85, 0.81, 0.83, 0.80, 0.84, 0.82, 0.81]
    >>> b = [0.78, 0.80, 0.79, 0.81, 0.80, 0.80, 0.77, 0.82, 0.80, 0.79]
    >>> res = cv_5x2_ttest(a, b)
    >>> round(res.statistic, 3), round(res.pvalue, 4)
    (1.38, 0.2261)
    """
    _check_alpha(alpha)
    a, b = _paired(a, b, "cv_5x2_ttest")
    if a.size % 2:
        raise ValueError(f"cv_5x2_ttest needs 2 folds per repetition (an even count); got {a.size} scores.")
    p = (a - b).reshape(-1, 2)
    r = p.shape[0]
    s2 = ((p - p.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)
    denom = math.sqrt(float(s2.mean()))
    if denom <= 1e-15:
        pval = 1.0 if abs(p[0, 0]) <= 1e-15 else 0.0
        stat = 0.0 if pval == 1.0 else math.copysign(math.inf, p[0, 0])
    else:
        stat = float(p[0, 0] / denom)
        pval = _two_sided(stat, r)
    return TTestResult(stat, pval, float(p.mean()), alpha, pval < alpha)


def corrected_resampled_ttest(
    a: ArrayLike, b: ArrayLike, test_train_ratio: float, alpha: float = 0.05
) -> TTestResult:
    """Nadeau and Bengio's corrected resampled t-test of a against b (two-tailed).

    ``t = mean(d) / sqrt((1 / J + n_test / n_train) * var(d))`` over the J
    paired differences d (``var`` with J - 1 in the denominator), J - 1 degrees of
    freedom (Nadeau and Bengio 2003; Bouckaert and Frank 2004).

    Parameters
    ----------
    a, b : array-like of shape (J,)
        Scores on the same J train/test splits.
    test_train_ratio : float
        ``n_test / n_train`` of one split: 1 for 2-fold CV, 1 / (K - 1) for
        K-fold CV, ``t / (1 - t)`` for a hold-out of test fraction t.
    alpha : float, default=0.05
        Significance level of the test.

    Returns
    -------
    TTestResult

    See Also
    --------
    cv_5x2_ttest : Dietterich's 5 x 2 cv t-test.
    paired_ttest : The plain paired t-test (too liberal on overlapping training sets).

    References
    ----------
    C. Nadeau and Y. Bengio, "Inference for the Generalization Error", Machine
    Learning 52, 2003.

    R. R. Bouckaert and E. Frank, "Evaluating the Replicability of Significance
    Tests for Comparing Learning Algorithms", PAKDD 2004.

    Examples
    --------
    >>> from mlknn.stats import corrected_resampled_ttest
    >>> a = [0.80, 0.82, 0.79, 0.85, 0.81, 0.83, 0.80, 0.84, 0.82, 0.81]
    >>> b = [0.78, 0.80, 0.79, 0.81, 0.80, 0.80, 0.77, 0.82, 0.80, 0.79]
    >>> res = corrected_resampled_ttest(a, b, test_train_ratio=1.0)  # 2-fold CV
    >>> round(res.statistic, 3), round(res.pvalue, 4)
    (1.819, 0.1022)
    """
    _check_alpha(alpha)
    if not (isinstance(test_train_ratio, (int, float)) and test_train_ratio > 0):
        raise ValueError(
            f"The 'test_train_ratio' parameter must be a float > 0. Got {test_train_ratio!r} instead."
        )
    a, b = _paired(a, b, "corrected_resampled_ttest")
    d = a - b
    J = d.size
    mean = float(d.mean())
    var = float(d.var(ddof=1))
    if var <= 1e-30:
        pval = 1.0 if abs(mean) <= 1e-15 else 0.0
        stat = 0.0 if pval == 1.0 else math.copysign(math.inf, mean)
    else:
        stat = mean / math.sqrt((1.0 / J + float(test_train_ratio)) * var)
        pval = _two_sided(stat, J - 1)
    return TTestResult(float(stat), pval, mean, alpha, pval < alpha)


def cv_ttest_vs_best(
    scores: Mapping[str, ArrayLike],
    greater_is_better: bool = True,
    alpha: float = 0.05,
    *,
    test: Literal["5x2cv", "corrected"] = "5x2cv",
    test_train_ratio: float = 1.0,
) -> tuple[str, dict[str, float]]:
    """p-value of each algorithm against the best one by a cross-validation t-test.

    Parameters
    ----------
    scores : mapping of name -> array-like of shape (n_folds,)
        Fold scores in (repetition, fold) order, the same folds for all.
    greater_is_better : bool, default=True
        Whether a larger value of the measure is better (accuracy, AUC) or a smaller one
        (Hamming loss, ranking loss).
    alpha : float, default=0.05
        Significance level of the test.
    test : {"5x2cv", "corrected"}, default="5x2cv"
        "5x2cv": Dietterich's 5 x 2 cv t-test; "corrected": Nadeau and Bengio's
        corrected resampled t-test.
    test_train_ratio : float, default=1.0
        For ``test="corrected"``.

    Returns
    -------
    best : str
    pvalues : dict of name -> float
        NaN for the best.

    See Also
    --------
    ttest_markers : The same with the plain paired t-test.
    cv_5x2_ttest, corrected_resampled_ttest : The tests used.

    References
    ----------
    T. G. Dietterich, "Approximate Statistical Tests for Comparing Supervised
    Classification Learning Algorithms", Neural Computation 10(7), 1998.

    C. Nadeau and Y. Bengio, "Inference for the Generalization Error", Machine
    Learning 52, 2003.

    Examples
    --------
    >>> from mlknn.stats import cv_ttest_vs_best
    >>> scores = {"MLkNN": [0.80, 0.82, 0.79, 0.85, 0.81, 0.83, 0.80, 0.84, 0.82, 0.81],
    ...           "BRkNN": [0.78, 0.80, 0.79, 0.81, 0.80, 0.80, 0.77, 0.82, 0.80, 0.79],
    ...           "IBLR": [0.81, 0.80, 0.80, 0.84, 0.80, 0.84, 0.79, 0.83, 0.83, 0.80]}
    >>> best, pvalues = cv_ttest_vs_best(scores)
    >>> best, {name: round(p, 4) for name, p in pvalues.items()}
    ('MLkNN', {'MLkNN': nan, 'BRkNN': 0.2261, 'IBLR': 0.5209})
    """
    names = list(scores)
    if not names:
        raise ValueError("cv_ttest_vs_best needs at least one algorithm.")
    if test not in ("5x2cv", "corrected"):
        raise ValueError(f"The 'test' parameter must be '5x2cv' or 'corrected'. Got {test!r} instead.")
    means = np.array([np.mean(np.asarray(scores[n])) for n in names])
    best = names[int(np.argmax(means) if greater_is_better else np.argmin(means))]
    pvalues: dict[str, float] = {}
    for n in names:
        if n == best:
            pvalues[n] = float("nan")
        elif test == "5x2cv":
            pvalues[n] = cv_5x2_ttest(scores[n], scores[best], alpha).pvalue
        else:
            pvalues[n] = corrected_resampled_ttest(scores[n], scores[best], test_train_ratio, alpha).pvalue
    return best, pvalues
