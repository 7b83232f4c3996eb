"""Exact junction-tree inference that stores only the configurations the hierarchy allows.

The label CPDs are deterministic where a parent is negative: a labelling has
non-zero probability only if every positive class has all its ancestors positive.
Multiplying each clique potential by the indicator "the positive members of the
clique have their ancestors in the clique positive" leaves the joint distribution
unchanged (that indicator is 1 on every labelling of non-zero probability), and
after it every clique potential, message and belief is zero outside the
*feasible* configurations of its members. So each clique stores only those, as
64-bit codes listed directly (never by filtering 2^width), and sum-product costs
the number of feasible states, not 2^width.

Compilation (once per hierarchy, cached): triangulate the moral graph by min-fill
and by a weighted min-fill that minimises feasible states, keep the one with fewer
states; join the maximal cliques into a junction forest rooted where the index maps
are smallest; list each clique's feasible states ordered by their parent-separator
configuration (so a message up is a sum over contiguous blocks); map each state to
its configuration on every child separator (an int32 map, or a lookup table on the
separator's bits when the separator is narrow and the clique large). A class's CPD
goes to the clique with fewest states that holds its family; its evidence and its
reported marginal to the clique with fewest states that holds it.

Calibration (``_sparse_kernel.calibrate``, compiled): objects in batches sized by a
memory budget, batches on all cores; per batch only the separator messages are
kept, clique potentials are recomputed in the downward pass.
"""

import os
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache

import numpy as np

from ..exceptions import InferenceError
from ._common import impossible_evidence
from ._triangulation import count_feasible, triangulation

__all__ = ["SparseJunctionTree", "compile_sparse_junction_tree", "sparse_junction_full", "DEFAULT_BUDGET"]

DEFAULT_BUDGET = 2 * 2**30  # bytes for the per-object working memory of all threads
_MAX_WIDTH = 62  # clique members held in one int64 state code
_LUT_BITS = 16  # separators up to this many classes use a lookup table ...
_MAP_MIN_STATES = 4096  # ... when the parent clique has at least this many states
_MAX_BATCH = 16


class SparseJunctionTree:
    """A compiled determinism-aware junction forest of one hierarchy.

    Attributes
    ----------
    criterion : str
        The triangulation kept (``"min-fill"`` or ``"weighted"``).
    cliques : list of int arrays
        Class indices of each clique, parents before children (breadth first).
    parent : int array
        Parent clique of each clique (-1 for a root).
    n_states : int array
        Feasible configurations of each clique.
    n_separator_states : int
        Feasible configurations summed over all separators (message entries per object).
    max_clique_size : int
    total_states : int
    dense_states : int
        ``sum(2 ** len(clique))``, what a dense junction tree on the same cliques stores.
    structure_bytes : int
        Memory of the compiled structure (state codes, index maps, lookup tables).
    object_bytes : int
        Working memory per object during calibration.
    candidates : dict
        Total feasible states and largest clique of each triangulation tried.
    """

    def __init__(self, hierarchy):
        from ._sparse_kernel import blocks, enumerate_states, separator_keys

        anc = hierarchy.ancestor_matrix
        k = hierarchy.n_classes
        self.n_classes = k
        best = None
        self.candidates = {}
        for crit in ("min-fill", "weighted"):
            sets, nbrs = triangulation(hierarchy, crit)
            width = max(len(c) for c in sets)
            counts = [count_feasible(sorted(c), anc) for c in sets]
            self.candidates[crit] = {"states": int(sum(counts)), "max_clique_size": width,
                                     "max_states": int(max(counts))}
            if width > _MAX_WIDTH:
                continue
            if best is None or sum(counts) < sum(best[3]):
                best = (crit, sets, nbrs, counts)
        if best is None:
            raise InferenceError(
                f"engine='sparse' holds a clique's configuration in 64 bits, but every "
                f"triangulation of this hierarchy has a clique wider than {_MAX_WIDTH} classes "
                f"(min-fill: {self.candidates['min-fill']['max_clique_size']}); use engine='loopy'"
            )
        self.criterion, sets, nbrs, counts = best
        order, parent = _root_forest(sets, nbrs, counts)
        index = {c: i for i, c in enumerate(order)}
        self.cliques = []
        self.parent = np.array([-1 if parent[c] < 0 else index[parent[c]] for c in order], dtype=np.int64)
        self.n_states = np.array([counts[c] for c in order], dtype=np.int64)
        n_cl = len(order)
        topo = np.empty(k, dtype=np.int64)
        topo[np.asarray(hierarchy.topological_order)] = np.arange(k)
        members = [sorted(sets[c], key=lambda v: topo[v]) for c in order]
        member_sets = [set(m) for m in members]
        # homes: CPD by family, evidence and output by class; fewest states first
        by_size = sorted(range(n_cl), key=lambda b: (self.n_states[b], b))
        ev_home = np.full(k, -1, dtype=np.int64)
        cpd_home = np.full(k, -1, dtype=np.int64)
        for b in by_size:
            for v in members[b]:
                if ev_home[v] < 0:
                    ev_home[v] = b
        for j in range(k):
            fam = {j, *hierarchy.parent_indices[j].tolist()}
            cpd_home[j] = next(b for b in by_size if fam <= member_sets[b])
        children = [[] for _ in range(n_cl)]
        for b in range(n_cl):
            if self.parent[b] >= 0:
                children[self.parent[b]].append(b)
        state_chunks, bit_of, sep_keys, blk_chunks = [], [], [], []
        decide_of = []
        ev_class, ev_ptr = [], [0]
        cpd_bit, cpd_pmask, cpd_class, cpd_ptr = [], [], [], [0]
        for b in range(n_cl):
            mem = members[b]
            evs = [v for v in mem if ev_home[v] == b]
            rest = [v for v in mem if ev_home[v] != b]
            bits = {v: i for i, v in enumerate(evs + rest)}
            p = self.parent[b]
            # separator members in the order the parent decides them: consecutive
            # parent states then map to nearby separator states (cache locality)
            sep = [v for v in decide_of[p] if v in member_sets[b]] if p >= 0 else []
            decide = sep + [v for v in mem if v not in set(sep)]
            up = np.zeros(len(mem), dtype=np.int64)
            down = np.zeros(len(mem), dtype=np.int64)
            for v in mem:
                for u in mem:
                    if anc[v, u]:  # u is an ancestor of v
                        up[bits[v]] |= np.int64(1) << bits[u]
                        down[bits[u]] |= np.int64(1) << bits[v]
            st = np.empty(self.n_states[b], dtype=np.int64)
            n = enumerate_states(np.array([bits[v] for v in decide], dtype=np.int64), up, down, st)
            if n != len(st):  # pragma: no cover - the count and the listing agree by construction
                raise AssertionError(f"clique {b}: listed {n} states, counted {len(st)}")
            keys = separator_keys(st, np.array([bits[v] for v in sep], dtype=np.int64))
            starts, uniq = blocks(keys)
            state_chunks.append(st)
            blk_chunks.append(starts)
            sep_keys.append(uniq)
            bit_of.append(bits)
            decide_of.append(decide)
            ev_class.extend(evs)
            ev_ptr.append(len(ev_class))
            for j in mem:
                if cpd_home[j] == b:
                    cpd_class.append(j)
                    cpd_bit.append(bits[j])
                    pm = np.int64(0)
                    for q in hierarchy.parent_indices[j].tolist():
                        pm |= np.int64(1) << bits[q]
                    cpd_pmask.append(pm)
            cpd_ptr.append(len(cpd_class))
            self.cliques.append(np.array(mem, dtype=np.int64))
        # child index maps
        ckind = np.zeros(n_cl, dtype=np.int64)
        map_off = np.zeros(n_cl, dtype=np.int64)
        lut_off = np.zeros(n_cl, dtype=np.int64)
        sbit_ptr = [0]
        sbits = []
        maps, luts = [], []
        n_map = n_lut = 0
        for ch in range(n_cl):
            p = self.parent[ch]
            if p < 0:
                sbit_ptr.append(len(sbits))
                continue
            n_sep_members = len(decide_of[ch]) - 0
            sep = [v for v in decide_of[ch] if v in member_sets[p]]
            n_sep_members = len(sep)
            sb = np.array([bit_of[p][v] for v in sep], dtype=np.int64)
            keys = separator_keys(state_chunks[p], sb)
            idx = np.searchsorted(sep_keys[ch], keys)
            if not np.array_equal(sep_keys[ch][np.minimum(idx, len(sep_keys[ch]) - 1)], keys):
                raise AssertionError("a separator configuration is missing")  # pragma: no cover
            if n_sep_members <= _LUT_BITS and len(keys) >= _MAP_MIN_STATES:
                lut = np.full(1 << n_sep_members, -1, dtype=np.int32)
                lut[sep_keys[ch]] = np.arange(len(sep_keys[ch]), dtype=np.int32)
                ckind[ch] = 1
                lut_off[ch] = n_lut
                n_lut += len(lut)
                luts.append(lut)
                sbits.extend(sb.tolist())
            else:
                map_off[ch] = n_map
                n_map += len(idx)
                maps.append(idx.astype(np.int32))
            sbit_ptr.append(len(sbits))
        n_sep = np.array([len(u) for u in sep_keys], dtype=np.int64)
        self.n_separator_states = int(n_sep[self.parent >= 0].sum())
        self.max_clique_size = max(len(c) for c in self.cliques)
        self.total_states = int(self.n_states.sum())
        self.dense_states = int(sum(2 ** len(c) for c in self.cliques))
        ch_ptr = np.zeros(n_cl + 1, dtype=np.int64)
        ch_list = []
        for b in range(n_cl):
            ch_list.extend(children[b])
            ch_ptr[b + 1] = len(ch_list)
        msg_off = np.concatenate(([0], np.cumsum(n_sep)[:-1])).astype(np.int64)
        blk_off = np.concatenate(([0], np.cumsum([len(s) for s in blk_chunks]))).astype(np.int64)
        out_class = np.array(ev_class, dtype=np.int64)
        out_bit = np.array([bit_of[ev_home[j]][j] for j in ev_class], dtype=np.int64)
        self._arrays = dict(
            parent=self.parent,
            state_ptr=np.concatenate(([0], np.cumsum(self.n_states)[:-1])).astype(np.int64),
            states=np.concatenate(state_chunks),
            blk_off=blk_off,
            blk_ptr=np.concatenate(blk_chunks).astype(np.int64),
            msg_off=msg_off,
            ch_ptr=ch_ptr,
            children=np.array(ch_list, dtype=np.int64),
            ckind=ckind,
            map_off=map_off,
            maps=np.concatenate(maps) if maps else np.zeros(0, np.int32),
            lut_off=lut_off,
            luts=np.concatenate(luts) if luts else np.zeros(0, np.int32),
            sbit_ptr=np.array(sbit_ptr, dtype=np.int64),
            sbits=np.array(sbits, dtype=np.int64),
            cpd_ptr=np.array(cpd_ptr, dtype=np.int64),
            cpd_bit=np.array(cpd_bit, dtype=np.int64),
            cpd_pmask=np.array(cpd_pmask, dtype=np.int64),
            ev_ptr=np.array(ev_ptr, dtype=np.int64),
            ev_class=np.array(ev_class, dtype=np.int64),
            out_ptr=np.array(ev_ptr, dtype=np.int64),
            out_class=out_class,
            out_bit=out_bit,
        )
        self._cpd_class = np.array(cpd_class, dtype=np.int64)
        self._n_msg = int(n_sep.sum())
        marg_rows = [int(n_sep[children[b]].sum()) for b in range(n_cl)]
        self._n_marg = max(marg_rows) if marg_rows else 0
        n_ev_max = max(ev_ptr[b + 1] - ev_ptr[b] for b in range(n_cl))
        self._n_tab = 256 * max(1, (n_ev_max + 7) // 8)
        self.structure_bytes = int(sum(a.nbytes for a in self._arrays.values()))
        # float64 messages (linear and log), separator marginals, evidence tables
        # (linear and log); two log likelihoods and the output per class; a flag per clique
        self.object_bytes = int(8 * (2 * self._n_msg + self._n_marg + 2 * self._n_tab + 3 * k) + n_cl)

    def __repr__(self):
        return (
            f"SparseJunctionTree({len(self.cliques)} cliques, largest {self.max_clique_size} classes, "
            f"{self.total_states:,} feasible states (dense {self.dense_states:.3g}), "
            f"{self.criterion} triangulation)"
        )

    def cpd_tables(self, theta):
        """Per assigned CPD entry: P(Y = 1) and P(Y = 0 | parents positive)."""
        t1 = np.asarray(theta, dtype=float)[self._cpd_class]
        return t1, 1.0 - t1

    def batch_size(self, budget_bytes, n_threads=1):
        """Objects per batch (per thread) within ``budget_bytes``; 0 if one object does not fit."""
        per_thread = budget_bytes // max(1, n_threads)
        return int(min(_MAX_BATCH, per_thread // self.object_bytes))


def _root_forest(sets, nbrs, counts):
    """Breadth-first order and parents, each tree rooted where child maps are smallest.

    A non-root clique maps nothing for its own parent separator (its states are
    ordered by it); the parent clique holds one entry per state for each child.
    Rooting at ``r`` costs the states of the parent end of every edge; moving the
    root across an edge (u, v) changes that by ``counts[v] - counts[u]``.
    """
    n = len(sets)
    seen = [False] * n
    order, parent = [], [-1] * n
    for start in range(n):
        if seen[start]:
            continue
        comp, par = [start], {start: -1}
        seen[start] = True
        for u in comp:
            for v in sorted(nbrs[u]):
                if not seen[v]:
                    seen[v] = True
                    par[v] = u
                    comp.append(v)
        cost = {start: sum(counts[par[v]] for v in comp if par[v] >= 0)}
        for u in comp[1:]:
            cost[u] = cost[par[u]] + counts[u] - counts[par[u]]
        root = min(comp, key=lambda u: (cost[u], u))
        queue, par = [root], {root: -1}
        for u in queue:
            for v in sorted(nbrs[u]):
                if v not in par:
                    par[v] = u
                    queue.append(v)
        order.extend(queue)
        for u in queue:
            parent[u] = par[u]
    return order, parent


@lru_cache(maxsize=16)
def compile_sparse_junction_tree(hierarchy):
    """The cached :class:`SparseJunctionTree` of ``hierarchy``."""
    return SparseJunctionTree(hierarchy)


def sparse_junction_full(hierarchy, theta, l0, l1, *, budget_bytes=DEFAULT_BUDGET, progress=False, stats=None):
    """Exact P(Y_k = 1 | all evidence) on any DAG; ``l0, l1`` are (K, M). Returns (K, M).

    Objects are calibrated in batches of at most 16 per thread, as many as
    ``budget_bytes`` of working memory allow, on every core; ``progress`` shows a
    tqdm bar over objects. Raises InferenceError when evidence is impossible or one
    object does not fit in the budget. A dict passed as ``stats`` receives the batch
    size, thread count and the number of clique passes redone in log space.
    """
    from ._sparse_kernel import calibrate

    jt = compile_sparse_junction_tree(hierarchy)
    k, m = l0.shape
    out = np.empty((k, m))
    if m == 0:
        return out
    n_threads = max(1, min(os.cpu_count() or 1, m))
    batch = jt.batch_size(budget_bytes, n_threads)
    if batch < 1:
        n_threads = 1
        batch = jt.batch_size(budget_bytes, 1)
    if batch < 1:
        raise InferenceError(
            f"engine='sparse' needs {jt.object_bytes:,} bytes of working memory per object "
            f"({jt.total_states:,} feasible clique states, {jt.n_separator_states:,} separator "
            f"states), more than budget_bytes={budget_bytes:,}; raise the budget or use engine='loopy'"
        )
    batch = min(batch, -(-m // n_threads))
    t1, t0 = jt.cpd_tables(theta)
    with np.errstate(divide="ignore"):
        lt1, lt0 = np.log(t1), np.log(t0)
    a = jt._arrays
    st = tuple(a[n] for n in ("state_ptr", "states", "blk_off", "blk_ptr", "msg_off", "ch_ptr", "children",
                              "ckind", "maps", "map_off", "luts", "lut_off", "sbit_ptr", "sbits", "cpd_ptr",
                              "cpd_bit", "cpd_pmask")) + (t1, t0, lt1, lt0)
    ev = (a["ev_ptr"], a["ev_class"])
    starts = list(range(0, m, batch))
    bad = np.zeros(m, dtype=bool)
    n_cl = len(jt.cliques)
    log_passes = []

    def run(start):
        sl = slice(start, min(m, start + batch))
        b = sl.stop - sl.start
        res = np.empty((k, b))
        flags = np.zeros(b, dtype=np.bool_)
        n_log = calibrate(
            a["parent"], st, ev, a["out_ptr"], a["out_class"], a["out_bit"],
            np.ascontiguousarray(l0[:, sl]), np.ascontiguousarray(l1[:, sl]),
            np.empty((jt._n_msg, b)), np.empty((jt._n_msg, b)), np.zeros((n_cl, b), dtype=np.bool_),
            np.empty((jt._n_tab, b)), np.empty((jt._n_tab, b)), np.empty((max(1, jt._n_marg), b)), res, flags,
        )
        out[:, sl] = res
        bad[sl] = flags
        log_passes.append(n_log)
        return b

    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=m, desc="sparse junction tree", unit="object")
    try:
        if n_threads == 1 or len(starts) == 1:
            for s in starts:
                done = run(s)
                if bar is not None:
                    bar.update(done)
        else:
            with ThreadPoolExecutor(n_threads) as pool:
                for done in pool.map(run, starts):
                    if bar is not None:
                        bar.update(done)
    finally:
        if bar is not None:
            bar.close()
    if stats is not None:
        stats.update(batch=batch, threads=n_threads, log_passes=int(sum(log_passes)))
    if bad.any():
        raise impossible_evidence(hierarchy, np.flatnonzero(bad))
    return out
