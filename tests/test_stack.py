"""The neighbour stack: a penalised logistic regression per class on its own and its neighbours' calibrated scores.

References: the penalised log-likelihood written with numpy and minimised by scipy
(BFGS) on its own design matrix; the design worked by hand; the per-fold fits for
the cross-fitted values; the estimator's values without the stack.
"""

import json
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize
from scipy.special import expit, logit
from sklearn.metrics import average_precision_score
from strategies import hierarchies

from hmcpgm import MLPR, Hierarchy
from hmcpgm.corrections import fit_calibration
from hmcpgm.datasets import make_paper_synthetic
from hmcpgm.exceptions import InputError
from hmcpgm.likelihood import NeighbourStack, crossfitted_stack, fit_neighbour_stack
from hmcpgm.persist import load_model, save_model
from hmcpgm.selection import STACK_WEIGHTS, choose_stack_weight


def _data(hierarchy, m, seed):
    """Labels closed downward from the roots, scores that see the label and a neighbour's."""
    rng = np.random.default_rng(seed)
    k = hierarchy.n_classes
    y = np.zeros((m, k), dtype=int)
    for j in hierarchy.topological_order:
        parents = hierarchy.parent_indices[j]
        on = np.ones(m, bool) if len(parents) == 0 else y[:, parents].all(axis=1)
        y[:, j] = on & (rng.random(m) < 0.6)
    s = 1.2 * y + rng.normal(size=(m, k))
    return s, y


def _reference_design(logits, hierarchy, j):
    """The five inputs of class ``j`` from the published definition, absent ones 0."""
    m = len(logits)
    parents = [p for p, c in hierarchy.edge_indices if c == j]
    children = [c for p, c in hierarchy.edge_indices if p == j]
    low = logits[:, parents].min(axis=1) if parents else np.zeros(m)
    top = logits[:, children].max(axis=1) if children else np.zeros(m)
    lse = np.log(np.exp(logits[:, children]).sum(axis=1)) if children else np.zeros(m)
    return np.column_stack([np.ones(m), logits[:, j], low, top, lse])


def _robust_t(s, train):
    """``asinh((s - median) / (IQR / 1.349))`` per class, the median and IQR of the training scores."""
    q25, median, q75 = np.percentile(train, [25, 50, 75], axis=0)
    return np.arcsinh((s - median) / ((q75 - q25) / 1.349))


def _reference_logits(s, y, new=None):
    t = _robust_t(s, s)
    p = fit_calibration(t, y, method="platt").transform(t if new is None else _robust_t(new, s))
    return logit(np.clip(p, 1e-6, 1 - 1e-6))


def _reference_fit(X, y, lam):
    mu = np.array([0.0, 1.0, 0.0, 0.0, 0.0])
    prec = np.array([1e-6, lam, lam, lam, lam])

    def f(w):
        eta = X @ w
        return np.sum(np.logaddexp(0.0, eta) - y * eta) + 0.5 * np.sum(prec * (w - mu) ** 2)

    def grad(w):
        return X.T @ (expit(X @ w) - y) + prec * (w - mu)

    return minimize(f, mu, jac=grad, method="BFGS", options={"gtol": 1e-10, "maxiter": 10_000}).x


@pytest.fixture(scope="module")
def dag():
    # a DAG whose column order is not topological: "d" has two parents, "a" is listed last
    return Hierarchy.from_edges([("a", "b"), ("a", "c"), ("b", "d"), ("c", "d"), ("c", "e")],
                                classes=["d", "e", "b", "c", "a"])


@pytest.mark.parametrize("lam", [0.5, 10.0])
def test_the_fit_is_the_penalised_maximum_likelihood_scipy_finds(dag, lam):
    s, y = _data(dag, 400, seed=1)
    stack = fit_neighbour_stack(s, y, dag, lam=lam)
    logits = _reference_logits(s, y)
    for j in range(dag.n_classes):
        X = _reference_design(logits, dag, j)
        np.testing.assert_allclose(stack.coef[j], _reference_fit(X, y[:, j], lam), rtol=0, atol=1e-5)


def test_the_posteriors_are_the_logistic_of_the_design_worked_by_hand(dag):
    s, y = _data(dag, 300, seed=2)
    stack = fit_neighbour_stack(s, y, dag)
    new = np.random.default_rng(3).normal(size=(50, dag.n_classes)) * 3
    logits = _reference_logits(s, y, new)
    expected = np.column_stack([expit(_reference_design(logits, dag, j) @ stack.coef[j])
                                for j in range(dag.n_classes)])
    # the reference goes through the calibrated probability and back (logit of expit): rounding of 1e-12
    np.testing.assert_allclose(stack.lpr(new), expected, rtol=0, atol=1e-10)


def test_a_class_whose_labels_do_not_vary_keeps_its_platt_probability(dag):
    s, y = _data(dag, 300, seed=4)
    y[:, dag.classes.index("e")] = 0  # no positive
    stack = fit_neighbour_stack(s, y, dag)
    e = dag.classes.index("e")
    np.testing.assert_array_equal(stack.coef[e], [0.0, 1.0, 0.0, 0.0, 0.0])
    np.testing.assert_allclose(stack.lpr(s)[:, e], expit(_reference_logits(s, y)[:, e]), rtol=1e-9, atol=0)


def test_one_extreme_training_score_barely_moves_the_posteriors(dag):
    # a positive at 1e6 among scores near 0: Platt's map of the raw scores would lose its slope
    s, y = _data(dag, 400, seed=10)
    new = _data(dag, 200, seed=11)[0]
    before = fit_neighbour_stack(s, y, dag).lpr(new)
    j = dag.classes.index("b")
    s[np.flatnonzero(y[:, j] == 1)[0], j] = 1e6
    after = fit_neighbour_stack(s, y, dag).lpr(new)
    assert np.abs(after - before).max() < 0.05


def test_a_large_precision_keeps_each_class_at_its_own_calibrated_score(dag):
    s, y = _data(dag, 300, seed=5)
    stack = fit_neighbour_stack(s, y, dag, lam=1e9)
    np.testing.assert_allclose(stack.coef[:, 1:], np.tile([1.0, 0.0, 0.0, 0.0], (dag.n_classes, 1)), atol=1e-5)


@settings(max_examples=25, deadline=None)
@given(h=hierarchies(kind="dag", min_classes=2, max_classes=6), seed=st.integers(0, 10_000))
def test_the_column_order_does_not_change_the_posteriors(h, seed):
    s, y = _data(h, 120, seed)
    order = np.random.default_rng(seed).permutation(h.n_classes)
    moved = Hierarchy.from_edges(h.edges, classes=[h.classes[j] for j in order])
    a = fit_neighbour_stack(s, y, h).lpr(s)
    b = fit_neighbour_stack(s[:, order], y[:, order], moved).lpr(s[:, order])
    np.testing.assert_allclose(b, a[:, order], rtol=0, atol=1e-9)
    assert np.all((a > 0) & (a < 1))


def test_dataframes_are_aligned_by_class_name(dag):
    s, y = _data(dag, 200, seed=6)
    frame = pd.DataFrame(s, columns=dag.classes)[list(reversed(dag.classes))]
    labels = pd.DataFrame(y, columns=dag.classes)[list(reversed(dag.classes))]
    stack = fit_neighbour_stack(frame, labels, dag)
    np.testing.assert_array_equal(stack.lpr(frame), fit_neighbour_stack(s, y, dag).lpr(s))


def test_the_crossfitted_posteriors_are_each_folds_stack_on_the_rows_it_left_out(dag):
    s, y = _data(dag, 300, seed=7)
    folds = np.arange(300) % 3
    out = crossfitted_stack(s, y, dag, folds, lam=3.0)
    for f in range(3):
        held = folds == f
        expected = fit_neighbour_stack(s[~held], y[~held], dag, lam=3.0).lpr(s[held])
        np.testing.assert_array_equal(out[held], expected)


@pytest.mark.parametrize("lam", [0, -1.0, float("nan"), float("inf"), True, "10"])
def test_a_bad_precision_is_refused_in_one_line(dag, lam):
    s, y = _data(dag, 50, seed=8)
    with pytest.raises(InputError, match="lam must be a positive number"):
        fit_neighbour_stack(s, y, dag, lam=lam)


def test_bad_labels_and_shapes_are_refused(dag):
    s, y = _data(dag, 50, seed=9)
    with pytest.raises(InputError, match="labels must be 0 or 1"):
        fit_neighbour_stack(s, y * 2, dag)
    with pytest.raises(InputError, match="labels has shape"):
        fit_neighbour_stack(s, y[:40], dag)
    with pytest.raises(InputError, match="folds must have shape"):
        crossfitted_stack(s, y, dag, np.zeros(10))
    stack = fit_neighbour_stack(s, y, dag)
    with pytest.raises(InputError, match="coef of shape"):
        NeighbourStack(dag, stack.center, stack.scale, stack.platt, stack.coef[:, :4], 10.0)
    with pytest.raises(InputError, match="finite"):
        NeighbourStack(dag, stack.center, stack.scale, stack.platt, np.full_like(stack.coef, np.nan), 10.0)
    with pytest.raises(InputError, match="scale positive"):
        NeighbourStack(dag, stack.center, 0 * stack.scale, stack.platt, stack.coef, 10.0)


# --- the estimator's stack ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def synthetic():
    return make_paper_synthetic(1500, 300, seed=3)


def _fitted(d, **params):
    return MLPR(hierarchy=d.hierarchy, cv=3, consistency="hierrank", **params).fit(d.train_scores, d.train_labels)


def test_the_estimators_stack_averages_its_values_with_the_stacks_posteriors(synthetic):
    d = synthetic
    plain, stacked = _fitted(d, stack=None), _fitted(d, stack=0.3)
    # the version, exponents and pool are chosen before the stack: the same choices
    assert stacked.version_ == plain.version_ and stacked.pool_weight_ == plain.pool_weight_
    np.testing.assert_array_equal(stacked.tempering_, plain.tempering_)
    r = fit_neighbour_stack(d.train_scores, d.train_labels, d.hierarchy).lpr(d.test_scores)
    np.testing.assert_allclose(stacked.predict_proba(d.test_scores), 0.7 * plain.predict_proba(d.test_scores) + 0.3 * r,
                               rtol=0, atol=1e-14)
    assert stacked.stack_weight_ == 0.3 and plain.stack_weight_ == 0.0
    assert stacked.cv_results_.attrs["stack"] == {"weight": 0.3, "cv": {}} and "stack" in stacked.second_stage_.seconds
    # the recalibration map was fitted on cross-fitted values that include the stack: another map
    assert not np.array_equal(stacked.recalibration_.knots_y, plain.recalibration_.knots_y)


def test_auto_chooses_the_weight_whose_crossfitted_values_rank_best_and_none_for_the_papers_model(synthetic):
    d = synthetic
    default = _fitted(d)
    info = default.cv_results_.attrs["stack"]
    assert default.stack == "auto" and set(info["cv"]) == set(STACK_WEIGHTS)
    assert info["cv"][info["weight"]] == max(info["cv"].values()) and default.stack_weight_ == info["weight"]
    fixed = _fitted(d, stack=info["weight"] or None)
    np.testing.assert_array_equal(default.predict_proba(d.test_scores), fixed.predict_proba(d.test_scores))
    kw = {"version": "full", "score_model": "lpr", "tempering": None, "recalibrate": False}
    paper = _fitted(d, **kw)
    assert paper.stack_weight_ == 0.0 and paper.second_stage_.stack_model is None
    np.testing.assert_array_equal(paper.predict_proba(d.test_scores), _fitted(d, stack=None, **kw).predict_proba(
        d.test_scores))


def test_the_stack_weights_criterion_is_the_flat_average_precision_of_each_average():
    rng = np.random.default_rng(3)
    y = (rng.random((200, 6)) < 0.3).astype(int)
    p = np.clip(0.3 * y + rng.random(y.shape) * 0.8, 0, 1)
    r = np.clip(0.5 * y + rng.random(y.shape) * 0.6, 0, 1)
    cols = np.array([0, 2, 3, 5])
    weight, table = choose_stack_weight(p, r, y, cols, "auprc")
    for v in STACK_WEIGHTS:
        mixed = ((1 - v) * p + v * r)[:, cols]
        assert table[v] == pytest.approx(average_precision_score(y[:, cols].ravel(), mixed.ravel()), abs=1e-12)
    assert weight == max(table, key=table.get) and weight is not None
    assert choose_stack_weight(p, r, y, cols, "auprc", 0.3) == (0.3, {})
    assert choose_stack_weight(p, r, y, cols, "auprc", 0) == (None, {})


def test_the_paper_model_with_a_stack(synthetic):
    d = synthetic
    kw = {"version": "full", "score_model": "lpr", "tempering": None, "recalibrate": False}
    plain, stacked = _fitted(d, stack=None, **kw), _fitted(d, stack=1.0, **kw)
    r = fit_neighbour_stack(d.train_scores, d.train_labels, d.hierarchy).lpr(d.test_scores)
    np.testing.assert_array_equal(stacked.predict_proba(d.test_scores), r)
    assert _fitted(d, stack=0.0, **kw).second_stage_.stack_model is None
    np.testing.assert_array_equal(_fitted(d, stack=0, **kw).predict_proba(d.test_scores),
                                  plain.predict_proba(d.test_scores))


def test_a_stacked_model_saves_and_loads_with_its_stack(synthetic, tmp_path):
    d = synthetic
    model = _fitted(d, stack=0.5)
    path = tmp_path / "m.npz"
    save_model(model, path)
    back = load_model(path)
    assert back.stack_weight_ == 0.5 and back.second_stage_.stack_model.lam == model.second_stage_.stack_model.lam
    np.testing.assert_array_equal(back.predict_proba(d.test_scores), model.predict_proba(d.test_scores))
    with np.load(path, allow_pickle=False) as archive:
        meta = json.loads(str(archive["meta"]))
        assert archive["stack/coef"].shape == (25, 5) and archive["stack/platt"].shape == (25, 2)
        assert archive["stack/center"].shape == archive["stack/scale"].shape == (25,)
    assert meta["format_version"] == 8 and meta["stack_weight"] == 0.5 and meta["stack_lam"] == 10.0


@pytest.mark.parametrize("bad", ["half", "Auto", 1.5, -0.1, float("nan"), True])
def test_a_bad_stack_weight_is_refused_in_one_line(synthetic, bad):
    d = synthetic
    with pytest.raises(InputError, match="stack must be 'auto', None or a weight in"):
        MLPR(hierarchy=d.hierarchy, stack=bad).fit(d.train_scores, d.train_labels)


def test_a_stacking_stage_needs_the_stacks_posteriors(synthetic):
    d = synthetic
    stage = _fitted(d, stack=0.5).second_stage_
    with pytest.raises(InputError, match="give stack_lpr"):
        stage.mlpr(stage.likelihoods(d.test_scores), pool_lpr=np.zeros((300, 25)))
    with pytest.raises(InputError, match="has no stack_model"):
        replace(stage, stack_model=None).predict_proba(d.test_scores)
    with pytest.raises(InputError, match="stack_weight must be in"):
        replace(stage, stack_weight=0.0)
