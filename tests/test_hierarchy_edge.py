"""Edge cases of Hierarchy: odd class names, pickling, malformed inputs, checks against networkx."""

import os
import pickle
import subprocess
import sys

import networkx as nx
import numpy as np
import pytest

from hmcpgm import Hierarchy, HierarchyError


def test_pickle_round_trip_rehashes_in_a_new_process(tmp_path):
    # str hashes differ between processes: a hash cached before pickling must not travel
    path = tmp_path / "h.pkl"
    code = (
        "import pickle, sys; from hmcpgm import Hierarchy; "
        "h = Hierarchy.from_edges([('a', 'b'), ('b', 'c')]); hash(h); h.ancestor_matrix; "
        "open(sys.argv[1], 'wb').write(pickle.dumps(h))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "1", "PYTHONPATH": os.getcwd()}
    subprocess.run([sys.executable, "-c", code, str(path)], check=True, env=env)
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
