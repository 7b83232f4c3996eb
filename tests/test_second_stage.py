"""The one owner of the second stage's step: SecondStage against brute force, and every caller built on it."""

import itertools
import json
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import hierarchies

from hmcpgm import MLPR, Hierarchy, LabelNetwork, make_paper_synthetic
from hmcpgm._validation import checked_at_the_door, class_matrix, label_matrix
from hmcpgm.applications import paper_mlprs
from hmcpgm.exceptions import InputError, LabelError
from hmcpgm.persist import load_model, save_model
from hmcpgm.second_stage import CONSISTENCY, SecondStage, consistent_values
from hmcpgm.selection import cross_fit, cross_fitted_mlpr
from hmcpgm.tempering import tempered_lpr, with_prior


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


# ---------------------------------------------------------------------- prior="prevalence"
def _bayes_factor_posteriors(hierarchy, theta, lik, keep_of, prevalence):
    """P(Y_k = 1 | evidence) with the network's Bayes factor of the evidence ``keep_of(k)`` keeps and the prior
    odds ``prevalence_k / (1 - prevalence_k)``, by enumerating every configuration (written for the test)."""
    k = hierarchy.n_classes
    parents = hierarchy.parent_indices
    out = np.empty(k)
    for target in range(k):
        keep = keep_of(target)
        joint = np.zeros(2)  # P(evidence, Y_target = y)
        marginal = np.zeros(2)  # P(Y_target = y)
        for config in itertools.product((0, 1), repeat=k):
            prior = 1.0
            for j in range(k):
                p1 = theta[j] if all(config[p] for p in parents[j]) else 0.0
                prior *= p1 if config[j] else 1.0 - p1
            marginal[config[target]] += prior
            joint[config[target]] += prior * np.prod([lik[j, config[j]] for j in range(k) if keep[j]])
        factor = (joint[1] / marginal[1]) / (joint[0] / marginal[0])
        odds = prevalence[target] / (1.0 - prevalence[target]) * factor
        out[target] = odds / (1.0 + odds)
    return out


@settings(max_examples=25, deadline=None)
@given(h=hierarchies(max_classes=6), data=st.data())
def test_the_prevalence_prior_keeps_the_networks_bayes_factor_by_enumeration(h, data):
    """nbh and full with prior="prevalence": the network's Bayes factor of the (tempered) evidence times the
    prevalence's prior odds, on DAGs and forests whose column order is not topological."""
    k = h.n_classes
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    theta = rng.uniform(0.2, 0.9, k)
    prevalence = rng.uniform(0.05, 0.6, k)
    lik = rng.uniform(0.1, 3.0, (2, k, 2))
    a = rng.uniform(0.2, 1.0, k)
    own = rng.uniform(0.5, 1.5, k)
    version = data.draw(st.sampled_from(["nbh", "full"]))
    stage = SecondStage(h, version, a, None, theta, own=own, engine="enumerate" if version == "full" else "auto",
                        prevalence=prevalence, prior="prevalence")
    got = stage.mlpr(lik)

    def keep_of(target):
        near = {target, *h.parent_indices[target], *h.child_indices[target]}
        return [version == "full" or j in near for j in range(k)]

    for m in range(len(lik)):
        def kept(target, m=m):
            e = lik[m] ** a[:, None]
            e[target] = lik[m, target] ** own[target]
            return e

        want = np.array([_bayes_factor_posteriors(h, theta, kept(t), keep_of, prevalence)[t] for t in range(k)])
        np.testing.assert_allclose(got[m], want, rtol=1e-9, atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(h=hierarchies(kind="strict_dag", min_classes=3, max_classes=8), seed=st.integers(0, 2**16))
def test_nbh_with_the_prevalence_prior_tends_to_indpt_as_the_others_evidence_vanishes(h, seed):
    """At a = 0 only a class's own evidence is left: with the prevalence's prior nbh is indpt exactly,
    while with the network's prior it is not (a class with two parents: the network's marginal is a product)."""
    rng = np.random.default_rng(seed)
    k = h.n_classes
    theta = rng.uniform(0.2, 0.9, k)
    prevalence = rng.uniform(0.05, 0.6, k)
    lik = rng.uniform(0.1, 3.0, (4, k, 2))
    own = rng.uniform(0.5, 1.5, k)
    indpt = tempered_lpr(lik, prevalence, own)
    for version in ("nbh", "full"):
        stage = SecondStage(h, version, 0.0, None, theta, own=own, prevalence=prevalence, prior="prevalence")
        np.testing.assert_allclose(stage.mlpr(lik), indpt, rtol=1e-9, atol=1e-12)
    network = SecondStage(h, "nbh", 0.0, None, theta, own=own, prevalence=prevalence)
    assert not np.allclose(network.mlpr(lik), indpt, rtol=1e-6)


def test_the_prevalence_prior_changes_nothing_when_the_network_marginal_is_the_prevalence():
    """On a forest whose theta telescopes to the prevalence (pseudo-count 0), the two priors agree."""
    h = Hierarchy.from_edges([("b", "c"), ("a", "b"), ("a", "d")], classes=["c", "d", "b", "a"])
    rng = np.random.default_rng(3)
    y = LabelNetwork(h, [0.5, 0.4, 0.6, 0.7]).sample(400, rng)
    theta = LabelNetwork.from_labels(y, h, pseudo_count=0.0).theta
    lik = rng.uniform(0.1, 3.0, (6, h.n_classes, 2))
    network = SecondStage(h, "full", 0.7, None, theta, prevalence=y.mean(axis=0))
    np.testing.assert_allclose(replace(network, prior="prevalence").mlpr(lik), network.mlpr(lik), rtol=1e-12)


def test_the_prevalence_prior_refuses_bad_values_and_a_missing_prevalence():
    h = Hierarchy.from_parents([None, 0, 0, 1])
    theta = np.full(h.n_classes, 0.5)
    with pytest.raises(InputError, match="prior must be one of 'network', 'prevalence'"):
        SecondStage(h, "nbh", 1.0, None, theta, prior="prevalance")
    with pytest.raises(InputError, match="prior='prevalence' needs the training prevalence"):
        SecondStage(h, "nbh", 1.0, None, theta, prior="prevalence")
    with pytest.raises(InputError, match="prior must be one of"):
        MLPR(hierarchy=h, prior="uniform").fit(np.random.default_rng(0).random((20, 4)),
                                               np.ones((20, 4), int))


def test_mlpr_with_the_prevalence_prior_fits_predicts_and_reloads(tmp_path):
    """The prior reaches the cross-fitting and the fitted stage, and a reloaded model predicts the same."""
    edges = [("a", "b"), ("a", "c"), ("b", "d"), ("c", "d"), ("c", "e")]
    h = Hierarchy.from_edges(edges, classes=["d", "e", "c", "b", "a"])
    rng = np.random.default_rng(1)
    y = LabelNetwork(h, [0.5, 0.6, 0.6, 0.6, 0.7]).sample(300, rng)
    X = 1.5 * y + rng.normal(size=(300, 1)) + 0.5 * rng.normal(size=y.shape)
    model = MLPR(hierarchy=h, version="nbh", prior="prevalence", cv=3, stack=None).fit(X, y)
    stage = model.second_stage_
    assert stage.prior == "prevalence" and stage.prior_shift is not None
    p = model.predict_proba(X[:20])
    network = replace(stage, prior="network", pool_weight=None, consistency="hierrank").predict_proba(X[:20])
    shifted = with_prior(network, stage.prior_shift)
    if stage.pool_weight is not None:
        shifted = stage.pool_weight * shifted + (1 - stage.pool_weight) * stage.pool_model.lpr(X[:20])
    np.testing.assert_allclose(p, consistent_values(shifted, h, stage.consistency), rtol=1e-12)
    save_model(model, tmp_path / "m.npz")
    with np.load(tmp_path / "m.npz") as f:
        meta = json.loads(f["meta"].item())
    assert (meta["format_version"], meta["prior"]) == (7, "prevalence")
    again = load_model(tmp_path / "m.npz")
    assert again.prior == "prevalence" and again.prior_ == "prevalence"
    assert np.array_equal(again.predict_proba(X[:20]), p)


def test_the_default_prior_is_the_prevalence_on_a_dag_and_the_network_on_a_forest_and_for_the_paper(tmp_path):
    rng = np.random.default_rng(2)
    dag = Hierarchy.from_edges([("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")], classes=["d", "c", "b", "a"])
    forest = Hierarchy.from_edges([("a", "b"), ("a", "c"), ("b", "d")], classes=["d", "c", "b", "a"])
    for h, want in ((dag, "prevalence"), (forest, "network")):
        y = LabelNetwork(h, [0.6, 0.6, 0.6, 0.7]).sample(200, rng)
        X = y + rng.normal(size=y.shape)
        model = MLPR(hierarchy=h, version="full", cv=3, stack=None).fit(X, y)
        assert model.prior_ == want
        paper = MLPR(hierarchy=h, version="full", tempering=None, recalibrate=False).fit(X, y)
        assert paper.prior_ == "network"
    save_model(model, tmp_path / "forest.npz")  # the network's prior: the format of a model without it
    with np.load(tmp_path / "forest.npz") as f:
        assert json.loads(f["meta"].item())["format_version"] < 7


def test_consistent_values_names_an_unknown_step():
    """A bare KeyError before; "mcm" (a correction's name) was accepted although CONSISTENCY spells it "max"."""
    h = Hierarchy.from_parents([None, 0])
    for bad in ("maxx", "mcm"):
        with pytest.raises(InputError, match=f"consistency must be one of .*; got '{bad}'"):
            consistent_values(np.array([[0.3, 0.6]]), h, bad)


def test_the_defaults_full_can_put_a_child_above_its_parent():
    """docs/concepts.md, under the version table: Proposition 1 (child <= parent under full) is the paper's model's,
    with one evidence exponent for every score. The default keeps each class's own evidence at its own exponent
    and tempers the others', so its full values need not respect the hierarchy (a review, audit47, found it by
    0.43 on this tree); the paper's full does."""
    h = Hierarchy.from_edges([("A", "B"), ("A", "C"), ("B", "D"), ("B", "E"), ("C", "F"), ("C", "G")])
    rng = np.random.default_rng(0)
    y = LabelNetwork(h, [0.6, 0.6, 0.5, 0.5, 0.5, 0.5, 0.5]).sample(4000, rng)
    X = 1.5 * y + rng.normal(size=(4000, 1)) * 1.2 + rng.normal(size=y.shape) * 0.7  # one shared error
    edges = h.edge_indices
    default = MLPR(hierarchy=h, version="full", pool=None, consistency="hierrank").fit(X[:3000], y[:3000])
    assert np.all(default.own_tempering_ > 2 * default.tempering_)
    p = default.predict_proba(X[3000:])
    assert (p[:, edges[:, 1]] - p[:, edges[:, 0]]).max() > 0.1
    paper = MLPR(hierarchy=h, version="full", score_model="lpr", tempering=None, recalibrate=False).fit(X[:3000],
                                                                                                      y[:3000])
    p = paper.predict_proba(X[3000:])
    assert (p[:, edges[:, 1]] - p[:, edges[:, 0]]).max() <= 1e-12
