"""Checks shared by every public function that takes per-class matrices.

A matrix has one column per class. A numpy array is taken in the column order of
the classes it is used with; a pandas DataFrame is aligned by column name, never
by position, and refused when it cannot be aligned (:mod:`hmcpgm._columns`, whose
names this module re-exports). Each check names the argument, what was expected
and what was given.
"""

import numpy as np

from ._arrays import binary_matrix, first_true, refuse_complex
from ._columns import (
    aligned_matrices,
    as_pandas,
    as_table,
    at_the_door,
    checked_at_the_door,
    class_matrix,
    column_positions,
    is_frame,
    matrix_classes,
    rows_aligned,
    rows_paired,
    series_row,
)
from .exceptions import InputError
from .hierarchy import Hierarchy

__all__ = [
    "aligned_matrices",
    "as_pandas",
    "as_table",
    "estimator_table",
    "score_array",
    "frame_scores",
    "rows_aligned",
    "rows_paired",
    "series_row",
    "check_instance",
    "column_positions",
    "check_hierarchy",
    "checked_at_the_door",
    "class_matrix",
    "is_frame",
    "label_matrix",
    "matrix_classes",
    "likelihood_array",
    "theta_vector",
]


def estimator_table(estimator, values, *, fitted=True):
    """``values`` by :func:`as_table` for an estimator, told its classes: the fitted ``hierarchy_``'s, or
    (``fitted=False``, in ``fit``) its ``hierarchy`` parameter's, when it has one."""
    hierarchy = getattr(estimator, "hierarchy_", None) if fitted else estimator.hierarchy
    return as_table(values, hierarchy.classes if isinstance(hierarchy, Hierarchy) else None)


def check_instance(value, cls, name, how):
    """Return ``value`` if it is a ``cls``, else a TypeError saying ``how`` to make one."""
    if not isinstance(value, cls):
        raise TypeError(f"{name} must be an hmcpgm.{cls.__name__} ({how}), got {type(value).__name__}")
    return value


def check_hierarchy(hierarchy, name="hierarchy"):
    """Return ``hierarchy`` if it is a :class:`Hierarchy`, else raise a clear TypeError."""
    return check_instance(hierarchy, Hierarchy, name, "build one with Hierarchy.from_edges or Hierarchy.from_parents")


def label_matrix(labels, hierarchy, name="labels", *, close=False):
    """An (M, K) int8 0/1 label matrix that respects the hierarchy.

    ``close=True`` closes the labels upward instead of raising on violations.
    """
    if (at_the_door() and isinstance(labels, np.ndarray) and labels.dtype == np.int8 and labels.ndim == 2
            and labels.shape[1] == hierarchy.n_classes):
        return labels  # made by label_matrix at the door (see checked_at_the_door): 0/1 and closed
    y = binary_matrix(class_matrix(labels, hierarchy, name, allow_nan=True, keep_integers=True), name, hierarchy)
    if close:
        y = hierarchy.close_labels(y)
    else:
        hierarchy.check_labels(y, name)
    return y


def theta_vector(theta, hierarchy, name="theta"):
    """A (K,) float array of probabilities in [0, 1]: an array in class order, or a Series or dict by class name
    (every class named once; a Series of a default ``RangeIndex`` names none and is taken in class order,
    unless the classes are the integers 0 .. n-1 in another order: :func:`series_row`)."""
    refuse_complex(theta, name)
    if isinstance(theta, dict):
        import pandas as pd

        # keys as they are: pandas would make keys 0 .. n-1 a RangeIndex, read by position
        theta = pd.DataFrame([list(theta.values())], columns=pd.Index(list(theta), dtype=object))
    named = series_row(theta, hierarchy.classes)
    if is_frame(named):  # aligned by class name, as every per-class input of the library
        if len(named) != 1:
            raise InputError(f"{name} is a DataFrame of {len(named)} rows; it takes one probability per class, "
                             "one row")
        theta = named.iloc[0, column_positions(named.columns, hierarchy, f"{name} (by class name)")].to_numpy()
    try:
        arr = np.asarray(theta, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name} must be a numeric array of probabilities: {exc}") from None
    k = hierarchy.n_classes
    if arr.shape != (k,):
        raise InputError(f"{name} must have shape ({k},), one probability per class, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)) or arr.min() < 0 or arr.max() > 1:
        i = int(np.flatnonzero(~(np.isfinite(arr) & (arr >= 0) & (arr <= 1)))[0])
        raise InputError(
            f"{name} must hold probabilities in [0, 1]; class {hierarchy.classes[i]!r} has {arr[i]}"
        )
    return arr


_COMPILED_CHECK = 2**20  # entries: larger likelihood arrays are checked by one compiled parallel pass


def likelihood_array(likelihoods, hierarchy, name="likelihoods"):
    """An (M, K, 2) float array of non-negative likelihoods [L_k(0), L_k(1)].

    A pair (0, 0) is impossible evidence and is an error.
    """
    refuse_complex(likelihoods, name)
    try:
        arr = np.asarray(likelihoods, dtype=float)
    except (TypeError, ValueError) as exc:  # text, None, ragged nesting: numpy's own words, said in one line
        raise InputError(f"{name} must be numbers of shape (n_objects, {hierarchy.n_classes}, 2): {exc}") from None
    k = hierarchy.n_classes
    if arr.ndim != 3 or arr.shape[1:] != (k, 2):
        raise InputError(
            f"{name} must have shape (n_objects, {k}, 2) holding [L_k(0), L_k(1)], got shape {arr.shape}"
        )
    if arr.size >= _COMPILED_CHECK:
        from ._likelihood_check import first_bad_likelihoods

        flat_bad, flat_zero = first_bad_likelihoods(np.ascontiguousarray(arr))
        bad = None if flat_bad < 0 else tuple(int(i) for i in np.unravel_index(flat_bad, arr.shape))
        zero = None if flat_zero < 0 else tuple(int(i) for i in np.unravel_index(flat_zero, arr.shape[:2]))
    else:
        bad = first_true(~np.isfinite(arr) | (arr < 0))
        zero = None if bad else first_true((arr[..., 0] == 0) & (arr[..., 1] == 0))
    if bad:
        m, c, y = bad
        raise InputError(
            f"{name} must be finite and non-negative; object {m}, class {hierarchy.classes[c]!r}, "
            f"L({y}) = {arr[bad]}"
        )
    if zero:
        raise InputError(
            f"{name} has a pair [0, 0] (evidence that rules out both labels) at object {zero[0]}, "
            f"class {hierarchy.classes[zero[1]]!r}"
        )
    return arr


def frame_scores(estimator, X, hierarchy, *, reset):
    """The scores of a DataFrame ``X`` aligned by class name; with ``reset``, the estimator's feature attributes.

    ``n_features_in_`` is set, and ``feature_names_in_`` holds the class names
    only when they are all strings (scikit-learn's rule; otherwise one left
    by an earlier fit is removed).

    Parameters
    ----------
    estimator : BaseEstimator
        Whose feature attributes are set (``reset``).
    X : DataFrame
        Scores, one column per class of ``hierarchy``.
    hierarchy : Hierarchy
        Fixes the column order.
    reset : bool
        A fit (set the attributes) or a prediction.

    Returns
    -------
    ndarray of float
        (M, K) scores in class order (checked by :func:`class_matrix`).
    """
    s = class_matrix(X, hierarchy, "X")
    if reset:
        estimator.n_features_in_ = s.shape[1]
        if all(isinstance(c, str) for c in hierarchy.classes):
            estimator.feature_names_in_ = np.asarray(hierarchy.classes, dtype=object)
        elif hasattr(estimator, "feature_names_in_"):
            del estimator.feature_names_in_
    return s


def score_array(estimator, X, *, reset, min_rows):
    """scikit-learn's checks of a score array ``X`` for an estimator (type, dimensions, feature count), each
    refusal one line.

    Finiteness is left to :func:`class_matrix`, whose message names the row and class
    (scikit-learn's runs over several lines); ``min_rows=0`` lets predictions of no
    objects be empty, as they are for a DataFrame.

    Parameters
    ----------
    estimator : BaseEstimator
        Whose ``n_features_in_`` is set (``reset``) or checked.
    X : array-like
        Not a DataFrame.
    reset : bool
        As in ``sklearn.utils.validation.validate_data``.
    min_rows : int
        Fewest rows accepted.

    Returns
    -------
    ndarray of float64
        The array, not yet checked for NaN or infinite values.
    """
    from sklearn.utils.validation import validate_data

    try:
        return validate_data(estimator, X, reset=reset, dtype=np.float64, ensure_all_finite=False,
                             ensure_min_samples=min_rows)
    except ValueError as exc:
        lines = str(exc).strip().splitlines()
        first = lines[0].rstrip(":") if lines else type(exc).__name__
        if len(lines) == 1 and first.startswith("X "):
            raise
        raise InputError(f"X must be a real (n_objects, n_classes) array of scores: {first}") from None
