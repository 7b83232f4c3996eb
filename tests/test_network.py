"""The pgmpy network: CPDs encode the hierarchy; the augmented view matches virtual evidence."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hmcpgm import Hierarchy, InputError, augmented_network, mlpr_from_likelihoods, prior_marginals, to_pgmpy


def joint_by_hand(hierarchy, theta, y):
    """P(Y = y) from the model's definition (SPEC section 2)."""
    p = 1.0
    for k in range(hierarchy.n_classes):
        parents_on = all(y[q] for q in hierarchy.parent_indices[k])
        p1 = theta[k] if parents_on else 0.0
        p *= p1 if y[k] else 1.0 - p1
    return p


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 5), st.integers(0, 2**32 - 1))
def test_pgmpy_joint_equals_the_model_and_respects_the_hierarchy(k, seed):
    from pgmpy.inference import VariableElimination

    rng = np.random.default_rng(seed)
    parents = [None] + [list(rng.choice(j, size=int(rng.integers(0, min(j, 2) + 1)), replace=False)) or None for j in range(1, k)]
    names = [f"c{j}" for j in range(k)]
    h = Hierarchy.from_edges(
        [(names[p], names[j]) for j, ps in enumerate(parents) if ps for p in ps], classes=names
    )
    theta = rng.uniform(size=k)
    model = to_pgmpy(h, theta)
    assert set(model.nodes) == set(names)
    joint = VariableElimination(model).query(names, joint=True, show_progress=False)
    for y in itertools.product((0, 1), repeat=k):
        p = joint.get_value(**dict(zip(names, y)))
        assert p == pytest.approx(joint_by_hand(h, theta, y), abs=1e-12)
        if h.violations(np.array([y])):
            assert p == 0.0
    marg = [VariableElimination(model).query([n], show_progress=False).values[1] for n in names]
    np.testing.assert_allclose(marg, prior_marginals(h, theta), atol=1e-12)


def test_samples_never_break_the_hierarchy():
    h = Hierarchy.from_edges([("a", "b"), ("a", "c"), ("b", "d"), ("c", "d"), ("d", "e")])
    model = to_pgmpy(h, [0.7, 0.8, 0.6, 0.9, 0.5])
    samples = model.simulate(n_samples=2000, seed=1, show_progress=False)[list(h.classes)]
    y = samples.astype(int).to_numpy()
    assert h.violations(y) == 0
    assert y[:, 4].sum() > 0  # the deepest class does occur


def test_cpd_column_order_last_parent_fastest():
    h = Hierarchy.from_parents([None, None, [0, 1]])
    cpd = to_pgmpy(Hierarchy.from_edges([("p", "r"), ("q", "r")], classes=["p", "q", "r"]), [0.5, 0.5, 0.25]).get_cpds("r")
    assert cpd.variables == ["r", "p", "q"]
    np.testing.assert_allclose(cpd.values[1], [[0, 0], [0, 0.25]])  # only p = q = 1 allows r = 1
    assert h.n_classes == 3


def test_augmented_network_evidence_equals_virtual_evidence():
    from pgmpy.inference import VariableElimination

    h = Hierarchy.from_edges([("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")])
    theta = np.array([0.6, 0.7, 0.5, 0.8])
    rng = np.random.default_rng(2)
    table = rng.uniform(0.1, 1, size=(4, 2, 3))
    table /= table.sum(axis=2, keepdims=True)
    model = augmented_network(h, theta, table)
    bins = [2, 0, 1, 2]
    evidence = {f"S_{c}": b for c, b in zip(h.classes, bins)}
    lik = np.array([[table[k, :, b] for k, b in enumerate(bins)]])
    ours = mlpr_from_likelihoods(h, theta, lik)[0]
    for k, c in enumerate(h.classes):
        q = VariableElimination(model).query([f"Y_{c}"], evidence=evidence, show_progress=False)
        assert q.values[1] == pytest.approx(ours[k], abs=1e-12)


def test_symbolic_augmented_network_has_score_nodes_only_as_structure():
    h = Hierarchy.from_parents([None, 0])
    model = augmented_network(h, [0.5, 0.5])
    assert sorted(model.edges) == [("Y_0", "S_0"), ("Y_0", "Y_1"), ("Y_1", "S_1")]
    assert model.get_cpds() == []


def test_bad_inputs_name_the_argument():
    h = Hierarchy.from_parents([None, 0])
    with pytest.raises(InputError, match=r"theta must have shape \(2,\)"):
        to_pgmpy(h, [0.5])
    with pytest.raises(InputError, match="theta must hold probabilities"):
        to_pgmpy(h, [0.5, -0.1])
    with pytest.raises(InputError, match=r"score_given_label must have shape \(2, 2, n_bins\)"):
        augmented_network(h, [0.5, 0.5], np.ones((2, 3)))
    with pytest.raises(InputError, match="score_given_label must hold probabilities"):
        augmented_network(h, [0.5, 0.5], np.ones((2, 2, 2)))
    with pytest.raises(TypeError, match="hierarchy must be an hmcpgm.Hierarchy"):
        to_pgmpy("a", [0.5])
