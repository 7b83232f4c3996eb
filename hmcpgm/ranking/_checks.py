"""Argument checks for the ranking functions."""

import numpy as np

from .._validation import check_hierarchy, class_matrix
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
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InputError(f"values must be a numeric array: {exc}") from None
    arr = arr.ravel()
    bad = ~np.isfinite(arr)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"values must be finite; {int(bad.sum())} entries are NaN or infinite, "
            f"the first at flat index {i} ({arr[i]})"
        )
    return arr


def permutation(order, n, name="order"):
    """``order`` as an int array that must be a permutation of 0..n-1."""
    arr = np.asarray(order)
    if arr.ndim != 1:
        raise InputError(f"{name} must be a 1-D array of flat event indices, got shape {arr.shape}")
    if arr.size and arr.dtype.kind not in "iu":
        if arr.dtype.kind == "f" and np.all(np.mod(arr, 1) == 0):
            arr = arr.astype(np.intp)
        else:
            raise InputError(f"{name} must hold integer event indices, got dtype {arr.dtype}")
    if arr.size != n:
        raise InputError(
            f"{name} must be a permutation of the {n} events 0..{n - 1}, got {arr.size} entries"
        )
    arr = arr.astype(np.intp, copy=False)
    if n == 0:
        return arr
    out = (arr < 0) | (arr >= n)
    if out.any():
        raise InputError(
            f"{name} must be a permutation of 0..{n - 1}; it holds {arr[out][0]} (out of range)"
        )
    seen = np.bincount(arr, minlength=n)
    if (seen != 1).any():
        dup = int(np.flatnonzero(seen > 1)[0])
        miss = int(np.flatnonzero(seen == 0)[0])
        raise InputError(
            f"{name} must be a permutation of 0..{n - 1}; event {dup} appears {seen[dup]} "
            f"times and event {miss} is missing"
        )
    return arr
