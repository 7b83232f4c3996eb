"""Tests for hmcpgm.ranking: CATCH, NaiveSort, HierRank, violations.

References: brute force over every consistent ranking (tiny n), the exact
dynamic program (moderate n), and hand-checked small cases.
"""


import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import from_parent_lists, hierarchies

from hmcpgm import (
    Hierarchy,
    InputError,
    TooLargeError,
    catch,
    count_violations,
    hier_rank,
    hier_rank_bound,
    naive_sort,
)

# ---------------------------------------------------------------- helpers


def _hierarchy(parents):
    return Hierarchy.from_parents([p if len(p) else None for p in parents])


@st.composite
def forests(draw, max_classes=6):
    k = draw(st.integers(1, max_classes))
    return [[] if i == 0 else draw(st.sampled_from([[]] + [[p] for p in range(i)])) for i in range(k)]


@st.composite
def dags(draw, max_classes=6):
    k = draw(st.integers(2, max_classes))
    parents = []
    for i in range(k):
        ps = draw(st.lists(st.integers(0, i - 1), unique=True, max_size=3)) if i else []
        parents.append(sorted(ps))
    return parents


def _values(draw_values, m, k):
    return np.asarray(draw_values, dtype=float).reshape(m, k)


@st.composite
def problems(draw, graphs, max_events, max_objects=3):
    parents = draw(graphs)
    k = len(parents)
    m = draw(st.integers(1, max(1, min(max_objects, max_events // k))))
    # a coarse grid makes ties frequent; floats make them rare
    elem = draw(st.sampled_from([
        st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.9, 1.0]),
        st.floats(-2, 2, allow_nan=False, width=32),
    ]))
    vals = draw(st.lists(elem, min_size=m * k, max_size=m * k))
    return from_parent_lists(parents, draw(st.permutations(range(k)))), _values(vals, m, k)


def _brute_force_best(values, hierarchy):
    """The largest CATCH over every consistent ranking of all events."""
    m, k = values.shape
    n = m * k
    preds = [[] for _ in range(n)]
    for obj in range(m):
        for c in range(k):
            preds[obj * k + c] = [obj * k + p for p in hierarchy.parent_indices[c]]
    v = values.ravel()
    best = -np.inf

    def extend(placed, done, score):
        nonlocal best
        if len(placed) == n:
            best = max(best, score)
            return
        weight = n - len(placed)
        for e in range(n):
            if e not in done and all(p in done for p in preds[e]):
                done.add(e)
                placed.append(e)
                extend(placed, done, score + weight * v[e])
                placed.pop()
                done.remove(e)

    extend([], set(), 0.0)
    return best


def _is_permutation(order, n):
    order = np.asarray(order)
    return order.ndim == 1 and np.array_equal(np.sort(order), np.arange(n))


# ---------------------------------------------------------------- CATCH


def test_catch_matches_definition():
    rng = np.random.default_rng(1)
    v = rng.random((3, 4))
    order = rng.permutation(12)
    expected = sum((12 - r) * v.ravel()[e] for r, e in enumerate(order))
    assert catch(order, v) == pytest.approx(expected)
    assert catch(order, v.ravel()) == pytest.approx(expected)


def test_catch_plus_weighted_completion_time_is_constant():
    rng = np.random.default_rng(2)
    v = rng.random(10)
    for _ in range(5):
        o = rng.permutation(10)
        completion = np.dot(np.arange(1, 11), v[o])
        assert catch(o, v) + completion == pytest.approx(11 * v.sum())


# ---------------------------------------------------------------- the paper's toy example


def test_paper_toy_example():
    h = Hierarchy.from_edges([("F", "I"), ("I", "J"), ("F", "G"), ("G", "H")])
    v = np.array([[5.0, 0.3, 0.9, 0.8, 0.1]])  # F large, so F comes first
    names = [h.classes[i] for i in hier_rank(v, h)]
    assert names[0] == "F"
    assert names[1:] == ["G", "I", "J", "H"]
    assert catch(hier_rank(v, h), v) == pytest.approx(_brute_force_best(v, h))
    # NaiveSort puts J before its parent I
    assert count_violations(naive_sort(v, h), h) > 0


def test_blocks_have_the_mean_of_their_values_and_never_increase():
    rng = np.random.default_rng(3)
    h = Hierarchy.from_parents([None, 0, 0, 1, 1, 2, None, 6, 7])
    v = rng.random((50, 9))
    _r = hier_rank(v, h)
    order, blocks, means = _r.order, _r.blocks, _r.block_means
    b = blocks.ravel()[order]
    mu = means.ravel()[order]
    assert np.all(np.diff(b) >= 0) and b[0] == 0
    assert np.all(np.diff(mu) <= 1e-12)
    for blk in np.unique(b)[:200]:
        members = order[b == blk]
        assert mu[b == blk][0] == pytest.approx(v.ravel()[members].mean())


# ---------------------------------------------------------------- optimality on forests


@settings(max_examples=150, deadline=None)
@given(problems(forests(5), max_events=7))
def test_forest_hier_rank_is_optimal_brute_force(problem):
    h, v = problem
    order = hier_rank(v, h)
    assert _is_permutation(order, v.size)
    assert count_violations(order, h) == 0
    assert catch(order, v) == pytest.approx(_brute_force_best(v, h), rel=1e-9, abs=1e-9)


@pytest.mark.slow
@settings(max_examples=3000, deadline=None)
@given(problems(forests(6), max_events=8))
def test_forest_hier_rank_is_optimal_brute_force_many(problem):
    h, v = problem
    order = hier_rank(v, h)
    assert count_violations(order, h) == 0
    assert catch(order, v) == pytest.approx(_brute_force_best(v, h), rel=1e-9, abs=1e-9)


@settings(max_examples=100, deadline=None)
@given(problems(forests(12), max_events=40, max_objects=4))
def test_forest_hier_rank_equals_exact_solver(problem):
    h, v = problem
    fast = hier_rank(v, h)
    exact = hier_rank(v, h, method="exact")
    assert count_violations(exact, h) == 0
    assert catch(fast, v) == pytest.approx(catch(exact, v), rel=1e-9, abs=1e-9)
    # on a forest the DAG heuristic is exact too
    assert catch(hier_rank(v, h, method="relaxed"), v) == pytest.approx(catch(fast, v))


@settings(max_examples=100, deadline=None)
@given(problems(dags(5), max_events=7))
def test_exact_solver_is_optimal_on_dags_brute_force(problem):
    h, v = problem
    order = hier_rank(v, h, method="exact")
    assert count_violations(order, h) == 0
    assert catch(order, v) == pytest.approx(_brute_force_best(v, h), rel=1e-9, abs=1e-9)


# ---------------------------------------------------------------- consistency everywhere


@settings(max_examples=150, deadline=None)
@given(problems(st.one_of(forests(10), dags(10)), max_events=60, max_objects=6))
def test_every_method_is_a_consistent_permutation(problem):
    h, v = problem
    methods = ["auto", "relaxed", "sidney", "exact"] + (["horn"] if h.is_forest else [])
    for method in methods:
        order = hier_rank(v, h, method=method)
        assert _is_permutation(order, v.size), method
        assert count_violations(order, h) == 0, method
        assert count_violations(order, h, pairs="edges") == 0, method
    assert _is_permutation(naive_sort(v, h), v.size)


@settings(max_examples=100, deadline=None)
@given(problems(st.one_of(forests(8), dags(8)), max_events=40, max_objects=5))
def test_naive_sort_with_equal_values_has_no_violations(problem):
    h, v = problem
    tied = np.round(v * 2) / 2  # many ties
    order = naive_sort(tied, h)
    assert count_violations(order, h) == 0 or np.any(
        tied.ravel()[order][:-1] > tied.ravel()[order][1:]
    )
    # ties only: nothing but ties, so no violation at all
    flat = np.full_like(v, 0.5)
    assert count_violations(naive_sort(flat, h), h) == 0
    # sorted by value
    assert np.all(np.diff(tied.ravel()[order]) <= 0)


@settings(max_examples=100, deadline=None)
@given(problems(st.one_of(forests(8), dags(8)), max_events=40, max_objects=5))
def test_naive_sort_is_the_documented_sort_of_python_tuples(problem):
    """The order is (-value, depth, object, class name), written here with Python's sorted over tuples; the
    library builds it with one stable sort over a depth-level order (audit26), not with these keys."""
    h, v = problem
    tied = np.round(v * 2) / 2  # many ties
    k = h.n_classes
    depth = h.depth
    expected = sorted(range(tied.size), key=lambda e: (-tied.flat[e], depth[e % k], e // k, h.classes[e % k]))
    assert np.asarray(naive_sort(tied, h)).tolist() == expected


def test_naive_sort_ties_respect_a_deep_chain():
    h = Hierarchy.from_parents([None, 0, 1, 2, 3])
    v = np.zeros((3, 5))
    assert count_violations(naive_sort(v, h), h) == 0


# ---------------------------------------------------------------- the DAG heuristic against the optimum

# The relaxed DAG method has no worst-case factor. Measured on random DAGs of
# 2..7 classes, 1..3 objects, values in [0, 1]: worst CATCH(relaxed) / CATCH(exact)
# 0.9149 over 4,000 cases (bench/ranking.py --dag-gap, seed 0) and 0.8238 over
# six more runs of 2,000 cases from the same generator (seeds 0-5); the test
# asserts 0.75, a margin below the worst seen.
RELAXED_BOUND = 0.75


@settings(max_examples=200, deadline=None)
@given(problems(dags(7), max_events=14))
def test_relaxed_dag_method_is_close_to_optimal(problem):
    h, v = problem
    v = np.abs(v) / max(1.0, np.abs(v).max())  # values in [0, 1], like mLPRs
    relaxed = catch(hier_rank(v, h, method="relaxed"), v)
    best = catch(hier_rank(v, h, method="exact"), v)
    assert relaxed <= best + 1e-9
    if best > 0:
        assert relaxed / best >= RELAXED_BOUND


# ---------------------------------------------------------------- Sidney decomposition


def _closed_sets(hierarchy):
    """Every ancestor-closed set of classes as a bit mask (tiny hierarchies)."""
    k = hierarchy.n_classes
    masks = [sum(1 << int(p) for p in ps) for ps in hierarchy.parent_indices]
    return [
        s for s in range(1 << k)
        if all(not (s >> c) & 1 or masks[c] & ~s == 0 for c in range(k))
    ]


def _sidney_profile(row, hierarchy):
    """Brute-force Sidney decomposition of one object: repeatedly take the closed
    superset of the placed classes with the largest mean of its new classes;
    returns the mean of the set at each position (unique, whatever the ties)."""
    k = hierarchy.n_classes
    closed = _closed_sets(hierarchy)
    size = {s: bin(s).count("1") for s in closed}
    total = {s: sum(row[c] for c in range(k) if (s >> c) & 1) for s in closed}
    placed, profile = 0, []
    while size[placed] < k:
        best = max(
            (total[s] - total[placed]) / (size[s] - size[placed])
            for s in closed if s & placed == placed and s != placed
        )
        step = max(
            (s for s in closed if s & placed == placed and s != placed
             and np.isclose((total[s] - total[placed]) / (size[s] - size[placed]), best, rtol=1e-12, atol=1e-12)),
            key=size.__getitem__,
        )
        profile += [best] * (size[step] - size[placed])
        placed = step
    return np.array(profile)


def _assert_follows_sidney_profile(h, v):
    _r = hier_rank(v, h, method="sidney")
    order, _, means = _r.order, _r.blocks, _r.block_means
    k = h.n_classes
    for m in range(v.shape[0]):
        own = order[order // k == m] % k
        np.testing.assert_allclose(means[m, own], _sidney_profile(v[m], h), rtol=1e-9, atol=1e-9)


@settings(max_examples=150, deadline=None)
@given(problems(st.one_of(forests(7), dags(7)), max_events=21))
def test_sidney_follows_the_brute_force_sidney_decomposition(problem):
    # the order within each object has the brute-force decomposition's mean at
    # every position: HierRank's block means along the object's order
    _assert_follows_sidney_profile(*problem)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(problems(dags(11), max_events=22, max_objects=2))
def test_sidney_follows_the_brute_force_sidney_decomposition_larger(problem):
    _assert_follows_sidney_profile(*problem)


@settings(max_examples=200, deadline=None)
@given(problems(dags(7), max_events=14))
def test_sidney_is_within_factor_two_of_optimal_completion_time(problem):
    # Chekuri & Motwani (1999): sum V C <= 2 * optimum, for non-negative V
    h, v = problem
    v = np.abs(v)
    n = v.size
    total = (n + 1) * v.sum()  # CATCH + sum V C
    order = hier_rank(v, h, method="sidney")
    assert count_violations(order, h) == 0
    best = catch(hier_rank(v, h, method="exact"), v)
    ours = catch(order, v)
    assert ours <= best + 1e-9
    assert total - ours <= 2 * (total - best) + 1e-9


@settings(max_examples=150, deadline=None)
@given(problems(forests(12), max_events=48, max_objects=4))
def test_sidney_equals_horn_on_forests(problem):
    h, v = problem
    assert catch(hier_rank(v, h, method="sidney"), v) == pytest.approx(
        catch(hier_rank(v, h, method="horn"), v), rel=1e-9, abs=1e-9
    )


def test_sidney_on_a_diamond_by_hand():
    # after A, the closed sets are {B} 0.1, {C} 0.5, {B, C} 0.3 and {B, C, D}
    # (0.1 + 0.5 + 0.95) / 3 = 0.5167: the Sidney sets are {A}, {B, C, D}
    h = Hierarchy.from_edges([("A", "B"), ("A", "C"), ("B", "D"), ("C", "D")])
    v = np.array([[0.9, 0.1, 0.5, 0.95]])
    _r = hier_rank(v, h, method="sidney")
    order, _, means = _r.order, _r.blocks, _r.block_means
    assert [h.classes[i] for i in order][0] == "A"
    np.testing.assert_allclose(means[0, 1:], [(0.1 + 0.5 + 0.95) / 3] * 3)


# ---------------------------------------------------------------- the certificate


@settings(max_examples=200, deadline=None)
@given(problems(dags(7), max_events=14))
def test_bound_is_at_least_the_dag_optimum(problem):
    h, v = problem
    bound = hier_rank_bound(v, h)
    best = catch(hier_rank(v, h, method="exact"), v)
    assert bound >= best - 1e-9
    for method in ("relaxed", "sidney"):
        assert catch(hier_rank(v, h, method=method), v) <= bound + 1e-9


@settings(max_examples=100, deadline=None)
@given(problems(forests(10), max_events=30, max_objects=3))
def test_bound_is_the_optimum_on_forests(problem):
    h, v = problem
    assert hier_rank_bound(v, h) == pytest.approx(
        catch(hier_rank(v, h, method="exact"), v), rel=1e-9, abs=1e-9
    )


def test_bound_certifies_a_ranking_on_a_larger_dag():
    rng = np.random.default_rng(5)
    parents = [None] + [sorted(set(rng.integers(0, i, size=2).tolist())) for i in range(1, 60)]
    h = Hierarchy.from_parents(parents)
    v = rng.random((20, 60)) * 0.8 ** np.asarray(h.depth)
    bound = hier_rank_bound(v, h)
    for method in ("relaxed", "sidney"):
        ratio = catch(hier_rank(v, h, method=method), v) / bound
        assert 0 < ratio <= 1


# ---------------------------------------------------------------- count_violations


def test_count_violations_matches_pair_loop():
    rng = np.random.default_rng(4)
    h = Hierarchy.from_parents([None, 0, 0, [1, 2], 3, None])
    order = rng.permutation(4 * 6)
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    anc = h.ancestor_matrix
    expected = sum(
        rank[m * 6 + k] < rank[m * 6 + a]
        for m in range(4) for k in range(6) for a in range(6) if anc[k, a]
    )
    assert count_violations(order, h) == expected
    edges = sum(rank[m * 6 + c] < rank[m * 6 + p] for m in range(4) for p, c in h.edge_indices)
    assert count_violations(order, h, pairs="edges") == edges


# ---------------------------------------------------------------- bad input


@pytest.fixture
def small():
    return Hierarchy.from_parents([None, 0, 0, [1, 2]])


def test_values_with_wrong_number_of_columns(small):
    with pytest.raises(InputError, match="values has 3 columns but the hierarchy has 4"):
        hier_rank(np.zeros((2, 3)), small)
    with pytest.raises(InputError, match="values"):
        naive_sort(np.zeros((2, 3)), small)


def test_values_with_nan(small):
    v = np.zeros((2, 4))
    v[1, 2] = np.nan
    with pytest.raises(InputError, match="values must be finite"):
        hier_rank(v, small)
    with pytest.raises(InputError, match="values must be finite"):
        catch(np.arange(8), v)


def test_order_not_a_permutation(small):
    v = np.zeros((2, 4))
    with pytest.raises(InputError, match="order must be a permutation.*appears 2 times"):
        catch([0, 0, 1, 2, 3, 4, 5, 6], v)
    with pytest.raises(InputError, match="order must be a permutation of the 8 events"):
        catch([0, 1, 2], v)
    with pytest.raises(InputError, match="out of range"):
        count_violations([0, 1, 2, 3, 4, 5, 6, 9], small)


def test_count_violations_wrong_length(small):
    with pytest.raises(InputError, match="ranking must be a Ranking or a 1-D permutation of M\\*4 events"):
        count_violations(np.arange(6), small)
    other = hier_rank(np.zeros((2, 4)), Hierarchy.from_edges([("a", "b"), ("a", "c"), ("b", "d")]))
    with pytest.raises(InputError, match="not the hierarchy's classes"):
        count_violations(other, small)


def test_exact_refuses_large_hierarchy():
    h = Hierarchy.from_parents([None] * 40)  # 2**40 ancestor-closed sets
    with pytest.raises(TooLargeError, match="method='exact'.*more than"):
        hier_rank(np.zeros((1, 40)), h, method="exact")


def test_unknown_method_and_horn_on_dag(small):
    with pytest.raises(InputError, match="method must be one of"):
        hier_rank(np.zeros((1, 4)), small, method="sidney-typo")
    with pytest.raises(InputError, match="method='horn' needs a forest"):
        hier_rank(np.zeros((1, 4)), small, method="horn")


def test_hierarchy_must_be_a_hierarchy():
    with pytest.raises(TypeError, match="hierarchy must be an hmcpgm.Hierarchy"):
        hier_rank(np.zeros((1, 2)), [[0, 1]])
    with pytest.raises(TypeError, match="hierarchy must be an hmcpgm.Hierarchy"):
        hier_rank_bound(np.zeros((1, 2)), [[0, 1]])


def test_sidney_and_bound_bad_values(small):
    with pytest.raises(InputError, match="values has 3 columns but the hierarchy has 4"):
        hier_rank(np.zeros((2, 3)), small, method="sidney")
    with pytest.raises(InputError, match="values has 3 columns but the hierarchy has 4"):
        hier_rank_bound(np.zeros((2, 3)), small)
    v = np.zeros((2, 4))
    v[0, 1] = np.inf
    with pytest.raises(InputError, match="values must be finite"):
        hier_rank(v, small, method="sidney")
    with pytest.raises(InputError, match="values must be finite"):
        hier_rank_bound(v, small)


def test_a_nan_in_values_given_with_a_ranking_is_named_by_row_and_class():
    """catch and the cutoffs checked the ranked copy and named the NaN's ranked position ("index (3,)")."""
    from hmcpgm.decision import choose_cutoff

    h = Hierarchy.from_parents([None, 0])
    r = hier_rank([[0.1, 0.05], [0.9, 0.8]], h)
    bad = [[0.1, np.nan], [0.9, 0.8]]
    for call in (lambda: catch(r, bad), lambda: choose_cutoff(r, [[0, 0], [1, 1]], values=bad)):
        with pytest.raises(InputError, match=r"the first at row 0, class 1 \(nan\)"):
            call()


@settings(max_examples=60, deadline=None)
@given(h=hierarchies(kind="forest", max_classes=30))
def test_forest_depths_walk_each_class_once_and_equal_the_hierarchy_s_depths(h):
    """forest_parts walked every class up to its root, K x depth steps: 9 s for a chain of 8,000 classes, where
    HierRank's documented cost is O(K log K) an object (a review, audit44); the depths are the hierarchy's."""
    from hmcpgm.ranking._horn import forest_depths

    parent = np.array([ps[0] if len(ps) else -1 for ps in h.parent_indices])
    np.testing.assert_array_equal(forest_depths(parent), h.depth)
    chain = np.arange(-1, 5000)  # each class the child of the one before: the walk with memory is linear
    np.testing.assert_array_equal(forest_depths(chain), np.arange(5001))


def test_integer_object_labels_stay_integers_so_a_ranking_file_is_written_in_blocks():
    """Object numbers became Python objects, which sent a ranking file to pandas' writer, one write a line: 12,001
    system calls for 12,000 events on standard output, where the fast writer makes 2."""
    import pandas as pd

    from hmcpgm import Ranking
    from hmcpgm._csvwrite import _runs

    h = Hierarchy.from_edges([("r", "a"), ("r", "b")])  # class names as a hierarchy file gives them
    values = np.random.default_rng(0).random((4, 3))
    ranked = hier_rank(values, h)
    for index, kind in [(np.arange(1, 5), "i"), (pd.RangeIndex(10, 14), "i"), (["a", "b", "c", "d"], "O")]:
        labelled = Ranking(ranked.order, ranked.n_objects, h.classes, block_means=ranked.block_means, index=index)
        frame = labelled.to_frame(values)
        assert frame["object"].dtype.kind == kind and _runs(frame) is not None
        assert list(frame["object"]) == [list(index)[i] for i in ranked.objects]
