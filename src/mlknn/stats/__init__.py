"""Statistical comparison of classifiers (on :mod:`scipy.stats`).

What each seed uses, and the function here:

=====================================================  ==================================
Younes et al. (2011) Tables 4-9: two-tailed paired t-test at 5%    :func:`paired_ttest`,
against the best result, bullet / circle markers       :func:`ttest_markers`
Younes et al. (2011) Table 11: sign test over datasets             :func:`sign_test`
Teng et al. (2025) Table 3: average rank (ties averaged),        :func:`average_ranks`,
win/tie/loss from pairwise Wilcoxon tests per dataset  :func:`win_tie_loss`
Teng et al. (2025) Table 5: Friedman test                        :func:`friedman_test`
Teng et al. (2025) Tables 6-11, 13: pairwise one-sided Wilcoxon  :func:`pairwise_wilcoxon`
signed-rank over datasets, Bonferroni-corrected
Demsar (2006): Nemenyi critical difference             :func:`nemenyi_cd`
Dietterich (1998): 5 x 2 cv paired t-test              :func:`cv_5x2_ttest`
Nadeau and Bengio (2003): corrected resampled t-test   :func:`corrected_resampled_ttest`
=====================================================  ==================================

Conventions: a *table* is an array of shape (n_datasets, n_algorithms) of
mean scores; ``greater_is_better`` says the direction of the metric (see
:data:`mlknn.metrics.GREATER_IS_BETTER`); rank 1 is the best. Every test
returns a frozen dataclass.

Note on Teng et al. (2025) Table 5: its column ``F_F`` holds the Friedman chi-square
statistic (it is reproduced, to the rounding of the ranks, by
``FriedmanResult.chi2`` from the average ranks of Table 4), while its
"critical value" 1.919 is that of the F distribution with (9, 243) degrees of
freedom, i.e. the critical value of the Iman-Davenport statistic
``FriedmanResult.F_F``. :func:`friedman_test` reports both, each with its own
critical value.
"""

from ._common import Q_ALPHA
from ._cv_tests import corrected_resampled_ttest, cv_5x2_ttest, cv_ttest_vs_best
from ._ranks import FriedmanResult, average_ranks, friedman_from_ranks, friedman_test, nemenyi_cd
from ._sign import SignTestResult, WinTieLoss, sign_test, win_tie_loss
from ._ttest import TTestMarkers, TTestResult, paired_ttest, ttest_markers
from ._wilcoxon import PairwiseWilcoxonResult, pairwise_wilcoxon, wilcoxon_signed_rank

__all__ = [
    "Q_ALPHA",
    "FriedmanResult",
    "PairwiseWilcoxonResult",
    "SignTestResult",
    "TTestMarkers",
    "TTestResult",
    "WinTieLoss",
    "average_ranks",
    "corrected_resampled_ttest",
    "cv_5x2_ttest",
    "cv_ttest_vs_best",
    "friedman_from_ranks",
    "friedman_test",
    "nemenyi_cd",
    "paired_ttest",
    "pairwise_wilcoxon",
    "sign_test",
    "ttest_markers",
    "wilcoxon_signed_rank",
    "win_tie_loss",
]
