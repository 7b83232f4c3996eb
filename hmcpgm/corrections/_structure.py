"""The DAG passes of the corrections, computed once per hierarchy.

A :class:`DagPasses` holds, as compressed (CSR) int64 arrays the compiled kernels
read, what every correction visits: the classes by increasing and decreasing
level (level = the LONGEST path from a root, HEMDAG's ``graph.levels``), the
parents and children of each class, and the transitive closures (ancestors,
descendants, descendants that are not children). :func:`dag_passes` caches one
per hierarchy, so a correction applied to many matrices builds it once.
"""

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

__all__ = ["DagPasses", "dag_passes"]


def _csr(lists):
    counts = np.array([len(x) for x in lists], dtype=np.int64)
    ptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    idx = np.concatenate([np.asarray(x, dtype=np.int64) for x in lists]) if lists else np.zeros(0, np.int64)
    return ptr, idx.astype(np.int64)


@dataclass(frozen=True, eq=False)
class DagPasses:
    """Index arrays of one hierarchy, in the layout of the compiled kernels.

    Attributes
    ----------
    level : ndarray of int64, shape (K,)
        Longest path from a root to each class.
    up : ndarray of int64
        Every class, by increasing level (ties in column order): parents first.
    down : ndarray of int64
        Every class, by decreasing level (ties in column order): children first.
    parent_ptr, parent_idx, child_ptr, child_idx : ndarray of int64
        Parents and children of each class (CSR: ``idx[ptr[k]:ptr[k + 1]]``).
    anc_ptr, anc_idx, desc_ptr, desc_idx : ndarray of int64
        Proper ancestors and proper descendants of each class (transitive closure).
    far_ptr, far_idx : ndarray of int64
        Descendants of each class that are not its children (DESCENS-tau's delta).
    """

    level: np.ndarray
    up: np.ndarray
    down: np.ndarray
    parent_ptr: np.ndarray
    parent_idx: np.ndarray
    child_ptr: np.ndarray
    child_idx: np.ndarray
    anc_ptr: np.ndarray
    anc_idx: np.ndarray
    desc_ptr: np.ndarray
    desc_idx: np.ndarray
    far_ptr: np.ndarray
    far_idx: np.ndarray


@lru_cache(maxsize=16)
def dag_passes(hierarchy):
    """The :class:`DagPasses` of ``hierarchy`` (cached: hierarchies are immutable and hashable).

    Parameters
    ----------
    hierarchy : Hierarchy
        Any tree, forest or DAG.

    Returns
    -------
    DagPasses
        Its index arrays (read-only).

    Examples
    --------
    >>> from hmcpgm import Hierarchy
    >>> p = dag_passes(Hierarchy.from_parents([[1], None, [0, 1]]))
    >>> p.level.tolist(), p.up.tolist(), p.down.tolist()
    ([1, 0, 2], [1, 0, 2], [2, 0, 1])
    """
    level = np.asarray(hierarchy.depth, dtype=np.int64)
    k = len(level)
    cols = np.arange(k)
    up = np.lexsort((cols, level)).astype(np.int64)
    down = np.lexsort((cols, -level)).astype(np.int64)
    parents = [np.asarray(p, dtype=np.int64) for p in hierarchy.parent_indices]
    children = [np.asarray(c, dtype=np.int64) for c in hierarchy.child_indices]
    ancestors = [np.zeros(0, dtype=np.int64)] * k  # sparse closure: no dense (K, K) matrix
    for j in hierarchy.topological_order:
        if len(parents[j]):
            ancestors[j] = np.unique(np.concatenate([parents[j], *(ancestors[q] for q in parents[j])]))
    pairs_desc = np.concatenate([np.full(len(a), j, dtype=np.int64) for j, a in enumerate(ancestors)] or [[]])
    pairs_anc = np.concatenate(ancestors or [[]]).astype(np.int64)
    order = np.lexsort((pairs_desc, pairs_anc))  # by ancestor, then descendant
    by_anc, desc_sorted = pairs_anc[order], pairs_desc[order]
    split = np.searchsorted(by_anc, np.arange(k + 1))
    descendants = [desc_sorted[split[j]:split[j + 1]] for j in range(k)]
    far = [np.setdiff1d(descendants[j], children[j]) for j in range(k)]
    arrays = {}
    for name, lists in (("parent", parents), ("child", children), ("anc", ancestors), ("desc", descendants),
                        ("far", far)):
        arrays[f"{name}_ptr"], arrays[f"{name}_idx"] = _csr(lists)
    out = DagPasses(level=level, up=up, down=down, **arrays)
    for value in vars(out).values():
        value.flags.writeable = False
    return out
