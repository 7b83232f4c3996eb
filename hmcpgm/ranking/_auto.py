"""HierRank's default on DAGs: exact on small components, the greedy rule elsewhere.

The classes of a hierarchy fall into weakly connected components, which are
independent inside every object: an optimal order of an object is the
Chain-Merge of optimal orders of its components (for a disjoint union of
precedence graphs, merging the parts' optimal sequences by their
maximum-mean prefix blocks is optimal; Sidney 1975, Lawler 1978). Each
component is solved

* by Horn's rule when it is a tree (exact; the greedy rule is Horn's rule there),
* by dynamic programming over its ancestor-closed sets (down-sets) when it has at
  most ``max_states`` of them (exact; cost O(M x lattice edges), the lattice is
  built once and shared by all objects),
* otherwise by the greedy DAG rule (:mod:`._dag_greedy`), a heuristic.

The objects' orders are then interleaved by Chain-Merge, which is optimal given
them, so the result is exact whenever every component is a tree or small.
"""

import networkx as nx
import numpy as np

from .._numba import jit
from ._dag_greedy import dag_greedy_sequences
from ._structure import hierarchy_plans

__all__ = ["AUTO_MAX_STATES", "auto_sequences", "down_set_lattice", "greedy_sequences"]

#: the largest number of down-sets of a component that ``method="auto"`` solves
#: exactly (every DAG of at most 12 classes has at most 2**12 = 4,096)
AUTO_MAX_STATES = 4096



def down_set_lattice(parents, max_states):
    """The down-sets of a DAG given by local parent lists, or None past ``max_states``.

    Returns ``(in_ptr, e_src, e_cls, level)``: states numbered level by level
    (state 0 is the empty set, the last is the full set); the edges into state
    ``s`` are ``in_ptr[s]:in_ptr[s + 1]``, each adding class ``e_cls`` to state
    ``e_src``; ``level[s]`` is the size of state s.
    """
    n = len(parents)
    children = [[] for _ in range(n)]
    pmask = [0] * n
    for c, ps in enumerate(parents):
        for p in ps:
            children[p].append(c)
            pmask[c] |= 1 << p
    # a set of classes without children between them is an antichain: 2**size down-sets
    n_leaves = sum(not ch for ch in children)
    if n_leaves >= max_states.bit_length():
        return None
    start = sum(1 << c for c in range(n) if not parents[c])
    level_states = [(0, start)]  # (down-set mask, mask of the classes that may join it)
    index = {0: 0}
    src, cls, dst, level = [], [], [], [0]
    for size in range(1, n + 1):
        nxt = {}
        nxt_states = []
        for mask, cand in level_states:
            i_src = index[mask]
            rest = cand
            while rest:
                low = rest & -rest
                c = low.bit_length() - 1
                rest ^= low
                new = mask | low
                j = nxt.get(new)
                if j is None:
                    j = len(index) + len(nxt)
                    nxt[new] = j
                    ready = cand ^ low
                    for ch in children[c]:
                        if pmask[ch] & ~new == 0:
                            ready |= 1 << ch
                    nxt_states.append((new, ready))
                    level.append(size)
                src.append(i_src)
                cls.append(c)
                dst.append(j)
        index.update(nxt)
        if len(index) > max_states:
            return None
        level_states = nxt_states
    dst = np.asarray(dst, dtype=np.int64)
    order = np.argsort(dst, kind="stable")
    in_ptr = np.zeros(len(index) + 1, dtype=np.int64)
    np.add.at(in_ptr, dst + 1, 1)
    return (np.cumsum(in_ptr), np.asarray(src, dtype=np.int64)[order],
            np.asarray(cls, dtype=np.int64)[order], np.asarray(level, dtype=np.int64))


@jit
def _lattice_dp(values, in_ptr, e_src, e_cls, level, out):
    """Every object's CATCH-optimal order of the component (local class indices)."""
    n_obj, n = values.shape
    n_states = len(in_ptr) - 1
    f = np.empty(n_states)
    arg = np.empty(n_states, np.int64)
    for m in range(n_obj):
        f[0] = 0.0
        for s in range(1, n_states):
            weight = n - level[s] + 1
            best = -np.inf
            for e in range(in_ptr[s], in_ptr[s + 1]):
                c = f[e_src[e]] + weight * values[m, e_cls[e]]
                if c > best:
                    best = c
                    arg[s] = e
            f[s] = best
        s = n_states - 1
        for j in range(n - 1, -1, -1):
            e = arg[s]
            out[m, j] = e_cls[e]
            s = e_src[e]


def _local_parents(hierarchy, classes):
    local = {k: i for i, k in enumerate(classes)}
    return [[local[p] for p in hierarchy.parent_indices[k]] for k in classes]


def _csr(parents):
    ptr = np.zeros(len(parents) + 1, dtype=np.int64)
    ptr[1:] = np.cumsum([len(p) for p in parents])
    idx = np.asarray([p for ps in parents for p in ps], dtype=np.int64)
    return ptr, idx


class _Part:
    """Classes solved together: by the greedy rule (``lattice`` None) or exactly."""

    def __init__(self, hierarchy, classes, lattice=None):
        self.classes = np.asarray(classes, dtype=np.int64)
        self.everything = len(self.classes) == hierarchy.n_classes
        self.lattice = lattice
        if lattice is None:
            self.ptr, self.idx = _csr(_local_parents(hierarchy, self.classes))

    def solve(self, values):
        vals = values if self.everything else np.ascontiguousarray(values[:, self.classes])
        local = np.empty(vals.shape, dtype=np.int64)
        if self.lattice is None:
            dag_greedy_sequences(vals, self.ptr, self.idx, local)
        else:
            _lattice_dp(vals, *self.lattice, local)
        return local if self.everything else self.classes[local]


def _greedy_part(hierarchy):
    plans = hierarchy_plans(hierarchy)
    if "greedy" not in plans:
        plans["greedy"] = _Part(hierarchy, np.arange(hierarchy.n_classes))
    return plans["greedy"]


def _auto_parts(hierarchy, max_states):
    plans = hierarchy_plans(hierarchy)
    key = ("auto", max_states)
    if key in plans:
        return plans[key]
    comps = sorted(
        (np.array(sorted(hierarchy.indices(list(comp))), dtype=np.int64)
         for comp in nx.weakly_connected_components(hierarchy.graph)),
        key=lambda c: c[0],
    )
    heuristic, parts, n_exact = [], [], 0
    for comp in comps:
        parents = _local_parents(hierarchy, comp)
        if all(len(p) <= 1 for p in parents):
            heuristic.append(comp)  # a tree: the greedy rule is Horn's rule, exact
            n_exact += len(comp)
            continue
        lattice = down_set_lattice(parents, max_states) if max_states > 0 else None
        if lattice is None:
            heuristic.append(comp)
        else:
            parts.append(_Part(hierarchy, comp, lattice))
            n_exact += len(comp)
    if heuristic:
        parts.insert(0, _Part(hierarchy, np.sort(np.concatenate(heuristic))))
    plans[key] = (parts, n_exact)
    return plans[key]


def greedy_sequences(values, hierarchy):
    """The greedy DAG rule on every object, (M, K) of class indices."""
    return _greedy_part(hierarchy).solve(values)


def auto_sequences(values, hierarchy, max_states=AUTO_MAX_STATES):
    """Per-object orders by components, exact where small: ``(seq, seg_start, n_exact)``.

    ``seq`` (M, K) lists every object's classes part by part (the components
    left to the greedy rule together, first), ``seg_start`` where each part
    starts (for Chain-Merge), ``n_exact`` the number of classes in components
    solved exactly (all of them when the result is optimal).
    """
    parts, n_exact = _auto_parts(hierarchy, max_states)
    seqs = [part.solve(values) for part in parts]
    seg_start = np.zeros(len(seqs), dtype=np.int64)
    np.cumsum([q.shape[1] for q in seqs[:-1]], out=seg_start[1:])
    if len(seqs) == 1:
        return seqs[0], seg_start, n_exact
    seq = np.concatenate(seqs, axis=1) if seqs else np.empty((values.shape[0], 0), dtype=np.int64)
    return seq, seg_start, n_exact
