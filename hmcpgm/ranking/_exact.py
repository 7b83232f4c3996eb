"""Exact HierRank for small hierarchies: dynamic programming over down-sets.

A down-set (ancestor-closed set) S of one object's classes is the set of its
first |S| events. With CATCH weights inside one object, the best order of S is
    f(S) = max over x in S with S - {x} a down-set of f(S - {x}) + (K - |S| + 1) V[x],
one state per down-set. All objects share the lattice of down-sets, so the
lattice and its edges are built once and the DP runs on (states, M) arrays.
The objects' optimal orders are then interleaved by Chain-Merge, which is
optimal for disjoint components (Sidney 1975).
"""

import numpy as np

from ..exceptions import TooLargeError

__all__ = ["exact_sequences", "MAX_STATES"]

#: the largest number of down-sets ``method="exact"`` will enumerate
MAX_STATES = 200_000

#: (lattice states or edges) x objects held at once by :func:`exact_sequences`
_CHUNK_ENTRIES = 1 << 21


def _lattice(parent_masks, n_cls):
    levels = [[0]]
    edges = []  # per level: (src index, class, dst index) arrays
    total = 1
    for level in range(n_cls):
        index = {}
        src, cls, dst = [], [], []
        for i, s in enumerate(levels[-1]):
            for x in range(n_cls):
                bit = 1 << x
                if not s & bit and parent_masks[x] & ~s == 0:
                    t = s | bit
                    j = index.setdefault(t, len(index))
                    src.append(i)
                    cls.append(x)
                    dst.append(j)
        total += len(index)
        if total > MAX_STATES:
            raise TooLargeError(
                "method='exact' enumerates every ancestor-closed set of classes; this "
                f"hierarchy ({n_cls} classes) has more than {MAX_STATES} of them (limit "
                f"passed at size {level + 1}). Use method='auto' for large hierarchies."
            )
        states = sorted(index, key=index.__getitem__)
        levels.append(states)
        edges.append((np.array(src), np.array(cls), np.array(dst), len(states)))
    return edges


def exact_sequences(values, hierarchy):
    """Each object's CATCH-optimal consistent order, shape (M, K) of class indices.

    The objects are independent: they are solved in chunks of at most
    ``_CHUNK_ENTRIES`` (state or edge) x object entries, so memory does not grow
    with the number of objects.
    """
    n_obj, n_cls = values.shape
    masks = [sum(1 << int(p) for p in ps) for ps in hierarchy.parent_indices]
    edges = []
    for src, cls, dst, _n_dst in _lattice(masks, n_cls):
        srt = np.argsort(dst, kind="stable")
        src, cls, dst = src[srt], cls[srt], dst[srt]
        edges.append((src, cls, dst, np.flatnonzero(np.r_[True, dst[1:] != dst[:-1]])))
    width = max([1] + [len(dst) for _, _, dst, _ in edges] + [sum(len(starts) for *_, starts in edges)])
    step = max(1, _CHUNK_ENTRIES // width)
    seq = np.empty((n_obj, n_cls), dtype=np.int64)
    for start in range(0, n_obj, step):
        seq[start:start + step] = _exact_chunk(values[start:start + step], edges)
    return seq


def _exact_chunk(values, edges):
    n_obj, n_cls = values.shape
    f = np.zeros((1, n_obj))
    choice = []
    cols = np.arange(n_obj)
    for level, (src, cls, dst, starts) in enumerate(edges):
        cand = f[src] + (n_cls - level) * values[:, cls].T
        best = np.maximum.reduceat(cand, starts, axis=0)
        hit = cand == best[dst]
        idx = np.where(hit, np.arange(len(dst))[:, None], len(dst))
        arg = np.minimum.reduceat(idx, starts, axis=0)  # (n_dst, M), edge index
        choice.append((src, cls, arg))
        f = best
    seq = np.empty((n_obj, n_cls), dtype=np.int64)
    state = np.zeros(n_obj, dtype=np.intp)
    for level in range(n_cls - 1, -1, -1):
        src, cls, arg = choice[level]
        e = arg[state, cols]
        seq[:, level] = cls[e]
        state = src[e]
    return seq
