import numpy as np
import pytest

from hmcpgm import Hierarchy, InputError
from hmcpgm.datasets import make_paper_synthetic
from hmcpgm.inference import mlpr_from_likelihoods
from hmcpgm.network import LabelNetwork
from hmcpgm.selection import cross_fit, cross_fitted_mlpr, fit_second_stage_auto
from hmcpgm.tempering import temper, tempering_groups


# ---------------------------------------------------------------------- tempering
def _likelihoods(rng, m, k):
    return np.exp(rng.normal(scale=2.0, size=(m, k, 2)))


def test_temper_one_is_identity_and_zero_gives_the_prior():
    rng = np.random.default_rng(0)
    h = Hierarchy.from_parents([None, 0, 0, 1, None])
    theta = rng.uniform(0.2, 0.8, 5)
    L = _likelihoods(rng, 30, 5)
    np.testing.assert_array_equal(temper(L, 1.0), L)
    for version in ("indpt", "nbh", "full"):
        p1 = mlpr_from_likelihoods(LabelNetwork(h, theta), temper(L, 1.0), version=version)
        np.testing.assert_allclose(p1, mlpr_from_likelihoods(LabelNetwork(h, theta), L, version=version), rtol=1e-12)
        p0 = mlpr_from_likelihoods(LabelNetwork(h, theta), temper(L, 0.0), version=version)
        np.testing.assert_allclose(p0, np.broadcast_to(LabelNetwork(h, theta).prior_marginals, p0.shape), rtol=1e-10)
        # a -> 0 approaches the prior continuously
        tiny = mlpr_from_likelihoods(LabelNetwork(h, theta), temper(L, 1e-6), version=version)
        np.testing.assert_allclose(tiny, p0, atol=1e-4)


def test_tempered_indpt_is_the_powered_bayes_factor():
    rng = np.random.default_rng(1)
    h = Hierarchy.from_parents([None, 0, 1])
    theta = np.array([0.6, 0.5, 0.4])
    L = _likelihoods(rng, 20, 3)
    a = np.array([0.3, 1.0, 0.0])
    prior = LabelNetwork(h, theta).prior_marginals
    logit = np.log(prior / (1 - prior)) + a * np.log(L[..., 1] / L[..., 0])
    expected = 1 / (1 + np.exp(-logit))
    got = mlpr_from_likelihoods(LabelNetwork(h, theta), temper(L, a), version="indpt")
    np.testing.assert_allclose(got, expected, rtol=1e-10)


def test_temper_above_one_keeps_the_powered_ratio_of_extreme_pairs():
    # the pairs were powered unscaled: [1e200, 1e300] ** 2 overflowed to [inf, inf] (an InputError downstream,
    # tempered_lpr NaN) and [1e-200, 1e-170] ** 2 underflowed to [0, 0]
    from scipy.special import expit

    from hmcpgm.tempering import tempered_lpr

    L = np.array([[[1e200, 1e300], [1e-200, 1e-150], [1e-200, 1e-170], [3.0, 1e-150], [2.0, 5.0], [0.0, 7.0]]])
    a = np.array([2.0, 2.0, 2.0, 1.5, 3.0, 2.0])
    with np.errstate(all="raise"):
        got = temper(L, a)
    assert np.all(np.isfinite(got)) and np.all((got > 0) | (L == 0)) and np.all(got.max(axis=2) > 0)
    want = a[:5] * (np.log(L[0, :5, 1]) - np.log(L[0, :5, 0]))  # in log space
    np.testing.assert_allclose(np.log(got[0, :5, 1]) - np.log(got[0, :5, 0]), want, rtol=1e-12)
    assert got[0, 5, 0] == 0.0  # hard evidence stays hard
    prevalence = np.full(6, 0.3)
    np.testing.assert_allclose(tempered_lpr(L[:, :5], prevalence[:5], a[:5]), expit(np.log(0.3 / 0.7) + want)[None],
                               rtol=1e-12, atol=1e-15)
    net = LabelNetwork(Hierarchy.from_parents([None] * 5), [0.3] * 5)
    np.testing.assert_allclose(mlpr_from_likelihoods(net, temper(L[:, :5], a[:5])),
                               expit(np.log(0.3 / 0.7) + want)[None], rtol=1e-12, atol=0)
    # a ratio beyond the float range stays soft evidence (its smaller entry the smallest normal float)
    far = temper(np.array([[[1e-200, 1e200]]]), 2.0)
    assert far[0, 0, 0] > 0 and far[0, 0, 1] / far[0, 0, 0] > 1e300
    # exponents up to 1 power the pairs as they are
    rng = np.random.default_rng(2)
    M = _likelihoods(rng, 10, 4)
    b = np.array([0.3, 1.0, 0.0, 0.9])
    np.testing.assert_array_equal(temper(M, b), np.power(M, b[None, :, None]))


def test_temper_bad_exponents():
    L = np.ones((2, 3, 2))
    with pytest.raises(InputError, match="one per class"):
        temper(L, [1.0, 0.5])
    with pytest.raises(InputError, match=">= 0"):
        temper(L, -0.1)
    with pytest.raises(InputError, match="shape"):
        temper(np.ones((2, 3)), 0.5)


def test_tempering_groups():
    h = Hierarchy.from_parents([None, 0, 1, 2, None])
    assert tempering_groups(h).tolist() == [0] * 5
    assert tempering_groups(h, "depth", n_groups=2).tolist() == [0, 1, 1, 1, 0]
    labels = np.zeros((10, 5), int)
    labels[:, 0] = 1
    labels[:5, 1] = 1
    labels[:1, 2] = 1
    groups = tempering_groups(h, "frequency", labels, n_groups=2)
    assert groups.tolist() == [1, 1, 1, 0, 0]  # counts 10, 5, 1 at or above the median 1; 0, 0 below
    with pytest.raises(InputError, match="needs the training labels"):
        tempering_groups(h, "frequency")
    with pytest.raises(InputError, match="grouping must be one of"):
        tempering_groups(h, "size")


# ---------------------------------------------------------------------- cross-fitting
def test_cross_fitted_mlpr_never_sees_the_label_it_predicts():
    data = make_paper_synthetic(1200, 10, seed=2)
    h, s, y = data.hierarchy, data.train_scores, data.train_labels
    fit = cross_fit(s, y, h, score_model="lpr", cv=4)
    p = cross_fitted_mlpr(fit, h, "full", 0.7)
    # flip every label of one row: its own prediction does not move
    row = 5
    y2 = y.copy()
    y2[row] = 0
    fit2 = cross_fit(s, y2, h, score_model="lpr", cv=4)
    p2 = cross_fitted_mlpr(fit2, h, "full", 0.7)
    np.testing.assert_allclose(p2[row], p[row], rtol=1e-12)
    assert np.abs(p2 - p).max() > 1e-6  # other rows' models did see it
    # the out-of-fold LPRs of each candidate are those of its own fold models
    assert fit.likelihoods.shape == (1200, 25, 2) and np.all(fit.likelihoods > 0)


def test_the_final_fit_reuses_cross_fits_choice_and_gets_the_same_model():
    """Reference: fit_score_model given only cross_validated_lpr's output computes the loss and the choice
    itself; given cross_fit's dict (which carries them) it must fit the same model, array for array."""
    from hmcpgm.likelihood import AUTO_BASELINE, choose_candidates, fit_score_model, log_loss_by_class

    data = make_paper_synthetic(900, 10, seed=4)
    h, s, y = data.hierarchy, data.train_scores, data.train_labels
    fit = cross_fit(s, y, h, cv=3)
    cv = fit.cross_validation
    np.testing.assert_array_equal(cv["choice"], choose_candidates(cv["lpr"], y, baseline=AUTO_BASELINE))
    np.testing.assert_array_equal(cv["log_loss"], log_loss_by_class(cv["lpr"], y))
    plain = {key: cv[key] for key in ("lpr", "folds", "prevalence")}
    got, want = (fit_score_model(s, y, h, kind="auto", cross_validation=c, cv=3) for c in (cv, plain))
    assert set(got.params) == set(want.params)
    for key, value in want.params.items():
        np.testing.assert_array_equal(got.params[key], value, err_msg=key)


def test_forest_without_edges_chooses_the_simplest_version():
    # no hierarchy: indpt, nbh and full coincide (up to theta's pseudo-count in the
    # network's prior against the plain prevalence of the LPR), so the simplest is kept
    rng = np.random.default_rng(3)
    h = Hierarchy.from_edges([], classes=["a", "b", "c"])
    y = (rng.random((600, 3)) < [0.3, 0.5, 0.2]).astype(int)
    s = rng.normal(loc=1.5 * y)
    stage = fit_second_stage_auto(s, y, h, score_model="lpr", cv=3)
    assert stage.version == "indpt"
    table = stage.cv_table.set_index("version")
    np.testing.assert_allclose(table["cv_log_loss"], table.loc["indpt", "cv_log_loss"], rtol=1e-3)
    assert table["z"].abs().max() < 2


def test_shared_noise_is_tempered():
    # every class's score carries the same per-object noise: the scores are dependent
    # given the labels, full counts that noise once per class and needs a < 1
    rng = np.random.default_rng(4)
    h = Hierarchy.from_parents([None, 0, 0, 0, 0, 0, 0])
    theta = np.array([0.5, 0.6, 0.5, 0.6, 0.5, 0.6, 0.5])
    y = LabelNetwork(h, theta).sample(3000, rng)
    s = 1.0 * y + rng.normal(size=(3000, 1)) + 0.3 * rng.normal(size=y.shape)
    stage = fit_second_stage_auto(s, y, h, versions=("full",), score_model="lpr", cv=3, recalibrate=False)
    assert stage.a.max() < 0.6
    untempered = fit_second_stage_auto(s, y, h, versions=("full",), score_model="lpr", cv=3, tempering=None)
    assert stage.cv_table["cv_log_loss"].iloc[0] < untempered.cv_table["cv_log_loss"].iloc[0]


@pytest.mark.slow
def test_auto_picks_full_on_data_drawn_from_the_model():
    data = make_paper_synthetic(10_000, 2000, seed=0)
    stage = fit_second_stage_auto(data.train_scores, data.train_labels, data.hierarchy)
    assert stage.version == "full"
    assert stage.a.min() > 0.75  # evidence strength near the model's a = 1
    table = stage.cv_table.set_index("version")
    assert table.loc["full", "cv_log_loss"] < table.loc["nbh", "cv_log_loss"] < table.loc["indpt", "cv_log_loss"]
    p = stage.predict_proba(data.test_scores)
    g = stage.predict_calibrated(mlpr=p)
    assert p.shape == g.shape == (2000, 25)
    x = np.linspace(0, 1, 101)
    assert np.all(np.diff(stage.recalibration(x)) >= 0)
    # on data from the model the cross-fitted mLPRs are nearly calibrated already
    assert np.max(np.abs(stage.recalibration(x[10:91]) - x[10:91])) < 0.1


def test_fit_second_stage_auto_bad_options():
    h = Hierarchy.from_parents([None, 0])
    y = np.array([[1, 1], [1, 0], [0, 0]] * 20)
    s = y + np.random.default_rng(5).normal(size=y.shape)
    with pytest.raises(InputError, match="criterion"):
        fit_second_stage_auto(s, y, h, criterion="accuracy")
    with pytest.raises(InputError, match="versions"):
        fit_second_stage_auto(s, y, h, versions=("best",))
    with pytest.raises(InputError, match="tempering"):
        fit_second_stage_auto(s, y, h, tempering="by_size")


def test_screening_drops_versions_that_trail_indpt_on_a_subsample():
    data = make_paper_synthetic(1500, 10, seed=6)
    args = (data.train_scores, data.train_labels, data.hierarchy)
    kw = {"score_model": "lpr", "cv": 3, "screen_rows": 200}
    dropped = fit_second_stage_auto(*args, screen_margin=-np.inf, **kw)
    table = dropped.cv_table.set_index("version")
    assert dropped.version == "indpt"
    assert table.loc["nbh", "note"].startswith("screened out") and table.loc["full", "rows"] == 200
    assert np.isnan(table.loc["full", "cv_log_loss"])
    kept = fit_second_stage_auto(*args, screen_margin=np.inf, **kw)
    assert kept.version == "full" and (kept.cv_table["note"] == "").all()
    # on forests the defaults neither screen nor subsample
    auto = fit_second_stage_auto(*args, score_model="lpr", cv=3).cv_table
    assert (auto["rows"] == 1500).all() and (auto["note"] == "").all()


@pytest.mark.slow
def test_a_small_dag_keeps_every_row_and_fits_the_map_on_them(monkeypatch):
    """A fixed 300-row subsample on any DAG fitted a 9-class DAG's recalibration map on 2,700 events, and
    the FDR cutoff's realised FDR exceeded alpha (bench/fdr_well_specified.py). The subsample now holds
    about DAG_CELLS (row, class) cells: every row here, 300 on an ontology of 4,000 classes."""
    import hmcpgm.selection._auto as auto_module
    from hmcpgm.selection import DAG_CELLS, dag_rows

    assert dag_rows(4125, 300) == 300 and dag_rows(3573, 300) == 300 and dag_rows(3573, 100) == 100
    assert dag_rows(9, 300) == DAG_CELLS // 9 and dag_rows(9, 100) == DAG_CELLS // 27
    h = Hierarchy.from_edges([("r", "a"), ("r", "b"), ("a", "ab"), ("b", "ab"), ("ab", "x")],
                             classes=["x", "ab", "r", "b", "a"])
    rng = np.random.default_rng(0)
    y = np.zeros((900, 5), int)
    for c in h.topological_order:
        parents = list(h.parent_indices[c])
        y[:, c] = np.all(y[:, parents] == 1, axis=1) & (rng.random(900) < (0.6 if parents else 0.5))
    s = rng.normal(size=y.shape) + 1.5 * y
    fitted = []
    real = auto_module.fit_recalibration
    monkeypatch.setattr(auto_module, "fit_recalibration", lambda p, y: fitted.append(p.shape) or real(p, y))
    table = fit_second_stage_auto(s, y, h, score_model="logistic", cv=3).cv_table.set_index("version")
    assert (table["rows"] == 900).all() and (table["note"] == "").all()
    assert fitted == [(900, 5)]  # every row of every class (each class's labels vary)
    fitted.clear()
    table = fit_second_stage_auto(s, y, h, score_model="logistic", cv=3, max_rows=300,
                                  screen_rows=100).cv_table.set_index("version")
    chosen = table.index[table["chosen"]][0]
    assert fitted == [(900 if chosen == "indpt" else 300, 5)]


def test_screening_judges_the_model_the_exponent_search_fits(monkeypatch):
    """The screen tries nbh and full as the search fits them: each class's own evidence at indpt's
    exponent, the others' at the grid's (against a hand-made paired log loss), and the fit passes it
    indpt's fitted exponent."""
    import hmcpgm.selection._auto as auto
    from hmcpgm.selection._choice import SCREEN_GRID, screen_version
    from hmcpgm.tempering import own_evidence

    data = make_paper_synthetic(1500, 10, seed=6)
    h, y = data.hierarchy, data.train_labels
    crossfit = cross_fit(data.train_scores, y, h, score_model="lpr", cv=3)
    rows = np.arange(0, 1500, 5)
    cols = np.arange(h.n_classes)
    own = np.full(h.n_classes, 0.4)
    indpt = {"rows": np.arange(1500), "mlpr": cross_fitted_mlpr(crossfit, h, "indpt", own)}

    def row_loss(p):
        q = np.clip(p, 1e-6, 1 - 1e-6)
        return -(y[rows] * np.log(q) + (1 - y[rows]) * np.log1p(-q)).mean(axis=1)

    base = row_loss(indpt["mlpr"][rows])
    for version in ("nbh", "full"):
        losses = {a: row_loss(own_evidence(cross_fitted_mlpr(crossfit, h, version, a, rows=rows),
                                           crossfit.likelihoods[rows], a, own)) for a in SCREEN_GRID}
        a = min(losses, key=lambda k: losses[k].mean())
        d = losses[a] - base
        a_screen, z = screen_version(crossfit, h, version, "auto", rows, indpt, y, cols, own=own)
        np.testing.assert_allclose(a_screen, a)
        assert z == pytest.approx(d.mean() / (d.std(ddof=1) / np.sqrt(len(d))), rel=1e-12)
        _, z_all = screen_version(crossfit, h, version, "auto", rows, indpt, y, cols)  # every class's at a
        assert abs(z_all - z) > 0.1

    seen = []

    def spy(*args, **kwargs):
        seen.append(kwargs["own"])
        return screen_version(*args, **kwargs)

    monkeypatch.setattr(auto, "screen_version", spy)
    _, details = fit_second_stage_auto(data.train_scores, y, h, score_model="lpr", cv=3, screen_rows=200,
                                       return_predictions=True)
    assert len(seen) == 2
    for own_seen in seen:
        np.testing.assert_array_equal(own_seen, details["versions"]["indpt"]["a"])


def test_cross_fit_and_the_auto_fit_pair_dataframe_rows_by_index():
    """Labels given as a DataFrame with rows in another order were paired by position: silently scrambled
    (cross-validated AU(PRC) fell from 0.7-0.8 to 0.5), where MLPR.fit and the score models pair by index."""
    import pandas as pd

    d = make_paper_synthetic(400, 50, seed=4)
    classes = list(d.hierarchy.classes)
    index = [f"obj{i}" for i in range(400)]
    X = pd.DataFrame(d.train_scores, columns=classes, index=index)
    Y = pd.DataFrame(d.train_labels, columns=classes, index=index)
    shuffled = Y.sample(frac=1, random_state=0)
    np.testing.assert_array_equal(cross_fit(X, shuffled, d.hierarchy, cv=3).lpr, cross_fit(X, Y, d.hierarchy, cv=3).lpr)
    a = fit_second_stage_auto(X, Y, d.hierarchy, cv=3, versions=("indpt",))
    b = fit_second_stage_auto(X, shuffled, d.hierarchy, cv=3, versions=("indpt",))
    np.testing.assert_array_equal(b.predict_proba(d.test_scores), a.predict_proba(d.test_scores))
    with pytest.raises(InputError, match="labels"):
        cross_fit(X, Y.rename(index={"obj0": "other"}), d.hierarchy, cv=3)


def test_the_auto_fit_refuses_a_bad_evaluated_mask_and_a_min_in_one_line():
    d = make_paper_synthetic(400, 50, seed=2)
    with pytest.raises(InputError, match="evaluated must be a boolean mask of the 25 classes"):
        fit_second_stage_auto(d.train_scores, d.train_labels, d.hierarchy, evaluated=[10, 20, 24])
    with pytest.raises(InputError, match="evaluated must be a boolean mask"):
        fit_second_stage_auto(d.train_scores, d.train_labels, d.hierarchy, evaluated=np.ones(3, bool))
    for a_min in (0, 2.0, -1, "x", True):
        with pytest.raises(InputError, match="a_min must be a number in"):
            fit_second_stage_auto(d.train_scores, d.train_labels, d.hierarchy, a_min=a_min)


def test_the_auto_fit_keeps_a_1_when_the_row_subsample_holds_no_positive():
    """The guard read every training row while the exponent search read the nbh/full row subsample: with no
    positive of the evaluated classes there, numpy's 'All-NaN slice encountered' escaped."""
    d = make_paper_synthetic(400, 50, seed=2)
    y = np.array(d.train_labels)
    leaf = next(i for i, c in enumerate(d.hierarchy.classes) if not d.hierarchy.children(c))
    y[np.flatnonzero(y[:, leaf])[3:], leaf] = 0  # three positives left, most likely outside a subsample of 20
    evaluated = np.zeros(d.hierarchy.n_classes, bool)
    evaluated[leaf] = True
    sub = np.sort(np.random.default_rng(0).choice(400, size=20, replace=False))
    assert not y[sub, leaf].any()  # the seed-0 subsample of 20 rows misses them
    stage = fit_second_stage_auto(d.train_scores, y, d.hierarchy, evaluated=evaluated, max_rows=20, cv=3,
                                  versions=("indpt", "full"))
    assert stage.version in ("indpt", "full")
