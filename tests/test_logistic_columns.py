"""LogisticColumns: every column's L2 logistic regression at once, against scikit-learn's one at a time."""

import numpy as np
import pytest
from scipy.special import expit
from sklearn.linear_model import LogisticRegression
from sklearn.utils.estimator_checks import parametrize_with_checks

from hmcpgm.exceptions import InputError
from hmcpgm.first_stage import LogisticColumns, OutOfFoldScores, default_classwise_classifier


def _data(seed=0, m=300, f=6, k=8):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, f)) * rng.uniform(0.2, 3.0, size=f)
    Y = np.column_stack([X @ rng.normal(size=f) + rng.normal(size=m) > rng.uniform(0, 4) for _ in range(k)])
    Y[:, 0] = 0
    Y[rng.choice(m, 2, replace=False), 0] = 1  # a rare class: two positives
    Y[:, 1] = X[:, 0] > 0                       # separable: only the penalty keeps it finite
    return X, Y.astype(int)


def _objective(X, y, w, b, C=1.0):
    z = X @ w + b
    return 0.5 * w @ w + C * (np.logaddexp(0.0, z) - y * z).sum()


def _gradient(X, y, w, b, C=1.0):
    r = expit(X @ w + b) - y
    return np.concatenate([[C * r.sum()], C * X.T @ r + w])


@pytest.mark.parametrize("C", [0.1, 1.0, 10.0])
def test_each_column_is_scikit_learns_logistic_regression(C):
    X, Y = _data()
    model = LogisticColumns(C=C).fit(X, Y)
    for k in range(Y.shape[1]):
        ref = LogisticRegression(C=C, tol=1e-12, max_iter=100_000).fit(X, Y[:, k])
        # the same optimum: coefficients agree, and ours is at least as optimal
        assert np.abs(model.coef_[k] - ref.coef_[0]).max() < 1e-4
        assert abs(model.intercept_[k] - ref.intercept_[0]) < 1e-4
        ours = _objective(X, Y[:, k], model.coef_[k], model.intercept_[k], C)
        theirs = _objective(X, Y[:, k], ref.coef_[0], ref.intercept_[0], C)
        assert ours <= theirs + 1e-9 * max(1.0, abs(theirs))
        grad = _gradient(X, Y[:, k], model.coef_[k], model.intercept_[k], C)
        assert np.abs(grad).max() <= 1e-8 * C * len(X) * 1.000001


def test_columns_are_independent_of_each_other():
    X, Y = _data(seed=1)
    together = LogisticColumns().fit(X, Y)
    for k in (0, 3, 7):
        alone = LogisticColumns().fit(X, Y[:, [k]])
        assert np.allclose(alone.coef_[0], together.coef_[k], atol=1e-6)


def test_columns_solved_in_blocks_give_the_same_models(monkeypatch):
    import hmcpgm.first_stage._logistic as module

    X, Y = _data(seed=5, m=100, k=7)
    whole = LogisticColumns().fit(X, Y)
    monkeypatch.setattr(module, "_BLOCK_EVENTS", 250)  # 2 columns per block
    blocks = LogisticColumns().fit(X, Y)
    np.testing.assert_allclose(blocks.coef_, whole.coef_, atol=1e-12)
    np.testing.assert_allclose(blocks.intercept_, whole.intercept_, atol=1e-12)


def test_constant_columns_get_infinite_intercepts_and_the_scorer_their_constants():
    X, Y = _data(seed=2, k=4)
    Y[:, 2], Y[:, 3] = 0, 1
    model = LogisticColumns().fit(X, Y)
    assert model.intercept_[2] == -np.inf and model.intercept_[3] == np.inf
    assert np.all(model.coef_[2:] == 0.0)
    first = OutOfFoldScores(classwise=True, cv=3)
    scores = first.fit_transform(X, Y)
    for f in range(3):  # the log-odds of the Jeffreys-smoothed prevalence of the fold's n training rows
        n = int((first.folds_ != f).sum())
        rows = first.folds_ == f
        assert np.all(scores[rows, 2] == np.log(0.5 / (n + 0.5))) and np.all(scores[rows, 3] == np.log((n + 0.5) / 0.5))
    assert np.isfinite(scores).all()


def test_one_dimensional_y_with_any_two_labels():
    X, Y = _data(seed=3, k=2)
    y = np.where(Y[:, 1] == 1, "yes", "no")
    model = LogisticColumns().fit(X, y)
    assert model.decision_function(X).shape == (len(X),)
    assert model.predict_proba(X).shape == (len(X), 2)
    assert set(model.predict(X)) <= {"yes", "no"}
    ref = LogisticRegression(tol=1e-12, max_iter=100_000).fit(X, y)
    assert np.abs(model.decision_function(X) - ref.decision_function(X)).max() < 1e-4


def test_the_classwise_first_stage_fits_once_and_matches_a_clone_per_class():
    X, Y = _data(seed=4, m=200, k=5)
    fast = OutOfFoldScores(classwise=True, cv=4)
    slow_est = default_classwise_classifier()
    slow_est.steps[-1] = ("logisticregression", LogisticRegression(tol=1e-12, max_iter=100_000))
    slow = OutOfFoldScores(slow_est, classwise=True, cv=4)
    a, b = fast.fit_transform(X, Y), slow.fit_transform(X, Y)
    assert len(fast.estimators_) == 1 and len(slow.estimators_) == Y.shape[1]
    assert fast.classwise_ and slow.classwise_
    assert np.abs(a - b).max() < 1e-3
    assert np.abs(fast.transform(X[:20]) - slow.transform(X[:20])).max() < 1e-3


@pytest.mark.parametrize(
    "params, match",
    [
        ({"C": 0}, "C must be a positive finite number, got 0"),
        ({"tol": -1.0}, "tol must be a positive finite number, got -1.0"),
        ({"max_iter": 0}, "max_iter must be an integer >= 1, got 0"),
    ],
)
def test_bad_parameters_are_refused_in_one_line(params, match):
    X, Y = _data(k=2)
    with pytest.raises(InputError, match=match):
        LogisticColumns(**params).fit(X, Y)


def test_labels_other_than_0_1_in_a_matrix_are_refused():
    X, Y = _data(k=2)
    Y[0, 1] = 2
    with pytest.raises(InputError, match="y must hold 0/1 labels in every column"):
        LogisticColumns().fit(X, Y)


def test_too_few_iterations_warn():
    from sklearn.exceptions import ConvergenceWarning

    X, Y = _data()
    with pytest.warns(ConvergenceWarning, match="did not converge in max_iter=1 Newton iterations"):
        LogisticColumns(max_iter=1).fit(X, Y)


@parametrize_with_checks([LogisticColumns()])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)
