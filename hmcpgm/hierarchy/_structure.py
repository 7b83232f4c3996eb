"""The index structure of a hierarchy, computed once per :class:`Hierarchy` (its cached properties).

Every array returned is read-only: a hierarchy is immutable and hands these out.
"""

import networkx as nx
import numpy as np

from ..exceptions import InputError

__all__ = [
    "adjacent_indices",
    "ancestor_closure",
    "compressed",
    "edge_index_array",
    "frozen_array",
    "longest_depth",
    "one_parent_each",
    "reachable",
    "topological_indices",
]


def frozen_array(values):
    """A read-only int array of ``values``."""
    arr = np.asarray(values, dtype=np.intp)
    arr.flags.writeable = False
    return arr


def adjacent_indices(classes, index, neighbours):
    """Per class, the sorted column indices of ``neighbours(c)`` (a graph's predecessors or successors)."""
    return tuple(frozen_array(sorted(index[p] for p in neighbours(c))) for c in classes)


def edge_index_array(graph, index):
    """(E, 2) (parent, child) column indices of every edge."""
    pairs = [(index[p], index[c]) for p, c in graph.edges]
    return frozen_array(np.array(pairs, dtype=np.intp).reshape(-1, 2))


def topological_indices(graph, index):
    """Every class after all of its parents (ties in column order)."""
    order = nx.lexicographical_topological_sort(graph, key=index.__getitem__)
    return frozen_array([index[c] for c in order])


def longest_depth(topological_order, parent_indices):
    """The length of the longest path from a root to each class."""
    depth = np.zeros(len(parent_indices), dtype=np.intp)
    for k in topological_order:
        parents = parent_indices[k]
        if len(parents):
            depth[k] = depth[parents].max() + 1
    depth.flags.writeable = False
    return depth


def compressed(parent_indices):
    """``(ptr, idx)`` int64 arrays: the parents of class ``k`` are ``idx[ptr[k]:ptr[k + 1]]``."""
    counts = np.array([len(p) for p in parent_indices], dtype=np.int64)
    ptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    idx = np.concatenate([np.asarray(p, dtype=np.int64) for p in parent_indices])
    ptr.flags.writeable = False
    idx.flags.writeable = False
    return ptr, idx


def one_parent_each(parent_indices, depth, keep):
    """One parent per class (:meth:`Hierarchy.spanning_forest`), -1 for roots."""
    if keep not in ("deepest", "shallowest"):
        raise InputError(f"keep must be 'deepest' or 'shallowest', got {keep!r}")
    pick = max if keep == "deepest" else min
    out = np.array(
        [pick(p, key=lambda q: (depth[q], q)) if len(p) else -1 for p in parent_indices],
        dtype=np.int64,
    )
    out.flags.writeable = False
    return out


def ancestor_closure(topological_order, parent_indices):
    """(K, K) bool: ``A[k, a]`` is True when ``a`` is a proper ancestor of ``k``."""
    n = len(parent_indices)
    anc = np.zeros((n, n), dtype=bool)
    for k in topological_order:
        for p in parent_indices[k]:
            anc[k] |= anc[p]
            anc[k, p] = True
    anc.flags.writeable = False
    return anc


def ancestor_lists(topological_order, parent_indices):
    """For each class, its proper ancestors as a sorted int32 array, made from its parents' lists: the rows of
    :func:`ancestor_closure` without the dense (K, K) matrix (729 MB for the Gene Ontology's 27,000 process terms).

    Short lists are merged by sorting; long ones (deep or dense hierarchies, where a sort per class cost ten
    times the dense matrix's time) by marking them in one boolean row and reading the marks back in order.
    """
    n = len(parent_indices)
    out = [None] * n
    mark = np.zeros(n, dtype=bool)
    for k in topological_order:
        parents = np.asarray(parent_indices[k], dtype=np.int32)
        lists = [parents, *(out[p] for p in parents.tolist())]
        if sum(len(a) for a in lists) * 64 < n:
            out[k] = np.unique(np.concatenate(lists))
        else:
            for a in lists:
                mark[a] = True
            out[k] = np.flatnonzero(mark).astype(np.int32)
            mark[out[k]] = False
    return out


def reachable(starts, adjacency, n):
    """(n,) bool: the classes reached from ``starts`` in one or more steps along ``adjacency``.

    ``adjacency`` is :attr:`Hierarchy.parent_indices` (ancestors) or ``child_indices``
    (descendants); a walk over the edges, without the dense ancestor matrix.
    """
    seen = np.zeros(n, dtype=bool)
    stack = [q for k in starts for q in adjacency[k].tolist()]
    while stack:
        q = stack.pop()
        if not seen[q]:
            seen[q] = True
            stack.extend(adjacency[q].tolist())
    return seen
