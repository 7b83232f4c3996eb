"""hmcpgm: the second stage of hierarchical multi-label classification.

Per-class classifier scores plus a class hierarchy (tree, forest or DAG) become
mLPRs (posterior probabilities from a Bayesian network), a hierarchy-respecting
ranking (HierRank) and decisions with a chosen false discovery rate.

Heavy pieces (pgmpy, scikit-learn) are imported only when first used, so
``import hmcpgm`` stays quick.
"""

from importlib import import_module

from .exceptions import (
    ApproximationWarning,
    ConvergenceWarning,
    HierarchyError,
    HmcpgmError,
    InferenceError,
    InputError,
    LabelError,
)
from .hierarchy import Hierarchy

__version__ = "0.1.0"

# public name -> module that defines it, loaded on first access (PEP 562)
_LAZY = {
    "mlpr_from_likelihoods": "inference",
    "loopy_belief_propagation": "inference",
    "inference_plan": "inference",
    "to_pgmpy": "network",
    "augmented_network": "network",
    "prior_marginals": "network",
    "MLPR": "estimator",
    "save_model": "persist",
    "load_model": "persist",
    "estimate_theta": "likelihood",
    "fit_score_model": "likelihood",
    "catch": "ranking",
    "naive_sort": "ranking",
    "hier_rank": "ranking",
    "hier_rank_bound": "ranking",
    "count_violations": "ranking",
    "make_paper_synthetic": "datasets",
    "load_hmc_arff": "datasets",
    "load_hmc_split": "datasets",
    "out_of_fold_scores": "first_stage",
    "fit_first_stage": "first_stage",
    "predict_scores": "first_stage",
    "Cutoff": "decision",
    "choose_cutoff": "decision",
    "bayes_cutoff": "decision",
    "estimated_fdr": "decision",
    "expected_f1": "decision",
    "decide": "decision",
    "decide_by_threshold": "decision",
    "decisions_from_cutoff": "decision",
    "hit_curve": "metrics",
    "area_under_hit_curve": "metrics",
    "precision_recall_at": "metrics",
    "pr_curve": "metrics",
    "average_precision": "metrics",
    "f1_score": "metrics",
    "fdp": "metrics",
    "discovery_proportion": "metrics",
}

__all__ = [
    "Hierarchy",
    "HmcpgmError",
    "HierarchyError",
    "LabelError",
    "InputError",
    "InferenceError",
    "ConvergenceWarning",
    "ApproximationWarning",
    *_LAZY,
]


def __getattr__(name):
    if name in _LAZY:
        value = getattr(import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'hmcpgm' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
