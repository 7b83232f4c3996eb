"""Term-centric metrics with HEMDAG's conventions: AUPRC, AUROC and precision at fixed recall, per class.

HEMDAG (the R package of Valentini's group for hierarchical ensembles on DAGs,
``perf.meas.R``) evaluates each class (term) on its own column and states what a class
without both positive and negative labels gets:

- AUROC: 0.5 for a class whose labels are all 0 (or all 1); the average is the mean
  over *all* classes, those included;
- AUPRC: 0 for such a class; the average is the mean over the classes of *nonzero*
  AUPRC (0 when there is none);
- precision at recall levels (PXR): 0 at every level for such a class; the average per
  level is the mean over all classes.

HEMDAG computes the curves with the ``precrec`` package, tied values entering together.
Here the area under the precision-recall curve is scikit-learn's average precision
(``sum (R_i - R_{i-1}) P_i`` over distinct thresholds), the area under the ROC curve the
Mann-Whitney statistic (ties count one half, as ``roc_auc_score``), and the precision at
recall level ``r`` the precision at the first distinct threshold, from the highest, whose
recall reaches ``r`` (HEMDAG: "the higher precision value at the given recall level").
"""

from typing import NamedTuple

import numpy as np

from .._arrays import binary_matrix, finite_array
from .._validation import aligned_matrices, check_hierarchy, is_frame, matrix_classes
from ..exceptions import InputError

__all__ = ["PerClassScore", "auprc_per_class", "auroc_per_class", "precision_at_recall"]


class PerClassScore(NamedTuple):
    """A term-centric metric: its average over classes and its value for each class.

    Attributes
    ----------
    average : float or ndarray
        The average over classes (HEMDAG's convention for the metric).
    per_class : ndarray or Series/DataFrame
        One value (or one row) per class; indexed by class name for DataFrame input.
    """

    average: object
    per_class: object


def _columns(values, labels, hierarchy):
    """Float values and int8 labels, aligned by class name when DataFrames (or the hierarchy) allow."""
    if hierarchy is not None:
        check_hierarchy(hierarchy)
    items = [(values, "values"), (labels, "labels")]
    s, y = aligned_matrices(items, hierarchy, keep_integers=("labels",))
    s = finite_array(s, "values")
    y = binary_matrix(y, "labels", matrix_classes(items, hierarchy))
    if s.shape != y.shape:
        raise InputError(f"values has shape {s.shape} but labels has shape {y.shape}; they must match")
    if hierarchy is not None:
        names = list(hierarchy.classes)
    elif is_frame(values):
        names = list(values.columns)
    elif is_frame(labels):
        names = list(labels.columns)
    else:
        names = None
    return s, y, names


def _tie_groups(s, y):
    """Cumulative TP and FP at the end of each group of tied values, highest values first."""
    order = np.argsort(-s, kind="stable")
    s, y = s[order], y[order]
    last = np.r_[np.flatnonzero(np.diff(s)), s.size - 1]
    tp = np.cumsum(y, dtype=np.int64)[last]
    fp = (last + 1) - tp
    return tp, fp


def _degenerate(y):
    return y.all() or not y.any()


def _ap(s, y):
    tp, fp = _tie_groups(s, y)
    precision = tp / (tp + fp)
    recall = tp / tp[-1]
    return float(np.sum(np.diff(recall, prepend=0.0) * precision))


def _auroc(s, y):
    tp, fp = _tie_groups(s, y)
    tpr = np.r_[0.0, tp / tp[-1]]
    fpr = np.r_[0.0, fp / fp[-1]]
    return float(np.sum(np.diff(fpr) * (tpr[1:] + tpr[:-1])) / 2)


def _named(per_class, names, like_frame, columns=None):
    if not like_frame:
        return per_class
    import pandas as pd

    if per_class.ndim == 1:
        return pd.Series(per_class, index=names)
    return pd.DataFrame(per_class, index=names, columns=columns)


def auprc_per_class(values, labels, hierarchy=None):
    """Area under the precision-recall curve of each class, and HEMDAG's average.

    Parameters
    ----------
    values : array or DataFrame of float, shape (M, K)
        Scores, higher = more likely positive.
    labels : array or DataFrame of 0/1, shape (M, K)
        True labels (not closed upward here). DataFrames are aligned by class name
        (to the hierarchy's classes when it is given).
    hierarchy : Hierarchy, optional
        Fixes the column order by class name.

    Returns
    -------
    PerClassScore
        ``per_class``: the average precision of each column, 0 for a column whose
        labels are all equal; ``average``: the mean of the nonzero entries (0 if none).

    Examples
    --------
    >>> r = auprc_per_class([[0.9, 0.2], [0.4, 0.3], [0.1, 0.8]], [[1, 0], [0, 0], [1, 0]])
    >>> r.per_class, r.average   # column 1 has no positive: 0, left out of the average
    (array([0.83333333, 0.        ]), 0.8333333333333333)
    """
    s, y, names = _columns(values, labels, hierarchy)
    per = np.array([0.0 if _degenerate(y[:, k]) else _ap(s[:, k], y[:, k]) for k in range(y.shape[1])])
    nonzero = per[per != 0]
    average = float(nonzero.mean()) if nonzero.size else 0.0
    return PerClassScore(average, _named(per, names, is_frame(values) or is_frame(labels)))


def auroc_per_class(values, labels, hierarchy=None):
    """Area under the ROC curve of each class, and HEMDAG's average.

    Parameters
    ----------
    values : array or DataFrame of float, shape (M, K)
        Scores, higher = more likely positive.
    labels : array or DataFrame of 0/1, shape (M, K)
        True labels. DataFrames are aligned by class name.
    hierarchy : Hierarchy, optional
        Fixes the column order by class name.

    Returns
    -------
    PerClassScore
        ``per_class``: the AUROC of each column (ties count one half), 0.5 for a column
        whose labels are all equal; ``average``: the mean over all columns.

    Examples
    --------
    >>> r = auroc_per_class([[0.9, 0.2], [0.4, 0.3], [0.1, 0.8]], [[1, 0], [0, 0], [1, 0]])
    >>> r.per_class, r.average
    (array([0.5, 0.5]), 0.5)
    """
    s, y, names = _columns(values, labels, hierarchy)
    per = np.array([0.5 if _degenerate(y[:, k]) else _auroc(s[:, k], y[:, k]) for k in range(y.shape[1])])
    return PerClassScore(float(per.mean()) if per.size else float("nan"),
                         _named(per, names, is_frame(values) or is_frame(labels)))


def precision_at_recall(values, labels, hierarchy=None, recall_levels=None):
    """Precision at given recall levels (PXR) for each class, and the average over classes.

    Parameters
    ----------
    values : array or DataFrame of float, shape (M, K)
        Scores, higher = more likely positive.
    labels : array or DataFrame of 0/1, shape (M, K)
        True labels. DataFrames are aligned by class name.
    hierarchy : Hierarchy, optional
        Fixes the column order by class name.
    recall_levels : sequence of float in (0, 1], optional
        Default ``0.1, 0.2, ..., 1.0`` (HEMDAG's default levels, as exact decimals).

    Returns
    -------
    PerClassScore
        ``per_class``: shape (K, L), the precision at the first threshold (tied values
        together, highest first) whose recall reaches each level, 0 at every level for
        a column whose labels are all equal; ``average``: shape (L,), the mean over classes.

    Examples
    --------
    >>> r = precision_at_recall([[0.9], [0.4], [0.1]], [[1], [0], [1]], recall_levels=[0.5, 1.0])
    >>> r.per_class   # recall 1/2 at the top value; all positives found at the third
    array([[1.        , 0.66666667]])
    """
    s, y, names = _columns(values, labels, hierarchy)
    levels = np.arange(1, 11) / 10 if recall_levels is None else finite_array(recall_levels, "recall_levels")
    levels = np.atleast_1d(levels).astype(float)
    if np.any((levels <= 0) | (levels > 1)):
        raise InputError(f"recall_levels must lie in (0, 1], got {levels.tolist()}")
    per = np.zeros((y.shape[1], levels.size))
    for k in range(y.shape[1]):
        if _degenerate(y[:, k]):
            continue
        tp, fp = _tie_groups(s[:, k], y[:, k])
        recall = tp / tp[-1]
        first = np.searchsorted(recall, levels, side="left")  # recall is nondecreasing
        per[k] = tp[first] / (tp[first] + fp[first])
    average = per.mean(axis=0) if per.shape[0] else np.full(levels.size, np.nan)
    return PerClassScore(average, _named(per, names, is_frame(values) or is_frame(labels), columns=levels.tolist()))
