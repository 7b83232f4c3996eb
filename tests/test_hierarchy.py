import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import hierarchies

from hmcpgm import Hierarchy, HierarchyError, InputError, LabelError


def paper_forest():
    # SPEC section 9, 1-based parents with 0 = root
    parents = [0, 0, 0, 2, 3, 3, 4, 4, 4, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 12, 13, 13, 13, 14]
    return Hierarchy.from_parents([p - 1 for p in parents])


def test_from_parents_forest_structure():
    h = paper_forest()
    assert h.n_classes == 25
    assert h.kind == "forest"
    assert h.roots == (0, 1, 2)
    assert h.parents(3) == (1,)
    assert h.children(5) == (9, 10)
    assert h.ancestors(19) == (2, 5, 10)  # class 20 -> 11 -> 6 -> 3 (1-based)
    assert set(h.descendants(2)) == {4, 5, 9, 10, 17, 18, 19}
    assert h.neighbourhood(5) == (2, 9, 10)


def test_topological_order_and_depth():
    h = paper_forest()
    pos = np.empty(h.n_classes, int)
    pos[h.topological_order] = np.arange(h.n_classes)
    for p, c in h.edge_indices:
        assert pos[p] < pos[c]
    assert h.depth[0] == 0 and h.depth[24] == 4  # 25 -> 14 -> 8 -> 4 -> 2


def test_from_edges_names_and_order():
    h = Hierarchy.from_edges([("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")])
    assert h.classes == ("a", "b", "c", "d")
    assert h.kind == "dag"
    assert h.parents("d") == ("b", "c")
    assert h.index("c") == 2
    assert h.ancestors("d") == ("a", "b", "c")


def test_tree_and_networkx_roundtrip():
    g = nx.DiGraph([("r", "x"), ("r", "y")])
    h = Hierarchy.from_networkx(g)
    assert h.kind == "tree" and h.is_tree and h.is_forest
    g.add_edge("y", "z")  # the hierarchy kept its own copy
    assert "z" not in h
    assert Hierarchy.from_networkx(h.to_networkx()) == h
    with pytest.raises(nx.NetworkXError):
        h.graph.add_edge("x", "q")  # frozen


def test_isolated_classes_via_classes_argument():
    h = Hierarchy.from_edges([(0, 1)], classes=[0, 1, 2])
    assert h.roots == (0, 2)
    assert h.kind == "forest"


@pytest.mark.parametrize(
    "build, match",
    [
        (lambda: Hierarchy.from_edges([("a", "b"), ("b", "c"), ("c", "a")]), "cycle"),
        (lambda: Hierarchy.from_edges([("a", "a")]), "self loop"),
        (lambda: Hierarchy.from_edges([("a", "b"), ("a", "b")]), "twice"),
        (lambda: Hierarchy.from_edges([("a", "b")], classes=["a", "b", "a"]), "duplicate"),
        (lambda: Hierarchy.from_edges([("a", "b")], classes=["a"]), "not in classes"),
        (lambda: Hierarchy.from_parents([None, 5]), r"parents\[1\]"),
        (lambda: Hierarchy.from_parents([None, [0, 0]]), r"parents\[1\] lists a parent twice"),
        (lambda: Hierarchy.from_parents([None, "x"]), r"parents\[1\]"),
        (lambda: Hierarchy.from_parents([]), "at least one class"),
        (lambda: Hierarchy.from_edges(["abc"]), "pairs"),
    ],
)
def test_bad_hierarchies_raise_clear_errors(build, match):
    with pytest.raises(HierarchyError, match=match):
        build()


def test_unknown_class_name():
    h = paper_forest()
    with pytest.raises(HierarchyError, match="unknown class 'nope'"):
        h.parents("nope")


def test_close_and_check_labels():
    h = Hierarchy.from_edges([("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")])
    y = np.array([[0, 0, 0, 1], [0, 1, 0, 0], [1, 0, 1, 0]])
    closed = h.close_labels(y)
    assert closed.tolist() == [[1, 1, 1, 1], [1, 1, 0, 0], [1, 0, 1, 0]]
    assert h.violations(y) == 3  # row 0: d without b and without c; row 1: b without a
    h.check_labels(closed)
    with pytest.raises(LabelError, match="row 0"):
        h.check_labels(y)
    with pytest.raises(LabelError, match="only 0 and 1"):
        h.check_labels([[2, 0, 0, 0]])
    with pytest.raises(LabelError, match="shape"):
        h.check_labels([[1, 0]])


@st.composite
def random_dags(draw, max_k=12):
    k = draw(st.integers(1, max_k))
    parents = []
    for i in range(k):
        if i == 0:
            parents.append(None)
            continue
        ps = draw(st.lists(st.integers(0, i - 1), max_size=3, unique=True))
        parents.append(ps)
    return Hierarchy.from_parents(parents)


@settings(max_examples=100, deadline=None)
@given(random_dags(), st.integers(0, 2**32 - 1))
def test_closure_is_minimal_consistent_superset(h, seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, size=(5, h.n_classes))
    closed = h.close_labels(y)
    assert h.violations(closed) == 0
    assert np.all(closed >= y)
    # brute force: a class is positive iff it or one of its descendants was positive
    anc = nx.transitive_closure_dag(h.to_networkx())
    for m in range(5):
        expect = set(np.flatnonzero(y[m]))
        for k in list(expect):
            expect |= set(nx.ancestors(anc, k))
        assert set(np.flatnonzero(closed[m])) == expect


def test_from_networkx_multigraph_direction_and_relations():
    import networkx as nx

    g = nx.MultiDiGraph()
    g.add_edge("b", "a", key="is_a")
    g.add_edge("c", "b", key="part_of")
    g.add_edge("c", "b", key="is_a")  # a parallel edge: one edge of the hierarchy
    g.add_edge("c", "a", key="regulates")
    h = Hierarchy.from_networkx(g, direction="child_to_parent", relations=("is_a", "part_of"))
    assert h.parents("c") == ("b",) and h.parents("b") == ("a",) and h.roots == ("a",)
    assert set(Hierarchy.from_networkx(g, direction="child_to_parent").parents("c")) == {"a", "b"}
    down = Hierarchy.from_networkx(nx.DiGraph([("a", "b")]))
    assert down.children("a") == ("b",)
    with pytest.raises(InputError, match="direction must be"):
        Hierarchy.from_networkx(g, direction="up")
    with pytest.raises(HierarchyError, match="Hierarchy.from_networkx reads a MultiDiGraph"):
        Hierarchy(g)


def test_from_obo(tmp_path):
    pytest.importorskip("obonet", reason="needs the obo extra: pip install 'hmcpgm[obo]'")
    path = tmp_path / "mini.obo"
    path.write_text(
        "format-version: 1.2\nontology: mini\n\n"
        "[Term]\nid: GO:1\nname: root\nnamespace: biological_process\n\n"
        "[Term]\nid: GO:2\nname: child\nnamespace: biological_process\nis_a: GO:1\n\n"
        "[Term]\nid: GO:3\nname: part\nnamespace: biological_process\nis_a: GO:1\n"
        "relationship: part_of GO:2\nrelationship: regulates GO:1\n\n"
        "[Term]\nid: GO:4\nname: other\nnamespace: molecular_function\n\n"
        "[Term]\nid: GO:5\nname: gone\nnamespace: biological_process\nis_obsolete: true\n"
    )
    h = Hierarchy.from_obo(path)
    assert set(h.classes) == {"GO:1", "GO:2", "GO:3", "GO:4"}  # the obsolete term is left out
    assert set(h.parents("GO:3")) == {"GO:1", "GO:2"} and h.kind == "dag"
    assert Hierarchy.from_obo(path, relations=("is_a",)).parents("GO:3") == ("GO:1",)
    bp = Hierarchy.from_obo(path, namespace="biological_process")
    assert set(bp.classes) == {"GO:1", "GO:2", "GO:3"}
    with pytest.raises(InputError, match="namespace 'nope' has no term"):
        Hierarchy.from_obo(path, namespace="nope")


@settings(max_examples=30, deadline=None)
@given(hierarchies(max_classes=8, max_parents=3))
def test_ancestor_pairs_are_networkx_ancestors_in_class_then_ancestor_order(h):
    g = h.to_networkx()
    expected = [(k, a) for k, name in enumerate(h.classes) for a in sorted(h.indices(list(nx.ancestors(g, name))))]
    desc, anc = h.ancestor_pairs  # made from the parents' lists (the dense matrix is not made yet)
    assert "ancestor_matrix" not in h.__dict__
    assert list(zip(desc.tolist(), anc.tolist())) == expected
    assert not desc.flags.writeable and not anc.flags.writeable
    again = Hierarchy.from_networkx(g, classes=h.classes)
    again.ancestor_matrix  # noqa: B018 (made first: the pairs are then its True entries)
    assert [a.tolist() for a in again.ancestor_pairs] == [desc.tolist(), anc.tolist()]
    assert desc.dtype == anc.dtype == again.ancestor_pairs[0].dtype == np.intp


def test_close_labels_of_numpy_subclasses_as_of_plain_arrays():
    """An np.matrix (sparse.todense()) gives an ndarray; a masked array is read through its data, as before."""
    h = Hierarchy.from_parents([None, 0])
    with pytest.warns(PendingDeprecationWarning):  # numpy's word on np.matrix
        matrix = np.matrix([[0, 1]])
    closed = h.close_labels(matrix)
    assert type(closed) is np.ndarray and closed.tolist() == [[1, 1]]
    assert h.close_labels(np.ma.array([[0, 1]], mask=[[1, 0]])).tolist() == [[1, 1]]
