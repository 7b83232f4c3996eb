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

import heapq
from functools import lru_cache

import numpy as np

__all__ = ["elimination_cliques", "count_feasible", "junction_forest", "moral_adjacency", "triangulation"]


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
    k = hierarchy.n_classes
    adj = moral_adjacency(hierarchy)
    anc = hierarchy.ancestor_matrix
    weighted = criterion == "weighted"

    def fill(v):
        nb = list(adj[v])
        return sum(1 for i, a in enumerate(nb) for b in nb[i + 1:] if b not in adj[a])

    def weight(v):
        if max_width is not None and len(adj[v]) + 1 > max_width:
            return float("inf")
        return count_feasible(adj[v] | {v}, anc)

    def key(v):
        if weighted:
            return (w[v] * (1 + fills[v]) ** power, v)
        return (fills[v], len(adj[v]), v)

    fills = [fill(v) for v in range(k)]
    w = [weight(v) for v in range(k)] if weighted else None
    heap = [(key(v), v) for v in range(k)]
    heapq.heapify(heap)
    current = {v: key(v) for v in range(k)}
    alive = [True] * k
    cliques = []
    while heap:
        kv, v = heapq.heappop(heap)
        if not alive[v] or current[v] != kv:
            continue  # a stale entry
        cliques.append((v, frozenset(adj[v] | {v})))
        nb = list(adj[v])
        for i, a in enumerate(nb):
            adj[a].discard(v)
            for b in nb[i + 1:]:
                adj[a].add(b)
                adj[b].add(a)
        alive[v] = False
        adj[v] = set()
        touched = set(nb)
        for a in nb:
            touched |= adj[a]
        for u in touched:
            if alive[u]:
                fills[u] = fill(u)
        if weighted:
            for u in nb:
                w[u] = weight(u)
        for u in touched:
            if alive[u]:
                new = key(u)
                if new != current[u]:
                    current[u] = new
                    heapq.heappush(heap, (new, u))
    return cliques


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
        elim = elimination_cliques(hierarchy, "weighted", max_width=62)
    else:
        elim = elimination_cliques(hierarchy, "min-fill")
    return junction_forest(elim)
