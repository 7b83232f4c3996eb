"""Compiled exact isotonic regression on a DAG, one object at a time: bounds, then recursive partitioning.

Minimise ``sum_k w_k (x_k - y_k)^2`` subject to ``x_child <= x_parent``. The
solution is monotone in ``y``, so it lies between the solutions for the
isotonic vectors ``low`` (the minimum of ``y`` over a class and its ancestors:
HTD-DAG) and ``high`` (the maximum over the class and its descendants: MCM),
which are their own solutions. A class with ``low == high`` (in no violation:
at or below all its ancestors, at or above all its descendants) keeps its
value, and leaving it out of the problem loses no constraint (every remaining
ancestor's solution is at or above it, every descendant's at or below).

The other classes are solved by recursive partitioning (Spouge, Wan & Wilbur
2003; Hochbaum & Queyranne 2003; Luss, Rosset & Shahar 2012): the
maximum-weight subset ``U`` closed under parents for the weights
``w (y - mean)`` (Picard's maximum-weight closure, a minimum cut found by
Dinic's algorithm) splits a set into ``U`` and the rest, whose separate
isotonic regressions together are the optimum (every value in ``U`` stays at
or above the mean, every other at or below); a set whose best closure gains
nothing is one block at its weighted mean. Before each cut a set is split into
the connected components of its constraints (independent problems), and a
component whose constraints form a forest is solved by pooling adjacent
violators, exact on forests, instead of further cuts. The result is the exact
optimum up to floating-point rounding: capacities and gains below ``eps_rel``
times the set's residuals, plus a few units of rounding (``1e-15``) times the
size of its values, count as zero.
"""

import numpy as np
from numba import prange

from .._numba import jit, jit_parallel
from ._pooling import pool_members

__all__ = ["partition_rows"]

_ROUNDING = 1e-15  # a few units of double rounding (2.2e-16): a residual's error relative to its values' size


@jit
def _add_edge(u, v, c, n_e, head, nxt, to, cap):
    to[n_e] = v
    cap[n_e] = c
    nxt[n_e] = head[u]
    head[u] = n_e
    to[n_e + 1] = u
    cap[n_e + 1] = 0.0
    nxt[n_e + 1] = head[v]
    head[v] = n_e + 1
    return n_e + 2


@jit
def _max_closure(members, n, r, parent_ptr, parent_idx, loc, head, nxt, to, cap, level, it, queue, path, eps):
    """Mark (``level >= 0``) the minimal maximum-weight parent-closed subset of ``members[:n]`` for weights
    ``r`` (indexed by class); returns its weight. Vertices: members ``0..n-1`` (``loc`` maps classes to them),
    source ``n``, sink ``n + 1``."""
    s = n
    t = n + 1
    for v in range(n + 2):
        head[v] = -1
    n_e = 0
    for a in range(n):
        i = members[a]
        if r[i] > 0:
            n_e = _add_edge(s, a, r[i], n_e, head, nxt, to, cap)
        elif r[i] < 0:
            n_e = _add_edge(a, t, -r[i], n_e, head, nxt, to, cap)
        for j in range(parent_ptr[i], parent_ptr[i + 1]):
            b = loc[parent_idx[j]]
            if b >= 0:  # a member child in U forces its member parent into U
                n_e = _add_edge(a, b, np.inf, n_e, head, nxt, to, cap)
    while True:  # Dinic: level graph by breadth-first search, then augmenting paths along it
        for v in range(n + 2):
            level[v] = -1
        level[s] = 0
        queue[0] = s
        q_head, q_tail = 0, 1
        while q_head < q_tail:
            u = queue[q_head]
            q_head += 1
            e = head[u]
            while e != -1:
                if cap[e] > eps and level[to[e]] < 0:
                    level[to[e]] = level[u] + 1
                    queue[q_tail] = to[e]
                    q_tail += 1
                e = nxt[e]
        if level[t] < 0:
            break
        for v in range(n + 2):
            it[v] = head[v]
        while True:
            depth = 0
            u = s
            while u != t:
                e = it[u]
                while e != -1 and not (cap[e] > eps and level[to[e]] == level[u] + 1):
                    e = nxt[e]
                it[u] = e
                if e == -1:  # dead end: remove u from the level graph and step back
                    if depth == 0:
                        break
                    level[u] = -2
                    depth -= 1
                    u = to[path[depth] ^ 1]
                    it[u] = nxt[it[u]]
                    continue
                path[depth] = e
                depth += 1
                u = to[e]
            if u != t:
                break
            push = np.inf
            for d in range(depth):
                if cap[path[d]] < push:
                    push = cap[path[d]]
            for d in range(depth):
                cap[path[d]] -= push
                cap[path[d] ^ 1] += push
    gain = 0.0
    for a in range(n):
        if level[a] >= 0:
            gain += r[members[a]]
    return gain


@jit
def _closure_of(sub, n, y, w, v, r, parent_ptr, parent_idx, loc, work_i, work_f, eps_rel):
    """The best parent-closed subset of ``sub[:n]`` for weights ``w (y - v)``, marked by ``level >= 0``
    (``work_i[3]``); returns its weight and size (size 0 when no subset gains more than rounding)."""
    head, nxt, to, level, it, queue, path, _ = work_i
    spread = 0.0  # the set's own scale: its residuals, whatever the rest of the row holds
    size = 0.0  # the residuals' rounding is relative to the size of the values
    for a in range(n):
        i = sub[a]
        r[i] = w[i] * (y[i] - v)
        spread += abs(r[i])
        size += w[i] * (abs(y[i]) + abs(v))
        loc[i] = a
    eps = eps_rel * spread + _ROUNDING * size
    gain = _max_closure(sub, n, r, parent_ptr, parent_idx, loc, head, nxt, to, work_f, level, it, queue, path, eps)
    for a in range(n):
        loc[sub[a]] = -1
    n_up = 0
    if gain > eps:
        for a in range(n):
            if level[a] >= 0:
                n_up += 1
    else:
        for a in range(n):
            level[a] = -1
    return gain, n_up


@jit
def _root(comp, i):
    root = i
    while comp[root] != root:
        root = comp[root]
    while comp[i] != root:
        nxt = comp[i]
        comp[i] = root
        i = nxt
    return root


@jit
def _components(sub, n, parent_ptr, parent_idx, inside, comp, cid, start, forest, side):
    """Regroup ``sub[:n]`` (marked ``inside``) by connected component of the constraints among them.

    Component ``c`` ends up at ``sub[start[c]:start[c + 1]]``; ``forest[c]`` says whether each of its
    members has at most one parent inside. Returns the number of components."""
    for a in range(n):
        comp[sub[a]] = sub[a]
    for a in range(n):
        i = sub[a]
        for j in range(parent_ptr[i], parent_ptr[i + 1]):
            p = parent_idx[j]
            if inside[p]:
                ri = _root(comp, i)
                rp = _root(comp, p)
                if ri != rp:
                    comp[max(ri, rp)] = min(ri, rp)
    n_comp = 0
    for a in range(n):
        i = sub[a]
        root = _root(comp, i)
        if cid[root] < 0:
            cid[root] = n_comp
            start[n_comp] = 0
            forest[n_comp] = True
            n_comp += 1
        c = cid[root]
        start[c] += 1
        count = 0
        for j in range(parent_ptr[i], parent_ptr[i + 1]):
            if inside[parent_idx[j]]:
                count += 1
        if count > 1:
            forest[c] = False
    total = 0
    for c in range(n_comp):
        size = start[c]
        start[c] = total
        total += size
    start[n_comp] = total
    for a in range(n):
        c = cid[_root(comp, sub[a])]
        side[start[c]] = sub[a]
        start[c] += 1
    for c in range(n_comp, 0, -1):
        start[c] = start[c - 1]
    start[0] = 0
    for a in range(n):
        sub[a] = side[a]
    for a in range(n):
        cid[_root(comp, sub[a])] = -1
    return n_comp


@jit
def _partition(y, w, out, members, n0, parent_ptr, parent_idx, child_ptr, child_idx, rank, loc, r, seg, work_i,
               work_f, pool_i, pool_f, comp_i, forest, inside, eps_rel):
    """Recursive partitioning of ``members[:n0]`` (exact isotonic regression); writes ``out``.

    Each part is first split into the connected components of its constraints; a component that is
    a forest (each member has at most one parent inside) is solved by pooling (exact on forests)."""
    level = work_i[3]
    side = work_i[7]
    uf, head, tail, nxt = pool_i
    pool_sw, pool_ww = pool_f
    comp, cid, start = comp_i
    seg[0] = 0
    seg[1] = n0
    top = 1
    while top > 0:
        top -= 1
        a0 = seg[2 * top]
        a1 = seg[2 * top + 1]
        n = a1 - a0
        sub = members[a0:a1]
        if n == 1:
            out[sub[0]] = y[sub[0]]
            continue
        for a in range(n):
            inside[sub[a]] = True
        n_comp = _components(sub, n, parent_ptr, parent_idx, inside, comp, cid, start, forest, side)
        if n_comp > 1 or forest[0]:
            for c in range(n_comp):
                s0 = start[c]
                size = start[c + 1] - s0
                if size == 1:
                    out[sub[s0]] = y[sub[s0]]
                elif forest[c]:
                    keys = np.empty(size, dtype=np.int64)
                    for a in range(size):
                        keys[a] = rank[sub[s0 + a]]
                    by_rank = np.argsort(keys)
                    for a in range(size):
                        side[a] = sub[s0 + by_rank[a]]
                    pool_members(side, size, y, w, child_ptr, child_idx, inside, out, uf, pool_sw, pool_ww, head,
                                 tail, nxt)
                else:
                    seg[2 * top] = a0 + s0
                    seg[2 * top + 1] = a0 + s0 + size
                    top += 1
            for a in range(n):
                inside[sub[a]] = False
            continue
        for a in range(n):
            inside[sub[a]] = False
        sw = 0.0
        ww = 0.0
        for a in range(n):
            sw += w[sub[a]] * y[sub[a]]
            ww += w[sub[a]]
        v = sw / ww
        n_up = _closure_of(sub, n, y, w, v, r, parent_ptr, parent_idx, loc, work_i, work_f, eps_rel)[1]
        if n_up == 0 or n_up == n:  # no closure gains more than rounding: one block
            for a in range(n):
                out[sub[a]] = v
            continue
        n_up = 0  # stable partition: the closure first, then the rest
        n_low = 0
        for a in range(n):
            if level[a] >= 0:
                side[n_up] = sub[a]
                n_up += 1
        for a in range(n):
            if level[a] < 0:
                side[n_up + n_low] = sub[a]
                n_low += 1
        for a in range(n):
            sub[a] = side[a]
        seg[2 * top] = a0
        seg[2 * top + 1] = a0 + n_up
        seg[2 * top + 2] = a0 + n_up
        seg[2 * top + 3] = a1
        top += 2


@jit_parallel
def partition_rows(y, w, up, down, parent_ptr, parent_idx, child_ptr, child_idx, rank, eps_rel):
    """The exact isotonic regression of every row: classes outside every violation fixed, the rest
    partitioned. Returns the solutions and, per row, the number of classes left to partition."""
    m, k = y.shape
    out = y.copy()
    n_left = np.zeros(m, dtype=np.int64)
    n_par = len(parent_idx)
    n_edges = 2 * (k + n_par) + 2
    chunk = 16
    for c in prange((m + chunk - 1) // chunk):
        members = np.empty(k, dtype=np.int64)
        loc = np.full(k, -1, dtype=np.int64)
        r = np.zeros(k)
        seg = np.empty(4 * k + 4, dtype=np.int64)
        work_i = (np.empty(k + 2, dtype=np.int64), np.empty(n_edges, dtype=np.int64),
                  np.empty(n_edges, dtype=np.int64), np.empty(k + 2, dtype=np.int64),
                  np.empty(k + 2, dtype=np.int64), np.empty(k + 2, dtype=np.int64),
                  np.empty(k + 2, dtype=np.int64), np.empty(k, dtype=np.int64))
        work_f = np.empty(n_edges)
        pool_i = (np.empty(k, dtype=np.int64), np.empty(k, dtype=np.int64), np.empty(k, dtype=np.int64),
                  np.empty(max(n_par, 1), dtype=np.int64))
        pool_f = (np.empty(k), np.empty(k))
        inside = np.zeros(k, dtype=np.bool_)
        comp_i = (np.empty(k, dtype=np.int64), np.full(k, -1, dtype=np.int64), np.empty(k + 1, dtype=np.int64))
        forest = np.empty(k, dtype=np.bool_)
        low = np.empty(k)
        high = np.empty(k)
        for i in range(c * chunk, min(m, (c + 1) * chunk)):
            yi = y[i]
            for v in up:  # low: HTD, the minimum over the class and its ancestors
                low[v] = yi[v]
                for j in range(parent_ptr[v], parent_ptr[v + 1]):
                    if low[parent_idx[j]] < low[v]:
                        low[v] = low[parent_idx[j]]
            for v in down:  # high: MCM, the maximum over the class and its descendants
                high[v] = yi[v]
                for j in range(child_ptr[v], child_ptr[v + 1]):
                    if high[child_idx[j]] > high[v]:
                        high[v] = high[child_idx[j]]
            n0 = 0
            for v in range(k):
                if low[v] != high[v]:
                    members[n0] = v
                    n0 += 1
            n_left[i] = n0
            if n0 > 0:
                _partition(yi, w[i], out[i], members, n0, parent_ptr, parent_idx, child_ptr, child_idx, rank, loc,
                           r, seg, work_i, work_f, pool_i, pool_f, comp_i, forest, inside, eps_rel)
    return out, n_left
