"""MLPR under scikit-learn's contract: estimator checks, clone, cross-validation, grid search."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, KFold, cross_val_predict
from sklearn.utils.estimator_checks import parametrize_with_checks

from hmcpgm import MLPR, Hierarchy, hier_rank
from hmcpgm.datasets import make_paper_synthetic

# MLPR's X holds one first-stage score per class, so X and y have the same columns.
# scikit-learn's generic checks draw X with any number of feature columns beside a
# 1-column y (or a 1-D y), which MLPR refuses with an error naming the mismatch.
_XY = "X has one score column per label column of y; the check passes X with other column counts"
_ONE_D = "MLPR is multilabel only: y must be an (M, K) 0/1 matrix; the check passes a 1-D target"
_NOT_BINARY = "y must hold only 0 and 1; the check passes labels 0, 1, 2 (a multiclass target)"
EXPECTED_FAILURES = {
    "check_fit_score_takes_y": _XY,
    "check_estimators_overwrite_params": _XY,
    "check_dont_overwrite_parameters": _XY,
    "check_estimators_fit_returns_self": _XY,
    "check_readonly_memmap_input": _XY,
    "check_n_features_in_after_fitting": _XY,
    "check_positive_only_tag_during_fit": _XY,
    "check_dtype_object": _XY,
    "check_pipeline_consistency": _XY,
    "check_estimators_nan_inf": _XY,
    "check_estimators_pickle": _XY,
    "check_f_contiguous_array_estimator": _XY,
    "check_classifier_multioutput": _XY,
    "check_classifiers_train": _XY,
    "check_classifiers_multilabel_representation_invariance": _XY,
    "check_classifiers_multilabel_output_format_predict": _XY,
    "check_classifiers_multilabel_output_format_predict_proba": _XY,
    "check_classifiers_multilabel_output_format_decision_function": _XY,
    "check_methods_sample_order_invariance": _XY,
    "check_methods_subset_invariance": _XY,
    "check_fit2d_1sample": _XY,
    "check_dict_unchanged": _XY,
    "check_fit_idempotent": _XY,
    "check_fit_check_is_fitted": _XY,
    "check_n_features_in": _XY,
    "check_fit2d_predict1d": _XY,
    "check_estimators_dtypes": _NOT_BINARY,
    "check_fit2d_1feature": _NOT_BINARY,
    "check_classifier_data_not_an_array": _NOT_BINARY,
    "check_classifiers_classes": _ONE_D,
    "check_classifier_not_supporting_multiclass": _ONE_D,
}


@parametrize_with_checks([MLPR(allow_empty=True)], expected_failed_checks=lambda est: EXPECTED_FAILURES)
def test_sklearn_estimator_checks(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # statsmodels' KDE on the checks' tiny samples
        check(estimator)


@pytest.fixture(scope="module")
def synthetic():
    return make_paper_synthetic(n_train=4000, n_test=1000, seed=1)


def test_cross_val_predict_gives_out_of_fold_mlprs(synthetic):
    h, s, y = synthetic.hierarchy, synthetic.train_scores, synthetic.train_labels
    folds = KFold(3, shuffle=True, random_state=0)
    p = cross_val_predict(MLPR(hierarchy=h), s, y, method="predict_proba", cv=folds)
    assert p.shape == y.shape and np.all((p >= 0) & (p <= 1))
    # each fold's rows are predicted by a model fitted on the other folds
    for train, test in folds.split(s):
        np.testing.assert_allclose(p[test], MLPR(hierarchy=h).fit(s[train], y[train]).predict_proba(s[test]))
    decisions = cross_val_predict(MLPR(hierarchy=h), s, y, cv=folds)
    assert h.violations(decisions) == 0


def test_grid_search_over_the_version(synthetic):
    h = synthetic.hierarchy
    search = GridSearchCV(MLPR(hierarchy=h), {"version": ["indpt", "full"]}, scoring="average_precision", cv=3)
    search.fit(synthetic.train_scores, synthetic.train_labels)
    scores = dict(zip(search.cv_results_["param_version"], search.cv_results_["mean_test_score"]))
    assert search.best_params_ == {"version": "full"}  # on data drawn from the model, all evidence wins
    assert scores["full"] > scores["indpt"]
    assert search.best_estimator_.predict_proba(synthetic.test_scores).shape == synthetic.test_labels.shape


def test_clone_keeps_the_hierarchy_and_unfitted_state(synthetic):
    model = MLPR(hierarchy=synthetic.hierarchy, version="nbh").fit(synthetic.train_scores, synthetic.train_labels)
    copy = clone(model)
    assert copy.hierarchy is synthetic.hierarchy and copy.version == "nbh"
    assert not hasattr(copy, "network_")


def test_predict_is_the_block_mean_rule_and_respects_the_hierarchy(synthetic):
    h = synthetic.hierarchy
    model = MLPR(hierarchy=h, version="indpt").fit(synthetic.train_scores, synthetic.train_labels)
    s = synthetic.test_scores
    d = model.predict(s)
    assert d.dtype == np.int8 and h.violations(d) == 0
    means = model.recalibration_(hier_rank(model.predict_proba(s), h).block_means)
    np.testing.assert_array_equal(d, (means >= 0.5).astype(np.int8))
    # rows are decided independently: a row's decision does not depend on the batch
    np.testing.assert_array_equal(model.predict(s[:7]), d[:7])
    assert model.set_params(threshold=0.9).predict(s).sum() < d.sum()


def test_flat_classes_named_by_dataframe_columns():
    rng = np.random.default_rng(0)
    y = (rng.random((500, 3)) < [0.3, 0.5, 0.2]).astype(int)
    X = pd.DataFrame(rng.normal(loc=2.0 * y), columns=["x", "y", "z"], index=np.arange(500) + 100)
    model = MLPR(pseudo_count=0).fit(X, y)
    assert model.hierarchy_.classes == ("x", "y", "z") and model.hierarchy_.kind == "forest"
    out = model.predict_proba(X[["z", "x", "y"]].iloc[:5])
    assert list(out.columns) == ["x", "y", "z"] and list(out.index) == [100, 101, 102, 103, 104]
    with pytest.warns(UserWarning, match="X does not have valid feature names"):  # an array after a DataFrame
        np.testing.assert_allclose(out.to_numpy(), model.predict_proba(X.to_numpy()[:5]))
    # no hierarchy: each class is its own root, theta its prevalence (no pseudo-count), and
    # full inference gives back the class's own LPR
    np.testing.assert_allclose(out.to_numpy(), model.set_params(version="indpt").predict_proba(X.iloc[:5]))


def test_a_hierarchy_with_other_classes_than_the_dataframe_is_refused():
    h = Hierarchy.from_edges([("a", "b")])
    X = pd.DataFrame(np.zeros((4, 2)), columns=["a", "c"])
    with pytest.raises(ValueError, match=r"missing: \['b'\]; not classes of the hierarchy: \['c'\]"):
        MLPR(hierarchy=h).fit(X, np.zeros((4, 2), dtype=int))
