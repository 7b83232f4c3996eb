"""Value matrices in and out of the corrections: arrays in class order, DataFrames by column name."""

import numpy as np

from .._validation import as_pandas, check_hierarchy, class_matrix, column_positions, is_frame
from ..exceptions import InputError

__all__ = ["VALUE_LIMIT", "class_major", "matrix_in", "matrix_out", "unit_interval", "within_limit"]

VALUE_LIMIT = 1e100
"""Values beyond +-VALUE_LIMIT are refused: the corrections' sums and averages and Platt's squares overflow
near 1e308 (GPAV gave inf, TPR-DAG NaN, Platt a constant map, from finite numbers)."""


def matrix_in(values, hierarchy, name="values"):
    """(M, K) finite float64 copy of ``values`` in ``hierarchy.classes`` order (DataFrames aligned by name),
    within +-VALUE_LIMIT."""
    check_hierarchy(hierarchy)
    return within_limit(np.array(class_matrix(values, hierarchy, name), dtype=np.float64, order="C"), hierarchy.classes,
                        name)


def within_limit(x, classes=None, name="values"):
    """``x``, or a one-line error naming the row and class (or column) of its first value beyond +-VALUE_LIMIT."""
    bad = np.argwhere(np.abs(x) > VALUE_LIMIT)
    if len(bad):
        i, k = bad[0]
        where = f"column {k}" if classes is None else f"class {classes[k]!r}"
        raise InputError(f"{name} must lie within +-{VALUE_LIMIT:g} (sums and squares of larger numbers overflow); "
                         f"row {i}, {where} holds {float(x[i, k])!r}")
    return x


def matrix_out(result, values, hierarchy, name="values"):
    """``result`` (M, K, class order) shaped like ``values``: a DataFrame with its index and column order
    when ``values`` is one (or a pyarrow or polars table, which :func:`matrix_in` aligned by name), else the
    array."""
    values = as_pandas(values)
    if not is_frame(values):
        return result
    import pandas as pd

    out = np.empty_like(result)
    out[:, column_positions(values.columns, hierarchy, name)] = result
    return pd.DataFrame(out, index=values.index, columns=values.columns)


def class_major(x):
    """The (K, M) C-contiguous transpose the kernels work on."""
    return np.ascontiguousarray(x.T)


def unit_interval(x, hierarchy, name="values", why=""):
    """Refuse values outside [0, 1] of a class-order matrix (one line, naming the first offender's row and class:
    a DataFrame's columns may come in another order)."""
    bad = np.argwhere((x < 0) | (x > 1))
    if len(bad):
        i, k = bad[0]
        raise InputError(
            f"{name} must lie in [0, 1]{why}; row {i}, class {hierarchy.classes[k]!r} holds {float(x[i, k])!r}"
        )
    return x
