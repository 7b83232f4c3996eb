"""Edge cases of the mLPR engines, each answer checked against brute-force enumeration in log space.

Cases a user validating message passing against exact inference would try: theta of
0, 1 or 1e-300, likelihoods 0, 1e-300 and 1e300, deep chains, wide stars, many roots,
diamonds with columns out of topological order.
"""

import itertools
import warnings

import numpy as np
import pytest

from hmcpgm import (
    ConvergenceWarning,
    Hierarchy,
    InferenceError,
    InputError,
    LabelNetwork,
    TooLargeError,
    mlpr_from_likelihoods,
)
from hmcpgm.network import log_prior


def brute_force(hierarchy, theta, likelihoods):
    """(M, K) posteriors by summing every configuration in log space; NaN rows for impossible evidence.

    Independent of every engine: only the CPD rule (``log_prior``) is shared.
    """
    k = hierarchy.n_classes
    configs = np.array(list(itertools.product([0, 1], repeat=k)), dtype=bool)
    log_p = log_prior(hierarchy, np.asarray(theta, dtype=float), configs)
    out = np.full((len(likelihoods), k), np.nan)
    for m, lik in enumerate(np.asarray(likelihoods, dtype=float)):
        with np.errstate(divide="ignore"):
            w = log_p + np.log(np.where(configs, lik[:, 1], lik[:, 0])).sum(axis=1)
        if np.all(w == -np.inf):
            continue
        w = np.exp(w - w.max())
        out[m] = w @ configs / w.sum()
    return out


def run(hierarchy, theta, likelihoods, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return mlpr_from_likelihoods(LabelNetwork(hierarchy, theta), likelihoods, **kw)


# ---------------------------------------------------------------- loopy BP: products below the float range


def test_loopy_on_a_polytree_keeps_a_tiny_but_possible_configuration():
    """Two parents, one child forced positive: the message to one parent carries theta_child times
    P(the other parent is positive), 1e-200 * 1e-284 here; in linear space that is 0 and the forced
    child made loopy BP call the evidence impossible, while the answer (every class positive) is exact."""
    h = Hierarchy.from_edges([("a", "c"), ("b", "c")], classes=["c", "b", "a"])
    theta = [1e-200, 1 - 1e-16, 0.5]
    lik = np.array([[[0.0, 1e-300], [1.0, 1e-300], [1.0, 1.0]]])  # c forced positive, b strongly negative
    expected = brute_force(h, theta, lik)
    assert np.all(np.isfinite(expected))
    np.testing.assert_allclose(run(h, theta, lik, engine="loopy"), expected, atol=1e-12)
    np.testing.assert_allclose(run(h, theta, lik, engine="junction"), expected, atol=1e-12)


@pytest.mark.parametrize("start", ["uniform", "forest"])
def test_loopy_on_a_diamond_with_tiny_theta_and_hard_evidence(start):
    """d below b and c below a; d and a forced positive, theta of b and d 1e-300: the only labelling
    left (all positive) has probability 1e-600 * 0.3, below the float range but not zero."""
    h = Hierarchy.from_edges([("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")], classes=["d", "c", "b", "a"])
    theta = [1e-300, 0.3, 1e-300, 1.0]
    lik = np.array([[[0.0, 0.5], [0.0, 1.0], [0.5, 0.5], [0.0, 1.0]]])
    np.testing.assert_allclose(brute_force(h, theta, lik), 1.0)
    np.testing.assert_allclose(run(h, theta, lik, engine="loopy", start=start), 1.0, atol=1e-12)


@pytest.mark.parametrize("start", ["uniform", "forest"])
def test_loopy_message_to_a_parent_when_the_other_parent_is_almost_surely_positive(start):
    """c6 = c4 AND c0 (theta 1), c0 a root of theta 1, c6 forced negative, c4's evidence 1e100 for positive.
    The message to c0 is log(1 - t) with t = P(c4 = 1 | its evidence) = 1 - 1e-100: computed as
    log1p(-exp(log t)) it was log(0) = -inf, which contradicts c0's theta of 1 and made loopy BP call
    the evidence impossible; the exact answer has c4 and c6 negative."""
    h = Hierarchy.from_edges([("c4", "c6"), ("c0", "c6")], classes=["c6", "c4", "c0"])
    theta = [1.0, 0.5, 1.0]
    lik = np.array([[[1e-300, 0.0], [1e-300, 1e-200], [1.0, 1.0]]])
    expected = brute_force(h, theta, lik)
    np.testing.assert_allclose(expected, [[0.0, 0.0, 1.0]])
    np.testing.assert_allclose(run(h, theta, lik, engine="loopy", start=start), expected, atol=1e-12)


@pytest.mark.parametrize("engine, options", [("loopy", {"start": "forest"}), ("auto", {"budget_bytes": 1})])
def test_loopy_forest_start_on_evidence_only_the_dag_allows(engine, options):
    """c5 = c3 AND c1 (theta 1), c3 a root of theta 1, c5 forced negative: only c1 = 0 allows it. The
    forest start solves the spanning forest that keeps c5's first parent (c3) alone, where the evidence
    is impossible, and that error escaped: loopy BP (and engine='auto' when it falls back to it) called
    possible evidence impossible. Such objects now start from uniform messages."""
    h = Hierarchy.from_edges([("c3", "c5"), ("c1", "c5")], classes=["c5", "c3", "c1"])
    theta = [1.0, 1.0, 0.5]
    lik = np.array([[[1.0, 0.0], [1.0, 1.0], [1.0, 1.0]], [[1.0, 2.0], [1.0, 1.0], [1.0, 1.0]]])
    expected = brute_force(h, theta, lik)
    np.testing.assert_allclose(expected[0], [0.0, 1.0, 0.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = run(h, theta, lik, engine=engine, **options)
    np.testing.assert_allclose(got, expected, atol=1e-12)


def test_loopy_still_reports_truly_impossible_evidence():
    h = Hierarchy.from_edges([("a", "c"), ("b", "c")], classes=["c", "b", "a"])
    lik = np.array([[[0.0, 1.0], [1.0, 0.0], [1.0, 1.0]]])  # c positive, its parent b negative
    with pytest.raises(InferenceError, match="probability zero"):
        run(h, [0.5, 0.5, 0.5], lik, engine="loopy")


# ---------------------------------------------------------------- triangulation: hubs


def naive_greedy_elimination(hierarchy, weighted=False, power=2):
    """Greedy elimination of the moral graph recomputing every key at every step (written for the test):
    min-fill with ties to fewer neighbours then the lower index, or feasible * (1 + fill) ** power."""
    from hmcpgm.inference._triangulation import count_feasible

    k = hierarchy.n_classes
    adj = [set() for _ in range(k)]
    for j, parents in enumerate(hierarchy.parent_indices):
        family = [j, *map(int, parents)]
        for a in family:
            adj[a].update(x for x in family if x != a)
    alive = set(range(k))
    out = []
    while alive:
        def key(v):
            nb = sorted(adj[v])
            fill = sum(1 for i, a in enumerate(nb) for b in nb[i + 1:] if b not in adj[a])
            if weighted:
                return (count_feasible(sorted(adj[v] | {v}), hierarchy.ancestor_matrix) * (1 + fill) ** power, v)
            return (fill, len(nb), v)
        v = min(alive, key=key)
        out.append((v, frozenset(adj[v] | {v})))
        for a in adj[v]:
            adj[a].discard(v)
            adj[a].update(b for b in adj[v] if b != a)
        adj[v] = set()
        alive.discard(v)
    return out


@pytest.mark.parametrize("weighted", [False, True])
def test_greedy_elimination_equals_a_naive_recomputation_on_hubs_and_random_dags(weighted):
    """The elimination updates only the keys an elimination can change (a hub's other leaves keep
    theirs); the order and cliques must be those of recomputing every key at every step."""
    from strategies import from_parent_lists

    from hmcpgm.inference._triangulation import elimination_cliques

    rng = np.random.default_rng(7)
    cases = [Hierarchy.from_edges([(p, f"c{i}") for i in range(40) for p in ("r1", "r2")]
                                  + [("c0", "x"), ("c1", "x"), ("x", "y"), ("c5", "y")])]
    for _ in range(30):
        k = int(rng.integers(3, 14))
        parents = [[]] + [sorted(rng.choice(j, int(rng.integers(0, min(j, 3) + 1)), replace=False).tolist())
                          for j in range(1, k)]
        cases.append(from_parent_lists(parents, rng.permutation(k)))
    for h in cases:
        got = elimination_cliques(h, "weighted" if weighted else "min-fill")
        assert got == naive_greedy_elimination(h, weighted)


# ---------------------------------------------------------------- the references: linear-space libraries

DIAMOND = Hierarchy.from_edges([("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")], classes=["d", "c", "b", "a"])
BELOW_THE_FLOAT_RANGE = [  # (theta, likelihoods of one object): every labelling has probability < 1e-308
    ([0.3, 0.3, 1e-300, 0.3], [[1e-300, 1e300], [1e300, 1e-200], [1e300, 1e-300], [1e-300, 0.5]]),
    ([1e-200, 0.0, 0.0, 1.0], [[1e-300, 1e300], [1e-200, 0.5], [1.0, 1.0], [1e-300, 1.0]]),
]
IMPOSSIBLE = ([1.0, 0.3, 0.3, 0.0], [[1e-300, 1.0], [0.0, 1e-200], [1.0, 0.5], [0.0, 1e-200]])  # a is never positive


@pytest.mark.parametrize("theta, lik", BELOW_THE_FLOAT_RANGE)
def test_pyagrum_answers_exactly_or_refuses_below_the_float_range(theta, lik):
    """pyAgrum sums in linear space: where the evidence's probability underflows it returned posteriors
    off by 1 (reference silently wrong). Now: the exact answer or an InferenceError, never a wrong one."""
    pytest.importorskip("pyagrum")
    from hmcpgm.inference._pyagrum import pyagrum_mlpr

    lik = np.array([lik])
    expected = brute_force(DIAMOND, theta, lik)
    assert np.all(np.isfinite(expected))
    np.testing.assert_allclose(run(DIAMOND, theta, lik, engine="sparse"), expected, atol=1e-12)
    try:
        got = pyagrum_mlpr(DIAMOND, np.array(theta), lik)
    except InferenceError as exc:
        assert "float range" in str(exc)
    else:
        np.testing.assert_allclose(got, expected, atol=1e-9)


def test_pyagrum_refuses_impossible_evidence():
    """It returned numbers (evidence probability 0) for evidence that no labelling allows."""
    pytest.importorskip("pyagrum")
    from hmcpgm.inference._pyagrum import pyagrum_mlpr

    theta, lik = IMPOSSIBLE
    assert np.all(np.isnan(brute_force(DIAMOND, theta, np.array([lik]))))
    with pytest.raises(InferenceError, match="object 0"):
        pyagrum_mlpr(DIAMOND, np.array(theta), np.array([lik]))


def test_pyagrum_is_exact_on_ordinary_evidence():
    pytest.importorskip("pyagrum")
    from hmcpgm.inference._pyagrum import pyagrum_mlpr

    rng = np.random.default_rng(2)
    theta = rng.uniform(0.05, 0.95, 4)
    lik = rng.uniform(0.01, 1.0, (5, 4, 2))
    np.testing.assert_allclose(pyagrum_mlpr(DIAMOND, theta, lik), brute_force(DIAMOND, theta, lik), atol=1e-12)


def test_pgmpy_reference_does_not_call_evidence_below_the_float_range_impossible():
    """b (child of a) forced positive with theta 1e-200 twice: the evidence has probability 1e-400, which
    pgmpy's linear-space sums turn into 0/0; it said the evidence rules out every labelling."""
    h = Hierarchy.from_edges([("a", "b")], classes=["b", "a"])
    lik = np.array([[[0.0, 1.0], [1.0, 1.0]]])
    np.testing.assert_allclose(brute_force(h, [1e-200, 1e-200], lik), 1.0)
    try:
        got = run(h, [1e-200, 1e-200], lik, engine="pgmpy")
    except InferenceError as exc:
        assert "float range" in str(exc) and "rules out every labelling" not in str(exc)
    else:
        np.testing.assert_allclose(got, 1.0, atol=1e-9)
    with pytest.raises(InferenceError, match="probability zero"):  # truly impossible: still said so
        run(h, [0.5, 0.5], np.array([[[0.0, 1.0], [1.0, 0.0]]]), engine="pgmpy")


def test_check_inference_with_pyagrum_prints_no_warnings_of_pyagrums_import(tmp_path):
    """pyAgrum's SWIG module emits DeprecationWarnings when imported; the command line printed them as
    'hmcpgm: warning: builtin type SwigPyPacked has no __module__ attribute' (a fresh process: the
    import happens once)."""
    pytest.importorskip("pyagrum")
    import subprocess
    import sys
    from pathlib import Path

    path = tmp_path / "h.csv"
    path.write_text("parent,child\na,b\na,c\nb,d\nc,d\n")
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, "-m", "hmcpgm", "check-inference", str(path), "--engines", "pyagrum",
                           "--objects", "3"], cwd=root, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "pyagrum" in done.stdout
    assert "warning" not in done.stderr, done.stderr


@pytest.mark.parametrize("order", [list("abcde"), list("edcba"), list("acbed")])
def test_enumerated_prior_marginals_keep_theta_one_exact(order):
    """indpt with engine='enumerate' takes P(Y_k = 1) from summing the 2^K configurations: for a root of
    theta 1 the sum came out 1 - 2.2e-16 in some column orders, so its negative class kept a prior of
    2.2e-16 and evidence [1, 1e-300] gave a posterior of 0 instead of 1 (and [1, 0], impossible, an
    answer). Roots: the prior marginal is theta itself."""
    theta = dict(zip("abcde", [0.75, 0.9999999999999999, 0.0, 0.3, 1.0]))
    h = Hierarchy.from_edges([], classes=order)
    th = np.array([theta[c] for c in order])
    lik = np.ones((2, 5, 2))
    lik[0, order.index("e")] = [1.0, 1e-300]  # theta 1: the prior leaves no room for a negative
    lik[1, order.index("b")] = [1.0, 1e-300]  # theta 1 - 1.1e-16: a ratio 1e300 against odds 9e15
    pi = th[None, :]
    expected = pi * lik[..., 1] / (pi * lik[..., 1] + (1 - pi) * lik[..., 0])
    for engine in ("enumerate", "tree", "junction", "sparse"):
        np.testing.assert_allclose(run(h, th, lik, engine=engine, version="indpt"), expected, atol=1e-12,
                                   err_msg=engine)
    impossible = np.ones((1, 5, 2))
    impossible[0, order.index("e")] = [1.0, 0.0]
    with pytest.raises(InferenceError, match="probability zero"):
        run(h, th, impossible, engine="enumerate", version="indpt")


def test_enumerated_prior_marginals_below_the_float_range():
    """c2 under c0, theta 1e-300 each, c2 forced positive: indpt's prior P(Y_c2 = 1) = 1e-600 underflowed
    in enumerate's linear-space sum, which then called the evidence impossible; the posterior is 1."""
    h = Hierarchy.from_edges([("c0", "c2")], classes=["c2", "c0"])
    lik = np.array([[[0.0, 1e-300], [1.0, 1.0]]])
    for engine in ("enumerate", "tree", "junction", "sparse"):
        np.testing.assert_allclose(run(h, [1e-300, 1e-300], lik, engine=engine, version="indpt"), [[1.0, 1e-300]],
                                   rtol=1e-12, err_msg=engine)


@pytest.mark.parametrize("engine", ["junction", "sparse", "loopy", "auto", "enumerate"])
def test_nbh_when_a_merged_theta_is_below_the_float_range(engine):
    """c3 has parents c0 (theta 1) and c1 (theta 1e-300) and is forced positive. In c0's neighbourhood
    (c0, c3) the unobserved c1 is merged into c3 with theta 1e-300 * 1e-300, which underflowed to 0: the
    evidence was called impossible. By the definition (enumeration with evidence on c0 and c3 only)
    every class is positive."""
    h = Hierarchy.from_edges([("c0", "c3"), ("c1", "c3")], classes=["c3", "c0", "c1"])
    theta = [1e-300, 1.0, 1e-300]
    lik = np.ones((2, 3, 2))
    lik[1, 0] = [0.0, 1e-300]
    expected = brute_force_version(h, theta, lik, "nbh")
    np.testing.assert_allclose(expected[1], 1.0)
    np.testing.assert_allclose(run(h, theta, lik, engine=engine, version="nbh"), expected, rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize("tiny", [1e-170, 1e-300])
def test_nbh_loopy_when_a_merged_theta_is_below_the_float_range_in_a_loop(tiny):
    """Two diamonds in a row, c5 forced positive. In c6's neighbourhood (c4, c5, c6 and a loop through
    c3) the unobserved c0, c1 and c2 are merged into c3, theta 1e-170 * 1e-170 * 0.25 = 0: loopy BP ran
    on that reduced network and called the evidence impossible; such networks are solved unreduced,
    loopy's too. The answer is the definition's."""
    h = Hierarchy.from_parents([None, 0, 0, [1, 2], 3, 3, [4, 5]])
    theta = [0.5, tiny, 0.5, tiny, 0.5, 0.5, 0.5]
    lik = np.ones((2, 7, 2))
    lik[1, 5] = [0.0, 1.0]
    expected = brute_force_version(h, theta, lik, "nbh")
    assert np.all(np.isfinite(expected))
    np.testing.assert_allclose(run(h, theta, lik, engine="loopy", version="nbh"), expected, atol=1e-9)


def wide_parents(n_parents, n_children=1):
    """A root r over parents p0.. of children k0.. (every parent of every child): a child's neighbourhood
    network holds all the parents, a dense clique of n_parents + 2 classes."""
    ps = [f"p{i}" for i in range(n_parents)]
    ks = [f"k{i}" for i in range(n_children)]
    return Hierarchy.from_edges([("r", p) for p in ps] + [(p, k) for p in ps for k in ks])


def test_nbh_wider_than_max_clique_answers_by_the_sparse_junction_tree():
    """11 parents of k0 and k1: their reduced networks (13 classes) took the dense junction tree, which
    refused beyond max_clique (naming engine='junction' and the network's node numbers); now the sparse
    junction tree answers them, equal to the definition, and impossible evidence is counted over all."""
    h = wide_parents(11, 2)
    theta = np.random.default_rng(3).uniform(0.3, 0.95, h.n_classes)
    lik = np.random.default_rng(4).uniform(0.2, 3.0, (3, h.n_classes, 2))
    expected = brute_force_version(h, theta, lik, "nbh")
    np.testing.assert_allclose(run(h, theta, lik, engine="junction", version="nbh", max_clique=4), expected,
                               atol=1e-12)
    lik[[1, 2], h.index("k1")] = [0.0, 1.0]  # k1 forced positive, p3 forced negative: impossible in
    lik[[1, 2], h.index("p3")] = [1.0, 0.0]  # k1's neighbourhood (and p3's), in objects 1 and 2
    assert np.isnan(brute_force_version(h, theta, lik, "nbh")[1:]).any(axis=1).all()
    with pytest.raises(InferenceError, match=r"2 object\(s\) \(first: object 1\) have probability zero"):
        run(h, theta, lik, engine="junction", version="nbh", max_clique=4)


def nbh_of_wide_parents(h, theta, lik):
    """nbh on ``wide_parents(n, 1)`` in closed form (written for the test): r's neighbourhood is r and
    the parents, p_i's is r, p_i and k0 (the other parents summed out), k0's the parents and k0."""
    th = dict(zip(h.classes, theta))
    ps = [c for c in h.classes if c.startswith("p")]
    out = np.empty(lik.shape[:2])
    for m in range(len(lik)):
        L = {c: lik[m, h.index(c)] for c in h.classes}
        tr, lr, lk, tk = th["r"], L["r"], L["k0"], th["k0"]
        on = np.prod([th[p] * L[p][1] for p in ps])  # every parent positive
        either = np.prod([th[p] * L[p][1] + (1 - th[p]) * L[p][0] for p in ps])
        off = np.prod([L[p][0] for p in ps])
        w1 = tr * lr[1] * either
        out[m, h.index("r")] = w1 / (w1 + (1 - tr) * lr[0] * off)
        for p in ps:
            kid = tk * np.prod([th[q] for q in ps if q != p])  # P(k0 positive | r, p positive)
            w1 = tr * lr[1] * th[p] * L[p][1] * (kid * lk[1] + (1 - kid) * lk[0])
            w0 = (tr * lr[1] * (1 - th[p]) + (1 - tr) * lr[0]) * L[p][0] * lk[0]
            out[m, h.index(p)] = w1 / (w1 + w0)
        w1 = tr * on * tk * lk[1]
        w0 = (tr * (either - on + on * (1 - tk)) + (1 - tr) * off) * lk[0]
        out[m, h.index("k0")] = w1 / (w1 + w0)
    return out


@pytest.mark.parametrize("engine", ["auto", "sparse", "junction"])
def test_nbh_of_a_class_with_more_parents_than_max_clique(engine):
    """k0 has 21 parents: its reduced network's dense clique (23 classes) is wider than the default
    max_clique=20, and nbh refused for size even with engine='auto' (documented never to) and 'sparse'."""
    h = wide_parents(21)
    theta = np.random.default_rng(5).uniform(0.5, 0.99, h.n_classes)
    lik = np.random.default_rng(6).uniform(0.2, 3.0, (2, h.n_classes, 2))
    np.testing.assert_allclose(run(h, theta, lik, engine=engine, version="nbh"), nbh_of_wide_parents(h, theta, lik),
                               atol=1e-12)


@pytest.mark.parametrize("engine", ["auto", "sparse", "junction"])
def test_nbh_wider_than_max_clique_with_thetas_below_the_float_range(engine):
    """The parents' theta 1e-40: in p_i's neighbourhood the other 10 parents merge into k0, theta 1e-400 * 0.6 =
    0, and the network is solved unreduced by the engine itself: the dense junction tree ('auto' and 'junction')
    refused its clique of 12 classes beyond max_clique=4; an exact engine's too wide network goes to the sparse
    tree, as the reduced ones do."""
    h = wide_parents(11)
    theta = np.full(h.n_classes, 0.6)
    theta[[h.index(f"p{i}") for i in range(11)]] = 1e-40
    lik = np.random.default_rng(7).uniform(0.2, 3.0, (2, h.n_classes, 2))
    options = {} if engine == "sparse" else {"max_clique": 4}
    np.testing.assert_allclose(run(h, theta, lik, engine=engine, version="nbh", **options),
                               brute_force_version(h, theta, lik, "nbh"), atol=1e-12, rtol=1e-9)


def test_nbh_refusal_names_the_engine_used_and_the_class():
    h = wide_parents(21)
    with pytest.raises(TooLargeError) as err:
        run(h, [0.5] * h.n_classes, np.ones((1, h.n_classes, 2)), engine="sparse", version="nbh", budget_bytes=2**16)
    msg = str(err.value)
    assert "neighbourhood of class 'k0'" in msg and "'p0'" in msg and "engine='sparse' needs" in msg


@pytest.mark.parametrize("chunk_floats", [None, 16])
def test_junction_counts_impossible_objects_over_every_tree_and_chunk(monkeypatch, chunk_floats):
    """A diamond and a separate chain (two trees of the junction forest); objects 1 and 4 impossible in
    the chain, 2 in the diamond. The junction tree counted only the first tree's (or chunk's) objects:
    '1 object(s) (first: object 2)'; the count and first object are now those of enumeration."""
    import hmcpgm.inference._junction as junction

    if chunk_floats is not None:  # chunks of one object: the second impossible object is in another chunk
        monkeypatch.setattr(junction, "_BUDGET", chunk_floats)
    h = Hierarchy.from_edges([("r", "a"), ("r", "b"), ("a", "z"), ("b", "z"), ("x", "y")])
    lik = np.ones((6, h.n_classes, 2))
    lik[[1, 4], h.index("y")] = [0.0, 1.0]  # y forced positive, x forced negative
    lik[[1, 4], h.index("x")] = [1.0, 0.0]
    lik[2, h.index("z")] = [0.0, 1.0]  # z forced positive, a forced negative
    lik[2, h.index("a")] = [1.0, 0.0]
    theta = [0.5] * h.n_classes
    impossible = np.flatnonzero(np.isnan(brute_force(h, theta, lik)).any(axis=1))
    assert impossible.tolist() == [1, 2, 4]
    for engine in ("junction", "sparse", "enumerate"):
        with pytest.raises(InferenceError, match=r"of 3 object\(s\) \(first: object 1\) have probability zero"):
            run(h, theta, lik, engine=engine)


def test_enumerate_counts_impossible_objects_over_every_chunk():
    """18 classes: the enumeration takes one object per chunk of 2**22 floats, and counted only the first
    chunk with an impossible object ('1 object(s)'); objects 1 and 3 are impossible by construction."""
    h = Hierarchy.from_edges([("r", "a"), ("r", "b"), ("a", "z"), ("b", "z")]
                             + [(f"x{i}", f"x{i + 1}") for i in range(13)])
    assert h.n_classes == 18
    lik = np.ones((4, h.n_classes, 2))
    lik[[1, 3], h.index("z")] = [0.0, 1.0]  # z forced positive, its parent a forced negative
    lik[[1, 3], h.index("a")] = [1.0, 0.0]
    for engine in ("enumerate", "sparse"):
        with pytest.raises(InferenceError, match=r"of 2 object\(s\) \(first: object 1\) have probability zero"):
            run(h, [0.5] * h.n_classes, lik, engine=engine)
    good = run(h, [0.5] * h.n_classes, lik[[0, 2]], engine="enumerate")
    np.testing.assert_allclose(good, run(h, [0.5] * h.n_classes, lik[[0, 2]], engine="sparse"), atol=1e-12)


@pytest.mark.parametrize("engine", ["auto", "junction", "sparse", "loopy", "enumerate"])
def test_nbh_counts_impossible_objects_over_every_class(engine):
    """A diamond and a chain x -> y: object 1's evidence is impossible in the chain's neighbourhoods (closed
    form), object 2's in z's and a's (reduced networks). The closed form raised for its classes alone and
    the enumeration for the first class's neighbourhood: '1 object(s)'; the definition says objects 1 and 2."""
    h = Hierarchy.from_edges([("r", "a"), ("r", "b"), ("a", "z"), ("b", "z"), ("x", "y")])
    lik = np.random.default_rng(8).uniform(0.5, 2.0, (4, h.n_classes, 2))
    lik[1, h.index("y")] = [0.0, 1.0]
    lik[1, h.index("x")] = [1.0, 0.0]
    lik[2, h.index("z")] = [0.0, 1.0]
    lik[2, h.index("a")] = [1.0, 0.0]
    theta = [0.5] * h.n_classes
    expected = brute_force_version(h, theta, lik, "nbh")
    assert np.flatnonzero(np.isnan(expected).any(axis=1)).tolist() == [1, 2]
    with pytest.raises(InferenceError, match=r"of 2 object\(s\) \(first: object 1\) have probability zero"):
        run(h, theta, lik, engine=engine, version="nbh")
    if engine != "loopy":  # approximate in z's neighbourhood (a loop)
        np.testing.assert_allclose(run(h, theta, lik[[0, 3]], engine=engine, version="nbh"), expected[[0, 3]],
                                   atol=1e-12)


# ---------------------------------------------------------------- properties on random small DAGs

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from strategies import hierarchies, polytrees  # noqa: E402

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
EXTREMES = [0.0, 1e-300, 1e-200, 1e300, 1.0, 0.3]


def draw_problem(data, h, n_objects=3):
    """theta with some 0, 1 and 1e-300 entries; likelihoods with zeros, 1e-300 and 1e300 (no [0, 0] pair)."""
    k = h.n_classes
    theta = np.array(data.draw(st.lists(st.one_of(st.sampled_from([0.0, 1.0, 1e-300, 1 - 1e-16]),
                                                  st.floats(0.01, 0.99)), min_size=k, max_size=k)))
    flat = data.draw(st.lists(st.one_of(st.sampled_from(EXTREMES), st.floats(0.01, 1.0)),
                              min_size=n_objects * k * 2, max_size=n_objects * k * 2))
    lik = np.array(flat).reshape(n_objects, k, 2)
    lik[(lik[..., 0] == 0) & (lik[..., 1] == 0)] = 1.0
    return theta, lik


def answer_or_impossible(h, theta, lik, **kw):
    try:
        return run(h, theta, lik, **kw)
    except InferenceError as exc:
        assert "probability zero" in str(exc)
        return None


@SETTINGS
@given(h=hierarchies(max_classes=7), data=st.data())
def test_exact_engines_equal_log_space_enumeration_with_extremes(h, data):
    theta, lik = draw_problem(data, h)
    expected = brute_force(h, theta, lik)
    possible = ~np.isnan(expected).any(axis=1)
    engines = ["junction", "sparse", "enumerate"] + (["tree"] if h.is_forest else [])
    from hmcpgm.inference import is_polytree

    engines += ["loopy"] if is_polytree(h) else []
    for engine in engines:
        got = answer_or_impossible(h, theta, lik, engine=engine)
        if possible.all():
            assert got is not None, engine
            np.testing.assert_allclose(got, expected, atol=1e-9, err_msg=engine)
        else:
            assert got is None, engine
        got = answer_or_impossible(h, theta, lik[possible], engine=engine)
        np.testing.assert_allclose(got, expected[possible], atol=1e-9, err_msg=engine)
        # Proposition 1: under full inference a child never exceeds a parent
        for p, c in h.edge_indices:
            assert np.all(got[:, c] <= got[:, p] + 1e-12), engine


@SETTINGS
@given(h=hierarchies(max_classes=7), data=st.data())
def test_column_order_does_not_change_any_engine_or_version(h, data):
    """The same network with its classes listed in another order: every engine and version gives the
    same posteriors per class name (loopy where it is exact, on polytrees: on a DAG with undirected loops its
    approximate answer follows its message schedule, which follows the column order)."""
    from hmcpgm.inference import is_polytree

    theta, lik = draw_problem(data, h)
    perm = np.array(data.draw(st.permutations(range(h.n_classes))))
    names = [h.classes[j] for j in perm]
    h2 = Hierarchy.from_edges(h.edges, classes=names)
    engines = ["auto", "junction", "sparse", "enumerate"] + (["tree"] if h.is_forest else [])
    engines += ["loopy"] if is_polytree(h) else []
    for version in ("full", "nbh", "indpt"):
        for engine in engines:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                a = answer_or_impossible(h, theta, lik, engine=engine, version=version)
                b = answer_or_impossible(h2, theta[perm], lik[:, perm], engine=engine, version=version)
            if a is None or b is None:
                assert a is None and b is None, (engine, version)
            else:
                np.testing.assert_allclose(b, a[:, perm], atol=1e-9, err_msg=f"{engine} {version}")


def brute_force_version(hierarchy, theta, likelihoods, version):
    """nbh and indpt by their definitions, in log space: nbh is full inference with evidence only on k, its
    parents and children; indpt combines k's own evidence with its prior marginal (both log-summed)."""
    k = hierarchy.n_classes
    lik = np.asarray(likelihoods, dtype=float)
    if version == "full":
        return brute_force(hierarchy, theta, lik)
    out = np.full(lik.shape[:2], np.nan)
    if version == "nbh":
        for j in range(k):
            keep = np.zeros(k, bool)
            keep[[j, *hierarchy.parent_indices[j], *hierarchy.child_indices[j]]] = True
            out[:, j] = brute_force(hierarchy, theta, np.where(keep[None, :, None], lik, 1.0))[:, j]
        return out
    configs = np.array(list(itertools.product([0, 1], repeat=k)), dtype=bool)
    log_p = log_prior(hierarchy, np.asarray(theta, dtype=float), configs)
    from scipy.special import logsumexp

    with np.errstate(divide="ignore"):
        log_pi1 = np.array([logsumexp(log_p[configs[:, j]]) for j in range(k)])
        log_pi0 = np.array([logsumexp(log_p[~configs[:, j]]) for j in range(k)])
        a1, a0 = log_pi1 + np.log(lik[..., 1]), log_pi0 + np.log(lik[..., 0])
    top = np.maximum(a0, a1)
    with np.errstate(invalid="ignore"):
        return np.exp(a1 - top) / (np.exp(a0 - top) + np.exp(a1 - top))


@SETTINGS
@given(h=hierarchies(max_classes=6), data=st.data(), version=st.sampled_from(["nbh", "indpt"]))
def test_nbh_and_indpt_equal_their_definitions_with_extremes(h, data, version):
    theta, lik = draw_problem(data, h)
    expected = brute_force_version(h, theta, lik, version)
    possible = ~np.isnan(expected).any(axis=1)
    engines = ["junction", "sparse", "enumerate", "auto"] + (["tree"] if h.is_forest else [])
    for engine in engines:
        got = answer_or_impossible(h, theta, lik[possible], engine=engine, version=version)
        np.testing.assert_allclose(got, expected[possible], atol=1e-9, err_msg=engine)
        if not possible.all():
            assert answer_or_impossible(h, theta, lik, engine=engine, version=version) is None, engine


# ---------------------------------------------------------------- engine options at the door

@pytest.mark.parametrize("engine, option, value", [
    ("junction", "max_clique", None), ("junction", "max_clique", "3"), ("junction", "max_clique", 2.5),
    ("junction", "max_clique", True), ("junction", "max_clique", 0),
    ("sparse", "budget_bytes", None), ("sparse", "budget_bytes", "1e9"), ("sparse", "budget_bytes", float("nan")),
    ("sparse", "budget_bytes", -5), ("sparse", "budget_bytes", True), ("sparse", "progress", "yes"),
    ("enumerate", "max_classes", None), ("enumerate", "max_classes", 2.5), ("enumerate", "max_classes", -1),
    ("auto", "budget_bytes", None), ("auto", "budget_bytes", -1), ("auto", "max_clique", "20"),
    ("loopy", "tol", float("inf")), ("loopy", "tol", float("nan")), ("loopy", "tol", 0.0),
])
@pytest.mark.parametrize("version", ["full", "nbh", "indpt"])
def test_bad_engine_options_are_refused_in_one_line_naming_them(engine, option, value, version):
    """None, strings, NaN, booleans and non-positive sizes: a TypeError traceback (max_clique=None,
    budget_bytes='1e9', max_classes=None), an answer (NaN budget, progress='yes'; every nbh and indpt
    call, which never read them) or a refusal that blamed the hierarchy (max_clique=0: 'needs a clique
    of 3 classes'); now an InputError naming the option, whatever the version."""
    net = LabelNetwork(DIAMOND, [0.5] * 4)
    with pytest.raises(InputError, match=f"^{option} must be") as err:
        mlpr_from_likelihoods(net, np.ones((2, 4, 2)), engine=engine, version=version, **{option: value})
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("engine, options", [("junction", {"max_clique": 3}), ("sparse", {"budget_bytes": 2**20}),
                                             ("sparse", {"budget_bytes": 1e6, "progress": False}),
                                             ("enumerate", {"max_classes": 4}), ("auto", {"budget_bytes": 2**30})])
def test_good_engine_options_still_answer(engine, options):
    net = LabelNetwork(DIAMOND, [0.5] * 4)
    lik = np.random.default_rng(0).uniform(0.1, 1.0, (3, 4, 2))
    np.testing.assert_allclose(mlpr_from_likelihoods(net, lik, engine=engine, **options),
                               brute_force(DIAMOND, [0.5] * 4, lik), atol=1e-12)


@SETTINGS
@given(h=polytrees(max_classes=7), data=st.data(), start=st.sampled_from(["uniform", "forest"]))
def test_loopy_on_polytrees_equals_log_space_enumeration_with_extremes(h, data, start):
    """Loopy BP is exact on polytrees: with theta 0, 1 or 1e-300 and likelihoods 0, 1e-300 or 1e300 too."""
    theta, lik = draw_problem(data, h)
    expected = brute_force(h, theta, lik)
    possible = ~np.isnan(expected).any(axis=1)
    got = answer_or_impossible(h, theta, lik[possible], engine="loopy", start=start)
    np.testing.assert_allclose(got, expected[possible], atol=1e-9)
    if not possible.all():
        assert answer_or_impossible(h, theta, lik, engine="loopy", start=start) is None


@pytest.mark.parametrize("option, value", [("budget_bytes", None), ("budget_bytes", "x"), ("budget_bytes", -1),
                                           ("max_clique", None), ("max_clique", 0), ("max_clique", 2.5)])
def test_the_plan_refuses_bad_sizes_in_one_line(option, value):
    """inference_plan, choose_engine and engine_in_use took int() of them: TypeError and ValueError
    tracebacks, or a plan for a budget of -1 bytes."""
    from hmcpgm.inference import choose_engine, engine_in_use, inference_plan

    for call in (lambda: inference_plan(DIAMOND, **{option: value}),
                 lambda: choose_engine(DIAMOND, **{option: value}),
                 lambda: engine_in_use(DIAMOND, **{option: value})):
        with pytest.raises(InputError, match=f"^{option} must be"):
            call()


def test_likelihoods_that_are_no_numbers_are_one_line():
    """Text in an object array raised numpy's ValueError ('could not convert string to float')."""
    net = LabelNetwork(Hierarchy.from_edges([("a", "b")]), [0.5, 0.4])
    lik = np.ones((1, 2, 2), dtype=object)
    lik[0, 0, 0] = "x"
    with pytest.raises(InputError, match=r"^likelihoods must be numbers of shape \(n_objects, 2, 2\): could not "
                                         r"convert string to float: 'x'$"):
        mlpr_from_likelihoods(net, lik)


def test_enumeration_keeps_a_certain_class_at_1_exactly():
    # hard evidence that the root is positive: (p @ configs) / p.sum() rounded to 1.0000000000000002
    h = Hierarchy.from_parents([None, 0, 0, 1, 1, 2])
    net = LabelNetwork(h, [0.3, 0.6, 0.5, 0.7, 0.2, 0.9])
    L = np.array([[[0.0, 1.0], [1, 2], [1, 1], [1, 1], [1, 1], [1, 1]]])
    got = mlpr_from_likelihoods(net, L, engine="enumerate")
    assert got.max() <= 1.0 and got[0, 0] == 1.0
    np.testing.assert_allclose(got, mlpr_from_likelihoods(net, L, engine="tree"), atol=1e-15)


@pytest.mark.parametrize("start", ["uniform", "forest"])
def test_loopy_can_be_far_off_at_a_root(start):
    """docs/concepts.md's example: loopy BP converges on a diamond and gives the root 0.018 where enumeration gives
    0.35 (it said only that the roots are accurate; that holds on cellcycle_GO, not in general)."""
    h = Hierarchy.from_edges([("r", "a"), ("r", "b"), ("a", "c"), ("b", "c")])
    net = LabelNetwork(h, [0.5] * 4)
    lik = np.exp([[[2.63, -1.87], [2.79, 1.58], [3.82, 1.29], [-2.65, 7.05]]])
    loopy, report = mlpr_from_likelihoods(net, lik, engine="loopy", start=start, return_report=True)
    exact = mlpr_from_likelihoods(net, lik, engine="enumerate")
    assert report.converged.all()
    assert exact[0, 0] == pytest.approx(0.3515, abs=1e-4) and loopy[0, 0] == pytest.approx(0.0176, abs=1e-4)


def test_loopy_named_on_a_dag_with_a_loop_says_its_answer_is_approximate():
    """audit58: only engine='auto' warned; loopy asked for by name converged far from the exact answer above
    (report.converged True) without a word. It warns where it is not exact, for full and nbh; not on a polytree,
    not for indpt, not in compare_engines (which measures the error) nor in fit's cross-fitting."""
    from hmcpgm import MLPR, ApproximationWarning
    from hmcpgm.inference import compare_engines

    h = Hierarchy.from_edges([("r", "a"), ("r", "b"), ("a", "c"), ("b", "c")])
    net = LabelNetwork(h, [0.5] * 4)
    lik = np.exp([[[2.63, -1.87], [2.79, 1.58], [3.82, 1.29], [-2.65, 7.05]]])
    for version in ("full", "nbh"):
        with pytest.warns(ApproximationWarning, match=r"^engine='loopy' is approximate on this hierarchy \(exact on "
                                                      r"polytrees only"):
            run(h, [0.5] * 4, lik, engine="loopy", version=version)
    polytree = Hierarchy.from_edges([("r", "a"), ("s", "a"), ("a", "c")])
    with warnings.catch_warnings():
        warnings.simplefilter("error", ApproximationWarning)
        run(h, [0.5] * 4, lik, engine="loopy", version="indpt")
        run(h, [0.5] * 4, lik, engine="junction")
        run(polytree, [0.5] * 4, lik, engine="loopy")
        table = compare_engines(net, lik, engines=["loopy"], reference="enumerate")
        assert table.set_index("engine").loc["loopy", "max_abs_error"] > 0.3
    rng = np.random.default_rng(0)
    y = (rng.random((120, 4)) < 0.7).astype(int)
    y[:, 1:3] *= y[:, [0]]  # a, b under r; c under a and b (classes r, a, b, c)
    y[:, 3] *= y[:, 1] * y[:, 2]
    x = y + rng.normal(scale=0.8, size=y.shape)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ApproximationWarning)
        model = MLPR(hierarchy=h, version="full", engine="loopy", recalibrate=False, score_model="logistic",
                     tempering="one").fit(x, y)
    with pytest.warns(ApproximationWarning, match="engine='loopy' is approximate"):
        model.predict_proba(x[:3])


def test_the_plan_says_skipped_not_refused_for_an_engine_that_runs_when_named():
    """audit47: on a tree the plan printed junction and sparse as 'refused', though both run, exactly, when named."""
    from hmcpgm import inference_plan

    h = Hierarchy.from_edges([("A", "B"), ("A", "C"), ("B", "D")])
    text = str(inference_plan(h))
    assert ("junction , skipped, exact, not needed: the tree engine is exact on forests (it still runs when "
            "named)") in text
    assert "refused" not in text
    net = LabelNetwork(h, [0.6, 0.5, 0.5, 0.5])
    lik = np.random.default_rng(0).uniform(0.2, 3.0, (3, 4, 2))
    for engine in ("junction", "sparse"):
        np.testing.assert_allclose(mlpr_from_likelihoods(net, lik, engine=engine),
                                   mlpr_from_likelihoods(net, lik, engine="tree"), rtol=0, atol=1e-12)
    dag = Hierarchy.from_parents([None, 0, 0, [1, 2]])
    assert "tree     , refused, exact, needs a tree or forest" in str(inference_plan(dag))
