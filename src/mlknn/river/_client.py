"""The adapter class of :mod:`mlknn.river`."""

from typing import Any

import numpy as np
from sklearn.base import clone

from ..utils import check_optional_dependency

try:  # the base class when river is installed; the constructor says what to install otherwise
    from river.base import MultiLabelClassifier as _RiverBase
except ImportError:  # pragma: no cover - exercised where river is absent
    _RiverBase = object  # type: ignore[assignment,misc]


class RiverMultiLabel(_RiverBase):
    """An mlknn estimator as a river multi-label classifier (``learn_one`` / ``predict_one`` on dicts).

    Parameters
    ----------
    estimator : mlknn estimator
        Cloned, never modified. An estimator with ``partial_fit`` is updated
        with the new rows; any other is refitted on every row seen.
    labels : list, optional
        The label names, in the order of the estimator's columns. Default: the
        keys of the first ``y`` given to ``learn_one``. A label missing from a
        later ``y`` is unknown (NaN: learned from the observed labels only by
        the estimators with ``missing_labels``, docs/incomplete_labels.md).
    batch : int, default=1
        Rows gathered before the model is updated (1: after every row). With
        ``batch = b`` and ``n_initial = b`` the predictions are those of the
        harness's prequential protocol with ``--batch b`` on the same order.
    n_initial : int, optional
        Rows before the first fit (default: ``n_neighbors + 1`` of the
        estimator, at least ``batch``); until then the predictions are empty.

    Attributes
    ----------
    model_ : fitted estimator or None
        The estimator as last updated.
    features_ : list
        The feature names, in the order of the first ``x`` (a name missing
        from a later ``x`` is 0).

    See Also
    --------
    mlknn.experiments.ProtocolConfig : ``"prequential"``, the same evaluation in the harness.

    Examples
    --------
    >>> from river import evaluate, metrics
    >>> from mlknn import MLkNN
    >>> from mlknn.river import RiverMultiLabel
    >>> stream = [({"a": i % 7, "b": i % 3}, {"x": i % 2 == 0, "y": i % 3 == 0}) for i in range(60)]
    >>> model = RiverMultiLabel(MLkNN(n_neighbors=3), batch=10)
    >>> score = evaluate.progressive_val_score(stream, model, metrics.multioutput.MicroAverage(metrics.F1()))
    >>> model.model_.n_train_
    50
    """

    def __init__(self, estimator: Any, labels: list[Any] | None = None, batch: int = 1,
                 n_initial: int | None = None) -> None:  # fmt: skip
        check_optional_dependency("river", "mlknn.river")
        if isinstance(batch, bool) or not isinstance(batch, (int, np.integer)) or batch < 1:
            raise ValueError(f"The 'batch' parameter of RiverMultiLabel must be an int >= 1. Got {batch!r} instead.")
        self.estimator = estimator
        self.labels = labels
        self.batch = batch
        self.n_initial = n_initial
        self.model_: Any = None
        self.features_: list[Any] | None = None
        self._labels: list[Any] | None = None if labels is None else list(labels)
        self._X: list[np.ndarray] = []
        self._Y: list[np.ndarray] = []
        self._n_fitted = 0

    # ------------------------------------------------------------- learning
    def learn_one(self, x: dict[Any, Any], y: dict[Any, bool]) -> None:
        """Keep one row for the next update of the model.

        Parameters
        ----------
        x : dict
            Feature name -> number.
        y : dict
            Label name -> bool (a missing label is unknown).
        """
        if self._labels is None:
            self._labels = list(y)
        unknown = set(y) - set(self._labels)
        if unknown:
            raise ValueError(
                f"RiverMultiLabel: y holds label(s) {sorted(map(str, unknown))} outside the label space "
                f"{self._labels} (fixed by 'labels' or the first y)."
            )
        self._X.append(self._row(x))
        self._Y.append(np.array([float(y[name]) if name in y else np.nan for name in self._labels]))

    def _row(self, x: dict[Any, Any]) -> np.ndarray:
        if self.features_ is None:
            self.features_ = list(x)
        return np.array([float(x.get(name, 0.0)) for name in self.features_])

    def _first_size(self) -> int:
        if self.n_initial is not None:
            return int(self.n_initial)
        k = int(getattr(self.estimator, "n_neighbors", 1))
        return max(k + 1, int(self.batch))

    def _update(self) -> None:
        """Fit when ``n_initial`` rows have arrived, then add each complete batch of new rows."""
        n = len(self._X)
        if self.model_ is None:
            if n < self._first_size():
                return
            upto = self._first_size()
        else:
            upto = self._n_fitted + (n - self._n_fitted) // self.batch * self.batch
            if upto == self._n_fitted:
                return
        X, Y = np.vstack(self._X[:upto]), np.vstack(self._Y[:upto])
        if not np.isnan(Y).any():
            Y = Y.astype(np.uint8)
        if hasattr(self.estimator, "partial_fit"):  # its first call fits
            model = self.model_ if self.model_ is not None else clone(self.estimator)
            self.model_ = model.partial_fit(X[self._n_fitted:], Y[self._n_fitted:])
        else:
            self.model_ = clone(self.estimator).fit(X, Y)
        self._n_fitted = upto

    # ----------------------------------------------------------- predicting
    def _query(self, x: dict[Any, Any]) -> np.ndarray | None:
        """x as a (1, d) row for the updated model, or None before the first fit."""
        self._update()
        if self.model_ is None or self._labels is None:
            return None
        return self._row(x)[None, :]

    def predict_proba_one(self, x: dict[Any, Any], **kwargs: Any) -> dict[Any, dict[bool, float]]:
        """Each label's probability, ``{label: {False: 1 - p, True: p}}``; empty before the first fit.

        Parameters
        ----------
        x : dict
        **kwargs
            Ignored (river's signature).

        Returns
        -------
        dict
        """
        row = self._query(x)
        if row is None:
            return {}
        p = self.model_.predict_proba(row)[0]
        return {name: {False: 1.0 - float(v), True: float(v)} for name, v in zip(self._labels or [], p)}

    def predict_one(self, x: dict[Any, Any], **kwargs: Any) -> dict[Any, bool]:
        """The estimator's own ``predict`` (its decision rule, e.g. ML-kNN's MAP rule) as a dict.

        Parameters
        ----------
        x : dict
        **kwargs
            Ignored.

        Returns
        -------
        dict
            Label name -> bool (empty before the first fit).
        """
        row = self._query(x)
        if row is None:
            return {}
        P = self.model_.predict(row)
        dense = np.asarray(P.toarray() if hasattr(P, "toarray") else P)[0]
        return {name: bool(v) for name, v in zip(self._labels or [], dense)}
