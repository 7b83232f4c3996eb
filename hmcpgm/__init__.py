"""hmcpgm: the second stage of hierarchical multi-label classification.

Per-class classifier scores plus a class hierarchy (tree, forest or DAG) become
mLPRs (posterior probabilities from a Bayesian network), a hierarchy-respecting
ranking (HierRank) and decisions with a chosen false discovery rate.

Every public name is imported when first used (numba, networkx, pgmpy and
scikit-learn with it), so ``import hmcpgm`` and the ``hmcpgm`` command start in
milliseconds.
"""

from importlib import import_module

from . import exceptions
from ._cachedir import set_numba_cache_dir
from .exceptions import *  # noqa: F403  (every error and warning class, listed in exceptions.__all__)

set_numba_cache_dir()  # before any module of the package imports numba (numba reads it once)

__version__ = "0.2.0.dev0"

# public name -> module that defines it, loaded on first access (PEP 562)
_LAZY = {
    "Hierarchy": "hierarchy",
    "LabelNetwork": "network",
    "augmented_network": "network",
    "mlpr_from_likelihoods": "inference",
    "loopy_belief_propagation": "inference",
    "inference_plan": "inference",
    "compare_engines": "inference",
    "MLPR": "estimator",
    "HierarchicalCorrection": "corrections",
    "save_model": "persist",
    "load_model": "persist",
    "fit_score_model": "likelihood",
    "Ranking": "ranking",
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
    "hit_curve": "metrics",
    "area_under_hit_curve": "metrics",
    "precision_recall_at": "metrics",
    "pr_curve": "metrics",
    "average_precision": "metrics",
    "f1_score": "metrics",
    "fdp": "metrics",
    "discovery_proportion": "metrics",
}

__all__ = [*exceptions.__all__, *_LAZY]


def __getattr__(name):
    if name in _LAZY:
        value = getattr(import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'hmcpgm' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
