"""Horn's rule: the optimal hierarchy-consistent order of each object's classes on a forest.

Per tree, Horn's rule (compiled in ``_kernels``) gives the CATCH-optimal order;
Chain-Merge interleaves the trees. :func:`hmcpgm.hier_rank` uses it for forests
and for the spanning forests of its DAG methods, and the bound of the certificate
(``_bound``) for its forest relaxation.
"""

import numpy as np

from . import _kernels
from ._merge import chain_merge

__all__ = ["forest_parts", "horn_parent", "horn_object_sequences"]


def forest_parts(parent, k_cls):
    """Roots and, in Horn's sequence layout, where each root's tree starts."""
    roots = np.flatnonzero(parent < 0)
    size = np.ones(k_cls, dtype=np.int64)
    # accumulate subtree sizes leaves-up: a parent has a smaller depth
    depth = forest_depths(parent)
    for k in np.argsort(-depth, kind="stable"):
        if parent[k] >= 0:
            size[parent[k]] += size[k]
    seg = np.zeros(len(roots), dtype=np.int64)
    np.cumsum(size[roots][:-1], out=seg[1:])
    return roots.astype(np.int64), seg


def forest_depths(parent):
    """Each class's depth in the forest ``parent`` (-1 for roots), each class walked once: O(K), not O(K x depth).

    >>> forest_depths(np.array([2, 0, -1, 2]))
    array([1, 2, 0, 1])
    """
    parent = [int(p) for p in parent]
    depth = [-1] * len(parent)
    for k in range(len(parent)):
        path = []
        while k >= 0 and depth[k] < 0:  # up to a root or to a class of known depth
            path.append(k)
            k = parent[k]
        d = depth[k] if k >= 0 else -1
        for c in reversed(path):
            d += 1
            depth[c] = d
    return np.array(depth, dtype=np.int64)


def horn_parent(parent, values):
    """Horn's rule on the forest ``parent`` (-1 for roots): (order, block, block mean)."""
    k_cls = values.shape[1]
    roots, seg = forest_parts(parent, k_cls)
    seq = np.empty(values.shape, dtype=np.int64)
    _kernels.horn_sequences(values, parent, roots, seq)
    return chain_merge(values, seq, seg)


def horn_object_sequences(parent, values):
    """Each object's optimal order of the forest ``parent``, shape (M, K): Horn's
    rule per tree, then the trees interleaved by Chain-Merge inside the object."""
    roots, seg = forest_parts(parent, values.shape[1])
    seq = np.empty(values.shape, dtype=np.int64)
    _kernels.horn_sequences(values, parent, roots, seq)
    if len(seg) == 1:
        return seq
    out = np.empty_like(seq)
    _kernels.merge_within_objects(values, seq, seg, out)
    return out
