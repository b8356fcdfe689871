"""Synthetic multi-label data sets (no files needed)."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray
from sklearn.datasets import make_multilabel_classification
from sklearn.utils import Bunch, check_random_state

__all__ = [
    "SIMULATED_2D_COMPONENTS",
    "make_extreme_multilabel",
    "make_multilabel",
    "make_simulated_2d",
]

# Younes et al. (2011), section 4.3 and Table 1: seven Gaussians in R^2, one
# per label set over three labels (omega1, omega2, omega3), listed in the
# paper's order. (mean, label set as a 0/1 vector, number of instances)
SIMULATED_2D_COMPONENTS = (
    ((0.0, 0.0), (1, 0, 0), 150),
    ((1.0, 0.0), (0, 1, 0), 162),
    ((0.5, 0.0), (1, 1, 0), 304),
    ((0.5, 1.0), (0, 0, 1), 262),
    ((0.25, 0.6), (1, 0, 1), 43),
    ((0.75, 0.6), (0, 1, 1), 78),
    ((0.5, 0.5), (1, 1, 1), 20),
)


def _apportion(total: int, weights: ArrayLike) -> NDArray[np.int_]:
    """Split ``total`` into integer parts proportional to ``weights``
    (largest-remainder method, ties to the earlier component)."""
    w = np.asarray(weights, dtype=float)
    exact = total * w / w.sum()
    counts: NDArray[np.int_] = np.floor(exact).astype(int)
    short = total - counts.sum()
    order = np.argsort(-(exact - counts), kind="stable")
    counts[order[:short]] += 1
    return counts


def make_simulated_2d(
    n_samples: int | None = None,
    random_state: int | np.random.RandomState | None = 0,
    *,
    cov: float | ArrayLike = 0.01,
    shuffle: bool = True,
) -> Bunch:
    """The simulated 2-D, 3-label data set of Younes et al. (2011).

    Section 4.3 of "A Dependent Multilabel Classification Method Derived from
    the k-Nearest Neighbor Rule" (EURASIP J. Adv. Signal Process., 2011)
    draws 1019 points in R^2 from seven Gaussians with a common covariance
    matrix; each Gaussian is one label set over three labels:

    ============  ==============  ==============================
    mean          label set       instances (Table 1)
    ============  ==============  ==============================
    (0, 0)        {w1}            150
    (1, 0)        {w2}            162
    (0.5, 0)      {w1, w2}        304
    (0.5, 1)      {w3}            262
    (0.25, 0.6)   {w1, w3}        43
    (0.75, 0.6)   {w2, w3}        78
    (0.5, 0.5)    {w1, w2, w3}    20
    ============  ==============  ==============================

    The value of the common covariance matrix is lost in the text we have
    ("equal covariance matrix", no number survives). We use
    ``cov = 0.01 * I`` (standard deviation 0.1 per axis), chosen by a small
    documented experiment (seeds 0-4, k = 8 as in the paper's example, the
    point itself excluded): the fraction of points whose 8 nearest
    neighbours all come from the point's own Gaussian is 0.99-1.00 for sd
    0.05, 0.88-0.91 for sd 0.1, 0.61-0.64 for sd 0.15 and 0.34-0.40 for sd
    0.2; the accuracy of assigning each point to its nearest mean is 0.999,
    0.971, 0.88 and 0.77. With sd 0.05 the groups are separable (nothing left
    for label dependencies to explain); from sd 0.15 on, the small central
    groups ({w1, w3}: 43 points, {w1, w2, w3}: 20 points, means 0.27 apart)
    drown in their neighbours. sd 0.1 keeps every group visible while the
    central ones overlap - the situation the paper's figure illustrates (a
    test point whose neighbours carry several label sets). Pass ``cov`` to
    use another value.

    Parameters
    ----------
    n_samples : int, default=None
        None gives exactly the Table 1 counts (1019 instances). An integer
        rescales the seven counts proportionally (largest remainder), so the
        label-set proportions of Table 1 are kept.
    random_state : int, RandomState instance or None, default=0
        Seed; the output is a deterministic function of it.
    cov : float or array-like of shape (2, 2), default=0.01
        Common covariance: a scalar variance (times the identity) or a full
        2 x 2 matrix.
    shuffle : bool, default=True
        Shuffle the rows; when False, rows are grouped by component in the
        order of the table above.

    Returns
    -------
    data : sklearn.utils.Bunch
        ``X`` (float64, (n, 2)), ``Y`` (uint8, (n, 3)), ``feature_names``
        (``['x1', 'x2']``), ``label_names`` (``['omega1', 'omega2',
        'omega3']``), ``component`` (int array, index 0-6 of the Gaussian
        each row was drawn from), ``name`` (``'simulated-2d'``).

    See Also
    --------
    make_multilabel : Random multi-label data of any size.
    make_extreme_multilabel : Sparse data with a many-label, power-law label space.

    References
    ----------
    Z. Younes, F. Abdallah, T. Denoeux and H. Snoussi, "A Dependent Multilabel
    Classification Method Derived from the k-Nearest Neighbor Rule", EURASIP J.
    Adv. Signal Process., 2011, section 4.3 and Table 1.

    Examples
    --------
    >>> d = make_simulated_2d()
    >>> d.X.shape, d.Y.shape, int(d.Y.sum(axis=0)[0])
    ((1019, 2), (1019, 3), 517)
    """
    rng = check_random_state(random_state)
    means = np.array([c[0] for c in SIMULATED_2D_COMPONENTS])
    labels = np.array([c[1] for c in SIMULATED_2D_COMPONENTS], dtype=np.uint8)
    counts = np.array([c[2] for c in SIMULATED_2D_COMPONENTS])
    if n_samples is not None:
        n_samples = int(n_samples)
        if n_samples < 1:
            raise ValueError(f"n_samples must be >= 1, got {n_samples}")
        counts = _apportion(n_samples, counts)
    cov = np.asarray(cov, dtype=float)
    if cov.ndim == 0:
        cov = cov * np.eye(2)
    if cov.shape != (2, 2):
        raise ValueError(f"cov must be a scalar or a 2x2 matrix, got shape {cov.shape}")
    component = np.repeat(np.arange(len(counts)), counts)
    # Draw all points from N(0, cov) in one call and shift each by its mean:
    # equivalent to per-component draws (the covariance is common) and the
    # whole output is a function of the seed alone.
    X = (
        rng.multivariate_normal(np.zeros(2), cov, size=component.size)
        + means[component]
    )
    if shuffle:
        perm = rng.permutation(component.size)
        X, component = X[perm], component[perm]
    return Bunch(
        X=np.ascontiguousarray(X, dtype=np.float64),
        Y=labels[component].copy(),
        feature_names=["x1", "x2"],
        label_names=["omega1", "omega2", "omega3"],
        component=component,
        name="simulated-2d",
    )


def make_multilabel(
    n_samples: int = 1000,
    n_features: int = 20,
    n_labels: int = 5,
    random_state: int | np.random.RandomState | None = 0,
    **kw: Any,
) -> Bunch:
    """Random multi-label data from :func:`sklearn.datasets.make_multilabel_classification`.

    A thin wrapper returning the same Bunch layout as :func:`load`.

    Parameters
    ----------
    n_samples : int, default=1000
        Number of instances.
    n_features : int, default=20
        Number of features.
    n_labels : int, default=5
        Number of labels q (scikit-learn's ``n_classes``). Note the name
        clash: scikit-learn's own ``n_labels`` is the *average* number of
        labels per instance; pass it here as ``avg_labels`` (default 2).
    random_state : int, RandomState instance or None, default=0
        Seed of the draw; the default 0 gives the same data on every call.
    **kw
        Other keyword arguments of ``make_multilabel_classification``
        (``length``, ``allow_unlabeled``, ``sparse``, ``avg_labels`` ...).

    Returns
    -------
    data : sklearn.utils.Bunch
        ``X`` (float64 ndarray, or CSR with ``sparse=True``), ``Y`` (uint8,
        (n, q)), ``feature_names`` (``x0``...), ``label_names`` (``y0``...),
        ``name`` (``'multilabel'``).

    See Also
    --------
    sklearn.datasets.make_multilabel_classification : The generator behind it.
    make_extreme_multilabel : Sparse data with a many-label, power-law label space.
    make_simulated_2d : The two-dimensional data of the MLHiKNN paper.

    Examples
    --------
    >>> from mlknn.datasets import make_multilabel
    >>> data = make_multilabel(n_samples=50, n_features=4, n_labels=3, random_state=0)
    >>> data.X.shape, data.Y.shape, data.Y.dtype, data.label_names
    ((50, 4), (50, 3), dtype('uint8'), ['y0', 'y1', 'y2'])
    """
    for bad in ("n_classes", "return_indicator", "return_distributions"):
        if bad in kw:
            raise TypeError(f"make_multilabel() does not accept {bad!r}")
    if "avg_labels" in kw:
        kw["n_labels"] = kw.pop("avg_labels")
    X, Y = make_multilabel_classification(
        n_samples=n_samples,
        n_features=n_features,
        n_classes=n_labels,
        random_state=random_state,
        return_indicator="dense",
        **kw,
    )
    X = X.astype(np.float64)
    return Bunch(
        X=X,
        Y=np.asarray(Y, dtype=np.uint8),
        feature_names=[f"x{i}" for i in range(n_features)],
        label_names=[f"y{j}" for j in range(n_labels)],
        name="multilabel",
    )


def _draw_from_blocks(
    rng: np.random.Generator,
    cum: NDArray[np.float64],
    lo: NDArray[np.integer[Any]],
    hi: NDArray[np.integer[Any]],
) -> NDArray[np.intp]:
    """One index per entry of ``lo``/``hi``: inverse-CDF draws from ``cum[lo:hi]``'s weights.

    ``cum`` is the cumulative sum of non-negative weights; entry i draws an
    index j in ``[lo[i], hi[i])`` with probability proportional to weight j.
    """
    base = np.where(lo > 0, cum[np.maximum(lo - 1, 0)], 0.0)
    u = base + rng.random(lo.size) * (cum[hi - 1] - base)
    idx: NDArray[np.intp] = np.minimum(np.searchsorted(cum, u, side="right"), hi - 1)
    return idx


def _unit_rows(rng: np.random.Generator, m: int, d: int) -> NDArray[np.float32]:
    """``m`` standard normal rows of length ``d``, as float32, normalised to unit length.

    Drawn and normalised in row blocks: the float64 draws and the squares of the
    norm exist for one block at a time (at q = 10^6 labels, d = 128, the whole
    float64 draw alone would be 1 GB). The numbers are those of one
    ``rng.standard_normal((m, d))`` call: the generator fills an array in order, so
    consecutive blocks continue the same stream, and each row's norm only reads
    that row.
    """
    out = np.empty((m, d), dtype=np.float32)
    step = max(1, (1 << 22) // d)
    for s in range(0, m, step):
        block = out[s : min(m, s + step)]
        block[...] = rng.standard_normal(block.shape)
        block /= np.linalg.norm(block, axis=1, keepdims=True)
    return out


def make_extreme_multilabel(
    n_samples: int = 10_000,
    n_features: int = 128,
    n_labels: int = 1000,
    *,
    labels_per_row: float = 5,
    n_topics: int | None = None,
    power: float = 1.0,
    head_fraction: float = 0.2,
    noise: float = 0.6,
    label_signal: float = 0.6,
    random_state: int | np.random.Generator | None = 0,
) -> Bunch:
    """Embedding-like data with a power-law label space (extreme classification).

    A generative model in which neighbours really share labels:

    1. Label popularity is Zipfian, ``w_j ~ rank_j^(-power)`` (ranks in a random
       order over the label indices): a few labels are very frequent, most
       have a handful of examples or none.
    2. Every label belongs to one of ``n_topics`` topics (uniformly at random);
       a topic's popularity is the sum of its labels' ``w_j``, so popular
       labels live in popular topics. Each topic has a centre on the unit
       sphere in R^d, each label a direction ``v_j``.
    3. A row draws a topic and wants ``1 + Poisson(labels_per_row - 1)``
       distinct labels: the first distinct ones of three times as many draws,
       a ``head_fraction`` of the draws from the global popularity (head labels
       shared across topics), the rest from its topic's labels by ``w_j``
       (a row of a topic with few labels may get fewer).
    4. Its features are ``centre_topic + label_signal * mean(v_j) +
       noise * N(0, I/d)``, normalised to unit length (float32), so both
       Euclidean and cosine neighbours work.

    Memory is O(nnz(Y) + n d + q d): Y is built as CSR and never as an n x q
    array; features are drawn in row blocks in float32.

    Parameters
    ----------
    n_samples : int, default=10_000
        Number of instances.
    n_features : int, default=128
        Dimension d of the embeddings.
    n_labels : int, default=1000
        Number of labels q.
    labels_per_row : float, default=5
        Mean number of draws per row (>= 1).
    n_topics : int, default=None
        Number of topics; default ``max(1, n_labels // 10)``.
    power : float, default=1.0
        Zipf exponent of the label popularity (> 0).
    head_fraction : float, default=0.2
        Share of label draws from the global popularity, in [0, 1].
    noise : float, default=0.6
        Standard deviation of the isotropic noise, in units of the centres'
        norm 1 (per coordinate ``noise / sqrt(d)``).
    label_signal : float, default=0.6
        Weight of the mean label direction.
    random_state : int, numpy.random.Generator or None, default=0
        Seed; the output is a deterministic function of it and the other
        arguments.

    Returns
    -------
    data : sklearn.utils.Bunch
        ``X`` (float32 ndarray (n, d), unit rows), ``Y`` (``scipy.sparse.csr_array``
        uint8 (n, q), sorted indices), ``topic`` (int64 (n,)), ``label_topic``
        (int64 (q,)), ``label_weight`` (float64 (q,), the popularity ``w``,
        normalised to sum 1), ``feature_names``, ``label_names``, ``name``
        (``'extreme-synthetic'``).

    See Also
    --------
    make_multilabel : Dense random data with few labels.
    mlknn.metrics.precision_at_k : The measure used on such label spaces.

    Examples
    --------
    >>> d = make_extreme_multilabel(2000, n_features=16, n_labels=500, random_state=1)
    >>> d.X.shape, d.X.dtype, d.Y.shape, d.Y.dtype
    ((2000, 16), dtype('float32'), (2000, 500), dtype('uint8'))
    >>> 4.0 < d.Y.nnz / 2000 < 5.5
    True
    """
    for name, v, lo in (
        ("n_samples", n_samples, 1),
        ("n_features", n_features, 1),
        ("n_labels", n_labels, 1),
    ):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
            raise ValueError(f"{name} must be an int >= {lo}; got {v!r}.")
    if n_topics is None:
        n_topics = max(1, n_labels // 10)
    if (
        isinstance(n_topics, bool)
        or not isinstance(n_topics, (int, np.integer))
        or not 1 <= n_topics <= n_labels
    ):
        raise ValueError(
            f"n_topics must be an int in [1, n_labels={n_labels}]; got {n_topics!r}."
        )
    for name, x, ok, rule in (
        ("labels_per_row", labels_per_row, labels_per_row >= 1, ">= 1"),
        ("power", power, power > 0, "> 0"),
        ("head_fraction", head_fraction, 0 <= head_fraction <= 1, "in [0, 1]"),
        ("noise", noise, noise >= 0, ">= 0"),
        ("label_signal", label_signal, label_signal >= 0, ">= 0"),
    ):
        if not np.isfinite(x) or not ok:
            raise ValueError(f"{name} must be a finite number {rule}; got {x!r}.")
    n, d, q, T = int(n_samples), int(n_features), int(n_labels), int(n_topics)
    rng = (
        random_state
        if isinstance(random_state, np.random.Generator)
        else np.random.default_rng(random_state)
    )

    # 1-2. Popularity, topics, label order grouped by topic (for block draws).
    weight = np.empty(q)
    weight[rng.permutation(q)] = np.arange(1, q + 1, dtype=np.float64) ** -power
    weight /= weight.sum()
    label_topic = rng.integers(0, T, size=q)
    by_topic = np.argsort(label_topic, kind="stable")
    starts = np.searchsorted(label_topic[by_topic], np.arange(T + 1))
    cum_topic = np.cumsum(weight[by_topic])
    topic_weight = np.bincount(label_topic, weights=weight, minlength=T)
    occupied = np.flatnonzero(topic_weight > 0)  # a topic may own no label
    centres = _unit_rows(rng, T, d)
    directions = _unit_rows(rng, q, d)

    # 3. Labels: per row a topic and 1 + Poisson(m - 1) distinct labels, the
    # first distinct ones of 3 x that many draws (popular labels repeat).
    topic_cum = np.cumsum(topic_weight[occupied])
    topic = occupied[
        np.minimum(
            np.searchsorted(topic_cum, rng.random(n) * topic_cum[-1]), occupied.size - 1
        )
    ]
    want = 1 + rng.poisson(labels_per_row - 1, size=n)
    rows = np.repeat(np.arange(n), 3 * want)
    t = topic[rows]
    lab = by_topic[_draw_from_blocks(rng, cum_topic, starts[t], starts[t + 1])]
    head = rng.random(rows.size) < head_fraction
    n_head = int(head.sum())
    lab[head] = _draw_from_blocks(
        rng, np.cumsum(weight), np.zeros(n_head, np.int64), np.full(n_head, q)
    )
    pos = np.arange(rows.size)  # draw order (rows are contiguous, in order)
    first = np.lexsort((pos, lab, rows))
    keep = np.ones(first.size, bool)
    keep[1:] = (rows[first][1:] != rows[first][:-1]) | (
        lab[first][1:] != lab[first][:-1]
    )
    kept = np.sort(first[keep])  # first occurrences, back in draw order
    r_k = rows[kept]
    rank = np.arange(kept.size) - np.searchsorted(
        r_k, r_k
    )  # rank among the row's distinct
    kept = kept[rank < want[r_k]]
    Y = sp.csr_array(
        (np.ones(kept.size, np.uint8), (rows[kept], lab[kept])), shape=(n, q)
    )
    Y.sort_indices()

    # 4. Features, in row blocks (the noise and the label means are n x d).
    X = np.empty((n, d), dtype=np.float32)
    counts = np.diff(Y.indptr).astype(np.float32)
    step = max(1, (1 << 22) // d)
    for s in range(0, n, step):
        e = min(n, s + step)
        mean_dir = (Y[s:e].astype(np.float32) @ directions) / counts[s:e, None]
        block = centres[topic[s:e]] + label_signal * mean_dir
        block += rng.standard_normal((e - s, d), dtype=np.float32) * np.float32(
            noise / np.sqrt(d)
        )
        block /= np.maximum(
            np.linalg.norm(block, axis=1, keepdims=True), np.float32(1e-12)
        )
        X[s:e] = block
    return Bunch(
        X=X,
        Y=Y,
        topic=topic.astype(np.int64),
        label_topic=label_topic.astype(np.int64),
        label_weight=weight,
        feature_names=[f"x{i}" for i in range(d)],
        label_names=[f"y{j}" for j in range(q)],
        name="extreme-synthetic",
    )
