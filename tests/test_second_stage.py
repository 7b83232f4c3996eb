"""The one owner of the second stage's step: SecondStage against brute force, and every caller built on it."""

import itertools
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import hierarchies

from hmcpgm import MLPR, Hierarchy, make_paper_synthetic
from hmcpgm._validation import checked_at_the_door, class_matrix, label_matrix
from hmcpgm.applications import paper_mlprs
from hmcpgm.exceptions import InputError, LabelError
from hmcpgm.persist import load_model, save_model
from hmcpgm.second_stage import CONSISTENCY, SecondStage
from hmcpgm.selection import cross_fit, cross_fitted_mlpr
from hmcpgm.tempering import tempered_lpr


def _brute_posteriors(hierarchy, theta, evidence_of):
    """P(Y_k = 1 | evidence) by enumerating every configuration; ``evidence_of(k)`` gives the (K, 2) evidence
    used for class ``k``'s query."""
    k = hierarchy.n_classes
    parents = hierarchy.parent_indices
    out = np.empty(k)
    for target in range(k):
        lik = evidence_of(target)
        num = den = 0.0
        for config in itertools.product((0, 1), repeat=k):
            w = 1.0
            for j in range(k):
                allowed = all(config[p] for p in parents[j])
                p1 = theta[j] if allowed else 0.0
                w *= (p1 if config[j] else 1.0 - p1) * lik[j, config[j]]
            den += w
            num += w * config[target]
        out[target] = num / den
    return out


def _descendants(hierarchy):
    parents = hierarchy.parent_indices
    k = hierarchy.n_classes
    below = [{j} for j in range(k)]
    changed = True
    while changed:
        changed = False
        for j in range(k):
            for p in parents[j]:
                if not below[j] <= below[p]:
                    below[p] |= below[j]
                    changed = True
    return below


@settings(max_examples=25, deadline=None)
@given(h=hierarchies(max_classes=6), data=st.data())
def test_the_step_matches_brute_force_enumeration(h, data):
    """Tempered evidence, own evidence and the max constraint, in column orders that are not topological."""
    k = h.n_classes
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    theta = rng.uniform(0.2, 0.9, k)
    lik = rng.uniform(0.1, 3.0, (2, k, 2))
    a = rng.uniform(0.2, 1.0, k)
    own = rng.uniform(0.5, 1.5, k)
    consistency = data.draw(st.sampled_from(["hierrank", "max"]))
    stage = SecondStage(h, "full", a, None, theta, own=own, consistency=consistency, engine="enumerate")
    got = stage.mlpr(lik)
    below = _descendants(h)
    for m in range(len(lik)):
        def evidence_of(target, m=m):  # the other classes' evidence at a, the class's own at own
            e = lik[m] ** a[:, None]
            e[target] = lik[m, target] ** own[target]
            return e

        want = _brute_posteriors(h, theta, evidence_of)
        if consistency == "max":
            want = np.array([max(want[j] for j in below[i]) for i in range(k)])
        np.testing.assert_allclose(got[m], want, rtol=1e-9, atol=1e-12)


def test_indpt_is_the_tempered_lpr_under_the_training_prevalence():
    rng = np.random.default_rng(0)
    h = Hierarchy.from_parents([None, 0, 0, 1])
    lik = rng.uniform(0.1, 3.0, (5, h.n_classes, 2))
    prevalence = rng.uniform(0.1, 0.6, h.n_classes)
    stage = SecondStage(h, "indpt", 0.5, None, np.full(h.n_classes, 0.5), prevalence=prevalence)
    odds = prevalence / (1 - prevalence) * (lik[..., 1] / lik[..., 0]) ** 0.5  # by hand
    np.testing.assert_allclose(stage.mlpr(lik), odds / (1 + odds), rtol=1e-12)


@pytest.mark.parametrize("bad, message", [
    (dict(version="ful"), "version must be one of"),
    (dict(consistency="min"), "consistency must be one of"),
    (dict(a=[1.0, 2.0]), "a must be a number or"),
    (dict(own=[1.0]), "own must be a number or"),
    (dict(prevalence=[0.5]), "prevalence must have shape"),
])
def test_refuses_bad_fields_in_one_line(bad, message):
    h = Hierarchy.from_parents([None, 0, 0, 1])
    fields = dict(hierarchy=h, version="full", a=1.0, score_model=None, theta=np.full(h.n_classes, 0.5))
    with pytest.raises(InputError, match=message) as err:
        SecondStage(**{**fields, **bad})
    assert "\n" not in str(err.value)


@pytest.fixture(scope="module")
def data():
    return make_paper_synthetic(1500, 300, seed=2)


@pytest.fixture(scope="module")
def paper(data):
    return MLPR(hierarchy=data.hierarchy, version="full", tempering=None, recalibrate=False).fit(
        data.train_scores, data.train_labels)


def test_mlpr_predicts_through_its_second_stage(data, tmp_path):
    model = MLPR(hierarchy=data.hierarchy, version="nbh", cv=3).fit(data.train_scores, data.train_labels)
    stage = model.second_stage_
    assert (stage.version, stage.consistency) == (model.version_, model.consistency_)
    assert stage.recalibration is model.recalibration_ and stage.network is model.network_
    p = model.predict_proba(data.test_scores)
    assert np.array_equal(p, stage.predict_proba(data.test_scores))
    assert np.array_equal(model.calibrated_proba(data.test_scores), stage.calibrate(p))
    save_model(model, tmp_path / "m.npz")
    again = load_model(tmp_path / "m.npz")
    assert isinstance(again.second_stage_, SecondStage)
    assert np.array_equal(again.predict_proba(data.test_scores), p)


@pytest.mark.parametrize("version", ["indpt", "nbh", "full"])
def test_paper_mlprs_are_the_estimators_numbers(paper, data, version):
    """The benchmark's paper versions run the same stage as MLPR(version=...) of the paper's model."""
    got = paper_mlprs(paper, version, (data.test_scores,))[0]
    switched = MLPR(**{**paper.get_params(), "version": version}).fit(data.train_scores, data.train_labels)
    assert np.array_equal(got, switched.predict_proba(data.test_scores))
    assert paper.version == "full"  # the model itself is not changed


def test_cross_fitted_mlpr_is_each_folds_stage(data):
    h = data.hierarchy
    fit = cross_fit(data.train_scores, data.train_labels, h, cv=3)
    for version in ("indpt", "full"):
        got = cross_fitted_mlpr(fit, h, version, 0.7)
        for f in range(3):
            rows = fit.folds == f
            prevalence = fit.cross_validation["prevalence"][f]
            if version == "indpt":
                want = tempered_lpr(fit.likelihoods[rows], prevalence, 0.7)
            else:
                stage = SecondStage(h, "full", 1.0, None, fit.thetas[f])
                want = stage.mlpr(fit.likelihoods[rows] ** 0.7)
            np.testing.assert_allclose(got[rows], want, rtol=1e-12, atol=1e-15)


def test_replace_keeps_the_network(paper):
    stage = replace(paper.second_stage_, version="nbh")
    assert stage.network is paper.network_ and stage.version == "nbh"


# ---------------------------------------------------------------------- checked once at the door
def test_nested_checks_are_skipped_only_inside_the_door(data):
    h = data.hierarchy
    y = label_matrix(data.train_labels, h)
    with checked_at_the_door():
        assert label_matrix(y, h) is y
        s = np.asarray(data.train_scores, dtype=float)
        assert class_matrix(s, h) is s
    bad = y.copy()
    child = next(j for j, ps in enumerate(h.parent_indices) if len(ps))
    bad[:, child] = 1
    bad[:, h.parent_indices[child]] = 0  # a positive child under negative parents
    with pytest.raises(LabelError):
        label_matrix(bad, h)  # outside the block: checked


def test_fit_still_checks_its_inputs_at_the_door(data):
    y = np.asarray(data.train_labels).copy()
    y[0, 0] = 2
    with pytest.raises(LabelError):
        MLPR(hierarchy=data.hierarchy, version="indpt", tempering=None, recalibrate=False).fit(data.train_scores, y)
    s = np.asarray(data.train_scores, dtype=float).copy()
    s[0, 0] = np.nan
    with pytest.raises(ValueError):
        MLPR(hierarchy=data.hierarchy, version="indpt", tempering=None, recalibrate=False).fit(s, data.train_labels)


@pytest.mark.parametrize("consistency", [c for c in CONSISTENCY if c != "hierrank"])
def test_mlpr_consistency_applies_the_named_rule_to_the_mlprs(consistency, tmp_path):
    """Reference: the rule called directly (hmcpgm.corrections) on the mLPRs of the same model without it."""
    from hmcpgm import naive_sort
    from hmcpgm.corrections import CORRECTIONS, mcm
    from hmcpgm.ranking import count_violations

    data = make_paper_synthetic(n_train=1200, n_test=200, seed=4)
    h = data.hierarchy
    params = dict(hierarchy=h, version="nbh", cv=3, tempering=None, recalibrate=False)
    plain = MLPR(**params, consistency="hierrank").fit(data.train_scores, data.train_labels)
    model = MLPR(**params, consistency=consistency).fit(data.train_scores, data.train_labels)
    assert model.consistency_ == consistency
    p = plain.predict_proba(data.test_scores)
    rule = mcm if consistency == "max" else (lambda v, g: CORRECTIONS[consistency].function(
        v, g, **CORRECTIONS[consistency].preset))
    got = model.predict_proba(data.test_scores)
    np.testing.assert_allclose(got, rule(p, h), atol=1e-12)
    assert count_violations(naive_sort(got, h), h) == 0  # consistent: no ranking violates the hierarchy
    save_model(model, tmp_path / "m.npz")
    np.testing.assert_array_equal(load_model(tmp_path / "m.npz").predict_proba(data.test_scores), got)
