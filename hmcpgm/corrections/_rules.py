"""HEMDAG's hierarchical corrections (HTD-DAG, TPR-DAG, DESCENS, Obozinski), MCM and the normalisations.

Each function takes a value matrix (objects x classes: a numpy array in
``hierarchy.classes`` order, or a DataFrame with one column per class, in any
order) and returns the corrected matrix of the same kind (a DataFrame keeps its
index and column order). The semantics are HEMDAG's (Valentini et al.), written
out in SPEC section 17; levels are longest-path levels, so a parent always sits
on a lower level than each of its children.
"""

import numpy as np

from .._arrays import finite_array
from .._validation import as_pandas, is_frame
from ..exceptions import InputError
from ..hierarchy import Hierarchy
from ._inputs import class_major, matrix_in, matrix_out, unit_interval
from ._isotonic import isotonic_rows
from ._kernels import (
    THRESHOLD,
    THRESHOLD_FREE,
    WEIGHTED_THRESHOLD,
    WEIGHTED_THRESHOLD_FREE,
    bottom_up_max,
    closure_and,
    closure_or,
    htd_pass,
    tpr_bottom_up,
    tpr_tau,
)
from ._structure import dag_passes

__all__ = ["add_root", "htd", "tpr_dag", "obozinski", "mcm", "maxnorm", "qnorm", "BOTTOM_UP", "POSITIVE", "TOP_DOWN"]

BOTTOM_UP = {
    "threshold_free": THRESHOLD_FREE,
    "threshold": THRESHOLD,
    "weighted_threshold_free": WEIGHTED_THRESHOLD_FREE,
    "weighted_threshold": WEIGHTED_THRESHOLD,
    "tau": -1,
}
POSITIVE = ("children", "descendants")
TOP_DOWN = ("htd", "gpav")
OBOZINSKI = ("max", "and", "or")


def _choice(value, allowed, name):
    if not isinstance(value, str) or value not in allowed:
        raise InputError(f"{name} must be one of {', '.join(map(repr, allowed))}; got {value!r}")
    return value


def _unit(value, name):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)) or not (
        0.0 <= float(value) <= 1.0
    ):
        raise InputError(f"{name} must be a number in [0, 1]; got {value!r}")
    return float(value)


def htd_rows(x, hierarchy):
    """HTD-DAG on a checked (M, K) float array (class order); returns a new array."""
    p = dag_passes(hierarchy)
    xt = class_major(x)
    htd_pass(xt, p.up, p.parent_ptr, p.parent_idx)
    return np.ascontiguousarray(xt.T)


def htd(values, hierarchy):
    """HTD-DAG, the hierarchical top-down correction (HEMDAG's ``htd``).

    Classes are visited by increasing level (the longest path from a root); each
    non-root class takes the minimum of its own value and its parents' already
    corrected values. Roots keep their values. The result never has a child above
    a parent, and a matrix that already satisfies the hierarchy is returned
    unchanged (so ``htd`` is idempotent).

    Parameters
    ----------
    values : array-like or DataFrame of shape (M, K)
        Scores or probabilities, one column per class: an array in
        ``hierarchy.classes`` order, or a DataFrame with columns named by class.
    hierarchy : Hierarchy
        Any tree, forest or DAG.

    Returns
    -------
    ndarray or DataFrame of shape (M, K)
        The corrected values (a DataFrame with the index and columns of ``values``
        when ``values`` is one).

    Examples
    --------
    >>> from hmcpgm import Hierarchy
    >>> h = Hierarchy.from_edges([("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")])
    >>> htd([[0.6, 0.9, 0.4, 0.5]], h).tolist()
    [[0.6, 0.6, 0.4, 0.4]]
    """
    x = matrix_in(values, hierarchy)
    return matrix_out(htd_rows(x, hierarchy), values, hierarchy)


def tpr_bottom_up_rows(x, hierarchy, positive, bottomup, t, w):
    """TPR-DAG's bottom-up step alone on a checked (M, K) float array: a new class-major (K, M) array."""
    p = dag_passes(hierarchy)
    xt = class_major(x)
    if bottomup == "tau":
        tpr_tau(xt, p.down, p.child_ptr, p.child_idx, p.far_ptr, p.far_idx, t)
    else:
        ptr, idx = (p.child_ptr, p.child_idx) if positive == "children" else (p.desc_ptr, p.desc_idx)
        tpr_bottom_up(xt, p.down, ptr, idx, BOTTOM_UP[bottomup], t, w)
    return xt


def tpr_rows(x, hierarchy, positive, bottomup, topdown, t, w):
    """TPR-DAG on a checked (M, K) float array; returns a new array."""
    xt = tpr_bottom_up_rows(x, hierarchy, positive, bottomup, t, w)
    if topdown == "htd":
        p = dag_passes(hierarchy)
        htd_pass(xt, p.up, p.parent_ptr, p.parent_idx)
        return np.ascontiguousarray(xt.T)
    return isotonic_rows(np.ascontiguousarray(xt.T), None, hierarchy)


def tpr_dag(values, hierarchy, *, positive="children", bottomup="threshold_free", topdown="htd", t=0.5, w=0.5):
    """TPR-DAG, its weighted and threshold variants, DESCENS and ISO-TPR (HEMDAG's ``tpr.dag``).

    Two passes. Bottom-up, classes with children are visited by decreasing level
    (leaves never change; roots are updated like any other class). With ``p`` the
    class's own flat value and ``V`` the current (already updated) values of its
    children (``positive="children"``) or of all its descendants
    (``"descendants"``, DESCENS), the "positive" members of ``V`` and the update are:

    ============================  ===================  ==================================
    ``bottomup``                  positive members P   new value of the class
    ============================  ===================  ==================================
    ``"threshold_free"``          ``x > p``            ``(p + sum P) / (1 + |P|)``
    ``"threshold"``               ``x > t``            ``(p + sum P) / (1 + |P|)``
    ``"weighted_threshold_free"`` ``x > p``            ``w p + (1 - w) mean(P)`` if P
    ``"weighted_threshold"``      ``x > t``            ``w p + (1 - w) mean(P)`` if P
    ``"tau"`` (descendants only)  C, D: ``x > p``      ``t (p + sum C) / (1 + |C|) +``
                                                       ``(1 - t) (p + sum D) / (1 + |D|)``
    ============================  ===================  ==================================

    where, for ``"tau"``, C are the children and D the other descendants. The
    threshold rules can lower a class (a class above ``t`` with no child above
    ``t`` keeps its value, one with a child between ``t`` and itself is pulled
    down). Top-down, :func:`htd` (TPR-DAG) or the exact isotonic regression
    :func:`gpav` (ISO-TPR) makes the result hierarchy-consistent.

    HEMDAG needs a single root and adds one (holding the largest score of the
    matrix) when the graph has several; here a forest's roots are treated
    separately, which gives HEMDAG's numbers whenever the hierarchy has one root;
    :func:`add_root` reproduces HEMDAG's artificial root on the others.

    Parameters
    ----------
    values : array-like or DataFrame of shape (M, K)
        Flat scores, one column per class (an array in ``hierarchy.classes``
        order or a DataFrame with columns named by class).
    hierarchy : Hierarchy
        Any tree, forest or DAG; its ``classes`` name the columns.
    positive : {"children", "descendants"}
        Whose values pool into a class.
    bottomup : {"threshold_free", "threshold", "weighted_threshold_free", "weighted_threshold", "tau"}
        The selection and update rule above (HEMDAG's ``"threshold.free"`` and so
        on, spelled with underscores); ``"tau"`` needs ``positive="descendants"``.
    topdown : {"htd", "gpav"}
        The consistency step: HTD-DAG (TPR-DAG, the default here) or the exact
        isotonic regression (ISO-TPR, the default of HEMDAG's ``tpr.dag``).
    t : float in [0, 1], default 0.5
        The threshold of the threshold rules; the balance between children and
        further descendants of ``"tau"``. Unused by the threshold-free rules.
        HEMDAG's ``tpr.dag`` defaults to ``t=0`` (every child above 0 counts).
    w : float in [0, 1], default 0.5
        The weight of the class's own value in the weighted rules; unused otherwise.
        HEMDAG's ``tpr.dag`` defaults to ``w=0`` (the mean of the positive nodes alone).
        To reproduce a call of ``tpr.dag`` that relies on its defaults, pass
        ``topdown="gpav"``, ``t=0`` and ``w=0``.

    Returns
    -------
    ndarray or DataFrame of shape (M, K)
        Hierarchy-consistent values (a child never above any parent).

    Examples
    --------
    >>> from hmcpgm import Hierarchy
    >>> h = Hierarchy.from_edges([("a", "b"), ("a", "c")])
    >>> tpr_dag([[0.5, 0.8, 0.2]], h).tolist()      # a: (0.5 + 0.8) / 2; then b: min(0.8, 0.65)
    [[0.65, 0.65, 0.2]]
    >>> tpr_dag([[0.5, 0.8, 0.2]], h, bottomup="weighted_threshold", t=0.1, w=0.5).tolist()
    [[0.5, 0.5, 0.2]]
    """
    positive = _choice(positive, POSITIVE, "positive")
    bottomup = _choice(bottomup, tuple(BOTTOM_UP), "bottomup")
    topdown = _choice(topdown, TOP_DOWN, "topdown")
    if bottomup == "tau" and positive != "descendants":
        raise InputError("bottomup='tau' is a DESCENS rule: it needs positive='descendants'")
    t, w = _unit(t, "t"), _unit(w, "w")
    x = matrix_in(values, hierarchy)
    return matrix_out(tpr_rows(x, hierarchy, positive, bottomup, topdown, t, w), values, hierarchy)


def obozinski_rows(x, hierarchy, method):
    """Obozinski's rule on a checked (M, K) array; returns a new array."""
    p = dag_passes(hierarchy)
    xt = class_major(x)
    if method == "max":
        bottom_up_max(xt, p.down, p.child_ptr, p.child_idx)
        return np.ascontiguousarray(xt.T)
    out = np.empty_like(xt)
    if method == "and":
        closure_and(xt, out, p.anc_ptr, p.anc_idx)
    else:
        closure_or(xt, out, p.desc_ptr, p.desc_idx)
    htd_pass(out, p.up, p.parent_ptr, p.parent_idx)  # products in different orders may differ in the last bit
    return np.ascontiguousarray(out.T)


def obozinski(values, hierarchy, method="max"):
    """Obozinski et al.'s heuristic reconciliations (HEMDAG's ``obozinski.max``, ``.and``, ``.or``).

    ``"max"``: each class takes the largest flat value of itself and all its
    descendants. ``"and"``: the product of the flat values of the class and all
    its ancestors (each ancestor counted once, also on DAGs). ``"or"``: one
    minus the product of ``1 - value`` over the class and all its descendants.
    All three are hierarchy-consistent on probabilities; ``"and"`` and ``"or"``
    need values in [0, 1]. Each class's product is computed on its own, so on
    a DAG a child's and its parent's may differ in the last bit where they are
    equal in exact arithmetic; a last top-down pass (:func:`htd`) removes such
    differences, so that child <= parent holds exactly (HEMDAG's numbers agree
    to about 1e-12).

    Parameters
    ----------
    values : array-like or DataFrame of shape (M, K)
        One column per class (array in ``hierarchy.classes`` order, or a
        DataFrame with columns named by class).
    hierarchy : Hierarchy
        Any tree, forest or DAG; its ``classes`` name the columns.
    method : {"max", "and", "or"}
        The rule.

    Returns
    -------
    ndarray or DataFrame of shape (M, K)
        The corrected values (a DataFrame with the index and columns of ``values``
        when ``values`` is one).

    Examples
    --------
    >>> from hmcpgm import Hierarchy
    >>> h = Hierarchy.from_edges([("a", "b")])
    >>> obozinski([[0.5, 0.8]], h, "max").tolist()
    [[0.8, 0.8]]
    >>> obozinski([[0.5, 0.8]], h, "and").tolist()
    [[0.5, 0.4]]
    >>> obozinski([[0.5, 0.8]], h, "or").round(12).tolist()
    [[0.9, 0.8]]
    """
    method = _choice(method, OBOZINSKI, "method")
    x = matrix_in(values, hierarchy)
    if method != "max":
        unit_interval(x, hierarchy, "values", f" for obozinski(method={method!r}) (probabilities)")
    return matrix_out(obozinski_rows(x, hierarchy, method), values, hierarchy)


def mcm(values, hierarchy):
    """C-HMCNN's max constraint module at inference: each class takes the maximum over itself and its descendants.

    The same numbers as ``obozinski(values, hierarchy, "max")`` (Giunchiglia &
    Lukasiewicz 2020, applied to calibrated scores). Idempotent and
    hierarchy-consistent.

    Parameters
    ----------
    values : array-like or DataFrame of shape (M, K)
        One column per class (an array in ``hierarchy.classes`` order, or a
        DataFrame with columns named by class).
    hierarchy : Hierarchy
        Any tree, forest or DAG; its ``classes`` name the columns.

    Returns
    -------
    ndarray or DataFrame of shape (M, K)
        The corrected values (a DataFrame with the index and columns of ``values``
        when ``values`` is one).

    Examples
    --------
    >>> from hmcpgm import Hierarchy
    >>> h = Hierarchy.from_parents([None, 0, 1])
    >>> mcm([[0.1, 0.3, 0.7]], h).tolist()
    [[0.7, 0.7, 0.7]]
    """
    x = matrix_in(values, hierarchy)
    return matrix_out(obozinski_rows(x, hierarchy, "max"), values, hierarchy)


def _flat(values, name="values"):
    """A finite float (M, K) array from an array or any DataFrame (no hierarchy needed)."""
    arr = finite_array(values.to_numpy() if is_frame(values) else values, name)
    if arr.ndim != 2:
        raise InputError(f"{name} must be a 2-D (n_objects, n_classes) array, got shape {arr.shape}")
    return np.array(arr, dtype=np.float64)


def _like(result, values):
    if not is_frame(values):
        return result
    import pandas as pd

    return pd.DataFrame(result, index=values.index, columns=values.columns)


def maxnorm(values):
    """HEMDAG's ``maxnorm`` (``normalize.max``): each column divided by its maximum.

    A column whose maximum is 0 is left as it is. Meant for non-negative scores;
    as in HEMDAG, a column whose maximum is negative is divided by it too, which
    reverses its order.

    Parameters
    ----------
    values : array-like or DataFrame of shape (M, K)
        Scores, one column per class (non-negative in HEMDAG's use).

    Returns
    -------
    ndarray or DataFrame of shape (M, K)
        The normalised scores (a DataFrame with the index and columns of ``values``).

    Examples
    --------
    >>> maxnorm([[1.0, 0.0], [4.0, 0.0]]).tolist()
    [[0.25, 0.0], [1.0, 0.0]]
    """
    values = as_pandas(values)  # a pyarrow or polars table: a DataFrame out, as for a DataFrame
    x = _flat(values)
    top = x.max(axis=0) if len(x) else np.zeros(x.shape[1])
    out = x / np.where(top != 0, top, 1.0)
    return _like(out, values)


def qnorm(values):
    """HEMDAG's ``qnorm``: quantile normalisation of the columns (preprocessCore's ``normalize.quantiles``).

    Every column is given the same distribution: ``m_r``, the mean over columns of
    their ``r``-th smallest values. A value of (1-based, ties averaged) rank ``r``
    in its column becomes ``m_floor(r)``, or, when ``r`` is a half-integer (a tie
    of an even number of values; preprocessCore's rule is ``r - floor(r) > 0.4``),
    the mean of ``m_floor(r)`` and ``m_floor(r)+1``.

    Parameters
    ----------
    values : array-like or DataFrame of shape (M, K)
        One column per class.

    Returns
    -------
    ndarray or DataFrame of shape (M, K)
        The normalised values (a DataFrame with the index and columns of ``values``).

    Examples
    --------
    >>> qnorm([[1.0, 10.0], [2.0, 20.0], [3.0, 30.0]]).tolist()   # rank means 5.5, 11, 16.5
    [[5.5, 5.5], [11.0, 11.0], [16.5, 16.5]]
    >>> qnorm([[1.0, 10.0], [1.0, 20.0], [3.0, 30.0]]).tolist()   # tied rank 1.5: (5.5 + 10.5) / 2
    [[8.0, 5.5], [8.0, 10.5], [16.5, 16.5]]
    """
    from scipy.stats import rankdata

    values = as_pandas(values)  # a pyarrow or polars table: a DataFrame out, as for a DataFrame
    x = _flat(values)
    if x.shape[0] == 0:
        return _like(x, values)
    means = np.sort(x, axis=0).mean(axis=1)
    ranks = rankdata(x, axis=0, method="average")
    low = np.floor(ranks).astype(np.intp)
    half = ranks - low > 0.4
    upper = np.minimum(low, len(means) - 1)  # only read where half is True (then low < M)
    out = np.where(half, 0.5 * (means[low - 1] + means[upper]), means[low - 1])
    return _like(out, values)


def add_root(values, hierarchy, root="00", value=None):
    """HEMDAG's artificial root: a new class above every root, holding the largest value of the matrix.

    HEMDAG's functions need a hierarchy with a single root; when the score matrix
    has no column for it they add one filled with ``max(S)``. Here every function
    works on forests and DAGs with several roots as they are; apply them to
    ``add_root(values, hierarchy)`` to get HEMDAG's numbers on such hierarchies
    (the root's value matters to ``tpr_dag``'s threshold rules, which can lower
    it and so cap the top classes, to ``gpav``, and scales ``obozinski``'s "and").

    Parameters
    ----------
    values : array-like or DataFrame of shape (M, K)
        One column per class (an array in ``hierarchy.classes`` order, or a
        DataFrame with columns named by class).
    hierarchy : Hierarchy
        The hierarchy to root; ``root`` must not be one of its classes (nor name
        one as a string: ``"1"`` beside a class ``1``).
    root : hashable, default "00"
        The new class's name (HEMDAG's default).
    value : float, optional
        The root's value in every row (finite); default the largest value of ``values``.

    Returns
    -------
    values : ndarray or DataFrame of shape (M, K + 1)
        ``values`` with the root's column first.
    hierarchy : Hierarchy
        ``hierarchy`` with ``root`` as the parent of its roots, first in column order.

    Examples
    --------
    >>> from hmcpgm import Hierarchy
    >>> v, h = add_root([[0.2, 0.7], [0.4, 0.1]], Hierarchy.from_edges([], classes=["a", "b"]))
    >>> v.tolist(), h.classes, h.parents("a")
    ([[0.7, 0.2, 0.7], [0.7, 0.4, 0.1]], ('00', 'a', 'b'), ('00',))
    """
    x = matrix_in(values, hierarchy)
    try:
        hash(root)
    except TypeError:
        root = None
    if root is None:
        raise InputError("root must be a hashable class name other than None (HEMDAG's is '00')")
    if root in hierarchy or str(root) in {str(c) for c in hierarchy.classes}:
        raise InputError(f"root {root!r} is already a class of the hierarchy; choose another name")
    if value is None:
        top = float(x.max()) if x.size else 0.0
    elif isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)) or (
        not np.isfinite(value)
    ):
        raise InputError(f"value must be a finite number (the root's value in every row) or None; got {value!r}")
    else:
        top = float(value)
    edges = [(root, c) for c in hierarchy.roots] + list(hierarchy.edges)
    rooted = Hierarchy.from_edges(edges, classes=[root, *hierarchy.classes])
    out = np.column_stack([np.full(len(x), top), x])
    if is_frame(values):
        frame = matrix_out(x, values, hierarchy)  # the columns of ``values``, which may be str(class)
        frame.insert(0, root, top)
        return frame, rooted
    return out, rooted
