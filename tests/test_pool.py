"""The pool: the chosen version's mLPRs averaged with each class's own isotonic posterior (weight by cross-fitting)."""

import json
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import average_precision_score

from hmcpgm import MLPR
from hmcpgm.corrections import mcm
from hmcpgm.datasets import make_paper_synthetic
from hmcpgm.exceptions import InputError
from hmcpgm.likelihood import cross_validated_lpr, fit_score_model
from hmcpgm.persist import load_model, save_model
from hmcpgm.selection import POOL_WEIGHTS, choose_pool_weight, cross_fit, crossfitted_isotonic, fit_second_stage_auto


@pytest.fixture(scope="module")
def synthetic():
    return make_paper_synthetic(1500, 300, seed=3)


def _paper(pool=None, **kw):
    return MLPR(version="full", score_model="lpr", tempering=None, recalibrate=False, pool=pool, **kw)


def test_the_pool_is_the_weighted_mean_of_the_mlprs_and_the_isotonic_lprs(synthetic):
    d = synthetic
    plain = _paper().set_params(hierarchy=d.hierarchy).fit(d.train_scores, d.train_labels)
    pooled = _paper(0.3).set_params(hierarchy=d.hierarchy).fit(d.train_scores, d.train_labels)
    iso = fit_score_model(d.train_scores, d.train_labels, d.hierarchy, kind="isotonic")
    expected = 0.3 * plain.predict_proba(d.test_scores) + 0.7 * iso.lpr(d.test_scores)
    np.testing.assert_allclose(pooled.predict_proba(d.test_scores), expected, rtol=0, atol=1e-15)
    assert pooled.pool_weight_ == 0.3 and plain.pool_weight_ == 1.0
    # weight 0: the isotonic posteriors alone; the max constraint comes after the pool
    zero = replace(pooled.second_stage_, pool_weight=0.0, consistency="max")
    np.testing.assert_allclose(zero.predict_proba(d.test_scores), mcm(iso.lpr(d.test_scores), d.hierarchy),
                               rtol=0, atol=1e-15)


def test_pool_one_and_none_are_the_mlprs_alone(synthetic):
    d = synthetic
    plain = _paper().set_params(hierarchy=d.hierarchy).fit(d.train_scores, d.train_labels)
    one = _paper(1.0).set_params(hierarchy=d.hierarchy).fit(d.train_scores, d.train_labels)
    assert one.second_stage_.pool_weight is None and one.second_stage_.pool_model is None
    np.testing.assert_array_equal(one.predict_proba(d.test_scores), plain.predict_proba(d.test_scores))


@pytest.mark.parametrize("bad", [1.0, -0.1, float("nan"), 2])
def test_second_stage_refuses_a_weight_outside_0_1(synthetic, bad):
    d = synthetic
    stage = _paper(0.5).set_params(hierarchy=d.hierarchy).fit(d.train_scores, d.train_labels).second_stage_
    with pytest.raises(InputError, match="pool_weight must be in"):
        replace(stage, pool_weight=bad)


def test_a_pooling_stage_needs_the_isotonic_lprs(synthetic):
    d = synthetic
    stage = _paper(0.5).set_params(hierarchy=d.hierarchy).fit(d.train_scores, d.train_labels).second_stage_
    likelihoods = stage.likelihoods(d.test_scores)
    with pytest.raises(InputError, match="give pool_lpr"):
        stage.mlpr(likelihoods)
    with pytest.raises(InputError, match="pool_lpr must have shape"):
        stage.mlpr(likelihoods, pool_lpr=np.zeros((2, 2)))
    with pytest.raises(InputError, match="no pool_model"):
        replace(stage, pool_model=None).predict_proba(d.test_scores)


@pytest.mark.parametrize("bad", ["yes", True, 1.5, -1, [0.5], float("nan")])
def test_mlpr_refuses_a_bad_pool_in_one_line(synthetic, bad):
    d = synthetic
    with pytest.raises(InputError, match=r"^pool must be 'auto', None or a weight in \[0, 1\]; got") as info:
        MLPR(hierarchy=d.hierarchy, pool=bad).fit(d.train_scores, d.train_labels)
    assert "\n" not in str(info.value)


def _flat_ap(v, y):
    return average_precision_score(y.ravel(), v.ravel())  # scikit-learn's micro AU(PRC): the reference


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(2, 6), st.integers(10, 40))
def test_choose_pool_weight_takes_the_best_flat_auprc_of_the_grid(seed, k, m):
    rng = np.random.default_rng(seed)
    y = (rng.random((m, k)) < 0.3).astype(int)
    y[0, 0] = 1  # at least one positive
    p = np.clip(0.5 * y + rng.normal(0, 0.4, y.shape), 0, 1)
    q = np.clip(0.5 * y + rng.normal(0, 0.4, y.shape), 0, 1)
    cols = np.arange(k)
    weight, table = choose_pool_weight(p, q, y, cols, "auprc")
    assert set(table) == set(POOL_WEIGHTS)
    for w in POOL_WEIGHTS:
        assert table[w] == pytest.approx(_flat_ap(w * p + (1 - w) * q, y), abs=1e-12)
    best = max(table.values())
    assert table[weight] == best
    assert all(table[w] < best for w in POOL_WEIGHTS if w > weight)  # ties go to the larger weight
    # the order of the columns does not matter
    perm = rng.permutation(k)
    assert choose_pool_weight(p[:, perm], q[:, perm], y[:, perm], cols, "auprc")[0] == weight


def test_choose_pool_weight_picks_the_better_estimate_and_keeps_the_mlprs_on_ties():
    rng = np.random.default_rng(0)
    y = (rng.random((200, 4)) < 0.3).astype(int)
    good, noise = y + rng.normal(0, 0.01, y.shape), 10 * rng.random(y.shape)  # any share of noise spoils
    assert choose_pool_weight(good, noise, y, np.arange(4), "auprc")[0] == 1.0
    assert choose_pool_weight(noise, good, y, np.arange(4), "auprc")[0] == 0.0
    assert choose_pool_weight(good, good, y, np.arange(4), "auprc")[0] == 1.0  # all tied
    assert choose_pool_weight(good, noise, np.zeros_like(y), np.arange(4), "auprc")[0] == 1.0  # no positive
    assert choose_pool_weight(noise, good, y, np.arange(4), "log_loss")[0] == 0.0
    assert choose_pool_weight(noise, good, y, np.arange(4), "auprc", pool=0.4) == (0.4, {})


@pytest.mark.parametrize("score_model", ["auto", "logistic", "isotonic"])
def test_the_crossfitted_isotonic_lprs_are_the_isotonic_model_out_of_fold(synthetic, score_model):
    d = synthetic
    fit = cross_fit(d.train_scores, d.train_labels, d.hierarchy, score_model=score_model, cv=3, seed=4)
    got = crossfitted_isotonic(fit, d.train_scores, d.train_labels, d.hierarchy, cv=3, seed=4)
    ref = cross_validated_lpr(d.train_scores, d.train_labels, d.hierarchy, ("isotonic",), cv=3, seed=4)
    np.testing.assert_array_equal(got, ref["lpr"][0])


def test_auto_reports_the_pool_and_uses_it_for_the_consistency_and_the_recalibration(synthetic):
    d = synthetic
    stage, details = fit_second_stage_auto(d.train_scores, d.train_labels, d.hierarchy, cv=3,
                                           return_predictions=True)
    info = stage.cv_table.attrs["pool"]
    assert set(info["cv"]) == set(POOL_WEIGHTS)
    assert info["cv"][info["weight"]] == max(info["cv"].values())
    assert (stage.pool_weight is None) == (info["weight"] == 1.0)
    fixed = fit_second_stage_auto(d.train_scores, d.train_labels, d.hierarchy, cv=3, pool=0.5, consistency="hierrank",
                                 stack=None)
    assert fixed.pool_weight == 0.5 and fixed.cv_table.attrs["pool"] == {"weight": 0.5, "cv": {}}
    # the recalibration map was fitted on the pooled cross-fitted values: refit it by hand
    from hmcpgm.calibration import fit_recalibration

    kept = details["versions"][fixed.version]
    q = crossfitted_isotonic(details["crossfit"], d.train_scores, d.train_labels, d.hierarchy, cv=3)[kept["rows"]]
    pooled = 0.5 * kept["mlpr"] + 0.5 * q
    g = fit_recalibration(pooled, d.train_labels[kept["rows"]])
    np.testing.assert_allclose(fixed.recalibration(pooled), g(pooled))
    none = fit_second_stage_auto(d.train_scores, d.train_labels, d.hierarchy, cv=3, pool=None)
    assert none.pool_weight is None and none.cv_table.attrs["pool"] == {"weight": 1.0, "cv": {}}


def test_a_pooling_model_saves_as_format_6_and_predicts_the_same(synthetic, tmp_path):
    d = synthetic
    model = _paper(0.25).set_params(hierarchy=d.hierarchy).fit(d.train_scores, d.train_labels)
    path = save_model(model, tmp_path / "m.npz")
    with np.load(path, allow_pickle=False) as archive:
        meta = json.loads(archive["meta"].item())
        assert meta["format_version"] == 6 and meta["pool_weight"] == 0.25
        assert any(name.startswith("pool_model/") for name in archive.files)
    loaded = load_model(path)
    assert loaded.pool_weight_ == 0.25
    np.testing.assert_array_equal(loaded.predict_proba(d.test_scores), model.predict_proba(d.test_scores))
    plain = save_model(_paper().set_params(hierarchy=d.hierarchy).fit(d.train_scores, d.train_labels),
                       tmp_path / "plain.npz")
    with np.load(plain, allow_pickle=False) as archive:
        assert json.loads(archive["meta"].item())["format_version"] == 4  # older readers still read it
