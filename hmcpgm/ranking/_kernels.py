"""Compiled (numba) kernels: Horn's rule per object, the relaxed method's repairs, Chain-Merge inside objects.

numba is imported here only, and this module only when a ranking is computed,
so ``import hmcpgm`` stays quick. ``cache=True`` keeps the compiled code in a per-user
cache after the first call (compiling takes a few seconds once; see ``hmcpgm._numba``).
"""

import numpy as np
from numba import prange

from .._numba import jit as _jit
from .._numba import jit_parallel as _jit_parallel
from ._compiled import emit_blocks, push_block
from ._compiled import find as _find

ROWS = 64  # objects per block of the parallel loops (they share scratch arrays)


@_jit
def _swap(keys, ids, vers, a, b):
    keys[a], keys[b] = keys[b], keys[a]
    ids[a], ids[b] = ids[b], ids[a]
    vers[a], vers[b] = vers[b], vers[a]


@_jit
def _heap_push(keys, ids, vers, size, key, ident, ver):
    i = size
    keys[i] = key
    ids[i] = ident
    vers[i] = ver
    while i > 0:
        up = (i - 1) // 2
        if keys[up] >= keys[i]:
            break
        _swap(keys, ids, vers, up, i)
        i = up
    return size + 1


@_jit
def _heap_pop(keys, ids, vers, size):
    """Remove the top entry (its fields must be read before the call)."""
    size -= 1
    keys[0] = keys[size]
    ids[0] = ids[size]
    vers[0] = vers[size]
    i = 0
    while True:
        left = 2 * i + 1
        if left >= size:
            break
        best = left
        if left + 1 < size and keys[left + 1] > keys[left]:
            best = left + 1
        if keys[i] >= keys[best]:
            break
        _swap(keys, ids, vers, best, i)
        i = best
    return size


@_jit_parallel
def horn_sequences(values, parent, roots, seq):
    """Horn's rule for every object: ``seq[m]`` lists object m's classes, each root's
    tree in turn (``roots`` order), every tree in its optimal order.

    Horn (1972): the non-root group of largest mean joins the end of the group that
    holds its head's parent. Union-find, a lazy max-heap and linked lists give
    O(K log K) per object. Objects run in parallel, in blocks of ``ROWS`` that
    share their scratch arrays.
    """
    n_obj, n_cls = values.shape
    for blk in prange((n_obj + ROWS - 1) // ROWS):
        _horn_rows(values, parent, roots, seq, blk * ROWS, min(n_obj, (blk + 1) * ROWS))


@_jit
def _horn_rows(values, parent, roots, seq, lo, hi):
    n_cls = values.shape[1]
    uf = np.empty(n_cls, np.int64)
    gsum = np.empty(n_cls)
    gcnt = np.empty(n_cls, np.int64)
    first = np.empty(n_cls, np.int64)
    last = np.empty(n_cls, np.int64)
    nxt = np.empty(n_cls, np.int64)
    ver = np.empty(n_cls, np.int64)
    keys = np.empty(2 * n_cls + 1)
    ids = np.empty(2 * n_cls + 1, np.int64)
    vers = np.empty(2 * n_cls + 1, np.int64)
    for m in range(lo, hi):
        size = 0
        for k in range(n_cls):
            uf[k] = k
            gsum[k] = values[m, k]
            gcnt[k] = 1
            first[k] = k
            last[k] = k
            nxt[k] = -1
            ver[k] = 0
            if parent[k] >= 0:
                size = _heap_push(keys, ids, vers, size, values[m, k], k, 0)
        while size > 0:
            g = ids[0]
            v = vers[0]
            size = _heap_pop(keys, ids, vers, size)
            if uf[g] != g or v != ver[g]:
                continue
            p = _find(uf, parent[g])
            nxt[last[p]] = first[g]
            last[p] = last[g]
            gsum[p] += gsum[g]
            gcnt[p] += gcnt[g]
            uf[g] = p
            ver[p] += 1
            if parent[p] >= 0:
                size = _heap_push(keys, ids, vers, size, gsum[p] / gcnt[p], p, ver[p])
        j = 0
        for r in roots:
            node = first[r]
            while node >= 0:
                seq[m, j] = node
                j += 1
                node = nxt[node]


@_jit
def _sorted_by_key(key, depth, pos, out):
    """``out`` = classes sorted by (key, depth, pos); pos is a permutation, so no ties."""
    n_cls = len(key)
    comp = np.empty(n_cls, np.int64)
    for k in range(n_cls):
        comp[k] = (key[k] * n_cls + depth[k]) * n_cls + pos[k]
    srt = np.argsort(comp)
    for j in range(n_cls):
        out[j] = srt[j]


@_jit
def repair_sequences(values, seq, par_ptr, par_idx, topo, depth, out):
    """Make every object's order consistent with a DAG, by push or pull repair.

    ``seq[m]`` is object m's order of a spanning forest of the DAG. *Push*: an
    event waits until just after its last parent (key = max of its position and
    its parents' keys, in topological order); *pull*: an event moves up to its
    earliest descendant (key = min of its position and its children's keys, in
    reverse topological order; children are found through the parent lists).
    Each ordering sorts by (key, depth, position), which is consistent: a parent
    has key <= its child's and a smaller depth. ``out[m]`` gets the one of the
    two with the larger CATCH within the object (push on ties).
    """
    n_obj, n_cls = values.shape
    pos = np.empty(n_cls, np.int64)
    key = np.empty(n_cls, np.int64)
    cand = np.empty(n_cls, np.int64)
    for m in range(n_obj):
        for j in range(n_cls):
            pos[seq[m, j]] = j
        best = -np.inf
        for mode in range(2):
            for k in range(n_cls):
                key[k] = pos[k]
            if mode == 0:
                for t in range(n_cls):
                    k = topo[t]
                    for i in range(par_ptr[k], par_ptr[k + 1]):
                        if key[par_idx[i]] > key[k]:
                            key[k] = key[par_idx[i]]
            else:
                for t in range(n_cls - 1, -1, -1):
                    k = topo[t]
                    for i in range(par_ptr[k], par_ptr[k + 1]):
                        p = par_idx[i]
                        if key[k] < key[p]:
                            key[p] = key[k]
            _sorted_by_key(key, depth, pos, cand)
            score = 0.0
            for j in range(n_cls):
                score += (n_cls - j) * values[m, cand[j]]
            if score > best:
                best = score
                for j in range(n_cls):
                    out[m, j] = cand[j]


@_jit_parallel
def merge_within_objects(values, seq, seg_start, out):
    """Chain-Merge inside each object: ``seq[m]`` holds independent chains (the
    segments starting at ``seg_start``); ``out[m]`` interleaves them optimally by
    ordering their maximum-mean prefix blocks by mean (stable). Objects run in
    parallel, in blocks of ``ROWS``."""
    n_obj = seq.shape[0]
    for blk in prange((n_obj + ROWS - 1) // ROWS):
        _merge_rows(values, seq, seg_start, out, blk * ROWS, min(n_obj, (blk + 1) * ROWS))


@_jit
def _merge_rows(values, seq, seg_start, out, lo_obj, hi_obj):
    n_cls = seq.shape[1]
    st_start = np.empty(n_cls, np.int64)
    st_sum = np.empty(n_cls)
    st_cnt = np.empty(n_cls, np.int64)
    mean = np.empty(n_cls)
    n_seg = len(seg_start)
    for m in range(lo_obj, hi_obj):
        nb = 0
        for s in range(n_seg):
            lo = seg_start[s]
            hi = seg_start[s + 1] if s + 1 < n_seg else n_cls
            top = nb - 1
            for j in range(lo, hi):
                top = push_block(st_start, st_sum, st_cnt, top, nb, j, values[m, seq[m, j]])
            nb = top + 1
        emit_blocks(st_start, st_sum, st_cnt, nb, mean, seq[m], out[m])
