"""Hypothesis strategies shared by the property tests.

Every hierarchy strategy draws the parent structure in a topological order and
then, by default, shuffles the column order (``permute=True``), so that property
tests never rely on parents coming before their children in ``classes``. Class
names are strings (``"c0"``, ``"c1"``, ...) unless ``int_names=True``.
"""

import numpy as np
from hypothesis import strategies as st

from hmcpgm import Hierarchy

__all__ = ["hierarchies", "forests", "dags", "polytrees", "value_matrices", "from_parent_lists"]


def from_parent_lists(parents, order=None, int_names=False):
    """A Hierarchy from a topological parent list; ``order`` permutes the columns."""
    k = len(parents)
    names = list(range(k)) if int_names else [f"c{j}" for j in range(k)]
    edges = [(names[p], names[j]) for j, ps in enumerate(parents) for p in ps]
    order = range(k) if order is None else order
    return Hierarchy.from_edges(edges, classes=[names[j] for j in order])


@st.composite
def hierarchies(draw, kind="dag", min_classes=1, max_classes=8, max_parents=3, permute=True,
                int_names=False):
    """A random hierarchy: ``kind`` is ``"forest"``, ``"dag"`` (may come out a forest) or
    ``"strict_dag"`` (at least one class with two parents; needs ``min_classes >= 3``)."""
    k = draw(st.integers(max(min_classes, 3 if kind == "strict_dag" else 1), max_classes))
    parents = [[]]
    for j in range(1, k):
        if kind == "forest":
            p = draw(st.integers(-1, j - 1))
            parents.append([] if p < 0 else [p])
        else:
            n = draw(st.integers(0, min(j, max_parents)))
            parents.append(sorted(draw(st.lists(st.integers(0, j - 1), min_size=n, max_size=n, unique=True))))
    if kind == "strict_dag" and not any(len(p) > 1 for p in parents):
        parents[-1] = [0, 1] if k > 2 else parents[-1]
    order = draw(st.permutations(range(k))) if permute else range(k)
    return from_parent_lists(parents, order, int_names)


def forests(**kwargs):
    """Random forests (every class has at most one parent)."""
    return hierarchies(kind="forest", **kwargs)


def dags(**kwargs):
    """Random DAGs with at least one class of two parents."""
    return hierarchies(kind="strict_dag", **{"min_classes": 3, **kwargs})


@st.composite
def polytrees(draw, max_classes=10, permute=True):
    """DAGs whose undirected skeleton is a forest (a random tree, random edge directions)."""
    k = draw(st.integers(2, max_classes))
    parents = [[] for _ in range(k)]
    for j in range(1, k):
        if draw(st.booleans()) or j == 1:
            other = draw(st.integers(0, j - 1))
            if draw(st.booleans()):
                parents[j].append(other)
            else:
                parents[other].append(j)
    # edges may point from a later to an earlier index: relabel in a topological order
    import networkx as nx

    g = nx.DiGraph()
    g.add_nodes_from(range(k))
    g.add_edges_from((p, j) for j, ps in enumerate(parents) for p in ps)
    topo = list(nx.topological_sort(g))
    pos = {v: i for i, v in enumerate(topo)}
    relabelled = [[] for _ in range(k)]
    for j, ps in enumerate(parents):
        relabelled[pos[j]] = sorted(pos[p] for p in ps)
    order = draw(st.permutations(range(k))) if permute else range(k)
    return from_parent_lists(relabelled, order)


@st.composite
def value_matrices(draw, n_classes, max_objects=4, ties=None, low=-2.0, high=2.0):
    """An (M, K) float matrix; with ``ties`` (default: drawn) the values come from a coarse
    grid so that ties are frequent."""
    m = draw(st.integers(1, max_objects))
    coarse = draw(st.booleans()) if ties is None else ties
    elem = (st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.9, 1.0]) if coarse
            else st.floats(low, high, allow_nan=False, width=32))
    vals = draw(st.lists(elem, min_size=m * n_classes, max_size=m * n_classes))
    return np.asarray(vals, dtype=float).reshape(m, n_classes)
