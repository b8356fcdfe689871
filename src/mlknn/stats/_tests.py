"""Tests, ranks and critical differences; results as frozen dataclasses."""

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

#: Nemenyi critical values q_alpha (studentized range / sqrt(2)) for k = 2..10
#: algorithms, Demsar (2006), Table 5(a).
Q_ALPHA = {
    0.05: (1.960, 2.343, 2.569, 2.728, 2.850, 2.949, 3.031, 3.102, 3.164),
    0.10: (1.645, 2.052, 2.291, 2.459, 2.589, 2.693, 2.780, 2.855, 2.920),
}


def _check_alpha(alpha):
    if not (isinstance(alpha, (int, float)) and 0 < alpha < 1):
        raise ValueError(f"The 'alpha' parameter must be a float in the range (0, 1). Got {alpha!r} instead.")


def _paired(a, b, what):
    a = np.asarray(a, dtype=np.float64).ravel()
    b = np.asarray(b, dtype=np.float64).ravel()
    if a.shape != b.shape:
        raise ValueError(f"{what} needs two samples of the same length; got {a.size} and {b.size}.")
    if a.size < 2:
        raise ValueError(f"{what} needs at least 2 paired values; got {a.size}.")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError(f"{what} needs finite values; got NaN or inf.")
    return a, b


def _table(table, names=None):
    T = np.asarray(table, dtype=np.float64)
    if T.ndim != 2:
        raise ValueError(f"The 'table' must be 2-D (n_datasets, n_algorithms); got shape {T.shape}.")
    if names is None:
        names = [str(i) for i in range(T.shape[1])]
    names = list(names)
    if len(names) != T.shape[1]:
        raise ValueError(f"The 'names' parameter must have {T.shape[1]} entries (one per column); got {len(names)}.")
    return T, names


# --------------------------------------------------------------------- t-test
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


def paired_ttest(a, b, alpha=0.05):
    """Two-tailed paired t-test (seed 000, Tables 4-9).

    Parameters
    ----------
    a, b : array-like of shape (n_folds,)
        The two algorithms' scores on the same folds.
    alpha : float, default=0.05

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
    Adv. Signal Process., 2011 (seed 000), Tables 4-9 (the two-tailed paired t-test at 5%).

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
    """Seed 000's markers: the best algorithm and, for each other one, whether
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
    markers: dict
    pvalues: dict
    alpha: float

    def symbol(self, name):
        """'' for the best, '•' significant, '◦' not significant.

        Parameters
        ----------
        name : str
            An algorithm of ``markers``.

        Returns
        -------
        str
            The marker of seed 000's tables.
        """
        return {"best": "", "significant": "•", "not_significant": "◦"}[self.markers[name]]


def ttest_markers(scores, greater_is_better=True, alpha=0.05):
    """Compare every algorithm with the best one by a paired t-test.

    Parameters
    ----------
    scores : mapping of name -> array-like of shape (n_folds,)
        Per-fold scores on one dataset and one metric (same folds for all).
    greater_is_better : bool, default=True
    alpha : float, default=0.05

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
    Adv. Signal Process., 2011 (seed 000), Tables 4-9 (the bullet and circle markers).

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
    means = np.array([np.mean(scores[n]) for n in names])
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
_WILCOXON_EXACT_MAX = 50


def _signed_rank_null(r2):
    """Counts of every value of sum(r2[i] * B_i), B_i in {0, 1}: the exact null
    distribution of the (doubled) positive-rank sum, as float64 (exact up to 2**53)."""
    dist = np.zeros(int(r2.sum()) + 1)
    dist[0] = 1.0
    top = 0
    for r in r2:
        r = int(r)
        dist[r : top + r + 1] += dist[: top + 1].copy()
        top += r
    return dist


def wilcoxon_signed_rank(a, b, alternative="two-sided"):
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
    """Seed 001 Tables 6-11: ``pvalues[i, j]`` tests H1 "algorithm i is better
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

    names: tuple
    pvalues: np.ndarray
    alpha: float
    corrected_alpha: float
    n_comparisons: int
    significant: np.ndarray
    n_datasets: int


def pairwise_wilcoxon(table, names=None, greater_is_better=True, alpha=0.05, correction="bonferroni"):
    """One-sided Wilcoxon signed-rank tests between every ordered pair.

    Parameters
    ----------
    table : array-like of shape (n_datasets, n_algorithms)
        Mean score of each algorithm on each dataset.
    names : sequence of str, optional
    greater_is_better : bool, default=True
    alpha : float, default=0.05
    correction : {"bonferroni", "none"}, default="bonferroni"
        Bonferroni divides ``alpha`` by the number of ordered pairs
        ``m (m - 1)`` (seed 001: 0.05 / 90 = 5.56e-4 for 10 algorithms).

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
    Learning", Mathematics 2025 (seed 001), Tables 6-11.

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
def average_ranks(table, greater_is_better=True):
    """Rank the algorithms on every dataset (1 = best, ties get the average rank).

    Parameters
    ----------
    table : array-like of shape (n_datasets, n_algorithms)
    greater_is_better : bool, default=True

    Returns
    -------
    ranks : ndarray of shape (n_datasets, n_algorithms)
    average : ndarray of shape (n_algorithms,)

    See Also
    --------
    friedman_test : The test on these ranks.
    nemenyi_cd : The critical difference of two average ranks.

    Notes
    -----
    A NaN score ranks last (NaNs tie among themselves).

    References
    ----------
    J. Demsar, "Statistical Comparisons of Classifiers over Multiple Data Sets",
    Journal of Machine Learning Research 7, 2006, section 3.2.2.

    Examples
    --------
    >>> import numpy as np
    >>> from mlknn.stats import average_ranks
    >>> table = np.array([[0.80, 0.75, 0.70], [0.60, 0.62, 0.55], [0.90, 0.85, 0.86],
    ...                   [0.70, 0.65, 0.66], [0.85, 0.80, 0.79], [0.77, 0.70, 0.72]])  # 6 datasets x 3 algorithms
    >>> ranks, average = average_ranks(table)
    >>> ranks[0].tolist(), average.round(3).tolist()
    ([1.0, 2.0, 3.0], [1.167, 2.333, 2.5])
    """
    T, _ = _table(table)
    key = -T if greater_is_better else T.copy()
    key = np.where(np.isnan(key), np.inf, key)
    ranks = stats.rankdata(key, method="average", axis=1)
    return ranks, ranks.mean(axis=0) if ranks.shape[0] else np.full(T.shape[1], np.nan)


# -------------------------------------------------------------------- Friedman
@dataclass(frozen=True)
class FriedmanResult:
    """Friedman test over datasets (Demsar 2006, section 3.2.2).

    Parameters
    ----------
    chi2 : float
        Friedman statistic chi^2_F = 12N/(k(k+1)) [sum_j R_j^2 - k(k+1)^2/4].
    chi2_pvalue, chi2_critical_value : float
        Against chi-square with k - 1 degrees of freedom.
    F_F : float
        Iman-Davenport statistic (N-1) chi^2_F / (N(k-1) - chi^2_F).
    pvalue, critical_value : float
        Against F with (k-1, (k-1)(N-1)) degrees of freedom.
    df1, df2 : int
        The degrees of freedom of F_F, ``k - 1`` and ``(k - 1)(N - 1)``.
    alpha : float
        Significance level of the critical values.
    reject : bool
        F_F > critical_value.
    average_ranks : tuple of float
        R_j, the average rank of each algorithm (1 = best).
    names : tuple of str
        The algorithms, in the order of ``average_ranks``.
    n_datasets, n_algorithms : int
        N and k.
    """

    chi2: float
    chi2_pvalue: float
    chi2_critical_value: float
    F_F: float
    df1: int
    df2: int
    pvalue: float
    critical_value: float
    alpha: float
    reject: bool
    average_ranks: tuple
    names: tuple
    n_datasets: int
    n_algorithms: int


def friedman_from_ranks(avg_ranks, n_datasets, alpha=0.05, names=None):
    """Friedman / Iman-Davenport statistics from average ranks.

    Parameters
    ----------
    avg_ranks : array-like of shape (k,)
    n_datasets : int
    alpha : float, default=0.05
    names : sequence of str, optional

    Returns
    -------
    FriedmanResult

    See Also
    --------
    friedman_test : The same from the table of scores.
    average_ranks : The ranks this takes.

    References
    ----------
    J. Demsar, "Statistical Comparisons of Classifiers over Multiple Data Sets",
    Journal of Machine Learning Research 7, 2006, section 3.2.2.

    Examples
    --------
    >>> from mlknn.stats import friedman_from_ranks
    >>> res = friedman_from_ranks([1.2, 2.3, 2.5], n_datasets=6)
    >>> round(res.chi2, 4), round(res.F_F, 4), res.reject
    (5.88, 4.8039, True)
    """
    _check_alpha(alpha)
    R = np.asarray(avg_ranks, dtype=np.float64).ravel()
    k, N = R.size, int(n_datasets)
    if k < 2 or N < 2:
        raise ValueError(f"The Friedman test needs at least 2 algorithms and 2 datasets; got k = {k}, N = {N}.")
    chi2 = 12.0 * N / (k * (k + 1)) * (np.sum(R**2) - k * (k + 1) ** 2 / 4.0)
    chi2 = max(float(chi2), 0.0)
    df1, df2 = k - 1, (k - 1) * (N - 1)
    denom = N * (k - 1) - chi2
    F_F = (N - 1) * chi2 / denom if denom > 1e-12 else math.inf
    pvalue = float(stats.f.sf(F_F, df1, df2)) if math.isfinite(F_F) else 0.0
    crit = float(stats.f.ppf(1 - alpha, df1, df2))
    names = tuple(names) if names is not None else tuple(str(i) for i in range(k))
    return FriedmanResult(
        chi2=chi2,
        chi2_pvalue=float(stats.chi2.sf(chi2, df1)),
        chi2_critical_value=float(stats.chi2.ppf(1 - alpha, df1)),
        F_F=float(F_F),
        df1=df1,
        df2=df2,
        pvalue=pvalue,
        critical_value=crit,
        alpha=alpha,
        reject=bool(F_F > crit),
        average_ranks=tuple(float(r) for r in R),
        names=names,
        n_datasets=N,
        n_algorithms=k,
    )


def friedman_test(table, names=None, greater_is_better=True, alpha=0.05):
    """Friedman test with the Iman-Davenport F statistic (seed 001 Table 5).

    Parameters
    ----------
    table : array-like of shape (n_datasets, n_algorithms)
    names : sequence of str, optional
    greater_is_better : bool, default=True
    alpha : float, default=0.05

    Returns
    -------
    FriedmanResult
        The statistic is Demsar's formula on ranks with ties averaged (no tie
        correction), as used in the comparison literature.

    See Also
    --------
    friedman_from_ranks : The same from average ranks.
    nemenyi_cd : The post-hoc critical difference.
    mlknn.plots.CriticalDifferenceDisplay : The critical-difference diagram.

    References
    ----------
    J. Demsar, "Statistical Comparisons of Classifiers over Multiple Data Sets",
    Journal of Machine Learning Research 7, 2006, section 3.2.2.

    "A Hubness Information-Based k-Nearest Neighbor Approach for Multi-Label
    Learning", Mathematics 2025 (seed 001), Table 5.

    Examples
    --------
    >>> import numpy as np
    >>> from mlknn.stats import friedman_test
    >>> table = np.array([[0.80, 0.75, 0.70], [0.60, 0.62, 0.55], [0.90, 0.85, 0.86],
    ...                   [0.70, 0.65, 0.66], [0.85, 0.80, 0.79], [0.77, 0.70, 0.72]])  # 6 datasets x 3 algorithms
    >>> res = friedman_test(table, names=["A", "B", "C"])
    >>> [round(r, 3) for r in res.average_ranks], round(res.chi2, 4), round(res.pvalue, 4), res.reject
    ([1.167, 2.333, 2.5], 6.3333, 0.0235, True)
    """
    T, names = _table(table, names)
    _, avg = average_ranks(T, greater_is_better)
    return friedman_from_ranks(avg, T.shape[0], alpha, names)


def nemenyi_cd(n_algorithms, n_datasets, alpha=0.05):
    """Nemenyi critical difference CD = q_alpha sqrt(k(k+1) / (6N)).

    Parameters
    ----------
    n_algorithms : int
        k >= 2. For k <= 10 q_alpha is Demsar's Table 5(a) (:data:`Q_ALPHA`,
        alpha 0.05 or 0.10); otherwise, or for another alpha, the studentized
        range quantile divided by sqrt(2) (``scipy.stats.studentized_range``).
    n_datasets : int
    alpha : float, default=0.05

    Returns
    -------
    float

    See Also
    --------
    friedman_test : The omnibus test the Nemenyi test follows.
    mlknn.plots.CriticalDifferenceDisplay : Draws this difference.

    References
    ----------
    J. Demsar, "Statistical Comparisons of Classifiers over Multiple Data Sets",
    Journal of Machine Learning Research 7, 2006, section 3.2.2 and Table 5(a).

    Examples
    --------
    >>> from mlknn.stats import nemenyi_cd
    >>> round(nemenyi_cd(n_algorithms=3, n_datasets=6), 4)
    1.3527
    """
    _check_alpha(alpha)
    k, N = int(n_algorithms), int(n_datasets)
    if k < 2 or N < 1:
        raise ValueError(f"nemenyi_cd needs n_algorithms >= 2 and n_datasets >= 1; got {k} and {N}.")
    table = Q_ALPHA.get(round(alpha, 10))
    if table is not None and k <= 10:
        q = table[k - 2]
    else:
        q = float(stats.studentized_range.ppf(1 - alpha, k, np.inf)) / math.sqrt(2.0)
    return q * math.sqrt(k * (k + 1) / (6.0 * N))


# ------------------------------------------------------------------ sign test
@dataclass(frozen=True)
class SignTestResult:
    """Sign test of algorithm a against b over datasets.

    Parameters
    ----------
    wins, losses, ties : int
        Datasets where a is better, worse, equal (before tie splitting).
    n : int
        Number of datasets in the binomial test, after tie splitting.
    pvalue : float
        Two-sided binomial p-value.
    alpha : float
        Significance level.
    significant : bool
        ``pvalue < alpha``.
    """

    wins: int
    losses: int
    ties: int
    n: float
    pvalue: float
    alpha: float
    significant: bool


def sign_test(a, b, greater_is_better=True, alpha=0.05):
    """Two-sided sign test over datasets (seed 000 Table 11; Demsar 2006, 3.1.3).

    Ties are split evenly between the two algorithms (one is dropped when their
    number is odd), as Demsar recommends.

    Parameters
    ----------
    a, b : array-like of shape (n_datasets,)
        Scores of the two algorithms.
    greater_is_better : bool, default=True
    alpha : float, default=0.05

    Returns
    -------
    SignTestResult
        ``wins`` / ``losses`` are a's counts before tie splitting; the p-value is
        the two-sided binomial test of the split counts against 1/2.

    See Also
    --------
    wilcoxon_signed_rank : A test that uses the sizes of the differences too.
    win_tie_loss : Counts of significant wins over datasets.

    References
    ----------
    J. Demsar, "Statistical Comparisons of Classifiers over Multiple Data Sets",
    Journal of Machine Learning Research 7, 2006, section 3.1.3.

    Z. Younes, F. Abdallah, T. Denoeux and H. Snoussi, "A Dependent Multilabel
    Classification Method Derived from the k-Nearest Neighbor Rule", EURASIP J.
    Adv. Signal Process., 2011 (seed 000), Table 11.

    Examples
    --------
    >>> from mlknn.stats import sign_test
    >>> res = sign_test([0.8, 0.7, 0.9, 0.6, 0.75, 0.85], [0.7, 0.6, 0.8, 0.6, 0.7, 0.8])
    >>> res.wins, res.losses, res.ties, round(res.pvalue, 4)
    (5, 0, 1, 0.0625)
    """
    _check_alpha(alpha)
    a, b = _paired(a, b, "sign_test")
    d = (a - b) if greater_is_better else (b - a)
    wins, losses, ties = int(np.sum(d > 0)), int(np.sum(d < 0)), int(np.sum(d == 0))
    half = ties // 2
    w, n = wins + half, wins + losses + 2 * half
    p = float(stats.binomtest(w, n, 0.5).pvalue) if n > 0 else 1.0
    return SignTestResult(wins, losses, ties, n, p, alpha, p < alpha)


# -------------------------------------------------------------- win/tie/loss
@dataclass(frozen=True)
class WinTieLoss:
    """Seed 001 Table 3, last row: for each algorithm, over datasets and
    opponents, how often it was significantly better / not different / worse.

    Parameters
    ----------
    names : tuple of str
        The algorithms.
    wins, ties, losses : ndarray of shape (m,), dtype int
        Counts over datasets and opponents.
    outcome : ndarray of shape (n_datasets, m, m)
        +1 where the row algorithm wins, -1 where it loses, 0 a tie.
    """

    names: tuple
    wins: np.ndarray
    ties: np.ndarray
    losses: np.ndarray
    outcome: np.ndarray  # (n_datasets, m, m): +1 win of row, -1 loss, 0 tie

    def as_strings(self):
        """The counts as ``"wins/ties/losses"`` per algorithm (seed 001 Table 3).

        Returns
        -------
        dict of str to str
            One string per algorithm.
        """
        return {n: f"{w}/{t}/{l}" for n, w, t, l in zip(self.names, self.wins, self.ties, self.losses)}


def win_tie_loss(fold_scores, names=None, greater_is_better=True, alpha=0.05, test="wilcoxon"):
    """Pairwise tests on every dataset over its folds.

    Parameters
    ----------
    fold_scores : sequence of array-like of shape (n_algorithms, n_folds)
        One array per dataset (the number of folds may differ between datasets).
    names : sequence of str, optional
    greater_is_better : bool, default=True
    alpha : float, default=0.05
    test : {"wilcoxon", "ttest"}, default="wilcoxon"
        Two-sided Wilcoxon signed-rank (seed 001) or paired t-test; a significant
        result is a win for the algorithm with the better mean.

    Returns
    -------
    WinTieLoss

    See Also
    --------
    pairwise_wilcoxon : The tests over datasets instead of folds.
    sign_test : Wins and losses over datasets.

    References
    ----------
    "A Hubness Information-Based k-Nearest Neighbor Approach for Multi-Label
    Learning", Mathematics 2025 (seed 001), Table 3.

    Examples
    --------
    >>> import numpy as np
    >>> from mlknn.stats import win_tie_loss
    >>> rng = np.random.RandomState(0)
    >>> fold_scores = [np.array([[0.8] * 10, [0.7] * 10]) + rng.normal(0, 0.01, (2, 10)) for _ in range(3)]
    >>> res = win_tie_loss(fold_scores, names=["A", "B"])
    >>> res.as_strings()
    {'A': '3/0/0', 'B': '0/0/3'}
    """
    _check_alpha(alpha)
    if test not in ("wilcoxon", "ttest"):
        raise ValueError(f"The 'test' parameter must be 'wilcoxon' or 'ttest'. Got {test!r} instead.")
    arrays = [np.asarray(s, dtype=np.float64) for s in fold_scores]
    if not arrays:
        raise ValueError("win_tie_loss needs at least one dataset.")
    m = arrays[0].shape[0]
    names = tuple(names) if names is not None else tuple(str(i) for i in range(m))
    out = np.zeros((len(arrays), m, m), dtype=np.int8)
    for d, S in enumerate(arrays):
        if S.ndim != 2 or S.shape[0] != m:
            raise ValueError(f"fold_scores[{d}] must have shape ({m}, n_folds); got {S.shape}.")
        for i in range(m):
            for j in range(i + 1, m):
                a, b = S[i], S[j]
                ok = np.isfinite(a) & np.isfinite(b)
                if ok.sum() < 2:
                    continue
                if test == "wilcoxon":
                    p = wilcoxon_signed_rank(a[ok], b[ok])
                else:
                    p = paired_ttest(a[ok], b[ok]).pvalue
                if p < alpha:
                    diff = a[ok].mean() - b[ok].mean()
                    s = int(np.sign(diff if greater_is_better else -diff))
                    out[d, i, j], out[d, j, i] = s, -s
    off = ~np.eye(m, dtype=bool)
    wins = ((out == 1) & off).sum(axis=(0, 2))
    losses = ((out == -1) & off).sum(axis=(0, 2))
    ties = ((out == 0) & off).sum(axis=(0, 2))
    return WinTieLoss(names, wins, ties, losses, out)
