"""Average ranks, the Friedman / Iman-Davenport test and Nemenyi's critical difference (Demsar 2006)."""

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from ._common import Q_ALPHA, _check_alpha, _table


def average_ranks(
    table: ArrayLike, greater_is_better: bool = True
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Rank the algorithms on every dataset (1 = best, ties get the average rank).

    Parameters
    ----------
    table : array-like of shape (n_datasets, n_algorithms)
        The measure's values: one row per dataset, one column per algorithm.
    greater_is_better : bool, default=True
        Whether a larger value of the measure is better (accuracy, AUC) or a smaller one
        (Hamming loss, ranking loss).

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
    average_ranks: tuple[float, ...]
    names: tuple[str, ...]
    n_datasets: int
    n_algorithms: int


def friedman_from_ranks(
    avg_ranks: ArrayLike, n_datasets: int, alpha: float = 0.05, names: Sequence[str] | None = None
) -> FriedmanResult:
    """Friedman / Iman-Davenport statistics from average ranks.

    Parameters
    ----------
    avg_ranks : array-like of shape (k,)
        Average rank of each algorithm over the datasets.
    n_datasets : int
        Number of datasets the ranks average over.
    alpha : float, default=0.05
        Significance level of the test.
    names : sequence of str, optional
        Names of the algorithms (the table's columns); default their column numbers.

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
    chi2_raw = 12.0 * N / (k * (k + 1)) * (np.sum(R**2) - k * (k + 1) ** 2 / 4.0)
    chi2 = max(float(chi2_raw), 0.0)
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


def friedman_test(
    table: ArrayLike, names: Sequence[str] | None = None, greater_is_better: bool = True, alpha: float = 0.05
) -> FriedmanResult:
    """Friedman test with the Iman-Davenport F statistic (Teng et al. 2025, Table 5).

    Parameters
    ----------
    table : array-like of shape (n_datasets, n_algorithms)
        The measure's values: one row per dataset, one column per algorithm.
    names : sequence of str, optional
        Names of the algorithms (the table's columns); default their column numbers.
    greater_is_better : bool, default=True
        Whether a larger value of the measure is better (accuracy, AUC) or a smaller one
        (Hamming loss, ranking loss).
    alpha : float, default=0.05
        Significance level of the test.

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
    Learning", Mathematics 2025, Table 5.

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


def nemenyi_cd(n_algorithms: int, n_datasets: int, alpha: float = 0.05) -> float:
    """Nemenyi critical difference CD = q_alpha sqrt(k(k+1) / (6N)).

    Parameters
    ----------
    n_algorithms : int
        k >= 2. For k <= 10 q_alpha is Demsar's Table 5(a) (:data:`Q_ALPHA`,
        alpha 0.05 or 0.10); otherwise, or for another alpha, the studentized
        range quantile divided by sqrt(2) (``scipy.stats.studentized_range``).
    n_datasets : int
        Number of datasets the ranks average over.
    alpha : float, default=0.05
        Significance level of the test.

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
