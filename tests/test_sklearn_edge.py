"""MLPR and HierarchicalCorrection as a demanding scikit-learn user drives them.

scikit-learn's generic checks draw X and y with different column counts, which these
estimators refuse (tests/test_sklearn.py names those checks); here the same contracts
are checked on data they take: X with one score column per class of y.
"""

import copy
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from hmcpgm import MLPR, Hierarchy, InputError, LabelNetwork
from hmcpgm.corrections import HierarchicalCorrection

# a forest and a DAG in one, columns not in topological order
H = Hierarchy.from_edges([("a", "b"), ("a", "c"), ("b", "d"), ("c", "d"), ("e", "f")],
                         classes=["d", "f", "b", "a", "e", "c"])


def _data(n, seed):
    rng = np.random.default_rng(seed)
    y = LabelNetwork(H, rng.uniform(0.3, 0.9, H.n_classes)).sample(n, rng)
    return rng.normal(1.5 * y), y


X, Y = _data(600, 0)
ESTIMATORS = {
    "mlpr-paper": lambda: MLPR(H, version="indpt", tempering=None, recalibrate=False),
    "mlpr-auto": lambda: MLPR(H, cv=3),
    "mlpr-flat": lambda: MLPR(version="full", tempering=None, recalibrate=False),
    "correction": lambda: HierarchicalCorrection(H, correction="iso_tpr"),
    "correction-flat": lambda: HierarchicalCorrection(calibration="platt", correction="htd"),
}
FITTED = {}


def _fitted(name):
    if name not in FITTED:
        FITTED[name] = ESTIMATORS[name]().fit(X, Y)
    return FITTED[name]


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


# ---------------------------------------------------------------------- before fit
@pytest.mark.parametrize("name", ESTIMATORS)
@pytest.mark.parametrize("method", ["predict", "predict_proba", "score"])
def test_every_method_before_fit_raises_not_fitted(name, method):
    est = ESTIMATORS[name]()
    args = (X, Y) if method == "score" else (X,)
    with pytest.raises(NotFittedError):
        getattr(est, method)(*args)


# ---------------------------------------------------------------------- parameters checked at fit, not at predict
@pytest.mark.parametrize("params", [
    {"inference_options": {"bogus": 1}},
    {"inference_options": {"max_classes": 3}},  # an option of engine="enumerate", not of "auto"
    {"engine": "junction", "inference_options": {"tol": 1e-3}},
    {"engine": "loopy", "inference_options": {"damping": 2.0}},
    {"engine": "loopy", "inference_options": {"max_iter": 0}},
    {"engine": "loopy", "inference_options": {"tol": "small"}},
])
def test_bad_inference_options_are_refused_by_fit(params):
    """A grid search over them would otherwise fit every fold and turn each prediction's error into a NaN score."""
    est = MLPR(H, version="full", tempering=None, recalibrate=False, **params)
    with pytest.raises(InputError, match="option|damping|max_iter|tol"):
        est.fit(X, Y)
    assert not hasattr(est, "second_stage_")


@pytest.mark.slow
def test_a_grid_over_inference_options_has_no_nan_scores():
    grid = GridSearchCV(MLPR(H, version="full", tempering=None, recalibrate=False, engine="loopy"),
                        {"inference_options": [{"damping": 0.0}, {"damping": 0.5}]}, cv=KFold(3))
    grid.fit(X, Y)
    assert np.isfinite(grid.cv_results_["mean_test_score"]).all()


# ---------------------------------------------------------------------- DataFrames: by class name and row index
@pytest.mark.parametrize("name", ESTIMATORS)
def test_score_pairs_dataframes_by_class_name_and_row_index(name):
    """fit pairs a y DataFrame with X by column name and row index; score must too (else a silently wrong score)."""
    est = _fitted(name)
    classes = list(est.classes_)
    Xd, yd = pd.DataFrame(X, columns=classes), pd.DataFrame(Y, columns=classes)
    expected = est.score(X, Y)
    assert est.score(Xd, yd) == expected
    assert est.score(Xd, yd[sorted(classes, key=str)]) == expected  # y's columns in another order
    assert est.score(Xd[classes[::-1]], yd) == expected  # X's columns in another order
    assert est.score(Xd, yd.sample(frac=1, random_state=0)) == expected  # y's rows in another order


@pytest.mark.parametrize("name", ESTIMATORS)
def test_a_series_labelled_by_class_names_is_one_object_everywhere(name):
    """A one-row Series (index = class names, any order) is one object, as hier_rank takes it: a one-row
    DataFrame out, equal to the array's row."""
    est = _fitted(name)
    classes = list(est.classes_)
    shuffled = classes[::-1]
    row = 7
    xs = pd.Series(X[row], index=classes, name="obj")[shuffled]
    ys = pd.Series(Y[row], index=classes, name="obj")[shuffled]
    methods = ["predict", "predict_proba"] + (["lpr", "calibrated_proba"] if "mlpr" in name else ["calibrated"])
    for method in methods:
        got, ref = getattr(est, method)(xs), getattr(est, method)(X[row:row + 1])
        assert isinstance(got, pd.DataFrame), method
        assert list(got.columns) == classes and list(got.index) == ["obj"], method
        np.testing.assert_array_equal(got.to_numpy(), ref, err_msg=method)
    assert est.score(xs, ys) == est.score(X[row:row + 1], Y[row:row + 1])
    if "mlpr" in name:
        np.testing.assert_array_equal(est.likelihoods(xs), est.likelihoods(X[row:row + 1]))
        p = pd.Series(est.predict_proba(X[row:row + 1])[0], index=classes)[shuffled]
        got = est.decide(p)
        assert isinstance(got, pd.DataFrame) and list(got.columns) == classes
        np.testing.assert_array_equal(got.to_numpy(), est.predict(X[row:row + 1]))


# ---------------------------------------------------------------------- the estimator contract, on data they take
@pytest.mark.parametrize("name", ESTIMATORS)
def test_clone_get_params_set_params_round_trip(name):
    est = ESTIMATORS[name]()
    twin = clone(est)
    assert twin.get_params(deep=False).keys() == est.get_params(deep=False).keys()
    assert repr(twin.get_params()) == repr(est.get_params())
    assert twin.set_params(threshold=0.25) is twin and twin.threshold == 0.25 and est.threshold == 0.5
    with pytest.raises(ValueError, match="Invalid parameter 'nonsense'"):
        twin.set_params(nonsense=1)
    fitted = _fitted(name)
    assert not hasattr(clone(fitted), "classes_")  # a clone is unfitted
    params = repr(est.get_params())
    clone(est).fit(X, Y)
    assert repr(est.get_params()) == params  # fit changes no parameter


@pytest.mark.parametrize("name", ESTIMATORS)
def test_pickled_fitted_estimator_predicts_the_same(name):
    est = _fitted(name)
    again = pickle.loads(pickle.dumps(est))
    assert np.array_equal(again.predict_proba(X), est.predict_proba(X))
    assert np.array_equal(again.predict(X), est.predict(X))
    assert again.score(X, Y) == est.score(X, Y)


@pytest.mark.parametrize("name", ESTIMATORS)
def test_predictions_do_not_depend_on_the_other_rows(name):
    est = _fitted(name)
    p = est.predict_proba(X)
    np.testing.assert_allclose(est.predict_proba(X[:17]), p[:17], rtol=0, atol=1e-12)
    np.testing.assert_allclose(est.predict_proba(X[::-1]), p[::-1], rtol=0, atol=1e-12)
    assert np.array_equal(est.predict(X[5:6]), est.predict(X)[5:6])
    assert np.array_equal(clone(est).fit(X, Y).predict_proba(X), p)  # fit is idempotent
    d = copy.deepcopy(est.__dict__)
    est.predict(X), est.predict_proba(X), est.score(X, Y)
    assert d.keys() == est.__dict__.keys()  # predictions add no state


@pytest.mark.parametrize("name", ESTIMATORS)
def test_fit_again_on_other_data_forgets_the_first_fit(name):
    Xd = pd.DataFrame(X, columns=[str(c) for c in _fitted(name).classes_])  # string names: feature_names_in_ set
    if "flat" not in name:
        Xd.columns = list(H.classes)
    est = ESTIMATORS[name]().fit(Xd, pd.DataFrame(Y, columns=Xd.columns))
    assert list(est.feature_names_in_) == [str(c) for c in Xd.columns] and est.n_features_in_ == H.n_classes
    X2, Y2 = _data(400, 7)
    est.fit(X2, Y2)
    assert not hasattr(est, "feature_names_in_")
    assert np.array_equal(est.predict_proba(X), ESTIMATORS[name]().fit(X2, Y2).predict_proba(X))


@pytest.mark.slow
@pytest.mark.parametrize("name", ESTIMATORS)
def test_grid_search_pipeline_and_cross_val_score_give_finite_scores(name):
    scores = cross_val_score(ESTIMATORS[name](), X, Y, cv=KFold(3))
    assert scores.shape == (3,) and np.isfinite(scores).all()
    pipe = make_pipeline(StandardScaler().set_output(transform="pandas"), ESTIMATORS[name]())
    step = pipe.steps[-1][0]
    Xd = pd.DataFrame(X, columns=[str(c) for c in _fitted(name).classes_])
    if "flat" in name:  # flat classes are named by the DataFrame's columns
        Y_ = pd.DataFrame(Y, columns=Xd.columns)
    else:
        Xd.columns = list(H.classes)
        Y_ = Y
    grid = GridSearchCV(pipe, {f"{step}__threshold": [0.3, 0.6]}, cv=KFold(3), scoring="f1_micro",
                        error_score="raise").fit(Xd, Y_)
    assert np.isfinite(grid.cv_results_["mean_test_score"]).all()
    assert isinstance(grid.predict_proba(Xd), pd.DataFrame)


@pytest.mark.parametrize("name", ["mlpr-flat", "correction-flat"])
def test_feature_names_follow_scikit_learns_rule(name):
    """feature_names_in_ only for string column names, as scikit-learn sets it; no warning on arrays otherwise."""
    from sklearn.linear_model import LogisticRegression

    assert not hasattr(LogisticRegression().fit(pd.DataFrame(X), Y[:, 0]), "feature_names_in_")  # the rule
    est = ESTIMATORS[name]().fit(pd.DataFrame(X), pd.DataFrame(Y))  # integer column names
    assert not hasattr(est, "feature_names_in_") and est.n_features_in_ == H.n_classes
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        est.predict_proba(X)
    named = [f"k{j}" for j in range(H.n_classes)]
    est = ESTIMATORS[name]().fit(pd.DataFrame(X, columns=named), pd.DataFrame(Y, columns=named))
    assert list(est.feature_names_in_) == named


def test_two_string_classes_what_the_classes_docstring_says_of_scoring_strings():
    """``classes_`` of two strings reads as a binary target to scikit-learn's scoring strings (MLPR's
    docstring says so); a callable scorer and the default score rank both columns."""
    from sklearn.metrics import average_precision_score, get_scorer

    h = Hierarchy.from_edges([("a", "b")], classes=["b", "a"])
    rng = np.random.default_rng(0)
    a = rng.random(400) < 0.5
    y = np.column_stack([a & (rng.random(400) < 0.5), a]).astype(int)
    s = rng.normal(1.5 * y, 1.0)
    model = MLPR(hierarchy=h, version="full", tempering=None, recalibrate=False).fit(s[:200], y[:200])
    with pytest.raises(ValueError, match="pos_label"):
        get_scorer("average_precision")(model, s[200:], y[200:])

    def scorer(est, X, labels):
        return average_precision_score(labels, est.predict_proba(X), average="micro")

    scores = cross_val_score(MLPR(hierarchy=h, version="full", tempering=None, recalibrate=False), s, y,
                             scoring=scorer, cv=2)
    assert np.all((scores > 0.5) & (scores <= 1))
    assert 0.5 < model.score(s[200:], y[200:]) <= 1


@pytest.mark.parametrize("change", [{"calibration": "maxnorm"}, {"correction": "htd"}, {"options": {"t": 0.3}}])
def test_a_correction_refuses_to_predict_after_a_fit_parameter_changed(change):
    """calibration changed from isotonic to maxnorm after fit gave the raw scores, maxnorm to none took effect at
    once, and a changed correction was ignored: one rule now, scikit-learn's, said in one line (audit42)."""
    model = clone(_fitted("correction")).fit(X, Y)
    expected = model.predict_proba(X)
    model.set_params(**change)
    name = next(iter(change))
    for method in (model.predict_proba, model.calibrated, model.predict):
        with pytest.raises(InputError, match=f"^{name} was set to .* after fitting with .*call fit again"):
            method(X)
    model.set_params(**{name: _fitted("correction").get_params()[name]})
    np.testing.assert_array_equal(model.predict_proba(X), expected)


@pytest.mark.parametrize("name", ["mlpr-paper", "correction"])
def test_a_threshold_set_after_fit_is_checked_when_it_is_used(name):
    # threshold=2 after fit gave all 0s, -1 all 1s, "0.5" a numpy error
    model = copy.deepcopy(_fitted(name))
    for bad in (2.0, -1, "0.5"):
        model.set_params(threshold=bad)
        with pytest.raises(InputError, match=r"^threshold must be a number in \(0, 1\)"):
            model.predict(X)
    model.set_params(threshold=0.3)  # read at prediction: it takes effect at once
    assert model.predict(X).sum() >= _fitted(name).predict(X).sum()


def test_mlpr_refuses_to_predict_after_recalibrate_or_the_score_model_changed():
    model = copy.deepcopy(_fitted("mlpr-auto"))
    p = model.predict_proba(X)
    for change in ({"recalibrate": False}, {"score_model": "isotonic"}, {"pool": None}):
        model.set_params(**change)
        name = next(iter(change))
        for call in (lambda: model.calibrated_proba(X), lambda: model.predict(X), lambda: model.decide(p)):
            with pytest.raises(InputError, match=f"^{name} was set to .* after fitting with"):
                call()
        model.set_params(**{name: _fitted("mlpr-auto").get_params()[name]})
    np.testing.assert_array_equal(model.predict(X), _fitted("mlpr-auto").predict(X))


def test_out_of_fold_scores_refuses_a_refit_changed_after_fit():
    # refit=True -> False after fit returned 1-D averages of 0/1 predictions; False -> True an AttributeError
    from sklearn.linear_model import LogisticRegression

    from hmcpgm.first_stage import OutOfFoldScores

    features = np.column_stack([X, np.random.default_rng(1).normal(size=(len(X), 2))])
    for refit in (True, False):
        first = OutOfFoldScores(LogisticRegression(max_iter=500), cv=3, refit=refit).fit(features, Y)
        first.set_params(refit=not refit)
        with pytest.raises(InputError, match=f"^refit was set to {not refit} after fitting with {refit}"):
            first.transform(features[:4])


@pytest.mark.parametrize("second", ["mlpr-paper", "correction"])
def test_a_pipeline_of_array_features_and_dataframe_labels_scores_new_rows(second):
    """OutOfFoldScores indexed its training scores by y's labels and new rows from 0, so the second stage refused
    y_test beside them: cross_val_score gave nan on every fold whose test rows were not numbered from 0."""
    from sklearn.pipeline import Pipeline

    from hmcpgm.first_stage import OutOfFoldScores

    rng = np.random.default_rng(2)
    features = np.column_stack([X + rng.normal(size=X.shape), rng.normal(size=(len(X), 2))])
    labels = pd.DataFrame(Y, columns=list(H.classes), index=rng.permutation(len(Y)) + 1000)[["a", "c", "f", "b",
                                                                                            "e", "d"]]
    pipe = Pipeline([("oof", OutOfFoldScores(cv=3)), ("second", ESTIMATORS[second]())])
    scores = cross_val_score(pipe, features, labels, cv=KFold(3), error_score="raise")
    reset = cross_val_score(pipe, features, labels.reset_index(drop=True), cv=KFold(3), error_score="raise")
    np.testing.assert_array_equal(scores, reset)
    assert np.all(np.isfinite(scores))


def test_positional_scores_reordered_by_the_user_are_paired_by_index_again():
    # pandas carries attrs to a sorted copy: paired by position, its rows would meet other objects' labels
    from hmcpgm.first_stage import OutOfFoldScores

    features = np.column_stack([X, np.random.default_rng(3).normal(size=(len(X), 2))])
    labels = pd.DataFrame(Y, columns=list(H.classes))
    ids = labels.set_axis(labels.index + 500)
    first = OutOfFoldScores(cv=3)
    model = ESTIMATORS["mlpr-paper"]().fit(first.fit_transform(features, ids), ids)
    scores = first.transform(features)  # new rows of an array X: positions, numbered from 0
    expected = model.score(scores, ids)  # paired by position
    shuffled = scores.sample(frac=1.0, random_state=0)
    assert shuffled.attrs  # the flag came along
    with pytest.raises(InputError, match="row indexes hold different labels"):
        model.score(shuffled, ids)
    assert model.score(shuffled, labels) == expected  # by index: the same pairs


def test_the_fitted_parameters_are_kept_only_by_a_fit_that_succeeds_and_as_copies(tmp_path):
    """A fit that failed kept the new values as fitted (the old model predicted under them), a dict changed in
    place went unseen, and an equal new classifier was refused (a review, audit43)."""
    from sklearn.linear_model import LogisticRegression

    from hmcpgm.first_stage import OutOfFoldScores
    from hmcpgm.persist import save_model

    model = copy.deepcopy(_fitted("mlpr-auto"))
    model.set_params(recalibrate=False)
    with pytest.raises(InputError):
        model.fit(X, Y[:, :2])
    with pytest.raises(InputError, match="^recalibrate was set to False after fitting with True"):
        model.calibrated_proba(X)
    with pytest.raises(InputError, match="changed after fit: recalibrate was set to False"):
        save_model(model, tmp_path / "m.npz")  # the file would hide the change: its model says False
    model.set_params(recalibrate=True)
    np.testing.assert_array_equal(model.calibrated_proba(X), _fitted("mlpr-auto").calibrated_proba(X))

    correction = HierarchicalCorrection(H, correction="tpr_dag", options={"bottomup": "threshold", "t": 0.3})
    correction.fit(X, Y)
    correction.options["t"] = 0.9
    with pytest.raises(InputError, match=r"^options was set to .*'t': 0.9.* after fitting with .*'t': 0.3"):
        correction.predict_proba(X)
    correction.set_params(options={"bottomup": "threshold", "t": 0.3})
    correction.predict_proba(X)

    features = np.column_stack([X, np.random.default_rng(4).normal(size=(len(X), 2))])
    first = OutOfFoldScores(LogisticRegression(max_iter=300), cv=3).fit(features, Y)
    first.set_params(estimator=LogisticRegression(max_iter=300))  # an equal new object: the same value
    first.transform(features[:3])
    first.set_params(estimator__C=100.0)
    with pytest.raises(InputError, match="^estimator was set to"):
        first.transform(features[:3])


def test_out_of_fold_scores_keep_the_labels_index_for_an_array_x():
    from hmcpgm.first_stage import OutOfFoldScores

    labels = pd.DataFrame(Y, columns=list(H.classes), index=[f"g{i}" for i in range(len(Y))])
    features = np.column_stack([X, np.random.default_rng(5).normal(size=(len(X), 2))])
    scores = OutOfFoldScores(cv=3).fit_transform(features, labels)
    assert list(scores.index[:2]) == ["g0", "g1"]  # the objects' ids, as before the positional rows
    model = ESTIMATORS["mlpr-paper"]().fit(scores, labels)
    assert list(model.predict(scores).index[:2]) == ["g0", "g1"]
