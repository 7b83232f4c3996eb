"""mLPR engines: each checked against brute-force enumeration and pgmpy exact inference."""

import warnings

import numpy as np
import pytest
from hmc_data import HMC_DATA
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import from_parent_lists, hierarchies

from hmcpgm import (
    ConvergenceWarning,
    Hierarchy,
    InferenceError,
    InputError,
    LabelNetwork,
    TooLargeError,
    loopy_belief_propagation,
    mlpr_from_likelihoods,
)

ATOL = 1e-9
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def paper_forest():
    parents = [0, 0, 0, 2, 3, 3, 4, 4, 4, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 12, 13, 13, 13, 14]
    return Hierarchy.from_parents([p - 1 for p in parents])


def random_problem(hierarchy, seed, n_objects=6, exotic=0.1, extremes=(0.0, 1e-300, 1e300)):
    """theta and likelihoods with some ``extremes`` entries: zeros, 1e-300 and 1e300 (never a [0, 0] pair)."""
    rng = np.random.default_rng(seed)
    k = hierarchy.n_classes
    theta = rng.uniform(0.02, 0.98, size=k)
    odd = rng.uniform(size=k) < 0.05
    theta[odd] = rng.choice([0.0, 1.0], size=odd.sum())
    lik = rng.uniform(0.01, 1.0, size=(n_objects, k, 2))
    mask = rng.uniform(size=lik.shape) < exotic
    lik[mask] = rng.choice(list(extremes), size=mask.sum())
    both_zero = (lik[..., 0] == 0) & (lik[..., 1] == 0)
    lik[both_zero] = 1.0
    return theta, lik


def answer(hierarchy, theta, lik, **kw):
    """The engine's answer, or the string 'impossible' if it rejects the evidence."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            return mlpr_from_likelihoods(LabelNetwork(hierarchy, theta), lik, **kw)
    except InferenceError as exc:
        assert "probability zero" in str(exc)
        return "impossible"


def assert_same(a, b, atol=ATOL):
    if isinstance(a, str) or isinstance(b, str):
        assert isinstance(a, str) and isinstance(b, str), (a, b)
    else:
        assert np.all(np.isfinite(a))
        np.testing.assert_allclose(a, b, rtol=0, atol=atol)


def restricted_nbh_reference(hierarchy, theta, lik):
    """nbh by definition: for each k, full enumeration with evidence only on k, parents, children."""
    out = np.empty(lik.shape[:2])
    for k in range(hierarchy.n_classes):
        keep = np.zeros(hierarchy.n_classes, bool)
        keep[[k, *hierarchy.parent_indices[k], *hierarchy.child_indices[k]]] = True
        restricted = np.where(keep[None, :, None], lik, 1.0)
        res = answer(hierarchy, theta, restricted, engine="enumerate")
        if isinstance(res, str):
            return res
        out[:, k] = res[:, k]
    return out


# ---------------------------------------------------------------- exactness against brute force
@SETTINGS
@given(hierarchies(kind="forest"), st.integers(0, 2**32 - 1))
def test_tree_engine_equals_enumeration(h, seed):
    theta, lik = random_problem(h, seed)
    ref = answer(h, theta, lik, engine="enumerate")
    assert_same(answer(h, theta, lik, engine="tree"), ref)
    assert_same(answer(h, theta, lik, engine="loopy", damping=0.0), ref)


@SETTINGS
@given(hierarchies(kind="dag"), st.integers(0, 2**32 - 1))
def test_junction_engine_equals_enumeration(h, seed):
    theta, lik = random_problem(h, seed)
    ref = answer(h, theta, lik, engine="enumerate")
    assert_same(answer(h, theta, lik, engine="junction"), ref)
    assert_same(answer(h, theta, lik), ref)  # auto


@SETTINGS
@given(hierarchies(max_classes=40, kind="forest"), st.integers(0, 2**32 - 1))
def test_tree_and_junction_agree_on_forests(h, seed):
    theta, lik = random_problem(h, seed, n_objects=20)
    assert_same(answer(h, theta, lik, engine="tree"), answer(h, theta, lik, engine="junction"))


@SETTINGS
@given(hierarchies(kind="forest"), st.integers(0, 2**32 - 1))
def test_nbh_on_forests_is_inference_with_restricted_evidence(h, seed):
    theta, lik = random_problem(h, seed)
    ref = restricted_nbh_reference(h, theta, lik)
    assert_same(answer(h, theta, lik, version="nbh", engine="tree"), ref)


@SETTINGS
@given(hierarchies(max_classes=7, kind="dag"), st.integers(0, 2**32 - 1))
def test_nbh_on_dags_is_inference_with_restricted_evidence(h, seed):
    theta, lik = random_problem(h, seed)
    ref = restricted_nbh_reference(h, theta, lik)
    assert_same(answer(h, theta, lik, version="nbh"), ref)
    assert_same(answer(h, theta, lik, version="nbh", engine="enumerate"), ref)


@SETTINGS
@given(hierarchies(kind="dag"), st.integers(0, 2**32 - 1))
def test_indpt_is_own_evidence_with_prior_marginal(h, seed):
    theta, lik = random_problem(h, seed, exotic=0.0)
    # prior marginals by enumeration: the no-evidence posterior
    prior = mlpr_from_likelihoods(LabelNetwork(h, theta), np.ones((1, h.n_classes, 2)), engine="enumerate")[0]
    np.testing.assert_allclose(LabelNetwork(h, theta).prior_marginals, prior, atol=ATOL)
    expected = prior * lik[..., 1] / (prior * lik[..., 1] + (1 - prior) * lik[..., 0])
    for engine in ("auto", "junction", "enumerate"):
        assert_same(answer(h, theta, lik, version="indpt", engine=engine), expected)


def test_indpt_with_posterior_route_likelihoods_returns_the_lpr():
    h = paper_forest()
    rng = np.random.default_rng(3)
    theta = rng.uniform(0.2, 0.9, size=25)
    prior = LabelNetwork(h, theta).prior_marginals
    lpr = rng.uniform(0.001, 0.999, size=(50, 25))
    lik = np.stack([(1 - lpr) / (1 - prior), lpr / prior], axis=2)  # L = P(Y | S) / P(Y)
    np.testing.assert_allclose(mlpr_from_likelihoods(LabelNetwork(h, theta), lik, version="indpt"), lpr, atol=1e-12)


# ---------------------------------------------------------------- invariants
@SETTINGS
@given(hierarchies(max_classes=12, kind="dag"), st.integers(0, 2**32 - 1))
def test_child_mlpr_never_exceeds_any_parent_under_full_inference(h, seed):
    theta, lik = random_problem(h, seed, n_objects=10)
    for engine in (("tree", "junction") if h.is_forest else ("junction",)):
        out = answer(h, theta, lik, engine=engine)
        if isinstance(out, str):
            continue
        for p, c in h.edge_indices:
            assert np.all(out[:, c] <= out[:, p] + 1e-12)


@SETTINGS
@given(hierarchies(max_classes=10, kind="forest"), st.integers(0, 2**32 - 1))
def test_loopy_is_exact_on_forests(h, seed):
    theta, lik = random_problem(h, seed, exotic=0.0)
    mlpr, report = loopy_belief_propagation(LabelNetwork(h, theta), lik)
    assert report.all_converged
    np.testing.assert_allclose(mlpr, mlpr_from_likelihoods(LabelNetwork(h, theta), lik, engine="tree"), atol=ATOL)


# Loopy BP on small, densely loopy DAGs (every non-root has 1-3 parents) is a rough
# approximation: the CPDs are deterministic for a negative parent, which loopy BP handles
# badly. Measured (damping 0.3, all objects converged), per object the largest absolute
# error over classes against the junction tree:
#   this test's 60 DAGs x 6 objects (seed 11):   max 0.417, mean 0.033, 95% quantile 0.162
#   400 other DAGs x 6 objects (seed 1234):      max 0.548, mean 0.044, 95% quantile 0.178
# The bounds add a margin to the larger measurement; they guard against regressions.
LOOPY_MAX_ERROR = 0.6
LOOPY_MEAN_ERROR = 0.06


def test_loopy_error_on_small_dags_is_bounded():
    errors = []
    rng = np.random.default_rng(11)
    for trial in range(60):
        k = int(rng.integers(3, 9))
        parents = [None] + [
            list(rng.choice(j, size=int(rng.integers(1, min(j, 3) + 1)), replace=False))
            for j in range(1, k)
        ]
        h = Hierarchy.from_parents(parents)
        theta, lik = random_problem(h, trial, exotic=0.0)
        exact = mlpr_from_likelihoods(LabelNetwork(h, theta), lik, engine="junction")
        approx, report = loopy_belief_propagation(LabelNetwork(h, theta), lik, damping=0.3, max_iter=500)
        assert report.all_converged
        errors.append(np.abs(approx - exact).max(axis=1))
    errors = np.concatenate(errors)
    assert errors.max() < LOOPY_MAX_ERROR
    assert errors.mean() < LOOPY_MEAN_ERROR


def test_extreme_likelihoods_give_finite_exact_answers():
    h = Hierarchy.from_parents([None, 0, 0, [1, 2], 1, None])
    theta = np.array([0.6, 0.5, 0.7, 0.4, 0.3, 0.2])
    base = np.random.default_rng(0).uniform(0.1, 1, size=(4, 6, 2))
    lik = base.copy()
    lik[0, 1] = [1e300, 1e300]  # no information
    lik[1, 3] = [1e-300, 1.0]  # ratio 1e300
    lik[2, 4] = [1e300, 1e-300]  # ratio 1e600 (beyond the float range)
    lik[3, 0] = [0.0, 1e-300]  # hard evidence
    same = base.copy()
    same[0, 1] = [1, 1]
    same[1, 3] = [1e-300, 1.0]
    same[2, 4] = [1.0, 0.0]  # 1e-600 rounds to 0
    same[3, 0] = [0.0, 1.0]
    ref = mlpr_from_likelihoods(LabelNetwork(h, theta), same, engine="enumerate")
    for engine in ("junction", "enumerate"):
        out = mlpr_from_likelihoods(LabelNetwork(h, theta), lik, engine=engine)
        assert np.all(np.isfinite(out))
        np.testing.assert_allclose(out, ref, atol=ATOL)
    tree = Hierarchy.from_parents([None, 0, 0, 1, 1, None])
    ref = mlpr_from_likelihoods(LabelNetwork(tree, theta), same, engine="enumerate")
    for engine in ("tree", "loopy"):
        np.testing.assert_allclose(mlpr_from_likelihoods(LabelNetwork(tree, theta), lik, engine=engine), ref, atol=ATOL)


def test_impossible_evidence_is_an_error_in_every_engine():
    h = Hierarchy.from_parents([None, 0])
    lik = np.array([[[1.0, 0.0], [0.0, 1.0]]])  # parent surely negative, child surely positive
    for engine in ("tree", "junction", "loopy", "enumerate"):
        with pytest.raises(InferenceError, match="probability zero"):
            mlpr_from_likelihoods(LabelNetwork(h, [0.5, 0.5]), lik, engine=engine)


def test_a_ratio_beyond_the_float_range_is_not_hard_evidence():
    # L(1) / L(0) = 1e600 overflows, yet the child may still be negative: not impossible
    h = Hierarchy.from_parents([None, 0])
    lik = np.array([[[1.0, 0.0], [1e-300, 1e300]]])  # parent surely negative
    for engine in ("tree", "junction", "loopy", "enumerate"):
        np.testing.assert_array_equal(mlpr_from_likelihoods(LabelNetwork(h, [0.5, 0.5]), lik, engine=engine), 0.0)


def test_empty_input_gives_empty_output():
    h = paper_forest()
    assert mlpr_from_likelihoods(LabelNetwork(h, np.full(25, 0.5)), np.ones((0, 25, 2))).shape == (0, 25)


def test_junction_compiles_a_dag_of_hundreds_of_classes():
    rng = np.random.default_rng(5)
    k = 300
    parents = [None] * 5 + [
        list(rng.choice(j, size=2, replace=False)) if rng.uniform() < 0.1 else [int(rng.integers(max(0, j - 40), j))]
        for j in range(5, k)
    ]
    h = Hierarchy.from_parents(parents)
    theta, lik = random_problem(h, 1, n_objects=30, exotic=0.0)
    out = mlpr_from_likelihoods(LabelNetwork(h, theta), lik)
    for p, c in h.edge_indices:
        assert np.all(out[:, c] <= out[:, p] + 1e-12)
    # the exact answer is a fixed point of loopy BP only on forests; compare with a
    # forest view: loopy and junction on the spanning forest that keeps first parents
    forest = Hierarchy.from_parents([p if p is None else p[0] for p in parents])
    np.testing.assert_allclose(
        mlpr_from_likelihoods(LabelNetwork(forest, theta), lik, engine="junction"),
        mlpr_from_likelihoods(LabelNetwork(forest, theta), lik, engine="tree"),
        atol=ATOL,
    )


# ---------------------------------------------------------------- loopy report and warning
def test_loopy_reports_non_convergence_with_a_warning():
    h = Hierarchy.from_parents([None, 0, 0, [1, 2], 3])
    theta, lik = random_problem(h, 4, n_objects=5, exotic=0.0)
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        _, report = loopy_belief_propagation(LabelNetwork(h, theta), lik, max_iter=1)
    assert report.converged.shape == (5,) and not report.converged.any()
    assert np.all(report.n_iter == 1)
    _, report = loopy_belief_propagation(LabelNetwork(h, theta), lik, damping=0.2, max_iter=500)
    assert report.all_converged and report.n_iter.max() < 500
    out, rep2 = mlpr_from_likelihoods(LabelNetwork(h, theta), lik, engine="loopy", return_report=True)
    assert rep2.converged.shape == (5,)
    # nbh runs loopy per kind of neighbourhood: no report (with objects or without, alike), the warning says it
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        out, none = mlpr_from_likelihoods(LabelNetwork(h, theta), lik, version="nbh", engine="loopy", max_iter=1,
                                          return_report=True)
    assert none is None and out.shape == (5, 5)
    _, none = mlpr_from_likelihoods(LabelNetwork(h, theta), lik[:0], version="nbh", engine="loopy",
                                    return_report=True)
    assert none is None


# ---------------------------------------------------------------- pgmpy reference
def test_pgmpy_reference_matches_on_a_tree_and_a_dag():
    for h in (Hierarchy.from_parents([None, 0, 0, 1, 1, None, 5]), Hierarchy.from_parents([None, 0, 0, [1, 2], 3])):
        theta, lik = random_problem(h, 8, n_objects=2, exotic=0.0)
        lik[0, 1] = [1e-300, 1e300]
        lik[1, 2] = [0.0, 2.0]
        for version in ("full", "nbh", "indpt"):
            ref = mlpr_from_likelihoods(LabelNetwork(h, theta), lik, version=version, engine="pgmpy")
            assert_same(mlpr_from_likelihoods(LabelNetwork(h, theta), lik, version=version), ref)
            assert_same(mlpr_from_likelihoods(LabelNetwork(h, theta), lik, version=version, engine="enumerate"), ref)


@pytest.mark.slow
@settings(max_examples=10, deadline=None)
@given(hierarchies(max_classes=6, kind="dag"), st.integers(0, 2**32 - 1))
def test_pgmpy_reference_matches_random_networks(h, seed):
    # pgmpy multiplies probability columns in linear space: a pair like [1e-300, 0.5]
    # against theta = 0 underflows to 0/0 there (found by hypothesis: a 5-class forest,
    # seed 80928), so the reference sees hard zeros but not 1e-300 or 1e300
    theta, lik = random_problem(h, seed, n_objects=2, extremes=(0.0,))
    for version in ("full", "nbh"):
        assert_same(
            answer(h, theta, lik, version=version, engine="pgmpy"),
            answer(h, theta, lik, version=version),
        )


# ---------------------------------------------------------------- bad input
def small():
    return Hierarchy.from_parents([None, 0, 0]), np.array([0.5, 0.5, 0.5]), np.ones((2, 3, 2))


def test_wrong_likelihood_shape():
    h, theta, lik = small()
    with pytest.raises(InputError, match=r"likelihoods must have shape \(n_objects, 3, 2\)"):
        mlpr_from_likelihoods(LabelNetwork(h, theta), lik[:, :2])


def test_negative_likelihood():
    h, theta, lik = small()
    lik[1, 2, 0] = -1
    with pytest.raises(InputError, match="likelihoods must be finite and non-negative"):
        mlpr_from_likelihoods(LabelNetwork(h, theta), lik)


def test_nan_likelihood():
    h, theta, lik = small()
    lik[0, 0, 1] = np.nan
    with pytest.raises(InputError, match="likelihoods must be finite"):
        mlpr_from_likelihoods(LabelNetwork(h, theta), lik)


def test_theta_out_of_range():
    h, theta, lik = small()
    with pytest.raises(InputError, match="theta must hold probabilities"):
        LabelNetwork(h, [0.5, 1.5, 0.5])


def test_theta_wrong_shape():
    h, theta, lik = small()
    with pytest.raises(InputError, match=r"theta must have shape \(3,\)"):
        LabelNetwork(h, [0.5, 0.5])


def test_unknown_engine_version_option():
    h, theta, lik = small()
    with pytest.raises(InputError, match="engine must be one of"):
        mlpr_from_likelihoods(LabelNetwork(h, theta), lik, engine="magic")
    with pytest.raises(InputError, match="version must be one of"):
        mlpr_from_likelihoods(LabelNetwork(h, theta), lik, version="partial")
    with pytest.raises(InputError, match="unknown option"):
        mlpr_from_likelihoods(LabelNetwork(h, theta), lik, engine="tree", damping=0.5)


def test_tree_engine_refuses_a_dag():
    h = Hierarchy.from_parents([None, None, [0, 1]])
    with pytest.raises(InferenceError, match="engine='tree' needs a tree or forest"):
        mlpr_from_likelihoods(LabelNetwork(h, [0.5] * 3), np.ones((1, 3, 2)), engine="tree")


def test_junction_refuses_a_clique_wider_than_max_clique():
    h = Hierarchy.from_parents([None] * 6 + [[0, 1, 2, 3, 4, 5]])
    with pytest.raises(TooLargeError, match=r"clique of 7 classes .*max_clique=4"):
        mlpr_from_likelihoods(LabelNetwork(h, [0.5] * 7), np.ones((1, 7, 2)), engine="junction", max_clique=4)


def test_enumerate_refuses_large_hierarchies():
    h = paper_forest()
    with pytest.raises(TooLargeError, match="refused for a hierarchy of 25 classes"):
        mlpr_from_likelihoods(LabelNetwork(h, [0.5] * 25), np.ones((1, 25, 2)), engine="enumerate")


def test_bad_loopy_options():
    h, theta, lik = small()
    with pytest.raises(InputError, match="damping must be in"):
        loopy_belief_propagation(LabelNetwork(h, theta), lik, damping=1.0)
    with pytest.raises(InputError, match="max_iter must be a positive int"):
        loopy_belief_propagation(LabelNetwork(h, theta), lik, max_iter=0)


def test_not_a_network():
    h, theta, lik = small()
    with pytest.raises(TypeError, match="network must be an hmcpgm.LabelNetwork"):
        mlpr_from_likelihoods(h, lik)


# ---------------------------------------------------------------- loopy schedule, nbh on DAGs
@st.composite
def polytrees(draw, max_classes=10):
    """DAGs whose undirected skeleton is a forest: a random tree with random edge directions."""
    k = draw(st.integers(2, max_classes))
    parents = [[] for _ in range(k)]
    for j in range(1, k):
        if draw(st.booleans()) or j == 1:
            other = draw(st.integers(0, j - 1))
            if draw(st.booleans()):
                parents[j].append(other)
            else:
                parents[other].append(j)
    return Hierarchy.from_parents([p or None for p in parents])


@SETTINGS
@given(polytrees(), st.integers(0, 2**32 - 1))
def test_loopy_is_exact_on_polytrees(h, seed):
    theta, lik = random_problem(h, seed, exotic=0.0)
    mlpr, report = loopy_belief_propagation(LabelNetwork(h, theta), lik)
    assert report.all_converged
    np.testing.assert_allclose(mlpr, mlpr_from_likelihoods(LabelNetwork(h, theta), lik, engine="junction"), atol=ATOL)


def test_loopy_on_a_tree_converges_at_the_second_iteration():
    # the up-then-down sweep is the exact two-pass algorithm: iteration 2 only confirms it
    h = paper_forest()
    theta, lik = random_problem(h, 2, n_objects=50, exotic=0.0)
    mlpr, report = loopy_belief_propagation(LabelNetwork(h, theta), lik)
    assert np.all(report.n_iter == 2)
    np.testing.assert_allclose(mlpr, mlpr_from_likelihoods(LabelNetwork(h, theta), lik, engine="tree"), atol=ATOL)


@pytest.mark.parametrize("enumerate_up_to", [0, 10])
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(h=hierarchies(max_classes=11, kind="dag"), seed=st.integers(0, 2**32 - 1))
def test_nbh_on_larger_dags_is_inference_with_restricted_evidence(monkeypatch, enumerate_up_to, h, seed):
    # both exact routes of the reduced neighbourhood networks: enumeration and junction tree
    import hmcpgm.inference._nbh

    monkeypatch.setattr(hmcpgm.inference._nbh, "_NBH_ENUMERATE", enumerate_up_to)
    theta, lik = random_problem(h, seed, n_objects=4)
    assert_same(answer(h, theta, lik, version="nbh", engine="junction"), restricted_nbh_reference(h, theta, lik))


@st.composite
def hub_dags(draw):
    """DAGs with a class (the hub) of 4-6 parents and 6-8 children, so that its reduced neighbourhood
    network (all of them) has more than ``_NBH_ENUMERATE`` nodes and takes the junction-tree route: a
    parent may have an earlier parent as its own parent, a child the hub and one of its parents or an
    earlier child; columns shuffled."""
    n_par, n_kid = draw(st.integers(4, 6)), draw(st.integers(6, 8))
    parents = [[draw(st.integers(0, j - 1))] if j and draw(st.booleans()) else [] for j in range(n_par)]
    hub = n_par
    parents.append(list(range(n_par)))
    for c in range(n_kid):
        extra = draw(st.sampled_from(["none", "parent", "child"]))
        second = {"none": [], "parent": [draw(st.integers(0, n_par - 1))],
                  "child": [hub + 1 + draw(st.integers(0, c - 1))] if c else []}[extra]
        parents.append(sorted([hub, *second]))
    return from_parent_lists(parents, draw(st.permutations(range(len(parents)))))


def largest_reduced_network(h):
    """The size of the largest reduced neighbourhood network nbh solves on ``h`` (by enumeration or
    junction tree)."""
    from hmcpgm.inference._nbh import _nbh_local, _reduced_shapes

    zero = np.zeros((h.n_classes, 1))
    _, local = _nbh_local(h, np.full(h.n_classes, 0.5), zero, zero)
    rest = tuple(int(k) for k in np.flatnonzero(~local))
    return max(shape.sub.n_classes for shape in _reduced_shapes(h, rest).shapes) if rest else 0


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hub_dags(), st.integers(0, 2**32 - 1))
def test_nbh_through_the_junction_tree_is_inference_with_restricted_evidence(h, seed):
    # without patching _NBH_ENUMERATE: the hub's reduced network goes to the compiled junction tree
    from hmcpgm.inference._nbh import _NBH_ENUMERATE

    assert largest_reduced_network(h) > _NBH_ENUMERATE
    theta, lik = random_problem(h, seed, n_objects=4)
    assert_same(answer(h, theta, lik, version="nbh", engine="junction"), restricted_nbh_reference(h, theta, lik))


@SETTINGS
@given(hierarchies(kind="dag", max_classes=11), st.integers(0, 2**32 - 1))
def test_grouped_solvers_of_reduced_networks_equal_enumeration(h, seed):
    # both solvers of nbh's reduced networks, G networks of one shape at once, each network with its
    # own theta and its own evidence rows, against the enumerate engine object by object; an object
    # whose evidence is impossible (hard evidence, theta of 0 or 1) is NaN
    from hmcpgm.inference._common import log_likelihood_pairs
    from hmcpgm.inference._junction import junction_grouped
    from hmcpgm.inference._nbh import _enumerate_grouped

    rng = np.random.default_rng(seed)
    n, g, m = h.n_classes, 3, 5
    theta = np.stack([random_problem(h, seed + j)[0] for j in range(g)], axis=1)  # (n, G)
    lik = random_problem(Hierarchy.from_parents([None] * (2 * n)), seed, n_objects=m, exotic=0.15)[1]
    index = rng.integers(0, 2 * n, size=(n, g))
    observed = rng.uniform(size=(n, g)) < 0.7
    rows = rng.integers(0, n, size=g)
    l0, l1 = log_likelihood_pairs(lik)
    by_junction = junction_grouped(h, theta, l0, l1, index, observed, rows)
    by_enumeration = _enumerate_grouped(h, theta, l0, l1, index, observed, rows)
    for j in range(g):
        restricted = np.where(observed[None, :, j, None], lik[:, index[:, j]], 1.0)
        for t in range(m):
            ref = answer(h, theta[:, j], restricted[t:t + 1], engine="enumerate")
            if isinstance(ref, str):
                assert np.isnan(by_junction[j, t]) and np.isnan(by_enumeration[j, t])
            else:
                np.testing.assert_allclose(by_junction[j, t], ref[0, rows[j]], rtol=0, atol=ATOL)
                np.testing.assert_allclose(by_enumeration[j, t], ref[0, rows[j]], rtol=0, atol=ATOL)


def hub_with_lone_children():
    """5 root parents c0-c4 of a hub c5 with 7 children c6-c12 (c6 also a child of c0), columns in
    reverse topological order: the hub's reduced network (13 nodes) takes the junction-tree route."""
    parents = [[], [], [], [], [], [0, 1, 2, 3, 4], [0, 5]] + [[5]] * 6
    h = from_parent_lists(parents, order=range(len(parents) - 1, -1, -1))
    return h, h.indices([f"c{j}" for j in range(len(parents))])


def test_nbh_refuses_evidence_only_the_hubs_junction_tree_sees_as_impossible():
    from hmcpgm.inference._nbh import _NBH_ENUMERATE

    h, col = hub_with_lone_children()
    assert largest_reduced_network(h) > _NBH_ENUMERATE
    lik = np.ones((4, h.n_classes, 2))
    lik[2, col[1], 1] = 0.0  # c1 negative, and c9 (a lone child of the hub) positive: only
    lik[2, col[9], 0] = 0.0  # the hub's neighbourhood holds both
    net = LabelNetwork(h, np.full(h.n_classes, 0.5))
    assert np.all(np.isfinite(mlpr_from_likelihoods(net, lik[[0, 1, 3]], version="nbh", engine="junction")))
    with pytest.raises(InferenceError, match=r"1 object\(s\) \(first: object 2\) have probability zero"):
        mlpr_from_likelihoods(net, lik, version="nbh", engine="junction")
    assert answer(h, net.theta, lik, version="nbh", engine="enumerate") == "impossible"


def test_nbh_with_a_theta_of_zero_above_the_hub():
    # theta(c3) = 0 rules out the hub and its children: hard evidence for a child of the hub is
    # impossible; soft evidence gives them posterior 0 and leaves the rest equal to enumeration
    h, col = hub_with_lone_children()
    theta = np.linspace(0.3, 0.8, h.n_classes)
    theta[col[3]] = 0.0
    lik = np.random.default_rng(3).uniform(0.1, 1.0, size=(3, h.n_classes, 2))
    out = answer(h, theta, lik, version="nbh", engine="junction")
    assert_same(out, restricted_nbh_reference(h, theta, lik))
    assert np.all(out[:, col[5:]] == 0.0)
    lik[1, col[10], 0] = 0.0
    with pytest.raises(InferenceError, match=r"first: object 1"):
        mlpr_from_likelihoods(LabelNetwork(h, theta), lik, version="nbh", engine="junction")


# ---------------------------------------------------------------- the Gene Ontology hierarchy
GO_FILE = HMC_DATA / "cellcycle_GO.train.arff"


@pytest.fixture(scope="module")
def go_problem():
    """A 219-class sub-DAG of cellcycle_GO (40 random classes and their ancestors), with
    likelihood ratios exp(N(1.5 (2Y - 1), 1)) for the first 200 training objects' labels."""
    if not GO_FILE.exists():
        pytest.skip(f"the benchmark data {GO_FILE} is not present")
    from hmcpgm.datasets import load_hmc_arff

    data = load_hmc_arff(GO_FILE)
    h = data.hierarchy
    rng = np.random.default_rng(1)
    sub = h.subgraph([h.classes[i] for i in rng.choice(h.n_classes, 40, replace=False)])
    labels = data.labels[:, h.indices(sub.classes)]
    theta = LabelNetwork.from_labels(labels, sub).theta
    y = labels[:200].astype(float)
    ratio = np.exp(rng.normal(1.5 * (2 * y - 1), 1.0))
    return sub, theta, np.stack([np.ones_like(ratio), ratio], axis=2)


# Measured on this case (200 objects x 219 classes, default settings): every object
# converged within 15 iterations; |loopy - junction| max 0.264, mean 6.7e-4, 99.9%
# quantile 0.078. Five other random 40-class GO sub-DAGs (seeds 0, 2-5) gave max
# 0.11-0.27, mean 4.4e-4 to 5.6e-4, 99.9% quantile 0.052-0.065. Bounds with margin:
GO_LOOPY_MAX_ERROR = 0.4
GO_LOOPY_MEAN_ERROR = 1.5e-3
GO_LOOPY_Q999_ERROR = 0.15


def test_loopy_on_a_gene_ontology_subdag_is_close_to_the_junction_tree(go_problem):
    h, theta, lik = go_problem
    assert h.kind == "dag" and h.n_classes == 219
    exact = mlpr_from_likelihoods(LabelNetwork(h, theta), lik, engine="junction")
    approx, report = loopy_belief_propagation(LabelNetwork(h, theta), lik)
    assert report.converged.mean() >= 0.99
    err = np.abs(approx - exact)
    assert err.max() < GO_LOOPY_MAX_ERROR
    assert err.mean() < GO_LOOPY_MEAN_ERROR
    assert np.quantile(err, 0.999) < GO_LOOPY_Q999_ERROR


def test_nbh_on_a_gene_ontology_subdag_is_inference_with_restricted_evidence(go_problem):
    h, theta, lik = go_problem
    lik = lik[:10]
    out = mlpr_from_likelihoods(LabelNetwork(h, theta), lik, version="nbh")
    multi = [k for k in range(h.n_classes) if len(h.parent_indices[k]) > 1 or any(
        len(h.parent_indices[c]) > 1 for c in h.child_indices[k])]
    for k in multi[::4] + [0]:
        keep = np.zeros(h.n_classes, bool)
        keep[[k, *h.parent_indices[k], *h.child_indices[k]]] = True
        restricted = np.where(keep[None, :, None], lik, 1.0)
        ref = mlpr_from_likelihoods(LabelNetwork(h, theta), restricted, engine="junction")[:, k]
        np.testing.assert_allclose(out[:, k], ref, atol=ATOL)


@pytest.mark.parametrize("bad", [np.nan, -1.0, np.inf, "pair"])
def test_the_compiled_likelihood_check_reports_what_the_numpy_check_reports(bad, monkeypatch):
    import hmcpgm._validation as validation

    h = paper_forest()
    lik = np.random.default_rng(0).uniform(0.1, 2.0, (50, h.n_classes, 2))
    if bad == "pair":
        lik[31, 4] = 0.0
        lik[40, 2] = 0.0
    else:
        lik[40, 2, 0] = bad  # the later one must not be reported
        lik[31, 4, 1] = bad
        lik[45, 0] = 0.0     # a zero pair after them: the bad values come first
    messages = []
    for threshold in (10**9, 1):  # numpy, then the compiled pass
        monkeypatch.setattr(validation, "_COMPILED_CHECK", threshold)
        with pytest.raises(InputError) as err:
            mlpr_from_likelihoods(LabelNetwork(h, np.full(25, 0.5)), lik, engine="tree")
        messages.append(str(err.value))
    assert messages[0] == messages[1]
    assert "object 31" in messages[0]


def test_the_tree_engine_and_horns_rule_do_not_depend_on_the_number_of_threads():
    import numba

    from hmcpgm import hier_rank

    h = paper_forest()
    rng = np.random.default_rng(3)
    lik = rng.uniform(0.01, 2.0, (1000, h.n_classes, 2))
    net = LabelNetwork(h, rng.uniform(0.1, 0.9, h.n_classes))
    out, ranks = [], []
    before = numba.get_num_threads()
    try:
        for threads in (1, before):
            numba.set_num_threads(threads)
            out.append(mlpr_from_likelihoods(net, lik, engine="tree"))
            ranks.append(hier_rank(np.round(out[-1], 2), h).order)  # rounding: ties across objects
    finally:
        numba.set_num_threads(before)
    np.testing.assert_array_equal(out[0], out[1])
    np.testing.assert_array_equal(ranks[0], ranks[1])
