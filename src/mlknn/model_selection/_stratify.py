"""Iterative stratification (Sechidis, Tsoumakas and Vlahavas, ECML PKDD 2011) on a CSR label matrix.

Why this module exists: the package ``iterative-stratification`` (``iterstrat``),
which the splitters use for dense label matrices, converts Y to a dense boolean
(n, q) array and recounts the remaining examples of every label over that array
at each step (O(n q) per chosen label). A sparse Y with 10^4-10^6 labels cannot
go through it. This module runs the same algorithm on the CSR (and CSC) index
arrays and reproduces ``iterstrat``'s folds exactly, random tie draws included
(same ``RandomState`` calls in the same order), so a dense and a sparse Y of the
same labels give the same folds (tested against ``iterstrat``).

Algorithm 1 of Sechidis et al. (as ``iterstrat.ml_stratifiers.IterativeStratification``):

1. the desired number of examples of each fold is ``r_f n`` and of each
   (fold, label) pair ``r_f c_l`` (``c_l``: positives of label l);
2. repeat: take the label with the fewest (but at least one) examples not yet
   assigned, ties drawn at random; give each of its unassigned examples, in
   row order, to the fold that most wants that label (ties: the fold that
   wants the most examples, then at random), and lower that fold's wishes for
   every label of the example;
3. examples without any unassigned label left go, in row order, to the fold
   that wants the most examples (ties at random).

Cost: O(nnz(Y)) to build the column index, O(n_splits) per example, and
for the label with the fewest examples an incrementally kept tie set
(:class:`_FewestLabels`: O(ties + labels touched) per choice, a rescan of the
labels still in play only when the minimum changes); memory
O(nnz(Y) + n + n_splits q), never an (n, q) array. The assignment is
sequential by definition (each choice changes the next one's wishes), so the
examples are visited by a Python loop, as in ``iterstrat``.
"""

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray
from sklearn.utils import check_random_state

from ..utils._typing import IntArray, MatrixLike, SparseMatrix


def _draw(rng: np.random.RandomState, n: int) -> int:
    """``rng.choice(n)``, as iterstrat draws a tie: for a ``RandomState`` that is
    ``randint(0, n)`` (the legacy stream is frozen, NEP 19), called directly
    because it is 3x cheaper and there is one draw per tied choice."""
    return rng.randint(0, n)


def _pick(candidates: NDArray[np.intp], rng: np.random.RandomState) -> np.intp:
    """``candidates[0]`` if alone, else one drawn as iterstrat draws."""
    # numpy's stubs type an element as Any: the annotation restores np.intp.
    picked: np.intp = candidates[_draw(rng, candidates.shape[0])] if candidates.shape[0] > 1 else candidates[0]
    return picked


def _most_wanted(wanted: Sequence[float], folds: Sequence[int], rng: np.random.RandomState) -> int:
    """Among ``folds``, the one that wants the most examples; ties drawn as iterstrat draws them."""
    top = max(wanted[f] for f in folds)
    most = [f for f in folds if wanted[f] == top]
    return most[_draw(rng, len(most))] if len(most) > 1 else most[0]


def _row_labels(
    Y: SparseMatrix, rows: NDArray[np.intp], fold_of_row: Sequence[int]
) -> tuple[IntArray, NDArray[np.intp]]:
    """The labels of ``rows`` of a CSR Y, concatenated, and the fold of each entry."""
    starts = Y.indptr[rows]
    lengths = Y.indptr[rows + 1] - starts
    offsets = np.arange(lengths.sum()) + np.repeat(starts - np.cumsum(lengths) + lengths, lengths)
    return Y.indices[offsets], np.repeat(np.asarray(fold_of_row, dtype=np.intp), lengths)


class _FewestLabels:
    """The labels with the fewest (but at least one) unassigned examples, ascending.

    ``ties`` equals ``np.flatnonzero(remaining == remaining[remaining > 0].min())``
    before every choice of step 2 (empty when no label has examples left), kept
    up to date from the labels whose counts went down instead of rescanning all
    q labels: a choice leaves the minimum unchanged unless a count falls below
    it (then, or when no tie is left, one rescan of the labels still in play).
    Most labels of a power-law label space have one or two examples, so the tie
    set is long and a rescan per choice (q per choice) would dominate.
    """

    def __init__(self, remaining: NDArray[np.int64]) -> None:
        self.remaining = remaining  # decremented by the caller
        self.live = np.flatnonzero(remaining > 0)
        self.fewest: np.int64 | int
        self.ties: NDArray[np.intp]
        self._rescan()

    def _rescan(self) -> None:
        self.live = self.live[self.remaining[self.live] > 0]
        left = self.remaining[self.live]
        self.fewest = left.min() if left.size else 0
        self.ties = self.live[left == self.fewest]

    def update(self, labels: IntArray, decrements: NDArray[np.intp]) -> None:
        """After ``remaining[labels]`` went down by ``decrements`` (``labels`` unique, ascending)."""
        new = self.remaining[labels]
        old = new + decrements
        m = self.fewest
        if np.any((new >= 1) & (new < m)):
            self._rescan()  # a new, lower minimum
            return
        leaving = labels[(old == m) & (new != m)]  # down to 0
        arriving = labels[(old != m) & (new == m)]  # down to the minimum
        if leaving.size:
            self.ties = np.delete(self.ties, np.searchsorted(self.ties, leaving))
        if arriving.size:
            self.ties = np.insert(self.ties, np.searchsorted(self.ties, arriving), arriving)
        if not self.ties.size:
            self._rescan()  # the minimum went up


def iterative_stratification(
    Y: MatrixLike, ratios: ArrayLike, random_state: np.random.RandomState
) -> NDArray[np.int_]:
    """Fold of every row of a CSR label matrix (Algorithm 1 of Sechidis et al. 2011).

    Parameters
    ----------
    Y : sparse matrix of shape (n_samples, n_labels)
        0/1 labels; explicit zeros are ignored.
    ratios : array-like of shape (n_folds,)
        Desired fraction of the rows in each fold (summing to 1).
    random_state : RandomState
        Consumed exactly as ``iterstrat.ml_stratifiers.IterativeStratification``
        consumes it.

    Returns
    -------
    ndarray of int of shape (n_samples,)
        The fold index of each row.
    """
    Y = sp.csr_array(Y)
    Y.eliminate_zeros()
    Y.sum_duplicates()
    n = Y.shape[0]
    r = np.asarray(ratios, dtype=float)
    rows_of = sp.csc_array(Y)  # column l's rows: rows_of.indices[indptr[l]:indptr[l + 1]], ascending
    rows_of.sort_indices()
    counts = np.diff(rows_of.indptr).astype(np.int64)
    remaining = counts.copy()  # unassigned examples of each label
    wanted = (r * n).tolist()  # c_folds (Python floats: the same doubles, cheaper to read one by one)
    wanted_labels = np.outer(r, counts)  # c_folds_labels: (n_folds, q)
    folds = np.zeros(n, dtype=int)
    unassigned = np.ones(n, dtype=bool)
    n_left = n
    fewest = _FewestLabels(remaining)
    while n_left:
        if fewest.ties.size == 0:
            for i in np.flatnonzero(unassigned):  # step 3
                f = _most_wanted(wanted, range(len(wanted)), random_state)
                folds[i] = f
                wanted[f] -= 1
            break
        label = _pick(fewest.ties, rng=random_state)
        rows = rows_of.indices[rows_of.indptr[label] : rows_of.indptr[label + 1]]
        assigned = rows[unassigned[rows]]
        # Step 2, in row order. Within one choice only this label's wishes and the
        # folds' sizes are read, so they are updated one example at a time; the
        # other labels' wishes and counts once, after the choice (same values).
        want = wanted_labels[:, label].tolist()
        chosen = []
        for _ in range(assigned.size):
            top = max(want)
            best = [j for j, w in enumerate(want) if w == top]
            f = _most_wanted(wanted, best, random_state) if len(best) > 1 else best[0]
            chosen.append(f)
            want[f] -= 1
            wanted[f] -= 1
        folds[assigned] = chosen
        unassigned[assigned] = False
        n_left -= assigned.size
        touched, fold_of = _row_labels(Y, assigned, chosen)
        np.subtract.at(wanted_labels, (fold_of, touched), 1)
        labels, decrements = np.unique(touched, return_counts=True)
        remaining[labels] -= decrements
        fewest.update(labels, decrements)
    return folds


def stratified_kfold_test_folds(
    Y: MatrixLike, n_splits: int, random_state: int | np.random.RandomState | None
) -> NDArray[np.int_]:
    """Test fold of every row, as ``MultilabelStratifiedKFold(shuffle=True)._make_test_folds``."""
    rng = check_random_state(random_state)
    n = Y.shape[0]
    order = np.arange(n)
    rng.shuffle(order)
    folds = iterative_stratification(sp.csr_array(Y)[order], np.full(n_splits, 1.0 / n_splits), rng)
    return folds[np.argsort(order)]


def stratified_holdout_split(
    Y: MatrixLike, n_test: int, random_state: int | np.random.RandomState | None
) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """(train, test) indices as the first split of ``MultilabelStratifiedShuffleSplit``."""
    rng = check_random_state(random_state)
    n = Y.shape[0]
    order = np.arange(n)
    rng.shuffle(order)
    r = np.array([n - n_test, n_test]) / n
    folds = iterative_stratification(sp.csr_array(Y)[order], r, rng)
    is_test = folds[np.argsort(order)] == 1
    return np.flatnonzero(~is_test), np.flatnonzero(is_test)
