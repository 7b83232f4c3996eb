"""Argument checks for the ranking functions."""

import numpy as np

from .._arrays import refuse_complex
from .._validation import check_hierarchy, class_matrix, is_frame, series_row
from ..exceptions import InputError

__all__ = ["object_index", "ranking_values"]


def ranking_values(values, hierarchy, *, summed=False):
    """(M, K) finite float64 C-contiguous array for ``hierarchy``; a 1-D array is one object.

    ``summed``: the values will be summed with weights up to K (block sums, CATCH within
    an object), so their magnitude must stay below ``float max / (4 K^2)``: beyond it the
    sums overflow to inf and the blocks, their means and the order come out wrong.
    """
    check_hierarchy(hierarchy)
    values = series_row(values)
    if not is_frame(values):
        refuse_complex(values, "values")
        try:
            arr = np.asarray(values, dtype=float)
        except (TypeError, ValueError) as exc:
            raise InputError(f"values must be a numeric (n_objects, n_classes) array: {exc}") from None
        if arr.ndim == 1:
            if arr.size % hierarchy.n_classes:
                raise InputError(
                    f"values is flat with {arr.size} entries, not a multiple of the "
                    f"hierarchy's {hierarchy.n_classes} classes"
                )
            values = arr.reshape(-1, hierarchy.n_classes)
    v = np.ascontiguousarray(class_matrix(values, hierarchy, "values"), dtype=np.float64)
    if summed and v.size:
        limit = np.finfo(np.float64).max / (4.0 * hierarchy.n_classes ** 2)
        big = float(np.abs(v).max())
        if big > limit:
            raise InputError(
                f"values must be at most {limit:.3g} in magnitude for {hierarchy.n_classes} classes (their "
                f"weighted sums within an object would overflow), got {big:.3g}; rescale them"
            )
    return v


def object_index(values):
    """The row index of a DataFrame (kept on the Ranking), else None."""
    return values.index if is_frame(values) else None
