"""The least-squares isotonic regression on a class hierarchy (``gpav``), exact on every DAG.

Compiled, all objects at once: on forests the pooling of adjacent violators
(Burdakov et al.'s GPAV, :mod:`._pooling`), exact there; on DAGs recursive
partitioning by minimum cuts (:mod:`._partition`), exact everywhere.
"""

import numpy as np

from .._validation import as_pandas, class_matrix, column_positions, is_frame, rows_aligned
from ..exceptions import InputError
from ._inputs import matrix_in, matrix_out
from ._kernels import cap_rows
from ._partition import partition_rows
from ._pooling import gpav_rows
from ._structure import dag_passes

__all__ = ["gpav", "isotonic_rows"]


def weight_matrix(weights, shape, hierarchy, values=None):
    """(M, K) positive finite weights from None (ones), a (K,) vector per class, or an (M, K) matrix; a
    DataFrame beside DataFrame ``values`` is paired with them by row index."""
    if weights is None:
        return np.ones(shape)
    weights, values = as_pandas(weights), as_pandas(values)  # a pyarrow or polars table: by name, as a DataFrame
    if hasattr(weights, "index") and getattr(weights, "ndim", 0) == 1:  # a Series: one weight per class, by name
        weights = np.asarray(weights)[column_positions(weights.index, hierarchy, "weights")]
    if is_frame(weights):
        if is_frame(values):
            weights = rows_aligned(weights, values.index, "weights", "values")
        w = class_matrix(weights, hierarchy, "weights")
        if w.shape[0] != shape[0]:  # the kernels read one weight row per value row, unchecked
            raise InputError(f"weights has {w.shape[0]} rows but values has {shape[0]}; give one row per object")
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


EPS = 1e-12  # relative tolerance of the exactness check (capacities and gains below it count as zero)


def isotonic_rows_report(x, w, hierarchy):
    """The isotonic regression of every row of a checked (M, K) array, and per row the number of classes
    that went to recursive partitioning (0 on forests, solved by pooling alone)."""
    p = dag_passes(hierarchy)
    w = np.ones_like(x) if w is None else w
    if hierarchy.is_forest:
        out, n_left = gpav_rows(x, w, p.down, p.child_ptr, p.child_idx), np.zeros(len(x), dtype=np.int64)
    else:
        rank = np.empty(len(p.down), dtype=np.int64)
        rank[p.down] = np.arange(len(p.down))
        out, n_left = partition_rows(x, w, p.up, p.down, p.parent_ptr, p.parent_idx, p.child_ptr, p.child_idx,
                                     rank, EPS)
    cap_rows(out, p.up, p.parent_ptr, p.parent_idx)  # blocks with equal means may differ in the last bit
    return out, n_left


def isotonic_rows(x, w, hierarchy):
    """The isotonic regression of every row of a checked (M, K) array (weights (M, K) or None)."""
    return isotonic_rows_report(x, w, hierarchy)[0]


def gpav(values, hierarchy, weights=None):
    """The least-squares isotonic regression on the hierarchy (HEMDAG's ``gpav``, exact on DAGs).

    For each object (row) it returns ``x`` minimising ``sum_k w_k (x_k - y_k)^2``
    subject to ``x_child <= x_parent`` for every edge. Every block of classes
    sharing a value holds the weighted mean of their values.

    The result is the exact optimum on every hierarchy, not a heuristic. On
    forests each object is pooled by GPAV (Burdakov, Grimvall & Hussian):
    classes visited children first, each block absorbing its largest violating
    lower neighbour; there this is the exact isotonic regression, and HEMDAG's
    ``gpav`` gives the same numbers. On a DAG GPAV's result depends on the
    visiting order and may not be optimal (the diamond below), so DAGs are
    solved exactly: classes in no violation (at or below all their ancestors, at
    or above all their descendants) keep their values, and the others are
    solved by recursive partitioning (Spouge, Wan & Wilbur; Hochbaum &
    Queyranne): a minimum cut finds the subset closed under parents that gains
    most by lying above the mean (Picard's maximum-weight closure), the two sides
    are solved separately the same way, and a set whose best closure gains
    nothing is one block at its mean; connected parts that are forests are
    pooled. This terminates at the exact optimum, so no gap needs certifying,
    at a cost of seconds for the Gene Ontology (``bench/corrections.py``).
    Where HEMDAG's GPAV is not optimal its numbers differ from these (a lower
    objective here).

    Agreement with the optimum is to floating-point rounding: gains and flow
    capacities below ``1e-12`` times the residuals of the set being cut, plus a
    few units of rounding (``1e-15``) times the size of its values, count as
    zero (so values far from 0 for their spread, such as ``1e8`` plus scores,
    are solved to their own rounding), and a last top-down pass (:func:`htd`)
    removes last-bit differences between blocks whose means are equal, so that
    child <= parent holds exactly.

    Parameters
    ----------
    values : array-like or DataFrame of shape (M, K)
        One column per class (an array in ``hierarchy.classes`` order, or a
        DataFrame with columns named by class).
    hierarchy : Hierarchy
        Any tree, forest or DAG; its ``classes`` name the columns.
    weights : array-like of shape (K,) or (M, K), or DataFrame, optional
        Positive weights ``w`` per class (HEMDAG's ``W``) or per entry; default 1.
        A Series is aligned by its index (class names), a DataFrame by column
        name, and by row index when ``values`` is a DataFrame too. (HEMDAG's
        ``gpav`` reads its unnamed ``W`` in the column order of
        ``adj.upper.tri(g)``, a topological order, not in the score matrix's;
        here an array follows ``hierarchy.classes``.)

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

    On a diamond GPAV (visiting b before c) would pool everything at 4.25; the
    optimum splits it:

    >>> diamond = Hierarchy.from_edges([("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")])
    >>> gpav([[3.0, 6.0, 1.0, 7.0]], diamond).round(12).tolist()
    [[4.5, 4.5, 4.0, 4.0]]
    """
    x = matrix_in(values, hierarchy)
    w = weight_matrix(weights, x.shape, hierarchy, values)
    return matrix_out(isotonic_rows(x, w, hierarchy), values, hierarchy)
