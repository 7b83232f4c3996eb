"""Hierarchical precision, recall and F over ancestor-closed label sets (HiClass's definitions).

For object ``i`` let ``alpha_i`` be its predicted classes with all their ancestors and
``beta_i`` its true classes with all their ancestors (Kiritchenko et al.; HiClass,
``hiclass.metrics``):

- micro: ``hP = sum_i |alpha_i & beta_i| / sum_i |alpha_i|``,
  ``hR = sum_i |alpha_i & beta_i| / sum_i |beta_i|``, ``hF = 2 hP hR / (hP + hR)``;
- macro: ``hP_i``, ``hR_i`` and ``hF_i = 2 hP_i hR_i / (hP_i + hR_i)`` per object,
  each averaged over the objects.

HiClass raises on a zero denominator; here a micro ratio with a zero denominator is
``nan``, and a per-object ratio with a zero denominator (nothing predicted, nothing
true, or ``hP_i = hR_i = 0``) counts 0 in the macro averages.
"""

from typing import NamedTuple

import numpy as np

from .._arrays import binary_matrix
from ..exceptions import InputError
from ._common import ratio, scored_labels

__all__ = ["HierarchicalScore", "hierarchical_f1"]


class HierarchicalScore(NamedTuple):
    """Hierarchical precision, recall and F.

    Attributes
    ----------
    precision, recall, f1 : float
        hP, hR and hF.
    """

    precision: float
    recall: float
    f1: float


def hierarchical_f1(decisions, labels, hierarchy, *, average="micro", exclude_roots=False):
    """Hierarchical precision, recall and F1 of a 0/1 decision matrix (HiClass's definitions).

    Parameters
    ----------
    decisions : array or DataFrame of 0/1, shape (M, K)
        The predicted classes; closed upward here (a predicted class brings its ancestors).
    labels : array or DataFrame of 0/1, shape (M, K)
        The true classes; closed upward here. DataFrames are aligned by class name.
    hierarchy : Hierarchy
        The classes.
    average : {"micro", "macro"}, default "micro"
        Pool the counts over objects, or average the per-object scores.
    exclude_roots : bool, default False
        Leave the root classes out of the sets (they are true of almost every object).

    Returns
    -------
    HierarchicalScore
        ``(precision, recall, f1)``.

    Examples
    --------
    >>> from hmcpgm import Hierarchy
    >>> h = Hierarchy.from_edges([("r", "a"), ("a", "b"), ("r", "c")])
    >>> hierarchical_f1([[0, 0, 1, 0]], [[0, 0, 0, 1]], h)   # {r, a, b} against {r, c}
    HierarchicalScore(precision=0.3333333333333333, recall=0.5, f1=0.4)
    """
    if average not in ("micro", "macro"):
        raise InputError(f"average must be 'micro' or 'macro', got {average!r}")
    d, y = scored_labels(decisions, labels, hierarchy, name="decisions")
    d = hierarchy.close_labels(binary_matrix(d, "decisions", hierarchy)).astype(bool)
    y = y.astype(bool)
    if exclude_roots:
        keep = ~np.isin(np.arange(hierarchy.n_classes), hierarchy.root_indices)
        d, y = d[:, keep], y[:, keep]
    both = (d & y).sum(axis=1)
    n_pred, n_true = d.sum(axis=1), y.sum(axis=1)
    if average == "micro":
        p, r = ratio(both.sum(), n_pred.sum()), ratio(both.sum(), n_true.sum())
        return HierarchicalScore(p, r, ratio(2 * p * r, p + r, empty=0.0) if not np.isnan(p + r) else float("nan"))
    p, r = ratio(both, n_pred, empty=0.0), ratio(both, n_true, empty=0.0)
    f = ratio(2 * p * r, p + r, empty=0.0)
    return HierarchicalScore(float(np.mean(p)), float(np.mean(r)), float(np.mean(f)))
