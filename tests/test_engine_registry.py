"""The engine registry: one table that every place reads, so a new engine is one entry plus its tests.

A toy engine (a brute-force sum over all labellings, written here, declared
*approximate* so that the exactness must come from the registry and not from a
list of names) is registered, run through ``mlpr_from_likelihoods``, the plan,
``engine_in_use``, ``compare_engines`` and the estimator's parameter check, then
unregistered.
"""

import itertools
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import dags

from hmcpgm import (
    MLPR,
    Hierarchy,
    InferenceError,
    InputError,
    LabelNetwork,
    compare_engines,
    inference_plan,
    mlpr_from_likelihoods,
)
from hmcpgm.estimator import check_params
from hmcpgm.inference import (
    ENGINES,
    EXACTNESS,
    Engine,
    EngineEstimate,
    choose_engine,
    engine_in_use,
    engine_names,
    engine_table,
    get_engine,
    register_engine,
    unregister_engine,
)

DIAMOND = Hierarchy.from_parents([None, 0, 0, [1, 2], 3])  # one undirected loop


def brute_force(hierarchy, theta, lik):
    """(M, K) P(Y_k = 1 | evidence) by summing the joint over all 2^K labellings (written for the test)."""
    k = hierarchy.n_classes
    parents = [list(p) for p in hierarchy.parent_indices]
    out = np.zeros((len(lik), k))
    for i in range(len(lik)):
        total, pos = 0.0, np.zeros(k)
        for y in itertools.product((0, 1), repeat=k):
            w = 1.0
            for j in range(k):
                p1 = theta[j] if all(y[p] for p in parents[j]) else 0.0
                w *= (p1 if y[j] else 1.0 - p1) * lik[i, j, y[j]]
            total += w
            pos += w * np.array(y)
        out[i] = pos / total
    return out


def nbh_brute_force(hierarchy, theta, lik):
    """(M, K) nbh mLPRs by definition: evidence only on k, its parents and children (others set to [1, 1])."""
    out = np.empty(lik.shape[:2])
    for k in range(hierarchy.n_classes):
        keep = [k, *hierarchy.parent_indices[k], *hierarchy.child_indices[k]]
        masked = np.ones_like(lik)
        masked[:, keep] = lik[:, keep]
        out[:, k] = brute_force(hierarchy, theta, masked)[:, k]
    return out


def _toy_run(hierarchy, theta, l0, l1, options):
    """The toy engine's runner: (K, M) log likelihoods in, (K, M) posterior out."""
    lik = np.exp(np.stack([l0.T, l1.T], axis=2)) * options.get("scale", 1.0)
    return brute_force(hierarchy, theta, lik).T, None


def _toy_cost(hierarchy, budget, max_clique):
    return EngineEstimate("toy", hierarchy.n_classes <= 8, False, states=2**hierarchy.n_classes,
                          seconds_per_object=1e-12, note="a toy")


TOY = Engine("toy", "brute force written in the test, declared approximate.", run=_toy_run, options={"scale"},
             exact_on=lambda hierarchy: False, exactness="never (a test engine)", nbh="own_on_dags", cost=_toy_cost)


@pytest.fixture
def toy():
    """The toy engine, registered for one test and unregistered after it (even when the test fails)."""
    register_engine(TOY)
    try:
        yield TOY
    finally:
        unregister_engine("toy")
    assert "toy" not in ENGINES


def _evidence(hierarchy, n=6, seed=0):
    rng = np.random.default_rng(seed)
    theta = rng.uniform(0.2, 0.9, hierarchy.n_classes)
    return LabelNetwork(hierarchy, theta), rng.uniform(0.1, 3.0, size=(n, hierarchy.n_classes, 2))


def test_a_registered_engine_runs_every_version_through_mlpr_from_likelihoods(toy):
    network, lik = _evidence(DIAMOND)
    assert "toy" in ENGINES and ENGINES[-1] == "toy"
    full = mlpr_from_likelihoods(network, lik, engine="toy")
    np.testing.assert_allclose(full, brute_force(DIAMOND, network.theta, lik), atol=1e-12)
    nbh = mlpr_from_likelihoods(network, lik, version="nbh", engine="toy")
    np.testing.assert_allclose(nbh, nbh_brute_force(DIAMOND, network.theta, lik), atol=1e-12)
    indpt = mlpr_from_likelihoods(network, lik, version="indpt", engine="toy")
    np.testing.assert_allclose(indpt, mlpr_from_likelihoods(network, lik, version="indpt", engine="enumerate"))
    # its options reach the runner (a constant factor on both likelihoods changes nothing) and others are refused
    np.testing.assert_allclose(mlpr_from_likelihoods(network, lik, engine="toy", scale=7.0), full, atol=1e-12)
    with pytest.raises(InputError, match=r"engine='toy' takes the options \['scale'\]; got unknown option"):
        mlpr_from_likelihoods(network, lik, engine="toy", max_clique=3)


def test_exactness_comes_from_the_registry_not_from_a_list_of_names(toy):
    assert engine_in_use(DIAMOND, "full", "toy") == ("toy", False)
    assert engine_in_use(DIAMOND, "nbh", "toy") == ("toy", False)
    assert EXACTNESS["toy"] == "never (a test engine)"
    assert engine_table().loc["toy", "exact"] == "never (a test engine)"
    plan = inference_plan(DIAMOND)
    assert plan["toy"].exact is False and plan["toy"].note == "a toy"
    assert choose_engine(DIAMOND) == (plan.engine, True) and plan.engine != "toy"  # auto=None: only by name


def test_compare_engines_reports_a_registered_engine_against_the_exact_reference(toy):
    network, lik = _evidence(DIAMOND)
    report = compare_engines(network, lik, engines=["toy", ("toy", {"scale": 2.0}), "loopy"], memory=False)
    rows = report.set_index("engine")
    assert report.attrs["reference"] == "sparse"
    assert not rows.loc["toy", "exact"] and rows.loc["toy", "max_abs_error"] < 1e-12
    assert rows.loc["toy(scale=2.0)", "max_abs_error"] < 1e-12
    # by default compare_engines runs every engine the plan says applies: the toy is among them
    assert "toy" in set(compare_engines(network, lik[:2], memory=False)["engine"])


def test_the_estimator_and_the_command_line_accept_a_registered_engine(toy):
    check_params(MLPR(engine="toy"))  # no error
    from hmcpgm.cli._parser import build_parser

    args = build_parser().parse_args(["predict", "m.npz", "s.csv", "-o", "out.csv", "--engine", "toy"])
    assert args.engine == "toy"


def test_an_engine_that_auto_may_run_changes_the_plan_and_leaves_it_when_unregistered():
    before = inference_plan(DIAMOND)
    cheap = Engine("cheap", "brute force, exact, with a cost below every other engine's.", run=_toy_run,
                   cost=lambda h, b, c: EngineEstimate("cheap", True, True, seconds_per_object=0.0), auto="exact")
    register_engine(cheap)
    try:
        assert inference_plan(DIAMOND).engine == "cheap"  # the plan's cache was cleared
        network, lik = _evidence(DIAMOND)
        np.testing.assert_allclose(mlpr_from_likelihoods(network, lik), brute_force(DIAMOND, network.theta, lik),
                                   atol=1e-12)
    finally:
        unregister_engine("cheap")
    assert inference_plan(DIAMOND) == before


def test_versions_an_engine_does_not_serve_are_refused_in_one_line():
    full_only = Engine("fullonly", "full version only.", run=_toy_run, versions=("full",))
    register_engine(full_only)
    try:
        network, lik = _evidence(DIAMOND, n=2)
        mlpr_from_likelihoods(network, lik, engine="fullonly")
        with pytest.raises(InputError, match=r"engine='fullonly' serves the versions \['full'\]; got version='nbh'"):
            mlpr_from_likelihoods(network, lik, version="nbh", engine="fullonly")
    finally:
        unregister_engine("fullonly")


def test_a_direct_engine_that_leaves_a_version_unanswered_is_refused_in_one_line():
    def full_only(hierarchy, theta, likelihoods, version, options):
        return brute_force(hierarchy, theta, likelihoods) if version == "full" else None

    register_engine(Engine("directonly", "direct, full version only.", direct=full_only))
    try:
        network, lik = _evidence(DIAMOND, n=2)
        np.testing.assert_allclose(mlpr_from_likelihoods(network, lik, engine="directonly"),
                                   brute_force(DIAMOND, network.theta, lik))
        with pytest.raises(InferenceError, match="engine='directonly' gives no answer for version='nbh'"):
            mlpr_from_likelihoods(network, lik, version="nbh", engine="directonly")
    finally:
        unregister_engine("directonly")


def test_the_registry_refuses_bad_entries_in_one_line():
    with pytest.raises(InputError, match="already registered"):
        register_engine(get_engine("loopy"))
    with pytest.raises(InputError, match="built-in engine"):
        unregister_engine("sparse")
    with pytest.raises(InputError, match="no engine named 'nope'"):
        unregister_engine("nope")
    with pytest.raises(InputError, match="other than 'auto'"):
        Engine("auto", "no", run=_toy_run)
    with pytest.raises(InputError, match="needs a run or a direct function"):
        Engine("empty", "no")
    with pytest.raises(InputError, match="only run an engine with a cost model"):
        Engine("nocost", "no", run=_toy_run, auto="exact")
    with pytest.raises(InputError, match="engine must be one of"):
        get_engine("nope")
    with pytest.raises(InputError, match="engine must be one of 'auto', 'tree'"):
        mlpr_from_likelihoods(*_evidence(DIAMOND, n=1), engine="pyagrum")  # a reference only


def test_every_place_lists_the_registry():
    """The names the estimator, the command line and the docs offer are the registry's."""
    import hmcpgm.inference
    from hmcpgm.cli._parser import build_parser

    names = engine_names()
    assert tuple(ENGINES) == ("auto", *names)
    for name in names:
        assert f'``"{name}"``' in hmcpgm.inference.__doc__
    parser = build_parser()
    predict = next(a for a in parser._subparsers._group_actions[0].choices["predict"]._actions
                   if "--engine" in a.option_strings)
    assert tuple(predict.choices) == tuple(ENGINES)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(hierarchy=dags(max_classes=6), seed=st.integers(0, 2**16))
def test_the_toy_engine_agrees_with_the_built_in_exact_engines_on_random_dags(toy, hierarchy, seed):
    network, lik = _evidence(hierarchy, n=3, seed=seed)
    for version in ("full", "nbh", "indpt"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = mlpr_from_likelihoods(network, lik, version=version, engine="enumerate")
        np.testing.assert_allclose(mlpr_from_likelihoods(network, lik, version=version, engine="toy"), expected,
                                   atol=1e-10)
