"""The default second stage: version="auto", fitted evidence strength, recalibration."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.metrics import average_precision_score, make_scorer
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline

from hmcpgm import MLPR, InputError, hier_rank
from hmcpgm.datasets import make_paper_synthetic
from hmcpgm.first_stage import OutOfFoldScores
from hmcpgm.persist import load_model, save_model


@pytest.fixture(scope="module")
def paper():
    return make_paper_synthetic(n_train=5000, n_test=1000, seed=0)


@pytest.fixture(scope="module")
def auto_model(paper):
    return MLPR(hierarchy=paper.hierarchy).fit(paper.train_scores, paper.train_labels)


def test_auto_picks_full_on_data_drawn_from_the_model(auto_model):
    table = auto_model.cv_results_.set_index("version")
    assert auto_model.version_ == "full"
    assert list(table.index) == ["indpt", "nbh", "full"]
    assert table.loc["full", "chosen"] and table["chosen"].sum() == 1
    # the paper's evidence strength is right for data from the paper's model
    assert np.all(np.abs(auto_model.tempering_ - 1) < 0.15)
    assert table.loc["full", "cv_log_loss"] < table.loc["nbh", "cv_log_loss"] < table.loc["indpt", "cv_log_loss"]


def test_recalibration_keeps_the_hierarchy_and_the_order(auto_model, paper):
    h = paper.hierarchy
    p = auto_model.predict_proba(paper.test_scores)
    g = auto_model.calibrated_proba(paper.test_scores)
    n_below = 0
    for child, parents in enumerate(h.parent_indices):
        for parent in parents:  # a child stays at or below its parent wherever its mLPR does
            below = p[:, child] <= p[:, parent]
            n_below += below.sum()
            assert np.all(g[below, child] <= g[below, parent] + 1e-12)
    assert n_below > 0.5 * len(p) * (h.n_classes - len(h.roots))  # most pairs: the check is not vacuous
    # one increasing map for all events: the order of distinct mLPRs is kept (ties allowed)
    order = np.argsort(-p.ravel(), kind="stable")
    assert np.all(np.diff(g.ravel()[order]) <= 1e-12)
    assert auto_model.recalibration_ is not None


def test_predict_is_decide_of_predict_proba(auto_model, paper):
    s = paper.test_scores[:200]
    d = auto_model.predict(s)
    np.testing.assert_array_equal(d, auto_model.decide(auto_model.predict_proba(s)))
    h = paper.hierarchy
    for child, parents in enumerate(h.parent_indices):
        for parent in parents:
            assert np.all(d[:, child] <= d[:, parent])
    with pytest.raises(InputError, match=r"mlpr must have shape \(M, 25\)"):
        auto_model.decide(np.zeros((3, 4)))


def test_one_training_score_of_1e6_moves_the_default_models_test_mlprs_by_less_than_0_05(paper):
    k = 3
    s = paper.train_scores.copy()
    before = MLPR(hierarchy=paper.hierarchy).fit(s, paper.train_labels)
    s[np.flatnonzero(paper.train_labels[:, k] == 1)[0], k] = 1e6
    after = MLPR(hierarchy=paper.hierarchy).fit(s, paper.train_labels)
    p0, p1 = before.predict_proba(paper.test_scores), after.predict_proba(paper.test_scores)
    assert np.abs(p1[:, k] - p0[:, k]).max() < 0.05
    assert np.abs(p1 - p0).max() < 0.05


def test_paper_model_is_the_plain_fit(paper):
    plain = MLPR(hierarchy=paper.hierarchy, version="nbh", score_model="lpr", tempering=None,
                 recalibrate=False).fit(paper.train_scores, paper.train_labels)
    assert plain.cv_results_ is None and plain.recalibration_ is None and plain.version_ == "nbh"
    np.testing.assert_array_equal(plain.tempering_, np.ones(25))
    np.testing.assert_array_equal(plain.calibrated_proba(paper.test_scores[:5]),
                                  plain.predict_proba(paper.test_scores[:5]))


def test_fixed_version_with_fitted_tempering(paper):
    model = MLPR(hierarchy=paper.hierarchy, version="nbh", recalibrate=False).fit(
        paper.train_scores, paper.train_labels)
    assert model.version_ == "nbh" and list(model.cv_results_["version"]) == ["nbh"]


def test_density_models_cannot_be_cross_fitted(paper):
    with pytest.raises(InputError, match="score_model='gaussian' is a density model"):
        MLPR(hierarchy=paper.hierarchy, score_model="gaussian").fit(paper.train_scores, paper.train_labels)
    model = MLPR(hierarchy=paper.hierarchy, version="full", score_model="gaussian", tempering=None,
                 recalibrate=False).fit(paper.train_scores, paper.train_labels)
    assert model.version_ == "full"


@pytest.mark.parametrize(("name", "value", "message"), [
    ("version", "best", "version must be one of"),
    ("tempering", "by_size", "tempering must be one of"),
    ("recalibrate", 1, "recalibrate must be True or False"),
    ("cv", 1, "cv must be an integer >= 2"),
    ("random_state", None, "random_state must be an integer"),
])
def test_bad_parameters_are_one_line_errors(paper, name, value, message):
    with pytest.raises(InputError, match=message):
        MLPR(hierarchy=paper.hierarchy, **{name: value}).fit(paper.train_scores[:300], paper.train_labels[:300])


def test_saved_auto_model_predicts_identically(auto_model, paper, tmp_path):
    save_model(auto_model, tmp_path / "m.npz")
    again = load_model(tmp_path / "m.npz")
    s = paper.test_scores[:50]
    assert again.version_ == auto_model.version_
    np.testing.assert_array_equal(again.tempering_, auto_model.tempering_)
    np.testing.assert_array_equal(again.calibrated_proba(s), auto_model.calibrated_proba(s))
    np.testing.assert_array_equal(again.predict(s), auto_model.predict(s))
    assert list(again.cv_results_["version"]) == list(auto_model.cv_results_["version"])
    # the pool's and the consistency's choices, as fitted (audit53: the loaded table had no attrs)
    assert again.cv_results_.attrs == auto_model.cv_results_.attrs
    assert set(again.cv_results_.attrs) == {"pool", "stack", "consistency"}


def _features(paper, m, seed):
    """Features from which a first stage can learn the paper's labels (a noisy linear mix)."""
    rng = np.random.default_rng(seed)
    y = paper.train_labels[:m]
    mix = rng.normal(size=(y.shape[1], 12))
    return (2 * y - 1) @ mix + rng.normal(scale=4.0, size=(m, 12)), y


def test_grid_search_over_the_version_and_the_first_stage(paper):
    X, y = _features(paper, 1200, 0)
    pipe = make_pipeline(OutOfFoldScores(cv=3), MLPR(hierarchy=paper.hierarchy, cv=3))
    grid = GridSearchCV(
        pipe,
        {"mlpr__version": ["indpt", "auto"], "outoffoldscores__classwise": [False, True]},
        cv=2,
        scoring=make_scorer(average_precision_score, response_method="predict_proba", average="micro"),
    ).fit(X, y)
    assert len(grid.cv_results_["mean_test_score"]) == 4
    assert np.all(np.isfinite(grid.cv_results_["mean_test_score"]))
    best = grid.best_estimator_
    p = best.predict_proba(X[:10])
    assert p.shape == (10, 25)
    assert hier_rank(p, paper.hierarchy).n_objects == 10


def test_another_version_after_fitting(auto_model, paper):
    s = paper.test_scores[:20]
    chosen = auto_model.predict_proba(s)
    other = clone(auto_model).set_params(version="auto")
    other.__dict__.update({k: v for k, v in auto_model.__dict__.items() if k.endswith("_")})
    np.testing.assert_array_equal(other.predict_proba(s), chosen)  # "auto" predicts the chosen version
    other.set_params(version="nbh")
    with pytest.raises(InputError, match="version was set to 'nbh' after fitting"):
        other.predict_proba(s)
    # the paper's model (nothing cross-fitted) predicts any version from one fit
    plain = MLPR(hierarchy=paper.hierarchy, version="full", tempering=None, recalibrate=False).fit(
        paper.train_scores, paper.train_labels)
    nbh = MLPR(hierarchy=paper.hierarchy, version="nbh", tempering=None, recalibrate=False).fit(
        paper.train_scores, paper.train_labels)
    np.testing.assert_allclose(plain.set_params(version="nbh").predict_proba(s), nbh.predict_proba(s), rtol=1e-12)
    assert plain.engine_in_use() == nbh.engine_in_use()
