"""Edge cases of Hierarchy: odd class names, pickling, malformed inputs, checks against networkx."""

import os
import pickle
import subprocess
import sys

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import hierarchies

from hmcpgm import Hierarchy, HierarchyError
from hmcpgm.exceptions import LabelError


def test_pickle_round_trip_rehashes_in_a_new_process(tmp_path):
    # str hashes differ between processes: a hash cached before pickling must not travel
    path = tmp_path / "h.pkl"
    code = (
        "import pickle, sys; from hmcpgm import Hierarchy; "
        "h = Hierarchy.from_edges([('a', 'b'), ('b', 'c')]); hash(h); h.ancestor_matrix; "
        "open(sys.argv[1], 'wb').write(pickle.dumps(h))"
    )
    import hmcpgm

    root = os.path.dirname(os.path.dirname(os.path.abspath(hmcpgm.__file__)))  # the hmcpgm under test
    env = {**os.environ, "PYTHONHASHSEED": "1", "PYTHONPATH": root}
    subprocess.run([sys.executable, "-c", code, str(path)], check=True, env=env, cwd=root)
    loaded = pickle.loads(path.read_bytes())
    fresh = Hierarchy.from_edges([("a", "b"), ("b", "c")])
    assert loaded == fresh
    assert hash(loaded) == hash(fresh)
    assert fresh in {loaded}


def test_unpickled_hierarchy_stays_read_only():
    h = Hierarchy.from_parents([None, 0, [0, 1]])
    cached = h.ancestor_matrix, h.parent_indices, h.topological_order  # cached before pickling
    assert len(cached) == 3
    g = pickle.loads(pickle.dumps(h))
    assert g == h and g.classes == h.classes
    assert not g.ancestor_matrix.flags.writeable
    assert not g.parent_indices[2].flags.writeable
    assert not g.topological_order.flags.writeable
    assert nx.is_frozen(g.graph)


@pytest.mark.parametrize(
    "build, match",
    [
        (lambda: Hierarchy.from_edges([(None, "a")]), r"edges item 0 .*None"),
        (lambda: Hierarchy.from_edges([("a", "b"), ("b", float("nan"))]), r"edges item 1 .*nan"),
        (lambda: Hierarchy.from_edges([("a", np.float64("nan"))]), "nan"),
        (lambda: Hierarchy.from_edges([(["a"], "b")]), r"edges item 0 .*\['a'\]"),
        (lambda: Hierarchy.from_edges([("a", "b")], classes=["a", "b", None]), r"classes item 2 .*None"),
        (lambda: Hierarchy.from_edges([("a", "b")], classes=["a", "b", {"c"}]), r"classes item 2"),
        (lambda: Hierarchy(nx.DiGraph([("a", "b")]), classes=["a", ["b"]]), r"classes item 1"),
        (lambda: Hierarchy.from_networkx(nx.DiGraph([("a", float("nan"))])), r"graph names a class nan"),
    ],
)
def test_missing_or_unhashable_class_names_are_refused_in_one_line(build, match):
    with pytest.raises(HierarchyError, match=match) as info:
        build()
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    "names",
    [
        [0, 1, 2, 3],
        ["GO:0008150", "GO:0009987", "cell cycle, mitotic", "réponse β"],
        [("a", 1), ("a", 2), ("b", 1), ("b", 2)],
        [np.str_("a"), np.str_("b"), np.str_("c"), np.str_("d")],
        [1, "1", 2.5, ("x",)],
    ],
)
def test_odd_but_valid_class_names_match_networkx(names):
    a, b, c, d = names
    edges = [(c, d), (a, b), (b, d), (a, c)]
    h = Hierarchy.from_edges(edges)
    g = nx.DiGraph(edges)
    for n in names:
        assert set(h.ancestors(n)) == nx.ancestors(g, n)
        assert set(h.descendants(n)) == nx.descendants(g, n)
        assert h.classes[h.index(n)] == n
    assert h.roots == (a,) and h.leaves == (d,)


@pytest.mark.parametrize("entry", [True, False, np.True_, [True], [0, True]])
def test_from_parents_refuses_booleans(entry):
    # True == 1 as an int: [None, True, 0] made class 1 its own parent, [None, 0, False] silently used parent 0
    with pytest.raises(HierarchyError, match=r"parents\[2\]"):
        Hierarchy.from_parents([None, 0, entry])


@pytest.mark.parametrize("edges", [["ab", "bc"], [("a", "b"), "bc"]])
def test_from_edges_refuses_strings_as_pairs(edges):
    # "ab" unpacks into ("a", "b"): a list of edge strings silently became one-letter classes
    with pytest.raises(HierarchyError, match="pairs"):
        Hierarchy.from_edges(edges)


def _reference(h):
    """networkx's answers, from the hierarchy's own edge list."""
    g = nx.DiGraph()
    g.add_nodes_from(h.classes)
    g.add_edges_from(h.edges)
    return g


@settings(max_examples=60, deadline=None)
@given(hierarchies(max_classes=10, max_parents=3), st.data())
def test_structure_matches_networkx_on_shuffled_columns(h, data):
    g = _reference(h)
    pos = {c: i for i, c in enumerate(h.classes)}
    for c in h.classes:
        assert h.ancestors(c) == tuple(sorted(nx.ancestors(g, c), key=pos.get))
        assert h.descendants(c) == tuple(sorted(nx.descendants(g, c), key=pos.get))
        assert h.parents(c) == tuple(sorted(g.predecessors(c), key=pos.get))
        assert h.children(c) == tuple(sorted(g.successors(c), key=pos.get))
    order = [h.classes[k] for k in h.topological_order]
    assert sorted(h.topological_order.tolist()) == list(range(h.n_classes))
    seen = set()
    for c in order:
        assert set(g.predecessors(c)) <= seen
        seen.add(c)
    # depth: longest root path, by brute force over all simple paths from the roots
    for c in h.classes:
        longest = max((len(p) - 1 for r in h.roots for p in nx.all_simple_paths(g, r, c)), default=0)
        assert h.depth[h.index(c)] == longest
    assert {(h.classes[p], h.classes[c]) for p, c in h.edge_indices} == set(g.edges)
    assert len(h.edge_indices) == g.number_of_edges()
    assert set(h.roots) == {c for c in g if g.in_degree(c) == 0}
    assert set(h.leaves) == {c for c in g if g.out_degree(c) == 0}
    for keep in ("deepest", "shallowest"):
        forest = h.spanning_forest(keep)
        for k, p in enumerate(forest):
            parents = h.parent_indices[k]
            if len(parents) == 0:
                assert p == -1
            else:
                best = (max if keep == "deepest" else min)((h.depth[q], q) for q in parents)
                assert (h.depth[p], p) == best
    # subgraph: the chosen classes and all their ancestors, induced edges, column order kept
    names = data.draw(st.lists(st.sampled_from(h.classes), max_size=4))
    if names:
        sub = h.subgraph(names)
        keep = set(names).union(*(nx.ancestors(g, n) for n in names))
        assert sub.classes == tuple(c for c in h.classes if c in keep)
        assert set(sub.edges) == set(g.subgraph(keep).edges)
        for c in sub.classes:
            assert set(sub.ancestors(c)) == nx.ancestors(g, c)


@settings(max_examples=40, deadline=None)
@given(hierarchies(max_classes=8, max_parents=3), st.randoms(use_true_random=False))
def test_equal_hierarchies_built_differently_are_equal_and_hash_equal(h, rnd):
    edges = list(h.edges)
    rnd.shuffle(edges)
    from_edges = Hierarchy.from_edges(edges, classes=h.classes)
    g = nx.DiGraph()
    g.add_nodes_from(h.classes)
    g.add_edges_from(edges)
    from_graph = Hierarchy(g)
    up = nx.DiGraph()
    up.add_nodes_from(reversed(h.classes))
    up.add_edges_from((c, p) for p, c in edges)
    from_nx = Hierarchy.from_networkx(up, classes=list(h.classes), direction="child_to_parent")
    index = {c: i for i, c in enumerate(h.classes)}
    from_parents = Hierarchy.from_parents([[index[p] for p in h.parents(c)] for c in h.classes])
    for other in (from_edges, from_graph, from_nx, pickle.loads(pickle.dumps(h))):
        assert other == h and hash(other) == hash(h)
        assert np.array_equal(other.topological_order, h.topological_order)
        assert np.array_equal(other.ancestor_matrix, h.ancestor_matrix)
    assert np.array_equal(from_parents.ancestor_matrix, h.ancestor_matrix)
    assert set(from_parents.edges) == {tuple(e) for e in h.edge_indices.tolist()}


def test_deep_chain_in_reverse_column_order():
    n = 6000  # deeper than Python's default recursion limit
    h = Hierarchy.from_edges([(f"c{i}", f"c{i + 1}") for i in range(n - 1)], classes=[f"c{i}" for i in range(n)][::-1])
    assert h.topological_order.tolist() == list(range(n))[::-1]
    assert h.depth[0] == n - 1 and h.depth[-1] == 0
    assert len(h.ancestors(f"c{n - 1}")) == n - 1 and h.descendants("c0")[0] == f"c{n - 1}"
    assert h.spanning_forest()[-1] == -1 and h.kind == "tree"
    assert h.subgraph(["c10"]).classes == tuple(f"c{i}" for i in range(11))[::-1]


def test_wide_star_and_many_roots():
    n = 3000
    star = Hierarchy.from_edges([("root", i) for i in range(n)])
    assert star.roots == ("root",) and len(star.leaves) == n and star.kind == "tree"
    assert star.topological_order[0] == 0 and star.depth.max() == 1
    roots = Hierarchy.from_edges([], classes=range(n))
    assert roots.kind == "forest" and len(roots.roots) == n and roots.edge_indices.shape == (0, 2)
    assert roots.topological_order.tolist() == list(range(n))
    assert roots.spanning_forest().tolist() == [-1] * n


@pytest.mark.parametrize("n", [2, 3, 50, 2000])
def test_cycles_of_any_length_are_refused_in_one_line(n):
    edges = [(f"k{i}", f"k{(i + 1) % n}") for i in range(n)] + [("top", "k0")]
    with pytest.raises(HierarchyError, match="cycle") as info:
        Hierarchy.from_edges(edges)
    msg = str(info.value)
    assert "\n" not in msg and len(msg) < 400
    assert any(f"'k{i}'" in msg for i in range(n))


def test_name_queries_do_not_build_the_dense_ancestor_matrix():
    # ancestors / descendants / subgraph of one term of a Gene-Ontology-sized hierarchy must not
    # allocate the (K, K) matrix (K = 40,000 terms: 1.6 GB); checked on a small DAG against networkx
    h = Hierarchy.from_edges([("r", "a"), ("r", "b"), ("a", "c"), ("b", "c"), ("c", "d"), ("x", "d")],
                             classes=["d", "c", "x", "b", "a", "r"])
    g = _reference(h)
    assert h.ancestors("d") == ("c", "x", "b", "a", "r") and set(h.ancestors("d")) == nx.ancestors(g, "d")
    assert h.descendants("r") == ("d", "c", "b", "a")
    assert h.subgraph(["c"]).classes == ("c", "b", "a", "r")
    assert h.subgraph(["c", "x"]).classes == ("c", "x", "b", "a", "r")
    assert "ancestor_matrix" not in vars(h)


@settings(max_examples=60, deadline=None)
@given(hierarchies(max_classes=10, max_parents=3), st.data())
def test_restricting_to_a_subset_keeps_the_ancestor_order_transitively_reduced(h, data):
    from hmcpgm.ontology import restrict_hierarchy

    keep = data.draw(st.lists(st.sampled_from(h.classes), min_size=1, unique=True))
    sub = restrict_hierarchy(h, keep)
    assert sub.classes == tuple(keep)
    g = _reference(h)
    # reference: a -> c in the closure when a is an ancestor of c in the full hierarchy; then reduce
    closure = nx.DiGraph()
    closure.add_nodes_from(keep)
    closure.add_edges_from((a, c) for c in keep for a in nx.ancestors(g, c) if a in set(keep))
    assert set(sub.edges) == set(nx.transitive_reduction(closure).edges)
    for c in keep:
        assert set(sub.ancestors(c)) == nx.ancestors(g, c) & set(keep)


def test_from_obo_leaves_out_obsolete_and_undefined_parents(tmp_path):
    pytest.importorskip("obonet", reason="needs the obo extra: pip install 'hmcpgm[obo]'")
    from hmcpgm.ontology import read_ontology

    path = tmp_path / "mini.obo"
    path.write_text(
        "format-version: 1.2\nontology: mini\n\n"
        "[Term]\nid: GO:1\nname: root\nnamespace: biological_process\n\n"
        "[Term]\nid: GO:2\nname: child\nnamespace: biological_process\nis_a: GO:1\nis_a: GO:9\n\n"
        "[Term]\nid: GO:3\nname: under an obsolete term\nnamespace: biological_process\nis_a: GO:5\n\n"
        "[Term]\nid: GO:5\nname: gone\nnamespace: biological_process\nis_obsolete: true\n"
    )
    with pytest.warns(UserWarning, match=r"does not define, and are left out: \['GO:2 -> GO:9'\]"):
        expected = read_ontology(path).hierarchies["biological_process"]
    for namespace in (None, "biological_process"):
        with pytest.warns(UserWarning, match=r"\['GO:2 -> GO:9'\]") as w:  # GO:5, obsolete, is not named
            h = Hierarchy.from_obo(path, namespace=namespace)
        assert {x.filename for x in w} == {__file__}  # the caller's line, not hmcpgm's (a fixed stacklevel was)
        assert set(h.classes) == {"GO:1", "GO:2", "GO:3"} == set(expected.classes)
        assert set(h.edges) == {("GO:1", "GO:2")} == set(expected.edges)


def test_close_labels_of_a_dataframe_gives_a_dataframe_named_by_class():
    pd = pytest.importorskip("pandas")
    h = Hierarchy.from_edges([("c", "d"), ("a", "b"), ("b", "d"), ("a", "c")], classes=["d", "c", "b", "a"])
    y = pd.DataFrame({"a": [0, 0, 1], "b": [0, 1, 0], "c": [0, 0, 0], "d": [1, 0, 0]}, index=["g1", "g2", "g3"])
    closed = h.close_labels(y)
    assert isinstance(closed, pd.DataFrame)
    assert list(closed.columns) == list(h.classes) and list(closed.index) == ["g1", "g2", "g3"]
    # reference: a class is positive when it or a descendant is (networkx on the edge list)
    g = nx.DiGraph(h.edges)
    for row in y.index:
        pos = {c for c in y.columns if y.loc[row, c]}
        expect = pos.union(*(nx.ancestors(g, c) for c in pos))
        assert {c for c in closed.columns if closed.loc[row, c]} == expect
    assert np.array_equal(h.close_labels(y[list(h.classes)].to_numpy()), closed.to_numpy())


@settings(max_examples=30, deadline=None)
@given(hierarchies(max_classes=9, max_parents=3))
def test_name_queries_agree_before_and_after_the_ancestor_matrix_is_built(h):
    before = [(h.ancestors(c), h.descendants(c)) for c in h.classes]
    assert h.ancestor_matrix.shape == (h.n_classes, h.n_classes)
    assert [(h.ancestors(c), h.descendants(c)) for c in h.classes] == before


@settings(max_examples=60, deadline=None)
@given(hierarchies(max_classes=10, max_parents=3))
def test_topological_order_breaks_ties_by_column_index(h):
    # reference (Kahn's algorithm by hand): always take the smallest column index whose parents are all placed
    placed, order = set(), []
    while len(order) < h.n_classes:
        k = min(j for j in range(h.n_classes) if j not in placed and set(h.parent_indices[j].tolist()) <= placed)
        placed.add(k)
        order.append(k)
    assert h.topological_order.tolist() == order


def test_relations_that_keep_no_edge_are_refused():
    # a simple DiGraph without "relation" attributes: relations=("is_a",) silently dropped every edge
    g = nx.DiGraph([("b", "a"), ("c", "b")])
    with pytest.raises(HierarchyError, match="relations") as info:
        Hierarchy.from_networkx(g, direction="child_to_parent", relations=("is_a",))
    assert "None" in str(info.value)
    m = nx.MultiDiGraph([("b", "a", "is_a"), ("c", "a", "part_of")])
    with pytest.raises(HierarchyError, match="'is_a'"):
        Hierarchy.from_networkx(m, relations="has_part")
    kept = Hierarchy.from_networkx(m, direction="child_to_parent", relations=("part_of",))
    assert kept.edges == (("a", "c"),)


def test_subgraph_of_one_class_name():
    h = Hierarchy.from_edges([("GO:1", "GO:2"), ("GO:2", "GO:3"), ("GO:1", "GO:4"), (("t", 1), "GO:4")])
    assert h.subgraph("GO:3").classes == ("GO:1", "GO:2", "GO:3")  # not the characters of the name
    assert h.subgraph(["GO:3"]) == h.subgraph("GO:3")
    assert h.subgraph(("t", 1)).classes == (("t", 1),)  # a tuple that names a class is that class
    assert h.subgraph([("t", 1), "GO:3"]).classes == ("GO:1", "GO:2", "GO:3", ("t", 1))
    with pytest.raises(HierarchyError, match="unknown class 5"):  # not iterable: one (unknown) name, no TypeError
        h.subgraph(5)


@pytest.mark.parametrize("edges", [None, 3, "ab"])
def test_edges_that_are_no_collection_of_pairs_are_named(edges):
    with pytest.raises(HierarchyError, match=r"edges must be an iterable of \(parent, child\) pairs, got "):
        Hierarchy.from_edges(edges)


def test_numpy_scalar_class_names_become_the_python_names_they_equal():
    # a column order taken from a numpy array held np.str_ names, which numpy 2 prints as np.str_('a')
    # in every message and repr (found by a robustness sweep: "no positive example for 1 classes
    # ([np.str_('c3')])")
    names = np.array(["r", "a", "b"])
    h = Hierarchy.from_edges([(names[0], names[1]), (names[0], names[2])], classes=names[::-1])
    assert h.classes == ("b", "a", "r")
    assert all(type(c) is str for c in h.classes)
    assert all(type(c) is str for edge in h.edges for c in edge)
    assert h.index(np.str_("a")) == 1 and set(h.children("r")) == {"a", "b"}
    ints = Hierarchy.from_edges([(np.int64(0), np.int64(1))])
    assert ints.classes == (0, 1) and all(type(c) is int for c in ints.classes)


def test_error_messages_name_numpy_scalar_classes_as_users_wrote_them():
    from hmcpgm._util import preview
    from hmcpgm.exceptions import LabelError
    from hmcpgm.likelihood import fit_score_model

    assert preview([np.str_("a"), np.int64(2), "b"]) == "['a', 2, 'b']"
    h = Hierarchy.from_edges([(np.str_("r"), np.str_("c3"))])
    y = np.array([[1, 0], [0, 0], [1, 0]])
    with pytest.raises(LabelError, match=r"\(\['c3'\]\)") as info:
        fit_score_model(np.random.default_rng(0).random((3, 2)), y, h, kind="logistic")
    assert "np.str_" not in str(info.value)


def test_a_sparse_label_matrix_is_read_densely_by_the_label_methods():
    # a MultiLabelBinarizer(sparse_output=True) target: read as fit reads y, not refused with
    # numpy's "setting an array element with a sequence"
    sparse = pytest.importorskip("scipy.sparse")
    h = Hierarchy.from_edges([("c", "d"), ("a", "b"), ("b", "d"), ("a", "c")], classes=["d", "c", "b", "a"])
    dense = np.array([[1, 0, 0, 0], [0, 0, 1, 0], [0, 1, 0, 1]])
    for make in (sparse.csr_matrix, sparse.csc_array, sparse.coo_matrix):
        np.testing.assert_array_equal(h.close_labels(make(dense)), h.close_labels(dense))
        assert h.violations(make(dense)) == h.violations(dense) > 0
    with pytest.raises(LabelError, match="row 0, class 'b' holds 2.0"):
        h.close_labels(sparse.csr_matrix(np.array([[0, 0, 2, 0]])))
