"""``kneighbors`` and ``explain`` of :class:`~mlknn.base.KNNMultiLabelBase`.

``explain`` asks the estimator for the graph it would score (``query_graph``, the
same search and hubness hook as ``predict_proba``), then for its
``_explain_graph(graph, X)``: the evidence, the named terms and the posterior,
computed by the private kernels ``_predict_proba_graph`` uses, so that an
explanation cannot drift from the scores. The decision is ``_predict_graph`` on
the same graph.
"""

from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ..neighbors import NeighborGraph
from ..utils._typing import LabelMatrix, MatrixLike, NDArray
from ._explanation import Explanation, Term


class ExplainParts(NamedTuple):
    """What an estimator's ``_explain_graph`` returns (the estimator-specific part)."""

    evidence: MatrixLike
    evidence_description: str
    proba: MatrixLike
    terms: dict[str, Term]
    at_zero: dict[str, NDArray[Any]]
    #: The 0/1 decision when the estimator has it from the same evidence; None:
    #: ``_predict_graph`` on the same graph.
    decision: MatrixLike = None


class _ExplainMixin:
    """``kneighbors`` and ``explain`` of :class:`~mlknn.base.KNNMultiLabelBase`."""

    n_neighbors: int
    _fit_Y: LabelMatrix

    if TYPE_CHECKING:  # provided by KNNMultiLabelBase and the estimators
        def query_graph(self, X: MatrixLike = None) -> tuple[NeighborGraph, MatrixLike]: ...
        def _predict_graph(self, graph: NeighborGraph, X: MatrixLike) -> MatrixLike: ...
        def _explain_graph(self, graph: NeighborGraph, X: MatrixLike) -> ExplainParts: ...

    def kneighbors(
        self, X: MatrixLike = None, return_distance: bool = True
    ) -> tuple[NDArray[np.float64], NDArray[np.intp]] | NDArray[np.intp]:
        """The neighbours this estimator scores each query with.

        The ``n_neighbors`` nearest training instances, as the estimator sees them:
        after its hubness reduction (if any), which re-ranks them; distances are
        then still the metric's (so not necessarily ascending).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_queries, n_features), default=None
            Queries; None: the training set, leave-one-out (each row's own point
            excluded, duplicates kept), as ``fit`` saw it.
        return_distance : bool, default=True
            Also return the distances to the neighbours.

        Returns
        -------
        distances : ndarray of shape (n_queries, n_neighbors), float64
            Only when ``return_distance``; in the metric's units.
        indices : ndarray of shape (n_queries, n_neighbors), int
            Training indices, nearest first.
        """
        check_is_fitted(self)
        graph, _ = self.query_graph(X)
        distances, indices = self._shown_neighbours(graph)
        return (distances, indices) if return_distance else indices

    def _shown_neighbours(self, graph: NeighborGraph) -> tuple[NDArray[np.float64], NDArray[np.intp]]:
        k = self.n_neighbors  # a wider search (MULAN's tie extension) keeps its first k
        return (np.asarray(graph.metric_distances[:, :k], dtype=np.float64), np.asarray(graph.indices[:, :k]))

    def explain(self, X: MatrixLike = None) -> Explanation:
        """Why each label got its score: neighbours, evidence, posterior terms.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_queries, n_features), default=None
            Queries; None: the training set, leave-one-out (as :meth:`kneighbors`).

        Returns
        -------
        Explanation
            ``indices`` and ``distances`` as :meth:`kneighbors`; ``evidence`` what
            the estimator counted per label; ``terms`` the named arrays of its
            equations from the evidence to ``proba`` (= ``predict_proba``);
            ``decision`` (= ``predict``, before its output format). After a fit on
            sparse labels the (n, q) fields are CSR with ``at_zero`` values (see
            :class:`~mlknn.Explanation`); no dense (n, q) array is built.
        """
        check_is_fitted(self)
        graph, X = self.query_graph(X)
        parts = self._explain_graph(graph, X)
        # MULAN's BR-kNN-a/-b draw ties from a stream that predict consumes: an
        # explanation shows the decision predict would make now, and leaves the
        # stream where it was.
        decision = parts.decision
        if decision is None:
            stream = getattr(self, "tie_random_state_", None)
            decision = self._predict_graph(graph, X)
            if stream is not None:
                self.tie_random_state_ = stream
        at_zero = dict(parts.at_zero)
        if at_zero:
            at_zero["decision"] = np.zeros(decision.shape[1], dtype=np.uint8)
        distances, indices = self._shown_neighbours(graph)
        return Explanation(
            estimator=_describe(self),
            indices=indices,
            distances=distances,
            evidence=parts.evidence,
            evidence_description=parts.evidence_description,
            proba=parts.proba,
            decision=decision,
            terms=parts.terms,
            train_labels=getattr(self, "_fit_Y", None),
            at_zero=at_zero,
        )


def _describe(est: Any) -> str:
    variant = getattr(est, "variant", None)
    return f"{type(est).__name__}(variant={variant!r})" if variant is not None else type(est).__name__
