"""Edge cases of the first stage: leaks, tiny data, constant classes, DataFrames, seeds."""

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.neighbors import KNeighborsClassifier

from hmcpgm import InputError, LabelError
from hmcpgm.first_stage import OutOfFoldScores, fit_first_stage, out_of_fold_scores, predict_scores


def _data(m=60, k=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, 4))
    Y = (rng.random((m, k)) < 0.5).astype(int)
    return X, Y


@pytest.mark.parametrize("refit", [True, False])
def test_out_of_fold_scores_come_from_models_that_never_saw_the_row(refit):
    # reference: refit the classifier by hand on the other folds' rows; a 1-NN memoriser would score
    # its own training rows perfectly, so any leak shows up as a mismatch
    X, Y = _data()
    knn = KNeighborsClassifier(1)
    t = OutOfFoldScores(knn, cv=4, method="predict_proba", refit=refit, random_state=7)
    scores = t.fit_transform(X, Y)
    s_fn, folds = out_of_fold_scores(X, Y, knn, n_splits=4, seed=7, method="predict_proba", progress=False,
                                     return_folds=True)
    assert np.array_equal(t.folds_, folds) and np.array_equal(scores, s_fn)
    for f in range(4):
        test, train = folds == f, folds != f
        for k in range(Y.shape[1]):
            ref = KNeighborsClassifier(1).fit(X[train], Y[train, k]).predict_proba(X[test])[:, 1]
            assert np.array_equal(scores[test, k], ref)
    assert ((scores > 0.5) == Y).mean() < 0.8  # random labels: no memorised row


def test_fewer_rows_than_folds_is_refused_and_as_many_rows_as_folds_works():
    X, Y = _data(m=4)
    with pytest.raises(InputError, match="n_splits=5"):
        out_of_fold_scores(X, Y, progress=False)
    with pytest.raises(InputError, match="cv=5"):
        OutOfFoldScores().fit_transform(X, Y)
    Y = np.array([[1, 0], [0, 1], [1, 1], [0, 0]])
    assert out_of_fold_scores(X, Y, n_splits=4, progress=False).shape == (4, 2)
    assert OutOfFoldScores(cv=4, classwise=True).fit_transform(X, Y).shape == (4, 2)


@pytest.mark.parametrize("classwise", [False, True])
def test_classes_with_one_label_value_score_that_constant(classwise):
    X, Y = _data()
    Y = np.column_stack([Y[:, 0], np.zeros(len(X), int), np.ones(len(X), int)])
    t = OutOfFoldScores(classwise=classwise)
    s = t.fit_transform(X, Y)
    m = len(X)

    def constants(n):  # decision_function (class-wise): log-odds of (p + 1/2) / (n + 1); predict (joint): 0, 1
        return [np.log(0.5 / (n + 0.5)), np.log((n + 0.5) / 0.5)] if classwise else [0.0, 1.0]

    for f in range(5):
        assert np.all(s[t.folds_ == f, 1:] == constants(int((t.folds_ != f).sum())))
    assert np.all(t.transform(X[:3])[:, 1:] == constants(m))
    assert np.unique(s[:, 0]).size > 2
    model = fit_first_stage(X, Y, LogisticRegression() if classwise else None, progress=False)
    assert np.all(predict_scores(model, X[:3])[:, 1:] == constants(m))


def test_seed_fixes_the_folds_and_the_scores():
    X, Y = _data()
    a = OutOfFoldScores(classwise=True, random_state=3)
    b = OutOfFoldScores(classwise=True, random_state=3)
    assert np.array_equal(a.fit_transform(X, Y), b.fit_transform(X, Y))
    assert np.array_equal(a.folds_, b.folds_)
    c = OutOfFoldScores(classwise=True, random_state=4).fit(X, Y)
    assert not np.array_equal(a.folds_, c.folds_)
    s1 = out_of_fold_scores(X, Y, seed=5, progress=False)
    assert np.array_equal(s1, out_of_fold_scores(X, Y, seed=5, progress=False))


def test_joint_and_classwise_give_one_column_per_class():
    X, Y = _data(k=5)
    for t in (OutOfFoldScores(), OutOfFoldScores(classwise=True), OutOfFoldScores(Ridge(), classwise=False),
              OutOfFoldScores(LogisticRegression())):
        assert t.fit_transform(X, Y).shape == (60, 5)
        assert t.transform(X[:7]).shape == (7, 5)


@pytest.mark.parametrize("build", [
    lambda X, Y: out_of_fold_scores(X, Y, progress=False),
    lambda X, Y: fit_first_stage(X, Y, progress=False),
    lambda X, Y: OutOfFoldScores().fit(X, Y),
    lambda X, Y: OutOfFoldScores(classwise=True).fit(X, Y),
])
def test_labels_without_a_class_column_are_refused_in_one_line(build):
    X, _ = _data()
    with pytest.raises(LabelError, match="no class") as info:
        build(X, np.empty((60, 0)))
    assert "\n" not in str(info.value)


def _frames(m=60, k=3):
    X, Y = _data(m, k)
    rows = [f"gene{i}" for i in range(m)]
    return (pd.DataFrame(X, index=rows, columns=list("abcd")),
            pd.DataFrame(Y, index=rows, columns=[f"GO:{j}" for j in range(k)]))


@pytest.mark.parametrize("score", [
    lambda X, Y: out_of_fold_scores(X, Y, progress=False, seed=1),
    lambda X, Y: predict_scores(fit_first_stage(X, Y, progress=False), X),
    lambda X, Y: OutOfFoldScores(classwise=True, random_state=1).fit_transform(X, Y),
    lambda X, Y: OutOfFoldScores(classwise=True, random_state=1).fit(X, Y).transform(X),
])
def test_label_rows_are_paired_with_feature_rows_by_index(score):
    Xd, Yd = _frames()
    shuffled = Yd.iloc[np.random.default_rng(0).permutation(len(Yd))]
    expect = np.asarray(score(Xd, Yd))
    assert np.allclose(np.asarray(score(Xd, shuffled)), expect)
    with pytest.raises(InputError, match="row indexes"):
        score(Xd, Yd.rename(index={"gene0": "other"}))



def test_dataframe_labels_give_dataframe_scores_named_by_class():
    Xd, Yd = _frames()
    s = out_of_fold_scores(Xd, Yd, progress=False)
    assert isinstance(s, pd.DataFrame)
    assert list(s.columns) == list(Yd.columns) and s.index.equals(Xd.index)
    assert np.array_equal(s.to_numpy(), out_of_fold_scores(Xd.to_numpy(), Yd.to_numpy(), progress=False))
    new = predict_scores(fit_first_stage(Xd, Yd, progress=False), Xd.iloc[:5])
    assert isinstance(new, pd.DataFrame) and list(new.columns) == list(Yd.columns)
    assert new.index.equals(Xd.index[:5])
    t = OutOfFoldScores().set_output(transform="pandas")
    out = t.fit_transform(Xd, Yd)
    assert list(out.columns) == list(Yd.columns) and list(t.get_feature_names_out()) == list(Yd.columns)
    assert list(t.transform(Xd.iloc[:2]).columns) == list(Yd.columns)
    # arrays in: arrays out, unchanged
    assert isinstance(out_of_fold_scores(Xd, Yd.to_numpy(), progress=False), np.ndarray)


def test_predict_scores_matches_feature_columns_by_name():
    Xd, Yd = _frames()
    model = fit_first_stage(Xd, Yd, progress=False)
    expect = predict_scores(model, Xd)
    shuffled = predict_scores(model, Xd[["c", "a", "d", "b"]])
    assert np.allclose(shuffled.to_numpy(), expect.to_numpy())
    with pytest.raises(InputError, match="'d'"):
        predict_scores(model, Xd.rename(columns={"d": "e"}))
    assert np.allclose(predict_scores(model, Xd.to_numpy()).to_numpy(), expect.to_numpy())  # arrays: by position


def test_a_class_without_positives_in_a_training_fold_scores_its_prior_on_the_method_scale():
    """The constant of a class whose training rows are all 0 (all 1) is the least committal score on the
    method's scale: the Jeffreys-smoothed training prevalence q = (p + 1/2) / (n + 1) for predict_proba, its
    logit log((p + 1/2) / (n - p + 1/2)) for decision_function (log-odds), the label itself for predict. It was
    0.0 for every method: log-odds 0 (probability 1/2) ranked the fold's rows above the real negatives."""
    X, Y = _data(m=80, k=3, seed=4)
    Y[:, 1] = 0
    Y[7, 1] = 1  # one positive: the fold that holds it trains on none
    Y[:, 2] = 1  # every row positive
    t = OutOfFoldScores(cv=4, classwise=True, random_state=1)
    s = t.fit_transform(X, Y)
    held = t.folds_ == t.folds_[7]
    n = int((~held).sum())  # the training rows of the held fold
    assert s[held, 1] == pytest.approx(np.log(0.5 / (n + 0.5)), rel=1e-12)
    assert np.all(s[held, 1] < np.median(s[~held, 1]))  # here below half the fitted scores (0.0 was above all)
    for f in range(4):
        rows = t.folds_ == f
        n_f = int((~rows).sum())
        assert np.all(s[rows, 2] == np.log((n_f + 0.5) / 0.5))
    # the refitted model: the constant of all 80 rows
    assert np.all(t.transform(X[:3])[:, 2] == np.log(80.5 / 0.5))
    # predict_proba: the smoothed prevalence itself; predict: the label value (what a fit on it predicts)
    p = OutOfFoldScores(LogisticRegression(), cv=4, method="predict_proba", random_state=1).fit_transform(X, Y)
    assert np.all(p[held, 1] == 0.5 / (n + 1))
    assert np.all(p[~held, 2] < 1) and np.all(p[:, 2] > 0.98)
    r = OutOfFoldScores(cv=4, random_state=1).fit_transform(X, Y)  # joint ridge: predict
    assert np.all(r[held, 1] == 0.0) and np.all(r[:, 2] == 1.0)
    model = fit_first_stage(X, Y, LogisticRegression(), progress=False)
    assert model.constants[2] == np.log(80.5 / 0.5) and np.isnan(model.constants[:2]).all()


@pytest.mark.parametrize("refit", [True, False])
def test_a_fold_where_every_class_is_constant_scores_on_the_other_folds_scale(refit):
    """One class, one positive: the fold that holds it trains on negatives alone. Its constant was 0 on the
    predict scale (above every log-odds of the other folds) instead of the Jeffreys log-odds log(0.5 / 40.5)."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(50, 2))
    y = np.zeros(50, int)
    y[7] = 1
    t = OutOfFoldScores(LogisticRegression(), cv=5, refit=refit)
    s = t.fit_transform(x, y)
    fold = t.folds_[7]
    np.testing.assert_allclose(s[t.folds_ == fold, 0], np.log(0.5 / 40.5))
    assert t.method_ == "decision_function"
    if not refit:
        assert [e.method_ for e in t.estimators_] == ["decision_function"] * 5


def _pipeline_data(m=240, seed=2):
    from hmcpgm import Hierarchy

    h = Hierarchy.from_edges([("a", "b"), ("a", "c"), ("c", "d")], classes=["c", "b", "d", "a"])  # not topological
    rng = np.random.default_rng(seed)
    a = rng.random(m) < 0.6
    y = np.column_stack([a & (rng.random(m) < 0.5), a & (rng.random(m) < 0.5), np.zeros(m, bool), a]).astype(int)
    y[:, 2] = y[:, 0] & (rng.random(m) < 0.5)
    F = np.column_stack([y + rng.normal(0, 0.6, y.shape), rng.normal(size=(m, 3))])
    return h, F, pd.DataFrame(y, columns=list(h.classes), index=[f"g{i}" for i in range(m)])


@pytest.mark.parametrize("second", ["mlpr", "correction"])
def test_a_pipeline_pairs_dataframe_labels_with_the_scores_by_name_and_row(second):
    # The transformer's scores follow the labels' column order. As an array, the second stage read them in
    # the hierarchy's order while it matched the DataFrame labels by name: labels [a, b, c, d] paired every
    # score with another class's labels, silently (and a set_output("pandas") RangeIndex re-paired the rows
    # of labels with a shuffled index). Reference: the pipeline on labels in the hierarchy's order.
    from sklearn.pipeline import make_pipeline

    from hmcpgm import MLPR
    from hmcpgm.corrections import HierarchicalCorrection

    h, F, y = _pipeline_data()

    def make():
        stage = (MLPR(hierarchy=h, version="indpt", cv=3) if second == "mlpr"
                 else HierarchicalCorrection(hierarchy=h, correction="htd"))
        return make_pipeline(OutOfFoldScores(cv=3), stage)

    expect = np.asarray(make().fit(F, y).predict_proba(F))
    reordered = np.asarray(make().fit(F, y[["a", "b", "c", "d"]]).predict_proba(F))
    np.testing.assert_array_equal(reordered, expect)
    # set_output("pandas") with array features: the rows of y pair with F by position, whatever y's index
    shuffled = y.set_axis(np.random.default_rng(0).permutation(len(y)), axis=0)
    pipe = make().set_output(transform="pandas").fit(F, shuffled)
    np.testing.assert_array_equal(np.asarray(pipe.predict_proba(F)), expect)
    # and with array labels: the scores are named outoffoldscores0, ... (no class names), in class order
    # (audit53: refused, "missing: ['d', ...]; not classes of the hierarchy: ['outoffoldscores0', ...]")
    pipe = make().set_output(transform="pandas").fit(F, y.to_numpy())
    np.testing.assert_array_equal(np.asarray(pipe.predict_proba(F)), expect)


def test_the_transformer_names_its_scores_by_the_labels_and_matches_features_by_name():
    Xd, Yd = _frames()
    t = OutOfFoldScores(cv=3)
    train = t.fit_transform(Xd, Yd)
    assert isinstance(train, pd.DataFrame) and list(train.columns) == list(Yd.columns)
    assert train.index.equals(Xd.index)
    np.testing.assert_array_equal(train.to_numpy(), OutOfFoldScores(cv=3).fit_transform(Xd.to_numpy(), Yd.to_numpy()))
    new = t.transform(Xd.iloc[:5])
    assert list(new.columns) == list(Yd.columns) and new.index.equals(Xd.index[:5])
    np.testing.assert_array_equal(t.transform(Xd.iloc[:5, ::-1]).to_numpy(), new.to_numpy())  # by name
    with pytest.raises(ValueError, match=r"feature names\): it lacks \['d'\]"):
        t.transform(Xd.rename(columns={"d": "e"}))
    assert isinstance(OutOfFoldScores(cv=3).fit(Xd, Yd.to_numpy()).transform(Xd), np.ndarray)  # array labels
