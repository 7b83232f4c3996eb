"""Index structures of a hierarchy shared by the ranking kernels."""

import numpy as np

__all__ = [
    "better_sequences",
    "object_catch",
    "object_sequences",
    "relaxed_edges",
]


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
