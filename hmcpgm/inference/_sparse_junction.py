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
and by a weighted min-fill that minimises feasible states (with randomised restarts
of its tail, see ``_triangulation.searched_elimination``), keep the one with fewer
states; join the maximal cliques into a junction forest, each tree rooted at its
largest clique (the one clique that sends no message up); list each clique's
feasible states ordered by their parent-separator configuration (so a message up
is a sum over contiguous blocks); map each state to its configuration on every
child separator (an int32 map, or a lookup table on the
separator's bits when the separator is narrow and the clique large). A class's CPD
goes to the clique with fewest states that holds its family; its evidence and its
reported marginal to the clique with fewest states that holds it.

Calibration (``_sparse_kernel.calibrate``, compiled): objects in batches sized by a
memory budget, batches on all cores; per batch only the separator messages are
kept, clique potentials are recomputed in the downward pass.
"""

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache

import numpy as np

from ..exceptions import TooLargeError
from ._common import impossible_evidence
from ._triangulation import count_feasible, triangulation

__all__ = ["SparseJunctionTree", "compile_sparse_junction_tree", "sparse_junction_full", "sparse_size",
           "DEFAULT_BUDGET"]

DEFAULT_BUDGET = 4 * 2**30  # bytes: compiled structure plus the working memory of all threads
_MAX_WIDTH = 62  # clique members held in one int64 state code
_GROUP_BITS = 12  # local factors are packed into groups of at most this many members
_MAX_BATCH = 64


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
        size = sparse_size(hierarchy)
        self.candidates = size["candidates"]
        if size["criterion"] is None:
            raise TooLargeError(
                f"engine='sparse' holds a clique's configuration in 64 bits, but every "
                f"triangulation of this hierarchy has a clique wider than {_MAX_WIDTH} classes "
                f"(min-fill: {self.candidates['min-fill']['max_clique_size']}); use engine='loopy'"
            )
        self.criterion = size["criterion"]
        sets, nbrs = triangulation(hierarchy, self.criterion)
        counts = size["counts"]
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
        for b in range(n_cl):
            mem = members[b]
            bits = {v: i for i, v in enumerate(mem)}
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
            self.cliques.append(np.array(mem, dtype=np.int64))
        self.n_bytes = np.array([(len(m) + 7) // 8 for m in members], dtype=np.int64)
        # children: narrow separators go into groups (through a lookup table on the
        # separator's code), wide ones get an int32 map from parent state to separator state
        gmax = [max(4, min(_GROUP_BITS, int(self.n_states[b]).bit_length() - 2)) for b in range(n_cl)]
        ckind = np.zeros(n_cl, dtype=np.int64)
        map_off = np.zeros(n_cl, dtype=np.int64)
        lut_off = np.zeros(n_cl, dtype=np.int64)
        sep_bits = [None] * n_cl  # bits (in the parent) of each child's separator, in its key order
        maps, luts = [], []
        n_map = n_lut = 0
        for ch in range(n_cl):
            p = self.parent[ch]
            if p < 0:
                continue
            sep = [v for v in decide_of[ch] if v in member_sets[p]]
            sb = [bit_of[p][v] for v in sep]
            sep_bits[ch] = sb
            if len(sep) <= gmax[p]:
                lut = np.full(1 << len(sep), -1, dtype=np.int32)
                lut[sep_keys[ch]] = np.arange(len(sep_keys[ch]), dtype=np.int32)
                ckind[ch] = 1
                lut_off[ch] = n_lut
                n_lut += len(lut)
                luts.append(lut)
            else:
                keys = separator_keys(state_chunks[p], np.array(sb, dtype=np.int64))
                idx = np.searchsorted(sep_keys[ch], keys)
                if not np.array_equal(sep_keys[ch][np.minimum(idx, len(sep_keys[ch]) - 1)], keys):
                    raise AssertionError("a separator configuration is missing")  # pragma: no cover
                map_off[ch] = n_map
                n_map += len(idx)
                maps.append(idx.astype(np.int32))
        # local factors of each clique, packed into groups of at most gmax members
        cpd_class = []
        bcpd, bcpd_bit, bcpd_pmask, bcpd_ptr = [], [], [], [0]
        grp_ptr, gnb, gtab, gpext_chunks, gpext_off = [0], [], [], [], []
        gf_ptr, gf_kind, gf_a, gf_i, gf_pm, gf_sb_ptr, gf_sb = [0], [], [], [], [], [0], []
        n_pext = 0
        self._n_tab = 1
        for b in range(n_cl):
            bits = bit_of[b]
            factors = [((bits[j],), 0, j) for j in members[b] if ev_home[j] == b]
            for j in members[b]:
                if cpd_home[j] != b:
                    continue
                e = len(cpd_class)
                cpd_class.append(j)
                fam = (bits[j], *(bits[q] for q in hierarchy.parent_indices[j].tolist()))
                if len(fam) <= gmax[b]:
                    factors.append((fam, 1, e))
                else:
                    bcpd.append(e)
                    bcpd_bit.append(bits[j])
                    bcpd_pmask.append(sum(1 << q for q in fam[1:]))
            bcpd_ptr.append(len(bcpd))
            factors += [(tuple(sep_bits[ch]), 2, ch) for ch in children[b] if ckind[ch] == 1]
            groups = []  # [member bits (list), factors]
            for f in sorted(factors, key=lambda f: (-len(f[0]), f[1], f[2])):
                fb = set(f[0])
                fits = [g for g in groups if len(set(g[0]) | fb) <= gmax[b]]
                if fits:
                    g = max(fits, key=lambda g: (len(set(g[0]) & fb), -len(set(g[0]) | fb)))
                    g[0].extend(sorted(fb - set(g[0])))
                    g[1].append(f)
                else:
                    groups.append([sorted(fb), [f]])
            row = 0
            for ubits, fs in groups:
                local = {q: i for i, q in enumerate(ubits)}
                gnb.append(len(ubits))
                gtab.append(row)
                row += 1 << len(ubits)
                pext = np.zeros((self.n_bytes[b], 256), dtype=np.int64)
                v = np.arange(256)
                for q, i in local.items():
                    pext[q // 8] += ((v >> (q % 8)) & 1) << i
                gpext_off.append(n_pext)
                n_pext += pext.size
                gpext_chunks.append(pext.ravel())
                for fbits, kind, x in fs:
                    gf_kind.append(kind)
                    gf_a.append(x)
                    gf_i.append(local[fbits[0]])
                    gf_pm.append(sum(1 << local[q] for q in fbits[1:]) if kind == 1 else 0)
                    if kind == 2:
                        gf_sb.extend(local[q] for q in fbits)
                    gf_sb_ptr.append(len(gf_sb))
                gf_ptr.append(len(gf_kind))
            grp_ptr.append(len(gnb))
            self._n_tab = max(self._n_tab, row)
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
        i64 = np.int64
        self._st = (
            self.parent,
            np.concatenate(([0], np.cumsum(self.n_states)[:-1])).astype(i64),
            np.concatenate(state_chunks),
            np.concatenate(([0], np.cumsum([len(s) for s in blk_chunks]))).astype(i64),
            np.concatenate(blk_chunks).astype(i64),
            np.concatenate(([0], np.cumsum(n_sep)[:-1])).astype(i64),
            ch_ptr,
            np.array(ch_list, dtype=i64),
            ckind,
            np.concatenate(maps) if maps else np.zeros(0, np.int32),
            map_off,
            np.concatenate(luts) if luts else np.zeros(0, np.int32),
            lut_off,
            np.array(bcpd_ptr, dtype=i64),
            np.array(bcpd, dtype=i64),
            np.array(bcpd_bit, dtype=i64),
            np.array(bcpd_pmask, dtype=i64),
        )
        self._gr = (
            np.array(grp_ptr, dtype=i64), np.array(gnb, dtype=i64), np.array(gpext_off, dtype=i64),
            np.concatenate(gpext_chunks).astype(np.int32) if gpext_chunks else np.zeros(0, np.int32),
            np.array(gtab, dtype=i64), np.array(gf_ptr, dtype=i64), np.array(gf_kind, dtype=i64),
            np.array(gf_a, dtype=i64), np.array(gf_i, dtype=i64), np.array(gf_pm, dtype=i64),
            np.array(gf_sb_ptr, dtype=i64), np.array(gf_sb, dtype=i64),
        )
        self._cpd_class = np.array(cpd_class, dtype=i64)
        self._n_msg = int(n_sep.sum())
        self._max_ch = max(1, max(len(c) for c in children))
        self._max_g = max(1, int(np.diff(self._gr[0]).max()))
        marg_rows = [int(n_sep[children[b]].sum()) for b in range(n_cl)]
        self._n_marg = max(1, max(marg_rows))
        self.n_groups = len(gnb)
        self.structure_bytes = int(sum(x.nbytes for x in self._st + self._gr))
        # float64 per object: messages (linear and log), separator marginals, group
        # tables (linear and log) and group sums; four likelihood rows and the output
        # per class; a flag per clique
        self.object_bytes = int(8 * (2 * self._n_msg + self._n_marg + 3 * self._n_tab + 5 * k) + n_cl)

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
        """Objects per batch (per thread) within ``budget_bytes`` (structure included); 0 if none fits."""
        per_thread = (budget_bytes - self.structure_bytes) // max(1, n_threads)
        return int(min(_MAX_BATCH, per_thread // self.object_bytes))


def _root_forest(sets, nbrs, counts):
    """Breadth-first order and parents, each tree rooted at its clique with most states.

    Every clique but the root sends a message up, a pass over all its states: rooting
    at the largest clique saves the largest upward pass. Among equally large cliques,
    the root is where child maps are smallest: a non-root clique maps nothing for
    its own parent separator (its states are ordered by it), the parent clique holds
    one entry per state for each child, so rooting at ``r`` costs the states of the
    parent end of every edge; moving the root across an edge (u, v) changes that by
    ``counts[v] - counts[u]``.
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
        root = min(comp, key=lambda u: (-counts[u], cost[u], u))
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


@lru_cache(maxsize=32)
def sparse_size(hierarchy):
    """Sizes of the sparse junction tree without listing any state (cached).

    Tries min-fill and the weighted min-fill, keeps the one with fewer feasible
    states among those whose cliques fit 64-bit codes. On a large DAG the first call
    searches the weighted triangulation (randomised restarts, see
    ``_triangulation.searched_elimination``), which takes a while; its order is kept
    on disk and later processes read it back. Returns a dict: ``criterion``
    (None if none fits), ``counts`` (feasible states per clique), ``total_states``,
    ``max_states``, ``max_clique_size``, ``separator_states``, ``max_child_states``
    (largest sum of a clique's children's separator states), ``dense_states``,
    ``object_bytes`` and ``structure_bytes`` (estimates), ``candidates``.
    """
    anc = hierarchy.ancestor_matrix
    best = None
    candidates = {}
    for crit in ("min-fill", "weighted"):
        sets, nbrs = triangulation(hierarchy, crit)
        width = max(len(c) for c in sets)
        counts = [count_feasible(sorted(c), anc) for c in sets]
        candidates[crit] = {"states": int(sum(counts)), "max_clique_size": width, "max_states": int(max(counts))}
        if width <= _MAX_WIDTH and (best is None or sum(counts) < sum(best[3])):
            best = (crit, sets, nbrs, counts)
    out = {"criterion": None, "candidates": candidates}
    if best is None:
        return out
    crit, sets, nbrs, counts = best
    sep = {}
    for i in range(len(sets)):
        for j in nbrs[i]:
            if i < j:
                sep[i, j] = count_feasible(sorted(sets[i] & sets[j]), anc)
    child_states = max((sum(sep[min(i, j), max(i, j)] for j in nbrs[i]) for i in range(len(sets))), default=0)
    n_sep = sum(sep.values())
    k = hierarchy.n_classes
    out.update(
        criterion=crit, counts=counts, total_states=int(sum(counts)), max_states=int(max(counts)),
        max_clique_size=max(len(c) for c in sets), separator_states=int(n_sep),
        max_child_states=int(child_states), dense_states=int(sum(2 ** len(c) for c in sets)),
        # as SparseJunctionTree.object_bytes, with the largest group tables
        object_bytes=int(8 * (2 * n_sep + child_states + 3 * 2**_GROUP_BITS + 5 * k) + len(sets)),
        # state codes (8 bytes), block pointers and wide-child maps (at most 4 + 8 per state)
        structure_bytes=int(20 * sum(counts)),
    )
    return out


@lru_cache(maxsize=16)
def compile_sparse_junction_tree(hierarchy):
    """The cached :class:`SparseJunctionTree` of ``hierarchy``."""
    return SparseJunctionTree(hierarchy)


def sparse_junction_full(hierarchy, theta, l0, l1, *, budget_bytes=DEFAULT_BUDGET, progress=False, stats=None,
                         impossible_nan=False):
    """Exact P(Y_k = 1 | all evidence) on any DAG; ``l0, l1`` are (K, M). Returns (K, M).

    Objects are calibrated in batches of at most 64 per thread, as many as
    ``budget_bytes`` of working memory allow, on every core; ``progress`` shows a
    tqdm bar over objects. Raises InferenceError when evidence is impossible (with
    ``impossible_nan``, those objects' columns are NaN instead) and TooLargeError when one
    object does not fit in the budget. A dict passed as ``stats`` receives the batch
    size, thread count and the number of clique passes redone in log space.
    """
    from ._sparse_calibrate import calibrate

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
        raise TooLargeError(
            f"engine='sparse' needs {jt.object_bytes:,} bytes of working memory per object "
            f"({jt.total_states:,} feasible clique states, {jt.n_separator_states:,} separator "
            f"states), more than budget_bytes={budget_bytes:,}; raise the budget or use engine='loopy'"
        )
    batch = min(batch, -(-m // n_threads))
    t1, t0 = jt.cpd_tables(theta)
    with np.errstate(divide="ignore"):
        lt1, lt0 = np.log(t1), np.log(t0)
    st = jt._st + (t1, t0, lt1, lt0, jt.n_bytes)
    starts = list(range(0, m, batch))
    bad = np.zeros(m, dtype=bool)
    n_cl = len(jt.cliques)
    log_passes = []

    # each thread's working arrays, allocated once for a full batch and reused by every batch
    # (the last, smaller one too): first writes to fresh memory cost as much as a clique pass
    local = threading.local()
    rows = (jt._n_msg, jt._n_msg, n_cl, jt._n_tab, jt._n_tab, jt._n_tab, jt._n_marg)

    def buffers(b):
        if getattr(local, "flat", None) is None:
            local.flat = tuple(np.empty(r * batch, dtype=np.bool_ if i == 2 else float) for i, r in enumerate(rows))
        return tuple(f[: r * b].reshape(r, b) for f, r in zip(local.flat, rows))

    def run(start):
        sl = slice(start, min(m, start + batch))
        b = sl.stop - sl.start
        res = np.empty((k, b))
        flags = np.zeros(b, dtype=np.bool_)
        ll0 = np.ascontiguousarray(l0[:, sl])
        ll1 = np.ascontiguousarray(l1[:, sl])
        n_log = calibrate(st, jt._gr, np.exp(ll0), np.exp(ll1), ll0, ll1, *buffers(b), res, flags, jt._max_ch,
                          jt._max_g)
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
        if not impossible_nan:
            raise impossible_evidence(hierarchy, np.flatnonzero(bad))
        out[:, bad] = np.nan
    return np.clip(out, 0.0, 1.0, out=out)  # rounding in the clique products can pass 1 by a few ulps
