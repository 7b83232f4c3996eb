"""Judging versions on cross-fitted mLPRs: the criterion, screening against indpt, the version choice."""

import warnings

import numpy as np

from ..likelihood import log_loss_by_class
from ._crossfit import cross_fitted_mlpr

VERSIONS = ("indpt", "nbh", "full")
CRITERIA = ("log_loss", "auprc")
SCREEN_GRID = (0.1, 0.3, 1.0)


def criterion_value(p, y, cols, criterion):
    if criterion == "log_loss":
        return float(log_loss_by_class(p[:, cols], y[:, cols]).mean())
    from ..metrics import average_precision

    if not y[:, cols].any():
        return np.nan
    return -average_precision(p[:, cols], y[:, cols], exclude_roots=False)


def indpt_logit_parts(crossfit):
    """logit prevalence (of each row's fold models) and log Bayes factor, for fast tempered indpt."""
    p = np.clip(crossfit.cross_validation["prevalence"][crossfit.folds], 1e-12, 1 - 1e-12)
    with np.errstate(divide="ignore"):
        lbf = np.log(crossfit.likelihoods[..., 1]) - np.log(crossfit.likelihoods[..., 0])
    return np.log(p) - np.log1p(-p), lbf


def screen_version(crossfit, hierarchy, version, engine, rows, indpt, y, cols):
    """Best exponent of ``version`` on a few rows, and its paired z against indpt there (positive: worse)."""
    best = None
    for a in SCREEN_GRID:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            p = cross_fitted_mlpr(crossfit, hierarchy, version, a, rows=rows, engine=engine)
        loss = _row_losses(p, y[rows], cols)
        if best is None or loss.mean() < best[1].mean():
            best = (a, loss)
    where = np.searchsorted(indpt["rows"], rows)
    base = _row_losses(indpt["mlpr"][where], y[rows], cols)
    d = best[1] - base
    se = d.std(ddof=1) / np.sqrt(len(d)) if len(d) > 1 else np.inf
    return np.full(hierarchy.n_classes, best[0]), float(d.mean() / se) if se > 0 else 0.0


def _row_losses(p, y, cols):
    """Mean log loss over the evaluated classes, per row."""
    q = np.clip(p[:, cols], 1e-6, 1 - 1e-6)
    t = y[:, cols]
    return -(t * np.log(q) + (1 - t) * np.log1p(-q)).mean(axis=1)


def choose_version(predictions, y, cols, criterion, versions, margin):
    """The simplest version whose criterion is not clearly worse than the best one's.

    With the log loss, "clearly worse" means a paired z statistic (per-row loss
    differences on the rows both versions predicted, mean over standard error)
    above ``margin``; versions are ordered by complexity indpt < nbh < full.
    With AU(PRC) the best value wins.
    """
    order = [v for v in VERSIONS if v in versions]
    values = {}
    for v in order:
        rows, p = predictions[v]["rows"], predictions[v]["mlpr"]
        values[v] = criterion_value(p, y[rows], cols, criterion)
    best = min(order, key=lambda v: values[v])
    if criterion != "log_loss" or margin is None:
        return best, {}
    z = {}
    best_rows = predictions[best]["rows"]
    best_loss = dict(zip(best_rows.tolist(), _row_losses(predictions[best]["mlpr"], y[best_rows], cols)))
    for v in order:
        rows = predictions[v]["rows"]
        common = np.isin(rows, best_rows)
        loss_v = _row_losses(predictions[v]["mlpr"][common], y[rows[common]], cols)
        d = loss_v - np.array([best_loss[r] for r in rows[common].tolist()])
        se = d.std(ddof=1) / np.sqrt(len(d)) if len(d) > 1 else np.inf
        z[v] = float(d.mean() / se) if se > 0 else 0.0
    return next(v for v in order if z[v] <= margin), z
