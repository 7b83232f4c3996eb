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
    h.ancestor_matrix, h.parent_indices, h.topological_order  # cached before pickling
    g = pickle.loads(pickle.dumps(h))
    assert g == h and g.classes == h.classes
    assert not g.ancestor_matrix.flags.writeable
    assert not g.parent_indices[2].flags.writeable
    assert not g.topological_order.flags.writeable
    assert nx.is_frozen(g.graph)
