"""Argument checks for the ranking functions."""

import numpy as np

from .._arrays import refuse_complex
from .._util import preview, repeated
from .._validation import as_table, check_hierarchy, class_matrix, is_frame, series_row
from ..exceptions import InputError

__all__ = ["ranked_input", "ranking_table", "ranking_values"]


def ranking_table(values, hierarchy):
    """``values`` as a ranking takes them: a DataFrame when they name their classes, else as they are.

    A table of another library becomes a pandas DataFrame and a pandas Series
    labelled by class names a one-row DataFrame (one object, row label the
    Series' name), as :func:`hmcpgm._validation.as_table` makes them; such a
    Series must be labelled by exactly the hierarchy's classes (one-line
    InputError otherwise). An unlabelled Series (``RangeIndex``) stays a vector, unless the
    classes are the integers 0 .. n-1 in another order (:func:`hmcpgm._columns.series_row`).
    """
    table = as_table(values, hierarchy.classes)
    if table is not values and series_row(values, hierarchy.classes) is not values:  # a Series labelled by class names
        _check_series_labels(values.index, hierarchy)
    return table


def _check_series_labels(labels, hierarchy):
    """A one-line InputError unless a Series' labels are the hierarchy's classes, each once (str(class) matches)."""
    labels = list(labels)
    names = set(hierarchy.classes) | {str(c) for c in hierarchy.classes}
    given = set(labels) | {str(c) for c in labels}
    missing = [c for c in hierarchy.classes if c not in given and str(c) not in given]
    extra = [c for c in labels if c not in names and str(c) not in names]
    twice = repeated(labels)
    if missing or extra or twice:
        parts = ([f"missing: {preview(missing)}"] if missing else []) + (
            [f"not classes of the hierarchy: {preview(extra)}"] if extra else []) + (
            [f"repeats {preview(twice)}"] if twice else [])
        raise InputError(
            f"values is a pandas Series labelled by {len(labels)} names, read as one object's values by class "
            f"name, but its labels are not the hierarchy's {hierarchy.n_classes} classes ({'; '.join(parts)}); "
            "label it by class name, or pass an unlabelled array in the hierarchy's column order"
        )


def ranked_input(values, hierarchy, *, summed=False):
    """``(v, index)``: the checked values (:func:`ranking_values`) and the row index of a DataFrame, else None.

    The index is what the Ranking keeps (``Ranking.index``); a Series labelled
    by class names is one object, labelled by its name (``0`` without one).
    """
    check_hierarchy(hierarchy)
    table = ranking_table(values, hierarchy)
    return ranking_values(table, hierarchy, summed=summed), table.index if is_frame(table) else None


def ranking_values(values, hierarchy, *, summed=False):
    """(M, K) finite float64 C-contiguous array for ``hierarchy``; a 1-D array is one object.

    A Series labelled by class names is one object, aligned by name (:func:`ranking_table`).
    ``summed``: the values will be summed with weights up to K (block sums, CATCH within
    an object), so their magnitude must stay below ``float max / (4 K^2)``: beyond it the
    sums overflow to inf and the blocks, their means and the order come out wrong.
    """
    check_hierarchy(hierarchy)
    values = ranking_table(values, hierarchy)
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
