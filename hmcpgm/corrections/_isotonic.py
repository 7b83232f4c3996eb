"""The least-squares isotonic regression on a class hierarchy (``gpav``), exact on every DAG."""

import numpy as np

from .._validation import class_matrix, is_frame
from ..exceptions import InputError
from ._inputs import matrix_in, matrix_out
from ._pooling import gpav_rows
from ._structure import dag_passes

__all__ = ["gpav", "isotonic_rows"]


def weight_matrix(weights, shape, hierarchy):
    """(M, K) positive finite weights from None (ones), a (K,) vector per class, or an (M, K) matrix."""
    if weights is None:
        return np.ones(shape)
    if is_frame(weights):
        w = class_matrix(weights, hierarchy, "weights")
    else:
        try:
            w = np.asarray(weights, dtype=float)
        except (TypeError, ValueError) as exc:
            raise InputError(f"weights must be numeric: {exc}") from None
        if w.ndim == 1 and len(w) == shape[1]:
            w = np.broadcast_to(w, shape)
        elif w.shape != shape:
            raise InputError(f"weights must have shape ({shape[1]},) or {shape}, got {w.shape}")
    if not np.all(np.isfinite(w)) or not np.all(w > 0):
        raise InputError("weights must be finite and > 0")
    return np.array(w, dtype=np.float64, order="C")


def isotonic_rows(x, w, hierarchy):
    """The isotonic regression of every row of a checked (M, K) array (weights (M, K) or None)."""
    p = dag_passes(hierarchy)
    w = np.ones_like(x) if w is None else w
    return gpav_rows(x, w, p.down, p.child_ptr, p.child_idx)


def gpav(values, hierarchy, weights=None):
    """The least-squares isotonic regression on the hierarchy (HEMDAG's ``gpav``, exact on DAGs).

    For each object (row) it returns ``x`` minimising ``sum_k w_k (x_k - y_k)^2``
    subject to ``x_child <= x_parent`` for every edge. Every block of classes
    sharing a value holds the weighted mean of their values.

    On forests the pooling of adjacent violators (Burdakov et al.'s GPAV,
    children first) is exact. On DAGs this first version returns GPAV's
    feasible pooled solution, which may not be the optimum.

    Parameters
    ----------
    values : array-like or DataFrame of shape (M, K)
        One column per class (an array in ``hierarchy.classes`` order, or a
        DataFrame with columns named by class).
    hierarchy : Hierarchy
    weights : array-like of shape (K,) or (M, K), optional
        Positive weights ``w`` per class (HEMDAG's ``W``) or per entry; default 1.

    Returns
    -------
    ndarray or DataFrame of shape (M, K)
        The isotonic regression of each row.

    Examples
    --------
    >>> from hmcpgm import Hierarchy
    >>> h = Hierarchy.from_edges([("a", "b"), ("a", "c")])
    >>> gpav([[0.2, 0.8, 0.5]], h).round(12).tolist()     # a and b pool to their mean
    [[0.5, 0.5, 0.5]]
    >>> gpav([[0.2, 0.8, 0.1]], h).round(12).tolist()
    [[0.5, 0.5, 0.1]]
    """
    x = matrix_in(values, hierarchy)
    w = weight_matrix(weights, x.shape, hierarchy)
    return matrix_out(isotonic_rows(x, w, hierarchy), values, hierarchy)
