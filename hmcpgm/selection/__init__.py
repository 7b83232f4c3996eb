"""Choosing the second stage from the training rows: score models, evidence strength, version.

Everything here is decided by cross-fitting on the training rows, never on the
rows it will be judged on:

1. :func:`cross_fit` splits the training rows into folds; for each fold the
   per-class score models (every candidate of
   :data:`hmcpgm.likelihood.AUTO_CANDIDATES`) and ``theta`` are fitted on the
   other folds and give out-of-fold local precision rates and likelihoods of
   the held fold. Each class keeps the candidate with the smallest
   out-of-fold log loss.
2. :func:`cross_fitted_mlpr` runs a version (indpt, nbh, full) with tempered
   evidence (:func:`hmcpgm.tempering.temper`) fold by fold on those
   out-of-fold likelihoods: mLPRs of training rows from a second stage that
   never saw them. indpt is the class's own (tempered) LPR,
   :func:`hmcpgm.tempering.tempered_lpr`, as :class:`hmcpgm.MLPR` computes it;
   nbh and full run the network.
3. :func:`fit_second_stage_auto` fits the tempering exponent(s) of each
   version by minimising the cross-fitted log loss (or maximising its AU(PRC)),
   picks the version with the best cross-fitted criterion, the weight of its
   pool with each class's own isotonic posterior (:func:`choose_pool_weight`,
   on the isotonic model's out-of-fold LPRs, :func:`crossfitted_isotonic`), the
   weight of the neighbour stack (:func:`choose_stack_weight`, on its out-of-fold
   posteriors, :func:`hmcpgm.likelihood.crossfitted_stack`), the consistency step,
   fits the recalibration map on the cross-fitted values of the chosen configuration
   (:func:`hmcpgm.calibration.fit_recalibration`), and refits the score models
   and ``theta`` on all training rows.

The result is a :class:`hmcpgm.second_stage.SecondStage` (re-exported here), the
one object that runs the step from scores to mLPRs: it predicts mLPRs of new
rows (:meth:`SecondStage.predict_proba`) and their recalibrated values for the
Bayesian FDR (:meth:`SecondStage.predict_calibrated`); cross-fitting runs one per
fold on the out-of-fold evidence (:meth:`SecondStage.mlpr`).
"""

from ..second_stage import SecondStage
from ._auto import CONSISTENCY_CANDIDATES, DAG_CELLS, dag_rows, fit_second_stage_auto
from ._choice import CONSISTENCY, CRITERIA, VERSIONS, consistent_values, ranked_ap
from ._crossfit import CrossFit, cross_fit, cross_fitted_mlpr, resolve_engine
from ._pool import POOL_WEIGHTS, STACK_WEIGHTS, choose_pool_weight, choose_stack_weight, crossfitted_isotonic

__all__ = [
    "CONSISTENCY",
    "CONSISTENCY_CANDIDATES",
    "CRITERIA",
    "CrossFit",
    "DAG_CELLS",
    "POOL_WEIGHTS",
    "STACK_WEIGHTS",
    "SecondStage",
    "VERSIONS",
    "cross_fit",
    "cross_fitted_mlpr",
    "choose_pool_weight",
    "choose_stack_weight",
    "consistent_values",
    "crossfitted_isotonic",
    "dag_rows",
    "fit_second_stage_auto",
    "ranked_ap",
    "resolve_engine",
]
