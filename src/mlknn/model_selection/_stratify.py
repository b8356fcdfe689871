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

Cost: O(nnz(Y)) to build the column index, O(labels still in play) per
chosen label for the minimum search (at most q choices; the rare labels, chosen
first, leave the search once assigned) and O(n_splits) per example; memory
O(nnz(Y) + n + n_splits q), never an (n, q) array. The assignment is
sequential by definition (each choice changes the next one's wishes), so the
examples are visited by a Python loop, as in ``iterstrat``.
"""

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state


def _pick(candidates, rng):
    """``candidates[0]`` if alone, else one drawn as iterstrat draws (``rng.choice(len)``)."""
    if candidates.shape[0] > 1:
        return candidates[rng.choice(candidates.shape[0])]
    return candidates[0]


def iterative_stratification(Y, ratios, random_state):
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
    wanted = r * n  # c_folds
    wanted_labels = np.outer(r, counts)  # c_folds_labels: (n_folds, q)
    folds = np.zeros(n, dtype=int)
    unassigned = np.ones(n, dtype=bool)
    live = np.flatnonzero(remaining > 0)  # ascending; labels drop out as their examples are assigned
    while unassigned.any():
        left = remaining[live]
        positive = left > 0
        if not positive.any():
            for i in np.flatnonzero(unassigned):  # step 3
                f = _pick(np.flatnonzero(wanted == wanted.max()), rng=random_state)
                folds[i] = f
                wanted[f] -= 1
            break
        if 2 * np.count_nonzero(positive) < live.size:  # compact: the search stays O(labels still in play)
            live, left = live[positive], left[positive]
        fewest = left[left > 0].min()
        label = _pick(live[np.flatnonzero(left == fewest)], rng=random_state)
        rows = rows_of.indices[rows_of.indptr[label] : rows_of.indptr[label + 1]]
        for i in rows[unassigned[rows]]:  # step 2, in row order
            want = wanted_labels[:, label]
            best = np.flatnonzero(want == want.max())
            if best.shape[0] > 1:
                most = np.flatnonzero(wanted[best] == wanted[best].max())
                f = best[most[random_state.choice(most.shape[0])]] if most.shape[0] > 1 else best[most[0]]
            else:
                f = best[0]
            folds[i] = f
            unassigned[i] = False
            own = Y.indices[Y.indptr[i] : Y.indptr[i + 1]]
            wanted_labels[f, own] -= 1
            wanted[f] -= 1
            remaining[own] -= 1
    return folds


def stratified_kfold_test_folds(Y, n_splits, random_state):
    """Test fold of every row, as ``MultilabelStratifiedKFold(shuffle=True)._make_test_folds``."""
    rng = check_random_state(random_state)
    n = Y.shape[0]
    order = np.arange(n)
    rng.shuffle(order)
    folds = iterative_stratification(sp.csr_array(Y)[order], np.full(n_splits, 1.0 / n_splits), rng)
    return folds[np.argsort(order)]


def stratified_holdout_split(Y, n_test, random_state):
    """(train, test) indices as the first split of ``MultilabelStratifiedShuffleSplit``."""
    rng = check_random_state(random_state)
    n = Y.shape[0]
    order = np.arange(n)
    rng.shuffle(order)
    r = np.array([n - n_test, n_test]) / n
    folds = iterative_stratification(sp.csr_array(Y)[order], r, rng)
    is_test = folds[np.argsort(order)] == 1
    return np.flatnonzero(~is_test), np.flatnonzero(is_test)
