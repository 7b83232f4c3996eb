"""Index structures of a hierarchy shared by the ranking kernels, and the column order ties follow."""

import weakref

import numpy as np
from numba import prange

from .._numba import jit_parallel
from ..hierarchy import Hierarchy

__all__ = [
    "better_sequences",
    "hierarchy_plans",
    "in_name_order",
    "name_order",
    "name_ordered",
    "name_permutation",
    "object_catch",
    "object_sequences",
    "relaxed_edges",
]

# plans depend on the hierarchy only (it is immutable): built once per hierarchy object,
# found by identity (hashing a large hierarchy costs as much as ranking it)
_PLANS = {}


def hierarchy_plans(hierarchy):
    """A dict kept for the life of ``hierarchy`` (found by identity): what the rankers build once per hierarchy."""
    key = id(hierarchy)
    entry = _PLANS.get(key)
    if entry is not None and entry[0]() is hierarchy:
        return entry[1]
    plans = {}
    try:
        # the dict is bound to the callback: at exit, the module's globals may go before the last hierarchies
        ref = weakref.ref(hierarchy, lambda _, key=key, cache=_PLANS: cache.pop(key, None))
    except TypeError:  # pragma: no cover - not weak-referenceable: no cache
        return plans
    _PLANS[key] = (ref, plans)
    return plans


def name_order(classes):
    """The column indices of ``classes`` sorted by class name: an order that no column permutation changes.

    Names are sorted as they compare (strings alphabetically, numbers by value);
    names of types that do not compare with each other (``"a"`` and ``1``) by
    the name of their type first, then as they compare, or by ``repr`` where
    even that fails (tuples of mixed contents). Only names whose type and
    ``repr`` both coincide keep their column order.

    Parameters
    ----------
    classes : sequence of hashable
        The class names, in column order.

    Returns
    -------
    ndarray of int64
        ``order[i]`` is the column of the ``i``-th class by name.

    Examples
    --------
    >>> name_order(["b", "c", "a"]).tolist(), name_order(["b", 1, "a", 0]).tolist()
    ([2, 0, 1], [3, 1, 2, 0])
    """
    names = list(classes)
    for key in (lambda i: names[i], lambda i: (type(names[i]).__name__, names[i]),
                lambda i: (type(names[i]).__name__, repr(names[i]))):
        try:
            return np.array(sorted(range(len(names)), key=key), dtype=np.int64)
        except TypeError:
            continue


def name_permutation(hierarchy):
    """The :func:`name_order` of ``hierarchy``'s classes (found once per hierarchy), or None when
    the columns already are in name order."""
    plans = hierarchy_plans(hierarchy)
    if "name_order" not in plans:
        perm = name_order(hierarchy.classes)
        plans["name_order"] = None if np.array_equal(perm, np.arange(hierarchy.n_classes)) else perm
    return plans["name_order"]


def name_ordered(hierarchy):
    """``(perm, ordered)``: :func:`name_permutation` and the hierarchy rebuilt with its classes in
    that order (built once per hierarchy); ``(None, hierarchy)`` when the columns already are in
    name order."""
    perm = name_permutation(hierarchy)
    if perm is None:
        return None, hierarchy
    plans = hierarchy_plans(hierarchy)
    if "by_name" not in plans:
        plans["by_name"] = Hierarchy(hierarchy.graph, [hierarchy.classes[i] for i in perm])
    return perm, plans["by_name"]


def in_name_order(values, hierarchy, solve):
    """What ``solve(values, hierarchy)`` computes, with the columns in class-name order.

    ``solve`` returns ``(order, blocks, means)``: a permutation of the flat event
    indices ``m*K + k`` and two (M, K) arrays. It runs on the hierarchy rebuilt
    with its classes in :func:`name_order` and the values' columns permuted
    alike, and its results are mapped back to ``hierarchy``'s columns. Every tie
    ``solve`` breaks by column index is then broken by class name, and every sum
    it forms is added in the same order, whatever the column order of
    ``hierarchy``: permuting the columns of ``values`` and ``hierarchy`` together
    gives the same events in the same order, to the last bit.
    """
    perm, ordered = name_ordered(hierarchy)
    if perm is None:
        return solve(values, hierarchy)
    order, block, mean = solve(np.ascontiguousarray(values[:, perm]), ordered)
    back_order, back_block, back_mean = np.empty_like(order), np.empty_like(block), np.empty_like(mean)
    _to_columns(order, np.ascontiguousarray(block), np.ascontiguousarray(mean), perm, back_order, back_block,
                back_mean)
    return back_order, back_block, back_mean


@jit_parallel
def _to_columns(order, block, mean, perm, back_order, back_block, back_mean):
    """Map a result on the name-ordered columns back: its event ``m*K + j`` is event ``m*K + perm[j]``,
    and its column ``j`` of blocks and means is column ``perm[j]``."""
    n_obj, k_cls = block.shape
    for m in prange(n_obj):
        base = m * k_cls
        for j in range(k_cls):
            e = order[base + j]
            row = e // k_cls
            back_order[base + j] = row * k_cls + perm[e - row * k_cls]
            back_block[m, perm[j]] = block[m, j]
            back_mean[m, perm[j]] = mean[m, j]


def relaxed_edges(hierarchy):
    """The deepest-parent spanning forest (:meth:`Hierarchy.spanning_forest`) as CSR
    (f_ptr, f_idx), the edges it drops (da -> db) and the DAG's own parent CSR (d_ptr, d_idx)."""
    keep = np.array(hierarchy.spanning_forest("deepest"))
    f_ptr = np.zeros(hierarchy.n_classes + 1, dtype=np.int64)
    f_ptr[1:] = np.cumsum(keep >= 0)
    f_idx = keep[keep >= 0].astype(np.int64)
    e = np.asarray(hierarchy.edge_indices, dtype=np.int64).reshape(-1, 2)
    rest = e[keep[e[:, 1]] != e[:, 0]]
    rest = rest[np.lexsort((rest[:, 0], rest[:, 1]))]
    d_ptr, d_idx = (np.array(a) for a in hierarchy.parent_csr)
    return f_ptr, f_idx, rest[:, 0].copy(), rest[:, 1].copy(), d_ptr, d_idx


def object_catch(values, seq):
    """Every object's CATCH within itself, ``sum_j (K - j) * values[m, seq[m, j]]``."""
    k_cls = values.shape[1]
    return np.take_along_axis(values, seq, axis=1) @ np.arange(k_cls, 0, -1, dtype=float)


def object_sequences(order, n_objects, n_classes):
    """Each object's classes in the order a ranking of all events lists them, (M, K)."""
    rank = np.empty(order.size, dtype=np.int64)
    rank[order] = np.arange(order.size)
    return np.argsort(rank.reshape(n_objects, n_classes), axis=1, kind="stable")


def better_sequences(values, seq, other):
    """Per object, whichever of two orders has the larger CATCH within the object."""
    take = object_catch(values, other) > object_catch(values, seq)
    return np.where(take[:, None], other, seq)
