"""Applications built on the library: the paper's synthetic experiment and the
Clus-HMC real-data benchmark, sharing one evaluation loop (:func:`evaluate_methods`)."""

from .clus import FIRST_STAGES, PUBLISHED_AUPRC, first_stage_scores, format_benchmark, run_benchmark, split_validation
from .evaluation import evaluate_methods, fdr_curve, paper_mlprs
from .leaderboard import LEADERBOARD, correction_values
from .paper import ALPHAS, KAPPAS, ExperimentResult, experiment_tables, format_tables, synthetic_experiment

__all__ = [
    "ALPHAS",
    "KAPPAS",
    "LEADERBOARD",
    "FIRST_STAGES",
    "PUBLISHED_AUPRC",
    "ExperimentResult",
    "correction_values",
    "evaluate_methods",
    "experiment_tables",
    "fdr_curve",
    "first_stage_scores",
    "format_benchmark",
    "format_tables",
    "paper_mlprs",
    "run_benchmark",
    "split_validation",
    "synthetic_experiment",
]
