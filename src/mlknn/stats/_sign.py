"""The sign test and win/tie/loss counts (Younes et al. 2011, Table 11)."""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from ._common import _check_alpha, _paired
from ._ttest import paired_ttest
from ._wilcoxon import wilcoxon_signed_rank


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
    n: int
    pvalue: float
    alpha: float
    significant: bool


def sign_test(a: ArrayLike, b: ArrayLike, greater_is_better: bool = True, alpha: float = 0.05) -> SignTestResult:
    """Two-sided sign test over datasets (Younes et al. 2011, Table 11; Demsar 2006, 3.1.3).

    Ties are split evenly between the two algorithms (one is dropped when their
    number is odd), as Demsar recommends.

    Parameters
    ----------
    a, b : array-like of shape (n_datasets,)
        Scores of the two algorithms.
    greater_is_better : bool, default=True
        Whether a larger value of the measure is better (accuracy, AUC) or a smaller one
        (Hamming loss, ranking loss).
    alpha : float, default=0.05
        Significance level of the test.

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
    Adv. Signal Process., 2011, Table 11.

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
    """Teng et al. (2025) Table 3, last row: for each algorithm, over datasets and
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

    names: tuple[str, ...]
    wins: NDArray[np.intp]
    ties: NDArray[np.intp]
    losses: NDArray[np.intp]
    outcome: NDArray[np.int8]  # (n_datasets, m, m): +1 win of row, -1 loss, 0 tie

    def as_strings(self) -> dict[str, str]:
        """The counts as ``"wins/ties/losses"`` per algorithm (Teng et al. 2025, Table 3).

        Returns
        -------
        dict of str to str
            One string per algorithm.
        """
        return {n: f"{w}/{t}/{l}" for n, w, t, l in zip(self.names, self.wins, self.ties, self.losses)}


def win_tie_loss(
    fold_scores: Iterable[ArrayLike],
    names: Sequence[str] | None = None,
    greater_is_better: bool = True,
    alpha: float = 0.05,
    test: Literal["wilcoxon", "ttest"] = "wilcoxon",
) -> WinTieLoss:
    """Pairwise tests on every dataset over its folds.

    Parameters
    ----------
    fold_scores : sequence of array-like of shape (n_algorithms, n_folds)
        One array per dataset (the number of folds may differ between datasets).
    names : sequence of str, optional
        Names of the algorithms (the table's columns); default their column numbers.
    greater_is_better : bool, default=True
        Whether a larger value of the measure is better (accuracy, AUC) or a smaller one
        (Hamming loss, ranking loss).
    alpha : float, default=0.05
        Significance level of the test.
    test : {"wilcoxon", "ttest"}, default="wilcoxon"
        Two-sided Wilcoxon signed-rank (Teng et al. 2025) or paired t-test; a significant
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
    Learning", Mathematics 2025, Table 3.

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
