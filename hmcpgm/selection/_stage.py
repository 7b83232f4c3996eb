"""The fitted second stage chosen by cross-fitting: mLPRs and recalibrated mLPRs of new rows."""

from dataclasses import dataclass

import numpy as np

from ..calibration import RecalibrationMap
from ..network import LabelNetwork
from ..tempering import own_evidence, temper, tempered_lpr


@dataclass(frozen=True, eq=False)
class SecondStage:
    """A second stage chosen by :func:`fit_second_stage_auto`.

    Attributes
    ----------
    hierarchy : Hierarchy
    version : str
        The chosen version.
    a : ndarray of shape (K,)
        Tempering exponent per class.
    score_model : hmcpgm.likelihood.ScoreModel
        Fitted on all training rows (per-class choice).
    theta : ndarray of shape (K,)
    recalibration : RecalibrationMap or None
        The shared increasing map for honest Bayesian FDR estimates.
    engine : str
        Engine of the chosen version.
    cv_table : pandas.DataFrame
        One row per (version, grouping) tried: exponents, cross-fitted log loss
        and AU(PRC), rows used, seconds.
    seconds : dict
        Time per step.
    own : ndarray of shape (K,) or None
        nbh and full: the exponent of each class's own evidence (the other
        classes' evidence has ``a``; :func:`hmcpgm.tempering.own_evidence`);
        None: ``a`` for all evidence.
    consistency : {"hierrank", "max"}
        ``"max"``: the mLPRs are lifted by the max constraint before ranking.
    """

    hierarchy: object
    version: str
    a: np.ndarray
    score_model: object
    theta: np.ndarray
    recalibration: RecalibrationMap | None
    engine: str
    cv_table: object
    seconds: dict
    own: np.ndarray | None = None
    consistency: str = "hierrank"

    def predict_proba(self, scores, **options):
        """mLPRs of new rows under the chosen version and tempering, shape (M, K).

        Parameters
        ----------
        scores : array-like or DataFrame of shape (M, K)
            First-stage scores of the new rows.
        **options
            Engine options of :func:`hmcpgm.mlpr_from_likelihoods` (not used by indpt).

        Returns
        -------
        ndarray of shape (M, K)
            The mLPRs.
        """
        from ..inference import mlpr_from_likelihoods
        from ._choice import consistent_values

        raw = self.score_model.likelihoods(scores)
        if self.version == "indpt":
            p = tempered_lpr(raw, self.score_model.prevalence, self.a)
        else:
            p = mlpr_from_likelihoods(LabelNetwork(self.hierarchy, self.theta), temper(raw, self.a),
                                      version=self.version, engine=self.engine, **options)
            if self.own is not None:
                p = own_evidence(p, raw, self.a, self.own)
        return consistent_values(p, self.hierarchy, self.consistency)

    def predict_calibrated(self, scores=None, *, mlpr=None):
        """Recalibrated mLPRs ``g(mLPR)`` (for the Bayesian FDR); pass ``mlpr`` to skip inference.

        Parameters
        ----------
        scores : array-like or DataFrame of shape (M, K), optional
            First-stage scores of the new rows (not read when ``mlpr`` is given).
        mlpr : array-like of shape (M, K), optional
            The mLPRs, already computed by :meth:`predict_proba`.

        Returns
        -------
        ndarray of shape (M, K)
            ``g(mLPR)``, or the mLPRs when there is no recalibration map.
        """
        p = self.predict_proba(scores) if mlpr is None else np.asarray(mlpr, dtype=float)
        return p if self.recalibration is None else self.recalibration(p)
