"""The label network: one CPD rule, its pgmpy form both ways, priors, sampling."""

import itertools
import logging

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import hierarchies

from hmcpgm import (
    Hierarchy,
    InputError,
    LabelError,
    LabelNetwork,
    augmented_network,
    mlpr_from_likelihoods,
)
from hmcpgm.network import quiet_pgmpy


def joint_by_hand(hierarchy, theta, y):
    """P(Y = y) from the model's definition, written out independently of hmcpgm."""
    p = 1.0
    for k in range(hierarchy.n_classes):
        parents_on = all(y[q] for q in hierarchy.parent_indices[k])
        p1 = theta[k] if parents_on else 0.0
        p *= p1 if y[k] else 1.0 - p1
    return p


@settings(max_examples=15, deadline=None)
@given(hierarchies(max_classes=5, max_parents=2), st.integers(0, 2**32 - 1))
def test_pgmpy_joint_equals_the_model_and_respects_the_hierarchy(h, seed):
    from pgmpy.inference import VariableElimination

    theta = np.random.default_rng(seed).uniform(size=h.n_classes)
    net = LabelNetwork(h, theta)
    model = net.to_pgmpy()
    names = list(h.classes)
    assert set(model.nodes) == set(names)
    joint = VariableElimination(model).query(names, joint=True, show_progress=False)
    configs = np.array(list(itertools.product((0, 1), repeat=h.n_classes)), dtype=bool)
    ours = np.exp(net.log_prior(configs))
    for y, p_ours in zip(configs, ours):
        expected = joint_by_hand(h, theta, y)
        assert joint.get_value(**dict(zip(names, y.astype(int)))) == pytest.approx(expected, abs=1e-12)
        assert p_ours == pytest.approx(expected, abs=1e-12)
        if h.violations(y[None].astype(int)):
            assert p_ours == 0.0
    marg = [VariableElimination(model).query([n], show_progress=False).values[1] for n in names]
    np.testing.assert_allclose(marg, net.prior_marginals, atol=1e-12)
    np.testing.assert_allclose(marg, np.exp(net.log_prior(configs)) @ configs, atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(hierarchies(max_classes=6, max_parents=2), st.integers(0, 2**32 - 1), st.booleans())
def test_log_prior_marginals_by_enumeration(h, seed, with_zero):
    # reference: P(Y_k = 1) summed over every configuration with the joint written out by hand
    rng = np.random.default_rng(seed)
    theta = rng.uniform(0.05, 0.95, h.n_classes)
    if with_zero:
        theta[rng.integers(h.n_classes)] = 0.0
    marginal = np.zeros(h.n_classes)
    for y in itertools.product((0, 1), repeat=h.n_classes):
        marginal += joint_by_hand(h, theta, y) * np.array(y)
    with np.errstate(divide="ignore"):
        expected = np.log(marginal)
    got = LabelNetwork(h, theta).log_prior_marginals
    assert np.array_equal(np.isneginf(got), marginal == 0)
    np.testing.assert_allclose(got[marginal > 0], expected[marginal > 0], rtol=1e-12, atol=1e-12)


@settings(max_examples=15, deadline=None)
@given(hierarchies(max_classes=6), st.integers(0, 2**32 - 1))
def test_from_pgmpy_gives_back_the_network(h, seed):
    theta = np.random.default_rng(seed).uniform(size=h.n_classes)
    again = LabelNetwork.from_pgmpy(LabelNetwork(h, theta).to_pgmpy())
    assert again.hierarchy == h
    np.testing.assert_allclose(again.theta, theta, atol=1e-15)


def test_an_edited_pgmpy_network_is_the_one_the_engines_answer_for():
    h = Hierarchy.from_edges([("a", "b"), ("a", "c")])
    model = LabelNetwork(h, [0.5, 0.5, 0.5]).to_pgmpy()
    from pgmpy.factors.discrete import TabularCPD

    model.remove_cpds("b")
    model.add_cpds(TabularCPD("b", 2, [[1.0, 0.1], [0.0, 0.9]], evidence=["a"], evidence_card=[2]))
    net = LabelNetwork.from_pgmpy(model)
    assert net.theta.tolist() == [0.5, 0.9, 0.5]
    lik = np.ones((1, 3, 2))
    np.testing.assert_allclose(mlpr_from_likelihoods(net, lik)[0], [0.5, 0.45, 0.25])


def test_from_pgmpy_refuses_cpds_outside_the_family():
    from pgmpy.factors.discrete import TabularCPD

    h = Hierarchy.from_edges([("a", "b")])
    model = LabelNetwork(h, [0.5, 0.5]).to_pgmpy()
    model.remove_cpds("b")
    model.add_cpds(TabularCPD("b", 2, [[0.9, 0.5], [0.1, 0.5]], evidence=["a"], evidence_card=[2]))
    with pytest.raises(InputError, match=r"CPD of node 'b' is outside the hierarchical family: column 0"):
        LabelNetwork.from_pgmpy(model)
    with pytest.raises(InputError, match="must be a pgmpy DiscreteBayesianNetwork"):
        LabelNetwork.from_pgmpy(h)


@pytest.mark.parametrize(("cpd", "message"), [
    # the parent's states in the order (1, 0): P(b = 1 | a = 1) = 0 is outside the family, and theta was read
    # from the column of a = 0 (0.5)
    ({"values": [[1, 0.5], [0, 0.5]], "evidence_card": [2], "state_names": {"b": [0, 1], "a": [1, 0]}},
     r"CPD of node 'b' reads its parent 'a' with states \[1, 0\]"),
    # a three-state parent: numpy's broadcast error instead of one line
    ({"values": [[1, 1, 0.5], [0, 0, 0.5]], "evidence_card": [3]}, r"CPD of node 'b' reads its parent 'a' with states "
                                                                   r"\[0, 1, 2\]"),
])
def test_from_pgmpy_reads_each_parent_as_a_binary_label(cpd, message):
    from pgmpy.factors.discrete import TabularCPD

    with quiet_pgmpy():
        from pgmpy.models import DiscreteBayesianNetwork

        model = DiscreteBayesianNetwork()
        model.add_nodes_from(["b", "a"])  # the child first
        model.add_edge("a", "b")
        model.add_cpds(TabularCPD("a", 2, [[0.2], [0.8]]), TabularCPD("b", 2, evidence=["a"], **cpd))
    with pytest.raises(InputError, match=message):
        LabelNetwork.from_pgmpy(model)


def test_samples_follow_the_model():
    h = Hierarchy.from_edges([("a", "b"), ("a", "c"), ("b", "d"), ("c", "d"), ("d", "e")])
    net = LabelNetwork(h, [0.7, 0.8, 0.6, 0.9, 0.5])
    y = net.sample(40_000, rng=1)
    assert h.violations(y) == 0
    # the empirical marginals match the prior marginals within 4 standard errors
    se = np.sqrt(net.prior_marginals * (1 - net.prior_marginals) / len(y))
    assert np.all(np.abs(y.mean(axis=0) - net.prior_marginals) < 4 * se + 1e-12)
    # pgmpy's sampler draws from the same network
    samples = net.to_pgmpy().simulate(n_samples=2000, seed=1, show_progress=False)[list(h.classes)]
    assert h.violations(samples.astype(int).to_numpy()) == 0


def test_samples_on_a_dag_match_brute_force():
    # A -> C <- B, C -> D: exact joint by enumeration
    h = Hierarchy.from_parents([None, None, [0, 1], 2])
    theta = np.array([0.7, 0.6, 0.5, 0.4])
    n = 200_000
    y = LabelNetwork(h, theta).sample(n, rng=2)
    assert h.violations(y) == 0
    codes = y @ (1 << np.arange(4))
    counts = np.bincount(codes, minlength=16)
    for code in range(16):
        bits = [(code >> k) & 1 for k in range(4)]
        p = 1.0
        for k in range(4):
            parents_on = all(bits[q] for q in h.parent_indices[k])
            p_on = theta[k] if parents_on else 0.0
            p *= p_on if bits[k] else 1 - p_on
        se = np.sqrt(p * (1 - p) / n) + 1e-12
        assert abs(counts[code] / n - p) < 5 * se + 1e-9, (bits, counts[code] / n, p)


def test_cpd_column_order_last_parent_fastest():
    net = LabelNetwork(Hierarchy.from_edges([("p", "r"), ("q", "r")], classes=["p", "q", "r"]), [0.5, 0.5, 0.25])
    cpd = net.to_pgmpy().get_cpds("r")
    assert cpd.variables == ["r", "p", "q"]
    np.testing.assert_allclose(cpd.values[1], [[0, 0], [0, 0.25]])  # only p = q = 1 allows r = 1
    np.testing.assert_allclose(net.cpd_table("r"), [[1, 1, 1, 0.75], [0, 0, 0, 0.25]])


def test_theta_from_labels_by_hand_tree_and_dag():
    # classes a, b (child of a), c (child of a), d (child of b and c)
    h = Hierarchy.from_edges([("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")])
    y = np.array(
        [
            [1, 1, 1, 1],
            [1, 1, 1, 0],
            [1, 1, 0, 0],
            [1, 0, 0, 0],
            [0, 0, 0, 0],
            [1, 0, 1, 0],
        ]
    )
    # a: 5 of 6 objects; b: 3 of the 5 with a; c: 3 of the 5 with a;
    # d: 1 of the 2 objects with both b and c positive (rows 0 and 1)
    np.testing.assert_allclose(LabelNetwork.from_labels(y, h, pseudo_count=0).theta, [5 / 6, 3 / 5, 3 / 5, 1 / 2])
    np.testing.assert_allclose(
        LabelNetwork.from_labels(y, h, pseudo_count=1).theta, [6 / 8, 4 / 7, 4 / 7, 2 / 4]
    )
    # default pseudo-count 0.5
    np.testing.assert_allclose(LabelNetwork.from_labels(y, h).theta, [5.5 / 7, 3.5 / 6, 3.5 / 6, 1.5 / 3])


def test_theta_from_labels_no_positives_stays_inside_unit_interval():
    h = Hierarchy.from_parents([None, 0])
    y = np.array([[1, 0], [0, 0], [1, 0]])
    theta = LabelNetwork.from_labels(y, h).theta
    assert 0 < theta[1] < 1
    assert theta[1] == pytest.approx(0.5 / 3)
    assert LabelNetwork.from_labels(y, h, pseudo_count=0).theta[1] == 0.0


def test_theta_from_labels_parents_never_positive():
    h = Hierarchy.from_parents([None, 0])
    y = np.array([[0, 0], [0, 0]])
    with pytest.raises(LabelError, match=r"never have all parents positive.*\[1\]"):
        LabelNetwork.from_labels(y, h, pseudo_count=0)
    assert LabelNetwork.from_labels(y, h, pseudo_count=2).theta[1] == 0.5


@pytest.mark.parametrize("bad", [-1, np.nan, "x", True])
def test_theta_from_labels_bad_pseudo_count(bad):
    h = Hierarchy.from_parents([None])
    with pytest.raises(InputError, match="pseudo_count"):
        LabelNetwork.from_labels([[1], [0]], h, pseudo_count=bad)


def test_theta_from_labels_labels_breaking_hierarchy():
    h = Hierarchy.from_parents([None, 0])
    y = [[0, 1], [1, 1]]
    with pytest.raises(LabelError, match="break the hierarchy"):
        LabelNetwork.from_labels(y, h)
    np.testing.assert_allclose(LabelNetwork.from_labels(y, h, pseudo_count=0, close_labels=True).theta, [1, 1])


def test_theta_from_a_shuffled_dataframe_is_aligned_by_name():
    import pandas as pd

    h = Hierarchy.from_edges([("a", "b"), ("a", "c")])
    y = np.array([[1, 1, 0], [1, 0, 0], [0, 0, 0], [1, 1, 1]])
    frame = pd.DataFrame(y, columns=list(h.classes))[["c", "a", "b"]]
    np.testing.assert_array_equal(LabelNetwork.from_labels(frame, h).theta, LabelNetwork.from_labels(y, h).theta)


def test_the_network_is_frozen():
    net = LabelNetwork(Hierarchy.from_parents([None, 0]), [0.5, 0.5])
    with pytest.raises(ValueError):
        net.theta[0] = 0.1
    with pytest.raises(AttributeError):
        net.theta = np.array([0.1, 0.1])


def test_quiet_pgmpy_restores_the_logger():
    logger = logging.getLogger("pgmpy")
    logger.setLevel(logging.INFO)
    with quiet_pgmpy():
        assert logger.level == logging.ERROR
    assert logger.level == logging.INFO
    LabelNetwork(Hierarchy.from_parents([None, 0]), [0.5, 0.5]).to_pgmpy()
    assert logger.level == logging.INFO
    logger.setLevel(logging.NOTSET)


def test_augmented_network_evidence_equals_virtual_evidence():
    from pgmpy.inference import VariableElimination

    h = Hierarchy.from_edges([("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")])
    net = LabelNetwork(h, [0.6, 0.7, 0.5, 0.8])
    rng = np.random.default_rng(2)
    table = rng.uniform(0.1, 1, size=(4, 2, 3))
    table /= table.sum(axis=2, keepdims=True)
    model = augmented_network(net, table)
    bins = [2, 0, 1, 2]
    evidence = {f"S_{c}": b for c, b in zip(h.classes, bins)}
    lik = np.array([[table[k, :, b] for k, b in enumerate(bins)]])
    ours = mlpr_from_likelihoods(net, lik)[0]
    for k, c in enumerate(h.classes):
        q = VariableElimination(model).query([f"Y_{c}"], evidence=evidence, show_progress=False)
        assert q.values[1] == pytest.approx(ours[k], abs=1e-12)


def test_symbolic_augmented_network_has_score_nodes_only_as_structure():
    model = augmented_network(LabelNetwork(Hierarchy.from_parents([None, 0]), [0.5, 0.5]))
    assert sorted(model.edges) == [("Y_0", "S_0"), ("Y_0", "Y_1"), ("Y_1", "S_1")]
    assert model.get_cpds() == []


def test_bad_inputs_name_the_argument():
    h = Hierarchy.from_parents([None, 0])
    with pytest.raises(InputError, match=r"theta must have shape \(2,\)"):
        LabelNetwork(h, [0.5])
    with pytest.raises(InputError, match="theta must hold probabilities"):
        LabelNetwork(h, [0.5, -0.1])
    net = LabelNetwork(h, [0.5, 0.5])
    with pytest.raises(InputError, match=r"score_given_label must have shape \(2, 2, n_bins\)"):
        augmented_network(net, np.ones((2, 3)))
    with pytest.raises(InputError, match="score_given_label must hold probabilities"):
        augmented_network(net, np.ones((2, 2, 2)))
    with pytest.raises(TypeError, match="hierarchy must be an hmcpgm.Hierarchy"):
        LabelNetwork("a", [0.5])
    with pytest.raises(TypeError, match="network must be an hmcpgm.LabelNetwork"):
        augmented_network(h)
    with pytest.raises(InputError, match="n must be an integer >= 0"):
        net.sample(-1)


def test_log_prior_refuses_what_is_no_configuration_matrix():
    """Extra columns were ignored, 0.3 and 7 read as positive, 1-D and 3-D arrays raised numpy's errors."""
    net = LabelNetwork(Hierarchy.from_edges([("a", "b")]), [0.5, 0.4])
    import pandas as pd

    np.testing.assert_allclose(net.log_prior([[1, 0], [1, 1], [0, 1]]), [np.log(0.3), np.log(0.2), -np.inf])
    np.testing.assert_allclose(net.log_prior(pd.DataFrame([[1, 1]], columns=["b", "a"])), [np.log(0.2)])  # by name
    with pytest.raises(InputError, match="configurations has 4 columns but the hierarchy has 2 classes"):
        net.log_prior([[1, 0, 1, 1]])
    with pytest.raises(LabelError, match="configurations must hold only 0 and 1; row 0, class 'a' holds 0.3"):
        net.log_prior([[0.3, 7.0]])
    for bad in ([1, 0], np.zeros((1, 2, 2))):
        with pytest.raises(InputError, match="configurations must be a 2-D array"):
            net.log_prior(bad)


@settings(max_examples=30, deadline=None)
@given(h=hierarchies(max_classes=8), seed=st.integers(0, 2**32 - 1))
def test_theta_as_a_series_or_dict_is_read_by_class_name(h, seed):
    """audit47: a Series of theta written in another order than the classes was read by position (A got C's
    value, and the exported pgmpy CPD said so), while every other per-class input aligns by name."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    theta = rng.uniform(0.05, 0.95, h.n_classes)
    order = rng.permutation(h.n_classes)
    shuffled = pd.Series(theta[order], index=[h.classes[i] for i in order])
    for given_theta in (shuffled, shuffled.to_dict()):
        net = LabelNetwork(h, given_theta)
        np.testing.assert_array_equal(net.theta, theta)
        cpd = net.to_pgmpy().get_cpds(h.classes[order[0]])
        assert cpd.values.reshape(2, -1)[1, -1] == pytest.approx(theta[order[0]])
    np.testing.assert_array_equal(LabelNetwork(h, pd.Series(theta)).theta, theta)  # a RangeIndex: class order
    with pytest.raises(InputError, match=r"theta \(by class name\) has .*missing"):
        LabelNetwork(h, shuffled.iloc[1:])


def test_to_pgmpy_with_string_names_answers_a_virtual_evidence_query():
    """audit47: pgmpy's virtual evidence fails on integer node names (the paper's data, Hierarchy.from_parents):
    to_pgmpy(names=str) gives string nodes, and the query equals the engines' mLPRs (a DAG, columns not in
    topological order)."""
    from pgmpy.factors.discrete import TabularCPD
    from pgmpy.inference import VariableElimination

    h = Hierarchy.from_edges([(3, 1), (3, 0), (1, 2), (0, 2)], classes=[2, 0, 1, 3])
    net = LabelNetwork(h, [0.7, 0.4, 0.6, 0.8])
    lik = np.random.default_rng(0).uniform(0.2, 3.0, size=(1, 4, 2))
    with quiet_pgmpy():
        bn = net.to_pgmpy(names=str)
        evidence = [TabularCPD(str(c), 2, (pair / pair.sum())[:, None]) for c, pair in zip(h.classes, lik[0])]
        got = [VariableElimination(bn).query([str(c)], virtual_evidence=evidence, show_progress=False).values[1]
               for c in h.classes]
    np.testing.assert_allclose(got, mlpr_from_likelihoods(net, lik)[0], rtol=0, atol=1e-12)
    back = LabelNetwork.from_pgmpy(bn)
    assert set(back.hierarchy.classes) == {"0", "1", "2", "3"}
    with pytest.raises(InputError, match="names gives two classes the same node name"):
        net.to_pgmpy(names=lambda c: c % 2)


def test_a_pgmpy_model_in_the_wrong_place_is_told_how_to_convert():
    """audit47: from_pgmpy on augmented_network's model blamed a score node's CPD ('outside the hierarchical
    family'); a pgmpy model given to the engines got no hint of from_pgmpy."""
    h = Hierarchy.from_edges([("A", "B")])
    net = LabelNetwork(h, [0.5, 0.4])
    with quiet_pgmpy():
        augmented = augmented_network(net, np.tile(np.array([[0.7, 0.3], [0.2, 0.8]]), (2, 1, 1)))
    with pytest.raises(InputError, match=r"^model holds score nodes S_k under label nodes Y_k \(\['S_A', 'S_B'\]\)"):
        LabelNetwork.from_pgmpy(augmented)
    with quiet_pgmpy():
        augmented.remove_nodes_from(["S_A", "S_B"])
    back = LabelNetwork.from_pgmpy(augmented)
    assert back.hierarchy.classes == ("Y_A", "Y_B") and back.theta.tolist() == [0.5, 0.4]
    genuine = LabelNetwork(Hierarchy.from_edges([("Y_x", "S_x")]), [0.5, 0.3])  # classes named so: no score node
    assert LabelNetwork.from_pgmpy(genuine.to_pgmpy()).theta.tolist() == [0.5, 0.3]
    with quiet_pgmpy():
        three_bins = augmented_network(net, np.tile(np.array([[0.5, 0.3, 0.2], [0.2, 0.3, 0.5]]), (2, 1, 1)))
    with pytest.raises(InputError, match=r"^model holds score nodes S_k"):
        LabelNetwork.from_pgmpy(three_bins)
    with pytest.raises(TypeError, match=r"a pgmpy model converts with LabelNetwork\.from_pgmpy\(model\)"):
        mlpr_from_likelihoods(net.to_pgmpy(), np.ones((1, 2, 2)))


def test_theta_as_a_dict_of_integer_classes_is_read_by_name():
    """audit51: a dict keyed 0 .. n-1 became a RangeIndex Series in pandas, read by position: with classes
    [2, 0, 1, 3], class 2 got theta[0]. A DataFrame of several rows was read by its first row."""
    import pandas as pd

    h = Hierarchy.from_edges([(3, 1), (3, 0), (1, 2), (0, 2)], classes=[2, 0, 1, 3])
    net = LabelNetwork(h, {0: 0.4, 1: 0.6, 2: 0.7, 3: 0.8})
    np.testing.assert_array_equal(net.theta, [0.7, 0.4, 0.6, 0.8])
    two_rows = pd.DataFrame([[0.5, 0.2, 0.9, 0.3], [0.1, 0.1, 0.1, 0.1]], columns=[2, 0, 1, 3])
    with pytest.raises(InputError, match="theta is a DataFrame of 2 rows"):
        LabelNetwork(h, two_rows)
    np.testing.assert_array_equal(LabelNetwork(h, two_rows.iloc[[0]]).theta, [0.5, 0.2, 0.9, 0.3])


def test_a_series_of_default_index_names_integer_classes_as_a_dataframe_s_default_columns_do():
    """audit58: with the classes the integers 0 .. n-1 in another order, a DataFrame of default columns was read
    by class name and its row (a Series of default index), or theta as such a Series, by position: class 2 got
    the value labelled 0, silently. Where the classes are not 0 .. n-1, such a Series still names none."""
    import pandas as pd

    from hmcpgm import MLPR, hier_rank

    h = Hierarchy.from_edges([(0, 1), (0, 2), (1, 3), (2, 3)], classes=[2, 0, 1, 3])
    theta = pd.Series([0.9, 0.8, 0.7, 0.6])
    for given_theta in (theta, theta.to_dict(), theta.to_frame().T):
        np.testing.assert_array_equal(LabelNetwork(h, given_theta).theta, [0.7, 0.9, 0.8, 0.6])
    frame = pd.DataFrame([[0.1, 0.9, 0.2, 0.05]])
    np.testing.assert_array_equal(hier_rank(frame.iloc[0], h).block_means, hier_rank(frame, h).block_means)
    rng = np.random.default_rng(0)
    y = (rng.random((200, 4)) < 0.6).astype(int)
    y[:, [0, 2]] *= y[:, [1]]  # classes 2 and 1 under 0; 3 under 1 and 2
    y[:, 3] *= y[:, 0] * y[:, 2]
    x = pd.DataFrame(y + rng.normal(scale=0.7, size=y.shape), columns=h.classes)
    model = MLPR(hierarchy=h, version="indpt", score_model="logistic", tempering=None, recalibrate=False).fit(
        x, pd.DataFrame(y, columns=h.classes))
    by_name = model.predict_proba(frame)
    np.testing.assert_array_equal(model.predict_proba(frame.iloc[0]).to_numpy(), by_name.to_numpy())
    letters = Hierarchy.from_edges([("a", "b")])
    np.testing.assert_array_equal(LabelNetwork(letters, pd.Series([0.3, 0.4])).theta, [0.3, 0.4])  # class order
