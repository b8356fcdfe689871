"""Wilcoxon signed-rank test and its pairwise, corrected form (Teng et al. 2025)."""

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from ._common import _check_alpha, _paired, _table

_WILCOXON_EXACT_MAX = 50


def _signed_rank_null(r2: NDArray[np.int64]) -> NDArray[np.float64]:
    """Counts of every value of sum(r2[i] * B_i), B_i in {0, 1}: the exact null
    distribution of the (doubled) positive-rank sum, as float64 (exact up to 2**53)."""
    dist = np.zeros(int(r2.sum()) + 1)
    dist[0] = 1.0
    top = 0
    for value in r2:
        r = int(value)
        dist[r : top + r + 1] += dist[: top + 1].copy()
        top += r
    return dist


def wilcoxon_signed_rank(
    a: ArrayLike, b: ArrayLike, alternative: Literal["two-sided", "greater", "less"] = "two-sided"
) -> float:
    """Wilcoxon signed-rank test of the differences a - b.

    Zero differences are discarded (Wilcoxon's rule) and tied absolute
    differences get their average rank. For up to 50 non-zero differences the
    p-value comes from the exact null distribution of the positive-rank sum
    given those ranks (every sign pattern equally likely), which equals
    ``scipy.stats.wilcoxon(..., method="exact")`` when there are no ties and is
    the exact permutation p-value when there are; beyond 50, the normal
    approximation with the tie correction (``method="approx"``, no continuity
    correction). Computed here because scipy >= 1.15 falls back to a slow
    randomised permutation test on ties.

    Parameters
    ----------
    a, b : array-like of shape (n,)
        Paired scores of two methods, one pair per dataset (or per fold); the
        test is on the differences ``a - b``.
    alternative : {"two-sided", "greater", "less"}, default="two-sided"
        ``"greater"``: H1 is that a tends to be larger than b.

    Returns
    -------
    float
        The p-value; 1.0 when every difference is zero (no evidence either way).

    See Also
    --------
    pairwise_wilcoxon : This test between every ordered pair of algorithms.
    scipy.stats.wilcoxon : scipy's test (equal without ties, ``method="exact"``).

    References
    ----------
    F. Wilcoxon, "Individual Comparisons by Ranking Methods", Biometrics Bulletin
    1(6), 1945.

    J. Demsar, "Statistical Comparisons of Classifiers over Multiple Data Sets",
    Journal of Machine Learning Research 7, 2006, section 3.1.3.

    Examples
    --------
    >>> from mlknn.stats import wilcoxon_signed_rank
    >>> a = [0.80, 0.82, 0.79, 0.85, 0.81, 0.83, 0.80, 0.84, 0.82, 0.81]
    >>> b = [0.78, 0.80, 0.79, 0.81, 0.80, 0.80, 0.77, 0.82, 0.80, 0.79]
    >>> round(wilcoxon_signed_rank(a, b), 5)
    0.00391
    >>> round(wilcoxon_signed_rank(a, b, alternative="greater"), 5)
    0.00195
    """
    if alternative not in ("two-sided", "greater", "less"):
        raise ValueError(
            "The 'alternative' parameter must be one of ('two-sided', 'greater', 'less'). "
            f"Got {alternative!r} instead."
        )
    a, b = _paired(a, b, "wilcoxon_signed_rank")
    d = a - b
    d = d[d != 0]
    n = d.size
    if n == 0:
        return 1.0
    ranks = stats.rankdata(np.abs(d))
    if n <= _WILCOXON_EXACT_MAX:
        r2 = np.rint(2 * ranks).astype(np.int64)  # average ranks are multiples of 1/2
        t = int(r2[d > 0].sum())
        dist = _signed_rank_null(r2)
        total = dist.sum()
        p_greater = dist[t:].sum() / total
        p_less = dist[: t + 1].sum() / total
    else:
        t = ranks[d > 0].sum()
        mean = n * (n + 1) / 4.0
        _, counts = np.unique(np.abs(d), return_counts=True)
        var = n * (n + 1) * (2 * n + 1) / 24.0 - np.sum(counts**3 - counts) / 48.0
        z = (t - mean) / math.sqrt(var) if var > 0 else 0.0
        p_greater, p_less = float(stats.norm.sf(z)), float(stats.norm.cdf(z))
    if alternative == "greater":
        p = p_greater
    elif alternative == "less":
        p = p_less
    else:
        p = 2.0 * min(p_greater, p_less)
    return float(min(1.0, p))


@dataclass(frozen=True)
class PairwiseWilcoxonResult:
    """Teng et al. (2025) Tables 6-11: ``pvalues[i, j]`` tests H1 "algorithm i is better
    than algorithm j" over the datasets.

    Parameters
    ----------
    names : tuple of str
        The algorithms (rows and columns).
    pvalues : ndarray of shape (m, m)
        One-sided p-values; NaN on the diagonal.
    alpha : float
        Family-wise significance level.
    corrected_alpha : float
        The level each test is compared with (``alpha / (m (m - 1))`` with Bonferroni).
    n_comparisons : int
        Number of ordered pairs tested.
    significant : ndarray of shape (m, m), dtype bool
        ``pvalues < corrected_alpha``.
    n_datasets : int
        Number of datasets (paired observations).
    """

    names: tuple[str, ...]
    pvalues: NDArray[np.float64]
    alpha: float
    corrected_alpha: float
    n_comparisons: int
    significant: NDArray[np.bool_]
    n_datasets: int


def pairwise_wilcoxon(
    table: ArrayLike,
    names: Sequence[str] | None = None,
    greater_is_better: bool = True,
    alpha: float = 0.05,
    correction: Literal["bonferroni", "none"] = "bonferroni",
) -> PairwiseWilcoxonResult:
    """One-sided Wilcoxon signed-rank tests between every ordered pair.

    Parameters
    ----------
    table : array-like of shape (n_datasets, n_algorithms)
        Mean score of each algorithm on each dataset.
    names : sequence of str, optional
        Names of the algorithms (the table's columns); default their column numbers.
    greater_is_better : bool, default=True
        Whether a larger value of the measure is better (accuracy, AUC) or a smaller one
        (Hamming loss, ranking loss).
    alpha : float, default=0.05
        Significance level of the test.
    correction : {"bonferroni", "none"}, default="bonferroni"
        Bonferroni divides ``alpha`` by the number of ordered pairs
        ``m (m - 1)`` (Teng et al. 2025: 0.05 / 90 = 5.56e-4 for 10 algorithms).

    Returns
    -------
    PairwiseWilcoxonResult

    See Also
    --------
    wilcoxon_signed_rank : The test of one pair.
    friedman_test : One test over all the algorithms.

    References
    ----------
    "A Hubness Information-Based k-Nearest Neighbor Approach for Multi-Label
    Learning", Mathematics 2025, Tables 6-11.

    J. Demsar, "Statistical Comparisons of Classifiers over Multiple Data Sets",
    Journal of Machine Learning Research 7, 2006, section 3.1.3.

    Examples
    --------
    >>> import numpy as np
    >>> from mlknn.stats import pairwise_wilcoxon
    >>> table = np.array([[0.80, 0.75, 0.70], [0.60, 0.62, 0.55], [0.90, 0.85, 0.86],
    ...                   [0.70, 0.65, 0.66], [0.85, 0.80, 0.79], [0.77, 0.70, 0.72]])  # 6 datasets x 3 algorithms
    >>> res = pairwise_wilcoxon(table, names=["A", "B", "C"])
    >>> res.pvalues.round(4)
    array([[   nan, 0.0312, 0.0156],
           [0.9844,    nan, 0.3594],
           [1.    , 0.7344,    nan]])
    >>> round(res.corrected_alpha, 5), res.significant[0].tolist()
    (0.00833, [False, False, False])
    """
    _check_alpha(alpha)
    if correction not in ("bonferroni", "none"):
        raise ValueError(f"The 'correction' parameter must be 'bonferroni' or 'none'. Got {correction!r} instead.")
    T, names = _table(table, names)
    sign = 1.0 if greater_is_better else -1.0
    m = T.shape[1]
    P = np.full((m, m), np.nan)
    for i in range(m):
        for j in range(m):
            if i != j:
                P[i, j] = wilcoxon_signed_rank(sign * T[:, i], sign * T[:, j], alternative="greater")
    n_comp = m * (m - 1)
    corrected = alpha / n_comp if correction == "bonferroni" and n_comp else alpha
    sig = np.where(np.isnan(P), False, P < corrected)
    return PairwiseWilcoxonResult(tuple(names), P, alpha, corrected, n_comp, sig, T.shape[0])


# ---------------------------------------------------------------------- ranks
