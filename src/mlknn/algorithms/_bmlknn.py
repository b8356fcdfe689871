"""BML-kNN (bounded ML-kNN) and the neighbourhood classifier NC: the BML-kNN paper.

The BML-kNN paper, "A Neighborhood Model with Both Distance and Quantity Constraints for
Multilabel Data". Notation: X the training set (m instances), L the labels, k the
number of neighbours, delta the radius (called ``radius`` here, to keep ``delta``
for DML-kNN's fuzziness), s the smoothing parameter, N_k(x) the k nearest
neighbours of x, N_delta(x) = {y in X : 0 < d(x, y) <= delta} its
delta-neighbourhood, and N_k(x) & N_delta(x) its "delta-kNNs" (section 2).

Both classifiers are ML-kNN's MAP rule (BML-kNN paper, Table 1; Zhang and Zhou 2007)
over a different neighbourhood:

* BML-kNN (Table 3): the delta-kNNs, i.e. those of the k nearest neighbours that
  lie within the radius; the count C(x) is in {0, ..., k};
* NC (Table 2): the whole delta-neighbourhood, with no limit on its size.
"""

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..base import HUBNESS_CONSTRAINT, RANDOM_STATE_CONSTRAINT, ExplainParts, KNNMultiLabelBase, Term, fit_one_wider
from ..neighbors import NeighborGraph, unchecked_graph
from ..utils._docstrings import fill_doc
from ..utils._param_validation import Interval, Real, StrOptions
from ..utils._typing import (
    FloatArray,
    LabelMatrix,
    MatrixLike,
    NDArray,
    SparseMatrix,
    TopK,
)
from ..utils._validation import dense_label_budget
from ._loo_counts import medians_without_each_row
from ._missing import MissingLabels, rescaled_counts
from ._mlknn import MISSING_LABELS_CONSTRAINT, _BayesCountsMixin, _counts, _topk_by_chunks
from ._partial_fit import MAX_SAMPLES_CONSTRAINT, _PartialFitMixin

_RADIUS_CONSTRAINT = [Interval(Real, 0, None, closed="right"), StrOptions({"auto"})]


def _resolve_radius(radius: float | str, graph: NeighborGraph, k: int) -> float:
    """A float radius, or for "auto" the median LOO distance to the k-th neighbour."""
    if isinstance(radius, str):  # "auto"
        return float(np.median(graph.metric_distances[:, k - 1]))
    return float(radius)


def _bounded_counts(
    graph: NeighborGraph, Y: LabelMatrix, radius: float, missing: MissingLabels | None = None
) -> tuple[NDArray[np.int64], MatrixLike]:
    """Label counts over the neighbours of each row with distance <= radius.

    ``missing``: Y's unknown entries (counts estimated from the observed ones,
    rescaled to each neighbourhood's size; :mod:`._missing`).

    Returns
    -------
    sizes : ndarray of shape (n_points,), int64
        Number of neighbours in the graph within the radius.
    counts : ndarray of shape (n_points, n_labels), int64, or csr_array (sparse Y)
    """
    inside = graph.metric_distances <= radius
    return inside.sum(axis=1, dtype=np.int64), _counts(graph, Y, inside, missing=missing)


@fill_doc
class BMLkNN(_PartialFitMixin, _BayesCountsMixin, KNNMultiLabelBase):
    """Bounded ML-kNN: ML-kNN over the k nearest neighbours that lie within a radius.

    The BML-kNN paper, Table 3. For each label l and each instance x, ``C(x)`` counts the
    neighbours with label l among the delta-kNNs of x, the k nearest neighbours
    at distance ``<= radius`` (section 2: ``N_k(x) & N_delta(x)``). Everything
    else is ML-kNN:

    * prior ``p(l = 1) = (s + #{x : l(x) = 1}) / (2 s + m)`` (eqs 13-14);
    * ``c[j]`` (``c_bar[j]``) = number of training instances with (without) l
      whose leave-one-out delta-kNNs hold exactly j instances with l (steps 3-11);
    * ``p(C = j | l = 1) = (s + c[j]) / (s (k + 1) + sum_p c[p])`` and likewise
      with ``c_bar`` (eqs 17-18, steps 12-15);
    * ``predict`` is the MAP rule of eq (19), ``p(l=1) p(C(t)|l=1) >
      p(l=0) p(C(t)|l=0)``; **tie rule:** an exact tie predicts 0 (as
      :class:`MLkNN`). ``predict_proba`` is the posterior
      ``p(l = 1 | C(t))`` (prior where both products are 0, only with s = 0).

    Readings of the text extraction (equations (8), (13)-(19) are lost; see
    ``docs/notes/bmlknn.md``):

    * **Fewer than k neighbours in the radius.** Table 3 keeps one table of k + 1
      counters per label (``c = zeros(k+1)``) indexed by ``C(x)`` alone, so an
      instance with no neighbour in the radius falls in bin 0 together with one
      whose k neighbours are all in the radius but lack l. We implement this
      literal reading; the likelihoods are not conditioned on the number of
      neighbours that qualify.
    * ``0 < d(x, y)`` in the definition of ``N_delta(x)`` is read as "y is not x
      itself" (leave-one-out, duplicates kept, as everywhere in mlknn); a literal
      reading would drop exact duplicates of a test instance, its most
      informative neighbours.
    * The radius constraint is ``d <= radius`` (closed ball).
    * **Features.** The text that survives does not say that features are
      rescaled: the distance of section 2 (lost in extraction) treats numeric
      features by their values and nominal ones by (mis)match. ``radius`` is in
      the units of ``metric`` on X as given; scale X beforehand (e.g.
      ``MinMaxScaler`` in a pipeline) if its features have unequal ranges.
      ``radius="auto"`` (our addition) uses the median, over the training
      instances, of the leave-one-out distance to the k-th nearest neighbour.

    With ``radius=inf`` every neighbour qualifies and BML-kNN is ML-kNN exactly.

    Parameters
    ----------
    n_neighbors : int, default=10
        k, the quantity constraint.
    radius : float or "auto", default=inf
        delta > 0, the distance constraint, in the units of ``metric``. The paper
        gives no default (its optimal radius is dataset-specific, Figures 2-5).
        Default inf (= ML-kNN): in our 5-fold cross-validation at k = 10 on
        emotions, scene and yeast, Hamming loss and macro AUC improve as the
        radius grows and are best at inf (``docs/notes/bmlknn.md``), as the paper's
        Figures 2-3 describe (better with the radius, then flat). "auto": the
        median leave-one-out distance to the k-th neighbour in the training set
        (fitted value in ``radius_``).
    smoothing : float, default=1.0
        s >= 0.
    {neighbors}
    {metric}
    {n_jobs}
    hubness : {None, "ls", "mp", "mp-gauss", "dsl"} or reduction object, default=None
        Hubness reduction (:mod:`mlknn.hubness`), as for :class:`MLkNN`: the
        k neighbours are those of the re-ranked graph, and ``radius`` is still
        compared with their distances in the units of ``metric`` (the primary
        distances, not the secondary LS / MP / DSL dissimilarities), so one
        radius means the same with and without reduction; ``radius="auto"`` is
        the median primary distance to the k-th re-ranked neighbour. Our
        extension: the BML-kNN paper does not combine BML-kNN with hubness reduction.
    {random_state_backend}
        The estimator itself draws nothing.
    missing_labels : {"ignore", "negative"}, default="ignore"
        How to read the unknown entries of an incomplete Y (NaN, or
        ``Y_missing`` in ``fit``): ``"ignore"`` learns from the observed entries
        only (counts over the neighbours whose label is observed, rescaled to
        the neighbourhood's size; docs/incomplete_labels.md); ``"negative"``
        reads them as 0.
    {max_samples}
    {max_memory}

    Attributes
    ----------
    radius_ : float
        The radius used.
    prior_ : ndarray of shape (n_labels,)
    cond_prob_true_, cond_prob_false_ : ndarray of shape (n_neighbors + 1, n_labels)
        ``p(C = j | l = 1)`` and ``p(C = j | l = 0)``.
    nn_ : fitted neighbour backend
    n_labels_ : int
    n_features_in_ : int
    classes_ : list of ndarray
        ``[0, 1]`` for every label (scikit-learn's multi-label form).
    sparse_labels_ : bool
        Whether the sparse-label path was taken (a scipy sparse Y given to ``fit`` and kept sparse).
    n_train_ : int
        Number of training instances.

    See Also
    --------
    MLkNN : the quantity constraint only (``radius=inf``).
    NeighborhoodClassifier : the distance constraint only.

    Notes
    -----
    **Cost**: as :class:`MLkNN` (a sparse Y stays sparse: fit O(n k c + k q)
    time and O(nnz(Y) + n k + k q) memory, ``predict_topk`` exact from the
    stored counts and the presorted zero-count posteriors), the counts taken
    over the neighbours within the radius only.

    References
    ----------
    "A Neighborhood Model with Both Distance and Quantity Constraints for
    Multilabel Data", Tables 1-3.

    Examples
    --------
    >>> from mlknn import BMLkNN
    >>> from mlknn.datasets import make_multilabel
    >>> data = make_multilabel(n_samples=200, random_state=0)
    >>> clf = BMLkNN(n_neighbors=5, radius="auto").fit(data.X, data.Y)
    >>> clf.predict(data.X[:2]).shape
    (2, 5)
    """

    _parameter_constraints = {
        **KNNMultiLabelBase._parameter_constraints,
        "radius": _RADIUS_CONSTRAINT,
        "smoothing": [Interval(Real, 0, None, closed="left")],
        "hubness": HUBNESS_CONSTRAINT,
        "random_state": RANDOM_STATE_CONSTRAINT,
        "max_samples": MAX_SAMPLES_CONSTRAINT,
        "missing_labels": MISSING_LABELS_CONSTRAINT,
    }

    def __init__(
        self,
        n_neighbors: int = 10,
        *,
        radius: float | str = np.inf,
        smoothing: float = 1.0,
        neighbors: Any = "brute",
        metric: str = "euclidean",
        n_jobs: int | None = None,
        hubness: Any = None,
        random_state: Any = None,
        max_samples: int | None = None,
        missing_labels: str = "ignore",
        max_memory: Any = None,
    ) -> None:
        self.n_neighbors = n_neighbors
        self.radius = radius
        self.smoothing = smoothing
        self.neighbors = neighbors
        self.metric = metric
        self.n_jobs = n_jobs
        self.hubness = hubness
        self.random_state = random_state
        self.max_samples = max_samples
        self.missing_labels = missing_labels
        self.max_memory = max_memory

    def _fit_graph(self, graph: NeighborGraph, Y: LabelMatrix, X: MatrixLike) -> None:
        self.radius_ = _resolve_radius(self.radius, graph, self.n_neighbors)
        self._missing_of(Y)
        self._fit_tables(self._fit_counts(graph, Y), Y, self.n_neighbors + 1)

    def _predict_proba_graph(self, graph: NeighborGraph, X: MatrixLike) -> FloatArray:
        return self._proba_from_counts(_bounded_counts(graph, self._fit_Y, self.radius_, self._missing)[1])

    def _explain_graph(self, graph: NeighborGraph, X: MatrixLike) -> ExplainParts:
        sizes, counts = _bounded_counts(graph, self._fit_Y, self.radius_, self._missing)
        parts = self._explain_counts(counts, "C(l): how many of the k neighbours within the radius "
                                             "have label l (the delta-kNNs of the BML-kNN paper, Table 3)")
        parts.terms["n_within_radius"] = Term(sizes, "|N_k(x) & N_delta(x)|: the neighbours within "
                                                     "the radius", ("instance",))
        return parts

    def _predict_graph(self, graph: NeighborGraph, X: MatrixLike) -> MatrixLike:
        return self._decide_from_counts(_bounded_counts(graph, self._fit_Y, self.radius_, self._missing)[1])

    def _predict_topk_graph(self, graph: NeighborGraph, X: MatrixLike, k: int) -> TopK:
        return _topk_by_chunks(
            self, graph, k, lambda g, rows: _bounded_counts(g, self._fit_Y, self.radius_, self._missing)[1])

    # ------------------------------------------------------ leave-one-out
    def _loo_exact_supported(self) -> bool:
        """Exact from one fit without hubness reduction."""
        return self.hubness is None

    def _loo_exact(self, X: MatrixLike, Y: MatrixLike, k: int | None = None) -> Any:
        """Fit on (X, Y) and return every row's posterior from a fit without it (docs/loo.md).

        ML-kNN's update over the delta-kNNs: a row j that had i among its k
        nearest loses i's labels if i lay within the radius, and gains its
        (k + 1)-th neighbour's if that one does. With ``radius="auto"`` the
        fit without i has its own radius (the median moves), so the update runs
        once per distinct radius, on the rows that have it.
        """
        wide, Y, _ = fit_one_wider(self, X, Y)
        kk, n = self.n_neighbors, wide.n_points
        if k is None:
            self._check_dense_scores(n)
        neighbours, replacements = wide.indices[:, :kk], wide.indices[:, kk]

        def at_radius(radius: float, rows: NDArray[np.intp] | None) -> Any:
            inside = wide.metric_distances <= radius
            counts = _bounded_counts(wide.take(kk), Y, radius)[1]
            return self._loo_from_counts(neighbours, replacements, counts, counts, kk + 1, k,
                                         active=_removing(inside[:, :kk], neighbours, rows),
                                         next_counts=inside[:, kk], subset=rows)

        return _by_radius(_loo_radii(self.radius, self.radius_, wide, kk), at_radius, n, k)

    def _fit_counts(self, graph: NeighborGraph, Y: LabelMatrix) -> MatrixLike:
        return _bounded_counts(graph, Y, self.radius_, self._missing)[1]


@fill_doc
class NeighborhoodClassifier(_PartialFitMixin, _BayesCountsMixin, KNNMultiLabelBase):
    """Neighbourhood classifier (NC): ML-kNN's MAP rule over all neighbours within a radius.

    The BML-kNN paper, Table 2: the neighbourhood of x is ``N_delta(x)``, every training
    instance (other than x) at distance ``<= radius``, however many; ``C(x)``
    counts those with label l. Prior, counters and MAP rule are those of
    :class:`BMLkNN` / ML-kNN, with the count ranging over ``0..J`` instead of
    ``0..k``:

    * ``J`` = the largest leave-one-out neighbourhood size ``|N_delta(x)|`` over
      the training set, so the likelihood tables have ``J + 1`` bins and
      ``p(C = j | l = 1) = (s + c[j]) / (s (J + 1) + sum_p c[p])``. (Table 2's
      "for j = 1, 2, ..., k" is copied from Table 1; with no quantity constraint
      the count is bounded by the neighbourhood size, not by k.)
    * A test count above J (a query in a denser region than any training
      instance) is a bin no training instance reached: its likelihood is the
      empty-bin value ``s / (s (J + 1) + sum_p c[p])``.
    * **Tie rule:** an exact MAP tie predicts 0; ``predict_proba`` is the
      posterior (the prior where both products are 0, only with s = 0).

    ``n_neighbors`` does **not** change the result (with an exact backend): it is
    the width of the first k-nearest-neighbour search. Rows whose ``n_neighbors``-th
    neighbour is farther than the radius are complete from that graph; the others
    (the radius holds more points) are counted by the backend's
    ``radius_neighbors_counts`` in chunks of bounded memory, whatever the number
    of points inside the radius. (Table 2 also lists k among NC's inputs; we read
    that as copied from Table 1 too.)

    Parameters
    ----------
    radius : float or "auto", default="auto"
        delta > 0, in the units of ``metric`` on X as given (see :class:`BMLkNN`
        on feature scaling). The paper gives no default. "auto" (our choice, so
        that the default does not depend on the scale of X): the median, over
        the training set, of the leave-one-out distance to the
        ``n_neighbors``-th neighbour, so that about half of the training
        instances have at least ``n_neighbors`` points within the radius (fitted
        value in ``radius_``).
    n_neighbors : int, default=10
        Width of the first kNN search (and the k of ``radius="auto"``).
    smoothing : float, default=1.0
        s >= 0 of the prior and likelihood estimates; 1 is Laplace smoothing.
    neighbors : str or object, default="brute"
        The backend must have ``radius_neighbors_counts`` (the ``brute`` one has)
        when the radius holds more than ``n_neighbors`` points.
    {metric}
    {n_jobs}
    {random_state_backend}
        The estimator itself draws nothing.
    missing_labels : {"ignore", "negative"}, default="ignore"
        As in :class:`BMLkNN` (the counts over a radius neighbourhood's observed
        labels, rescaled to its size).
    {max_samples}
    {max_memory}

    Attributes
    ----------
    radius_ : float
    max_count_ : int
        J, the largest leave-one-out neighbourhood size in the training set.
    train_sizes_ : ndarray of shape (n_train,)
        ``|N_delta(x)|`` of every training instance (leave-one-out).
    prior_ : ndarray of shape (n_labels,)
    cond_prob_true_, cond_prob_false_ : ndarray of shape (J + 1, n_labels)
        Count posteriors for counts 0..J, J = ``max_count_``.
    nn_ : fitted neighbour backend
    n_labels_ : int
    n_features_in_ : int
    classes_ : list of ndarray
        ``[0, 1]`` for every label (scikit-learn's multi-label form).
    sparse_labels_ : bool
        Whether the sparse-label path was taken (a scipy sparse Y given to ``fit`` and kept sparse).
    n_train_ : int
        Number of training instances.

    See Also
    --------
    BMLkNN : the same with at most k neighbours.

    Notes
    -----
    **Cost**: the likelihood tables have J + 1 rows, O(J q) memory (J the
    largest radius neighbourhood, ``max_count_``). A sparse Y stays sparse in
    the counts of the graph's neighbours (as :class:`MLkNN`: O(n k c) for the
    rows whose radius lies within the graph); the rows whose radius holds more
    points are counted by the backend's ``radius_neighbors_counts`` in row
    chunks, O(rows x n) distance time, which keeps sparse labels sparse (CSR
    counts, O(nnz) memory). ``predict_topk`` is exact as for :class:`MLkNN`.

    **Ranking (P@k).** One radius serves every query, and the likelihood tables
    are indexed by the count alone, not by the neighbourhood's size. Where the
    distance scale varies between regions the neighbourhoods are very unequal:
    on bibtex's binary features with Euclidean distance (``radius="auto"``,
    k = 10) 43 % of the test queries have no training point within the radius
    (all their labels get the count-0 posterior, ranked as by the prior) and
    43 % have more than 300 (a count then says little, and its bin holds few
    training instances): P@1 16 against ML-kNN's 41. L2-normalised features
    (TF-IDF, cosine) make the neighbourhoods comparable (P@1 55). Measured in
    docs/extreme.md; the reading of the BML-kNN paper is unchanged.

    References
    ----------
    The BML-kNN paper, Table 2 (NC after its reference [31]).

    Examples
    --------
    >>> from mlknn import NeighborhoodClassifier
    >>> from mlknn.datasets import make_multilabel
    >>> data = make_multilabel(n_samples=200, random_state=0)
    >>> clf = NeighborhoodClassifier(radius="auto", n_neighbors=5).fit(data.X, data.Y)
    >>> clf.predict(data.X[:2]).shape
    (2, 5)
    """

    _parameter_constraints = {
        **KNNMultiLabelBase._parameter_constraints,
        "radius": _RADIUS_CONSTRAINT,
        "smoothing": [Interval(Real, 0, None, closed="left")],
        "random_state": RANDOM_STATE_CONSTRAINT,
        "max_samples": MAX_SAMPLES_CONSTRAINT,
        "missing_labels": MISSING_LABELS_CONSTRAINT,
    }

    #: Counts the radius neighbourhoods beyond the graph through the fitted index,
    #: from the query features.
    _uses_radius_counts = True
    _uses_features = True

    def __init__(
        self,
        radius: float | str = "auto",
        *,
        n_neighbors: int = 10,
        smoothing: float = 1.0,
        neighbors: Any = "brute",
        metric: str = "euclidean",
        n_jobs: int | None = None,
        random_state: Any = None,
        max_samples: int | None = None,
        missing_labels: str = "ignore",
        max_memory: Any = None,
    ) -> None:
        self.radius = radius
        self.n_neighbors = n_neighbors
        self.smoothing = smoothing
        self.neighbors = neighbors
        self.metric = metric
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.max_samples = max_samples
        self.missing_labels = missing_labels
        self.max_memory = max_memory

    def _radius_counts(
        self, graph: NeighborGraph, Y: LabelMatrix, X: MatrixLike, loo: bool
    ) -> tuple[NDArray[np.int64], MatrixLike]:
        """Sizes and label counts of the radius neighbourhoods of the graph's rows
        (over the observed labels, rescaled to each size, when Y is incomplete)."""
        sizes, counts = self._radius_label_counts(graph, Y, X, loo)
        if self._missing is None:
            return sizes, counts
        _, unknown = self._radius_label_counts(graph, self._missing.unknown, X, loo)
        return sizes, rescaled_counts(counts, unknown, sizes, self._missing)

    def _radius_label_counts(
        self, graph: NeighborGraph, Y: LabelMatrix, X: MatrixLike, loo: bool
    ) -> tuple[NDArray[np.int64], MatrixLike]:
        sizes, counts = _bounded_counts(graph, Y, self.radius_)
        n_avail = Y.shape[0] - 1 if loo else Y.shape[0]
        if graph.n_neighbors >= n_avail:
            return sizes, counts  # the graph holds every point
        rows = np.flatnonzero(graph.distances[:, -1] <= self.radius_)
        if rows.size == 0:
            return sizes, counts
        backend = self.nn_
        if backend is None or not hasattr(backend, "radius_neighbors_counts"):
            raise ValueError(
                f"The radius {self.radius_!r} holds more than n_neighbors = {graph.n_neighbors} "
                f"points for {rows.size} instance(s), and the 'neighbors' backend "
                f"({type(backend).__name__}) has no radius_neighbors_counts method to count "
                "them. Use neighbors='brute', or a larger n_neighbors."
            )
        if loo:
            more = backend.radius_neighbors_counts(None, self.radius_, Y, query_indices=rows)
        else:
            if X is None:
                raise ValueError(
                    f"The 'X' parameter of {type(self).__name__}.predict_proba_from_graph / "
                    f"predict_from_graph is required when the radius {self.radius_!r} holds more "
                    f"than the graph's {graph.n_neighbors} neighbours (for {rows.size} queries): "
                    "pass the query features X as well. Got X=None."
                )
            more = backend.radius_neighbors_counts(X[rows], self.radius_, Y)
        sizes[rows] = more[0]
        if sp.issparse(counts):
            return sizes, _replace_rows(counts, rows, more[1])
        counts[rows] = more[1]
        return sizes, counts

    def _fit_graph(self, graph: NeighborGraph, Y: LabelMatrix, X: MatrixLike) -> None:
        self.radius_ = _resolve_radius(self.radius, graph, self.n_neighbors)
        self._missing_of(Y)
        sizes, counts = self._radius_counts(graph, Y, X, loo=True)
        self.train_sizes_ = sizes
        self.max_count_ = int(sizes.max(initial=0))
        self._fit_tables(counts, Y, self.max_count_ + 1)

    def _predict_proba_graph(self, graph: NeighborGraph, X: MatrixLike) -> FloatArray:
        return self._proba_from_counts(self._radius_counts(graph, self._fit_Y, X, loo=False)[1])

    def _explain_graph(self, graph: NeighborGraph, X: MatrixLike) -> ExplainParts:
        # The training set (X=None) is counted leave-one-out, as fit counted it.
        sizes, counts = self._radius_counts(graph, self._fit_Y, X, loo=graph.loo)
        parts = self._explain_counts(counts, "C(l): how many training instances within the radius "
                                             "have label l (the delta-neighbourhood of the BML-kNN paper, Table 2)")
        parts.terms["n_within_radius"] = Term(sizes, "|N_delta(x)|: the training instances within "
                                                     "the radius", ("instance",))
        return parts

    def _predict_graph(self, graph: NeighborGraph, X: MatrixLike) -> MatrixLike:
        return self._decide_from_counts(self._radius_counts(graph, self._fit_Y, X, loo=False)[1])

    def _predict_topk_graph(self, graph: NeighborGraph, X: MatrixLike, k: int) -> TopK:
        def counts_of(g: NeighborGraph, rows: slice) -> MatrixLike:
            return self._radius_counts(g, self._fit_Y, None if X is None else X[rows], loo=False)[1]

        return _topk_by_chunks(self, graph, k, counts_of)

    # ------------------------------------------------------ leave-one-out
    def _loo_exact_supported(self) -> bool:
        """Exact from one fit, whatever the radius."""
        return True

    def _loo_exact(self, X: MatrixLike, Y: MatrixLike, k: int | None = None) -> Any:
        """Fit on (X, Y) and return every row's posterior from a fit without it (docs/loo.md).

        Removing row i takes i out of the radius neighbourhood of every row
        within the radius of i (the same rows as i's own neighbourhood), with
        no replacement; the largest neighbourhood J may shrink with them, and
        with it the number of count values ``J + 1`` of the likelihood tables.
        With ``radius="auto"`` the fit without i has its own radius (the median
        moves), so the update runs once per distinct radius, on the rows that
        have it.
        """
        wide, Y, Xv = fit_one_wider(self, X, Y)
        n, kk = wide.n_points, self.n_neighbors
        sizes, _ = self._radius_counts(wide.take(kk), Y, Xv, loo=True)
        radii = _loo_radii(self.radius, self.radius_, wide, kk)
        balls = self._radius_balls(wide, float(radii.max()))
        if not np.array_equal((balls.metric_distances <= self.radius_).sum(axis=1), sizes):
            # The graph's radius test must be the index's, that fit counted with.
            raise RuntimeError("The radius neighbourhoods of the graph and of the index disagree.")
        if k is None:
            self._check_dense_scores(n)
        no_replacement = np.zeros(n, dtype=np.intp), np.zeros(n, dtype=bool)

        def at_radius(radius: float, rows: NDArray[np.intp] | None) -> Any:
            inside = balls.metric_distances <= radius
            radius_sizes = inside.sum(axis=1, dtype=np.int64)
            counts = _counts(balls, Y, inside)
            return self._loo_from_counts(balls.indices, no_replacement[0], counts, counts,
                                         int(radius_sizes.max(initial=0)) + 1, k,
                                         active=_removing(inside, balls.indices, rows),
                                         next_counts=no_replacement[1],
                                         row_bins=_largest_without(radius_sizes, balls.indices, inside) + 1,
                                         subset=rows)

        return _by_radius(radii, at_radius, n, k)

    def _radius_balls(self, graph: NeighborGraph, radius: float) -> NeighborGraph:
        """The leave-one-out graph wide enough to hold every row's ball of ``radius``
        (searched wider, doubling, until it does; refused over the dense budget)."""
        n = graph.n_points
        width = min(n - 1, max(self.max_count_, graph.n_neighbors))
        while True:
            if width > graph.n_neighbors:
                need = n * width * 16
                if need > dense_label_budget():
                    raise ValueError(
                        f"Exact leave-one-out posteriors of {type(self).__name__} list every radius "
                        f"neighbourhood, {width} points wide here ({need / 2**30:.1f} GiB for {n} rows), "
                        "over the dense budget (docs/sparse_labels.md). Use cv=5 (cross-fitting) or a "
                        "smaller radius."
                    )
                graph = unchecked_graph(self.nn_, None, width)
            if width >= n - 1 or bool(np.all(graph.metric_distances[:, -1] > radius)):
                return graph
            width = min(n - 1, 2 * width)


def _loo_radii(radius: float | str, fitted: float, graph: NeighborGraph, k: int) -> NDArray[np.float64]:
    """The radius of the fit without row i, for every i: the given one, or for "auto" the median
    of the k-th distances once the rows that had i among their k nearest read their (k + 1)-th."""
    n = graph.n_points
    if not isinstance(radius, str):
        return np.full(n, fitted)
    distances = graph.metric_distances
    return medians_without_each_row(distances[:, k - 1], distances[:, k], graph.indices[:, :k])


def _removing(inside: NDArray[np.bool_], indices: NDArray[np.intp], rows: NDArray[np.intp] | None) -> NDArray[np.bool_]:
    """The (row j, neighbour i) pairs that move j when i is removed, for the removed rows ``rows`` (None: all)."""
    if rows is None:
        return inside
    removed = np.zeros(indices.shape[0], dtype=bool)
    removed[rows] = True
    return inside & removed[indices]


def _by_radius(
    radii: NDArray[np.float64], at_radius: Callable[[float, NDArray[np.intp] | None], Any], n: int, k: int | None
) -> Any:
    """Leave-one-out scores (dense, or top k) of every row, run once per distinct radius of the
    fits without each row (one radius: once, on all rows; ``radius="auto"``: a few)."""
    values, group = np.unique(radii, return_inverse=True)
    if values.size == 1:
        return at_radius(float(values[0]), None)
    parts = [(rows, at_radius(float(radius), rows))
             for radius, rows in ((v, np.flatnonzero(group == g)) for g, v in enumerate(values))]
    if k is None:
        out = np.empty((n, parts[0][1].shape[1]))
        for rows, part in parts:
            out[rows] = part
        return out
    labels, scores = np.empty((n, k), dtype=np.int64), np.empty((n, k))
    for rows, (lab, sc) in parts:
        labels[rows], scores[rows] = lab, sc
    return labels, scores


def _largest_without(sizes: NDArray[np.int64], indices: NDArray[np.intp], inside: NDArray[np.bool_]) -> NDArray[np.int64]:
    """For every row i, the largest radius neighbourhood among the other rows once i is removed.

    ``max over j != i of sizes[j] - [j within the radius of i]``: the rows within
    the radius (``indices[i][inside[i]]``) lose one, the others keep theirs, so the
    largest of the others is the first row, in decreasing order of size, that is
    neither i nor within its radius (the smallest rank missing from that set).
    """
    n = sizes.shape[0]
    rows = np.repeat(np.arange(n), inside.sum(axis=1))
    neighbours = indices[inside]
    shrunk = np.full(n, -1, dtype=np.int64)
    np.maximum.at(shrunk, rows, sizes[neighbours] - 1)
    order = np.argsort(-sizes, kind="stable")
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n)
    # Excluded ranks per row, sorted: the first position t whose rank is not t is the gap.
    owner = np.concatenate([np.arange(n), rows])
    excluded = np.concatenate([rank, rank[neighbours]])
    sort = np.lexsort((excluded, owner))
    owner, excluded = owner[sort], excluded[sort]
    start = np.concatenate([[0], np.cumsum(np.bincount(owner, minlength=n))[:-1]])
    position = np.arange(owner.size) - start[owner]
    gap = np.bincount(owner, minlength=n).astype(np.int64)  # no gap inside: the first rank after them
    miss = excluded != position
    first = np.full(n, np.iinfo(np.int64).max)
    np.minimum.at(first, owner[miss], position[miss])
    gap = np.minimum(gap, first)
    kept = np.where(gap < n, sizes[order[np.minimum(gap, n - 1)]], -1)
    return np.maximum(np.maximum(kept, shrunk), 0).astype(np.int64)


def _replace_rows(counts: SparseMatrix, rows: NDArray[np.intp], new_rows: MatrixLike) -> SparseMatrix:
    """CSR ``counts`` with the rows ``rows`` replaced by ``new_rows`` (dense or sparse)."""
    n, q = counts.shape
    old = counts.tocoo()
    drop = np.zeros(n, dtype=bool)
    drop[rows] = True
    keep = ~drop[old.row]
    new = sp.coo_array(new_rows)
    out = sp.csr_array(
        (np.concatenate([old.data[keep], new.data.astype(counts.dtype)]),
         (np.concatenate([old.row[keep], np.asarray(rows)[new.row]]), np.concatenate([old.col[keep], new.col]))),
        shape=(n, q),
    )
    out.eliminate_zeros()
    out.sort_indices()
    return out
