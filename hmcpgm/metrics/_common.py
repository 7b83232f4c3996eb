"""What the hierarchy-aware metrics share: aligned (values, labels) matrices, propagation by max."""

import numpy as np

from .._arrays import binary_matrix, finite_array
from .._columns import as_pandas, class_matrix, column_positions
from .._numba import jit
from .._validation import aligned_matrices, check_hierarchy, is_frame
from ..exceptions import InputError

__all__ = ["propagate_max", "scored_labels", "ratio", "class_series"]


def ratio(num, den, empty=np.nan):
    """``num / den`` elementwise, ``empty`` where ``den == 0``, without warnings."""
    num = np.asarray(num, dtype=float)
    den = np.asarray(den, dtype=float)
    out = np.full(np.broadcast(num, den).shape, empty, dtype=float)
    np.divide(num, den, out=out, where=den != 0)
    return out if out.ndim else float(out)


def propagate_max(values, hierarchy):
    """Each class's value raised to the largest value of its descendants (CAFA's propagation by max).

    Parameters
    ----------
    values : ndarray or DataFrame, shape (M, K)
        Columns in the hierarchy's class order; a DataFrame (or a pyarrow or polars
        table) is aligned by class name. Not changed.
    hierarchy : Hierarchy
        The classes.

    Returns
    -------
    ndarray of float or DataFrame, shape (M, K)
        ``out[:, k] = max(values[:, d] for d in {k} | descendants(k))``; a DataFrame
        (with the input's index and column order) for a table.

    Examples
    --------
    >>> from hmcpgm import Hierarchy
    >>> h = Hierarchy.from_edges([("r", "a"), ("a", "b")])
    >>> propagate_max(np.array([[0.1, 0.2, 0.7]]), h)
    array([[0.7, 0.7, 0.7]])
    """
    frame = as_pandas(values)
    if is_frame(frame):
        out = np.empty(frame.shape)
        out[:, column_positions(frame.columns, hierarchy, "values")] = propagate_max(
            class_matrix(frame, hierarchy, "values", allow_nan=True), hierarchy)  # back in the frame's order
        return _frame_like(out, frame)
    out = np.array(values, dtype=float, copy=True)
    if out.ndim != 2 or out.shape[1] != hierarchy.n_classes:
        raise InputError(f"values must have shape (M, {hierarchy.n_classes}), one column per class, got {out.shape}")
    ptr, idx = hierarchy.parent_csr
    _propagate_rows(out, np.ascontiguousarray(hierarchy.topological_order, dtype=np.int64), ptr, idx)
    return out


def _frame_like(values, like):
    """``values`` as a DataFrame with ``like``'s index and columns."""
    import pandas as pd

    return pd.DataFrame(values, index=like.index, columns=like.columns)


@jit
def _propagate_rows(out, order, ptr, idx):
    """``propagate_max`` in place, a row at a time: children before their parents (``order`` reversed), each
    parent raised to its child's value by ``numpy.maximum(parent, child)``'s rule (the child's value on a tie
    or when it is NaN, a NaN parent kept). One row stays in cache, where the Python loop of ``numpy.maximum``
    over columns it replaces strode across every row for each edge. Serial: no thread pool, so the metrics stay
    safe to call from threads and before a fork, as the numpy loop was."""
    for m in range(out.shape[0]):
        row = out[m]
        for t in range(order.size - 1, -1, -1):
            k = order[t]
            v = row[k]
            for j in range(ptr[k], ptr[k + 1]):
                p = idx[j]
                w = row[p]
                if not (w > v or w != w):
                    row[p] = v


def scored_labels(values, labels, hierarchy, *, close=True, name="values"):
    """``(values, labels)`` as float and int8 arrays in the hierarchy's column order.

    DataFrames are aligned by class name; the labels are closed upward when
    ``close`` (a positive class makes its ancestors positive). ``name`` is what
    messages call ``values``.
    """
    check_hierarchy(hierarchy)
    s, y = aligned_matrices([(values, name), (labels, "labels")], hierarchy, keep_integers=("labels",))
    s = finite_array(s, name)
    y = binary_matrix(y, "labels", hierarchy)
    if s.shape != y.shape:
        raise InputError(f"{name} has shape {s.shape} but labels has shape {y.shape}; they must match")
    if close:
        y = hierarchy.close_labels(y)
    return s, y


def class_series(per_class, hierarchy, like, name):
    """``per_class`` (one number a class) as a Series indexed by class name when ``like`` is a DataFrame."""
    if not is_frame(like):
        return per_class
    import pandas as pd

    return pd.Series(per_class, index=list(hierarchy.classes), name=name)
