"""The one train/test split a dataset comes with, or a seeded 50/50 one when it has none."""

from collections.abc import Iterator
from typing import TypedDict

import numpy as np

from ..utils._typing import MatrixLike
from ._split import Fold


class GivenParams(TypedDict):
    """The parameters of :class:`GivenSplit` (its :meth:`~GivenSplit.params`)."""

    splitter: str
    n_repeats: int
    n_test: int | None
    test_size: float
    random_state: int | None


class GivenSplit:
    """One train/test split: the data's own, or a seeded random one.

    Parameters
    ----------
    n_test : int, default=None
        The data's fixed split: its last ``n_test`` rows are the test part, the
        rows before them the training part (a dataset's train file followed by its
        test file). None: the data has no split of its own.
    test_size : float, default=0.5
        Without ``n_test``: the test fraction of a random split, drawn as
        :func:`sklearn.model_selection.train_test_split` draws it.
    random_state : int, default=0
        Seed of the random split.

    See Also
    --------
    RepeatedHoldout : Several seeded random splits.
    mlknn.experiments.ProtocolConfig : Protocol ``"given"`` runs this splitter in the harness.

    Notes
    -----
    The random split keeps the order in which ``train_test_split`` draws the rows
    (its indices are not sorted, unlike the other splitters' folds): the
    estimators see the rows in the order a plain ``train_test_split`` gives them,
    so that ties between equally distant neighbours break the same way.

    Examples
    --------
    >>> import numpy as np
    >>> from mlknn.model_selection import GivenSplit
    >>> fold = next(GivenSplit(n_test=2).split(np.zeros((5, 1)), np.zeros((5, 1))))
    >>> fold.train, fold.test
    (array([0, 1, 2]), array([3, 4]))
    """

    def __init__(self, n_test: int | None = None, test_size: float = 0.5, random_state: int | None = 0) -> None:
        self.n_test = n_test
        self.test_size = test_size
        self.random_state = random_state

    def get_n_splits(self, X: MatrixLike | None = None, Y: MatrixLike | None = None) -> int:
        """The number of splits: one.

        Parameters
        ----------
        X, Y : ignored
            For the scikit-learn splitter interface.

        Returns
        -------
        int
            1.
        """
        return 1

    def split(self, X: MatrixLike, Y: MatrixLike | None = None) -> Iterator[Fold]:
        """Yield the one train/test split of ``X``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            The data (only its number of rows is used).
        Y : ignored
            For the splitter interface.

        Yields
        ------
        Fold
            Repeat 0, fold 0.
        """
        n_samples = X.shape[0]
        if self.n_test is not None:
            if not 0 < self.n_test < n_samples:
                raise ValueError(
                    f"The 'n_test' parameter of GivenSplit must be in [1, n_samples - 1] = [1, {n_samples - 1}]. "
                    f"Got {self.n_test!r} instead."
                )
            rows = np.arange(n_samples, dtype=np.intp)
            yield Fold(0, 0, rows[: n_samples - self.n_test], rows[n_samples - self.n_test :])
            return
        from sklearn.model_selection import train_test_split

        train, test = train_test_split(
            np.arange(n_samples, dtype=np.intp), test_size=self.test_size, random_state=self.random_state
        )
        yield Fold(0, 0, train, test)

    def params(self) -> GivenParams:
        """The splitter's parameters (the protocol's identity in a results database).

        Returns
        -------
        dict
            ``splitter`` ("given"), ``n_repeats`` (1), ``n_test``, ``test_size`` and ``random_state``.
        """
        return {"splitter": "given", "n_repeats": 1, "n_test": self.n_test, "test_size": float(self.test_size),
                "random_state": self.random_state}  # fmt: skip
