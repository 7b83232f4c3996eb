"""The full version on a forest with the descendants' evidence at its own exponent (inference._split)."""

import itertools
import json
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import forests

from hmcpgm import Hierarchy, LabelNetwork
from hmcpgm.datasets import make_paper_synthetic
from hmcpgm.exceptions import InputError
from hmcpgm.inference import mlpr_from_likelihoods, split_full_posterior
from hmcpgm.persist import load_model, save_model
from hmcpgm.second_stage import SecondStage
from hmcpgm.selection import fit_second_stage_auto
from hmcpgm.tempering import own_evidence, temper


def _enumerated(hierarchy, theta, lr, out, desc, own):
    """P(Y_k = 1 | evidence) by summing over every labelling, class j's ratio raised by its relation to k."""
    k_cls = hierarchy.n_classes
    parent = hierarchy.spanning_forest()
    below = [set(hierarchy.indices(hierarchy.descendants(c))) for c in hierarchy.classes]
    states = [np.array(y) for y in itertools.product((0, 1), repeat=k_cls)
              if all(parent[j] < 0 or y[parent[j]] >= y[j] for j in range(k_cls))]
    log_prior = []
    for y in states:
        lp = 0.0
        for j in range(k_cls):
            if parent[j] < 0 or y[parent[j]]:
                lp += np.log(theta[j]) if y[j] else np.log1p(-theta[j])
        log_prior.append(lp)
    log_prior = np.array(log_prior)
    post = np.empty(lr.shape)
    for m in range(lr.shape[0]):
        for k in range(k_cls):
            e = np.array([own[k] if j == k else desc[j] if j in below[k] else out[j] for j in range(k_cls)])
            w = np.array([lp + np.dot(y, e * lr[m]) for y, lp in zip(states, log_prior)])
            w = np.exp(w - w.max())
            post[m, k] = w[[y[k] == 1 for y in states]].sum() / w.sum()
    return post


@settings(max_examples=40, deadline=None)
@given(h=forests(max_classes=7), data=st.data())
def test_split_posterior_equals_enumeration(h, data):
    # columns not topological (the strategy shuffles them); exponents differ per class and role
    k = h.n_classes
    seed = data.draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    theta = rng.uniform(0.05, 0.95, k)
    lr = rng.normal(scale=2.0, size=(3, k))
    out, desc, own = (rng.uniform(0.0, 1.5, k) for _ in range(3))
    np.testing.assert_allclose(split_full_posterior(h, theta, lr, out, desc, own),
                               _enumerated(h, theta, lr, out, desc, own), rtol=1e-10, atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(h=forests(max_classes=9), data=st.data())
def test_equal_exponents_give_the_full_version_with_own_evidence(h, data):
    # desc = out: the engine's full posterior of tempered evidence, own evidence put back per class
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    k = h.n_classes
    theta = rng.uniform(0.05, 0.95, k)
    likelihoods = rng.uniform(0.05, 3.0, size=(4, k, 2))
    a, own = rng.uniform(0.05, 1.0, k), rng.uniform(0.05, 1.0, k)
    engine = own_evidence(mlpr_from_likelihoods(LabelNetwork(h, theta), temper(likelihoods, a), version="full"),
                          likelihoods, a, own)
    lr = np.log(likelihoods[..., 1]) - np.log(likelihoods[..., 0])
    np.testing.assert_allclose(split_full_posterior(h, theta, lr, a, a, own), engine, rtol=1e-12, atol=1e-14)


def test_hand_worked_chain():
    # root -> child, theta 0.5 each, child's ratio 3, root's ratio 1. The root's odds: 0.5 * 3 + 0.5 = 2
    # with the child's evidence at 1 (P = 2/3); at desc = 0.5 the child's message is 0.5 * sqrt(3) + 0.5
    h = Hierarchy.from_parents([None, 0])
    lr = np.log([[1.0, 3.0]])
    p = split_full_posterior(h, [0.5, 0.5], lr, out=1.0, desc=0.5, own=1.0)
    odds = 0.5 * np.sqrt(3) + 0.5
    assert p[0, 0] == pytest.approx(odds / (1 + odds), rel=1e-14)
    # the child's posterior does not see desc (it has no descendants): odds (0.5 / 1.5) * 3 = 1
    assert p[0, 1] == pytest.approx(0.5, rel=1e-14)


def test_certain_and_impossible_classes():
    # theta 1 at a root: it is certain; theta 0: the class is impossible, whatever its evidence
    h = Hierarchy.from_parents([None, 0, 0])
    p = split_full_posterior(h, [1.0, 0.0, 0.7], np.log([[0.01, 50.0, 2.0]]), 0.5, 0.8, 1.0)
    assert p[0, 0] == 1.0 and p[0, 1] == 0.0 and 0 < p[0, 2] < 1
    assert np.isfinite(p).all()


def test_second_stage_refuses_descendants_off_full_or_on_a_dag():
    tree = Hierarchy.from_parents([None, 0])
    with pytest.raises(InputError, match="descendants .* needs version='full' on a forest, got version 'nbh'"):
        SecondStage(tree, "nbh", 0.5, None, [0.5, 0.5], descendants=0.5)
    dag = Hierarchy.from_edges([("a", "c"), ("b", "c")])
    with pytest.raises(InputError, match="on a DAG"):
        SecondStage(dag, "full", 0.5, None, [0.5, 0.5, 0.5], descendants=0.5)


def test_hard_evidence_is_refused_with_the_descendants_exponent():
    # (0, 1) on the child and (1, 0) on its parent cannot both hold: the engines raise, the split must not guess
    h = Hierarchy.from_parents([None, 0])
    stage = SecondStage(h, "full", 0.5, None, [0.5, 0.5], descendants=0.8)
    with pytest.raises(InputError, match="likelihoods must be positive for the descendants' exponent"):
        stage.mlpr(np.array([[[1.0, 0.0], [0.0, 1.0]]]))


def test_second_stage_with_descendants_runs_the_split_posterior():
    h = Hierarchy.from_parents([None, 0, 0, 1])
    rng = np.random.default_rng(3)
    likelihoods = rng.uniform(0.1, 2.0, size=(5, 4, 2))
    stage = SecondStage(h, "full", 0.2, None, [0.6, 0.5, 0.4, 0.3], own=0.9, descendants=0.7)
    lr = np.log(likelihoods[..., 1]) - np.log(likelihoods[..., 0])
    np.testing.assert_allclose(stage.mlpr(likelihoods), split_full_posterior(h, stage.theta, lr, 0.2, 0.7, 0.9))
    # without the descendants' exponent: the engine's route, a different answer
    assert not np.allclose(replace(stage, descendants=None).mlpr(likelihoods), stage.mlpr(likelihoods))


@pytest.fixture(scope="module")
def synthetic():
    return make_paper_synthetic(1500, 300, seed=2)


def test_the_choice_keeps_the_descendants_exponent_only_when_it_helps(synthetic):
    d = synthetic
    stage, details = fit_second_stage_auto(d.train_scores, d.train_labels, d.hierarchy, versions=("full",), cv=3,
                                           descendants=True, return_predictions=True)
    plain = fit_second_stage_auto(d.train_scores, d.train_labels, d.hierarchy, versions=("full",), cv=3)
    row, plain_row = stage.cv_table.iloc[0], plain.cv_table.iloc[0]
    assert "a_descendants" not in plain.cv_table and plain.descendants is None
    assert row["cv_auprc"] >= plain_row["cv_auprc"]
    assert (stage.descendants is None) == (row["cv_auprc"] == plain_row["cv_auprc"])
    assert (row["a_descendants"] is None) == (stage.descendants is None)
    # the cross-fitted mLPRs the choice judged are the stage's own computation, fold by fold
    kept = details["versions"]["full"]
    assert kept["descendants"] is stage.descendants or np.array_equal(kept["descendants"], stage.descendants)
    assert row["evaluations"] > plain_row["evaluations"]  # the descendants' search ran


def test_a_model_with_descendants_saves_as_format_5_and_predicts_the_same(synthetic, tmp_path):
    from hmcpgm import MLPR

    d = synthetic
    model = MLPR(hierarchy=d.hierarchy, version="full", cv=3, pool=None, stack=None).fit(d.train_scores, d.train_labels)
    # data drawn from the paper's model need no separate exponent: give the fitted stage one
    k = d.hierarchy.n_classes
    model.second_stage_ = replace(model.second_stage_, descendants=np.linspace(0.2, 0.9, k),
                                  own=np.full(k, 0.8))
    path = save_model(model, tmp_path / "m.npz")
    with np.load(path, allow_pickle=False) as archive:
        assert "descendants_tempering" in archive.files
        assert json.loads(archive["meta"].item())["format_version"] == 5  # 6 is for models that pool
    loaded = load_model(path)
    np.testing.assert_array_equal(loaded.descendants_tempering_, model.descendants_tempering_)
    np.testing.assert_array_equal(loaded.predict_proba(d.test_scores), model.predict_proba(d.test_scores))
    assert not np.allclose(loaded.predict_proba(d.test_scores),
                           replace(model.second_stage_, descendants=None).predict_proba(d.test_scores))
