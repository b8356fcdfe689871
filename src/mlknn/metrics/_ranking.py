"""Example-based ranking metrics: one-error, coverage, ranking loss, average precision.

Zhang & Zhou (IEEE TKDE 2014), the review's section on example-based metrics, and Younes et al. (2011), eqs. 25-28.
``rank_f(x_i, y)`` is the descending rank of label ``y`` by the scores
``f(x_i, .)``.

Conventions (see the table in :mod:`mlknn.metrics`):

* **Ties** (``ties="pessimistic"``, the default) are resolved against the ranker. A label's rank is the number of
  labels scoring at least as high as it, ``rank(y) = |{y' : f(y') >= f(y)}|``
  (the largest rank the tied group could take; scikit-learn's
  ``coverage_error`` and ``label_ranking_average_precision_score`` do the
  same). The ranking loss counts a relevant/irrelevant pair with equal scores
  as mis-ordered (the papers' ``<=``; also scikit-learn's). One-error counts an
  error when any of the labels sharing the top score is irrelevant. The other
  rules (``"average"``, ``"optimistic"``, ``"mulan"``) are defined in
  :func:`_instance_terms` and ``docs/metrics.md``.
* **Degenerate instances**, those with no relevant label or with every label
  relevant, are left out of all four averages: on them ranking loss and
  average precision are 0/0 and the other two do not depend on the scores.
  This is the rule of Zhang's evaluation code (the ML-kNN / LIFT MATLAB
  toolbox) for one-error, ranking loss and average precision, extended to
  coverage so that all four are averaged over the same instances. If no
  instance is left the metric is NaN and an
  :class:`~sklearn.exceptions.UndefinedMetricWarning` is issued.

All four are computed in a vectorised way from one row-wise sort of the
scores (blocks of rows, to bound memory). scikit-learn's
``label_ranking_loss`` and ``label_ranking_average_precision_score`` loop over
instances in Python and score degenerate instances 0 and 1 instead of leaving
them out; with ``sample_weight`` set to the mask of non-degenerate instances
they give the same numbers as :func:`ranking_loss` and
:func:`average_precision` (checked in the tests).
"""

from typing import Any, Literal, TypeAlias

import numpy as np
from numpy.typing import NDArray

from ..utils._docstrings import fill_doc
from ..utils._typing import MatrixLike
from ._checks import _check_true_and_scores, _undefined

__all__ = ["one_error", "coverage", "ranking_loss", "average_precision", "TIE_RULES"]

# Rows are processed in blocks of about this many matrix entries, so that the
# temporary (block, n_labels) integer arrays stay small on large inputs.
_BLOCK_ENTRIES = 1 << 20


def _row_blocks(n_rows: int, n_cols: int) -> list[slice]:
    """Slices covering ``range(n_rows)`` in blocks of about ``_BLOCK_ENTRIES`` entries."""
    step = max(1, _BLOCK_ENTRIES // max(n_cols, 1))
    return [slice(start, min(start + step, n_rows)) for start in range(0, n_rows, step)]


def _sort_rows(
    A: NDArray[np.float64], Y: NDArray[np.bool_]
) -> tuple[NDArray[np.bool_], NDArray[np.intp], NDArray[np.intp]]:
    """Sort each row of ``A`` ascending and locate its groups of tied values.

    Parameters
    ----------
    A : ndarray of shape (m, k), float
    Y : ndarray of shape (m, k), bool
        Carried along with ``A``.

    Returns
    -------
    Ys : ndarray of shape (m, k), bool
        ``Y`` permuted like the sorted rows.
    first, last : ndarray of shape (m, k), int
        For each sorted position, the first and last position of its group of
        equal values (so its ascending rank is ``last + 1`` with ties at their
        largest rank, ``(first + last) / 2 + 1`` with ties averaged).
    """
    m, k = A.shape
    order = np.argsort(A, axis=1)  # stability not needed: ties are found by value
    As = np.take_along_axis(A, order, axis=1)
    Ys = np.take_along_axis(Y, order, axis=1)
    pos = np.broadcast_to(np.arange(k), (m, k))
    new_group = As[:, 1:] != As[:, :-1]  # position p+1 starts a new group
    starts = np.ones((m, k), dtype=bool)
    starts[:, 1:] = new_group
    ends = np.ones((m, k), dtype=bool)
    ends[:, :-1] = new_group
    first = np.maximum.accumulate(np.where(starts, pos, 0), axis=1)
    last = np.minimum.accumulate(np.where(ends, pos, k)[:, ::-1], axis=1)[:, ::-1]
    return Ys, first, last


#: A tie rule of the ranking measures (the ``ties`` parameter).
TieRule: TypeAlias = Literal["pessimistic", "average", "optimistic", "mulan"]
#: The tie rules of the ranking measures (the ``ties`` parameter).
TIE_RULES: tuple[TieRule, ...] = ("pessimistic", "average", "optimistic", "mulan")

#: Weka 3.7.12's ``Utils.SMALL``: ``Utils.eq(a, b)`` is ``a - b < SMALL and b - a < SMALL``.
_WEKA_SMALL = 1e-6


def _check_ties(ties: TieRule) -> TieRule:
    if not isinstance(ties, str) or ties not in TIE_RULES:
        raise ValueError(f"The 'ties' parameter must be one of {TIE_RULES}; got {ties!r}.")
    return ties


def _mulan_order(S: NDArray[np.float64]) -> NDArray[np.intp]:
    """Each row's labels from best to worst rank, as MULAN ranks confidences.

    MULAN (``MultiLabelOutput.ranksFromValues``) calls Weka 3.7.12's
    ``Utils.stableSort``: sort ascending; walk the sorted values, opening a new
    group at every value that is not within ``1e-6`` of the group's first (its
    smallest) value; order each group by ascending label index; the label at
    ascending position i gets rank ``q - i``. So labels whose confidences are
    within 1e-6 of the group's smallest are tied, and among them the higher
    label index gets the better rank.

    Returns
    -------
    order : ndarray of shape (m, q), int
        ``order[:, 0]`` is the label of rank 1.
    """
    m, q = S.shape
    asc = np.argsort(S, axis=1, kind="stable")
    vals = np.take_along_axis(S, asc, axis=1)
    group = np.zeros((m, q), dtype=np.int64)
    anchor = vals[:, 0].copy()
    gid = np.zeros(m, dtype=np.int64)
    # The group anchor depends on where the previous group opened: a scan over
    # the q sorted positions, vectorised over the rows.
    for p in range(1, q):
        new = ~(vals[:, p] - anchor < _WEKA_SMALL)
        gid += new
        anchor = np.where(new, vals[:, p], anchor)
        group[:, p] = gid
    # Ascending (group, label index) is the ascending order; best rank first is its reverse.
    key = group * q + asc
    ascending = np.take_along_axis(asc, np.argsort(key, axis=1, kind="stable"), axis=1)
    return ascending[:, ::-1]


def _instance_terms(
    Y: NDArray[np.bool_], S: NDArray[np.float64], ties: TieRule = "pessimistic"
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Per-instance one-error, coverage, ranking loss and average precision.

    ``Y`` must contain only non-degenerate instances. Labels are sorted by
    decreasing score (ascending ``-S``); in that order the group of tied labels
    holding position ``p`` spans positions ``first[p] .. last[p]``, holds
    ``g = last - first + 1`` labels of which ``r`` relevant, with ``before``
    relevant labels at earlier positions. Per tie rule (1-based ranks):

    * pessimistic: every tied label takes the group's largest rank ``last + 1``;
      ``last + 1 - cum_rel[last]`` irrelevant labels score at least as high as a
      relevant one;
    * optimistic: within a group the relevant labels come first: the j-th
      relevant label of a group has rank ``first + j`` and ``before + j``
      relevant labels at or above it; tied irrelevant labels are not above it;
    * average: the expectation over uniformly random orders of each group:
      one-error is the group's irrelevant fraction, coverage uses the expected
      largest position of r random positions among g, ``r (g + 1) / (r + 1)``,
      a tied relevant/irrelevant pair is half mis-ordered, and each relevant
      label's precision is ``(before + (r + 1) / 2) / (first + (g + 1) / 2)``
      (expected count over expected rank);
    * mulan: the strict order of :func:`_mulan_order`, no ties left.
    """
    q = Y.shape[1]
    if ties == "mulan":
        Ys = np.take_along_axis(Y, _mulan_order(S), axis=1)
        first = last = np.broadcast_to(np.arange(q), Ys.shape)
    else:
        Ys, first, last = _sort_rows(-S, Y)
    rank = last + 1
    cum_rel = np.cumsum(Ys, axis=1)
    rank_rel = np.take_along_axis(cum_rel, last, axis=1)
    n_rel = cum_rel[:, -1].astype(np.float64)
    if ties in ("pessimistic", "mulan"):
        # The top-scored group is positions 0..last[0]; it holds an irrelevant
        # label iff it holds fewer relevant labels than its size.
        top_size = last[:, 0] + 1
        one_err = (rank_rel[:, 0] < top_size).astype(np.float64)
        cover = np.where(Ys, rank, 0).max(axis=1) - 1.0
        # For a relevant label, rank - rank_rel irrelevant labels score >= it:
        # the mis-ordered pairs of the ranking loss (f(rel) <= f(irrel)).
        bad_pairs = np.where(Ys, rank - rank_rel, 0).sum(axis=1)
        rloss = bad_pairs / (n_rel * (q - n_rel))
        avgprec = np.where(Ys, rank_rel / rank, 0.0).sum(axis=1) / n_rel
        return one_err, cover, rloss, avgprec
    before: NDArray[np.intp] = np.take_along_axis(cum_rel - Ys, first, axis=1)
    r = (rank_rel - before).astype(np.float64)  # relevant labels in the group
    g = (last - first + 1).astype(np.float64)
    irr_above = first - before  # irrelevant labels in earlier groups
    bad: NDArray[np.signedinteger[Any] | np.float64]  # whole pairs, or half pairs on average
    if ties == "optimistic":
        one_err = (r[:, 0] == 0).astype(np.float64)
        rank_opt = first + cum_rel - before  # j-th relevant of its group: first + j
        cover = np.where(Ys, rank_opt, 0).max(axis=1) - 1.0
        bad = irr_above
        prec = cum_rel / np.maximum(rank_opt, 1)  # rank_opt is >= 1 wherever Ys is set
    else:  # average
        one_err = (g[:, 0] - r[:, 0]) / g[:, 0]
        cover = np.where(Ys, first + r * (g + 1.0) / (r + 1.0), 0.0).max(axis=1) - 1.0
        bad = irr_above + 0.5 * (g - r)
        prec = (before + (r + 1.0) / 2.0) / (first + (g + 1.0) / 2.0)
    rloss = np.where(Ys, bad, 0).sum(axis=1) / (n_rel * (q - n_rel))
    avgprec = np.where(Ys, prec, 0.0).sum(axis=1) / n_rel
    return one_err, cover, rloss, avgprec


class _RankStats:
    """Per-instance ranking terms of the non-degenerate instances.

    Attributes
    ----------
    one_error, coverage, ranking_loss, average_precision : ndarray of shape (m,)
        The per-instance terms of the m instances with at least one relevant
        and one irrelevant label (m may be 0).
    """

    def __init__(self, yt: NDArray[np.bool_], S: NDArray[np.float64], ties: TieRule = "pessimistic") -> None:
        n_rel = np.count_nonzero(yt, axis=1)
        keep = (n_rel > 0) & (n_rel < yt.shape[1])
        Y, Sk = yt[keep], S[keep]
        parts = [_instance_terms(Y[b], Sk[b], ties) for b in _row_blocks(*Y.shape)]
        columns: list[NDArray[np.float64]]
        if parts:
            columns = [np.concatenate(c) for c in zip(*parts)]
        else:
            columns = [np.empty(0)] * 4
        self.one_error, self.coverage, self.ranking_loss, self.average_precision = columns

    @property
    def empty(self) -> bool:
        return bool(self.one_error.shape[0] == 0)


def _rank_stats(yt: NDArray[np.bool_], S: NDArray[np.float64], ties: TieRule = "pessimistic") -> _RankStats:
    """Select the non-degenerate instances (1 <= |Y_i| <= q - 1) and rank them."""
    return _RankStats(yt, S, _check_ties(ties))


_NO_INSTANCE = (
    "no instance of Y_true has both a relevant and an irrelevant label "
    "(instances with no or all labels relevant are left out)"
)


def _mean_or_nan(st: _RankStats, name: str) -> float:
    if st.empty:
        return _undefined(name, _NO_INSTANCE)
    return float(np.mean(getattr(st, name)))


def _one_error(st: _RankStats) -> float:
    return _mean_or_nan(st, "one_error")


def _coverage(st: _RankStats) -> float:
    return _mean_or_nan(st, "coverage")


def _ranking_loss(st: _RankStats) -> float:
    return _mean_or_nan(st, "ranking_loss")


def _average_precision(st: _RankStats) -> float:
    return _mean_or_nan(st, "average_precision")


def _prepare(Y_true: MatrixLike, Y_score: MatrixLike, ties: TieRule) -> _RankStats:
    _check_ties(ties)
    return _rank_stats(*_check_true_and_scores(Y_true, Y_score), ties)





@fill_doc
def one_error(Y_true: MatrixLike, Y_score: MatrixLike, *, ties: TieRule = "pessimistic") -> float:
    r"""One-error: how often the top-ranked label is irrelevant.

    .. math:: \mathrm{one\text{-}error}(f) = \frac{1}{p}\sum_{i=1}^{p}
              [\![\arg\max_{y} f(x_i, y) \notin Y_i]\!]

    When several labels share the top score, the instance counts as an error
    if any of them is irrelevant. Instances with no relevant label or with
    every label relevant are left out (NaN with a warning if none is left).

    Parameters
    ----------
    {Y_true}
    {Y_score}
    ties : {"pessimistic", "average", "optimistic", "mulan"}, default="pessimistic"
        How labels with equal scores are ranked: against the ranker (each tied
        label takes the group's largest rank), the expectation over random
        orders of the tied labels, in favour of the ranker (relevant labels
        first), or MULAN's order (scores within 1e-6 of a group's smallest tie,
        the higher label index ranks better). See ``docs/metrics.md``.

    Returns
    -------
    loss : float
        In [0, 1]; 0 is best; NaN if undefined.

    See Also
    --------
    coverage, ranking_loss, average_precision : The other ranking measures.
    precision_at_k : At k = 1, ``1 - one_error`` on the non-degenerate instances when no
        labels tie for the top score.

    References
    ----------
    M.-L. Zhang and Z.-H. Zhou, "A Review on Multi-Label Learning Algorithms",
    IEEE Transactions on Knowledge and Data Engineering, 2014, section on example-based metrics.

    Z. Younes, F. Abdallah, T. Denoeux and H. Snoussi, "A Dependent Multilabel
    Classification Method Derived from the k-Nearest Neighbor Rule", EURASIP J.
    Adv. Signal Process., 2011, eqs. 25-28.

    Examples
    --------
    >>> from mlknn.metrics import one_error
    >>> Y_true = [[1, 0, 1], [0, 1, 0], [1, 1, 0]]
    >>> Y_score = [[0.9, 0.2, 0.4], [0.3, 0.8, 0.6], [0.7, 0.5, 0.6]]
    >>> round(one_error(Y_true, Y_score), 4)
    0.0
    """
    return _one_error(_prepare(Y_true, Y_score, ties))


@fill_doc
def coverage(Y_true: MatrixLike, Y_score: MatrixLike, *, ties: TieRule = "pessimistic") -> float:
    r"""Coverage: how far down the ranking one must go to cover all relevant labels.

    .. math:: \mathrm{coverage}(f) = \frac{1}{p}\sum_{i=1}^{p}
              \max_{y \in Y_i} \mathrm{rank}_f(x_i, y) - 1

    with the pessimistic rank :math:`|\{y' : f(x_i, y') \ge f(x_i, y)\}|`.
    This is the papers' definition, i.e. scikit-learn's
    :func:`~sklearn.metrics.coverage_error` minus 1 (on the non-degenerate
    instances). Instances with no relevant label or with every label relevant
    are left out (NaN with a warning if none is left).

    Parameters
    ----------
    {Y_true}
    {Y_score}
    ties : {"pessimistic", "average", "optimistic", "mulan"}, default="pessimistic"
        How labels with equal scores are ranked: against the ranker (each tied
        label takes the group's largest rank), the expectation over random
        orders of the tied labels, in favour of the ranker (relevant labels
        first), or MULAN's order (scores within 1e-6 of a group's smallest tie,
        the higher label index ranks better). See ``docs/metrics.md``.

    Returns
    -------
    loss : float
        In [0, n_labels - 1]; the best achievable value is the mean of
        ``|Y_i| - 1`` over the instances kept; NaN if undefined.

    See Also
    --------
    one_error, ranking_loss, average_precision : The other ranking measures.
    sklearn.metrics.coverage_error : scikit-learn's coverage, one more than this one.

    References
    ----------
    M.-L. Zhang and Z.-H. Zhou, "A Review on Multi-Label Learning Algorithms",
    IEEE Transactions on Knowledge and Data Engineering, 2014, section on example-based metrics.

    Z. Younes, F. Abdallah, T. Denoeux and H. Snoussi, "A Dependent Multilabel
    Classification Method Derived from the k-Nearest Neighbor Rule", EURASIP J.
    Adv. Signal Process., 2011, eqs. 25-28.

    Examples
    --------
    >>> from mlknn.metrics import coverage
    >>> Y_true = [[1, 0, 1], [0, 1, 0], [1, 1, 0]]
    >>> Y_score = [[0.9, 0.2, 0.4], [0.3, 0.8, 0.6], [0.7, 0.5, 0.6]]
    >>> round(coverage(Y_true, Y_score), 4)
    1.0
    """
    return _coverage(_prepare(Y_true, Y_score, ties))


@fill_doc
def ranking_loss(Y_true: MatrixLike, Y_score: MatrixLike, *, ties: TieRule = "pessimistic") -> float:
    r"""Ranking loss: the fraction of relevant/irrelevant label pairs mis-ordered.

    .. math:: \mathrm{rloss}(f) = \frac{1}{p}\sum_{i=1}^{p}
              \frac{|\{(y', y'') \in Y_i \times \bar Y_i :
              f(x_i, y') \le f(x_i, y'')\}|}{|Y_i|\,|\bar Y_i|}

    A tie between a relevant and an irrelevant label counts as mis-ordered
    (the papers' ``<=``; scikit-learn's :func:`~sklearn.metrics.label_ranking_loss`
    does the same). Instances with no relevant label or with every label
    relevant are left out (scikit-learn scores them 0); NaN with a warning if
    none is left.

    Parameters
    ----------
    {Y_true}
    {Y_score}
    ties : {"pessimistic", "average", "optimistic", "mulan"}, default="pessimistic"
        How labels with equal scores are ranked: against the ranker (each tied
        label takes the group's largest rank), the expectation over random
        orders of the tied labels, in favour of the ranker (relevant labels
        first), or MULAN's order (scores within 1e-6 of a group's smallest tie,
        the higher label index ranks better). See ``docs/metrics.md``.

    Returns
    -------
    loss : float
        In [0, 1]; 0 is best; NaN if undefined.

    See Also
    --------
    one_error, coverage, average_precision : The other ranking measures.
    sklearn.metrics.label_ranking_loss : scikit-learn's ranking loss.

    References
    ----------
    M.-L. Zhang and Z.-H. Zhou, "A Review on Multi-Label Learning Algorithms",
    IEEE Transactions on Knowledge and Data Engineering, 2014, section on example-based metrics.

    Z. Younes, F. Abdallah, T. Denoeux and H. Snoussi, "A Dependent Multilabel
    Classification Method Derived from the k-Nearest Neighbor Rule", EURASIP J.
    Adv. Signal Process., 2011, eqs. 25-28.

    Examples
    --------
    >>> from mlknn.metrics import ranking_loss
    >>> Y_true = [[1, 0, 1], [0, 1, 0], [1, 1, 0]]
    >>> Y_score = [[0.9, 0.2, 0.4], [0.3, 0.8, 0.6], [0.7, 0.5, 0.6]]
    >>> round(ranking_loss(Y_true, Y_score), 4)
    0.1667
    """
    return _ranking_loss(_prepare(Y_true, Y_score, ties))


@fill_doc
def average_precision(Y_true: MatrixLike, Y_score: MatrixLike, *, ties: TieRule = "pessimistic") -> float:
    r"""Average precision of the label ranking.

    .. math:: \mathrm{avgprec}(f) = \frac{1}{p}\sum_{i=1}^{p}\frac{1}{|Y_i|}
              \sum_{y \in Y_i}\frac{|\{y' \in Y_i : \mathrm{rank}_f(x_i, y')
              \le \mathrm{rank}_f(x_i, y)\}|}{\mathrm{rank}_f(x_i, y)}

    with the pessimistic rank :math:`|\{y' : f(x_i, y') \ge f(x_i, y)\}|`, as
    in scikit-learn's :func:`~sklearn.metrics.label_ranking_average_precision_score`.
    Instances with no relevant label or with every label relevant are left out
    (scikit-learn scores them 1); NaN with a warning if none is left.

    Parameters
    ----------
    {Y_true}
    {Y_score}
    ties : {"pessimistic", "average", "optimistic", "mulan"}, default="pessimistic"
        How labels with equal scores are ranked: against the ranker (each tied
        label takes the group's largest rank), the expectation over random
        orders of the tied labels, in favour of the ranker (relevant labels
        first), or MULAN's order (scores within 1e-6 of a group's smallest tie,
        the higher label index ranks better). See ``docs/metrics.md``.

    Returns
    -------
    score : float
        In (0, 1]; 1 is best; NaN if undefined.

    See Also
    --------
    one_error, coverage, ranking_loss : The other ranking measures.
    sklearn.metrics.label_ranking_average_precision_score : scikit-learn's measure.

    References
    ----------
    M.-L. Zhang and Z.-H. Zhou, "A Review on Multi-Label Learning Algorithms",
    IEEE Transactions on Knowledge and Data Engineering, 2014, section on example-based metrics.

    Z. Younes, F. Abdallah, T. Denoeux and H. Snoussi, "A Dependent Multilabel
    Classification Method Derived from the k-Nearest Neighbor Rule", EURASIP J.
    Adv. Signal Process., 2011, eqs. 25-28.

    Examples
    --------
    >>> from mlknn.metrics import average_precision
    >>> Y_true = [[1, 0, 1], [0, 1, 0], [1, 1, 0]]
    >>> Y_score = [[0.9, 0.2, 0.4], [0.3, 0.8, 0.6], [0.7, 0.5, 0.6]]
    >>> round(average_precision(Y_true, Y_score, ties="average"), 4)
    0.9444
    """
    return _average_precision(_prepare(Y_true, Y_score, ties))
