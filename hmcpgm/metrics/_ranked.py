"""Evaluation of rankings and decisions.

Two kinds of input:

- a *ranking*: a :class:`~hmcpgm.ranking.Ranking` from :func:`hmcpgm.hier_rank` or
  :func:`hmcpgm.naive_sort` (or a plain permutation of the ``n = M * K`` flat event
  indices ``m * K + k``, best first), evaluated against an ``(M, K)`` 0/1 label
  matrix; a labels DataFrame is aligned to the ranking's classes by name;
- a *decision matrix*: an ``(M, K)`` 0/1 matrix, e.g. from ``ranking.top(r)`` or
  ``cutoff.apply(ranking)``; decisions and labels given as DataFrames are aligned
  by class name.

Conventions used throughout (they matter for small samples):

- the top ``kappa * 100%`` of ``n`` events is the top ``r = floor(kappa * n + 0.5)``
  events (``kappa * n`` rounded half up, with ``kappa`` as written: its shortest
  decimal), and at least one event;
- a ratio whose denominator is zero is ``nan`` (precision with no discoveries,
  recall with no positives), except the false discovery proportion, which is 0
  when nothing is discovered (the usual ``V / max(R, 1)`` convention);
- the number of hierarchy violations of a decision matrix is
  :meth:`hmcpgm.Hierarchy.violations`, and of a ranking
  :func:`hmcpgm.count_violations`; they are not repeated here.
"""

import math
from fractions import Fraction

import numpy as np

from .._arrays import binary_matrix, finite_array
from .._numba import jit
from .._validation import aligned_matrices, check_hierarchy, matrix_classes
from ..exceptions import InputError, LabelError
from ..ranking._ranking import matrix_for

__all__ = [
    "area_under_hit_curve",
    "average_precision",
    "bootstrap_average_precision",
    "discovery_proportion",
    "f1_score",
    "fdp",
    "hit_curve",
    "pr_curve",
    "precision_recall_at",
    "row_bootstrap_weights",
    "weighted_average_precisions",
]


# ---------------------------------------------------------------------- argument checks
def _ranked_labels(ranking, labels):
    """Labels of the events in ranked order (1-D int8) after checking both arguments."""
    ranking, y = matrix_for(ranking, labels, "labels", flat=False)
    return binary_matrix(y, "labels", ranking.classes).reshape(-1)[ranking.order]


def _rank_at(kappa, n_events, name="kappa"):
    """``floor(kappa * n + 0.5)`` for each kappa in (0, 1], at least 1 (0 when there is no event)."""
    try:
        k = finite_array(np.atleast_1d(np.asarray(kappa, dtype=float)), name)
    except (TypeError, ValueError) as exc:
        if isinstance(exc, InputError):
            raise
        raise InputError(f"{name} must be a number or an array of numbers in (0, 1]: {exc}") from None
    if np.any((k <= 0) | (k > 1)):
        bad = k[(k <= 0) | (k > 1)][0]
        raise InputError(f"{name} must lie in (0, 1] (a fraction of the events), got {bad}")
    # kappa as written (its shortest decimal), times n, rounded half up in exact arithmetic: in floating
    # point 0.7 * 45 is 31.4999..., which floor(x + 0.5) took to 31
    r = np.array([math.floor(Fraction(repr(float(x))) * n_events + Fraction(1, 2)) for x in k], dtype=np.intp)
    return np.clip(r, min(n_events, 1), n_events).reshape(np.shape(kappa))


def _ratio(num, den):
    """num / den elementwise with nan where den == 0, without warnings."""
    num = np.asarray(num, dtype=float)
    den = np.asarray(den, dtype=float)
    out = np.full(np.broadcast(num, den).shape, np.nan)
    np.divide(num, den, out=out, where=den != 0)
    return out if out.ndim else float(out)


# ---------------------------------------------------------------------- rankings
def hit_curve(ranking, labels):
    """Cumulative number of true positives among the top ``r`` events, r = 1..n.

    Parameters
    ----------
    ranking, labels : Ranking and array or DataFrame of 0/1, shape (M, K)
        A ranking of the ``n = M * K`` events, best first, and the true labels.

    Returns
    -------
    hits : ndarray of int, shape (n,)
        ``hits[r - 1]`` is the number of positives among the first ``r`` events.

    Examples
    --------
    >>> labels = np.array([[1, 0], [1, 1]])
    >>> hit_curve([0, 1, 2, 3], labels)
    array([1, 1, 2, 3])
    """
    return np.cumsum(_ranked_labels(ranking, labels), dtype=np.int64)


def area_under_hit_curve(ranking, labels, normalize=True):
    """Area under the hit curve: ``sum_r hits(r)``, optionally scaled to [0, 1].

    The raw area equals CATCH of the labels, ``sum_r (n - r + 1) * Y[event at r]``
    (see ``docs/concepts.md``). With ``normalize=True`` it is divided by the area of the
    ideal ranking, the one that puts all ``P`` positives first,
    ``P * n - P * (P - 1) / 2``, so a perfect ranking scores exactly 1.

    Parameters
    ----------
    ranking, labels : Ranking and array or DataFrame of 0/1, shape (M, K)
        As in :func:`hit_curve`.
    normalize : bool, default True
        Divide by the ideal area (``nan`` when there is no positive).

    Returns
    -------
    float
        The (normalised) area.

    Examples
    --------
    >>> labels = np.array([[1, 0], [0, 1]])
    >>> area_under_hit_curve([0, 3, 1, 2], labels)   # both positives first
    1.0
    >>> area_under_hit_curve([1, 0, 2, 3], labels, normalize=False)   # hits 0, 1, 1, 2
    4.0
    """
    y = _ranked_labels(ranking, labels)
    n = y.size
    ranks = np.flatnonzero(y) + 1  # 1-based ranks of the positives
    area = float(np.sum(n - ranks + 1))
    if not normalize:
        return area
    p = ranks.size
    return _ratio(area, p * n - p * (p - 1) / 2)


def precision_recall_at(ranking, labels, kappa):
    """Precision and recall of the top ``kappa * 100%`` of the events (Criterion I).

    The top ``kappa`` fraction of ``n`` events is the first
    ``r = floor(kappa * n + 0.5)`` events (rounded half up), at least one
    (none when there is no event: precision and recall are then ``nan``).

    Parameters
    ----------
    ranking, labels : Ranking and array or DataFrame of 0/1, shape (M, K)
        As in :func:`hit_curve`.
    kappa : float or array of float in (0, 1]
        Fraction(s) of the events labelled positive.

    Returns
    -------
    precision, recall : float or ndarray (the shape of ``kappa``)
        Recall is ``nan`` when ``labels`` has no positive.

    Examples
    --------
    >>> labels = np.array([[1, 0, 0, 0, 1], [1, 0, 0, 0, 0]])
    >>> order = [0, 1, 5, 4, 2, 3, 6, 7, 8, 9]
    >>> precision_recall_at(order, labels, [0.2, 0.5])   # top 2: Y = 1, 0; top 5: 1, 0, 1, 1, 0
    (array([0.5, 0.6]), array([0.33333333, 1.        ]))
    """
    y = _ranked_labels(ranking, labels)
    r = _rank_at(kappa, y.size)
    hits = np.concatenate([[0], np.cumsum(y, dtype=np.int64)])
    tp = hits[r]
    return _ratio(tp, r), _ratio(tp, hits[-1])


def pr_curve(ranking, labels):
    """Precision and recall of the top ``r`` events for every r = 1..n.

    Parameters
    ----------
    ranking, labels : Ranking and array or DataFrame of 0/1, shape (M, K)
        As in :func:`hit_curve`.

    Returns
    -------
    precision, recall : ndarray of float, shape (n,)
        Entry ``r - 1`` describes the top ``r`` events. Recall is ``nan`` when
        there is no positive.

    Examples
    --------
    >>> precision, recall = pr_curve([2, 0, 1, 3], np.array([[1, 0], [0, 1]]))
    >>> precision
    array([0.        , 0.5       , 0.33333333, 0.5       ])
    >>> recall
    array([0. , 0.5, 0.5, 1. ])
    """
    y = _ranked_labels(ranking, labels)
    hits = np.cumsum(y, dtype=np.int64)
    r = np.arange(1, y.size + 1)
    return _ratio(hits, r), _ratio(hits, np.full(y.size, hits[-1] if y.size else 0))


def average_precision(values, labels, hierarchy=None, *, classes=None, exclude_roots=True):
    """Micro-averaged area under the precision-recall curve, AU(PRC).

    Computed exactly as scikit-learn's
    ``average_precision_score(labels[:, cols], values[:, cols], average="micro")``
    (the Clus-HMC / C-HMCNN benchmark convention): all chosen events are pooled,
    sorted by value, and ``AP = sum_i (R_i - R_{i-1}) P_i`` over the *distinct*
    values as thresholds (tied events enter together), with ``R_0 = 0``.

    Parameters
    ----------
    values : array or DataFrame of float, shape (M, K)
        Scores or mLPRs; higher means more likely positive. Finite.
    labels : array or DataFrame of 0/1, shape (M, K)
        True labels. DataFrames are aligned by class name: to the hierarchy's
        classes when it is given, else to each other (an array beside a
        DataFrame is then refused).
    hierarchy : Hierarchy, optional
        Needed to drop the root classes and to name ``classes`` by class name.
    classes : sequence or str, optional
        The classes to evaluate: class names if ``hierarchy`` is given (a
        string is one name), else column indices. Default: all classes.
    exclude_roots : bool, default True
        Drop the hierarchy's root classes (the benchmark convention). Needs
        ``hierarchy``; pass ``exclude_roots=False`` to evaluate without one.

    Returns
    -------
    float
        The micro-averaged average precision of the chosen columns.

    Raises
    ------
    LabelError
        When the chosen columns hold no positive label (AP is undefined).

    Examples
    --------
    >>> from hmcpgm import Hierarchy
    >>> h = Hierarchy.from_edges([("root", "a"), ("root", "b")])
    >>> values = np.array([[0.9, 0.8, 0.1], [0.7, 0.3, 0.6]])
    >>> labels = np.array([[1, 1, 0], [1, 0, 1]])
    >>> average_precision(values, labels, h)   # pooled a, b: Y by value 1, 1, 0, 0
    1.0
    >>> average_precision(values, labels, exclude_roots=False)
    1.0
    """
    if hierarchy is not None:
        check_hierarchy(hierarchy)
    items = [(values, "values"), (labels, "labels")]
    s, y = aligned_matrices(items, hierarchy, keep_integers=("labels",))
    s = finite_array(s, "values")
    y = binary_matrix(y, "labels", matrix_classes(items, hierarchy))
    if s.shape != y.shape:
        raise InputError(f"values has shape {s.shape} but labels has shape {y.shape}; they must match")
    k = y.shape[1]
    if hierarchy is not None and hierarchy.n_classes != k:
        raise InputError(f"labels has {k} columns but the hierarchy has {hierarchy.n_classes} classes")
    cols = _columns(classes, k, hierarchy)
    if exclude_roots:
        if hierarchy is None:
            raise InputError(
                "exclude_roots=True needs the hierarchy to know the root classes; "
                "pass hierarchy=... or exclude_roots=False"
            )
        cols = without_roots(cols, hierarchy)
    return _binary_ap(y[:, cols].ravel(), s[:, cols].ravel())


def without_roots(cols, hierarchy):
    """The column indices ``cols`` but the hierarchy's roots; an InputError when none is left."""
    cols = cols[~np.isin(cols, hierarchy.root_indices)]
    if not cols.size:
        raise InputError("no class is left to evaluate once the root classes are dropped; "
                         "pass exclude_roots=False to evaluate the roots")
    return cols


def _columns(classes, n_classes, hierarchy):
    if classes is None:
        return np.arange(n_classes)
    if isinstance(classes, str):  # one class name, not a sequence of letters
        classes = [classes]
    if hierarchy is not None:
        try:
            return np.asarray(hierarchy.indices(list(classes)), dtype=np.intp)
        except Exception as exc:
            raise InputError(f"classes must name classes of the hierarchy: {exc}") from None
    cols = np.asarray(classes)
    if cols.ndim != 1 or (cols.size and cols.dtype.kind not in "iu"):
        raise InputError(f"classes must be a 1-D list of column indices when no hierarchy is given, got {cols!r}")
    if cols.size and (cols.min() < 0 or cols.max() >= n_classes):
        raise InputError(f"classes must be column indices in [0, {n_classes - 1}], got {cols.tolist()}")
    return cols.astype(np.intp)


def _binary_ap(y, s):
    """Average precision over distinct thresholds (scikit-learn's definition)."""
    n_pos = int(y.sum())
    if n_pos == 0:
        raise LabelError(
            "labels have no positive among the evaluated classes; average precision is undefined"
        )
    desc = np.argsort(s)[::-1]  # order within ties is irrelevant: tie groups enter together (no copy of -s)
    s, y = s[desc], y[desc]
    del desc
    last = np.r_[np.flatnonzero(s[1:] != s[:-1]), y.size - 1]  # last event of each tie group
    del s
    return ap_from_counts(np.cumsum(y, dtype=np.int64)[last], last + 1, n_pos)


def ap_from_counts(tps, events, n_pos):
    """``sum_i (R_i - R_{i-1}) P_i`` from, at each threshold from the highest down, the positives (``tps``) and
    the events (``events``) at or above it, and the number of positives ``n_pos``."""
    precision = tps / events
    recall = tps / n_pos
    return float(np.sum(np.diff(recall, prepend=0.0) * precision))


def bootstrap_average_precision(ranking, labels, *, n_resamples=200, seed=0):
    """Micro AU(PRC) of a ranking on bootstrap resamples of its objects (rows).

    Each resample draws ``M`` objects with replacement (all the events of an
    object move together: the objects, not the events, are the sample) and
    scores the same ranking on them without re-ranking: an object drawn ``w``
    times counts ``w`` times, exactly the AU(PRC) of the resampled rows with its
    copies tied (:func:`average_precision` of ``-ranks[idx]`` against
    ``labels[idx]``). The resamples are those of :func:`row_bootstrap_weights`
    with this ``seed``: two rankings of the same ``M`` objects scored with the
    same seed see the same resamples, so the difference of their AU(PRC) is
    paired and its spread is the standard error of the difference.

    Parameters
    ----------
    ranking, labels : Ranking and array or DataFrame of 0/1, shape (M, K)
        As in :func:`hit_curve`.
    n_resamples : int, default 200
        Number of resamples.
    seed : int, default 0
        Seeds the resamples.

    Returns
    -------
    ndarray of float, shape (n_resamples,)
        The AU(PRC) of each resample; nan for a resample without a positive.

    Examples
    --------
    >>> labels = np.array([[1, 0], [0, 1], [1, 1]])
    >>> aps = bootstrap_average_precision([0, 2, 4, 1, 3, 5], labels, n_resamples=500, seed=1)
    >>> aps.shape, bool(aps.min() >= 0.5 and aps.max() <= 1.0)
    ((500,), True)
    """
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)) or n_resamples < 1:
        raise InputError(f"n_resamples must be a positive int, got {n_resamples!r}")
    ranking, y = matrix_for(ranking, labels, "labels", flat=False)
    y = binary_matrix(y, "labels", ranking.classes)
    m, k = y.shape
    order = np.asarray(ranking.order, dtype=np.intp)
    weights = row_bootstrap_weights(m, int(n_resamples), seed)
    return weighted_average_precisions(y.reshape(-1)[order].astype(float), order // max(k, 1), weights)


def row_bootstrap_weights(n_rows, n_resamples, seed=0):
    """How many times each row is drawn in each bootstrap resample: float array (n_rows, n_resamples).

    Resample ``b`` draws ``n_rows`` rows with replacement,
    ``rng.integers(0, n_rows, n_rows)``, the ``b``-th such draw of
    ``rng = numpy.random.default_rng(seed)``.

    Parameters
    ----------
    n_rows : int
        Rows (objects) of the sample.
    n_resamples : int
        Number of resamples.
    seed : int, default 0
        Seeds the draws.

    Returns
    -------
    ndarray of float, shape (n_rows, n_resamples)
        Column ``b``: the number of times each row is drawn in resample ``b``
        (each column sums to ``n_rows``).

    Examples
    --------
    >>> w = row_bootstrap_weights(4, 3, seed=0)
    >>> w.shape, w.sum(axis=0).tolist()
    ((4, 3), [4.0, 4.0, 4.0])
    """
    try:
        rng = np.random.default_rng(seed)
    except (TypeError, ValueError):
        raise InputError(f"seed must be a non-negative int, got {seed!r}") from None
    weights = np.empty((n_rows, n_resamples))
    for b in range(n_resamples):
        weights[:, b] = np.bincount(rng.integers(0, n_rows, n_rows), minlength=n_rows)
    return weights


def weighted_average_precisions(t, row, weights):
    """AU(PRC) of 0/1 labels ``t`` in rank order under each column of row weights ``weights`` (M, B), in one pass.

    ``row[i]`` is the row of the ``i``-th event. Precision at a hit is (weighted
    hits so far) / (weighted events so far), the copies of one event entering
    together; the AU(PRC) is the weighted mean of the precisions at the hits
    (nan without a hit of positive weight). With all weights 1 it is the
    AU(PRC) of the ranking.

    Parameters
    ----------
    t : ndarray of float, shape (n,)
        The 0/1 labels of the events, best ranked first.
    row : ndarray of int, shape (n,)
        The row (object) of each event.
    weights : ndarray of float, shape (M, B)
        Column ``b``: a weight per row (e.g. :func:`row_bootstrap_weights`).

    Returns
    -------
    ndarray of float, shape (B,)
        The AU(PRC) under each column of weights.

    Examples
    --------
    >>> weighted_average_precisions(np.array([1.0, 0.0, 1.0]), np.array([0, 1, 2]), np.ones((3, 1)))
    array([0.83333333])
    """
    t = np.asarray(t, dtype=float)
    weights = np.asarray(weights, dtype=float)
    row = np.asarray(row)
    if t.ndim != 1 or row.shape != t.shape:
        raise InputError(f"t and row must be vectors of one length, got shapes {t.shape} and {row.shape}")
    if weights.ndim != 2:
        raise InputError(f"weights must be a matrix (rows, resamples), got shape {weights.shape}")
    if row.size and (not np.issubdtype(row.dtype, np.integer) or row.min() < 0 or row.max() >= len(weights)):
        raise InputError(f"row must hold row numbers from 0 to {len(weights) - 1} (weights has {len(weights)} rows)")
    return _weighted_average_precisions(t, row, weights)


@jit
def _weighted_average_precisions(t, row, weights):  # pragma: no cover - compiled
    """The compiled pass of :func:`weighted_average_precisions` (arguments checked there)."""
    n_boot = weights.shape[1]
    hits = np.zeros(n_boot)
    count = np.zeros(n_boot)
    total = np.zeros(n_boot)
    for i in range(t.size):
        r = row[i]
        if t[i] > 0:
            for b in range(n_boot):
                w = weights[r, b]
                hits[b] += w
                count[b] += w
                if w > 0:
                    total[b] += w * hits[b] / count[b]
        else:
            for b in range(n_boot):
                count[b] += weights[r, b]
    out = np.empty(n_boot)
    for b in range(n_boot):
        out[b] = total[b] / hits[b] if hits[b] > 0 else np.nan
    return out


# ---------------------------------------------------------------------- decisions
def _counts(decisions, labels):
    items = [(decisions, "decisions"), (labels, "labels")]
    d, y = aligned_matrices(items, keep_integers=("decisions", "labels"))
    d = binary_matrix(d, "decisions", matrix_classes(items)).astype(bool)
    y = binary_matrix(y, "labels", matrix_classes(items)).astype(bool)
    if d.shape != y.shape:
        raise InputError(f"decisions has shape {d.shape} but labels has shape {y.shape}; they must match")
    tp = int(np.count_nonzero(d & y))
    return tp, int(np.count_nonzero(d)) - tp, int(np.count_nonzero(y)) - tp


def f1_score(decisions, labels):
    """F1 of a 0/1 decision matrix: ``2 TP / (2 TP + FP + FN)``, pooled over all events.

    ``nan`` when there is neither a positive nor a discovery.

    Parameters
    ----------
    decisions : array or DataFrame of 0/1, shape (M, K)
        The events called positive.
    labels : array or DataFrame of 0/1, shape (M, K)
        The true labels (two DataFrames are aligned by class name).

    Returns
    -------
    float
        The F1 score.

    Examples
    --------
    >>> f1_score([[1, 1], [0, 0]], [[1, 0], [1, 0]])   # TP 1, FP 1, FN 1
    0.5
    """
    tp, fp, fn = _counts(decisions, labels)
    return _ratio(2 * tp, 2 * tp + fp + fn)


def fdp(decisions, labels):
    """False discovery proportion: ``FP / max(number of discoveries, 1)``.

    Zero when nothing is discovered.

    Parameters
    ----------
    decisions : array or DataFrame of 0/1, shape (M, K)
        The events called positive.
    labels : array or DataFrame of 0/1, shape (M, K)
        The true labels (two DataFrames are aligned by class name).

    Returns
    -------
    float
        The false discovery proportion.

    Examples
    --------
    >>> fdp([[1, 1], [1, 0]], [[1, 0], [1, 0]])   # 3 discoveries, 1 false
    0.3333333333333333
    >>> fdp([[0, 0]], [[1, 0]])
    0.0
    """
    tp, fp, _ = _counts(decisions, labels)
    return fp / max(tp + fp, 1)


def discovery_proportion(decisions, labels):
    """Fraction of the true positive events that are discovered: ``TP / (TP + FN)``.

    This is the recall of the decisions, the companion of :func:`fdp` in the
    paper's Criterion II; ``nan`` when ``labels`` has no positive. (The fraction
    of all events declared positive is the cutoff's ``kappa``.)

    Parameters
    ----------
    decisions : array or DataFrame of 0/1, shape (M, K)
        The events called positive.
    labels : array or DataFrame of 0/1, shape (M, K)
        The true labels (two DataFrames are aligned by class name).

    Returns
    -------
    float
        The discovery proportion.

    Examples
    --------
    >>> discovery_proportion([[1, 1], [0, 0]], [[1, 0], [1, 0]])   # 1 of 2 found
    0.5
    """
    tp, _, fn = _counts(decisions, labels)
    return _ratio(tp, tp + fn)
