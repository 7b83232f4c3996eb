"""Compiled pooling of adjacent violators on a DAG (Burdakov et al.'s GPAV), one object per row.

The constraints are ``x[child] <= x[parent]``. Classes are visited children first
(by decreasing level); each starts a block of its own, which then absorbs, while
one exists, the adjacent lower block (a block holding a child of one of its
members) of largest mean above its own. Blocks are kept as a union-find over
class indices, each with the list of the child edges leaving its members.

The result is feasible and every block takes the weighted mean of its values.
On forests it is the least-squares isotonic regression; on DAGs it may not be
(it depends on the visiting order), which :mod:`._isotonic` checks and repairs.
"""

import numpy as np
from numba import prange

from .._numba import jit, jit_parallel

__all__ = ["gpav_rows", "pool_members"]


@jit
def _find(uf, i):
    root = i
    while uf[root] != root:
        root = uf[root]
    while uf[i] != root:
        nxt = uf[i]
        uf[i] = root
        i = nxt
    return root


@jit
def pool_members(order, n, y, w, child_ptr, child_idx, inside, out, uf, sw, ww, head, tail, nxt):
    """GPAV over the classes ``order[:n]`` (children before parents) with the constraints among them
    (a child ``c`` counts when ``inside[c]``); writes each member's block mean to ``out``."""
    for a in range(n):
        j = order[a]
        uf[j] = j
        sw[j] = w[j] * y[j]
        ww[j] = w[j]
        head[j] = -1
        tail[j] = -1
        for q in range(child_ptr[j], child_ptr[j + 1]):  # the list of child edges leaving the block
            if inside[child_idx[q]]:
                if head[j] == -1:
                    head[j] = q
                else:
                    nxt[tail[j]] = q
                tail[j] = q
                nxt[q] = -1
        while True:
            value = sw[j] / ww[j]
            best = -1
            best_value = value
            prev = -1
            q = head[j]
            while q != -1:
                following = nxt[q]
                b = _find(uf, child_idx[q])
                if b == j:  # the edge now lies inside the block: drop it from the list
                    if prev == -1:
                        head[j] = following
                    else:
                        nxt[prev] = following
                    if following == -1:
                        tail[j] = prev
                else:
                    bv = sw[b] / ww[b]
                    if bv > best_value:
                        best_value = bv
                        best = b
                    prev = q
                q = following
            if best == -1:
                break
            uf[best] = j
            sw[j] += sw[best]
            ww[j] += ww[best]
            if head[best] != -1:
                if head[j] == -1:
                    head[j] = head[best]
                else:
                    nxt[tail[j]] = head[best]
                tail[j] = tail[best]
    for a in range(n):
        r = _find(uf, order[a])
        out[order[a]] = sw[r] / ww[r]


@jit_parallel
def gpav_rows(y, w, down, child_ptr, child_idx):
    """GPAV of every row of ``y`` (M, K) with weights ``w`` (M, K); returns the pooled values."""
    m, k = y.shape
    out = np.empty_like(y)
    n_edges = len(child_idx)
    chunk = 32
    for c in prange((m + chunk - 1) // chunk):
        uf = np.empty(k, dtype=np.int64)
        sw = np.empty(k)
        ww = np.empty(k)
        head = np.empty(k, dtype=np.int64)
        tail = np.empty(k, dtype=np.int64)
        nxt = np.empty(max(n_edges, 1), dtype=np.int64)
        inside = np.ones(k, dtype=np.bool_)
        for i in range(c * chunk, min(m, (c + 1) * chunk)):
            pool_members(down, k, y[i], w[i], child_ptr, child_idx, inside, out[i], uf, sw, ww, head, tail, nxt)
    return out
