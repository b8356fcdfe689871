"""Memory and work estimates of the solvers that are dense in the number of labels q.

DML-kNN, MLHiKNN and IBLR hold (n, q) arrays (their counting vectors,
memberships, relevance scores or meta-features) and MLHiKNN and IBLR fit q
logistic regressions on q inputs each, with (q, q) coefficient matrices and
O(n q^2) work per conjugate-gradient step. The estimates below count the arrays
that are alive together at the peak of each code path (read off
``_dmlknn.py``, ``_mlhiknn.py``, ``_iblr.py`` and ``_logistic.py``); the base
class adds the neighbour search's (:func:`mlknn.base._guards.search_estimate`).
"""

from ..utils._resources import ProblemSize, ResourceEstimate, estimate
from ._logistic import _BATCH_BYTES, _EIGEN_MAX, _FLOAT32_FROM, _MAX_CG_LARGE

#: Conjugate-gradient steps per label over a whole fit (Newton steps times CG steps
#: per Newton step), for the time estimate. MLHiKNN's regressions are well posed
#: (C = 1, inputs in [0, 1]); IBLR's default C is nearly unpenalised and needs
#: many more (docs/notes/iblr.md counts them on delicious).
CG_STEPS_MLHIKNN = 30
CG_STEPS_IBLR = 400

#: From this C on IBLR's fit is nearly unpenalised (see ``_iblr._NEARLY_UNPENALISED_C``):
#: ill-posed labels run to the iteration caps, whose product is then the estimate.
NEARLY_UNPENALISED_C = 1e3


#: The kNN estimators that keep a sparse Y sparse, for the refusals of the dense ones
#: (tests/test_resources.py checks the list against the estimators' capabilities).
SPARSE_LABEL_ALTERNATIVE = (
    "an estimator that keeps sparse labels sparse, with Y passed as a scipy sparse matrix: MLkNN, BRkNN, "
    "BRkNNa, BRkNNb, BMLkNN or NeighborhoodClassifier (their memory grows with the non-zero labels, not n q)"
)


def logistic_estimate(n: int, p: int, q: int, cg_steps: int) -> ResourceEstimate:
    """The batched Newton-CG of :func:`mlknn.algorithms._logistic.fit_logistic_batched` on (n, p) inputs, q labels.

    Its coefficients (q, p), the inputs in the products' dtype (float32 on large
    problems), the eigenbasis (p + 1 <= ``_EIGEN_MAX``: the Gram matrix, its
    eigenvectors and the rotated inputs) or the squared inputs (Jacobi), and one
    batch of (n, batch) work arrays; work: two (n, p) x (p, q) products per CG step.
    """
    large = n * p * q >= _FLOAT32_FROM
    products = 4.0 * n * p if large else 8.0 * n * p
    if p + 1 <= _EIGEN_MAX:
        basis = 8.0 * 3 * (p + 1) ** 2 + (8.0 * n * (p + 1) if large else 0.0)
        head_pairs = 4.0 * n * 48 * 49 / 2 if large else 0.0
    else:
        basis = 8.0 * n * p  # the squared inputs of the diagonal preconditioner
        head_pairs = 0.0
    return estimate(
        flops=4.0 * n * p * q * cg_steps,
        coefficients=8.0 * 2 * q * p,
        solver_inputs=products,
        preconditioner=basis + head_pairs,
        solver_batch=float(min(_BATCH_BYTES, 8 * 8 * max(n, p + 1) * q)),
    )


def mlhiknn_estimate(size: ProblemSize, action: str) -> ResourceEstimate:
    """MLHiKNN: occurrence counts, memberships and relevance scores (n, q), then the regressions."""
    n, m, q = size.n_train, size.n_queries, size.n_labels
    if action != "fit":
        # The relevance scores, the probabilities, and the fitted (n, q) arrays already held.
        return estimate(alternative=SPARSE_LABEL_ALTERNATIVE, relevance=8.0 * m * q, probabilities=8.0 * m * q)
    return estimate(
        alternative=SPARSE_LABEL_ALTERNATIVE,
        dense_labels=1.0 * n * q,
        label_occurrences=8.0 * n * q,
        memberships=8.0 * n * q,
        relevance=8.0 * n * q,
    ) + logistic_estimate(n, q, q, CG_STEPS_MLHIKNN)


def iblr_estimate(size: ProblemSize, action: str, include_features: bool, C: float = 1.0,
                  max_iter: int = 100) -> ResourceEstimate:
    """IBLR: the (n, p) meta-features, their standardised copy, then the regressions (p = q [+ d])."""
    n, m, q = size.n_train, size.n_queries, size.n_labels
    p = q + (size.n_features if include_features else 0)
    if action != "fit":
        # Counts (int64) and meta-features, the scores and their logistic.
        return estimate(alternative=SPARSE_LABEL_ALTERNATIVE, meta_features=8.0 * 2 * m * p, scores=8.0 * 2 * m * q)
    return estimate(
        alternative=SPARSE_LABEL_ALTERNATIVE,
        dense_labels=1.0 * n * q,
        meta_features=8.0 * n * p,
        standardised=8.0 * n * p,
        # (Z - centre) / scale and its column selection, before the unscaled copy is freed.
        standardise_temporaries=8.0 * n * p,
        coefficient_copies=8.0 * q * p,
    ) + logistic_estimate(n, p, q, CG_STEPS_IBLR if C < NEARLY_UNPENALISED_C else max_iter * _MAX_CG_LARGE)


def dmlknn_estimate(size: ProblemSize, action: str) -> ResourceEstimate:
    """DML-kNN: counting vectors (n, q) int64, their grouping (a sort of the rows), the group sums."""
    n, m, q = size.n_train, size.n_queries, size.n_labels
    pairs = size.neighbor_label_pairs
    if action != "fit":
        # Counting vectors and their grouping, v and v', the likelihoods and the output.
        return estimate(alternative=SPARSE_LABEL_ALTERNATIVE, counting_vectors=8.0 * 4 * m * q, evidence=8.0 * 4 * m * q, posteriors=8.0 * 3 * m * q)
    return estimate(
        alternative=SPARSE_LABEL_ALTERNATIVE,
        dense_labels=1.0 * n * q,
        counting_vectors=8.0 * n * q,
        # np.unique(axis=0): its sorted copy and the groups; then Y as float64 and the
        # per-group positives replace them (measured: about 33 bytes per (n, q) entry).
        grouping=8.0 * 2 * n * q,
        group_sums=8.0 * n * q,
        sparse_encodings=80.0 * pairs,
    )
