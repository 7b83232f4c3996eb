"""Argument checks for the ranking functions."""

import numpy as np

from .._validation import check_hierarchy, class_matrix, event_order, finite_array
from ..exceptions import InputError

__all__ = ["ranking_values", "flat_values", "permutation"]


def ranking_values(values, hierarchy):
    """(M, K) finite float array for ``hierarchy``; 1-D input is one object."""
    check_hierarchy(hierarchy)
    if not hasattr(values, "columns"):
        arr = np.asarray(values, dtype=float) if not isinstance(values, np.ndarray) else values
        if arr.ndim == 1:
            if arr.size % hierarchy.n_classes:
                raise InputError(
                    f"values is flat with {arr.size} entries, not a multiple of the "
                    f"hierarchy's {hierarchy.n_classes} classes"
                )
            values = arr.reshape(-1, hierarchy.n_classes)
    return np.ascontiguousarray(class_matrix(values, hierarchy, "values"), dtype=np.float64)


def flat_values(values):
    """A finite 1-D float array (values in event order m*K + k)."""
    return finite_array(values, "values").ravel()


def permutation(order, n, name="order"):
    """``order`` as an int array that must be a permutation of 0..n-1."""
    return event_order(order, n, name)

