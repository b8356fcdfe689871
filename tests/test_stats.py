"""mlknn.stats against scipy and hand-worked values (Demsar 2006, seed 001)."""

import itertools
import json
from importlib import resources

import numpy as np
import pytest
from scipy import stats

from mlknn.stats import (
    Q_ALPHA,
    average_ranks,
    friedman_from_ranks,
    friedman_test,
    nemenyi_cd,
    paired_ttest,
    pairwise_wilcoxon,
    sign_test,
    ttest_markers,
    wilcoxon_signed_rank,
    win_tie_loss,
)


def test_paired_ttest_matches_scipy():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=10), rng.normal(size=10) + 0.8
    r = paired_ttest(a, b)
    ref = stats.ttest_rel(a, b)
    assert r.statistic == pytest.approx(ref.statistic) and r.pvalue == pytest.approx(ref.pvalue)
    assert r.significant == (ref.pvalue < 0.05)
    assert r.mean_difference == pytest.approx(np.mean(a - b))
    same = paired_ttest([1, 2, 3], [1, 2, 3])  # zero variance, zero difference
    assert same.pvalue == 1.0 and not same.significant
    shifted = paired_ttest([1, 2, 3], [0, 1, 2])  # zero variance, constant difference
    assert shifted.pvalue == 0.0 and shifted.significant
    with pytest.raises(ValueError, match="same length"):
        paired_ttest([1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match="'alpha'.*1.5"):
        paired_ttest([1, 2], [2, 3], alpha=1.5)


def test_ttest_markers_seed000_convention():
    # A is best; B is clearly worse (bullet), C is indistinguishable from A (circle).
    A = np.array([0.80, 0.82, 0.79, 0.81, 0.80])
    B = A - np.array([0.05, 0.06, 0.05, 0.07, 0.06])
    C = A + np.array([-0.01, 0.005, -0.002, 0.004, -0.006])
    m = ttest_markers({"A": A, "B": B, "C": C}, greater_is_better=True)
    assert m.best == "A"
    assert m.markers == {"A": "best", "B": "significant", "C": "not_significant"}
    assert (m.symbol("A"), m.symbol("B"), m.symbol("C")) == ("", "•", "◦")
    lower = ttest_markers({"A": A, "B": B}, greater_is_better=False)  # a loss: lower is better
    assert lower.best == "B"


def _brute_force_wilcoxon(d, alternative):
    """Enumerate every sign pattern (the exact permutation distribution)."""
    d = d[d != 0]
    r = stats.rankdata(np.abs(d))
    t = r[d > 0].sum()
    sums = np.array([sum(ri for ri, s in zip(r, signs) if s) for signs in itertools.product([0, 1], repeat=len(d))])
    ge, le = np.mean(sums >= t - 1e-9), np.mean(sums <= t + 1e-9)
    return {"greater": ge, "less": le, "two-sided": min(1.0, 2 * min(ge, le))}[alternative]


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_wilcoxon_exact_matches_scipy_without_ties(alternative):
    rng = np.random.default_rng(1)
    for n in (4, 10, 28):
        a, b = rng.normal(size=n), rng.normal(size=n) + 0.2
        ours = wilcoxon_signed_rank(a, b, alternative)
        assert ours == pytest.approx(stats.wilcoxon(a, b, alternative=alternative, method="exact").pvalue)


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_wilcoxon_with_ties_and_zeros_is_the_exact_permutation_pvalue(alternative):
    a = np.array([0.80, 0.81, 0.82, 0.80, 0.85, 0.90, 0.70, 0.75, 0.78, 0.80])
    b = np.array([0.79, 0.80, 0.80, 0.80, 0.83, 0.88, 0.71, 0.73, 0.76, 0.79])  # ties in |d|, one zero
    assert wilcoxon_signed_rank(a, b, alternative) == pytest.approx(_brute_force_wilcoxon(a - b, alternative))


def test_wilcoxon_normal_approximation_beyond_50():
    rng = np.random.default_rng(2)
    a, b = rng.normal(size=80), rng.normal(size=80)
    assert wilcoxon_signed_rank(a, b) == pytest.approx(stats.wilcoxon(a, b, method="approx").pvalue)
    assert wilcoxon_signed_rank(a, a) == 1.0


def test_pairwise_wilcoxon_reproduces_seed001_constants():
    # 28 datasets on which algorithm 0 always wins: one-sided exact p = 2**-28 = 3.73e-9,
    # the smallest entry of seed 001's Tables 6-11.
    rng = np.random.default_rng(0)
    base = rng.random((28, 1))
    T = np.hstack([base + 0.1 + rng.random((28, 1)) * 0.01] + [base - 0.01 * i for i in range(9)])
    res = pairwise_wilcoxon(T, [f"a{i}" for i in range(10)])
    assert res.pvalues[0, 1] == pytest.approx(3.725290298461914e-09)
    assert res.pvalues[1, 0] == pytest.approx(1.0)
    assert np.isnan(np.diag(res.pvalues)).all()
    # "The corrected significance level is 5.56e-4" (10 algorithms: 0.05 / 90)
    assert res.corrected_alpha == pytest.approx(5.56e-4, abs=5e-7) and res.n_comparisons == 90
    assert res.significant[0, 1] and not res.significant[1, 0]
    # Table 13: 9 algorithms -> 6.94e-4
    assert pairwise_wilcoxon(T[:, :9]).corrected_alpha == pytest.approx(6.94e-4, abs=5e-7)
    # lower-is-better metrics flip the direction
    low = pairwise_wilcoxon(T[:, :2], greater_is_better=False)
    assert low.pvalues[1, 0] == pytest.approx(3.725290298461914e-09)


def test_average_ranks_average_ties_and_direction():
    T = np.array([[0.9, 0.8, 0.8], [0.5, 0.7, 0.6], [0.3, np.nan, 0.3]])
    ranks, avg = average_ranks(T)
    np.testing.assert_allclose(ranks, [[1, 2.5, 2.5], [3, 1, 2], [1.5, 3, 1.5]])
    np.testing.assert_allclose(avg, [5.5 / 3, 6.5 / 3, 2.0])
    low, _ = average_ranks(T[:2], greater_is_better=False)
    np.testing.assert_allclose(low, [[3, 1.5, 1.5], [1, 3, 2]])


def test_friedman_demsar_worked_example():
    # Demsar (2006), section 3.2.2: C4.5 variants on 14 datasets.
    r = friedman_from_ranks([3.143, 2.000, 2.893, 1.964], 14)
    assert r.chi2 == pytest.approx(9.28, abs=0.01)
    assert r.F_F == pytest.approx(3.69, abs=0.01)
    assert (r.df1, r.df2) == (3, 39)
    assert r.critical_value == pytest.approx(2.85, abs=0.01)
    assert r.reject
    assert nemenyi_cd(4, 14) == pytest.approx(1.25, abs=0.005)


def test_friedman_matches_scipy_without_ties():
    rng = np.random.default_rng(3)
    T = rng.random((12, 5))
    r = friedman_test(T)
    ref = stats.friedmanchisquare(*T.T)
    assert r.chi2 == pytest.approx(ref.statistic)
    assert r.chi2_pvalue == pytest.approx(ref.pvalue)
    N, k = T.shape
    assert r.F_F == pytest.approx((N - 1) * r.chi2 / (N * (k - 1) - r.chi2))
    assert r.pvalue == pytest.approx(stats.f.sf(r.F_F, k - 1, (k - 1) * (N - 1)))


def test_seed001_table5_critical_value_and_statistic():
    # Table 5: 10 algorithms, 28 datasets, critical value 1.919 = F(9, 243) at 0.05.
    pub = json.loads(
        resources.files("mlknn.experiments").joinpath("published", "mlhiknn2025.json").read_text("utf-8")
    )
    t5 = pub["friedman_table5"]
    for metric, ranks in pub["average_ranks_table4"]["ranks"].items():
        r = friedman_from_ranks(list(ranks.values()), 28)
        assert r.critical_value == pytest.approx(t5["critical_value"], abs=5e-4)
        # Table 5's "F_F" column is the Friedman chi-square of Table 4's average
        # ranks (up to their 2-decimal rounding), not the Iman-Davenport F_F.
        assert r.chi2 == pytest.approx(t5["F_F"][metric], abs=0.5)
        assert r.F_F < r.chi2


def test_nemenyi_q_table_agrees_with_studentized_range():
    for alpha, qs in Q_ALPHA.items():
        for k, q in zip(range(2, 11), qs):
            ref = stats.studentized_range.ppf(1 - alpha, k, np.inf) / np.sqrt(2)
            assert q == pytest.approx(ref, abs=1.5e-3)
    # beyond the table: computed from the studentized range
    cd = nemenyi_cd(12, 20)
    q = stats.studentized_range.ppf(0.95, 12, np.inf) / np.sqrt(2)
    assert cd == pytest.approx(q * np.sqrt(12 * 13 / (6 * 20)))
    with pytest.raises(ValueError, match="n_algorithms >= 2"):
        nemenyi_cd(1, 10)


def test_sign_test_hand_worked():
    # 8 wins, 2 losses, 2 ties -> split ties: 9 of 12; two-sided binomial p
    a = np.array([1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0.5, 0.5])
    b = np.array([0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0.5, 0.5])
    r = sign_test(a, b)
    assert (r.wins, r.losses, r.ties, r.n) == (8, 2, 2, 12)
    assert r.pvalue == pytest.approx(stats.binomtest(9, 12, 0.5).pvalue)
    assert r.pvalue == pytest.approx(2 * sum(__import__("math").comb(12, i) for i in range(9, 13)) / 2**12)
    assert sign_test(b, a, greater_is_better=False).wins == 8


def test_win_tie_loss_counts():
    rng = np.random.default_rng(0)
    good = 0.9 + 0.001 * rng.random(10)
    bad = 0.5 + 0.001 * rng.random(10)
    same = good + 0.0001 * rng.normal(size=10)
    ds1 = np.vstack([good, bad, same])
    ds2 = np.vstack([bad, good, bad + 0.0001 * rng.normal(size=10)])
    w = win_tie_loss([ds1, ds2], ["A", "B", "C"])
    # ds1: A>B, C>B, A~C.  ds2: B>A, B>C, A~C.
    assert w.wins.tolist() == [1, 2, 1]
    assert w.losses.tolist() == [1, 2, 1]
    assert w.ties.tolist() == [2, 0, 2]
    assert (w.wins + w.ties + w.losses).tolist() == [4, 4, 4]  # 2 datasets x 2 opponents
    assert w.as_strings()["B"] == "2/0/2"
    low = win_tie_loss([ds1], ["A", "B", "C"], greater_is_better=False)
    assert low.wins.tolist() == [0, 2, 0]


# ------------------------------------------- t-tests for cross-validated scores
def test_cv_5x2_ttest_by_hand():
    from scipy import stats as sst

    from mlknn.stats import cv_5x2_ttest

    a = np.array([0.80, 0.82, 0.79, 0.81, 0.83, 0.80, 0.78, 0.82, 0.81, 0.80])
    b = np.array([0.78, 0.79, 0.78, 0.80, 0.80, 0.79, 0.77, 0.80, 0.80, 0.78])
    p = (a - b).reshape(5, 2)
    s2 = [(x - x.mean()) @ (x - x.mean()) for x in p]  # hand loop over the repetitions
    t = p[0, 0] / np.sqrt(sum(s2) / 5)
    res = cv_5x2_ttest(a, b)
    assert res.statistic == pytest.approx(t)
    assert res.pvalue == pytest.approx(2 * sst.t.sf(abs(t), 5))
    assert cv_5x2_ttest(b, a).statistic == pytest.approx(-t)
    with pytest.raises(ValueError, match="even count"):
        cv_5x2_ttest(a[:9], b[:9])


def test_corrected_resampled_ttest_by_hand_and_wider_than_the_plain_test():
    from scipy import stats as sst

    from mlknn.stats import corrected_resampled_ttest, paired_ttest

    rng = np.random.default_rng(0)
    a = 0.8 + 0.01 * rng.normal(size=10)
    b = a - 0.004 + 0.005 * rng.normal(size=10)
    d = a - b
    t = d.mean() / np.sqrt((1 / 10 + 1.0) * d.var(ddof=1))
    res = corrected_resampled_ttest(a, b, 1.0)
    assert res.statistic == pytest.approx(t)
    assert res.pvalue == pytest.approx(2 * sst.t.sf(abs(t), 9))
    # the correction only widens: never a smaller p-value than the plain fold-wise test
    assert res.pvalue >= paired_ttest(a, b).pvalue
    with pytest.raises(ValueError, match="'test_train_ratio' parameter"):
        corrected_resampled_ttest(a, b, 0)
