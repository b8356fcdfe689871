"""Repeated k-fold and repeated hold-out for multi-label data."""

import hashlib
import math
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any, Literal, TypedDict

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from ..utils._typing import MatrixLike
from ._stratify import stratified_holdout_split, stratified_kfold_test_folds

#: name -> defaults of :func:`make_protocol` (ints, and a float for ``test_size``).
PROTOCOLS: dict[str, dict[str, float]] = {
    "kfold": {"n_splits": 10, "n_repeats": 5},
    "5x2": {"n_splits": 2, "n_repeats": 5},
    "holdout": {"test_size": 0.2, "n_repeats": 10},
}


@dataclass(frozen=True)
class Fold:
    """One train/test split.

    Parameters
    ----------
    repeat : int
        0-based repetition.
    fold : int
        0-based fold within the repetition (always 0 for hold-out).
    train, test : ndarray of intp
        Sorted row indices.
    """

    repeat: int
    fold: int
    train: NDArray[np.intp]
    test: NDArray[np.intp]


class KFoldParams(TypedDict):
    """What :meth:`RepeatedMultilabelKFold.params` records."""

    splitter: Literal["kfold"]
    n_splits: int
    n_repeats: int
    stratify: bool
    random_state: int | None


class HoldoutParams(TypedDict):
    """What :meth:`RepeatedHoldout.params` records."""

    splitter: Literal["holdout"]
    test_size: float
    n_repeats: int
    stratify: bool
    random_state: int | None


def _check_int(name: str, value: object, low: int, owner: str) -> None:
    if isinstance(value, bool) or not isinstance(value, Integral) or value < low:
        raise ValueError(
            f"The '{name}' parameter of {owner} must be an int >= {low}. Got {value!r} instead."
        )


def _check_seed(value: object, owner: str) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, Integral) or value < 0):
        raise ValueError(
            f"The 'random_state' parameter of {owner} must be a non-negative int or None. "
            f"Got {value!r} instead."
        )


def _repeat_seeds(random_state: int | None, n_repeats: int) -> list[int]:
    # One independent seed per repetition, derived from random_state only.
    rng = np.random.RandomState(random_state)
    return [int(s) for s in rng.randint(0, 2**31 - 1, size=n_repeats)]


def _stratification_labels(Y: MatrixLike) -> MatrixLike:
    """Y for stratification: a canonical CSR array when sparse (never densified), else uint8."""
    from ..utils._validation import check_label_matrix

    return check_label_matrix(Y, accept_sparse=True)


class RepeatedMultilabelKFold:
    """k-fold cross-validation repeated with different shuffles.

    Parameters
    ----------
    n_splits : int, default=10
        Folds per repetition (>= 2).
    n_repeats : int, default=5
        Repetitions (>= 1).
    stratify : bool, default=False
        Iterative stratification on the label matrix
        (``iterstrat.ml_stratifiers.MultilabelStratifiedKFold`` for a dense Y; for a
        sparse Y the same folds computed on its CSR indices without densifying, see
        :mod:`mlknn.model_selection._stratify`); otherwise a plain shuffled
        ``sklearn.model_selection.KFold``.
    random_state : int or None, default=None
        Seed of the whole protocol; repetition r uses the r-th draw of
        ``RandomState(random_state)``, so the first r repetitions do not depend
        on ``n_repeats`` (a quick run with fewer repetitions is a prefix of the
        full one).

    See Also
    --------
    RepeatedHoldout : Repeated random train/test splits.
    make_protocol : The papers' protocols by name.

    References
    ----------
    K. Sechidis, G. Tsoumakas and I. Vlahavas, "On the Stratification of
    Multi-Label Data", ECML PKDD 2011 (iterative stratification).

    Examples
    --------
    >>> import numpy as np
    >>> cv = RepeatedMultilabelKFold(n_splits=2, n_repeats=5, random_state=0)
    >>> folds = list(cv.split(np.zeros((10, 1)), np.eye(10, 2)))
    >>> len(folds), sorted(np.concatenate([folds[0].test, folds[1].test]).tolist()) == list(range(10))
    (10, True)
    """

    def __init__(
        self, n_splits: int = 10, n_repeats: int = 5, *, stratify: bool = False, random_state: int | None = None
    ) -> None:
        self.n_splits = n_splits
        self.n_repeats = n_repeats
        self.stratify = stratify
        self.random_state = random_state

    def _validate(self, n_samples: int | None = None) -> None:
        owner = type(self).__name__
        _check_int("n_splits", self.n_splits, 2, owner)
        _check_int("n_repeats", self.n_repeats, 1, owner)
        _check_seed(self.random_state, owner)
        if n_samples is not None and self.n_splits > n_samples:
            raise ValueError(
                f"The 'n_splits' parameter of {owner} must be <= n_samples = {n_samples}. "
                f"Got {self.n_splits} instead."
            )

    def get_n_splits(self, X: MatrixLike | None = None, Y: MatrixLike | None = None) -> int:
        """Number of (repeat, fold) splits.

        Parameters
        ----------
        X, Y : object, default=None
            Ignored (scikit-learn's splitter signature).

        Returns
        -------
        int
            ``n_splits * n_repeats``.
        """
        self._validate()
        return self.n_splits * self.n_repeats

    def split(self, X: MatrixLike, Y: MatrixLike) -> Iterator[Fold]:
        """Yield :class:`Fold` objects, repetition by repetition.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Only its number of rows is used.
        Y : {array-like, sparse matrix} of shape (n_samples, n_labels)
            Label matrix (used when ``stratify``; a sparse Y stays sparse).

        Yields
        ------
        Fold
        """
        from sklearn.model_selection import KFold

        n = X.shape[0]
        self._validate(n)
        Yd = _stratification_labels(Y) if self.stratify else None
        for r, seed in enumerate(_repeat_seeds(self.random_state, self.n_repeats)):
            if self.stratify and sp.issparse(Yd):
                test_folds = stratified_kfold_test_folds(Yd, self.n_splits, seed)
                parts = ((np.flatnonzero(test_folds != f), np.flatnonzero(test_folds == f)) for f in range(self.n_splits))
            elif self.stratify:
                from iterstrat.ml_stratifiers import MultilabelStratifiedKFold

                splitter = MultilabelStratifiedKFold(n_splits=self.n_splits, shuffle=True, random_state=seed)
                parts = splitter.split(np.zeros((n, 1)), Yd)
            else:
                parts = KFold(n_splits=self.n_splits, shuffle=True, random_state=seed).split(np.zeros((n, 1)))
            for f, (tr, te) in enumerate(parts):
                yield Fold(r, f, np.sort(tr).astype(np.intp), np.sort(te).astype(np.intp))

    def params(self) -> KFoldParams:
        """The parameters that define the folds (for recording).

        Returns
        -------
        dict
            ``splitter``, ``n_splits``, ``n_repeats``, ``stratify``, ``random_state``.
        """
        return {
            "splitter": "kfold",
            "n_splits": int(self.n_splits),
            "n_repeats": int(self.n_repeats),
            "stratify": bool(self.stratify),
            "random_state": self.random_state,
        }


class RepeatedHoldout:
    """Repeated random train/test split (the BML-kNN paper: 10 x 80/20).

    Parameters
    ----------
    test_size : float, default=0.2
        Fraction of the instances in each test set, in (0, 1).
    n_repeats : int, default=10
        Repetitions (>= 1).
    stratify : bool, default=False
        Iterative stratification
        (``iterstrat.ml_stratifiers.MultilabelStratifiedShuffleSplit`` for a dense Y;
        for a sparse Y the same split computed on its CSR indices).
    random_state : int or None, default=None
        Seed of the whole protocol; repetition r uses the r-th draw of
        ``RandomState(random_state)``, so the first r repetitions do not depend
        on ``n_repeats``.

    See Also
    --------
    RepeatedMultilabelKFold : Repeated k-fold cross-validation.
    make_protocol : The papers' protocols by name.

    References
    ----------
    "A Neighborhood Model with Both Distance and Quantity Constraints for
    Multilabel Data": 10 x 80/20 hold-out.

    K. Sechidis, G. Tsoumakas and I. Vlahavas, "On the Stratification of
    Multi-Label Data", ECML PKDD 2011 (iterative stratification).

    Examples
    --------
    >>> import numpy as np
    >>> cv = RepeatedHoldout(test_size=0.2, n_repeats=3, random_state=0)
    >>> [len(f.test) for f in cv.split(np.zeros((50, 1)), np.eye(50, 3))]
    [10, 10, 10]
    """

    def __init__(
        self, test_size: float = 0.2, n_repeats: int = 10, *, stratify: bool = False, random_state: int | None = None
    ) -> None:
        self.test_size = test_size
        self.n_repeats = n_repeats
        self.stratify = stratify
        self.random_state = random_state

    def _validate(self) -> None:
        owner = type(self).__name__
        if isinstance(self.test_size, bool) or not isinstance(self.test_size, Real) or not 0 < self.test_size < 1:
            raise ValueError(
                f"The 'test_size' parameter of {owner} must be a float in the range (0, 1). "
                f"Got {self.test_size!r} instead."
            )
        _check_int("n_repeats", self.n_repeats, 1, owner)
        _check_seed(self.random_state, owner)

    def get_n_splits(self, X: MatrixLike | None = None, Y: MatrixLike | None = None) -> int:
        """Number of splits: one per repetition.

        Parameters
        ----------
        X, Y : object, default=None
            Ignored (scikit-learn's splitter signature).

        Returns
        -------
        int
            ``n_repeats``.
        """
        self._validate()
        return self.n_repeats

    def split(self, X: MatrixLike, Y: MatrixLike) -> Iterator[Fold]:
        """Yield one :class:`Fold` (fold 0) per repetition.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Only its number of rows is used.
        Y : {array-like, sparse matrix} of shape (n_samples, n_labels)
            Label matrix (used when ``stratify``; a sparse Y stays sparse).

        Yields
        ------
        Fold
            One split per repetition, ``fold`` always 0.
        """
        from sklearn.model_selection import ShuffleSplit

        self._validate()
        n = X.shape[0]
        Yd = _stratification_labels(Y) if self.stratify else None
        for r, seed in enumerate(_repeat_seeds(self.random_state, self.n_repeats)):
            if self.stratify and sp.issparse(Yd):
                tr, te = stratified_holdout_split(Yd, math.ceil(self.test_size * n), seed)
            elif self.stratify:
                from iterstrat.ml_stratifiers import MultilabelStratifiedShuffleSplit

                splitter = MultilabelStratifiedShuffleSplit(n_splits=1, test_size=self.test_size, random_state=seed)
                tr, te = next(iter(splitter.split(np.zeros((n, 1)), Yd)))
            else:
                tr, te = next(iter(ShuffleSplit(n_splits=1, test_size=self.test_size, random_state=seed).split(np.zeros((n, 1)))))
            yield Fold(r, 0, np.sort(tr).astype(np.intp), np.sort(te).astype(np.intp))

    def params(self) -> HoldoutParams:
        """The parameters that define the splits (for recording).

        Returns
        -------
        dict
            ``splitter``, ``test_size``, ``n_repeats``, ``stratify``, ``random_state``.
        """
        return {
            "splitter": "holdout",
            "test_size": float(self.test_size),
            "n_repeats": int(self.n_repeats),
            "stratify": bool(self.stratify),
            "random_state": self.random_state,
        }


def make_protocol(
    name: str,
    *,
    n_splits: int | None = None,
    n_repeats: int | None = None,
    test_size: float | None = None,
    stratify: bool = False,
    random_state: int | None = 0,
) -> RepeatedMultilabelKFold | RepeatedHoldout:
    """A splitter by protocol name, with the papers' defaults.

    Parameters
    ----------
    name : {"kfold", "5x2", "holdout"}
        ``kfold``: 5 x 10-fold (Younes et al. 2011); ``5x2``: 5 x 2-fold (Teng et al. 2025);
        ``holdout``: 10 x 80/20 (BML-kNN paper).
    n_splits, n_repeats, test_size : optional
        Override the defaults (``n_splits`` is not allowed for hold-out,
        ``test_size`` only for hold-out).
    stratify : bool, default=False
        Iterative multi-label stratification of the folds or splits (see the protocol
        classes).
    random_state : int, default=0
        Seed of the whole protocol (see the protocol classes).

    Returns
    -------
    RepeatedMultilabelKFold or RepeatedHoldout

    See Also
    --------
    RepeatedMultilabelKFold, RepeatedHoldout : The splitters returned.

    References
    ----------
    Z. Younes, F. Abdallah, T. Denoeux and H. Snoussi, "A Dependent Multilabel
    Classification Method Derived from the k-Nearest Neighbor Rule", EURASIP J.
    Adv. Signal Process., 2011, section 5 (5 x 10-fold cross-validation).

    "A Hubness Information-Based k-Nearest Neighbor Approach for Multi-Label
    Learning", Mathematics 2025, the protocol (5 x 2-fold cross-validation).

    "A Neighborhood Model with Both Distance and Quantity Constraints for
    Multilabel Data": 10 x 80/20 hold-out.

    Examples
    --------
    >>> from mlknn.model_selection import make_protocol
    >>> cv = make_protocol("5x2")
    >>> type(cv).__name__, cv.n_splits, cv.n_repeats
    ('RepeatedMultilabelKFold', 2, 5)
    >>> type(make_protocol("holdout", n_repeats=3)).__name__
    'RepeatedHoldout'
    """
    if name not in PROTOCOLS:
        raise ValueError(
            f"The 'protocol' parameter must be one of {sorted(PROTOCOLS)}. Got {name!r} instead."
        )
    defaults = PROTOCOLS[name]
    given = {"n_splits": n_splits, "n_repeats": n_repeats, "test_size": test_size}
    for key, value in given.items():
        if value is not None and key not in defaults:
            raise ValueError(_NOT_APPLICABLE[key].format(name=name, value=value))
    cls = RepeatedHoldout if name == "holdout" else RepeatedMultilabelKFold
    # Per key an int, or the float test_size, which one dict type cannot say; each
    # splitter validates its own sizes.
    sizes: dict[str, Any] = {key: defaults[key] if given[key] is None else given[key] for key in defaults}
    return cls(**sizes, stratify=stratify, random_state=random_state)


#: The error of a protocol size given to a protocol without it.
_NOT_APPLICABLE = {
    "n_splits": "The 'n_splits' (--folds) parameter does not apply to protocol '{name}' "
    "(one split per repetition). Got {value!r}.",
    "test_size": "The 'test_size' parameter only applies to protocol 'holdout'; got protocol {name!r}.",
}


def encode_indices(indices: ArrayLike, n_samples: int) -> bytes:
    """Compact bytes for a set of row indices: zlib of the packed bit mask.

    Parameters
    ----------
    indices : array-like of int
        The row indices to encode, each in ``[0, n_samples)``.
    n_samples : int
        The number of rows, the length of the bit mask.

    Returns
    -------
    bytes

    See Also
    --------
    decode_indices : The inverse.

    Examples
    --------
    >>> from mlknn.model_selection import decode_indices, encode_indices
    >>> blob = encode_indices([0, 3, 4, 9], n_samples=10)
    >>> type(blob).__name__, decode_indices(blob, 10).tolist()
    ('bytes', [0, 3, 4, 9])
    """
    mask = np.zeros(int(n_samples), dtype=bool)
    mask[np.asarray(indices, dtype=np.intp)] = True
    return zlib.compress(np.packbits(mask).tobytes(), 9)


def decode_indices(blob: bytes, n_samples: int) -> NDArray[np.intp]:
    """Inverse of :func:`encode_indices`: sorted intp indices.

    Parameters
    ----------
    blob : bytes
        The output of :func:`encode_indices`.
    n_samples : int
        The ``n_samples`` it was encoded with.

    Returns
    -------
    ndarray of intp
        The row indices, ascending.

    See Also
    --------
    encode_indices : The inverse.

    Examples
    --------
    >>> from mlknn.model_selection import decode_indices, encode_indices
    >>> decode_indices(encode_indices([7, 2], n_samples=8), 8).tolist()
    [2, 7]
    """
    bits = np.unpackbits(np.frombuffer(zlib.decompress(blob), dtype=np.uint8))[: int(n_samples)]
    return np.flatnonzero(bits).astype(np.intp)


def indices_checksum(train: ArrayLike, test: ArrayLike) -> str:
    """sha256 over the sorted train and test indices (int64 little-endian)."""
    h = hashlib.sha256()
    h.update(np.asarray(train, dtype="<i8").tobytes())
    h.update(b"|")
    h.update(np.asarray(test, dtype="<i8").tobytes())
    return h.hexdigest()
