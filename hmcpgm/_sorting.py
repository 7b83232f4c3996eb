"""Stable argsorts at the speed of numpy's default (SIMD) sort.

numpy's ``kind="stable"`` sort of floats is a timsort, several times slower than
its default introsort/SIMD sort, which orders equal values arbitrarily. Sorting
with the fast one and then re-sorting each run of equal values by index gives
exactly the stable argsort. The same pass turns any argsort of ``x`` into the
stable argsort of ``f(x)`` for a non-decreasing ``f`` (equal ``f`` values form
runs), so one sort of the scores serves every monotone transform of them.
"""

import numpy as np
from numba import prange

from ._numba import jit_parallel

__all__ = ["stable_argsort"]


def stable_argsort(values, order=None):
    """``numpy.argsort(values, axis=-1, kind="stable")``, faster.

    Parameters
    ----------
    values : array of float, shape (n,) or (K, n)
        Sorted along the last axis.
    order : array of int, same shape, optional
        An argsort (ties in any order) of values of which ``values`` is a
        non-decreasing function, row by row; default ``numpy.argsort(values)``.

    Returns
    -------
    ndarray of intp, same shape
        A new array.

    Examples
    --------
    >>> stable_argsort(np.array([2.0, 1.0, 2.0, 1.0])).tolist()
    [1, 3, 0, 2]
    >>> x = np.array([3.0, 1.0, 2.0])
    >>> stable_argsort(np.floor(x / 2), order=np.argsort(x)).tolist()  # floor(x / 2) = [1, 0, 1]
    [1, 0, 2]
    """
    values = np.ascontiguousarray(values, dtype=float)
    order = np.argsort(values, axis=-1) if order is None else order
    order = np.array(order, dtype=np.intp, order="C")
    if values.ndim == 1:
        _sort_equal_runs(values[None, :], order[None, :])
    else:
        _sort_equal_runs(values, order)
    return order


def _sort_equal_runs_python(values, order):
    """In place: each run of equal ``values[k, order[k]]`` gets its indices in increasing order."""
    for k in prange(order.shape[0]):
        v = values[k]
        o = order[k]
        n = o.shape[0]
        start = 0
        for i in range(1, n + 1):
            if i == n or v[o[i]] != v[o[start]]:
                if i - start > 1:
                    o[start:i] = np.sort(o[start:i])
                start = i


_sort_equal_runs = jit_parallel(_sort_equal_runs_python)
