"""compare_engines: the errors it reports are the true errors, against references computed here.

On small DAGs (shuffled column order) the reference is a brute-force sum written in
this file; on a Gene Ontology sub-DAG it is pyAgrum (skipped when pyAgrum or the data
are missing). The one exactness table agrees with the plan and engine_in_use.
"""

import itertools
import warnings

import numpy as np
import pytest
from hmc_data import HMC_DATA
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import dags

from hmcpgm import ConvergenceWarning, Hierarchy, InputError, LabelNetwork, compare_engines, inference_plan
from hmcpgm.inference import EXACTNESS, engine_in_use, loopy_belief_propagation

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
GO_FILE = HMC_DATA / "cellcycle_GO.train.arff"


def brute_force(hierarchy, theta, lik):
    """P(Y_k = 1 | evidence) by summing the joint over all 2^K labellings (written for the test)."""
    k = hierarchy.n_classes
    parents = [list(p) for p in hierarchy.parent_indices]
    out = np.zeros((len(lik), k))
    for i in range(len(lik)):
        total = 0.0
        pos = np.zeros(k)
        for y in itertools.product((0, 1), repeat=k):
            w = 1.0
            for j in range(k):
                on = all(y[p] for p in parents[j])
                p1 = theta[j] if on else 0.0
                w *= (p1 if y[j] else 1.0 - p1) * lik[i, j, y[j]]
            total += w
            pos += w * np.array(y)
        out[i] = pos / total
    return out


def problem(h, seed, m=5):
    rng = np.random.default_rng(seed)
    theta = rng.uniform(0.1, 0.9, size=h.n_classes)
    lik = rng.uniform(0.05, 3.0, size=(m, h.n_classes, 2))
    return LabelNetwork(h, theta), lik


@SETTINGS
@given(h=dags(max_classes=7), seed=st.integers(0, 2**32 - 1))
def test_reported_errors_are_the_true_errors_against_enumeration(h, seed):
    net, lik = problem(h, seed)
    truth = brute_force(h, net.theta, lik)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        report, mlprs = compare_engines(net, lik, engines=["loopy", "junction", "sparse"], reference="enumerate",
                                        return_mlpr=True, memory=False)
        loopy, _ = loopy_belief_propagation(net, lik)
    np.testing.assert_allclose(mlprs["reference"], truth, atol=1e-12, rtol=0)
    rows = report.set_index("engine")
    assert list(report["engine"]) == ["enumerate", "loopy", "junction", "sparse"]
    assert rows.loc["enumerate", "reference"] and report.attrs["reference"] == "enumerate"
    for name, got in (("loopy", loopy), ("junction", mlprs["junction"]), ("sparse", mlprs["sparse"])):
        err = np.abs(got - truth)
        # against the test's own brute force: the reference equals it to 1e-12, so do the errors
        assert rows.loc[name, "max_abs_error"] == pytest.approx(err.max(), abs=1e-12)
        assert rows.loc[name, "mean_abs_error"] == pytest.approx(err.mean(), abs=1e-12)
        obj, cls = rows.loc[name, "worst_object"], h.classes.index(rows.loc[name, "worst_class"])
        assert err[obj, cls] == pytest.approx(err.max(), abs=1e-12)
    np.testing.assert_array_equal(mlprs["loopy"], loopy)  # the same run as the public loopy entry point
    assert rows.loc["loopy", "exact"] == engine_in_use(h, engine="loopy")[1]
    assert rows.loc["loopy", "loopy_iterations_max"] >= rows.loc["loopy", "loopy_iterations_mean"] >= 1


def test_a_wrong_engine_shows_its_error():
    """A loop the loopy fixed point gets wrong: the error is reported, not hidden, at the right event."""
    h = Hierarchy.from_parents([None, 0, 0, [1, 2], [1, 2], [3, 4]])
    net = LabelNetwork(h, [0.9, 0.9, 0.9, 0.9, 0.9, 0.9])
    lik = np.array([[[1.0, 1.0]] * 5 + [[1.0, 50.0]]])
    truth = brute_force(h, net.theta, lik)
    loopy, _ = loopy_belief_propagation(net, lik)
    err = np.abs(loopy - truth)
    assert err.max() > 1e-3  # loopy BP is approximate here
    report = compare_engines(net, lik, engines=["loopy"], memory=False).set_index("engine")
    assert report.loc["loopy", "max_abs_error"] == pytest.approx(err.max(), abs=1e-12)
    assert report.loc["loopy", "worst_class"] == h.classes[int(np.argmax(err[0]))]
    assert not report.loc["loopy", "exact"]


def test_no_exact_engine_fits_gives_nan_errors_and_the_plans_reason():
    h = Hierarchy.from_parents([None, 0, 0, [1, 2]])
    net, lik = problem(h, 0)
    report = compare_engines(net, lik, engines=["loopy"], budget_bytes=1, memory=False)
    assert report.attrs["reference"] is None
    assert "no exact engine fits budget_bytes=1" in report.attrs["reference_reason"]
    assert "junction" in report.attrs["reference_reason"] and "sparse" in report.attrs["reference_reason"]
    assert list(report["engine"]) == ["loopy"]
    assert np.isnan(report.loc[0, "max_abs_error"]) and "no reference" in report.loc[0, "note"]
    assert report.loc[0, "seconds"] >= 0


def test_refusals_are_rows_and_bad_arguments_are_errors():
    h = Hierarchy.from_parents([None, 0, 0, [1, 2]])
    net, lik = problem(h, 1)
    report = compare_engines(net, lik, engines=["tree", "loopy"], memory=True).set_index("engine")
    assert report.loc["tree", "note"].startswith("refused: engine='tree' needs a tree or forest")
    assert report["exact"].isna().tolist() == [False, True, False]  # a refusal is no answer: not "exact"
    assert report.loc["sparse", "exact"] and not report.loc["loopy", "exact"]
    assert report.loc["loopy", "peak_memory"] > 0 and "tracemalloc" in report.attrs["memory_method"]
    with pytest.raises(InputError, match="unknown engine 'lopy'"):
        compare_engines(net, lik, engines=["lopy"])
    with pytest.raises(InputError, match="reference='loopy' is not exact"):
        compare_engines(net, lik, reference="loopy")
    labelled = compare_engines(net, lik, engines=[("loopy", {"damping": 0.5})], memory=False)
    assert list(labelled["engine"]) == ["sparse", "loopy(damping=0.5)"]


def test_every_engines_options_are_checked_before_any_engine_runs(monkeypatch):
    """audit48: a bad option of the last engine was found after the reference and every engine before it had run
    (minutes of inference on the Gene Ontology), in words that did not say which entry; return_report, which
    compare_engines sets itself, raised a raw TypeError."""
    from hmcpgm.inference import _compare

    h = Hierarchy.from_parents([None, 0, 0, [1, 2]])
    net, lik = problem(h, 2)
    monkeypatch.setattr(_compare, "_run", lambda *a, **k: pytest.fail("an engine ran before the options were checked"))
    for entry, message in [(("loopy", {"tol": -1}), r"engines: loopy\(tol=-1\): tol must be a positive finite"),
                           (("loopy", {"start": "bogus"}), r"engines: loopy\(start='bogus'\): start must be one of"),
                           (("loopy", {"dampin": 0.5}), r"engine='loopy' takes the options .* unknown option\(s\) "
                                                        r"\['dampin'\]"),
                           (("junction", {"max_clique": 0}), r"max_clique must be a positive int, got 0"),
                           (("loopy", {"return_report": True}), r"return_report is compare_engines' own")]:
        with pytest.raises(InputError, match=message) as info:
            compare_engines(net, lik, engines=["enumerate", entry], memory=False)
        assert "\n" not in str(info.value)
    # the reference's own options are named as its (audit51: they were reported as an entry of engines)
    with pytest.raises(InputError, match=r"^reference: junction\(max_clique=0\): max_clique must be"):
        compare_engines(net, lik, engines=["enumerate"], reference=("junction", {"max_clique": 0}), memory=False)


def test_an_engines_nan_is_located_where_it_is():
    """The worst event of an engine that answers NaN somewhere is that NaN (max_abs_error is NaN), not the
    largest of its finite errors."""
    from hmcpgm.inference import Engine, register_engine, unregister_engine
    from hmcpgm.inference._enumerate import enumerate_full

    def run(hierarchy, theta, l0, l1, options):
        out = enumerate_full(hierarchy, theta, l0, l1).copy()  # (K, M)
        if out.shape[1] > 4:
            out[1, 2] += 0.3  # the largest finite error
            out[3, 4] = np.nan
        return out, None

    register_engine(Engine("nan_engine", "a test engine", run=run, exact_on=lambda h: False, exactness="never"))
    try:
        h = Hierarchy.from_parents([None, 0, 0, [1, 2]])
        net, _ = problem(h, 3)
        lik = np.random.default_rng(0).uniform(0.2, 3.0, size=(6, 4, 2))
        row = compare_engines(net, lik, engines=["nan_engine"], memory=False).set_index("engine").loc["nan_engine"]
    finally:
        unregister_engine("nan_engine")
    assert np.isnan(row["max_abs_error"]) and np.isnan(row["mean_abs_error"])
    assert (row["worst_class"], row["worst_object"]) == (h.classes[3], 4)


def test_the_exactness_table_is_what_the_plan_and_engine_in_use_say():
    # a diamond (one undirected loop), a polytree (two roots, one child), a chain
    cases = [([None, 0, 0, [1, 2]], False), ([None, None, [0, 1]], True), ([None, 0, 1], True)]
    for parents, loopy_exact in cases:
        h = Hierarchy.from_parents(parents)
        for est in inference_plan(h).estimates:
            assert est.exact == engine_in_use(h, engine=est.engine)[1]
        assert engine_in_use(h, engine="loopy")[1] == loopy_exact
        assert engine_in_use(h, engine="sparse")[1]
    assert set(EXACTNESS) >= {"tree", "junction", "sparse", "loopy", "enumerate", "pgmpy", "pyagrum"}


@pytest.fixture(scope="module")
def go_subdag():
    if not GO_FILE.exists():
        pytest.skip(f"the benchmark data {GO_FILE} is not present")
    from hmcpgm.datasets import load_hmc_arff

    data = load_hmc_arff(GO_FILE)
    h = data.hierarchy
    # an ancestors-closed set of 30-40 classes around multi-parent classes
    rng = np.random.default_rng(5)
    multi = [c for c, p in zip(h.classes, h.parent_indices) if len(p) > 1]
    chosen = []
    for c in rng.permutation(multi):
        sub = h.subgraph([*chosen, c])
        if sub.n_classes <= 40:
            chosen.append(c)
        if sub.n_classes >= 30:
            break
    sub = h.subgraph(chosen)
    assert 20 <= sub.n_classes <= 40 and sub.kind == "dag"
    labels = data.labels[:, h.indices(sub.classes)]
    theta = LabelNetwork.from_labels(labels, sub).theta
    y = labels[:12].astype(float)
    ratio = np.exp(np.random.default_rng(0).normal(1.5 * (2 * y - 1), 1.0))
    return LabelNetwork(sub, theta), np.stack([np.ones_like(ratio), ratio], axis=2)


def test_errors_against_pyagrum_on_a_gene_ontology_subdag(go_subdag):
    pytest.importorskip("pyagrum")
    net, lik = go_subdag
    report, mlprs = compare_engines(net, lik, engines=["sparse", "junction", "loopy"], reference="pyagrum",
                                    return_mlpr=True, memory=False)
    rows = report.set_index("engine")
    assert report.attrs["reference"] == "pyagrum", report.attrs["reference_reason"]
    ref = mlprs["reference"]
    assert rows.loc["sparse", "max_abs_error"] < 1e-9 and rows.loc["junction", "max_abs_error"] < 1e-9
    loopy, _ = loopy_belief_propagation(net, lik)
    assert rows.loc["loopy", "max_abs_error"] == pytest.approx(np.abs(loopy - ref).max(), abs=1e-12)
    assert rows.loc["loopy", "mean_abs_error"] == pytest.approx(np.abs(loopy - ref).mean(), abs=1e-12)
    # pyAgrum as an engine is refused, not run, when its dense tables exceed the budget
    small = compare_engines(net, lik[:2], engines=["pyagrum"], budget_bytes=10**4, memory=False).set_index("engine")
    assert small.loc["pyagrum", "note"].startswith("refused: engine 'pyagrum' does not fit")


def test_the_limits_reach_the_engines_that_run_and_a_named_reference():
    # 'k' has three parents: min-fill gives a clique of 4 classes
    h = Hierarchy.from_edges([("r", "a"), ("r", "b"), ("r", "c"), ("a", "k"), ("b", "k"), ("c", "k")])
    net, lik = problem(h, 2)
    truth = brute_force(h, net.theta, lik)
    # the junction tree ran at its default max_clique=20 whatever the caller's limit
    small = compare_engines(net, lik, engines=["junction", "loopy"], max_clique=3, memory=False)
    rows = small.set_index("engine")
    assert rows.loc["junction", "note"].startswith("refused: engine='junction' needs a clique of 4")
    assert "max_clique=3" in rows.loc["junction", "note"]
    # the reference named too
    named = compare_engines(net, lik, engines=["loopy"], reference="junction", max_clique=3, memory=False)
    assert named.attrs["reference"] is None and "max_clique=3" in named.attrs["reference_reason"]
    # and the sparse engine runs within budget_bytes (it ran within 4 GiB)
    tight = compare_engines(net, lik, engines=["sparse", "loopy"], reference="enumerate", budget_bytes=1,
                            memory=False).set_index("engine")
    assert tight.loc["sparse", "note"].startswith("refused:") and "budget" in tight.loc["sparse", "note"]
    # a limit that fits lets it run, and an engine's own option wins over the caller's limit
    report, mlprs = compare_engines(net, lik, engines=[("junction", {"max_clique": 4})], reference="enumerate",
                                    max_clique=3, memory=False, return_mlpr=True)
    np.testing.assert_allclose(mlprs["junction(max_clique=4)"], truth, atol=1e-12, rtol=0)
    np.testing.assert_allclose(mlprs["reference"], truth, atol=1e-12, rtol=0)


@pytest.mark.parametrize("option, value", [("depth_bin", 2.9), ("depth_bin", "2"), ("depth_bin", True),
                                           ("depth_bin", 0), ("max_parents", 1.5), ("max_parents", "1")])
def test_errors_by_class_structure_refuses_what_is_no_positive_int(option, value):
    """audit48: depth_bin=2.9 was used as 2, max_parents=1.5 as 1, and "2" was taken."""
    from hmcpgm.inference import errors_by_class_structure

    h = Hierarchy.from_parents([None, 0, 0, [1, 2]])
    with pytest.raises(InputError, match=rf"^{option} must be a positive int"):
        errors_by_class_structure(h, np.zeros((1, 4)), np.zeros((1, 4)), **{option: value})
    table = errors_by_class_structure(h, np.zeros((1, 4)), np.ones((1, 4)), **{option: np.int64(2)})
    assert table["max_abs_error"].max() == 1
