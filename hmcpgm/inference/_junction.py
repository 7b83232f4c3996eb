"""Batched exact junction-tree inference for DAG hierarchies.

Compilation (once per hierarchy, cached): moralise the network (join the parents
of every class), triangulate it by greedy min-fill elimination, keep the maximal
elimination cliques and join them into a junction tree (forest) with the
running-intersection property. Each class's CPD and evidence go to the smallest
clique holding the class and its parents.

Calibration (all objects of a chunk at once): clique potentials are arrays of
shape (m, 2, ..., 2) of *log* values; messages are log-sum-exp reductions,
normalised per object. The downward pass uses the Hugin update (belief of the
parent minus the child's upward message); where that is -inf - (-inf) the child's
own potential is -inf at the same configurations, so the cavity value there is
irrelevant and is set to -inf (the 0/0 := 0 rule).

The cost is exponential in the largest clique: compilation refuses, with the
size and classes of the largest clique, when it exceeds ``max_clique``.

:func:`junction_grouped` runs the same calibration in compiled code, object by
object, for many small networks of one shape (the nbh version's reduced
neighbourhoods), where the per-clique numpy calls of :func:`junction_full` would
cost more than the arithmetic.
"""

from functools import cached_property, lru_cache

import numpy as np

from .._numba import jit
from .._util import preview
from ..exceptions import TooLargeError
from ..network import log_cpd
from ._common import impossible_evidence, posterior_from_logs
from ._sparse_junction import DEFAULT_BUDGET
from ._triangulation import triangulation

__all__ = ["junction_full", "junction_grouped", "compile_junction_tree", "JunctionTree"]

_BUDGET = 2**22  # floats per chunk of objects (messages and one clique at a time)


def _refuse(hierarchy, sets, max_clique):
    """The error for a min-fill junction tree wider than ``max_clique`` (its true widest clique)."""
    widest = max(sets, key=len)
    names = [hierarchy.classes[i] for i in sorted(widest)]
    return TooLargeError(
        f"engine='junction' needs a clique of {len(widest)} classes ({preview(names, 8)}) "
        f"after min-fill triangulation (its largest), more than max_clique={max_clique}; "
        f"a dense clique table costs 2^{len(widest)} entries per object. Use "
        "engine='sparse' (exact, stores only the configurations the hierarchy allows), "
        "engine='auto', or engine='loopy' (approximate)"
    )


class JunctionTree:
    """A compiled junction forest: cliques, parent links and factor assignment.

    Attributes
    ----------
    cliques : list of int arrays
        Sorted class indices of each clique, parents listed before children.
    parent : int array
        Parent clique of each clique (-1 for the root of each tree).
    home : int array
        For each class, the clique that holds its CPD and evidence.
    max_clique_size : int
    """

    def __init__(self, hierarchy, max_clique):
        sets, nbrs = triangulation(hierarchy, "min-fill")
        if max(len(c) for c in sets) > max_clique:
            raise _refuse(hierarchy, sets, max_clique)
        need = sum(2 ** len(c) * (len(c) + 24) for c in sets)  # bool grids, log potentials per object
        if need > DEFAULT_BUDGET:
            raise TooLargeError(
                f"engine='junction' would need about {need / 2**30:.3g} GiB for its dense clique tables "
                f"(largest clique {max(len(c) for c in sets)} classes), more than {DEFAULT_BUDGET / 2**30:.3g} "
                "GiB; use engine='sparse' or engine='auto'"
            )
        # root each tree at its largest clique; parents before children
        order, parent = [], {}
        seen = set()
        for r in sorted(range(len(sets)), key=lambda i: (-len(sets[i]), i)):
            if r in seen:
                continue
            seen.add(r)
            parent[r] = None
            queue = [r]
            while queue:
                i = queue.pop(0)
                order.append(i)
                for j in sorted(nbrs[i]):
                    if j not in seen:
                        seen.add(j)
                        parent[j] = i
                        queue.append(j)
        index = {i: n for n, i in enumerate(order)}
        self.cliques = [np.array(sorted(sets[i]), dtype=np.intp) for i in order]
        self.parent = np.array([-1 if parent[i] is None else index[parent[i]] for i in order], dtype=np.intp)
        self.max_clique_size = max(len(c) for c in self.cliques)
        self.n_classes = hierarchy.n_classes
        members = [set(c.tolist()) for c in self.cliques]
        self.home = np.empty(hierarchy.n_classes, dtype=np.intp)
        for k in range(hierarchy.n_classes):
            fam = {k, *hierarchy.parent_indices[k].tolist()}
            best = min((len(m), b) for b, m in enumerate(members) if fam <= m)
            self.home[k] = best[1]
        self.assigned = [np.flatnonzero(self.home == b) for b in range(len(self.cliques))]
        self.smallest = np.array(
            [min((len(m), b) for b, m in enumerate(members) if k in m)[1] for k in range(self.n_classes)],
            dtype=np.intp,
        )
        self._hierarchy = hierarchy
        self._plan()

    def _plan(self):
        """Precompute axes, permutations and shapes for every message."""
        self.sep_up = []  # (reduce axes in child, transpose to parent order, shape in parent)
        self.sep_down = []  # (reduce axes in parent, transpose to child order, shape in child)
        for b, c in enumerate(self.cliques):
            p = self.parent[b]
            if p < 0:
                self.sep_up.append(None)
                self.sep_down.append(None)
                continue
            pc = self.cliques[p]
            sep = [v for v in c if v in set(pc.tolist())]
            red_child = tuple(1 + i for i, v in enumerate(c) if v not in sep)
            red_par = tuple(1 + i for i, v in enumerate(pc) if v not in sep)
            sep_in_par = [v for v in pc if v in sep]  # parent order of the separator
            perm_up = [0] + [1 + sep.index(v) for v in sep_in_par]
            shape_par = [2 if v in sep else 1 for v in pc]
            perm_down = [0] + [1 + sep_in_par.index(v) for v in sep]
            shape_child = [2 if v in sep else 1 for v in c]
            self.sep_up.append((red_child, perm_up, shape_par))
            self.sep_down.append((red_par, perm_down, shape_child))
        self.base = []  # (configurations of the clique in C order, class -> axis)
        for c in self.cliques:
            n = len(c)
            grid = ((np.arange(2**n)[:, None] >> np.arange(n)[::-1]) & 1).astype(bool)
            self.base.append((grid, {v: i for i, v in enumerate(c)}))

    def log_potentials(self, theta):
        """Log CPD potential of every clique for these theta ((K,)): arrays of shape (2,)*size."""
        h = self._hierarchy
        theta = np.asarray(theta, dtype=float)
        out = []
        for b, (grid, col) in enumerate(self.base):
            logp = np.zeros(len(grid))
            for k in self.assigned[b]:
                on = grid[:, [col[v] for v in h.parent_indices[k]]].all(axis=1)
                logp += log_cpd(grid[:, col[k]], on, theta[k])
            out.append(logp.reshape((2,) * len(col)))
        return out

    @cached_property
    def flat(self):
        """The tree as flat integer arrays for the compiled calibration (:func:`junction_grouped`).

        Clique ``b``'s table is entries ``off[b]:off[b + 1]`` of one flat array; its
        configuration ``c`` gives class ``cliques[b][i]`` the bit ``(c >> (size - 1 - i)) & 1``
        (the C order of :meth:`log_potentials`). ``cmap`` sends each configuration
        of a non-root clique to its separator entry (counted from ``sep_off[b]``), ``pmap``
        each configuration of its parent clique to the same entries (from ``pm_off[b]``). The
        classes whose CPD and evidence a clique holds are ``fac_class[fac_ptr[b]:fac_ptr[b + 1]]``,
        with their bit's shift and the mask of their parents' bits.
        """
        h = self._hierarchy
        n_cliques = len(self.cliques)
        size = np.array([len(c) for c in self.cliques], dtype=np.int64)
        off = np.concatenate(([0], np.cumsum(2**size))).astype(np.int64)
        cmap = np.zeros(off[-1], dtype=np.int64)
        sep_off, pmap, pm_off = [0], [], [0]
        for b, c in enumerate(self.cliques):
            p = self.parent[b]
            if p < 0:
                sep_off.append(sep_off[-1])
                pm_off.append(pm_off[-1])
                continue
            pc = self.cliques[p]
            sep = [v for v in c.tolist() if v in set(pc.tolist())]
            for q, m in ((c, cmap[off[b]:off[b + 1]]), (pc, None)):
                configs = np.arange(2 ** len(q))
                index = np.zeros(len(configs), dtype=np.int64)
                for i, v in enumerate(sep):
                    axis = int(np.flatnonzero(q == v)[0])
                    index += ((configs >> (len(q) - 1 - axis)) & 1) << (len(sep) - 1 - i)
                if m is not None:
                    m[:] = index
                else:
                    pmap.append(index)
                    pm_off.append(pm_off[-1] + len(index))
            sep_off.append(sep_off[-1] + 2 ** len(sep))
        fac_ptr = np.zeros(n_cliques + 1, dtype=np.int64)
        fac_class, fac_shift, fac_pmask = [], [], []
        for b, c in enumerate(self.cliques):
            shift = {v: len(c) - 1 - i for i, v in enumerate(c.tolist())}
            for k in self.assigned[b].tolist():
                fac_class.append(k)
                fac_shift.append(shift[k])
                fac_pmask.append(sum(1 << shift[q] for q in h.parent_indices[k].tolist()))
            fac_ptr[b + 1] = len(fac_class)
        row_shift = np.array([len(self.cliques[self.smallest[k]]) - 1
                              - int(np.flatnonzero(self.cliques[self.smallest[k]] == k)[0])
                              for k in range(self.n_classes)], dtype=np.int64)
        return dict(
            size=size, off=off, parent=self.parent.astype(np.int64), cmap=cmap,
            sep_off=np.array(sep_off, dtype=np.int64),
            pmap=np.concatenate(pmap) if pmap else np.zeros(0, dtype=np.int64),
            pm_off=np.array(pm_off, dtype=np.int64), fac_ptr=fac_ptr,
            fac_class=np.array(fac_class, dtype=np.int64), fac_shift=np.array(fac_shift, dtype=np.int64),
            fac_pmask=np.array(fac_pmask, dtype=np.int64),
            row_clique=self.smallest.astype(np.int64), row_shift=row_shift,
        )


@lru_cache(maxsize=256)
def _compiled(hierarchy, max_clique):
    return JunctionTree(hierarchy, max_clique)


def compile_junction_tree(hierarchy, max_clique=20):
    """The cached junction tree of ``hierarchy`` (raises TooLargeError if too wide)."""
    return _compiled(hierarchy, int(max_clique))


def _lse(x, axes):
    if not axes:
        return x
    top = x.max(axis=axes, keepdims=True)
    top[~np.isfinite(top)] = 0.0
    with np.errstate(divide="ignore"):
        return np.log(np.exp(x - top).sum(axis=axes)) + top.squeeze(axis=axes)


def _normalise(x):
    top = x.reshape(len(x), -1).max(axis=1)
    top[~np.isfinite(top)] = 0.0
    return x - top.reshape((-1,) + (1,) * (x.ndim - 1))


def junction_full(hierarchy, theta, l0, l1, max_clique=20):
    """Exact P(Y_k = 1 | all evidence) on any DAG; ``theta`` is (K,), ``l0, l1`` are (K, M). Returns (K, M)."""
    jt = compile_junction_tree(hierarchy, max_clique)
    base = jt.log_potentials(theta)
    k, m = l0.shape
    out = np.empty((k, m))
    per_object = sum(2 ** len(c) for c in jt.cliques)
    chunk = max(1, _BUDGET // per_object)
    n_cliques = len(jt.cliques)
    bad = np.zeros(m, dtype=bool)  # objects whose evidence some tree of the forest rules out

    def potential(b, sl, ev):
        """Log potential of clique ``b`` with the evidence ``ev`` (K, mm, 2) of the objects ``sl``."""
        c = jt.cliques[b]
        mm = sl.stop - sl.start
        psi = np.broadcast_to(base[b], (mm,) + base[b].shape).copy()
        for j in jt.assigned[b]:
            shape = [mm] + [2 if v == j else 1 for v in c]
            psi += ev[j].reshape(shape)
        return psi

    for start in range(0, m, chunk):
        sl = slice(start, min(m, start + chunk))
        mm = sl.stop - sl.start
        ev = np.stack([l0[:, sl], l1[:, sl]], axis=2)  # (K, mm, 2)
        up = [None] * n_cliques
        incoming = [[] for _ in range(n_cliques)]
        for b in range(n_cliques - 1, -1, -1):
            beta = potential(b, sl, ev)
            for msg in incoming[b]:
                beta += msg
            p = jt.parent[b]
            if p >= 0:
                red, perm, shape = jt.sep_up[b]
                msg = _normalise(_lse(beta, red)).transpose(perm).reshape([mm] + shape)
                up[b] = msg
                incoming[p].append(msg)
        belief = [None] * n_cliques
        for b in range(n_cliques):
            beta = potential(b, sl, ev)
            for msg in incoming[b]:
                beta += msg
            p = jt.parent[b]
            if p < 0:
                bad[sl] |= ~np.isfinite(beta.reshape(mm, -1).max(axis=1))
            else:
                red, perm, shape = jt.sep_down[b]
                with np.errstate(invalid="ignore"):
                    cavity = belief[p] - up[b]
                cavity[np.isnan(cavity)] = -np.inf
                beta += _normalise(_lse(cavity, red)).transpose(perm).reshape([mm] + shape)
            belief[b] = _normalise(beta)
        for j in range(k):
            b = jt.smallest[j]
            c = jt.cliques[b]
            i = int(np.flatnonzero(c == j)[0])
            red = tuple(1 + a for a in range(len(c)) if a != i)
            marg = _lse(belief[b], red)
            out[j, sl] = posterior_from_logs(marg[:, 0], marg[:, 1])
    if bad.any():  # counted over every tree and chunk, as the other engines count
        raise impossible_evidence(hierarchy, np.flatnonzero(bad))
    return out


def junction_grouped(hierarchy, theta, l0, l1, index, observed, rows, max_clique=20):
    """Exact P(Y_row = 1 | evidence) in G networks of one shape, calibrated object by object in compiled code.

    Network ``g`` has the parameters ``theta[:, g]`` ((n, G)); its node ``v``
    carries the evidence ``l0[index[v, g]], l1[index[v, g]]`` (rows of the (K, M)
    log-likelihood arrays) where ``observed[v, g]``, none elsewhere. Returns the
    (G, M) posterior of node ``rows[g]`` in network ``g``: the numbers of
    :func:`junction_full` (the same tree, potentials and messages), without its
    per-clique numpy calls, which dominate on small networks. Evidence of
    probability zero gives NaN (the caller raises).
    """
    jt = compile_junction_tree(hierarchy, max_clique)
    f = jt.flat
    rows = np.asarray(rows, dtype=np.int64)
    g, m = len(rows), l0.shape[1]
    m0 = np.empty((g, m))
    m1 = np.empty((g, m))
    _calibrate_grouped(f["size"], f["off"], f["parent"], f["cmap"], f["sep_off"], f["pmap"], f["pm_off"],
                       f["fac_ptr"], f["fac_class"], f["fac_shift"], f["fac_pmask"],
                       f["row_clique"][rows], f["row_shift"][rows],
                       np.ascontiguousarray(theta, dtype=float), l0, l1, np.ascontiguousarray(index, dtype=np.int64),
                       np.ascontiguousarray(observed, dtype=np.bool_), m0, m1)
    return posterior_from_logs(m0, m1)


@jit
def _lse_into(table, start, stop, groups, group_base, out, top):
    """``out[j] = log sum exp table[c]`` over the ``c`` in ``start:stop`` with ``groups[c - start + group_base] == j``
    (numpy's :func:`_lse`: the group's maximum, or 0 where it is not finite, taken out), then normalised as
    :func:`_normalise` does (the largest entry, if finite, subtracted); ``top`` is scratch space."""
    n_out = len(out)
    top[:n_out] = -np.inf
    for c in range(start, stop):
        j = groups[c - start + group_base]
        if table[c] > top[j]:
            top[j] = table[c]
    for j in range(n_out):
        if not np.isfinite(top[j]):
            top[j] = 0.0
        out[j] = 0.0
    for c in range(start, stop):
        j = groups[c - start + group_base]
        out[j] += np.exp(table[c] - top[j])
    best = -np.inf
    for j in range(n_out):
        out[j] = np.log(out[j]) + top[j]
        if out[j] > best:
            best = out[j]
    if np.isfinite(best):
        for j in range(n_out):
            out[j] -= best


@jit
def _calibrate_grouped(size, off, parent, cmap, sep_off, pmap, pm_off, fac_ptr, fac_class, fac_shift, fac_pmask,
                       row_clique, row_shift, theta, l0, l1, index, observed, m0, m1):
    """The two-pass log-space calibration of :func:`junction_full` for each network and object (see
    :func:`junction_grouped`); writes the log marginals of each network's row into ``m0, m1``.

    Only one class's marginal is wanted: the downward pass visits the cliques on the path from the
    root to that class's clique (the other beliefs are never read), and checks every root."""
    n_cliques = len(size)
    total = off[n_cliques]
    base = np.empty(total)
    beta = np.empty(total)
    belief = np.empty(total)
    cavity = np.empty(total)
    up = np.empty(sep_off[n_cliques])
    down = np.empty(sep_off[n_cliques])
    scratch = np.empty(total)
    on_path = np.zeros(n_cliques, dtype=np.bool_)
    for g in range(theta.shape[1]):
        on_path[:] = False
        b = row_clique[g]
        while b >= 0:
            on_path[b] = True
            b = parent[b]
        for b in range(n_cliques):  # log CPDs, as JunctionTree.log_potentials
            for c in range(off[b], off[b + 1]):
                base[c] = 0.0
            for f in range(fac_ptr[b], fac_ptr[b + 1]):
                th = theta[fac_class[f], g]
                mask = fac_pmask[f]
                for c in range(off[b + 1] - off[b]):
                    p1 = th if (c & mask) == mask else 0.0
                    base[off[b] + c] += np.log(p1 if (c >> fac_shift[f]) & 1 else 1.0 - p1)
        for t in range(l0.shape[1]):
            for b in range(n_cliques):  # clique potentials with their evidence
                for c in range(off[b], off[b + 1]):
                    beta[c] = base[c]
                for f in range(fac_ptr[b], fac_ptr[b + 1]):
                    k = fac_class[f]
                    e0, e1 = 0.0, 0.0
                    if observed[k, g]:
                        e0 = l0[index[k, g], t]
                        e1 = l1[index[k, g], t]
                    for c in range(off[b + 1] - off[b]):
                        beta[off[b] + c] += e1 if (c >> fac_shift[f]) & 1 else e0
            for b in range(n_cliques - 1, -1, -1):  # upward: children (higher index) first
                p = parent[b]
                if p < 0:
                    continue
                s0 = sep_off[b]
                _lse_into(beta, off[b], off[b + 1], cmap, off[b], up[s0:sep_off[b + 1]], scratch)
                for c in range(off[p + 1] - off[p]):
                    beta[off[p] + c] += up[s0 + pmap[pm_off[b] + c]]
            impossible = False
            for b in range(n_cliques):  # downward, parents first: the roots and the path to the row's clique
                p = parent[b]
                if p >= 0 and not on_path[b]:
                    continue
                if p >= 0:
                    s0 = sep_off[b]
                    for c in range(off[p + 1] - off[p]):
                        x = belief[off[p] + c] - up[s0 + pmap[pm_off[b] + c]]
                        cavity[c] = -np.inf if np.isnan(x) else x  # the 0/0 := 0 rule
                    _lse_into(cavity, 0, off[p + 1] - off[p], pmap, pm_off[b], down[s0:sep_off[b + 1]], scratch)
                    for c in range(off[b], off[b + 1]):
                        beta[c] += down[s0 + cmap[c]]
                best = -np.inf
                for c in range(off[b], off[b + 1]):
                    best = max(best, beta[c])
                if not np.isfinite(best):
                    impossible = impossible or p < 0
                    best = 0.0
                for c in range(off[b], off[b + 1]):
                    belief[c] = beta[c] - best
            b = row_clique[g]
            lo, hi = -np.inf, -np.inf
            if not impossible:
                lo = _log_marginal(belief, off[b], off[b + 1], row_shift[g], 0)
                hi = _log_marginal(belief, off[b], off[b + 1], row_shift[g], 1)
            m0[g, t] = lo
            m1[g, t] = hi


@jit
def _log_marginal(belief, start, stop, shift, y):
    """log sum exp of ``belief[start:stop]`` over the configurations whose bit ``shift`` is ``y`` (as :func:`_lse`)."""
    top = -np.inf
    for c in range(stop - start):
        if (c >> shift) & 1 == y:
            top = max(top, belief[start + c])
    if not np.isfinite(top):
        top = 0.0
    acc = 0.0
    for c in range(stop - start):
        if (c >> shift) & 1 == y:
            acc += np.exp(belief[start + c] - top)
    return np.log(acc) + top
