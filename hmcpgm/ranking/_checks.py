"""Argument checks for the ranking functions."""

import numpy as np

from .._arrays import refuse_complex
from .._validation import check_hierarchy, class_matrix, is_frame
from ..exceptions import InputError

__all__ = ["object_index", "ranking_values"]


def ranking_values(values, hierarchy):
    """(M, K) finite float64 C-contiguous array for ``hierarchy``; a 1-D array is one object."""
    check_hierarchy(hierarchy)
    if not is_frame(values):
        refuse_complex(values, "values")
        arr = np.asarray(values, dtype=float)
        if arr.ndim == 1:
            if arr.size % hierarchy.n_classes:
                raise InputError(
                    f"values is flat with {arr.size} entries, not a multiple of the "
                    f"hierarchy's {hierarchy.n_classes} classes"
                )
            values = arr.reshape(-1, hierarchy.n_classes)
    return np.ascontiguousarray(class_matrix(values, hierarchy, "values"), dtype=np.float64)


def object_index(values):
    """The row index of a DataFrame (kept on the Ranking), else None."""
    return values.index if is_frame(values) else None
