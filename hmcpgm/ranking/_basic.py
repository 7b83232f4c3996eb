"""The CATCH objective, NaiveSort and the count of hierarchy violations."""

import numpy as np

from .._arrays import event_order, finite_array
from .._columns import as_table
from .._validation import check_hierarchy, is_frame
from ..exceptions import InputError
from ._checks import ranked_input
from ._ranking import Ranking, as_ranking
from ._structure import name_permutation

__all__ = ["catch", "naive_sort", "count_violations"]


def catch(ranking, values):
    """The CATCH objective of a ranking: ``sum_r (n - r + 1) * V[event at rank r]``.

    Parameters
    ----------
    ranking : Ranking or array-like of int, shape (n,)
        A ranking of the events (a :class:`Ranking`, or a permutation of the flat
        event indices ``m*K + k``), best first.
    values : array-like or DataFrame, shape (M, K), or (n,) with a plain order
        The value of every event (for example mLPRs). A DataFrame is aligned by
        class name, which needs a :class:`Ranking`.

    Returns
    -------
    float
        Larger is better: high values early earn large weights. Minimising the
        weighted completion time ``sum_r r * V[event at rank r]`` is the same
        problem, since the two sum to ``(n + 1) * sum(V)``.

    Examples
    --------
    >>> catch([1, 0], [0.2, 0.9])
    2.0
    >>> catch([0, 1], [0.2, 0.9])
    1.3
    """
    if isinstance(ranking, Ranking):  # a DataFrame aligned by class name first, then its shape checked
        ranked = ranking.ranked(values, "values", finite=True)
    elif is_frame(values := as_table(values)):  # a table or a Series labelled by class names: named columns
        as_ranking(ranking, values.shape, frames=("values",))  # raises: a plain order cannot align a DataFrame
    else:
        v = finite_array(values, "values").ravel()
        ranked = v[event_order(ranking, v.size)]
    n = ranked.size
    return float(np.dot(np.arange(n, 0, -1, dtype=float), ranked))


def naive_sort(values, hierarchy):
    """Rank events by value alone (NaiveSort), ancestors first on ties.

    Parameters
    ----------
    values : array-like of shape (M, K), a DataFrame with class columns, or a Series labelled by class
        The value of every event, for example mLPRs. A DataFrame is aligned by class
        name and its row index labels the ranking's objects (``Ranking.index``, so
        ``Ranking.top`` gives a DataFrame); a Series labelled by class names is one
        object, its name the row label, as its one-row DataFrame would be. Finite.
    hierarchy : Hierarchy
        Fixes the column order of ``values`` and the ancestor constraints.

    Returns
    -------
    Ranking
        Best first. Ties are broken by class depth (longest path from a root; an
        ancestor is always shallower), then by object, then by class name
        (as :func:`hier_rank` does; never by column position), so tied
        values never put a descendant before its ancestor. Unequal values may
        still do so: NaiveSort ignores the hierarchy. Every event is its own
        block: ``block_means`` are the values.

    Examples
    --------
    >>> from hmcpgm import Hierarchy
    >>> h = Hierarchy.from_parents([None, 0])
    >>> np.asarray(naive_sort([[0.5, 0.5], [0.1, 0.7]], h)).tolist()
    [3, 0, 1, 2]
    """
    v, index = ranked_input(values, hierarchy)
    m_obj, k_cls = v.shape
    depth = np.broadcast_to(np.asarray(hierarchy.depth), (m_obj, k_cls)).ravel()
    perm = name_permutation(hierarchy)
    by_name = np.arange(k_cls, dtype=np.int64)
    if perm is not None:
        by_name[perm] = np.arange(k_cls)
    # ties: shallower first, then by object, then by class name
    tie = (np.arange(m_obj, dtype=np.int64)[:, None] * k_cls + by_name[None, :]).ravel()
    order = np.lexsort((tie, depth, -v.ravel())).astype(np.intp)
    blocks = np.empty(order.size, dtype=np.intp)
    blocks[order] = np.arange(order.size)
    return Ranking(order, m_obj, hierarchy.classes, block_means=v, blocks=blocks.reshape(v.shape),
                   method="naive", index=index)


def count_violations(ranking, hierarchy, *, pairs="ancestors"):
    """Count pairs of events that a ranking puts in the wrong hierarchical order.

    Parameters
    ----------
    ranking : Ranking or array-like of int, shape (M*K,)
        A ranking of the events; a plain order is a permutation of the flat event
        indices ``m*K + k`` for the hierarchy's ``K`` classes.
    hierarchy : Hierarchy
        Must have the ranking's classes.
    pairs : {"ancestors", "edges"}
        ``"ancestors"`` (default) counts every (ancestor, descendant) pair of the
        same object where the descendant is ranked first; ``"edges"`` counts only
        (parent, child) pairs. Either is zero exactly when the ranking is
        hierarchically consistent.

    Returns
    -------
    int
        The number of pairs out of order.

    Examples
    --------
    >>> from hmcpgm import Hierarchy
    >>> h = Hierarchy.from_parents([None, 0, 1])
    >>> count_violations([2, 1, 0], h), count_violations([2, 1, 0], h, pairs="edges")
    (3, 2)
    """
    check_hierarchy(hierarchy)
    k_cls = hierarchy.n_classes
    if isinstance(ranking, Ranking):
        if ranking.classes != hierarchy.classes:
            raise InputError(
                f"the ranking's classes {ranking.classes[:3]}... are not the hierarchy's classes "
                f"{hierarchy.classes[:3]}... in the same order"
            )
    else:
        arr = np.asarray(ranking)
        if arr.ndim != 1 or arr.size % k_cls:
            raise InputError(
                f"ranking must be a Ranking or a 1-D permutation of M*{k_cls} events for a "
                f"hierarchy of {k_cls} classes, got shape {arr.shape}"
            )
        ranking = as_ranking(arr, (arr.size // k_cls, k_cls))
    rank = ranking.ranks
    if pairs == "ancestors":
        desc, anc = hierarchy.ancestor_pairs
    elif pairs == "edges":
        e = np.asarray(hierarchy.edge_indices)
        anc, desc = e[:, 0], e[:, 1]
    else:
        raise InputError(f"pairs must be 'ancestors' or 'edges', got {pairs!r}")
    total = 0
    step = max(1, 4_000_000 // max(1, ranking.n_objects))
    for s in range(0, len(anc), step):
        total += int(np.count_nonzero(rank[:, desc[s:s + step]] < rank[:, anc[s:s + step]]))
    return total
