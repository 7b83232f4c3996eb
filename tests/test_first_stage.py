import numpy as np
import pytest
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.multioutput import MultiOutputClassifier
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import Pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

from hmcpgm import InputError, LabelError
from hmcpgm.first_stage import (
    FirstStageModel,
    OutOfFoldScores,
    default_classifier,
    default_classwise_classifier,
    fit_first_stage,
    out_of_fold_scores,
    predict_scores,
)


def _data(m=120, f=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, f))
    y0 = (X[:, 0] + 0.5 * rng.normal(size=m) > 0).astype(int)
    y1 = y0 & (X[:, 1] > 0)
    y2 = np.zeros(m, int)  # no positives
    y3 = np.ones(m, int)  # all positive
    return X, np.column_stack([y0, y1, y2, y3])


def test_shapes_and_folds_partition_the_rows():
    X, y = _data()
    scores, folds = out_of_fold_scores(X, y, n_splits=4, progress=False, return_folds=True)
    assert scores.shape == y.shape and scores.dtype == float
    assert np.isfinite(scores).all()
    assert sorted(np.bincount(folds).tolist()) == [30, 30, 30, 30]


def test_per_class_scores_equal_manual_fold_by_fold_fitting():
    X, y = _data()
    clf = LogisticRegression()
    scores, folds = out_of_fold_scores(
        X, y, clf, n_splits=3, seed=4, progress=False, return_folds=True
    )
    expected = np.empty(y.shape)
    for f in range(3):
        train, test = folds != f, folds == f
        for k in range(y.shape[1]):
            if 0 < y[train, k].sum() < train.sum():
                est = clone(clf).fit(X[train], y[train, k])
                expected[test, k] = est.decision_function(X[test])
            else:  # the log-odds of the Jeffreys-smoothed prevalence
                p, n = y[train, k].sum(), train.sum()
                expected[test, k] = np.log((p + 0.5) / (n - p + 0.5))
    np.testing.assert_allclose(scores, expected, rtol=0, atol=0)


def test_joint_default_equals_manual_fold_by_fold_fitting():
    X, y = _data()
    X[::7, 2] = np.nan  # missing values are imputed by the default pipeline
    scores, folds = out_of_fold_scores(X, y, n_splits=5, progress=False, return_folds=True)
    expected = np.empty(y.shape)
    for f in range(5):
        train, test = folds != f, folds == f
        est = default_classifier().fit(X[train], y[train])
        expected[test] = est.predict(X[test])
    expected[:, 2], expected[:, 3] = 0.0, 1.0  # the documented constants
    np.testing.assert_allclose(scores, expected, rtol=1e-12, atol=1e-12)


def test_out_of_fold_scores_do_not_see_their_own_label():
    # random labels: a 1-nearest-neighbour classifier memorises the training rows
    # (in-sample AUC 1) but cannot predict held-out rows (out-of-fold AUC ~ 0.5)
    rng = np.random.default_rng(1)
    X = rng.normal(size=(400, 5))
    y = rng.integers(0, 2, size=(400, 3))
    clf = KNeighborsClassifier(n_neighbors=1)
    oof = out_of_fold_scores(X, y, clf, progress=False)
    model = fit_first_stage(X, y, clf, progress=False)
    in_sample = predict_scores(model, X)
    for k in range(3):
        assert roc_auc_score(y[:, k], in_sample[:, k]) == 1.0
        assert abs(roc_auc_score(y[:, k], oof[:, k]) - 0.5) < 0.1


def test_constant_scores_for_classes_without_variation():
    X, y = _data()
    # a single positive: the fold holding it trains on no positive at all
    y[:, 1] = 0
    y[5, 1] = 1
    scores, folds = out_of_fold_scores(
        X, y, LogisticRegression(), n_splits=4, progress=False, return_folds=True
    )
    # decision_function: the log-odds of the Jeffreys-smoothed prevalence, log((p + 1/2) / (n - p + 1/2))
    for f in np.unique(folds):
        n = int((folds != f).sum())
        assert (scores[folds == f, 2] == np.log(0.5 / (n + 0.5))).all()
        assert (scores[folds == f, 3] == np.log((n + 0.5) / 0.5)).all()
    held = folds == folds[5]
    n = int((~held).sum())
    assert (scores[held, 1] == np.log(0.5 / (n + 0.5))).all()
    assert np.unique(scores[~held, 1]).size > 1  # fitted on folds that hold the positive
    model = fit_first_stage(X, y, LogisticRegression(), progress=False)
    m = len(X)
    assert model.estimators[2] is None and model.constants[2] == np.log(0.5 / (m + 0.5))
    assert model.estimators[3] is None and model.constants[3] == np.log((m + 0.5) / 0.5)
    assert np.isnan(model.constants[:2]).all()


def test_predict_proba_method_and_fit_predict_pair():
    X, y = _data()
    model = fit_first_stage(X, y, LogisticRegression(), method="predict_proba", progress=False)
    assert isinstance(model, FirstStageModel) and model.method == "predict_proba"
    X_new = X[:10] + 0.1
    s = predict_scores(model, X_new)
    expected = LogisticRegression().fit(X, y[:, 0]).predict_proba(X_new)[:, 1]
    np.testing.assert_allclose(s[:, 0], expected)
    assert ((s >= 0) & (s <= 1)).all()
    auto = fit_first_stage(X, y, LogisticRegression(), progress=False)
    assert auto.method == "decision_function"


def test_joint_multilabel_classifier_with_predict_proba_list():
    X, y = _data()
    clf = KNeighborsClassifier(n_neighbors=5)
    model = fit_first_stage(X, y, clf, joint=True, method="predict_proba", progress=False)
    s = predict_scores(model, X[:20])
    for k in range(2):
        expected = KNeighborsClassifier(n_neighbors=5).fit(X, y[:, k]).predict_proba(X[:20])[:, 1]
        np.testing.assert_allclose(s[:, k], expected)
    m = len(X)  # predict_proba: the Jeffreys-smoothed prevalence of the m training rows
    assert (s[:, 2] == 0.5 / (m + 1)).all() and (s[:, 3] == (m + 0.5) / (m + 1)).all()


def test_progress_bar_goes_to_stderr(capsys):
    X, y = _data(m=40)
    out_of_fold_scores(X, y, LogisticRegression(), n_splits=2, progress=True)
    assert "first stage (classes)" in capsys.readouterr().err


def test_bad_inputs():
    X, y = _data()
    with pytest.raises(InputError, match="X has 120 rows but labels has 119"):
        out_of_fold_scores(X, y[:-1], progress=False)
    with pytest.raises(LabelError, match="labels must hold only 0 and 1"):
        out_of_fold_scores(X, y * 2, progress=False)
    with pytest.raises(LabelError, match="labels must be 2-D"):
        out_of_fold_scores(X, y[:, 0], progress=False)
    with pytest.raises(InputError, match="X must be 2-D"):
        out_of_fold_scores(X[:, 0], y, progress=False)
    with pytest.raises(InputError, match="infinite"):
        out_of_fold_scores(np.where(X > 2, np.inf, X), y, progress=False)
    with pytest.raises(InputError, match="n_splits must be an int of at least 2, got 1"):
        out_of_fold_scores(X, y, n_splits=1, progress=False)
    with pytest.raises(InputError, match="n_splits=200 is more than the 120 rows"):
        out_of_fold_scores(X, y, n_splits=200, progress=False)
    with pytest.raises(InputError, match="method must be one of"):
        out_of_fold_scores(X, y, method="score", progress=False)
    with pytest.raises(InputError, match="has no decision_function"):
        fit_first_stage(X, y, KNeighborsClassifier(), method="decision_function", progress=False)
    with pytest.raises(TypeError, match="classifier must be a scikit-learn estimator"):
        out_of_fold_scores(X, y, classifier="logreg", progress=False)
    with pytest.raises(InputError, match="use joint=False"):
        fit_first_stage(X, y, LogisticRegression(), joint=True, progress=False)
    model = fit_first_stage(X, y, progress=False)
    with pytest.raises(InputError, match="X has 3 features but the first stage was fitted on 4"):
        predict_scores(model, X[:, :3])
    with pytest.raises(TypeError, match="model must be a FirstStageModel"):
        predict_scores("model", X)


# ---------------------------------------------------------------------- OutOfFoldScores
_BY_DESIGN = (
    "fit_transform returns out-of-fold scores, transform scores rows with the model refitted on "
    "all rows (or the fold average): they differ by design, as in StackingClassifier"
)
_XFAIL = {"check_transformer_general": _BY_DESIGN, "check_transformer_data_not_an_array": _BY_DESIGN}


@parametrize_with_checks(
    [OutOfFoldScores(cv=3), OutOfFoldScores(cv=3, classwise=True), OutOfFoldScores(cv=3, refit=False)],
    expected_failed_checks=lambda est: _XFAIL,
)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def _manual_reference(X, y, make, n_splits, seed, classwise, score):
    """Today's algorithm written out: shuffled KFold, fit on k-1 folds; a class with constant training labels
    scores the log-odds of its Jeffreys-smoothed prevalence (class-wise: decision_function), joint its label."""
    expected = np.empty(y.shape)
    for train, test in KFold(n_splits, shuffle=True, random_state=seed).split(X):
        if classwise:
            for k in range(y.shape[1]):
                if 0 < y[train, k].sum() < len(train):
                    expected[test, k] = score(make().fit(X[train], y[train, k]), X[test])
                else:
                    p = y[train, k].sum()
                    expected[test, k] = np.log((p + 0.5) / (len(train) - p + 0.5))
        else:
            expected[test] = make().fit(X[train], y[train]).predict(X[test])
            constant = (y[train].sum(axis=0) == 0) | (y[train].sum(axis=0) == len(train))
            expected[np.ix_(test, np.flatnonzero(constant))] = y[train][:, constant].mean(axis=0)
    return expected


@pytest.mark.parametrize("classwise", [False, True])
def test_transformer_equals_out_of_fold_scores_and_the_manual_reference(classwise):
    X, y = _data()
    X[::9, 1] = np.nan
    make = default_classwise_classifier if classwise else default_classifier
    first = OutOfFoldScores(cv=4, random_state=3, classwise=classwise)
    scores = first.fit_transform(X, y)
    expected = _manual_reference(X, y, make, 4, 3, classwise, lambda est, Z: est.decision_function(Z))
    np.testing.assert_allclose(scores, expected, rtol=1e-12, atol=1e-12)
    old = out_of_fold_scores(X, y, make() if classwise else None, n_splits=4, seed=3, progress=False)
    np.testing.assert_array_equal(scores, old)
    # the functional form's default classifier is the transformer's (joint=False took ridge regression per class)
    default = out_of_fold_scores(X, y, n_splits=4, seed=3, progress=False, joint=not classwise)
    np.testing.assert_array_equal(scores, default)
    # transform: the model refitted on all rows
    refit = make().fit(X, y) if not classwise else None
    new = first.transform(X[:7] + 0.3)
    if refit is not None:
        np.testing.assert_allclose(new[:, :2], refit.predict(X[:7] + 0.3)[:, :2], rtol=1e-12)
    else:
        np.testing.assert_allclose(new[:, 0], make().fit(X, y[:, 0]).decision_function(X[:7] + 0.3), rtol=1e-12)
    m = len(X)
    low, high = (np.log(0.5 / (m + 0.5)), np.log((m + 0.5) / 0.5)) if classwise else (0.0, 1.0)
    assert (new[:, 2] == low).all() and (new[:, 3] == high).all()
    assert first.classwise_ is classwise and first.n_features_in_ == 4 and first.n_classes_ == 4


def test_cross_fitting_averages_the_fold_models():
    X, y = _data()
    crossfit = OutOfFoldScores(cv=3, refit=False)
    oof = crossfit.fit_transform(X, y)
    np.testing.assert_array_equal(oof, OutOfFoldScores(cv=3).fit_transform(X, y))
    X_new = X[:6] * 0.5
    expected = np.zeros((6, 4))
    for train, _test in KFold(3, shuffle=True, random_state=0).split(X):
        fold = default_classifier().fit(X[train], y[train]).predict(X_new)
        fold[:, 2], fold[:, 3] = 0.0, 1.0
        expected += fold / 3
    np.testing.assert_allclose(crossfit.transform(X_new), expected, rtol=1e-12)
    assert len(crossfit.estimators_) == 3


def test_transformer_in_pipeline_and_grid_search():
    X, y = _data(m=150)
    y = y[:, :2]
    pipe = Pipeline([("scores", OutOfFoldScores(cv=3)), ("second", MultiOutputClassifier(LogisticRegression()))])
    search = GridSearchCV(pipe, {"scores__estimator": [None, KNeighborsClassifier(5)],
                                 "scores__classwise": [None]}, cv=3)
    search.fit(X, y)
    assert search.predict(X[:5]).shape == (5, 2)
    assert set(search.cv_results_["params"][0]) == {"scores__estimator", "scores__classwise"}
    # the second step was fitted on out-of-fold scores, not on in-sample ones
    fitted = pipe.fit(X, y)
    oof = OutOfFoldScores(cv=3).fit_transform(X, y)
    ref = MultiOutputClassifier(LogisticRegression()).fit(oof, y)
    np.testing.assert_allclose(fitted[-1].estimators_[0].coef_, ref.estimators_[0].coef_)


def test_transformer_bad_parameters():
    X, y = _data()
    with pytest.raises(InputError, match="cv must be an int of at least 2"):
        OutOfFoldScores(cv=1).fit(X, y)
    with pytest.raises(InputError, match="method must be one of"):
        OutOfFoldScores(method="score").fit(X, y)
    with pytest.raises(InputError, match="refit must be True or False"):
        OutOfFoldScores(refit="yes").fit(X, y)
    with pytest.raises(TypeError, match="estimator must be a scikit-learn estimator"):
        OutOfFoldScores("logreg").fit(X, y)
    with pytest.raises(LabelError, match="y must hold only 0 and 1"):
        OutOfFoldScores().fit(X, y * 2)
    with pytest.raises(InputError, match="use joint=False"):
        OutOfFoldScores(LogisticRegression(), classwise=False).fit(X, y)


def test_transform_matches_columns_by_name_whatever_their_type():
    """Integer column names in another order were read by position (scikit-learn records string names only)."""
    import pandas as pd

    X, y = _data(m=80, f=3)
    frame = pd.DataFrame(X, columns=[10, 20, 30])
    first = OutOfFoldScores(cv=3, random_state=0).fit(frame, y)
    new = frame.iloc[:5]
    np.testing.assert_array_equal(first.transform(new[[30, 10, 20]]), first.transform(new))
    np.testing.assert_array_equal(first.transform(new), first.transform(new.to_numpy()))
    with pytest.raises(InputError, match=r"X's columns are not the training DataFrame's .* lacks \[30\]"):
        first.transform(new.rename(columns={30: 40}))
    with pytest.raises(InputError, match="other or repeated columns"):
        first.transform(pd.concat([new, new[[10]]], axis=1))


def test_a_one_dimensional_y_of_one_class_is_a_column_of_ones():
    """LabelBinarizer writes a single class as 0s: the class present in every row was scored as absent."""
    X, _ = _data(m=30)
    for classwise in (False, True):
        first = OutOfFoldScores(cv=3, random_state=0, classwise=classwise)
        np.testing.assert_array_equal(first.fit_transform(X, np.full(30, "a")),
                                      first.fit_transform(X, np.ones((30, 1), int)))


@pytest.mark.parametrize("refuses", [True, False])
def test_a_joint_classifier_that_refuses_a_constant_class_is_fitted_on_the_others(refuses):
    """A multi-output logistic regression raised on a class without positives; the module promises that
    such a class gets a constant score. k nearest neighbours fit such a class: fitted on every class."""
    from hmcpgm.first_stage._scorer import ColumnScorer, constant_scores

    X, y = _data(m=90)  # classes 2 and 3: all 0, all 1
    joint = MultiOutputClassifier(LogisticRegression()) if refuses else KNeighborsClassifier(5)
    method = "predict_proba"
    scorer = ColumnScorer(joint, method).fit(X, y)
    scores = scorer.predict(X[:10])
    alone = clone(joint).fit(X, y[:, :2]).predict_proba(X[:10])
    for k in range(2):
        np.testing.assert_array_equal(scores[:, k], np.asarray(alone[k])[:, 1])
    np.testing.assert_array_equal(scores[:, 2:], np.broadcast_to(constant_scores(np.array([0, 90]), 90, method),
                                                                  (10, 2)))
    none = ColumnScorer(MultiOutputClassifier(LogisticRegression()), method).fit(X, y[:, 2:])  # nothing varies
    np.testing.assert_array_equal(none.predict(X[:3]), np.broadcast_to(constant_scores(np.array([0, 90]), 90,
                                                                                       method), (3, 2)))


@pytest.mark.parametrize("refit", [True, False])
def test_a_cv_that_is_not_a_partition_or_trains_on_its_test_rows_is_refused(refit):
    """Overlapping test folds threw scores away (refit=False); a split whose training rows held its test rows
    gave 'out-of-fold' scores that moved with their row's own label."""
    X, y = _data(m=40)
    rows = np.arange(40)
    overlapping = [(rows[20:], rows[:20]), (rows[:20], rows[20:]), (rows[10:], rows[:10])]
    leaking = [(rows, rows[:20]), (rows[:20], rows[20:])]
    with pytest.raises(InputError, match="row 0 is in 2"):
        OutOfFoldScores(cv=overlapping, refit=refit).fit_transform(X, y)
    with pytest.raises(InputError, match="split 0 trains on rows it scores"):
        OutOfFoldScores(cv=leaking, refit=refit).fit_transform(X, y)
    partition = [(rows[20:], rows[:20]), (rows[:20], rows[20:])]
    assert OutOfFoldScores(cv=partition, refit=refit).fit_transform(X, y).shape == (40, 4)


def test_seeds_folds_and_features_are_refused_in_one_line_naming_them():
    from hmcpgm.applications import split_validation
    from hmcpgm.datasets import HMCData

    X, y = _data(m=40)
    for bad in (-1, "x", 2**32, True):
        with pytest.raises(InputError, match="random_state must be an integer in"):
            OutOfFoldScores(random_state=bad).fit_transform(X, y)
        with pytest.raises(InputError, match="seed must be an integer in"):
            out_of_fold_scores(X, y, seed=bad, progress=False)
    with pytest.raises(InputError, match="cv must be an int of at least 2"):
        OutOfFoldScores(cv=True).fit_transform(X, y)
    with pytest.raises(InputError, match="X has no feature column"):
        out_of_fold_scores(X[:, :0], y, joint=False, progress=False)
    data = HMCData(features=X, labels=y, hierarchy=None, feature_names=("a", "b", "c", "d"))
    with pytest.raises(InputError, match="valid_fraction must be a number in"):
        split_validation(data, "0.3", 0)
    with pytest.raises(InputError, match="seed must be an integer in"):
        split_validation(data, 0.3, -1)


def test_sparse_labels_read_densely_and_pandas_missing_values_are_missing():
    import pandas as pd
    from scipy import sparse

    X, y = _data(m=40)
    dense = out_of_fold_scores(X, y, n_splits=3, progress=False)
    np.testing.assert_array_equal(out_of_fold_scores(X, sparse.csr_matrix(y), n_splits=3, progress=False), dense)
    np.testing.assert_array_equal(OutOfFoldScores(cv=3).fit_transform(X, sparse.csr_matrix(y)),
                                  OutOfFoldScores(cv=3).fit_transform(X, y))
    X[::7, 1] = np.nan
    with_nan = out_of_fold_scores(pd.DataFrame(X), y, n_splits=3, progress=False)
    with_na = pd.DataFrame(X).astype("Float64")  # pandas' nullable floats: NaN read as pd.NA
    assert with_na.isna().sum().sum() == np.isnan(X).sum()
    np.testing.assert_array_equal(out_of_fold_scores(with_na, y, n_splits=3, progress=False), with_nan)
    with pytest.raises(InputError, match="X is a sparse matrix; pass X.toarray()"):
        out_of_fold_scores(sparse.csr_matrix(X), y, progress=False)
