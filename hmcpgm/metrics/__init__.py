"""Evaluation: rankings and decisions, CAFA's protein-centric metrics, term-centric and hierarchical ones.

- rankings and decision matrices (:mod:`hmcpgm.metrics._ranked`): AU(PRC) (and its bootstrap over objects), hit curves,
  precision and recall at kappa, F1, FDP;
- the CAFA evaluator's protein-centric metrics, on (values, labels, hierarchy):
  :func:`fmax`, :func:`weighted_fmax`, :func:`smin`, :func:`information_accretion`,
  :func:`cafa_curve`, :func:`cafa_metrics` (all three at once), and CAFA's propagation by max, :func:`propagate_max`
  (:func:`propagated_auprc`: the micro AU(PRC) of propagated values, in little memory);
- term-centric metrics with HEMDAG's conventions: :func:`auprc_per_class`,
  :func:`auroc_per_class`, :func:`precision_at_recall`;
- HiClass's hierarchical precision, recall and F: :func:`hierarchical_f1`.
"""

from ._cafa import (
    ThresholdScore,
    cafa_curve,
    cafa_metrics,
    fmax,
    information_accretion,
    propagated_auprc,
    smin,
    weighted_fmax,
)
from ._common import propagate_max
from ._hierarchical import hierarchical_f1
from ._ranked import (
    area_under_hit_curve,
    average_precision,
    bootstrap_average_precision,
    discovery_proportion,
    f1_score,
    fdp,
    hit_curve,
    pr_curve,
    precision_recall_at,
    row_bootstrap_weights,
    weighted_average_precisions,
)
from ._term_centric import auprc_per_class, auroc_per_class, precision_at_recall

__all__ = [
    "ThresholdScore",
    "area_under_hit_curve",
    "auprc_per_class",
    "auroc_per_class",
    "average_precision",
    "bootstrap_average_precision",
    "cafa_curve",
    "cafa_metrics",
    "discovery_proportion",
    "f1_score",
    "fdp",
    "fmax",
    "hierarchical_f1",
    "hit_curve",
    "information_accretion",
    "pr_curve",
    "precision_at_recall",
    "precision_recall_at",
    "propagate_max",
    "propagated_auprc",
    "row_bootstrap_weights",
    "smin",
    "weighted_average_precisions",
    "weighted_fmax",
]
