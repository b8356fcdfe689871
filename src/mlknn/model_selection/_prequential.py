"""Prequential (test-then-train) evaluation over a stream: one split per batch.

The stream is the dataset in file order, or in a seeded random order. Its first
``n_initial`` instances only train; then each batch of ``batch_size``
instances is first predicted by a model trained on everything before it, and
then joins the training data (Gama, Sebastiao and Rodrigues 2013, "On
evaluating stream learning algorithms": the prequential error, here per batch).
Batch b is the split ``Fold(0, b, train=stream[:n_initial + b * batch_size],
test=the batch)``, so the harness evaluates, stores and resumes it as any other
fold. Train and test indices are in stream order (an index is where the row
arrived), which is what a model trained by ``partial_fit`` on the stream sees.
"""

from collections.abc import Iterator
from typing import TypedDict

import numpy as np

from ..utils._typing import MatrixLike
from ._split import Fold, _check_int, _check_seed


class PrequentialParams(TypedDict):
    """What :meth:`PrequentialSplit.params` returns."""

    batch_size: int
    n_initial: int
    shuffle: bool
    random_state: int | None
    n_repeats: int


class PrequentialSplit:
    """Test-then-train splits of a stream, one per batch.

    Parameters
    ----------
    batch_size : int, default=500
        Instances per tested batch (the last batch may be shorter).
    n_initial : int, optional
        Instances that only train before the first test (default ``batch_size``).
    shuffle : bool, default=False
        False: the stream is the file order. True: a random order drawn from
        ``random_state``.
    random_state : int, default=0
        Seed of the shuffled order.

    See Also
    --------
    mlknn.model_selection.make_protocol : The other protocols.

    Examples
    --------
    >>> import numpy as np
    >>> from mlknn.model_selection import PrequentialSplit
    >>> cv = PrequentialSplit(batch_size=2, n_initial=3)
    >>> [(f.fold, f.train.tolist(), f.test.tolist()) for f in cv.split(np.zeros((7, 1)), None)]
    [(0, [0, 1, 2], [3, 4]), (1, [0, 1, 2, 3, 4], [5, 6])]
    """

    def __init__(self, batch_size: int = 500, n_initial: int | None = None, shuffle: bool = False,
                 random_state: int | None = 0) -> None:  # fmt: skip
        _check_int("batch_size", batch_size, 1, "PrequentialSplit")
        if n_initial is not None:
            _check_int("n_initial", n_initial, 1, "PrequentialSplit")
        _check_seed(random_state, "PrequentialSplit")
        self.batch_size = int(batch_size)
        self.n_initial = int(batch_size if n_initial is None else n_initial)
        self.shuffle = bool(shuffle)
        self.random_state = random_state

    def order(self, n_samples: int) -> np.ndarray:
        """The stream: row indices in arrival order.

        Parameters
        ----------
        n_samples : int

        Returns
        -------
        ndarray of intp
        """
        if not self.shuffle:
            return np.arange(n_samples, dtype=np.intp)
        return np.random.RandomState(self.random_state).permutation(n_samples).astype(np.intp)

    def get_n_splits(self, X: MatrixLike | None = None, Y: MatrixLike | None = None) -> int:
        """Number of tested batches (needs X: it depends on the stream's length).

        Parameters
        ----------
        X : array-like of shape (n_samples, ...)
        Y : ignored

        Returns
        -------
        int
        """
        if X is None:
            raise ValueError("PrequentialSplit.get_n_splits needs X: the number of batches depends on n_samples.")
        n = int(X if isinstance(X, (int, np.integer)) else X.shape[0])
        return max(0, -(-(n - self.n_initial) // self.batch_size))

    def split(self, X: MatrixLike, Y: MatrixLike | None = None) -> Iterator[Fold]:
        """Yield one :class:`Fold` per tested batch (repeat 0, fold = batch number).

        Parameters
        ----------
        X : array-like of shape (n_samples, ...)
        Y : ignored

        Yields
        ------
        Fold
        """
        n = X.shape[0]
        if n <= self.n_initial:
            raise ValueError(
                f"The prequential protocol needs more than n_initial = {self.n_initial} instances (the "
                f"first ones only train); the data has {n}. Lower --batch."
            )
        order = self.order(n)
        for b in range(self.get_n_splits(n)):
            start = self.n_initial + b * self.batch_size
            yield Fold(0, b, order[:start], order[start:start + self.batch_size])

    def params(self) -> PrequentialParams:
        """The splitter's parameters (what the results database records).

        Returns
        -------
        dict
        """
        return {"batch_size": self.batch_size, "n_initial": self.n_initial, "shuffle": self.shuffle,
                "random_state": self.random_state if self.shuffle else None, "n_repeats": 1}  # fmt: skip
