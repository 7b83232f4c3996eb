"""Triangulation of the hierarchy's moral graph and the junction forest it gives.

Shared by the dense junction tree (``_junction``), the sparse, determinism-aware
one (``_sparse_junction``) and the inference plan (``_plan``).

* :func:`elimination_cliques`: greedy elimination of the moral graph (every class
  joined to its parents and the parents of a class joined to each other), by
  min-fill or by a weighted min-fill whose cost is the number of *feasible*
  configurations of the clique an elimination creates (times one plus its fill-in).
* :func:`count_feasible`: the number of configurations of a set of classes in which
  every positive class has its ancestors in the set positive (the down-closed
  subsets of the induced ancestor order), without listing them.
* :func:`junction_forest`: maximal cliques joined into a forest with the running
  intersection property.
"""

import hashlib
import heapq
import json
from functools import lru_cache

import numpy as np

from .._cachedir import user_cache_dir

__all__ = ["elimination_cliques", "count_feasible", "eliminate_in_order", "junction_forest", "moral_adjacency",
           "searched_elimination", "triangulation"]


def moral_adjacency(hierarchy):
    """Neighbour sets of the moral graph (classes joined to parents and co-parents)."""
    adj = [set() for _ in range(hierarchy.n_classes)]
    for j in range(hierarchy.n_classes):
        fam = [j, *hierarchy.parent_indices[j].tolist()]
        for a in fam:
            adj[a].update(fam)
            adj[a].discard(a)
    return adj


def count_feasible(members, ancestor_matrix):
    """Configurations of ``members`` that respect the ancestor relations among them.

    A configuration is feasible when every positive member has every member that is
    its ancestor positive too: the down-closed subsets of the induced order. The
    count recurses on an element (absent: its descendants are absent; present: its
    ancestors are present), splits independent groups (no ancestor relation between
    them) into a product, and memoises on the remaining set.

    Parameters
    ----------
    members : sequence of int
        Class indices.
    ancestor_matrix : bool array (K, K)
        ``A[k, a]``: ``a`` is a proper ancestor of ``k`` (``Hierarchy.ancestor_matrix``).

    Returns
    -------
    int

    Examples
    --------
    >>> import numpy as np
    >>> anc = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0]], dtype=bool)  # a chain 0 -> 1 -> 2
    >>> count_feasible([0, 1, 2], anc)  # 000, 100, 110, 111
    4
    >>> count_feasible([1, 2], anc)
    3
    """
    members = list(members)
    n = len(members)
    up = [0] * n  # members that are ancestors of member i
    down = [0] * n  # members that are descendants of member i
    sub = np.asarray(ancestor_matrix)[np.ix_(members, members)] if n else np.zeros((0, 0), bool)
    for i, j in zip(*np.nonzero(sub)):
        up[i] |= 1 << int(j)
        down[int(j)] |= 1 << int(i)
    comp = [u | d for u, d in zip(up, down)]
    memo = {}

    def rec(s):
        if s == 0:
            return 1
        hit = memo.get(s)
        if hit is not None:
            return hit
        rest = s
        total = 1
        while rest:
            seed = rest & -rest
            seen = frontier = seed
            while frontier:  # the group of ``seed``: connected by ancestor relations
                f = frontier & -frontier
                frontier ^= f
                new = comp[f.bit_length() - 1] & s & ~seen
                seen |= new
                frontier |= new
            rest &= ~seen
            if seen == seed:
                total *= 2
            elif seen != s:
                total *= rec(seen)
            else:
                bi = max(_bits(s), key=lambda i: (comp[i] & s).bit_count())
                bit = 1 << bi
                total *= rec(s & ~bit & ~down[bi]) + rec(s & ~bit & ~up[bi])
        memo[s] = total
        return total

    return rec((1 << n) - 1)


def _bits(s):
    while s:
        f = s & -s
        s ^= f
        yield f.bit_length() - 1


def elimination_cliques(hierarchy, criterion="min-fill", max_width=None, power=2):
    """Greedy elimination of the moral graph; the clique of each eliminated class.

    Parameters
    ----------
    hierarchy : Hierarchy
    criterion : {"min-fill", "weighted"}
        ``"min-fill"`` eliminates the class whose elimination adds the fewest edges
        (ties: fewest neighbours). ``"weighted"`` minimises
        ``feasible * (1 + fill) ** power``, ``feasible`` being the feasible
        configurations of the clique created and ``fill`` the edges it adds.
    max_width : int, optional
        ``"weighted"`` only: cliques wider than this count as infinitely costly.
    power : float, default 2
        ``"weighted"`` only. Measured on cellcycle_GO, ``bench/inference.py`` prints the
        states of each criterion.

    Returns
    -------
    list of (int, frozenset)
        In elimination order: the eliminated class and its clique.
    """
    run = _Elimination(hierarchy, criterion == "weighted", max_width, power, {})
    run.run()
    return run.cliques


class _Elimination:
    """A greedy elimination in progress: it can stop at a clique size and be copied to continue."""

    def __init__(self, hierarchy, weighted, max_width, power, cache):
        self.anc = hierarchy.ancestor_matrix
        self.adj = moral_adjacency(hierarchy)
        self.weighted, self.max_width, self.power, self.cache = weighted, max_width, power, cache
        k = hierarchy.n_classes
        self.alive = [True] * k
        self.cliques = []
        self.jitter = None
        self.fills = [self._fill(v) for v in range(k)]
        self.w = [self._weight(v) for v in range(k)] if weighted else None
        self._heap()

    def copy(self, jitter=None):
        """An independent copy, continuing with ``jitter`` (a factor per class on the weighted key)."""
        new = object.__new__(_Elimination)
        new.__dict__.update(self.__dict__)
        new.adj = [set(a) for a in self.adj]
        new.alive, new.cliques, new.fills = list(self.alive), list(self.cliques), list(self.fills)
        new.w = list(self.w) if self.w is not None else None
        new.jitter = jitter
        new._heap()
        return new

    def _heap(self):
        self.current = {v: self._key(v) for v in range(len(self.adj)) if self.alive[v]}
        self.heap = [(kv, v) for v, kv in self.current.items()]
        heapq.heapify(self.heap)

    def _fill(self, v):
        # pairs of neighbours minus the edges among them (each seen from both ends); a set intersection
        # walks the smaller set, so a hub of d leaves costs O(d), not the O(d^2) of testing every pair
        adj = self.adj
        nb = adj[v]
        d = len(nb)
        return d * (d - 1) // 2 - sum(len(adj[a] & nb) for a in nb) // 2

    def count(self, members):
        """:func:`count_feasible` of a set of classes, remembered across copies."""
        members = frozenset(members)
        hit = self.cache.get(members)
        if hit is None:
            hit = self.cache[members] = count_feasible(sorted(members), self.anc)
        return hit

    def _weight(self, v):
        if self.max_width is not None and len(self.adj[v]) + 1 > self.max_width:
            return float("inf")
        return self.count(self.adj[v] | {v})

    def _key(self, v):
        if self.weighted:
            x = self.w[v] * (1 + self.fills[v]) ** self.power
            return (x * self.jitter[v] if self.jitter is not None else x, v)
        return (self.fills[v], len(self.adj[v]), v)

    def run(self, stop_weight=None, bound=None, follow=()):
        """Eliminate until done (True); False if the next clique has more than ``stop_weight``
        feasible states (weighted only) or the maximal cliques so far exceed ``bound`` states.
        The classes in ``follow`` are eliminated first, in that order."""
        adj, alive, heap, current = self.adj, self.alive, self.heap, self.current
        holders = None
        partial = 0
        if bound is not None:  # the cliques each class was in: a clique inside an earlier one is not maximal
            holders = [[] for _ in adj]
            for i, (_, c) in enumerate(self.cliques):
                for u in c:
                    holders[u].append(i)
        follow = list(follow)
        n_follow = 0
        while heap:
            if n_follow < len(follow):
                v = follow[n_follow]
                n_follow += 1
            else:
                kv, v = heap[0]
                if not alive[v] or current[v] != kv:
                    heapq.heappop(heap)
                    continue  # a stale entry
                if stop_weight is not None and self.w[v] > stop_weight:
                    return False
                heapq.heappop(heap)
            clique = frozenset(adj[v] | {v})
            if holders is not None:
                if not any(clique <= self.cliques[i][1] for i in holders[v]):
                    partial += self.count(clique)  # a maximal clique of the final triangulation
                    if partial > bound:
                        return False
                for u in clique:
                    holders[u].append(len(self.cliques))
            self.cliques.append((v, clique))
            nb = list(adj[v])
            added = []
            for i, a in enumerate(nb):
                adj[a].discard(v)
                for b in nb[i + 1:]:
                    if b not in adj[a]:
                        added.append((a, b))
                        adj[a].add(b)
                        adj[b].add(a)
            alive[v] = False
            adj[v] = set()
            # a fill changes only where the neighbours changed (nb) or an edge joined two neighbours:
            # eliminating a leaf of a hub then costs O(1), not a pass over the hub's other leaves
            touched = set(nb)
            for a, b in added:
                touched |= adj[a] & adj[b]
            for u in touched:
                if alive[u]:
                    self.fills[u] = self._fill(u)
            if self.weighted:
                for u in nb:
                    self.w[u] = self._weight(u)
            for u in touched:
                if alive[u]:
                    new = self._key(u)
                    if new != current[u]:
                        current[u] = new
                        heapq.heappush(heap, (new, u))
        return True


_KEEP = (0.05, 0.15, 0.25, 0.35)  # parts of the best order kept by the local restarts, in turn


def searched_elimination(hierarchy, restarts=24, noise=0.3, max_width=62, power=2, stop_weight=1000, prune=True,
                         local=0):
    """The weighted min-fill elimination, then randomised restarts of it; the one with fewest states.

    The greedy weighted elimination is chaotic on large DAGs (the Gene Ontology: the
    total feasible states of its maximal cliques changes several-fold with the order
    in which ties and near-ties are broken). So it runs once to the first clique of
    more than ``stop_weight`` feasible states, and from there it is finished
    ``restarts`` times: the first without change (the plain weighted min-fill), the
    others with each class's key multiplied by ``exp(noise * N(0, 1))`` (seeds
    1, 2, ...: deterministic). Then ``local`` restarts keep the first 5 to 35 % of
    the best order's tail so far and redo the rest the same way. With ``prune``, a
    restart stops as soon as its maximal cliques exceed the best total so far. Kept:
    the elimination whose maximal cliques have the fewest feasible states in total.

    Returns
    -------
    cliques : list of (int, frozenset)
        As :func:`elimination_cliques`.
    totals : list of int
        Total feasible states of each restart (None where it was stopped early).
    """
    base = _Elimination(hierarchy, True, max_width, power, {})
    if base.run(stop_weight=stop_weight):  # no clique that large: nothing to search
        return base.cliques, [sum(base.count(c) for c in junction_forest(base.cliques)[0])]
    best, best_total, totals = None, None, []
    k = hierarchy.n_classes
    start = len(base.cliques)
    for r in range(max(1, restarts) + local):
        jitter = np.exp(noise * np.random.default_rng(r).standard_normal(k)) if r else None
        run = base.copy(jitter)
        follow = ()
        if r >= max(1, restarts):  # keep a part of the best order, redo the rest
            tail = [v for v, _ in best[start:]]
            follow = tail[: int(len(tail) * _KEEP[r % len(_KEEP)])]
        if not run.run(bound=best_total if prune else None, follow=follow):
            totals.append(None)
            continue
        total = sum(run.count(c) for c in junction_forest(run.cliques)[0])
        totals.append(total)
        if best_total is None or total < best_total:
            best, best_total = run.cliques, total
    return best, totals


def junction_forest(elimination):
    """Maximal cliques of an elimination, joined into a junction forest.

    Each elimination clique hangs under the clique of the first-eliminated of its
    other members (the elimination tree has the running intersection property);
    cliques nested in a neighbour are then merged into it.

    Returns
    -------
    sets : list of frozenset
        The maximal cliques.
    neighbours : list of set of int
        Adjacency of the forest (indices into ``sets``).
    """
    pos = {v: i for i, (v, _) in enumerate(elimination)}
    sets = {i: c for i, (_, c) in enumerate(elimination)}
    nbrs = {i: set() for i in sets}
    for i, (v, c) in enumerate(elimination):
        rest = [pos[u] for u in c if u != v]
        if rest:
            j = min(rest)
            nbrs[i].add(j)
            nbrs[j].add(i)
    changed = True
    while changed:
        changed = False
        for i in list(sets):
            if i not in sets:
                continue
            for j in list(nbrs[i]):
                if sets[i] <= sets[j]:
                    for n in nbrs[i] - {j}:
                        nbrs[n].discard(i)
                        nbrs[n].add(j)
                        nbrs[j].add(n)
                    nbrs[j].discard(i)
                    del sets[i], nbrs[i]
                    changed = True
                    break
    keys = sorted(sets)
    index = {i: n for n, i in enumerate(keys)}
    return [sets[i] for i in keys], [{index[j] for j in nbrs[i]} for i in keys]


@lru_cache(maxsize=32)
def triangulation(hierarchy, criterion="min-fill"):
    """Cached :func:`elimination_cliques` then :func:`junction_forest` of a hierarchy.

    Returns ``(sets, neighbours)`` as :func:`junction_forest`; ``criterion`` is
    ``"min-fill"`` or ``"weighted"`` (cliques wider than 62 classes excluded, the
    widest a 64-bit state code holds).
    """
    if criterion == "weighted":
        elim = _cached_search(hierarchy)
    else:
        elim = elimination_cliques(hierarchy, "min-fill")
    return junction_forest(elim)


_SEARCH = {"restarts": 100, "local": 24, "noise": 0.3, "max_width": 62, "power": 2, "stop_weight": 1000}
_SEARCH_VERSION = 1  # raise when searched_elimination changes what it returns


def _cache_file(hierarchy):
    """Where the searched elimination order of ``hierarchy`` is kept across processes."""
    key = json.dumps([_SEARCH_VERSION, _SEARCH, hierarchy.n_classes, [p.tolist() for p in hierarchy.parent_indices]])
    return user_cache_dir() / "triangulation" / f"{hashlib.sha256(key.encode()).hexdigest()[:32]}.json"


def eliminate_in_order(hierarchy, order):
    """The elimination cliques of the moral graph eliminated in ``order`` (a permutation of the classes)."""
    adj = moral_adjacency(hierarchy)
    cliques = []
    for v in order:
        nb = list(adj[v])
        cliques.append((v, frozenset(adj[v] | {v})))
        for i, a in enumerate(nb):
            adj[a].discard(v)
            for b in nb[i + 1:]:
                adj[a].add(b)
                adj[b].add(a)
        adj[v] = set()
    return cliques


def _cached_search(hierarchy):
    """:func:`searched_elimination` with the default settings; when it searched (a large
    hierarchy), its order is kept in ``$XDG_CACHE_HOME/hmcpgm/triangulation`` (else
    ``~/.cache/hmcpgm/...``) and read back by later processes (an unreadable file is ignored)."""
    path = _cache_file(hierarchy)
    k = hierarchy.n_classes
    try:
        order = json.loads(path.read_text())["order"]
        if sorted(order) == list(range(k)):
            return eliminate_in_order(hierarchy, order)
    except (OSError, ValueError, KeyError, TypeError):
        pass
    cliques, totals = searched_elimination(hierarchy, **_SEARCH)
    if len(totals) > 1:  # it searched: worth keeping
        from .._atomic import atomic_write

        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with atomic_write(path) as fh:
                json.dump({"order": [int(v) for v, _ in cliques], "totals": totals}, fh)
        except OSError:
            pass
    return cliques
