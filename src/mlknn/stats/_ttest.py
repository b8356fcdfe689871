"""The paired t-test over folds and its win/loss markers (Younes et al. 2011, sec. 5)."""

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from ._common import _check_alpha, _paired


@dataclass(frozen=True)
class TTestResult:
    """Two-tailed paired t-test of a against b.

    Parameters
    ----------
    statistic : float
        The t statistic.
    pvalue : float
        Two-tailed p-value.
    mean_difference : float
        Mean of ``a - b``.
    alpha : float
        Significance level.
    significant : bool
        ``pvalue < alpha``.
    """

    statistic: float
    pvalue: float
    mean_difference: float
    alpha: float
    significant: bool


def paired_ttest(a: ArrayLike, b: ArrayLike, alpha: float = 0.05) -> TTestResult:
    """Two-tailed paired t-test (Younes et al. 2011, Tables 4-9).

    Parameters
    ----------
    a, b : array-like of shape (n_folds,)
        The two algorithms' scores on the same folds.
    alpha : float, default=0.05
        Significance level of the test.

    Returns
    -------
    TTestResult
        When every difference is equal (zero variance) the test is undefined:
        p = 1 if the mean difference is 0, else 0.

    See Also
    --------
    ttest_markers : This test of every algorithm against the best one.
    cv_5x2_ttest, corrected_resampled_ttest : t-tests that account for overlapping training sets.

    References
    ----------
    Z. Younes, F. Abdallah, T. Denoeux and H. Snoussi, "A Dependent Multilabel
    Classification Method Derived from the k-Nearest Neighbor Rule", EURASIP J.
    Adv. Signal Process., 2011, Tables 4-9 (the two-tailed paired t-test at 5%).

    Examples
    --------
    >>> from mlknn.stats import paired_ttest
    >>> a = [0.80, 0.82, 0.79, 0.85, 0.81, 0.83, 0.80, 0.84, 0.82, 0.81]
    >>> b = [0.78, 0.80, 0.79, 0.81, 0.80, 0.80, 0.77, 0.82, 0.80, 0.79]
    >>> res = paired_ttest(a, b)
    >>> round(res.statistic, 3), round(res.pvalue, 5), res.significant
    (6.034, 0.00019, True)
    """
    _check_alpha(alpha)
    a, b = _paired(a, b, "paired_ttest")
    d = a - b
    mean = float(d.mean())
    if np.allclose(d, d[0], rtol=0, atol=1e-15):
        p = 1.0 if abs(mean) <= 1e-15 else 0.0
        stat = 0.0 if p == 1.0 else math.copysign(math.inf, mean)
    else:
        res = stats.ttest_rel(a, b)
        stat, p = float(res.statistic), float(res.pvalue)
    return TTestResult(stat, p, mean, alpha, p < alpha)


@dataclass(frozen=True)
class TTestMarkers:
    """Younes et al.'s (2011) markers: the best algorithm and, for each other one, whether
    it differs significantly from the best (bullet) or not (circle).

    Parameters
    ----------
    best : str
        The algorithm with the best mean.
    markers : dict of str to str
        ``"best"``, ``"significant"`` or ``"not_significant"`` per algorithm.
    pvalues : dict of str to float
        p-value of each algorithm against the best (NaN for the best).
    alpha : float
        Significance level.
    """

    best: str
    markers: dict[str, str]
    pvalues: dict[str, float]
    alpha: float

    def symbol(self, name: str) -> str:
        """'' for the best, '•' significant, '◦' not significant.

        Parameters
        ----------
        name : str
            An algorithm of ``markers``.

        Returns
        -------
        str
            The marker of Younes et al.'s (2011) tables.
        """
        return {"best": "", "significant": "•", "not_significant": "◦"}[self.markers[name]]


def ttest_markers(
    scores: Mapping[str, ArrayLike], greater_is_better: bool = True, alpha: float = 0.05
) -> TTestMarkers:
    """Compare every algorithm with the best one by a paired t-test.

    Parameters
    ----------
    scores : mapping of name -> array-like of shape (n_folds,)
        Per-fold scores on one dataset and one metric (same folds for all).
    greater_is_better : bool, default=True
        Whether a larger value of the measure is better (accuracy, AUC) or a smaller one
        (Hamming loss, ranking loss).
    alpha : float, default=0.05
        Significance level of the test.

    Returns
    -------
    TTestMarkers
        ``markers[name]`` is ``"best"``, ``"significant"`` or ``"not_significant"``.
        The best is the highest (lowest) mean; ties go to the first name.

    See Also
    --------
    paired_ttest : The test applied to each pair.
    cv_ttest_vs_best : The same with a cross-validation t-test.

    References
    ----------
    Z. Younes, F. Abdallah, T. Denoeux and H. Snoussi, "A Dependent Multilabel
    Classification Method Derived from the k-Nearest Neighbor Rule", EURASIP J.
    Adv. Signal Process., 2011, Tables 4-9 (the bullet and circle markers).

    Examples
    --------
    >>> from mlknn.stats import ttest_markers
    >>> scores = {"MLkNN": [0.80, 0.82, 0.79, 0.85, 0.81, 0.83, 0.80, 0.84, 0.82, 0.81],
    ...           "BRkNN": [0.78, 0.80, 0.79, 0.81, 0.80, 0.80, 0.77, 0.82, 0.80, 0.79],
    ...           "IBLR": [0.81, 0.80, 0.80, 0.84, 0.80, 0.84, 0.79, 0.83, 0.83, 0.80]}
    >>> res = ttest_markers(scores)
    >>> res.best, res.markers
    ('MLkNN', {'MLkNN': 'best', 'BRkNN': 'significant', 'IBLR': 'not_significant'})
    """
    names = list(scores)
    if not names:
        raise ValueError("ttest_markers needs at least one algorithm.")
    means = np.array([np.mean(np.asarray(scores[n])) for n in names])
    best = names[int(np.argmax(means) if greater_is_better else np.argmin(means))]
    markers, pvalues = {best: "best"}, {best: float("nan")}
    for n in names:
        if n == best:
            continue
        res = paired_ttest(scores[n], scores[best], alpha)
        markers[n] = "significant" if res.significant else "not_significant"
        pvalues[n] = res.pvalue
    return TTestMarkers(best, {n: markers[n] for n in names}, {n: pvalues[n] for n in names}, alpha)


# ------------------------------------------------------------------- Wilcoxon
#: Largest number of non-zero differences for which the exact distribution is used.
