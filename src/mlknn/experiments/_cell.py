"""One cell of an experiment: fit one estimator on one fold, predict, evaluate.

Every step goes through the estimators' public API: a kNN estimator is fitted
and queried from the fold's shared graphs (``fit_from_graph``,
``predict_proba_from_graph``, ``predict_from_graph``,
``predict_topk_from_graph``), any other estimator with ``fit`` / ``predict``.
The readings of other libraries (``mlknn:skml``...) are estimator parameters
(see ``ALIASES`` in :mod:`mlknn.experiments._config`), not harness code.

Warnings raised by a step are not silenced: :class:`WarningLog` records them
(category, message, count, and the step) and the runner stores them with the
cell in the results database (:meth:`ResultsDB.warnings`).

Which scores a cell evaluates:

* dense labels: the dense ``predict_proba`` scores, every measure of
  :data:`mlknn.metrics.METRIC_NAMES` (plus the ``@k`` measures when the
  experiment asks for ``at_k``), exactly as before;
* sparse labels whose dense (n_test, q) scores fit (the estimators' dense-label
  budget, :func:`mlknn.utils._validation.dense_label_budget`, and
  ``evaluate``'s :data:`~mlknn.metrics._evaluate_at_k.DENSE_METRICS_MAX_CELLS`):
  the same, so a CSR Y gives the numbers of the dense Y;
* sparse labels at larger q: ``predict_topk`` of the widest ``at_k`` (default
  1, 3, 5), the sparse 0/1 prediction, and the ``@k`` measures
  (precision, recall, nDCG and their propensity-scored forms); ``evaluate``
  names what it leaves out (a recorded ``MetricSkippedWarning``). No (n, q)
  array is made on this path.

Where the experiment asks for other tie rules (``ExperimentConfig.ties``; the
reproduction presets ask for all), the four ranking measures are also stored
under each, as ``"coverage[mulan]"`` and so on (:mod:`._ties`); the plain keys
keep the default ``ties="pessimistic"``.
"""

import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np
import scipy.sparse as sp

from ..utils._typing import Estimator, LabelMatrix, MatrixLike, NDArray, TopK

if TYPE_CHECKING:
    from ..neighbors import NeighborGraph, NeighborsIndex
    from ._decisions import DecisionSettings

#: What a cell's prediction step gives the evaluation besides the 0/1 prediction:
#: dense scores, the top-k (labels, scores) pair, or nothing (no score method).
Scores: TypeAlias = NDArray[np.float64] | TopK | None

#: ``@k`` cut-offs of a sparse-label cell too large for dense scores, when the
#: experiment names none.
DEFAULT_AT_K = (1, 3, 5)

#: Longest warning message stored (the rest is cut, with "...").
MAX_WARNING_CHARS = 2000


@dataclass
class FoldData:
    """A fold after its preprocessing (Y dense or CSR, as given).

    ``Y_hidden``: the training entries hidden by the ``missing_labels`` setting
    (0 in ``Y_train``), or None.
    """

    X_train: MatrixLike
    Y_train: LabelMatrix
    X_test: MatrixLike
    Y_test: LabelMatrix
    Y_hidden: MatrixLike | None = None

    @property
    def n_train(self) -> int:
        n: int = self.X_train.shape[0]
        return n


@dataclass
class FoldSearch:
    """The fold's shared neighbour search (one for every kNN cell)."""

    index: "NeighborsIndex"
    train_graph: "NeighborGraph"
    test_graph: "NeighborGraph | None"
    seconds: float
    recall: float | None = None


@dataclass
class CellOutcome:
    values: dict[str, float]
    fit_seconds: float
    predict_seconds: float
    search_seconds: float
    warnings: list[dict[str, Any]] = field(default_factory=list)


class WarningLog:
    """Counts the warnings raised inside :meth:`stage` blocks, per (stage, category, message).

    Inside a stage every warning is caught and counted (``simplefilter("always")``:
    a warning repeated for each of q labels counts q times), none is printed.
    """

    def __init__(self) -> None:
        self._counts: dict[tuple[str, str, str], int] = {}

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield
        for w in caught:
            cat = w.category
            message = str(w.message)
            if len(message) > MAX_WARNING_CHARS:
                message = message[: MAX_WARNING_CHARS - 3] + "..."
            key = (name, f"{cat.__module__}.{cat.__qualname__}", message)
            self._counts[key] = self._counts.get(key, 0) + 1

    def records(self) -> list[dict[str, Any]]:
        """List of dicts: ``stage``, ``category``, ``message``, ``count`` (first-seen order)."""
        return [{"stage": s, "category": c, "message": m, "count": n} for (s, c, m), n in self._counts.items()]


def is_knn(est: object) -> bool:
    from ..base import KNNMultiLabelBase

    return isinstance(est, KNNMultiLabelBase)


def _scores(est: Estimator, X: MatrixLike) -> NDArray[np.float64] | None:
    """Dense scores of a non-kNN estimator: ``predict_proba`` (list of per-label
    (n, 2) arrays allowed), else ``decision_function``, else None."""
    if hasattr(est, "predict_proba"):
        try:
            S = est.predict_proba(X)
            if isinstance(S, list):  # per-label (n, 2) arrays
                S = np.column_stack([s[:, -1] for s in S])
            return np.asarray(S, dtype=float)
        except (AttributeError, NotImplementedError):
            pass
    if hasattr(est, "decision_function"):
        return np.asarray(est.decision_function(X), dtype=float)
    return None


def _dense_scores_fit(n_rows: int, n_labels: int) -> bool:
    """Whether a sparse-label cell can afford dense (n_rows, n_labels) scores and measures."""
    from ..metrics._evaluate_at_k import DENSE_METRICS_MAX_CELLS
    from ..utils._validation import dense_label_budget

    cells = int(n_rows) * int(n_labels)
    return cells <= DENSE_METRICS_MAX_CELLS and cells * 8 <= dense_label_budget()


def _dense_train_labels(est: Estimator, Y: LabelMatrix) -> LabelMatrix:
    """Y for an estimator outside the kNN family: dense, after the budget check."""
    if not sp.issparse(Y):
        return Y
    from ..utils._validation import check_dense_label_budget

    check_dense_label_budget(Y.shape[0], Y.shape[1], estimator=est, itemsize=1,
                             what="a dense training label matrix")  # fmt: skip
    return Y.toarray()


def _hidden_for(est: Estimator, data: FoldData, rows: slice = slice(None)) -> dict[str, MatrixLike]:
    """``Y_missing=`` of the training rows ``rows`` for an estimator that learns from
    incomplete labels; nothing for the others, which read the hidden entries as 0 (Y_train holds 0 there)."""
    if data.Y_hidden is None or not est.knn_capabilities()["missing_labels"]:
        return {}
    return {"Y_missing": data.Y_hidden[rows]}


def _fit(est: Estimator, data: FoldData, search: FoldSearch | None, n_seen: int | None = None) -> None:
    if n_seen is not None:
        # A prequential cell carried from batch to batch: the rows that arrived since its last fit.
        from ..utils._validation import FeatureScaleWarning

        new = slice(n_seen, None)
        with warnings.catch_warnings():
            # Its first call checks the feature scale, as fit does; the refit path's
            # fit_from_graph does not, and both paths store the same warnings.
            warnings.simplefilter("ignore", FeatureScaleWarning)
            est.partial_fit(data.X_train[new], data.Y_train[new], **_hidden_for(est, data, new))
    elif is_knn(est):
        assert search is not None  # the runner searches every fold that has a kNN cell
        est.fit_from_graph(search.train_graph, data.Y_train, X=data.X_train, index=search.index,
                           **_hidden_for(est, data))
    else:
        est.fit(data.X_train, _dense_train_labels(est, data.Y_train))


def _predict(est: Estimator, data: FoldData, search: FoldSearch | None, topk: int) -> tuple[LabelMatrix, Scores]:
    """(P, scores): the 0/1 prediction and dense scores, or the top-k pair when ``topk``."""
    if not is_knn(est):
        return est.predict(data.X_test), _scores(est, data.X_test)
    X = data.X_test
    graph: NeighborGraph | None
    if search is None:
        # A prequential cell carried by partial_fit: one query of the model's own exact index
        # serves the prediction and the scores, as the grid's shared search does.
        from ..neighbors import build_graph

        graph = build_graph(est.nn_, X, est.search_width(est.n_train_))
    else:
        graph = search.test_graph
    P = est.predict_from_graph(graph, X)
    if topk:
        return P, est.predict_topk_from_graph(graph, X, k=topk)
    return P, est.predict_proba_from_graph(graph, X)


def _evaluate(data: FoldData, P: LabelMatrix, S: Scores, at_k: tuple[int, ...],
              ties: tuple[str, ...] = ()) -> dict[str, float]:  # fmt: skip
    from ..metrics import evaluate
    from ._ties import RANKING_METRICS, tie_variant_values

    if not sp.issparse(data.Y_test):
        # Dense labels: as the harness always evaluated (a sparse 0/1 output densified).
        P = P.toarray() if hasattr(P, "toarray") else np.asarray(P)
    if not at_k:
        values = dict(evaluate(data.Y_test, P, S))
    else:
        from ..metrics import inverse_propensity

        values = dict(evaluate(data.Y_test, P, S, at_k=at_k, inv_propensity=inverse_propensity(data.Y_train)))
    # The ranking measures under the other tie rules asked for (keys "coverage[mulan]"...),
    # wherever they were computed from dense scores (not from a top-k pair).
    if ties and not isinstance(S, tuple) and all(m in values for m in RANKING_METRICS):
        values.update(tie_variant_values(data.Y_test, P, S, ties))
    return values


def _decision_values(est: Estimator, data: FoldData, S: NDArray[np.float64], decisions: "DecisionSettings",
                     seed: int) -> dict[str, float]:  # fmt: skip
    """The tuned-rule, conformal and calibration measures of a cell with dense scores (Y densified)."""
    from ._decisions import decision_values

    def dense(Y: LabelMatrix) -> NDArray[Any]:
        return np.asarray(Y.toarray() if sp.issparse(Y) else Y)

    Y_train = dense(data.Y_train)
    if np.issubdtype(Y_train.dtype, np.floating) and np.isnan(Y_train).any():
        warnings.warn("threshold / conformal / calibration measures not computed: the decision rules need a complete "
                      "training Y (this fold hides labels, missing_labels).", UserWarning, stacklevel=2)
        return {}
    return decision_values(est, data.X_train, Y_train, data.X_test, dense(data.Y_test), S, decisions, seed)


def run_cell(est: Estimator, data: FoldData, search: FoldSearch | None, at_k: tuple[int, ...] = (),
             ties: tuple[str, ...] = (), *, decisions: "DecisionSettings | None" = None,
             seed: int = 0, n_seen: int | None = None) -> CellOutcome:  # fmt: skip
    """Fit, predict and evaluate one estimator on one fold.

    Parameters
    ----------
    est : estimator (unfitted)
    data : FoldData
    search : FoldSearch or None
        The fold's graphs (required for a kNN estimator).
    at_k : tuple of int
        ``@k`` measures to add (``evaluate(..., at_k=...)``); a sparse-label
        cell too large for dense scores uses :data:`DEFAULT_AT_K` when empty.
    ties : tuple of str
        Tie rules of :data:`mlknn.experiments._ties.TIE_VARIANTS` under which the
        four ranking measures are also recorded (``"coverage[mulan]"``...).
    decisions : DecisionSettings, optional
        Tuned thresholds, conformal sets and calibration measures also recorded
        (:mod:`mlknn.experiments._decisions`), for cells with dense scores.
    seed : int, default=0
        ``random_state`` of those decision rules.
    n_seen : int, optional
        Set for a prequential cell carried by ``partial_fit``
        (:mod:`mlknn.experiments._stream`): ``est`` has learnt the first ``n_seen``
        training rows (0: none yet) and learns the others by ``partial_fit``; it
        predicts with its own search (``search`` is then unused).

    Returns
    -------
    CellOutcome
    """
    log = WarningLog()
    knn = is_knn(est)
    sparse_labels = sp.issparse(data.Y_test)
    topk = 0
    if knn and sparse_labels and not _dense_scores_fit(data.X_test.shape[0], data.Y_test.shape[1]):
        at_k = tuple(at_k) or DEFAULT_AT_K
        topk = max(at_k)
    with log.stage("fit"):
        t0 = time.perf_counter()
        _fit(est, data, search, n_seen)
        fit_s = time.perf_counter() - t0
    with log.stage("predict"):
        t0 = time.perf_counter()
        P, S = _predict(est, data, search, topk)
        pred_s = time.perf_counter() - t0
    with log.stage("evaluate"):
        values = _evaluate(data, P, S, at_k, ties)
    if decisions and isinstance(S, np.ndarray):
        with log.stage("decide"):
            values.update(_decision_values(est, data, S, decisions, seed))
    # (A kNN cell has a search unless it is carried by partial_fit, which searches itself.)
    search_s = search.seconds if knn and search is not None and n_seen is None else 0.0
    return CellOutcome(values, fit_s, pred_s, search_s, log.records())
