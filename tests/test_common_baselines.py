"""scikit-learn's common estimator checks over every baseline in mlknn.baselines.

Modelled on tests/test_common.py (the kNN family). Small parameters keep the
~40 checks x 16 estimators fast.
"""

from sklearn.utils.estimator_checks import parametrize_with_checks

from _estimator_checks import run_check

from mlknn.baselines import (
    BPMLL,
    CML,
    MLDT,
    MLLS,
    MLRBF,
    AdaBoostMH,
    BinaryRelevance,
    CalibratedLabelRanking,
    ClassifierChain,
    EnsembleClassifierChains,
    LabelPowerset,
    RAkEL,
    RAkELd,
    RankSVM,
    StackedBinaryRelevance,
    ThresholdCalibration,
)

# Why each check is expected to fail: the baselines are multi-label, Y is a
# (n, q) 0/1 matrix and predict_proba returns one (n, q) array.
_ONE_D = "the check fits a 1-D or multiclass target; mlknn requires a 2-D 0/1 indicator Y"
_NON_BINARY = "the check's target holds values other than 0/1 (e.g. {1, 2}); mlknn accepts only 0/1 labels"
_PROBA = (
    "the check expects predict_proba of shape (n, n_classes) of a single-output classifier; "
    "mlknn returns (n, n_labels) scores, one column per label"
)
EXPECTED_FAILED_CHECKS = {
    "check_estimators_dtypes": _NON_BINARY,
    "check_classifier_data_not_an_array": _NON_BINARY,
    "check_fit2d_1feature": _NON_BINARY,
    "check_classifiers_one_label": _ONE_D,
    "check_classifiers_classes": _ONE_D,
    "check_classifiers_train": _PROBA,
    "check_estimator_sparse_array": _PROBA,
    "check_estimator_sparse_matrix": _PROBA,
}

# Estimators whose scores can be exactly 0 or 1 (pure tree leaves, unanimous
# votes): the multi-label predict_proba check asks for 0 < p < 1 strictly.
_EXACT_SCORES = (
    "the check requires 0 < predict_proba < 1 strictly; this estimator's scores are "
    "leaf frequencies or vote fractions, exactly 0 or 1 when a leaf is pure or a vote unanimous "
    "(scikit-learn's own ClassifierChain with a decision tree fails it the same way)"
)
_DECISION_CLASSES = (
    "the check indexes classes_ with the 0/1 decision (classes_[decision > 0]); mlknn's "
    "multi-label classes_ is a list of per-label [0, 1] arrays, as KNeighborsClassifier's. "
    "tests/test_baselines.py checks decision_function > 0 == predict and the rank agreement instead"
)
_DECISION_ONE_D = "the check fits a 1-D binary target to compare decision_function and predict_proba; " + _ONE_D
_NO_PAIRS = (
    "the check fits one label, so no instance has both a relevant and an irrelevant label: "
    "Rank-SVM's objective is then minimal at w = 0 and L-BFGS stops at iteration 0 (n_iter_ = 0)"
)

_MAP_VS_MARGINALS = (
    "the check requires predict_proba.round() == predict; CML predicts the MAP label set while "
    "predict_proba gives the per-label marginals, which can be > 0.5 for a label the MAP set lacks"
)


def expected_failed_checks(estimator):
    failed = dict(EXPECTED_FAILED_CHECKS)
    if isinstance(
        estimator,
        (
            BinaryRelevance,
            ClassifierChain,
            EnsembleClassifierChains,
            LabelPowerset,
            RAkEL,
            RAkELd,
            CalibratedLabelRanking,
            StackedBinaryRelevance,
            MLDT,
        ),
    ):
        failed["check_classifiers_multilabel_output_format_predict_proba"] = _EXACT_SCORES
    if hasattr(estimator, "decision_function"):
        failed["check_classifier_multioutput"] = _DECISION_CLASSES
        failed["check_decision_proba_consistency"] = _DECISION_ONE_D
    if isinstance(estimator, RankSVM):
        failed["check_non_transformer_estimators_n_iter"] = _NO_PAIRS
    if isinstance(estimator, CML):
        failed["check_classifier_multioutput"] = _MAP_VS_MARGINALS
    return failed


def all_estimators():
    """One instance of every baseline, with small-data parameters."""
    return [
        BinaryRelevance(random_state=0),
        ClassifierChain(random_state=0),
        EnsembleClassifierChains(n_estimators=2, random_state=0),
        LabelPowerset(random_state=0),
        RAkEL(random_state=0),
        RAkELd(random_state=0),
        CalibratedLabelRanking(random_state=0),
        StackedBinaryRelevance(cv=2, random_state=0),
        ThresholdCalibration(BinaryRelevance(random_state=0)),
        AdaBoostMH(n_estimators=10),
        MLDT(random_state=0),
        RankSVM(max_iter=10),
        BPMLL(hidden_layer_size=3, max_iter=5, random_state=0),
        MLRBF(fraction=0.1, random_state=0),
        CML(max_iter=10),
        MLLS(),
    ]


@parametrize_with_checks(all_estimators(), expected_failed_checks=expected_failed_checks)
def test_sklearn_compatible(estimator, check, request):
    run_check(estimator, check, request)
