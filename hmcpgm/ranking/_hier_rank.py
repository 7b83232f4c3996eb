"""HierRank: the hierarchically consistent ranking of largest CATCH."""

from dataclasses import replace

import numpy as np

from .._arrays import count
from ..exceptions import InputError
from ..options import RANK_METHODS, check_choice
from . import _kernels
from ._auto import AUTO_MAX_STATES, auto_sequences, greedy_sequences
from ._checks import ranked_input
from ._exact import exact_sequences
from ._horn import horn_object_sequences, horn_parent
from ._lagrange import LAGRANGE_ITER, lagrangian
from ._merge import chain_merge
from ._ranking import computed_ranking
from ._sidney import sidney_sequences
from ._structure import in_name_order

__all__ = ["hier_rank"]


def hier_rank(values, hierarchy, method="auto", *, max_states=AUTO_MAX_STATES, max_iter=LAGRANGE_ITER,
              certify=False):
    """Rank all events (object, class) consistently with the hierarchy (HierRank).

    Maximises CATCH (see :func:`catch`) among rankings that put every ancestor
    event before its descendants. Objects are independent: each object's order
    is split into maximum-mean prefix blocks and all blocks are merged by mean
    (Chain-Merge), which is the optimal interleaving.

    Parameters
    ----------
    values : array-like of shape (M, K), a DataFrame with class columns, or a Series labelled by class
        The value of every event, for example mLPRs. A DataFrame is aligned by class
        name and its row index labels the ranking's objects (``Ranking.index``, so
        ``Ranking.top`` gives a DataFrame); a Series labelled by class names is one
        object, its name the row label, as its one-row DataFrame would be. Finite,
        and at most ``float max / (4 K^2)`` in magnitude (their weighted sums must
        not overflow).
    hierarchy : Hierarchy
        Fixes the column order of ``values`` and the ancestor constraints.
    method : {"auto", "horn", "greedy", "relaxed", "sidney", "lagrangian", "exact"}
        Every method returns a hierarchically consistent ranking.

        - ``"auto"`` (default): ``"horn"`` on forests. On DAGs, per weakly
          connected component of the hierarchy (components are independent,
          and Chain-Merge of their optimal orders is optimal): a tree by
          Horn's rule, a component with at most ``max_states`` ancestor-closed
          sets by dynamic programming over them (the ``"exact"`` method on
          that component), any other by ``"greedy"``. Exact whenever every
          component is a tree or small: by default on every DAG of at most 12
          classes.
        - ``"horn"``: exact on forests, by Horn's merge rule (1972), O(n log n)
          for n = M*K events (a compiled kernel, O(K log K) per object).
          Refused on a DAG.
        - ``"greedy"``: Horn's rule carried over to DAGs. Per object, the group
          of classes of largest mean that still waits for a parent joins the
          end of a parent group: the only one (the exact step of Horn's rule),
          or, when its classes have parents in several groups, the one of
          smallest mean among those that are no other one's ancestor (a
          heuristic: the group follows its last parent, and a low mean would
          rank that parent late). Optimal on a forest, as ``"horn"``: the
          same order unless groups of equal mean tie, which the two may
          place in another order (the same CATCH); O((K + E) log K) per object plus ancestor searches where classes
          have several parent groups. No worst-case factor; certified per
          instance by :func:`hier_rank_bound` (see :func:`certify`).
        - ``"relaxed"``: for DAGs. Keep one parent per class (the deepest,
          ties to the class whose name sorts last), solve that spanning forest
          exactly by Horn's rule, then repair each object's forest order in two
          ways: *push* (an event waits until just after its last parent) and
          *pull* (an event moves up to its earliest descendant), ties by depth.
          Each object keeps the repair with the larger CATCH within the object;
          the objects are merged by Chain-Merge. Horn's rule on a forest (the
          CATCH of ``"horn"``; tied groups may come in another order, by class
          name); O(n log n + E M) for E edges. No worst-case factor.
        - ``"sidney"``: for DAGs, with a guarantee. Per object, a Sidney
          decomposition: repeatedly the ancestor-closed set of maximum mean
          value among the classes not yet placed (a maximum-density closure,
          found by parametric minimum cut: Picard's max-weight closure, Dinic's
          max flow, Eisner-Severance bisection, two cuts per set) is placed
          next. Inside a set the classes keep the ``"relaxed"`` order restricted
          to the set (consistent, since that order is). Then Chain-Merge.
          Equal to ``"horn"`` on forests (Horn's groups are the Sidney sets).
          Guarantee (Chekuri & Motwani 1999; Margot, Queyranne & Wang 2003):
          for non-negative values, any order that follows a Sidney
          decomposition is within a factor 2 of optimal for the weighted
          completion time ``sum_j V_j C_j`` (C_j = rank of event j, from 1).
          Since ``CATCH = (n + 1) * sum(V) - sum_j V_j C_j``, this reads
          ``CATCH(sidney) >= 2 * CATCH* - (n + 1) * sum(V)`` for the optimum
          CATCH*: a guarantee on the completion-time scale, which says nothing
          about CATCH itself once CATCH* < (n + 1) * sum(V) / 2 (and nothing
          at all with negative values). Up to floating-point tolerance (a
          split must gain more than 1e-10 of the segment's absolute weight).
          Cost: about 2 minimum cuts per Sidney set per object; meant for
          DAGs up to a few thousand classes and a few thousand objects.
        - ``"lagrangian"``: ``"greedy"``, then up to ``max_iter`` rounds of the
          Lagrangian relaxation of :func:`hier_rank_bound` per object; each
          round's multipliers shift value along the relaxed edges, the greedy
          rule is rerun on the shifted values, and each object keeps its best
          order (by its CATCH under the true values). About ``2 * max_iter``
          times the cost of ``"greedy"``.
        - ``"exact"``: dynamic programming over the ancestor-closed sets of the
          hierarchy, the same lattice for every object; exponential, refused
          when the lattice has more than ``hmcpgm.ranking.MAX_STATES`` sets.

        Every method breaks every tie by class name, never by column position:
        it runs on the classes sorted by name (strings alphabetically, numbers
        by value; names of different types by type name, then ``repr``), so
        permuting the columns of ``values`` and ``hierarchy`` together permutes
        the ranking's class indices and nothing else (the same events in the
        same order, to the last bit).

        ``python bench/ranking.py --dag-gap --sidney`` measures the methods
        against the exact optimum on small DAGs and against the bound on the
        cellcycle_GO DAG.
    max_states : int
        ``"auto"`` only: a component of the hierarchy with at most this many
        ancestor-closed sets is solved exactly (cost: M times the number of
        ways to grow one set into another). 0 turns the exact part off.
    max_iter : int
        ``"lagrangian"`` only: the number of subgradient rounds per object.
    certify : bool
        Also certify the ranking: ``Ranking.certificate`` holds its CATCH, the
        Lagrangian upper bound of :func:`hier_rank_bound` on the best consistent
        CATCH, and their ratio (a lower bound on CATCH / optimum for non-negative
        values). Costs about ``max_iter`` forest solves per object.

    Returns
    -------
    Ranking
        Best first, with ``block_means`` and ``blocks``: the blocks are the
        maximum-mean prefix blocks of each object's order, and block means never
        increase along the ranking. A threshold on block means is how a cutoff
        carries over to new objects; :func:`hmcpgm.ranking.certify` bounds how
        far the ranking can be from the best.

    Examples
    --------
    The paper's toy example: under F, the chains I -> J and G -> H.

    >>> from hmcpgm import Hierarchy
    >>> h = Hierarchy.from_edges([("F", "I"), ("I", "J"), ("F", "G"), ("G", "H")])
    >>> v = [[1.0, 0.3, 0.9, 0.8, 0.1]]  # F, I, J, G, H
    >>> ranking = hier_rank(v, h)
    >>> [h.classes[i] for i in ranking.order]
    ['F', 'G', 'I', 'J', 'H']
    >>> [h.classes[i] for i in hier_rank(v, h, method="sidney").order]  # Horn's groups
    ['F', 'G', 'I', 'J', 'H']
    >>> ranking.block_means.round(2).tolist()
    [[1.0, 0.6, 0.6, 0.8, 0.1]]
    """
    v, index = ranked_input(values, hierarchy, summed=True)
    check_choice(method, "method", RANK_METHODS)
    if method == "horn" and not hierarchy.is_forest:
        raise InputError(
            "method='horn' needs a forest (one parent per class); the hierarchy is a "
            "DAG: use method='auto' or 'relaxed'"
        )
    max_states = count(max_states, "max_states") if method == "auto" else max_states
    max_iter = count(max_iter, "max_iter") if method == "lagrangian" else max_iter

    def solve(vals, h):
        return _ranked_in_column_order(vals, h, method, max_states, max_iter)

    order, block, mean = in_name_order(v, hierarchy, solve)
    ranking = computed_ranking(order, v.shape[0], hierarchy.classes, block_means=mean, blocks=block,
                               method=method, index=index)
    if certify:
        from ._certificate import certify as certify_ranking

        ranking = replace(ranking, certificate=certify_ranking(ranking, v, hierarchy, max_iter=max_iter))
    return ranking


def _ranked_in_column_order(v, hierarchy, method, max_states, max_iter):
    """``(order, blocks, means)`` of ``method``, ties by column index."""
    if method == "auto" and not hierarchy.is_forest:
        seq, seg_start, _ = auto_sequences(v, hierarchy, max_states)
        return chain_merge(v, seq, seg_start)
    if method in ("auto", "horn"):
        return horn_parent(np.array(hierarchy.spanning_forest()), v)
    if method == "greedy":
        return chain_merge(v, greedy_sequences(v, hierarchy))
    if method == "relaxed":
        return chain_merge(v, _relaxed_sequences(v, hierarchy))
    if method == "lagrangian":
        seq = greedy_sequences(v, hierarchy)
        if not hierarchy.is_forest:
            seq = lagrangian(v, hierarchy, seq, max_iter, improve=True)[1]
        return chain_merge(v, seq)
    if method == "sidney":
        return chain_merge(v, _sidney_sequences(v, hierarchy))
    return chain_merge(v, exact_sequences(v, hierarchy))


def _relaxed_sequences(values, hierarchy):
    """The relaxed method's orders, shape (M, K), ties by column index (the kept parent, Horn's heap, the repairs)."""
    depth = np.asarray(hierarchy.depth, dtype=np.int64)
    keep = np.array(hierarchy.spanning_forest("deepest"))
    m_obj, k_cls = values.shape
    forest_seq = horn_object_sequences(keep, values)
    ptr, idx = (np.array(a) for a in hierarchy.parent_csr)
    topo = np.asarray(hierarchy.topological_order, dtype=np.int64)
    seq = np.empty((m_obj, k_cls), dtype=np.int64)
    _kernels.repair_sequences(values, forest_seq, ptr, idx, topo, depth, seq)
    return seq


def _sidney_sequences(values, hierarchy):
    """Orders that follow a Sidney decomposition, shape (M, K), ties by column index
    (the relaxed order inside sets, the cuts' sums)."""
    inner = _relaxed_sequences(values, hierarchy)
    pos = np.empty_like(inner)
    np.put_along_axis(pos, inner, np.arange(values.shape[1], dtype=np.int64)[None, :], axis=1)
    ptr, idx = (np.array(a) for a in hierarchy.parent_csr)
    seq = np.empty_like(inner)
    sets = np.empty_like(inner)
    sidney_sequences(values, ptr, idx, pos, seq, sets)
    return seq
