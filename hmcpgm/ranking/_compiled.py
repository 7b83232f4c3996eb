"""Helpers shared by the compiled (numba) ranking kernels."""

import numpy as np

from .._numba import jit

__all__ = ["emit_blocks", "find", "push_block"]


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


@jit
def emit_blocks(st_start, st_sum, st_cnt, n_blocks, key, src, out):
    """Chain-Merge: write ``src`` into ``out`` block by block, blocks by mean descending
    (stable: equal means keep their stack order)."""
    for b in range(n_blocks):
        key[b] = -st_sum[b] / st_cnt[b]
    j = 0
    for b in np.argsort(key[:n_blocks], kind="mergesort"):
        for i in range(st_start[b], st_start[b] + st_cnt[b]):
            out[j] = src[i]
            j += 1
