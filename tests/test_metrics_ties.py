"""The tie rules of the ranking measures: hand-worked examples and a loop reference."""

import numpy as np
import pytest
from reference_ties import mulan_order, ref_ranking

from mlknn.metrics import average_precision, coverage, evaluate, one_error, ranking_loss
from mlknn.metrics._ranking import _mulan_order

RULES = ("pessimistic", "average", "optimistic", "mulan")


def _four(Y, S, ties):
    return (
        one_error(Y, S, ties=ties),
        coverage(Y, S, ties=ties),
        ranking_loss(Y, S, ties=ties),
        average_precision(Y, S, ties=ties),
    )


# Scores [0.9, 0.5, 0.5, 0.1], relevant labels {0, 2}: label 2 ties with the
# irrelevant label 1.
#   pessimistic: ranks 1, 3, 3, 4 -> one-error 0, coverage 3 - 1 = 2, the pair
#     (2, 1) mis-ordered: rloss 1/4, AP (1/1 + 2/3) / 2 = 5/6;
#   optimistic: label 2 before label 1 (ranks 1, 3, 2, 4): coverage 1, rloss 0, AP 1;
#   average: label 2 at rank 2 or 3 -> coverage 1.5, rloss 1/8; AP label 0: 1,
#     label 2: (1 + (1 + 1)/2) / (1 + (2 + 1)/2) = 2 / 2.5 -> AP 0.9;
#   mulan: the higher index (2) ranks better: as optimistic.
HAND = {
    "pessimistic": (0.0, 2.0, 0.25, 5 / 6),
    "optimistic": (0.0, 1.0, 0.0, 1.0),
    "average": (0.0, 1.5, 0.125, 0.9),
    "mulan": (0.0, 1.0, 0.0, 1.0),
}


@pytest.mark.parametrize("ties", RULES)
def test_hand_worked_tie_in_the_middle(ties):
    Y = np.array([[1, 0, 1, 0]])
    S = np.array([[0.9, 0.5, 0.5, 0.1]])
    np.testing.assert_allclose(_four(Y, S, ties), HAND[ties], rtol=0, atol=1e-15)


def test_mulan_favours_the_higher_index_even_when_it_is_irrelevant():
    # Relevant {0, 1}; label 2 (irrelevant) ties with label 1 and MULAN ranks it
    # above: ranks 1, 3, 2, 4 -> coverage 2, rloss 1/4 (pair (1, 2)), AP (1 + 2/3) / 2.
    Y = np.array([[1, 1, 0, 0]])
    S = np.array([[0.9, 0.5, 0.5, 0.1]])
    np.testing.assert_allclose(_four(Y, S, "mulan"), (0.0, 2.0, 0.25, 5 / 6), rtol=0, atol=1e-15)
    np.testing.assert_allclose(_four(Y, S, "optimistic"), (0.0, 1.0, 0.0, 1.0), rtol=0, atol=1e-15)


def test_mulan_treats_scores_within_1e6_as_equal():
    # 0.5000005 > 0.5 exactly, so the exact rules put the irrelevant label 1
    # above the relevant label 2; MULAN ties them and ranks label 2 above.
    Y = np.array([[1, 0, 1, 0]])
    S = np.array([[0.9, 0.5000005, 0.5, 0.1]])
    for ties in ("pessimistic", "average", "optimistic"):
        np.testing.assert_allclose(_four(Y, S, ties), (0.0, 2.0, 0.25, 5 / 6), rtol=0, atol=1e-15)
    np.testing.assert_allclose(_four(Y, S, "mulan"), (0.0, 1.0, 0.0, 1.0), rtol=0, atol=1e-15)


def test_mulan_groups_are_anchored_at_their_smallest_value():
    # Ascending 0.1 (label 2), 0.1 + 6e-7 (label 1), 0.1 + 1.2e-6 (label 0): label 1
    # is within 1e-6 of the group's first value, label 0 is not (although it is
    # within 1e-6 of label 1). Group {1, 2} in ascending index, then {0}:
    # ascending 1, 2, 0 -> best first 0, 2, 1.
    s = [0.1 + 1.2e-6, 0.1 + 6e-7, 0.1]
    assert mulan_order(s) == [0, 2, 1]
    np.testing.assert_array_equal(_mulan_order(np.array([s])), [[0, 2, 1]])


@pytest.mark.parametrize(
    "y,want",
    [
        # Scores [0.5, 0.5, 0.1]: the top group is {0, 1}.
        ([0, 1, 0], {"pessimistic": 1.0, "optimistic": 0.0, "average": 0.5, "mulan": 0.0}),
        ([1, 0, 0], {"pessimistic": 1.0, "optimistic": 0.0, "average": 0.5, "mulan": 1.0}),
    ],
)
def test_hand_worked_one_error_with_a_tied_top(y, want):
    S = np.array([[0.5, 0.5, 0.1]])
    for ties, value in want.items():
        assert one_error(np.array([y]), S, ties=ties) == value, ties


def test_all_tied_scores():
    # Every label ties; 2 of 4 relevant. pessimistic: every rank 4 -> coverage 3,
    # rloss 1, AP 2/4; optimistic: ranks 1, 2 -> coverage 1, rloss 0, AP 1;
    # average: coverage E[max of 2 of 4 positions] - 1 = 2 * 5/3 - 1 = 7/3, rloss 1/2,
    # AP (0 + 3/2) / (0 + 5/2) = 3/5, one-error 2/4.
    Y = np.array([[0, 1, 1, 0]])
    S = np.zeros((1, 4))
    np.testing.assert_allclose(_four(Y, S, "pessimistic"), (1.0, 3.0, 1.0, 0.5), rtol=0, atol=1e-15)
    np.testing.assert_allclose(_four(Y, S, "optimistic"), (0.0, 1.0, 0.0, 1.0), rtol=0, atol=1e-15)
    np.testing.assert_allclose(_four(Y, S, "average"), (0.5, 7 / 3, 0.5, 0.6), rtol=0, atol=1e-15)
    # MULAN: higher index first: ranks label 3: 1, 2: 2, 1: 3, 0: 4 -> one-error 1,
    # coverage 3 - 1 = 2, rloss: pairs (1, 3), (2, 3) bad of 4 -> 1/2, AP (1/2 + 2/3) / 2.
    np.testing.assert_allclose(_four(Y, S, "mulan"), (1.0, 2.0, 0.5, (0.5 + 2 / 3) / 2), rtol=0, atol=1e-15)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("ties", ("average", "optimistic", "mulan"))
def test_matches_loop_reference(seed, ties):
    rng = np.random.default_rng(seed)
    n, q = 25, 5
    Y = (rng.random((n, q)) < 0.4).astype(int)
    # Few distinct values so that ties are common; some values 1e-7 apart for MULAN's window.
    S = rng.integers(0, 3, size=(n, q)) / 2.0 + (rng.random((n, q)) < 0.2) * 1e-7
    got = _four(Y, S, ties)
    np.testing.assert_allclose(got, ref_ranking(Y, S, ties), rtol=0, atol=1e-12)


def test_rules_agree_without_ties():
    rng = np.random.default_rng(3)
    Y = (rng.random((40, 6)) < 0.4).astype(int)
    S = rng.random((40, 6))  # distinct, and more than 1e-6 apart with overwhelming odds
    gaps = np.diff(np.sort(S, axis=1), axis=1)
    assert gaps.min() > 1e-6
    ref = _four(Y, S, "pessimistic")
    for ties in RULES[1:]:
        np.testing.assert_allclose(_four(Y, S, ties), ref, rtol=0, atol=1e-15)


def test_evaluate_takes_the_tie_rule():
    Y = np.array([[1, 0, 1, 0], [0, 1, 0, 1]])
    S = np.array([[0.9, 0.5, 0.5, 0.1], [0.2, 0.2, 0.2, 0.9]])
    for ties in RULES:
        res = evaluate(Y, (S > 0.4).astype(int), S, ties=ties)
        for key, fn in (("one_error", one_error), ("coverage", coverage), ("ranking_loss", ranking_loss),
                        ("average_precision", average_precision)):
            assert res[key] == fn(Y, S, ties=ties), (ties, key)
    assert evaluate(Y, Y, S)["coverage"] == evaluate(Y, Y, S, ties="pessimistic")["coverage"]


@pytest.mark.parametrize("bad", ["worst", None, 1])
def test_bad_tie_rule(bad):
    Y = np.array([[1, 0]])
    with pytest.raises(ValueError, match="'ties' parameter must be one of"):
        coverage(Y, Y, ties=bad)
    with pytest.raises(ValueError, match="'ties' parameter must be one of"):
        evaluate(Y, Y, Y, ties=bad)
