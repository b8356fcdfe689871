"""Decision rules in the harness: tuned thresholds, conformal label sets, calibration.

An experiment may ask (``ExperimentConfig.threshold``, ``.conformal``,
``.calibration``; TOML keys and ``mlknn run --threshold / --conformal /
--calibration``) for more than the default 0.5 / MAP rule. Each cell then also
stores, beside its usual measures:

* for each threshold strategy s of :class:`mlknn.decision.TunedThresholds`
  (``"per-label"``, ``"global"``, ``"rcut"``, ``"pcut"``; scoring ``"f1"``, its
  default), every bipartition measure of :func:`mlknn.metrics.evaluate` under the
  tuned rule, as ``"macro_f1[threshold=per-label]"`` and so on. The rule is chosen
  on the training part's out-of-sample posteriors (exact leave-one-out where the
  estimator has it), never on the test part;
* for each conformal setting ``"guarantee:alpha"`` of
  :class:`mlknn.decision.ConformalLabelSets` (``method="split"``: the estimator is
  fitted on 70 % of the training part and calibrated on the rest, the exact
  guarantee), ``"conformal_coverage[set:0.1]"`` (the empirical rate the guarantee
  bounds, to compare with 1 - alpha: ``set``, the fraction of test instances whose
  label set is contained; ``fnr``, one minus the mean instance false-negative rate;
  ``label``, the mean over labels of the fraction of their relevant test instances
  covered) and ``"conformal_set_size[set:0.1]"`` (mean predicted set size);
* whenever any of these is asked, or ``calibration`` is true, the calibration of
  the cell's posteriors on the test part: ``"ece"`` (macro over labels) and
  ``"ece_micro"`` (every entry pooled), 10 equal-width bins, and the pooled bins
  themselves, ``"reliability_count[b]"``, ``"reliability_proba[b]"``,
  ``"reliability_relevant[b]"`` for b = 0..9, from which the report draws its
  reliability figure (counts summed over folds).

Only cells with dense (n_test, q) posteriors are tuned; the others (sparse labels
beyond the dense budget, estimators without ``predict_proba``) record none of
these. Cost: each threshold strategy and each conformal setting fits the
estimator again on the training part (the rule's own fit, out-of-sample
posteriors and prediction go through the public API), so a strategy costs about
three fits of the cell.
"""

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..utils._typing import Estimator, LabelMatrix, MatrixLike, NDArray

#: ``TunedThresholds`` strategies a grid may ask for ("fixed" is the default rule, always stored).
THRESHOLD_STRATEGIES = ("per-label", "global", "rcut", "pcut")

#: ``ConformalLabelSets`` guarantees.
CONFORMAL_GUARANTEES = ("set", "fnr", "label")

#: Measures of :func:`mlknn.metrics.evaluate` that depend on the 0/1 decision (the
#: ranking and AUC measures read the scores alone, so a rule does not change them).
DECISION_METRICS = (
    "hamming_loss", "subset_accuracy", "accuracy", "precision", "recall", "f1",
    "macro_precision", "macro_recall", "macro_f1", "micro_precision", "micro_recall", "micro_f1",
    "macro_accuracy", "micro_accuracy",
)  # fmt: skip

#: Equal-width bins of the stored reliability curve.
RELIABILITY_BINS = 10

#: Prefixes and names of every measure this module stores.
_PREFIXES = ("conformal_coverage[", "conformal_set_size[", "reliability_count[", "reliability_proba[",
             "reliability_relevant[")  # fmt: skip
CALIBRATION_METRICS = ("ece", "ece_micro")


def threshold_key(metric: str, strategy: str) -> str:
    """``"macro_f1[threshold=per-label]"``: a measure under a tuned rule."""
    return f"{metric}[threshold={strategy}]"


def is_decision_measure(metric: str) -> bool:
    """Whether a stored measure comes from this module (kept out of the default tables)."""
    return "[threshold=" in metric or metric.startswith(_PREFIXES) or metric in CALIBRATION_METRICS


def parse_threshold(text: str) -> str:
    """A threshold strategy, validated (``"per-label"``...)."""
    value = str(text).strip().lower()
    if value not in THRESHOLD_STRATEGIES:
        raise ValueError(
            f"The 'threshold' setting must be one of {', '.join(THRESHOLD_STRATEGIES)} (strategies of "
            f"mlknn.decision.TunedThresholds). Got {text!r} instead."
        )
    return value


def parse_conformal(text: str) -> str:
    """A conformal setting ``"guarantee:alpha"``, validated and written canonically (``"set:0.1"``)."""
    guarantee, sep, alpha_text = str(text).strip().lower().partition(":")
    try:
        alpha = float(alpha_text) if sep else float("nan")
    except ValueError:
        alpha = float("nan")
    if guarantee not in CONFORMAL_GUARANTEES or not 0.0 < alpha < 1.0:
        raise ValueError(
            f"The 'conformal' setting must be 'guarantee:alpha' with guarantee one of "
            f"{', '.join(CONFORMAL_GUARANTEES)} and alpha in (0, 1), e.g. 'set:0.1'. Got {text!r} instead."
        )
    return f"{guarantee}:{alpha:g}"


@dataclass(frozen=True)
class DecisionSettings:
    """What a cell records beyond its default measures (see the module docstring).

    Parameters
    ----------
    threshold : tuple of str
        Strategies of :data:`THRESHOLD_STRATEGIES`.
    conformal : tuple of str
        Settings ``"guarantee:alpha"``.
    calibration : bool
        Record the calibration measures even without ``threshold`` / ``conformal``.
    """

    threshold: tuple[str, ...] = ()
    conformal: tuple[str, ...] = ()
    calibration: bool = False

    def __bool__(self) -> bool:
        return bool(self.threshold or self.conformal or self.calibration)


def decision_values(
    est: Estimator, X_train: MatrixLike, Y_train: LabelMatrix, X_test: MatrixLike, Y_test: LabelMatrix,
    scores: NDArray[np.float64], settings: DecisionSettings, seed: int,
) -> dict[str, float]:
    """The measures of ``settings`` for one cell.

    Parameters
    ----------
    est : estimator
        The cell's estimator (fitted or not: each rule fits its own clone).
    X_train, Y_train, X_test, Y_test
        The fold (Y dense).
    scores : ndarray of shape (n_test, q)
        The cell's test posteriors (for the calibration measures).
    settings : DecisionSettings
    seed : int
        ``random_state`` of the rules (the calibration split, the folds of cross-fitting).

    Returns
    -------
    dict of str to float
    """
    from sklearn.base import clone

    from ..metrics import evaluate

    Y_test = np.asarray(Y_test)
    values = _calibration_values(Y_test, scores)
    for strategy in settings.threshold:
        from ..decision import TunedThresholds

        try:
            rule = TunedThresholds(clone(est), strategy=strategy, random_state=seed).fit(X_train, Y_train)
            predicted = np.asarray(rule.predict(X_test))
        except Exception as exc:  # noqa: BLE001 - a rule that cannot be fitted must not lose the cell's measures
            warnings.warn(f"threshold {strategy}: not computed: {type(exc).__name__}: {exc}", UserWarning,
                          stacklevel=2)
            continue
        measured = evaluate(Y_test, predicted, scores)
        values.update({threshold_key(m, strategy): measured[m] for m in DECISION_METRICS})
    for setting in settings.conformal:
        values.update(_conformal_values(est, X_train, Y_train, X_test, Y_test, setting, seed))
    return values


def _calibration_values(Y: NDArray[Any], P: NDArray[np.float64]) -> dict[str, float]:
    from ..metrics import calibration_bins, expected_calibration_error

    values = {
        "ece": float(expected_calibration_error(Y, P, n_bins=RELIABILITY_BINS, average="macro")),
        "ece_micro": float(expected_calibration_error(Y, P, n_bins=RELIABILITY_BINS, average="micro")),
    }
    count, proba, relevant = calibration_bins(Y, P, n_bins=RELIABILITY_BINS, pooled=True)
    for b in range(RELIABILITY_BINS):
        values[f"reliability_count[{b}]"] = float(count[0, b])
        values[f"reliability_proba[{b}]"] = float(proba[0, b])
        values[f"reliability_relevant[{b}]"] = float(relevant[0, b])
    return values


def _conformal_values(
    est: Estimator, X_train: MatrixLike, Y_train: LabelMatrix, X_test: MatrixLike, Y_test: NDArray[Any],
    setting: str, seed: int,
) -> dict[str, float]:
    from sklearn.base import clone

    from ..decision import ConformalLabelSets

    guarantee, alpha = setting.split(":")
    try:
        sets = ConformalLabelSets(clone(est), alpha=float(alpha), guarantee=guarantee, method="split",
                                  random_state=seed).fit(X_train, Y_train)
    except Exception as exc:  # noqa: BLE001 - e.g. alpha below what the calibration part can certify: said, not stored
        warnings.warn(f"conformal {setting}: not computed: {exc}", UserWarning, stacklevel=2)
        return {}
    S = np.asarray(sets.predict(X_test)) > 0
    Y = Y_test > 0
    if guarantee == "set":
        coverage = float(np.mean(np.all(S | ~Y, axis=1)))
    elif guarantee == "fnr":
        relevant = Y.sum(axis=1)
        missed = (Y & ~S).sum(axis=1)
        coverage = 1.0 - float(np.mean(np.divide(missed, relevant, out=np.zeros(len(relevant)), where=relevant > 0)))
    else:  # label: each label's recall over its relevant test instances, averaged over the labels that have some
        relevant = Y.sum(axis=0)
        covered = (Y & S).sum(axis=0)
        coverage = float(np.mean(covered[relevant > 0] / relevant[relevant > 0])) if (relevant > 0).any() else 1.0
    return {f"conformal_coverage[{setting}]": coverage, f"conformal_set_size[{setting}]": float(S.sum(axis=1).mean())}
