"""The protocol and preprocessing settings of an experiment (frozen dataclasses)."""

from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

from ..model_selection import GivenSplit, PrequentialSplit, RepeatedHoldout, RepeatedMultilabelKFold, make_protocol
from ..preprocessing import CHI2_RULES
from ._parsing import canonical_json


@dataclass(frozen=True)
class ProtocolConfig:
    """Which splitter, with which seed (see :func:`mlknn.model_selection.make_protocol`).

    Parameters
    ----------
    name : {"kfold", "5x2", "holdout", "prequential", "given"}, default="5x2"
        The protocol. ``"prequential"``: test-then-train over the data as a
        stream, one fold per batch (:class:`~mlknn.model_selection._prequential.PrequentialSplit`;
        docs/streams.md). ``"given"``: the one split of a single run, the data's
        own (``n_test``) or a seeded one of ``test_size`` (default 50/50)
        (:class:`~mlknn.model_selection.GivenSplit`).
    n_splits, n_repeats : int, default=None
        Override the protocol's folds and repetitions.
    test_size : float, default=None
        Override the hold-out test fraction.
    stratify : bool, default=False
        Iterative stratification on the labels.
    seed : int, default=0
        Seed of the whole protocol.
    batch : int, default=None
        Prequential only: instances per batch (default 500); the first batch
        only trains.
    shuffle : bool, default=False
        Prequential only: a stream in a random order drawn from ``seed``
        instead of the file order.
    n_test : int, default=None
        Protocol ``"given"`` only: the data's last ``n_test`` rows are its fixed
        test part.
    """

    name: str = "5x2"
    n_splits: int | None = None
    n_repeats: int | None = None
    test_size: float | None = None
    stratify: bool = False
    seed: int = 0
    batch: int | None = None
    shuffle: bool = False
    n_test: int | None = None

    def splitter(self) -> RepeatedMultilabelKFold | RepeatedHoldout | PrequentialSplit | GivenSplit:
        """The splitter of this protocol.

        Returns
        -------
        RepeatedMultilabelKFold, RepeatedHoldout, PrequentialSplit or GivenSplit
            From :func:`mlknn.model_selection.make_protocol`, or the prequential splits,
            or the given split.
        """
        if self.name == "prequential":
            return self._prequential()
        if self.name == "given":
            return GivenSplit(self.n_test, 0.5 if self.test_size is None else self.test_size, self.seed)
        if self.n_test is not None:
            raise ValueError(f"The 'n_test' setting is for protocol 'given'; the protocol is {self.name!r}.")
        if self.batch is not None or self.shuffle:
            raise ValueError(
                f"The 'batch' and 'shuffle' settings are for protocol 'prequential'; the protocol is "
                f"{self.name!r} (got batch={self.batch!r}, shuffle={self.shuffle!r})."
            )
        return make_protocol(
            self.name,
            n_splits=self.n_splits,
            n_repeats=self.n_repeats,
            test_size=self.test_size,
            stratify=self.stratify,
            random_state=self.seed,
        )

    def _prequential(self) -> PrequentialSplit:
        given = {"n_splits": self.n_splits, "n_repeats": self.n_repeats, "test_size": self.test_size,
                 "stratify": self.stratify or None}  # fmt: skip
        wrong = sorted(k for k, v in given.items() if v is not None)
        if wrong:
            raise ValueError(
                f"The setting(s) {wrong} do not apply to protocol 'prequential' (one pass over the stream, "
                "batch by batch): use batch and shuffle."
            )
        return PrequentialSplit(500 if self.batch is None else self.batch, shuffle=self.shuffle,
                                random_state=self.seed)  # fmt: skip

    def params(self) -> dict[str, Any]:
        """The protocol's name and its splitter's parameters.

        Returns
        -------
        dict
            ``protocol`` and the splitter's :meth:`params`.
        """
        return {"protocol": self.name, **self.splitter().params()}

    def key(self) -> str:
        """Identity of the folds in the results DB. ``n_repeats`` is left out: the
        first r repetitions are the same whatever the number of repetitions, so
        a run with more repetitions completes one with fewer.

        Returns
        -------
        str
            Canonical JSON of :meth:`params` without ``n_repeats``.
        """
        p = self.params()
        p.pop("n_repeats", None)
        return canonical_json(p)

    def n_folds(self, n_samples: int | None = None) -> int | None:
        """Number of train/test splits (repetitions times folds).

        Parameters
        ----------
        n_samples : int, optional
            Rows of the dataset: the prequential protocol's number of batches
            depends on it (None there: the number is unknown until the data is
            loaded).

        Returns
        -------
        int or None
            The splitter's ``get_n_splits()``; None for a prequential protocol
            without ``n_samples``.
        """
        splitter = self.splitter()
        if isinstance(splitter, PrequentialSplit):
            return None if n_samples is None else splitter.get_n_splits(n_samples)
        return splitter.get_n_splits()


_SCALINGS = ("none", "minmax", "zscore")
_SCOPES = ("train", "dataset")


@dataclass(frozen=True)
class PreprocessingConfig:
    """Preprocessing of one dataset.

    Parameters
    ----------
    scaling : {"none", "minmax", "zscore"}
        Fitted on each training part (sparse-safe, see
        :class:`mlknn.preprocessing.FeatureScaler`).
    feature_selection : float, int or None
        Chi-square selection fitted on each training part: a fraction in (0, 1]
        or a number of features; None keeps all.
    min_label_count : int
        Remove labels with fewer positive instances (0: keep all).
    label_scope : {"train", "dataset"}
        ``train``: labels are counted on each training part (nothing from the
        test part is used). ``dataset``: counted once on the whole dataset, and
        instances left without any label are dropped before splitting - what
        Teng et al.'s (2025) Table 1 shows (enron 35 labels, corel5k 153 labels and 4985
        instances).
    chi2_rule : {"max", "mean", "presence-max", "presence-avg"}
        How the chi-square selection combines the per-label scores
        (:class:`mlknn.preprocessing.MultiLabelChi2Selector`'s ``rule``);
        ``"presence-avg"`` is Yang and Pedersen's prior-weighted average, the
        reading that reproduces Younes et al.'s (2011) enron tables (docs/reproduction.md).
        Recorded in :meth:`params` only when not the default ``"max"``, so the
        keys of earlier results are unchanged.
    missing_labels : float
        Fraction in [0, 1) of each training part's label entries hidden
        (unknown), drawn by a seeded generator per fold
        (:func:`mlknn.experiments._missing.hide_labels`): the estimators that
        learn from incomplete labels (``knn_capabilities()["missing_labels"]``)
        get them as unknown, every other estimator reads them as 0. The test
        part is never touched. Recorded in :meth:`params` only when > 0, so the
        keys of earlier results are unchanged (docs/incomplete_labels.md).
    """

    scaling: str = "none"
    feature_selection: float | int | None = None
    min_label_count: int = 0
    label_scope: str = "train"
    chi2_rule: str = "max"
    missing_labels: float = 0.0

    def __post_init__(self) -> None:
        if self.scaling not in _SCALINGS:
            raise ValueError(f"The 'scaling' parameter must be one of {_SCALINGS}. Got {self.scaling!r} instead.")
        fs = self.feature_selection
        if fs is not None:
            if isinstance(fs, bool) or not isinstance(fs, (Integral, Real)):
                raise ValueError(
                    "The 'feature_selection' parameter must be None, a float in (0, 1] or an int >= 1. "
                    f"Got {fs!r} instead."
                )
            if isinstance(fs, Integral) and fs < 1 or (not isinstance(fs, Integral) and not 0 < fs <= 1):
                raise ValueError(
                    "The 'feature_selection' parameter must be None, a float in (0, 1] or an int >= 1. "
                    f"Got {fs!r} instead."
                )
        m = self.min_label_count
        if isinstance(m, bool) or not isinstance(m, Integral) or m < 0:
            raise ValueError(f"The 'min_label_count' parameter must be an int >= 0. Got {m!r} instead.")
        if self.chi2_rule not in CHI2_RULES:
            raise ValueError(
                f"The 'chi2_rule' parameter must be one of {CHI2_RULES}. Got {self.chi2_rule!r} instead."
            )
        f = self.missing_labels
        if isinstance(f, bool) or not isinstance(f, Real) or not 0 <= f < 1:
            raise ValueError(f"The 'missing_labels' parameter must be a fraction in [0, 1). Got {f!r} instead.")
        if self.label_scope not in _SCOPES:
            raise ValueError(
                f"The 'label_scope' parameter must be one of {_SCOPES}. Got {self.label_scope!r} instead."
            )

    def params(self) -> dict[str, Any]:
        """The preprocessing as a dict (what the results record).

        Returns
        -------
        dict
            ``scaling``, ``feature_selection``, ``min_label_count``, ``label_scope``,
            ``chi2_rule`` when it is not ``"max"``, ``missing_labels`` when > 0.
        """
        out: dict[str, Any] = {
            "scaling": self.scaling,
            "feature_selection": self.feature_selection,
            "min_label_count": int(self.min_label_count),
            "label_scope": self.label_scope,
        }
        if self.chi2_rule != "max":
            out["chi2_rule"] = self.chi2_rule
        if self.missing_labels > 0:
            out["missing_labels"] = float(self.missing_labels)
        return out

    def key(self) -> str:
        """The preprocessing as canonical JSON (the ``preprocessing`` column of the results).

        Returns
        -------
        str
            :func:`canonical_json` of :meth:`params`.
        """
        return canonical_json(self.params())

    def dataset_level(self) -> dict[str, Any] | None:
        """The part applied to the whole dataset before splitting (None if nothing).

        Returns
        -------
        dict or None
            ``min_label_count`` and ``drop_unlabelled`` when labels are filtered on
            the whole dataset (``label_scope="dataset"``), else None.
        """
        if self.label_scope == "dataset" and self.min_label_count > 0:
            return {"min_label_count": int(self.min_label_count), "drop_unlabelled": True}
        return None

    def fold_level(self) -> dict[str, Any]:
        """Keyword arguments of :class:`mlknn.preprocessing.FoldPreprocessor`.

        Returns
        -------
        dict
            ``scaling``, ``feature_selection``, ``min_label_count`` and ``chi2_rule``.
        """
        return {
            "scaling": self.scaling,
            "feature_selection": self.feature_selection,
            "min_label_count": int(self.min_label_count) if self.label_scope == "train" else 0,
            "chi2_rule": self.chi2_rule,
        }
