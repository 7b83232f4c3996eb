"""Checks shared by every public function that takes per-class matrices.

Each check names the argument, what was expected and what was given.
"""

import numpy as np

from .exceptions import InputError, LabelError
from .hierarchy import Hierarchy, _preview, _repeated

__all__ = ["check_hierarchy", "class_matrix", "label_matrix", "likelihood_array", "theta_vector"]


def check_hierarchy(hierarchy, name="hierarchy"):
    """Return ``hierarchy`` if it is a :class:`Hierarchy`, else raise a clear TypeError."""
    if not isinstance(hierarchy, Hierarchy):
        raise TypeError(
            f"{name} must be an hmcpgm.Hierarchy (build one with Hierarchy.from_edges or "
            f"Hierarchy.from_parents), got {type(hierarchy).__name__}"
        )
    return hierarchy


def _columns_in_class_order(frame, hierarchy, name):
    """Reorder a DataFrame's columns to ``hierarchy.classes``; names must match exactly once."""
    columns = list(frame.columns)
    classes = hierarchy.classes
    lookup = {c: i for i, c in enumerate(columns)}
    if len(lookup) != len(columns):
        raise InputError(f"{name} has duplicate column names: {_preview(_repeated(columns))}")
    if not all(c in lookup for c in classes):
        # CSV headers are strings; accept str(class) when the classes are ints.
        as_str = {str(c): i for i, c in enumerate(columns)}
        if all(str(c) in as_str for c in classes) and len(as_str) == len(columns):
            lookup = {c: as_str[str(c)] for c in classes}
        else:
            missing = [c for c in classes if c not in lookup and str(c) not in as_str]
            names = set(classes) | {str(c) for c in classes}
            unknown = [c for c in columns if c not in names and str(c) not in names]
            raise InputError(
                f"{name} has {len(columns)} columns but the hierarchy has {len(classes)} "
                f"classes (missing: {_preview(missing)}"
                + (f"; not classes of the hierarchy: {_preview(unknown)})" if unknown else ")")
            )
    names = set(classes) | {str(c) for c in classes}
    extra = [c for c in columns if c not in names and str(c) not in names]
    if extra:
        raise InputError(f"{name} has columns that are not classes of the hierarchy: {_preview(extra)}")
    return frame.iloc[:, [lookup[c] for c in classes]].to_numpy()


def class_matrix(values, hierarchy, name="scores", *, allow_nan=False, dtype=float):
    """An (M, K) float array with columns in ``hierarchy.classes`` order.

    Accepts a numpy array (columns already in class order) or a pandas DataFrame
    (columns named by class, in any order). NaN and infinite values are an error
    unless ``allow_nan``.
    """
    if hasattr(values, "columns") and hasattr(values, "iloc"):
        values = _columns_in_class_order(values, hierarchy, name)
    try:
        arr = np.asarray(values, dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name} must be a numeric (n_objects, n_classes) array: {exc}") from None
    k = hierarchy.n_classes
    if arr.ndim != 2:
        raise InputError(f"{name} must be a 2-D array of shape (n_objects, {k}), got {arr.ndim}-D shape {arr.shape}")
    if arr.shape[1] != k:
        raise InputError(
            f"{name} has {arr.shape[1]} columns but the hierarchy has {k} classes"
        )
    if not allow_nan and arr.dtype.kind == "f":
        bad = ~np.isfinite(arr)
        if bad.any():
            r, c = np.argwhere(bad)[0]
            raise InputError(
                f"{name} must be finite; {int(bad.sum())} entries are NaN or infinite, the first "
                f"at row {r}, class {hierarchy.classes[c]!r} ({arr[r, c]})"
            )
    return arr


def label_matrix(labels, hierarchy, name="labels", *, close=False, require_positives=False):
    """An (M, K) int8 0/1 label matrix that respects the hierarchy.

    ``close=True`` closes the labels upward instead of raising on violations.
    ``require_positives=True`` raises when a class has no positive example.
    """
    y = class_matrix(labels, hierarchy, name, dtype=float)
    bad = (y != 0) & (y != 1)
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise LabelError(
            f"{name} must hold only 0 and 1; row {r}, class {hierarchy.classes[c]!r} holds {y[r, c]}"
        )
    y = y.astype(np.int8)
    if close:
        y = hierarchy.close_labels(y)
    else:
        hierarchy.check_labels(y, name)
    if require_positives:
        empty = np.flatnonzero(y.sum(axis=0) == 0)
        if len(empty):
            raise LabelError(
                f"{name} has no positive example for {len(empty)} classes: "
                f"{_preview(hierarchy.classes[i] for i in empty)}"
            )
    return y


def theta_vector(theta, hierarchy, name="theta"):
    """A (K,) float array of probabilities in [0, 1]."""
    arr = np.asarray(theta, dtype=float)
    k = hierarchy.n_classes
    if arr.shape != (k,):
        raise InputError(f"{name} must have shape ({k},), one probability per class, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)) or arr.min() < 0 or arr.max() > 1:
        i = int(np.flatnonzero(~(np.isfinite(arr) & (arr >= 0) & (arr <= 1)))[0])
        raise InputError(
            f"{name} must hold probabilities in [0, 1]; class {hierarchy.classes[i]!r} has {arr[i]}"
        )
    return arr


def likelihood_array(likelihoods, hierarchy, name="likelihoods"):
    """An (M, K, 2) float array of non-negative likelihoods [L_k(0), L_k(1)].

    A pair (0, 0) is impossible evidence and is an error.
    """
    arr = np.asarray(likelihoods, dtype=float)
    k = hierarchy.n_classes
    if arr.ndim != 3 or arr.shape[1:] != (k, 2):
        raise InputError(
            f"{name} must have shape (n_objects, {k}, 2) holding [L_k(0), L_k(1)], got shape {arr.shape}"
        )
    bad = ~np.isfinite(arr) | (arr < 0)
    if bad.any():
        m, c, y = np.argwhere(bad)[0]
        raise InputError(
            f"{name} must be finite and non-negative; object {m}, class {hierarchy.classes[c]!r}, "
            f"L({y}) = {arr[m, c, y]}"
        )
    zero = (arr[..., 0] == 0) & (arr[..., 1] == 0)
    if zero.any():
        m, c = np.argwhere(zero)[0]
        raise InputError(
            f"{name} has a pair [0, 0] (evidence that rules out both labels) at object {m}, "
            f"class {hierarchy.classes[c]!r}"
        )
    return arr


def event_order(order, n_events, name="order"):
    """A ranking of flat events ``m * K + k``: a 1-D intp permutation of ``range(n_events)``.

    Anything that is not a permutation (floats included) is an error naming
    ``name``, what is missing and what repeats.
    """
    arr = np.asarray(order)
    if arr.ndim != 1:
        raise InputError(f"{name} must be a 1-D array of flat event indices, got {arr.ndim}-D shape {arr.shape}")
    if arr.size and arr.dtype.kind not in "iu":
        raise InputError(f"{name} must hold integer event indices, got dtype {arr.dtype}")
    if arr.size != n_events:
        raise InputError(
            f"{name} ranks {arr.size} events but the matrix has {n_events} events (n_objects * "
            f"n_classes): {name} must be a permutation of the {n_events} events, and order and "
            "labels/values must describe the same objects"
        )
    arr = arr.astype(np.intp, copy=False)
    if n_events == 0:
        return arr
    if arr.min() < 0 or arr.max() >= n_events:
        raise InputError(
            f"{name} must hold event indices in [0, {n_events - 1}] (a permutation of the {n_events} "
            f"events), got values from {arr.min()} to {arr.max()} (out of range)"
        )
    counts = np.bincount(arr, minlength=n_events)
    if not np.all(counts == 1):
        missing = np.flatnonzero(counts == 0)
        repeated = np.flatnonzero(counts > 1)
        raise InputError(
            f"{name} must be a permutation of the {n_events} event indices; {len(missing)} are missing "
            f"(first: {missing[0]}) and {len(repeated)} repeated (first: event {repeated[0]} "
            f"appears {counts[repeated[0]]} times)"
        )
    return arr


def finite_array(values, name="values"):
    """A finite float array of at least one dimension; errors name ``name`` and the first bad entry."""
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name} must be a numeric array: {exc}") from None
    if arr.ndim == 0:
        raise InputError(f"{name} must be an array, got a scalar {arr.item()!r}")
    bad = ~np.isfinite(arr)
    if bad.any():
        i = np.argwhere(bad)[0]
        raise InputError(
            f"{name} must be finite; {int(bad.sum())} entries are NaN or infinite, "
            f"the first at index {tuple(int(j) for j in i)} ({arr[tuple(i)]})"
        )
    return arr
