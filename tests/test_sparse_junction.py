"""The sparse (determinism-aware) junction tree, the inference plan and the auto policy.

The sparse engine is held against brute-force enumeration, the dense junction tree and
pgmpy to 1e-9, on random DAGs in shuffled column order and on Gene Ontology sub-DAGs.
"""

import warnings

import numpy as np
import pytest
from hmc_data import HMC_DATA
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import dags, hierarchies, polytrees

from hmcpgm import (
    ApproximationWarning,
    Hierarchy,
    InferenceError,
    InputError,
    LabelNetwork,
    TooLargeError,
    inference_plan,
    mlpr_from_likelihoods,
)
from hmcpgm.inference import choose_engine

ATOL = 1e-9
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# the shared data folder sits beside the repository; HMCPGM_HMC_DATA overrides it
GO_FILE = HMC_DATA / "cellcycle_GO.train.arff"


def random_problem(hierarchy, seed, n_objects=6, exotic=0.1):
    """theta (some 0 and 1) and likelihoods with some zeros, 1e-300 and 1e300 entries."""
    rng = np.random.default_rng(seed)
    k = hierarchy.n_classes
    theta = rng.uniform(0.02, 0.98, size=k)
    odd = rng.uniform(size=k) < 0.05
    theta[odd] = rng.choice([0.0, 1.0], size=odd.sum())
    lik = rng.uniform(0.01, 1.0, size=(n_objects, k, 2))
    mask = rng.uniform(size=lik.shape) < exotic
    lik[mask] = rng.choice([0.0, 1e-300, 1e300], size=mask.sum())
    lik[(lik[..., 0] == 0) & (lik[..., 1] == 0)] = 1.0
    return theta, lik


def outcome(hierarchy, theta, lik, **kw):
    """The mLPRs, or the error message for impossible evidence."""
    try:
        return mlpr_from_likelihoods(LabelNetwork(hierarchy, theta), lik, **kw)
    except InferenceError as err:
        assert "probability zero" in str(err)
        return "impossible"


def assert_same(a, b):
    if isinstance(a, str) or isinstance(b, str):
        assert a == b
    else:
        np.testing.assert_allclose(a, b, atol=ATOL, rtol=0)


@SETTINGS
@given(h=dags(max_classes=9), seed=st.integers(0, 2**32 - 1), exotic=st.sampled_from([0.0, 0.1, 0.3]))
def test_sparse_equals_enumeration_and_dense_junction(h, seed, exotic):
    theta, lik = random_problem(h, seed, exotic=exotic)
    got = outcome(h, theta, lik, engine="sparse")
    assert_same(got, outcome(h, theta, lik, engine="enumerate"))
    assert_same(got, outcome(h, theta, lik, engine="junction"))


@SETTINGS
@given(h=hierarchies(kind="forest", max_classes=9), seed=st.integers(0, 2**32 - 1))
def test_sparse_equals_the_tree_engine_on_forests(h, seed):
    theta, lik = random_problem(h, seed)
    assert_same(outcome(h, theta, lik, engine="sparse"), outcome(h, theta, lik, engine="tree"))


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_sparse_equals_pgmpy(seed):
    rng = np.random.default_rng(seed)
    h = Hierarchy.from_edges(
        [("a", "c"), ("b", "c"), ("a", "d"), ("c", "e"), ("d", "e"), ("b", "f"), ("e", "f")],
        classes=["f", "c", "a", "e", "b", "d"],
    )
    theta = rng.uniform(0.2, 0.9, size=6)
    lik = rng.uniform(0.05, 1.0, size=(3, 6, 2))
    np.testing.assert_allclose(
        mlpr_from_likelihoods(LabelNetwork(h, theta), lik, engine="sparse"),
        mlpr_from_likelihoods(LabelNetwork(h, theta), lik, engine="pgmpy"), atol=ATOL, rtol=0,
    )


def test_hard_and_impossible_evidence():
    h = Hierarchy.from_parents([None, None, [0, 1], [2]])
    theta = [0.6, 0.5, 0.7, 0.4]
    lik = np.ones((2, 4, 2))
    lik[0, 3] = [0.0, 1.0]  # class 3 surely positive: so are its ancestors
    lik[1, 1] = [1.0, 0.0]  # class 1 surely negative: so are its descendants
    out = mlpr_from_likelihoods(LabelNetwork(h, theta), lik, engine="sparse")
    np.testing.assert_allclose(out[0], 1.0, atol=ATOL)
    np.testing.assert_allclose(out[1, 1:], 0.0, atol=ATOL)
    np.testing.assert_allclose(out, mlpr_from_likelihoods(LabelNetwork(h, theta), lik, engine="enumerate"), atol=ATOL)
    lik[1, 3] = [0.0, 1.0]  # object 1: class 3 positive with its ancestor 1 negative
    with pytest.raises(InferenceError, match=r"1 object\(s\) \(first: object 1\) have probability zero"):
        mlpr_from_likelihoods(LabelNetwork(h, theta), lik, engine="sparse")


def test_extreme_evidence_takes_the_log_path_and_stays_exact():
    from hmcpgm.inference._common import log_likelihood_pairs
    from hmcpgm.inference._sparse_junction import sparse_junction_full

    rng = np.random.default_rng(3)
    h = Hierarchy.from_parents([None, None, [0, 1], [0, 2], [1, 2], [3, 4], [2, 5]])
    theta = rng.uniform(0.1, 0.9, size=7)
    lik = np.exp(rng.normal(0.0, 300.0, size=(40, 7, 2)).clip(-700, 700))
    stats = {}
    l0, l1 = log_likelihood_pairs(lik)
    got = sparse_junction_full(h, theta, l0, l1, stats=stats).T
    assert stats["log_passes"] > 0
    np.testing.assert_allclose(got, mlpr_from_likelihoods(LabelNetwork(h, theta), lik, engine="enumerate"), atol=ATOL)


def test_batches_and_threads_do_not_change_the_answer():
    rng = np.random.default_rng(4)
    h = Hierarchy.from_parents([None, 0, 0, [1, 2], [1, 2], 3, [3, 4]])
    theta = rng.uniform(0.1, 0.9, size=7)
    lik = rng.uniform(0.01, 1.0, size=(37, 7, 2))
    one = mlpr_from_likelihoods(LabelNetwork(h, theta), lik, engine="sparse", budget_bytes=10**9)
    from hmcpgm.inference._sparse_junction import compile_sparse_junction_tree

    jt = compile_sparse_junction_tree(h)
    small = jt.structure_bytes + 2 * jt.object_bytes  # one object per batch
    batched = mlpr_from_likelihoods(LabelNetwork(h, theta), lik, engine="sparse", budget_bytes=small)
    np.testing.assert_allclose(batched, one, atol=1e-12)
    with pytest.raises(TooLargeError, match="budget_bytes"):
        mlpr_from_likelihoods(LabelNetwork(h, theta), lik, engine="sparse", budget_bytes=jt.structure_bytes)


@pytest.mark.parametrize("seed", [5, 6])
def test_reused_working_arrays_and_mixed_batches_stay_exact_to_1e_12(seed):
    """Many batches per thread (working arrays reused), hard and extreme evidence mixed in: every
    object's answer equals brute-force enumeration and the answer computed alone to 1e-12."""
    from hmcpgm.inference._sparse_junction import compile_sparse_junction_tree

    rng = np.random.default_rng(seed)
    h = Hierarchy.from_edges([("a", "c"), ("b", "c"), ("a", "d"), ("c", "e"), ("d", "e"), ("b", "f"), ("e", "f"),
                              ("d", "g"), ("f", "g")], classes=["g", "f", "c", "a", "e", "b", "d"])
    theta = rng.uniform(0.1, 0.9, size=7)
    lik = rng.uniform(0.05, 1.0, size=(45, 7, 2))
    lik[::7, :, 0] = 1e-300  # tiny likelihoods: products that need the log path
    lik[3::11, 2] = [1.0, 0.0]  # hard evidence on one class
    net = LabelNetwork(h, theta)
    jt = compile_sparse_junction_tree(h)
    budget = jt.structure_bytes + 2 * 5 * jt.object_bytes  # five objects per batch on two threads
    batched = mlpr_from_likelihoods(net, lik, engine="sparse", budget_bytes=budget)
    alone = np.concatenate([mlpr_from_likelihoods(net, lik[i:i + 1], engine="sparse") for i in range(len(lik))])
    np.testing.assert_allclose(batched, alone, atol=1e-12, rtol=0)
    np.testing.assert_allclose(batched, mlpr_from_likelihoods(net, lik, engine="enumerate"), atol=1e-12, rtol=0)


# ---------------------------------------------------------------- plan and auto policy
def wide_dag():
    """A DAG (not a polytree) whose min-fill triangulation needs a clique of 7 classes."""
    return Hierarchy.from_parents([None, None, None, None, None, None, [0, 1, 2, 3, 4, 5], [0, 6]])


def test_plan_reports_every_engine_and_the_dense_refusal_names_the_largest_clique():
    h = wide_dag()
    plan = inference_plan(h, max_clique=4)
    assert [e.engine for e in plan.estimates] == ["tree", "junction", "sparse", "loopy"]
    assert plan["junction"].max_clique_size == 7 and not plan["junction"].applies
    assert plan["sparse"].applies and plan["sparse"].states < plan["junction"].states
    assert plan.engine == "sparse" and plan.exact
    with pytest.raises(TooLargeError, match=r"clique of 7 classes .*max_clique=4"):
        mlpr_from_likelihoods(LabelNetwork(h, [0.5] * 8), np.ones((1, 8, 2)), engine="junction", max_clique=4)
    # raising max_clique to the size named in the error is enough
    mlpr_from_likelihoods(LabelNetwork(h, [0.5] * 8), np.ones((1, 8, 2)), engine="junction", max_clique=7)
    assert "auto runs 'sparse' (exact)" in str(plan)


def test_plan_on_forests_picks_the_tree_engine():
    plan = inference_plan(Hierarchy.from_parents([None, 0, 0, 1]))
    assert plan.engine == "tree" and plan.exact
    assert choose_engine(Hierarchy.from_parents([None, 0, 0, 1])) == ("tree", True)


def test_auto_warns_exactly_when_it_falls_back_to_loopy():
    h = wide_dag()
    rng = np.random.default_rng(5)
    theta = rng.uniform(0.2, 0.9, size=8)
    lik = rng.uniform(0.05, 1.0, size=(4, 8, 2))
    exact = mlpr_from_likelihoods(LabelNetwork(h, theta), lik, engine="enumerate")
    with warnings.catch_warnings():
        warnings.simplefilter("error", ApproximationWarning)
        np.testing.assert_allclose(mlpr_from_likelihoods(LabelNetwork(h, theta), lik), exact, atol=ATOL)
    with pytest.warns(ApproximationWarning, match="approximate"):
        approx = mlpr_from_likelihoods(LabelNetwork(h, theta), lik, budget_bytes=1000)
    loopy = mlpr_from_likelihoods(LabelNetwork(h, theta), lik, engine="loopy", start="forest")
    np.testing.assert_allclose(approx, loopy, atol=1e-12)
    assert choose_engine(h, budget_bytes=1000) == ("loopy", False)
    # a polytree: loopy BP is exact there, so no warning even when nothing else fits
    poly = Hierarchy.from_parents([None, None, [0, 1], 2])
    with warnings.catch_warnings():
        warnings.simplefilter("error", ApproximationWarning)
        mlpr_from_likelihoods(LabelNetwork(poly, [0.5] * 4), np.ones((1, 4, 2)), budget_bytes=100)


def test_dense_junction_refuses_instead_of_running_out_of_memory():
    # 35 parents of one class: a clique of 36 classes, 2^36 entries
    h = Hierarchy.from_parents([None] * 35 + [list(range(35))])
    with pytest.raises(TooLargeError, match="GiB"):
        mlpr_from_likelihoods(LabelNetwork(h, [0.5] * 36), np.ones((1, 36, 2)), engine="junction", max_clique=40)
    plan = inference_plan(h, max_clique=40)
    # 2^35 feasible configurations of the roots too: neither junction tree fits; the
    # hierarchy is a polytree, so loopy BP is exact
    assert not plan["junction"].applies and not plan["sparse"].applies
    assert plan.engine == "loopy" and plan.exact


# ---------------------------------------------------------------- Gene Ontology
@pytest.fixture(scope="module")
def go_data():
    if not GO_FILE.exists():
        pytest.skip(f"the benchmark data {GO_FILE} is not present")
    from hmcpgm.datasets import load_hmc_arff

    return load_hmc_arff(GO_FILE)


def go_subproblem(data, n_seed_classes, seed, n_objects):
    h = data.hierarchy
    rng = np.random.default_rng(seed)
    sub = h.subgraph([h.classes[i] for i in rng.choice(h.n_classes, n_seed_classes, replace=False)])
    labels = data.labels[:, h.indices(sub.classes)]
    theta = LabelNetwork.from_labels(labels, sub).theta
    y = labels[:n_objects].astype(float)
    ratio = np.exp(rng.normal(1.5 * (2 * y - 1), 1.0))
    return sub, theta, np.stack([np.ones_like(ratio), ratio], axis=2)


@pytest.mark.parametrize("seed", [1, 2])
def test_sparse_equals_dense_junction_on_gene_ontology_subdags(go_data, seed):
    h, theta, lik = go_subproblem(go_data, 40, seed, 30)
    assert h.kind == "dag"
    sparse = mlpr_from_likelihoods(LabelNetwork(h, theta), lik, engine="sparse")
    junction = mlpr_from_likelihoods(LabelNetwork(h, theta), lik, engine="junction")
    np.testing.assert_allclose(sparse, junction, atol=ATOL, rtol=0)


@pytest.mark.slow
def test_proposition_1_on_a_wide_gene_ontology_subdag(go_data):
    """A sub-DAG too wide for the dense tree: the exact mLPR of a child never exceeds its parent's."""
    h, theta, lik = go_subproblem(go_data, 800, 0, 8)
    plan = inference_plan(h)
    assert not plan["junction"].applies and plan.engine == "sparse"
    out = mlpr_from_likelihoods(LabelNetwork(h, theta), lik)
    edges = np.asarray(h.edge_indices)
    assert (out[:, edges[:, 1]] <= out[:, edges[:, 0]] + 1e-12).all()


@SETTINGS
@given(h=polytrees(max_classes=9), seed=st.integers(0, 2**32 - 1), exotic=st.sampled_from([0.0, 0.1]))
def test_loopy_from_a_spanning_forest_start_is_exact_on_polytrees(h, seed, exotic):
    theta, lik = random_problem(h, seed, exotic=exotic)
    ref = outcome(h, theta, lik, engine="enumerate")
    got = outcome(h, theta, lik, engine="loopy", start="forest")
    if isinstance(ref, str) or isinstance(got, str):
        assert ref == got
    else:
        np.testing.assert_allclose(got, ref, atol=1e-6)


def test_loopy_start_is_checked():
    h = Hierarchy.from_parents([None, 0])
    with pytest.raises(InputError, match="start must be one of"):
        mlpr_from_likelihoods(LabelNetwork(h, [0.5, 0.5]), np.ones((1, 2, 2)), engine="loopy", start="tree")


def test_sparse_on_searched_triangulations_equals_enumeration(monkeypatch, tmp_path):
    """The randomised restarts of the triangulation search (forced on small DAGs) keep the engine exact."""
    from strategies import from_parent_lists

    from hmcpgm.inference import _plan, _sparse_junction, _triangulation

    def clear():
        for f in (_triangulation.triangulation, _sparse_junction.sparse_size,
                  _sparse_junction.compile_sparse_junction_tree, _plan._plan):
            f.cache_clear()

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setitem(_triangulation._SEARCH, "stop_weight", 2)
    monkeypatch.setitem(_triangulation._SEARCH, "restarts", 4)
    monkeypatch.setitem(_triangulation._SEARCH, "local", 4)
    searched = 0
    try:
        for seed in range(8):
            rng = np.random.default_rng(seed)
            parents = [[]] + [sorted(rng.choice(j, size=rng.integers(1, min(j, 3) + 1), replace=False).tolist())
                              for j in range(1, 11)]
            h = from_parent_lists(parents, order=rng.permutation(11))
            clear()
            theta, lik = random_problem(h, seed)
            got = outcome(h, theta, lik, engine="sparse")
            searched += _sparse_junction.compile_sparse_junction_tree(h).criterion == "weighted"
            assert_same(got, outcome(h, theta, lik, engine="enumerate"))
    finally:
        clear()
    assert searched >= 2  # the searched triangulation was the one kept on some of them
    assert list((tmp_path / "hmcpgm" / "triangulation").iterdir())  # the searched orders were kept
