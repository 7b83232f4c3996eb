"""Helpers shared by the compiled (numba) ranking kernels."""

import numpy as np

from .._numba import jit

__all__ = ["NEVER", "emit_blocks", "find", "leaves", "push_block", "replay", "tournament"]


@jit
def find(uf, k):
    """Union-find root of ``k``, with path compression."""
    root = k
    while uf[root] != root:
        root = uf[root]
    while uf[k] != root:
        nxt = uf[k]
        uf[k] = root
        k = nxt
    return root


@jit
def push_block(st_start, st_sum, st_cnt, top, floor, start, value):
    """Push one event (at sequence position ``start``, of ``value``) on a stack of
    maximum-mean prefix blocks and merge while the new block's mean beats the one
    below it (not below ``floor``, where this chain's blocks begin); returns the top."""
    top += 1
    st_start[top] = start
    st_sum[top] = value
    st_cnt[top] = 1
    while top > floor and st_sum[top] * st_cnt[top - 1] > st_sum[top - 1] * st_cnt[top]:
        st_sum[top - 1] += st_sum[top]
        st_cnt[top - 1] += st_cnt[top]
        top -= 1
    return top


NEVER = np.iinfo(np.int64).max  # the head of an exhausted leaf


@jit
def _beats(key, head, a, b):
    """Leaf ``a`` wins over leaf ``b``: a larger key, or an equal one at an earlier position."""
    return key[a] > key[b] or (key[a] == key[b] and head[a] < head[b])


@jit
def tournament(key, head):
    """A tournament (loser) tree over the leaves ``(key, head)`` (a power of two of
    them; an exhausted leaf has key -inf and head ``NEVER``): ``(loser, winner)``."""
    width = len(key)
    loser = np.empty(width, np.int64)
    win = np.empty(2 * width, np.int64)
    for i in range(width):
        win[width + i] = i
    for node in range(width - 1, 0, -1):
        a = win[2 * node]
        b = win[2 * node + 1]
        if _beats(key, head, b, a):
            a, b = b, a
        win[node] = a
        loser[node] = b
    return loser, win[1]


@jit
def replay(key, head, loser, w):
    """The new winner after leaf ``w`` (the last winner) changed: one leaf-to-root path."""
    node = (w + len(key)) >> 1
    while node > 0:
        other = loser[node]
        if _beats(key, head, other, w):
            loser[node] = w
            w = other
        node >>= 1
    return w


@jit
def leaves(n):
    """``(key, head, end)`` for a tournament over ``n`` runs, all exhausted."""
    width = 1
    while width < n:
        width *= 2
    return np.full(width, -np.inf), np.full(width, NEVER), np.zeros(width, np.int64)


@jit
def emit_blocks(st_start, st_sum, st_cnt, n_blocks, mean, src, out):
    """Chain-Merge: write ``src`` into ``out`` block by block, blocks by mean descending
    (stable: equal means keep their stack order).

    The stack holds one run of non-increasing means per chain; the runs are
    merged by a tournament tree (O(n log runs))."""
    n_runs = 0
    for b in range(n_blocks):
        mean[b] = st_sum[b] / st_cnt[b]
        if b == 0 or mean[b] > mean[b - 1]:
            n_runs += 1
    key, head, end = leaves(n_runs)
    r = -1
    for b in range(n_blocks):
        if b == 0 or mean[b] > mean[b - 1]:
            r += 1
            key[r] = mean[b]
            head[r] = b
        end[r] = b + 1
    loser, w = tournament(key, head)
    j = 0
    for _ in range(n_blocks):
        b = head[w]
        for i in range(st_start[b], st_start[b] + st_cnt[b]):
            out[j] = src[i]
            j += 1
        if b + 1 < end[w]:
            head[w] = b + 1
            key[w] = mean[b + 1]
        else:
            head[w] = NEVER
            key[w] = -np.inf
        w = replay(key, head, loser, w)
