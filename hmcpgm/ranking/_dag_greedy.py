"""Horn's merge rule carried over to DAGs: the greedy DAG heuristic (compiled).

One object at a time. Every class starts as a *group* of its own (a sequence of
classes that will be ranked contiguously, in that order). Repeatedly, the group
``g`` of largest mean value among those that still have a parent outside
themselves is appended to the end of one of its *parent groups* (the groups
holding a parent of one of its classes):

* one parent group ``p``: ``g`` joins the end of ``p``. When ``g`` has the
  largest mean of all groups this step is exact for any precedence graph (an
  exchange argument: ``g`` can follow its last predecessor at once, and here
  that predecessor's group is known). On a forest this is Horn's rule (1972).
* several parent groups: ``g`` will follow the last of them, which is not
  known. The heuristic takes the one of smallest mean among the parent groups
  that are not an ancestor of another parent group (found by a search over the
  groups' ancestors; the others must come first anyway, and a low mean means
  the group would come late on its own). The other parent groups then become
  parents of the merged group, so they are ranked before it.

When no group has an outside parent, every group is closed under ancestors and
the groups are independent chains: Chain-Merge (maximum-mean prefix blocks
sorted by mean) interleaves them optimally. The result is hierarchically
consistent by construction (a merge never joins a group to a descendant, and a
class only ever follows the classes it was appended after). Cost per object:
O((K + E) log K) heap and union-find work for the merges, plus the ancestor
searches of classes with several parent groups.

The queue of groups has two levels: the classes whose group has not changed
wait in one list sorted by value (sorted once per object; half of the Gene
Ontology's classes are leaves, whose group never changes before it is taken),
and only groups that grew go to the indexed heap. The next group is the larger
of the two heads (ties to the list).
"""

import numpy as np
from numba import prange

from .._numba import jit, jit_parallel
from ._compiled import emit_blocks, find, push_block

__all__ = ["dag_greedy_sequences", "greedy_order", "greedy_workspace"]


# an indexed binary max-heap: hkey/hid hold the entries, hpos[id] their slot (-1: absent)
@jit
def _put(hkey, hid, hpos, i, key, ident):
    """Place the entry ``ident`` with ``key`` at slot ``i``."""
    hkey[i] = key
    hid[i] = ident
    hpos[ident] = i


@jit
def _sift_up(hkey, hid, hpos, i):
    key = hkey[i]
    ident = hid[i]
    while i > 0:
        up = (i - 1) >> 1
        if hkey[up] >= key:
            break
        _put(hkey, hid, hpos, i, hkey[up], hid[up])
        i = up
    _put(hkey, hid, hpos, i, key, ident)


@jit
def _sift_down(hkey, hid, hpos, size, i):
    key = hkey[i]
    ident = hid[i]
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        if child + 1 < size and hkey[child + 1] > hkey[child]:
            child += 1
        if key >= hkey[child]:
            break
        _put(hkey, hid, hpos, i, hkey[child], hid[child])
        i = child
    _put(hkey, hid, hpos, i, key, ident)


@jit
def _heap_set(hkey, hid, hpos, size, ident, key):
    """Insert ``ident`` with ``key`` or change its key; returns the new size."""
    i = hpos[ident]
    if i < 0:
        _put(hkey, hid, hpos, size, key, ident)
        _sift_up(hkey, hid, hpos, size)
        return size + 1
    old = hkey[i]
    hkey[i] = key
    if key > old:
        _sift_up(hkey, hid, hpos, i)
    else:
        _sift_down(hkey, hid, hpos, size, i)
    return size


@jit
def _heap_pop(hkey, hid, hpos, size):
    """Remove the top entry (read ``hid[0]`` first); returns the new size.

    Floyd's variant: the hole at the top moves down along the larger children
    to a leaf, then the last entry fills it and moves up (fewer comparisons)."""
    hpos[hid[0]] = -1
    size -= 1
    if size == 0:
        return 0
    i = 0
    child = 1
    while child < size:
        if child + 1 < size and hkey[child + 1] > hkey[child]:
            child += 1
        _put(hkey, hid, hpos, i, hkey[child], hid[child])
        i = child
        child = 2 * i + 1
    _put(hkey, hid, hpos, i, hkey[size], hid[size])
    _sift_up(hkey, hid, hpos, i)
    return size


@jit
def greedy_workspace(n_cls, n_edges):
    """The scratch arrays of :func:`greedy_order` for ``n_cls`` classes and ``n_edges`` parent edges."""
    i64 = np.int64
    return (
        np.empty(n_cls, i64), np.empty(n_cls), np.empty(n_cls, i64),  # uf, gsum, gcnt
        np.empty(n_cls, i64), np.empty(n_cls, i64), np.empty(n_cls, i64),  # first, last, nxt
        np.empty(n_cls, i64), np.empty(n_cls, i64), np.empty(max(n_edges, 1), i64),  # edge lists
        np.empty(n_cls), np.empty(n_cls, i64), np.empty(n_cls, i64),  # heap
        np.zeros(n_cls, i64), np.empty(n_cls, i64), np.empty(2 * n_cls, i64),  # mark, pars, stack
        np.empty(n_cls, i64), np.empty(n_cls), np.empty(n_cls, i64),  # prefix-block stack
        np.empty(n_cls), np.empty(n_cls, i64), np.zeros(1, i64),  # block keys, buffer, stamp
        np.empty(n_cls, i64), np.zeros(n_cls, i64), np.empty(n_cls),  # pending, changed, sort keys
        np.zeros(n_cls, i64),  # parent-group stamps of the ancestor search
    )


@jit
def greedy_order(vals, par_ptr, par_idx, work, out):
    """One object's order by the greedy DAG merge rule: ``out`` gets the classes.

    ``vals``: the object's values (K,); ``par_ptr``/``par_idx``: the parents of
    every class (CSR); ``work``: :func:`greedy_workspace`. Returns the number of
    parent-edge scans (a measure of the work done).
    """
    (uf, gsum, gcnt, first, last, nxt, ehead, etail, enext, hkey, hid, hpos,
     mark, pars, stack, st_start, st_sum, st_cnt, bkey, buf, stamp_box, pend, changed, keys, ispar) = work
    n_cls = len(vals)
    stamp = stamp_box[0]
    scans = 0
    size = 0
    n_pend = 0
    stamp += 1
    stamp0 = stamp  # changed[g] == stamp0: g's mean changed in this call
    for k in range(n_cls):
        uf[k] = k
        gsum[k] = vals[k]
        gcnt[k] = 1
        first[k] = k
        last[k] = k
        nxt[k] = -1
        hpos[k] = -1
        a = par_ptr[k]
        b = par_ptr[k + 1]
        if b > a:
            ehead[k] = a
            etail[k] = b - 1
            for e in range(a, b - 1):
                enext[e] = e + 1
            enext[b - 1] = -1
            pend[n_pend] = k
            n_pend += 1
        else:
            ehead[k] = -1
            etail[k] = -1
    # groups whose mean never changed wait in a list sorted by value; changed ones in the heap
    for i in range(n_pend):
        keys[i] = -vals[pend[i]]
    by_value = pend[:n_pend][np.argsort(keys[:n_pend], kind="mergesort")]  # ties by class
    li = 0
    while True:
        while li < n_pend and changed[by_value[li]] == stamp0:
            li += 1
        if size > 0 and (li == n_pend or hkey[0] > vals[by_value[li]]):
            g = hid[0]
            size = _heap_pop(hkey, hid, hpos, size)
        elif li < n_pend:
            g = by_value[li]
            li += 1
        else:
            break
        # the distinct parent groups of g; drop the edges that became internal or
        # lead to a parent group already seen (groups only ever merge, so such an
        # edge will never tell anything new)
        stamp += 1
        npar = 0
        prev = -1
        e = ehead[g]
        while e >= 0:
            scans += 1
            en = enext[e]
            q = find(uf, par_idx[e])
            if q == g or mark[q] == stamp:
                if prev < 0:
                    ehead[g] = en
                else:
                    enext[prev] = en
            else:
                mark[q] = stamp
                pars[npar] = q
                npar += 1
                prev = e
            e = en
        etail[g] = prev
        if npar == 0:
            continue  # closed under ancestors: a finished chain
        p = pars[0]
        if npar > 1:
            # mark the proper ancestor groups of the parent groups; once all parent
            # groups but one are marked, the last one is the answer: stop there
            stamp += 1
            sp = 0
            for i in range(npar):
                stack[sp] = pars[i]
                sp += 1
                ispar[pars[i]] = stamp
            n_hit = 0
            while sp > 0 and n_hit < npar - 1:
                sp -= 1
                x = stack[sp]
                prev = -1
                e = ehead[x]
                while e >= 0:
                    scans += 1
                    en = enext[e]
                    a = find(uf, par_idx[e])
                    if a == x:  # internal by now: drop it
                        if prev < 0:
                            ehead[x] = en
                        else:
                            enext[prev] = en
                    else:
                        if mark[a] != stamp:
                            mark[a] = stamp
                            stack[sp] = a
                            sp += 1
                            if ispar[a] == stamp:
                                n_hit += 1
                                if n_hit == npar - 1:
                                    break  # (x keeps its tail: the scan stopped before it)
                        prev = e
                    e = en
                if e < 0:
                    etail[x] = prev
            # the parent group of smallest mean that is no other one's ancestor
            p = -1
            best = np.inf
            for i in range(npar):
                q = pars[i]
                if mark[q] != stamp:
                    mu = gsum[q] / gcnt[q]
                    if mu < best:
                        best = mu
                        p = q
        nxt[last[p]] = first[g]
        last[p] = last[g]
        gsum[p] += gsum[g]
        gcnt[p] += gcnt[g]
        uf[g] = p
        if ehead[g] >= 0:
            if ehead[p] < 0:
                ehead[p] = ehead[g]
            else:
                enext[etail[p]] = ehead[g]
            etail[p] = etail[g]
        changed[p] = stamp0
        if ehead[p] >= 0:
            size = _heap_set(hkey, hid, hpos, size, p, gsum[p] / gcnt[p])
    stamp_box[0] = stamp
    # Chain-Merge of the finished chains: maximum-mean prefix blocks by mean
    j = 0
    nb = 0
    for r in range(n_cls):
        if uf[r] != r:
            continue
        top = nb - 1
        node = first[r]
        while node >= 0:
            buf[j] = node
            top = push_block(st_start, st_sum, st_cnt, top, nb, j, vals[node])
            j += 1
            node = nxt[node]
        nb = top + 1
    emit_blocks(st_start, st_sum, st_cnt, nb, bkey, buf, out)
    _keep_parents_first(out, par_ptr, par_idx)
    return scans


@jit
def _ready(node, placed, par_ptr, par_idx):
    for e in range(par_ptr[node], par_ptr[node + 1]):
        if not placed[par_idx[e]]:
            return False
    return True


@jit
def _keep_parents_first(out, par_ptr, par_idx):
    """Move any class that ``out`` places before one of its parents to just after its last parent.

    Chain-Merge orders the blocks of different chains by their means; blocks whose
    means are equal in exact arithmetic can compare either way after rounding
    (seen on cellcycle_GO: one unit in the last place), which could put a child's
    block first. The order is otherwise kept: nothing moves when it is consistent.
    """
    n = out.size
    placed = np.zeros(n, dtype=np.bool_)
    res = np.empty(n, dtype=out.dtype)
    pending = np.empty(n, dtype=out.dtype)
    k = 0
    n_pending = 0
    for i in range(n):
        node = out[i]
        if not _ready(node, placed, par_ptr, par_idx):
            pending[n_pending] = node
            n_pending += 1
            continue
        res[k] = node
        k += 1
        placed[node] = True
        released = n_pending > 0
        while released:  # a placed class may free waiting ones, which may free others
            released = False
            w = 0
            for t in range(n_pending):
                q = pending[t]
                if _ready(q, placed, par_ptr, par_idx):
                    res[k] = q
                    k += 1
                    placed[q] = True
                    released = True
                else:
                    pending[w] = q
                    w += 1
            n_pending = w
    out[:] = res


ROWS = 8  # objects per workspace in the parallel loop


@jit_parallel
def _greedy_rows(values, par_ptr, par_idx, out):
    n_obj, n_cls = values.shape
    for b in prange((n_obj + ROWS - 1) // ROWS):  # objects are independent: blocks of them on every core
        work = greedy_workspace(n_cls, len(par_idx))
        for m in range(b * ROWS, min(n_obj, (b + 1) * ROWS)):
            greedy_order(values[m], par_ptr, par_idx, work, out[m])


def dag_greedy_sequences(values, par_ptr, par_idx, out):
    """Every object's order by the greedy DAG merge rule, ``out[m]`` (class indices).

    ``par_ptr``/``par_idx``: the parents of every class (CSR). Every order is
    hierarchically consistent; on a forest it is Horn's (optimal) order. Objects
    run in parallel, in blocks of ``ROWS`` that share one workspace.
    """
    _greedy_rows(values, par_ptr, par_idx, out)
