"""The CATCH objective, NaiveSort and the count of hierarchy violations."""

import numpy as np

from .._validation import check_hierarchy
from ..exceptions import InputError
from ._checks import flat_values, permutation, ranking_values

__all__ = ["catch", "naive_sort", "count_violations"]


def catch(order, values):
    """The CATCH objective of a ranking: ``sum_r (n - r + 1) * V[event at rank r]``.

    Parameters
    ----------
    order : array-like of int, shape (n,)
        A permutation of the flat event indices ``m*K + k``, best first.
    values : array-like, shape (M, K) or (n,)
        The value of every event (for example mLPRs), ``n = M*K``.

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
    v = flat_values(values)
    o = permutation(order, v.size)
    n = v.size
    return float(np.dot(np.arange(n, 0, -1, dtype=float), v[o]))


def naive_sort(values, hierarchy):
    """Rank events by value alone (NaiveSort), ancestors first on ties.

    Parameters
    ----------
    values : array-like of shape (M, K), or a DataFrame with class columns
    hierarchy : Hierarchy

    Returns
    -------
    ndarray of int, shape (M*K,)
        Flat event indices ``m*K + k``, best first. Ties are broken by class depth
        (longest path from a root; an ancestor is always shallower), then by flat
        index, so tied values never put a descendant before its ancestor. Unequal
        values may still do so: NaiveSort ignores the hierarchy.

    Examples
    --------
    >>> from hmcpgm import Hierarchy
    >>> h = Hierarchy.from_parents([None, 0])
    >>> naive_sort([[0.5, 0.5], [0.1, 0.7]], h).tolist()
    [3, 0, 1, 2]
    """
    v = ranking_values(values, hierarchy)
    m_obj, k_cls = v.shape
    depth = np.broadcast_to(np.asarray(hierarchy.depth), (m_obj, k_cls)).ravel()
    return np.lexsort((depth, -v.ravel())).astype(np.intp)


def count_violations(order, hierarchy, n_objects=None, *, pairs="ancestors"):
    """Count pairs of events that a ranking puts in the wrong hierarchical order.

    Parameters
    ----------
    order : array-like of int, shape (M*K,)
        A permutation of flat event indices ``m*K + k``.
    hierarchy : Hierarchy
    n_objects : int, optional
        M; checked against ``len(order) / K`` when given.
    pairs : {"ancestors", "edges"}
        ``"ancestors"`` (default) counts every (ancestor, descendant) pair of the
        same object where the descendant is ranked first; ``"edges"`` counts only
        (parent, child) pairs. Either is zero exactly when the ranking is
        hierarchically consistent.

    Returns
    -------
    int

    Examples
    --------
    >>> from hmcpgm import Hierarchy
    >>> h = Hierarchy.from_parents([None, 0, 1])
    >>> count_violations([2, 1, 0], h), count_violations([2, 1, 0], h, pairs="edges")
    (3, 2)
    """
    check_hierarchy(hierarchy)
    k_cls = hierarchy.n_classes
    arr = np.asarray(order)
    if arr.ndim != 1 or arr.size % k_cls:
        raise InputError(
            f"order must be a 1-D permutation of M*{k_cls} events for a hierarchy of "
            f"{k_cls} classes, got shape {arr.shape}"
        )
    m_obj = arr.size // k_cls
    if n_objects is not None and n_objects != m_obj:
        raise InputError(
            f"n_objects is {n_objects} but order has {arr.size} events = {m_obj} objects "
            f"x {k_cls} classes"
        )
    o = permutation(arr, arr.size)
    rank = np.empty(o.size, dtype=np.intp)
    rank[o] = np.arange(o.size)
    rank = rank.reshape(m_obj, k_cls)
    if pairs == "ancestors":
        desc, anc = np.nonzero(hierarchy.ancestor_matrix)
    elif pairs == "edges":
        e = np.asarray(hierarchy.edge_indices)
        anc, desc = e[:, 0], e[:, 1]
    else:
        raise InputError(f"pairs must be 'ancestors' or 'edges', got {pairs!r}")
    total = 0
    step = max(1, 4_000_000 // max(1, m_obj))
    for s in range(0, len(anc), step):
        total += int(np.count_nonzero(rank[:, desc[s:s + step]] < rank[:, anc[s:s + step]]))
    return total
