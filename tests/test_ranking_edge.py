"""Edge cases of the rankings: inputs a demanding user tries that the main tests do not."""

from dataclasses import astuple

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import forests, hierarchies, value_matrices

from hmcpgm import Hierarchy, InputError, Ranking, bayes_cutoff, catch, choose_cutoff, hier_rank, naive_sort
from hmcpgm.metrics import hit_curve
from hmcpgm.ranking import certify, count_violations, hier_rank_bound


@pytest.fixture
def tree():
    return Hierarchy.from_edges([("a", "b"), ("a", "c"), ("x", "y")])


# ---------------------------------------------------------------------- row index of a ranked DataFrame
def _frames(tree):
    rng = np.random.default_rng(3)
    index = ["p", "q", "r", "s"]
    values = pd.DataFrame(rng.random((4, 5)), columns=tree.classes, index=index)
    labels = pd.DataFrame(tree.close_labels((rng.random((4, 5)) < 0.5).astype(int)), columns=tree.classes,
                          index=index)
    return values, labels


def test_labels_frame_in_another_row_order_is_paired_by_index(tree):
    # the Ranking keeps the values' row index: a labels DataFrame with the same objects in
    # another order must describe each object by its own row, as the estimators pair rows
    values, labels = _frames(tree)
    ranking = hier_rank(values, tree)
    shuffled = labels.iloc[[2, 0, 3, 1]]
    np.testing.assert_array_equal(hit_curve(ranking, shuffled), hit_curve(ranking, labels.to_numpy()))
    np.testing.assert_equal(astuple(choose_cutoff(ranking, shuffled)),
                            astuple(choose_cutoff(ranking, labels.to_numpy())))
    assert catch(ranking, values.iloc[::-1]) == pytest.approx(catch(ranking, values.to_numpy()))
    np.testing.assert_equal(astuple(bayes_cutoff(ranking, values.iloc[::-1], rule="max_f1")),
                            astuple(bayes_cutoff(ranking, values.to_numpy(), rule="max_f1")))
    np.testing.assert_array_equal(ranking.ranked(values.iloc[::-1]), ranking.ranked(values.to_numpy()))


def test_labels_frame_of_other_objects_is_refused(tree):
    values, labels = _frames(tree)
    ranking = hier_rank(values, tree)
    other = labels.set_axis(["p", "q", "r", "t"])
    for call in (lambda: hit_curve(ranking, other), lambda: choose_cutoff(ranking, other),
                 lambda: ranking.ranked(other)):
        with pytest.raises(InputError, match="row indexes"):
            call()


# ---------------------------------------------------------------------- certify
def test_certify_a_ranking_of_another_column_order_is_refused():
    # the ranking's flat indices m*K + k name columns in ITS class order; a hierarchy with
    # the same classes in another order would pair the events with other classes' values
    edges = [("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")]
    h1 = Hierarchy.from_edges(edges, classes=["a", "b", "c", "d"])
    h2 = Hierarchy.from_edges(edges, classes=["d", "c", "b", "a"])
    values = pd.DataFrame([[0.9, 0.1, 0.2, 0.8], [0.3, 0.6, 0.1, 0.2]], columns=["a", "b", "c", "d"])
    ranking = hier_rank(values, h1)
    assert certify(ranking, values, h1).catch == pytest.approx(catch(ranking, values))
    with pytest.raises(InputError, match="classes"):
        certify(ranking, values, h2)


def test_certify_pairs_a_values_frame_by_the_ranking_row_index(tree):
    values, _ = _frames(tree)
    ranking = hier_rank(values, tree)
    assert certify(ranking, values.iloc[::-1], tree) == certify(ranking, values, tree)


# ---------------------------------------------------------------------- magnitude of the values
_DAG = [("a", "c"), ("b", "c"), ("c", "d"), ("a", "d"), ("b", "e")]
_METHODS = ["auto", "greedy", "relaxed", "sidney", "lagrangian", "exact"]


def test_values_whose_sums_overflow_are_refused():
    # sums of block values overflowed to inf: block means of inf, another order (silently),
    # or an IndexError inside a kernel; a one-line error names the argument instead
    h = Hierarchy.from_edges(_DAG, classes=["d", "c", "e", "b", "a"])
    v = np.array([[1e308, 1.5e308, 1.2e308, 1e308, 1.6e308], [1.1e308, -1e308, 1e308, 1.6e308, 1e308]])
    for method in _METHODS:
        with pytest.raises(InputError, match="values"):
            hier_rank(v, h, method)
    with pytest.raises(InputError, match="values"):
        hier_rank_bound(v, h)


@pytest.mark.parametrize("method", _METHODS + ["horn"])
def test_ranking_is_invariant_to_scaling_by_a_power_of_two(method):
    # multiplying by 2**e is exact: every accepted magnitude ranks as the small values do
    edges = [("a", "c"), ("c", "d"), ("b", "e")] if method == "horn" else _DAG
    h = Hierarchy.from_edges(edges, classes=["d", "c", "e", "b", "a"])
    small = np.random.default_rng(5).uniform(-1, 1, (6, 5))
    for e in (-1000, 600, 1010):
        big = small * 2.0 ** e
        ranking, reference = hier_rank(big, h, method), hier_rank(small, h, method)
        np.testing.assert_array_equal(np.asarray(ranking), np.asarray(reference))
        np.testing.assert_allclose(ranking.block_means, reference.block_means * 2.0 ** e, rtol=1e-12)


# ---------------------------------------------------------------------- memory of the exact method
@pytest.mark.slow
def test_exact_method_memory_does_not_grow_with_the_objects():
    # the dynamic programme held (lattice edges x objects) arrays at once: 252 MB for 4,000
    # objects of this 13-class DAG, growing linearly (tens of GB for 10^6 objects)
    import tracemalloc

    h = Hierarchy.from_edges([("r", f"c{i}") for i in range(10)] + [("c0", "d"), ("c1", "d")])
    v = np.random.default_rng(0).random((6000, h.n_classes))
    v[::7] = np.round(v[::7], 1)  # ties
    tracemalloc.start()
    try:
        ranking = hier_rank(v, h, "exact")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 200 * 2 ** 20
    # objects solved in other chunks keep the order they get alone, which is optimal
    for m in (0, 7, 4000, 5999):
        alone = hier_rank(v[m:m + 1], h, "exact")
        np.testing.assert_array_equal(ranking.class_indices[ranking.objects == m], np.asarray(alone))
        assert catch(alone, v[m:m + 1]) == pytest.approx(catch(hier_rank(v[m:m + 1], h, "auto"), v[m:m + 1]))
    assert catch(ranking, v) == pytest.approx(catch(hier_rank(v, h, "auto"), v), rel=1e-12)


# ---------------------------------------------------------------------- Ranking.restrict
def test_restrict_to_one_class_named_by_a_string():
    # a string is one class name, not a sequence of one-letter names ("ab" kept "a" and "b")
    ranking = Ranking([1, 0, 3, 2], 1, ("a", "b", "ab", "c"))
    assert np.asarray(ranking.restrict("ab")).tolist() == [0]
    assert ranking.restrict("ab").classes == ("ab",)
    with pytest.raises(InputError, match="unknown"):
        ranking.restrict("abc")


def test_restrict_to_one_class_named_by_an_int_and_bad_names_are_one_line():
    ranking = Ranking([3, 0, 1, 2], 2, (0, 1))  # make_paper_synthetic's classes are ints
    assert ranking.restrict(1).classes == (1,) and np.asarray(ranking.restrict(1)).tolist() == [1, 0]
    for bad in (5, [["a"]], [0, 9]):  # TypeError from the handler itself before (an int, an unhashable name)
        with pytest.raises(InputError, match="classes must be classes of the ranking, got unknown"):
            ranking.restrict(bad)
    with pytest.raises(InputError, match=r"classes must be distinct names; \['a'\] appear more than once"):
        Ranking([0, 1], 1, ("a", "a"))  # restrict("a") kept only the last column


@pytest.mark.parametrize("method", [np.array(["horn"]), np.array(["horn", "exact"])])
def test_a_method_given_as_an_array_is_refused(method):
    """One element was accepted and stored as an array; two raised numpy's 'truth value is ambiguous'."""
    with pytest.raises(InputError, match="method must be one of"):
        hier_rank([[0.2, 0.9]], Hierarchy.from_parents([None, 0]), method=method)


# ---------------------------------------------------------------------- a pandas Series is one object
def test_series_labelled_by_class_is_aligned_by_name(tree):
    # a Series indexed by class names in another order was read by position
    row = pd.Series({"y": 0.1, "c": 0.7, "a": 0.2, "x": 0.9, "b": 0.4})
    array = row[list(tree.classes)].to_numpy()[None, :]
    for rank in (hier_rank, naive_sort):
        np.testing.assert_array_equal(np.asarray(rank(row, tree)), np.asarray(rank(array, tree)))
    ranking = hier_rank(array, tree)
    assert catch(ranking, row) == catch(ranking, array)
    np.testing.assert_array_equal(hit_curve(ranking, row > 0.3), hit_curve(ranking, array > 0.3))
    with pytest.raises(InputError, match="missing"):
        hier_rank(row.drop("b"), tree)


@pytest.mark.parametrize("rank", [hier_rank, naive_sort])
def test_series_labelled_by_class_gives_labelled_output_as_its_one_row_frame(tree, rank):
    # a labelled Series was aligned by name but its Ranking had no index: top() came back a bare array
    row = pd.Series({"y": 0.1, "c": 0.7, "a": 0.2, "x": 0.9, "b": 0.4}, name="g1")
    got, want = rank(row, tree), rank(row.to_frame().T, tree)
    assert list(got.index) == ["g1"]
    for r in (0, 3, 5):
        pd.testing.assert_frame_equal(got.top(r), want.top(r))
    pd.testing.assert_frame_equal(got.labelled(got.block_means), want.labelled(want.block_means))
    pd.testing.assert_frame_equal(got.to_frame(), want.to_frame())
    unnamed = rank(row.rename(None), tree).top(2)  # a Series without a name is object 0, as series_row makes it
    assert unnamed.index.tolist() == [0] and unnamed.columns.tolist() == list(tree.classes)


@pytest.mark.parametrize("rank", [hier_rank, naive_sort])
def test_series_labelled_by_other_names_is_refused_in_one_line(tree, rank):
    row = pd.Series({"y": 0.1, "c": 0.7, "a": 0.2, "x": 0.9, "b": 0.4})
    cases = {"missing": row.drop("b"), "'z'": row.rename({"y": "z"}),
             "repeats": pd.concat([row, row[["a"]]])}
    for needle, bad in cases.items():
        with pytest.raises(InputError, match="values") as exc:
            rank(bad, tree)
        message = str(exc.value)
        assert needle in message and "Series" in message and "\n" not in message


def test_series_without_labels_is_positional(tree):
    flat = np.random.default_rng(0).random(10)
    ranking = hier_rank(pd.Series(flat), tree)
    np.testing.assert_array_equal(np.asarray(ranking), np.asarray(hier_rank(flat.reshape(2, 5), tree)))
    assert catch(ranking, pd.Series(flat)) == catch(ranking, flat)


# ---------------------------------------------------------------------- greedy on forests
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_greedy_on_a_forest_is_optimal_and_equals_horn_without_ties(data):
    # with tied groups (all values 0 under one root: c0, c1, c2, c3 against c0, c1, c3, c2)
    # greedy and horn may order them differently; both are optimal
    h = data.draw(forests(max_classes=8))
    v = data.draw(value_matrices(h.n_classes, max_objects=3))
    greedy, horn = hier_rank(v, h, "greedy"), hier_rank(v, h, "horn")
    assert count_violations(greedy, h) == 0
    assert catch(greedy, v) == pytest.approx(catch(horn, v), rel=1e-12, abs=1e-12)
    distinct = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1))).random(v.shape)
    np.testing.assert_array_equal(np.asarray(hier_rank(distinct, h, "greedy")), np.asarray(hier_rank(distinct, h)))


# ---------------------------------------------------------------------- column order
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_optimum_does_not_depend_on_the_column_order(data):
    # the same hierarchy and values with the columns in another order: the exact methods reach
    # the same CATCH, and on distinct values horn ranks the same (object, class) events in turn
    h = data.draw(hierarchies(max_classes=8))
    v = data.draw(value_matrices(h.n_classes, max_objects=3))
    perm = data.draw(st.permutations(range(h.n_classes)))
    h2 = Hierarchy.from_edges(h.edges, classes=[h.classes[i] for i in perm])
    for method in ("auto", "exact"):
        a, b = hier_rank(v, h, method), hier_rank(v[:, perm], h2, method)
        assert count_violations(b, h2) == 0
        assert catch(a, v) == pytest.approx(catch(b, v[:, perm]), rel=1e-12, abs=1e-12)
    if h.is_forest:
        distinct = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1))).random(v.shape)
        a, b = hier_rank(distinct, h, "horn"), hier_rank(distinct[:, perm], h2, "horn")
        assert [(m, h.classes[k]) for m, k in zip(a.objects, a.class_indices)] == \
            [(m, h2.classes[k]) for m, k in zip(b.objects, b.class_indices)]


# ---------------------------------------------------------------------- values that are not numbers
@pytest.mark.parametrize("values", [[[0.1, 0.2], [0.3]], [["a", "b"]], "x", {"a": 1}])
def test_values_that_are_not_a_numeric_matrix_are_refused_in_one_line(values):
    # numpy's ValueError / TypeError escaped instead of an error naming the argument
    chain = Hierarchy.from_parents([None, 0])
    for rank in (hier_rank, naive_sort, hier_rank_bound):
        with pytest.raises(InputError, match="values must be a numeric"):
            rank(values, chain)


# ---------------------------------------------------------------------- ties do not follow the column order
def _events_by_name(ranking, hierarchy):
    """The ranking's events as (object, class name), best first."""
    return [(int(m), hierarchy.classes[k]) for m, k in zip(ranking.objects, ranking.class_indices)]


def _same_under_permutation(h, v, perm, method):
    """The ranking of ``v`` on ``h`` and of the permuted columns on the permuted hierarchy, mapped back by name."""
    moved = Hierarchy.from_edges(h.edges, classes=[h.classes[i] for i in perm])
    first, second = hier_rank(v, h, method), hier_rank(v[:, perm], moved, method)
    assert _events_by_name(second, moved) == _events_by_name(first, h)
    np.testing.assert_array_equal(second.block_means, first.block_means[:, perm])
    np.testing.assert_array_equal(second.blocks, first.blocks[:, perm])


@pytest.mark.parametrize("method", ["auto", "greedy", "lagrangian", "exact", "relaxed", "sidney"])
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_no_method_depends_on_the_column_order(method, data):
    # tied parents (same depth) and tied groups (same mean) were ordered by column index
    # (relaxed and sidney until 8267345, the other methods until the whole of hier_rank ran in name order)
    h = data.draw(hierarchies(max_classes=9, int_names=data.draw(st.booleans())))  # columns not topological
    v = data.draw(value_matrices(h.n_classes, max_objects=3))
    _same_under_permutation(h, v, data.draw(st.permutations(range(h.n_classes))), method)


@pytest.mark.parametrize("method", ["auto", "greedy", "lagrangian", "exact", "relaxed", "sidney"])
def test_ties_follow_class_names_of_mixed_types(method):
    # names that do not compare with each other (str, int, tuple) still give one order
    h = Hierarchy.from_edges([("r", 2), ("r", ("t", 1)), (2, "z"), (("t", 1), "z"), ("r", 0)])
    v = np.zeros((2, h.n_classes))
    for perm in ([4, 3, 2, 1, 0], [2, 0, 4, 1, 3], [1, 4, 0, 3, 2]):
        _same_under_permutation(h, v, perm, method)


@pytest.mark.parametrize("method", ["auto", "horn", "greedy", "lagrangian", "exact", "relaxed", "sidney"])
def test_tied_roots_come_out_by_name(method):
    # three equal roots: they came out c, a, b after a permutation (column order, not by name)
    h = Hierarchy.from_edges([], classes=["a", "b", "c"])
    _same_under_permutation(h, np.zeros((1, 3)), [2, 0, 1], method)
    moved = Hierarchy.from_edges([], classes=["c", "a", "b"])
    assert _events_by_name(hier_rank(np.zeros((2, 3)), moved, method), moved) == \
        [(0, "a"), (0, "b"), (0, "c"), (1, "a"), (1, "b"), (1, "c")]


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_naive_sort_does_not_depend_on_the_column_order(data):
    # ties by depth, then object, then class name: a column permutation changes nothing
    h = data.draw(hierarchies(max_classes=9, int_names=data.draw(st.booleans())))
    v = np.round(data.draw(value_matrices(h.n_classes, max_objects=3)), 1)  # many ties
    perm = data.draw(st.permutations(range(h.n_classes)))
    moved = Hierarchy.from_edges(h.edges, classes=[h.classes[i] for i in perm])
    first, second = naive_sort(v, h), naive_sort(v[:, perm], moved)
    assert _events_by_name(second, moved) == _events_by_name(first, h)
