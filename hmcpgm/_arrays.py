"""Checks of plain arrays and numbers, shared by every module (no hmcpgm types here).

Each check names the argument, what was expected and what was given, and counts
rows and columns from 0 as numpy does (files count rows from 1; see ``hmcpgm.io``).
"""

import numpy as np

from .exceptions import InputError, LabelError

__all__ = ["binary_matrix", "count", "event_order", "finite_array", "first_true", "label_target"]


def first_true(mask):
    """The index (a tuple of ints) of the first True entry of ``mask``, or None.

    Examples
    --------
    >>> first_true(np.array([[False, False], [False, True]]))
    (1, 1)
    """
    mask = np.asarray(mask)
    if not mask.any():
        return None
    return tuple(int(i) for i in np.argwhere(mask)[0])


def count(value, name, *, minimum=0):
    """``value`` as an int >= ``minimum`` (bools and floats are refused).

    Examples
    --------
    >>> count(3, "n")
    3
    >>> count(-1, "n")
    Traceback (most recent call last):
    ...
    hmcpgm.exceptions.InputError: n must be an integer >= 0, got -1
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise InputError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def binary_matrix(labels, name="labels", classes=None):
    """An (M, K) int8 0/1 matrix from a 2-D array-like or scipy sparse matrix of 0/1 values.

    A sparse matrix is read densely (as :func:`label_target` reads ``y``). ``classes``
    (a Hierarchy or names, in the columns' order) names the class of a bad value:
    a DataFrame aligned by name has its columns in another order than the user's.

    Examples
    --------
    >>> binary_matrix([[1, 0], [0, 2]])
    Traceback (most recent call last):
    ...
    hmcpgm.exceptions.LabelError: labels must hold only 0 and 1; row 1, column 1 holds 2.0
    """
    if hasattr(labels, "tocsr"):
        from scipy import sparse

        if sparse.issparse(labels):
            labels = labels.toarray()
    if type(labels) is np.ndarray and labels.dtype.kind in "biu":  # not a subclass (np.matrix, a masked array)
        arr = labels  # checked as it is: a float copy of a Gene Ontology label matrix weighs a gigabyte
    else:
        try:
            arr = np.asarray(labels, dtype=float)
        except (TypeError, ValueError) as exc:
            raise InputError(f"{name} must be a numeric (n_objects, n_classes) 0/1 array: {exc}") from None
    if arr.ndim != 2:
        raise InputError(
            f"{name} must be a 2-D (n_objects, n_classes) 0/1 array, got {arr.ndim}-D shape {arr.shape}"
        )
    bad = first_true((arr != 0) & (arr != 1))
    if bad:
        names = getattr(classes, "classes", classes)
        named = names is not None and arr.shape[1] == len(names)  # another count of columns: their positions
        where = f"class {names[bad[1]]!r}" if named else f"column {bad[1]}"
        raise LabelError(f"{name} must hold only 0 and 1; row {bad[0]}, {where} holds {float(arr[bad])}")
    return arr.astype(np.int8)


def label_target(y, owner):
    """A 2-D 0/1 label matrix from an array-like or scipy sparse ``y``, or a one-line error.

    The check every multilabel estimator's ``fit`` makes (scikit-learn's words for
    the kind of target refused); a sparse 0/1 matrix is read densely.

    Parameters
    ----------
    y : array-like or scipy sparse matrix
        The labels.
    owner : str
        Named in the error ("MLPR is multilabel").

    Returns
    -------
    ndarray of shape (M, K)
        The checked 0/1 labels.

    Examples
    --------
    >>> label_target([[1, 0], [0, 1]], "MLPR").tolist()
    [[1, 0], [0, 1]]
    """
    from scipy import sparse
    from sklearn.utils.multiclass import type_of_target

    from .exceptions import LabelError

    arr = y.toarray() if sparse.issparse(y) else np.asarray(y)
    kind = type_of_target(arr, input_name="y") if arr.size else "empty"
    if arr.ndim != 2 or kind not in ("multilabel-indicator", "multiclass-multioutput", "binary"):
        raise LabelError(
            f"y must be a 0/1 label matrix of shape (n_objects, n_classes) ({owner} is multilabel), "
            f"got a {kind!r} target of shape {arr.shape}"
        )
    return binary_matrix(arr, "y")


def refuse_complex(values, name):
    """One-line error for a complex array (numpy would cast it to float with a warning, dropping the
    imaginary part); lists of complex numbers are refused by the float conversion itself."""
    dtype = getattr(values, "dtype", None)
    if isinstance(dtype, np.dtype) and dtype.kind == "c":
        raise InputError(f"{name} must be real numbers, got a complex array ({dtype})")


def finite_array(values, name="values"):
    """A finite float array of at least one dimension; errors name ``name`` and the first bad entry."""
    refuse_complex(values, name)
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name} must be a numeric array: {exc}") from None
    if arr.ndim == 0:
        raise InputError(f"{name} must be an array, got a scalar {arr.item()!r}")
    bad = first_true(~np.isfinite(arr))
    if bad:
        raise InputError(
            f"{name} must be finite; {int((~np.isfinite(arr)).sum())} entries are NaN or infinite, "
            f"the first at index {bad} ({arr[bad]})"
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
            f"n_classes): {name} must be a permutation of the {n_events} events, and the ranking "
            "and the labels or values must describe the same objects"
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
