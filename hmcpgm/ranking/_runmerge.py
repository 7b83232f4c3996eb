"""Chain-Merge's kernels: every object's blocks, then one merge of them all on every core.

Chain-Merge orders all maximum-mean prefix blocks of all objects by mean,
descending, ties in layout order (object, then position): a stable sort. The
blocks of one object (of one segment, when the object holds several chains)
already come with non-increasing means, so the layout is a few long runs. A
tournament tree merges R runs in O(n log R) and reads each run front to back;
the merge order is cut at quantiles of a sample of the blocks and every core
merges the runs' pieces inside its slice, writing the events of each block as it
goes (the ranking is written front to back, not scattered). The blocks come out
in the order of a stable sort of ``-mean``, on any number of threads.

Layout: object m's blocks sit at ``m * K + i`` for ``i < count[m]``;
``b_first[b]`` is the flat position (in ``seq.ravel()``) of block b's first
event and ``b_first[b + 1]`` the position after its last (a sentinel follows
each object's last block), so a block's object is ``b // K``.
"""

import numpy as np
from numba import prange

from .._numba import jit, jit_parallel
from ._compiled import NEVER, leaves, replay, tournament

__all__ = ["label_events", "merge_runs", "object_blocks", "object_runs", "sort_ties", "sorted_blocks"]

ROWS = 64  # objects per block of the parallel loop of object_blocks (they share a stack)
SAMPLE = 1024  # blocks sampled per slice to place the cuts
CHUNK = 4096  # blocks per parallel chunk of sorted_blocks


@jit
def _blocks_of_rows(values, seq, seg_start, b_mean, b_first, count, lo, hi):
    n_cls = seq.shape[1]
    st_start = np.empty(n_cls, np.int64)
    st_sum = np.empty(n_cls)
    st_cnt = np.empty(n_cls, np.int64)
    n_seg = len(seg_start)
    for m in range(lo, hi):
        base = m * n_cls
        nb = 0
        for s in range(n_seg):
            top = -1
            for j in range(seg_start[s], seg_start[s + 1] if s + 1 < n_seg else n_cls):
                top += 1
                st_start[top] = j
                st_sum[top] = values[m, seq[m, j]]
                st_cnt[top] = 1
                while top > 0 and st_sum[top] / st_cnt[top] > st_sum[top - 1] / st_cnt[top - 1]:
                    st_sum[top - 1] += st_sum[top]
                    st_cnt[top - 1] += st_cnt[top]
                    top -= 1
            for b in range(top + 1):
                b_mean[base + nb] = st_sum[b] / st_cnt[b]
                b_first[base + nb] = base + st_start[b]
                nb += 1
        count[m] = nb
        if nb < n_cls:
            b_first[base + nb] = base + n_cls  # the sentinel


@jit_parallel
def object_blocks(values, seq, seg_start, b_mean, b_first, count):
    """Split every object's sequence into maximum-mean prefix blocks (module layout).

    A stack merge (pool adjacent violators for a non-increasing fit) on each
    segment ``[seg_start[i], seg_start[i+1])`` of ``seq[m]``: the first block is
    the prefix of largest mean, and so on. ``b_first`` has M K + 1 entries.
    Objects run in parallel.
    """
    n_obj = seq.shape[0]
    b_first[n_obj * seq.shape[1]] = n_obj * seq.shape[1]
    for blk in prange((n_obj + ROWS - 1) // ROWS):
        _blocks_of_rows(values, seq, seg_start, b_mean, b_first, count, blk * ROWS, min(n_obj, (blk + 1) * ROWS))


@jit
def object_runs(b_mean, count, n_cls):
    """``(run_lo, run_hi)``: the maximal non-increasing runs of the objects' blocks."""
    n_blocks = 0
    for m in range(len(count)):
        n_blocks += count[m]
    run_lo = np.empty(n_blocks, np.int64)
    run_hi = np.empty(n_blocks, np.int64)
    r = 0
    for m in range(len(count)):
        base = m * n_cls
        for b in range(base, base + count[m]):
            if b == base or b_mean[b] > b_mean[b - 1]:
                run_lo[r] = b
                r += 1
            run_hi[r - 1] = b + 1
    return run_lo[:r], run_hi[:r]


@jit
def _merge_slice(b_mean, b_first, seq, n_cls, lo, hi, rank, pos, b_rank, order):
    """Merge the runs' pieces ``[lo[r], hi[r])`` with a tournament tree: every
    block gets its rank (from ``rank`` on) and its events go to ``order`` (from
    ``pos`` on).

    The step that advances the winning leaf is written out here and in
    ``_compiled.emit_blocks`` on purpose: as a shared helper (even inlined by
    numba) this merge took 1.4x as long on cellcycle_GO."""
    key, head, end = leaves(len(lo))
    left = 0
    for r in range(len(lo)):
        if hi[r] > lo[r]:
            key[r] = b_mean[lo[r]]
            head[r] = lo[r]
            end[r] = hi[r]
            left += hi[r] - lo[r]
    loser, w = tournament(key, head)
    for _ in range(left):
        b = head[w]
        b_rank[b] = rank
        rank += 1
        base = (b // n_cls) * n_cls
        for i in range(b_first[b], b_first[b + 1]):
            order[pos] = base + seq[i]
            pos += 1
        if b + 1 < end[w]:
            head[w] = b + 1
            key[w] = b_mean[b + 1]
        else:
            head[w] = NEVER
            key[w] = -np.inf
        w = replay(key, head, loser, w)


@jit
def _n_before(b_mean, lo, hi, t, b0):
    """How many blocks of the run ``[lo, hi)`` come before block ``b0`` of mean
    ``t`` (a binary search: a run is in merge order)."""
    a, b = lo, hi
    while a < b:
        mid = (a + b) // 2
        if b_mean[mid] > t or (b_mean[mid] == t and mid < b0):
            a = mid + 1
        else:
            b = mid
    return a - lo


@jit_parallel
def merge_runs(b_mean, b_first, seq, run_lo, run_hi, n_parts, b_rank, order):
    """Rank all blocks by mean (descending, stable) and write their events in that order.

    ``run_lo``/``run_hi``: :func:`object_runs`; ``n_parts``: slices of the merge
    order merged in parallel (the result does not depend on it). Fills
    ``b_rank`` (the rank of every block) and ``order`` (flat event indices
    ``m * K + class``, best first).
    """
    n_cls = seq.shape[1]
    flat = seq.ravel()
    n_runs = len(run_lo)
    nb = 0
    for r in range(n_runs):
        nb += run_hi[r] - run_lo[r]
    # slices of the merge order: cut at quantiles of every step-th block (by
    # (mean, block), so that ties do not unbalance the slices)
    n_parts = max(1, min(n_parts, nb // SAMPLE))
    step = max(1, nb // (SAMPLE * n_parts))
    sample = np.empty((nb + step - 1) // step, np.int64)
    i = 0
    for r in range(n_runs):
        for b in range(run_lo[r], run_hi[r]):
            if i % step == 0:
                sample[i // step] = b
            i += 1
    sample = sample[np.argsort(-b_mean[sample], kind="mergesort")]  # stable: ties by block
    cut = np.empty((n_parts + 1, n_runs), np.int64)
    cut[0] = run_lo
    cut[n_parts] = run_hi
    for p in range(1, n_parts):
        b0 = sample[p * len(sample) // n_parts]
        for r in range(n_runs):
            cut[p, r] = run_lo[r] + _n_before(b_mean, run_lo[r], run_hi[r], b_mean[b0], b0)
    rank = np.zeros(n_parts, np.int64)
    pos = np.zeros(n_parts, np.int64)
    for p in range(1, n_parts):
        rank[p] = rank[p - 1]
        pos[p] = pos[p - 1]
        for r in range(n_runs):
            rank[p] += cut[p, r] - cut[p - 1, r]
            pos[p] += b_first[cut[p, r]] - b_first[cut[p - 1, r]]
    for p in prange(n_parts):
        _merge_slice(b_mean, b_first, flat, n_cls, cut[p], cut[p + 1], rank[p], pos[p], b_rank, order)


@jit
def sort_ties(keys, idx):
    """Make an (unstable) sort stable: sort ``idx`` inside every run of equal ``keys``."""
    n = len(keys)
    a = 0
    while a < n:
        b = a + 1
        while b < n and keys[b] == keys[a]:
            b += 1
        if b - a > 1:
            idx[a:b].sort()
        a = b


@jit_parallel
def sorted_blocks(b_sorted, b_first, seq, b_rank, order):
    """Write the events of the blocks ``b_sorted`` (already in rank order) to ``order``.

    The path for many short runs, after a sort of the means. Chunks of
    ``CHUNK`` blocks run in parallel: first their numbers of events, then the
    events."""
    n_cls = seq.shape[1]
    flat = seq.ravel()
    n_chunks = (len(b_sorted) + CHUNK - 1) // CHUNK
    starts = np.zeros(n_chunks + 1, np.int64)
    for c in prange(n_chunks):
        for r in range(c * CHUNK, min(len(b_sorted), (c + 1) * CHUNK)):
            b = b_sorted[r]
            starts[c + 1] += b_first[b + 1] - b_first[b]
    for c in range(n_chunks):
        starts[c + 1] += starts[c]
    for c in prange(n_chunks):
        pos = starts[c]
        for r in range(c * CHUNK, min(len(b_sorted), (c + 1) * CHUNK)):
            b = b_sorted[r]
            b_rank[b] = r
            base = (b // n_cls) * n_cls
            for i in range(b_first[b], b_first[b + 1]):
                order[pos] = base + flat[i]
                pos += 1


@jit_parallel
def label_events(seq, b_first, count, b_rank, b_mean, block, mean):
    """``block[event]``: the rank of the event's block, ``mean[event]`` its mean
    (objects in parallel; every event has its own slot)."""
    n_obj, n_cls = seq.shape
    flat = seq.ravel()
    for m in prange(n_obj):
        base = m * n_cls
        for b in range(base, base + count[m]):
            r = b_rank[b]
            mu = b_mean[b]
            for i in range(b_first[b], b_first[b + 1]):
                event = base + flat[i]
                block[event] = r
                mean[event] = mu
