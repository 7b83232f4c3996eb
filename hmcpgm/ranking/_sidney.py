"""Sidney decomposition per object by parametric minimum cut (compiled kernels).

For one object, the classes still to be placed form a precedence-closed segment
X; its *Sidney set* is the ancestor-closed subset of X of maximum mean value.
The sets are found by the Eisner-Severance bisection on the parametric
maximum-weight closure:

* all closed sets C of an object are points (|C|, V(C)); the Sidney sets are
  the successive edges of the upper concave hull of these points (Sidney 1975;
  a greedy maximum-mean step from a hull vertex reaches the next hull vertex,
  and the maximum-weight closures for weights ``v - lam`` are nested in lam);
* a segment X between two hull points is split by one maximum-weight closure
  with weights ``v - mean(X)`` (Picard 1976: a minimum s-t cut). If the closure
  has positive weight it is a hull point strictly above the segment's chord:
  split X there and recurse on both parts, left part first. Otherwise X is one
  Sidney set (no closed subset of X has a larger mean than X).

This costs two minimum cuts per Sidney set, each on the segment being split.
The cuts are Dinic's algorithm on float capacities. Inside a Sidney set the
classes keep the order given by ``inner_pos`` (any consistent order keeps the
factor-2 guarantee; the caller passes the relaxed method's order).
"""

import numpy as np

from ._kernels import _jit
from ._structure import parent_csr  # noqa: F401 (re-exported for _hier_rank)


@_jit
def _add_edge(head, nxt, to, cap, ne, u, v, c):
    to[ne] = v
    cap[ne] = c
    nxt[ne] = head[u]
    head[u] = ne
    to[ne + 1] = u
    cap[ne + 1] = 0.0
    nxt[ne + 1] = head[v]
    head[v] = ne + 1
    return ne + 2


@_jit
def _bfs(n_nodes, s, head, nxt, to, cap, eps, level, queue):
    for i in range(n_nodes):
        level[i] = -1
    level[s] = 0
    qa, qb = 0, 1
    queue[0] = s
    while qa < qb:
        u = queue[qa]
        qa += 1
        e = head[u]
        while e >= 0:
            v = to[e]
            if level[v] < 0 and cap[e] > eps:
                level[v] = level[u] + 1
                queue[qb] = v
                qb += 1
            e = nxt[e]


@_jit
def max_closure(seg, n, loc, w, par_ptr, par_idx, head, nxt, to, cap, level, it, queue, path):
    """The minimal maximum-weight closure of the classes ``seg[:n]``.

    ``w[i]`` is the weight of ``seg[i]``; ``loc[k]`` is the position of class k
    in ``seg`` (-1 outside), so only parents inside the segment constrain.
    Returns the closure's weight; ``level[i] >= 0`` marks its members (i < n).
    """
    s = n
    t = n + 1
    n_nodes = n + 2
    for i in range(n_nodes):
        head[i] = -1
    big = 1.0
    scale = 0.0
    for i in range(n):
        big += abs(w[i])
        scale = max(scale, abs(w[i]))
    eps = 1e-13 * max(scale, 1e-300)
    ne = 0
    for i in range(n):
        if w[i] > 0:
            ne = _add_edge(head, nxt, to, cap, ne, s, i, w[i])
        elif w[i] < 0:
            ne = _add_edge(head, nxt, to, cap, ne, i, t, -w[i])
        k = seg[i]
        for j in range(par_ptr[k], par_ptr[k + 1]):
            p = loc[par_idx[j]]
            if p >= 0:  # taking a class forces taking its parent
                ne = _add_edge(head, nxt, to, cap, ne, i, p, big)
    while True:  # Dinic: level graph, then blocking flow by iterative DFS
        _bfs(n_nodes, s, head, nxt, to, cap, eps, level, queue)
        if level[t] < 0:
            break
        for i in range(n_nodes):
            it[i] = head[i]
        depth = 0
        u = s
        while True:
            if u == t:
                f = cap[path[0]]
                for d in range(1, depth):
                    f = min(f, cap[path[d]])
                for d in range(depth):
                    cap[path[d]] -= f
                    cap[path[d] ^ 1] += f
                depth = 0
                u = s
                continue
            e = it[u]
            while e >= 0 and not (cap[e] > eps and level[to[e]] == level[u] + 1):
                e = nxt[e]
            it[u] = e
            if e >= 0:
                path[depth] = e
                depth += 1
                u = to[e]
            else:
                level[u] = -1  # dead end for this phase
                if depth == 0:
                    break
                depth -= 1
                u = to[path[depth] ^ 1]
                it[u] = nxt[it[u]]
    _bfs(n_nodes, s, head, nxt, to, cap, eps, level, queue)
    total = 0.0
    for i in range(n):
        if level[i] >= 0:
            total += w[i]
    return total


@_jit
def sidney_sequences(values, par_ptr, par_idx, inner_pos, seq, set_id):
    """Every object's classes in Sidney-decomposition order.

    ``seq[m]`` lists object m's classes set by set (sets of non-increasing
    mean); inside a set by increasing ``inner_pos[m, k]``. ``set_id[m, j]``
    numbers the set of ``seq[m, j]`` (0 = first). Returns nothing.
    """
    n_obj, n_cls = values.shape
    n_edges = 2 * (n_cls + len(par_idx))
    head = np.empty(n_cls + 2, np.int64)
    nxt = np.empty(n_edges, np.int64)
    to = np.empty(n_edges, np.int64)
    cap = np.empty(n_edges)
    level = np.empty(n_cls + 2, np.int64)
    it = np.empty(n_cls + 2, np.int64)
    queue = np.empty(n_cls + 2, np.int64)
    path = np.empty(n_cls + 2, np.int64)
    loc = np.full(n_cls, -1, np.int64)
    w = np.empty(n_cls)
    buf = np.empty(n_cls, np.int64)
    tmp = np.empty(n_cls, np.int64)
    st_a = np.empty(n_cls + 1, np.int64)
    st_b = np.empty(n_cls + 1, np.int64)
    for m in range(n_obj):
        for k in range(n_cls):
            buf[k] = k
        top = 1
        st_a[0] = 0
        st_b[0] = n_cls
        n_sets = 0
        while top > 0:
            top -= 1
            a = st_a[top]
            b = st_b[top]
            n = b - a
            if n > 1:
                seg = buf[a:b]
                mu = 0.0
                for i in range(n):
                    mu += values[m, seg[i]]
                mu /= n
                tol = 0.0
                for i in range(n):
                    loc[seg[i]] = i
                    w[i] = values[m, seg[i]] - mu
                    tol += abs(w[i])
                gain = max_closure(seg, n, loc, w, par_ptr, par_idx,
                                   head, nxt, to, cap, level, it, queue, path)
                for i in range(n):
                    loc[seg[i]] = -1
                if gain > 1e-10 * tol:
                    c = 0  # stable partition: the closure first
                    for i in range(n):
                        if level[i] >= 0:
                            tmp[c] = seg[i]
                            c += 1
                    r = c
                    for i in range(n):
                        if level[i] < 0:
                            tmp[r] = seg[i]
                            r += 1
                    for i in range(n):
                        seg[i] = tmp[i]
                    if 0 < c < n:
                        st_a[top] = a + c
                        st_b[top] = b
                        st_a[top + 1] = a
                        st_b[top + 1] = a + c
                        top += 2
                        continue
            # one Sidney set: order it by inner_pos
            keys = np.empty(n, np.int64)
            for i in range(n):
                keys[i] = inner_pos[m, buf[a + i]]
            srt = np.argsort(keys)
            for i in range(n):
                tmp[i] = buf[a + srt[i]]
            for i in range(n):
                buf[a + i] = tmp[i]
                set_id[m, a + i] = n_sets
            n_sets += 1
        for k in range(n_cls):
            seq[m, k] = buf[k]

