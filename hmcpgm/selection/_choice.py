"""Judging versions on cross-fitted mLPRs: the criterion, screening against indpt, the version choice."""

import warnings

import numpy as np

from ..likelihood import log_loss_by_class
from ..options import VERSIONS
from ..second_stage import CONSISTENCY, consistent_values  # noqa: F401 (the selection package re-exports them)
from ._crossfit import cross_fitted_mlpr

CRITERIA = ("log_loss", "auprc")
SCREEN_GRID = (0.1, 0.3, 1.0)


def ranking_positions(p, hierarchy, cols):
    """Rank (0 = first) of every event of the evaluated columns in the HierRank ranking of ``p``."""
    from ..ranking import hier_rank

    keep = [hierarchy.classes[c] for c in cols]
    return hier_rank(p, hierarchy).restrict(keep).ranks


def ranked_ap(ranks, y, weights=None):
    """Micro AU(PRC) of a ranking given by the events' ranks, optionally with row weights.

    With distinct ranks this is scikit-learn's average precision of the values
    ``-ranks``; integer row weights count a row that many times (a bootstrap
    resample), without re-ranking.

    Parameters
    ----------
    ranks : ndarray of int, shape (M, K)
        Rank of each event (0 first), all distinct.
    y : ndarray of 0/1, shape (M, K)
        Labels.
    weights : ndarray of float, shape (M,), optional
        Row weights (default 1).

    Returns
    -------
    float
        The AU(PRC); nan without a positive of positive weight.

    Examples
    --------
    >>> ranked_ap(np.array([[0, 2], [1, 3]]), np.array([[1, 0], [0, 1]]))   # hits at ranks 1 and 4
    0.75
    """
    order = np.argsort(ranks, axis=None, kind="stable")
    return _sorted_ap(y.ravel()[order].astype(float), order // y.shape[1], weights)


def _sorted_ap(t, row, weights=None):
    """AU(PRC) of labels ``t`` already in rank order (``row``: each event's row, for the weights)."""
    w = np.ones_like(t) if weights is None else weights[row]
    hits = np.cumsum(w * t)
    total = hits[-1] if hits.size else 0.0
    if total <= 0:
        return np.nan
    count = np.cumsum(w)
    precision = np.divide(hits, count, out=np.zeros_like(hits), where=count > 0)
    return float(np.sum(w * t * precision) / total)


def criterion_value(p, y, cols, criterion, hierarchy=None):
    """The criterion to minimise: mean log loss, or minus the AU(PRC) of the HierRank ranking of ``p``."""
    if criterion == "log_loss":
        return float(log_loss_by_class(p[:, cols], y[:, cols]).mean())
    if not y[:, cols].any():
        return np.nan
    if hierarchy is None:
        from ..metrics import average_precision

        return -average_precision(p[:, cols], y[:, cols], exclude_roots=False)
    return -ranked_ap(ranking_positions(p, hierarchy, cols), y[:, cols])


def paired_auprc_z(p_simple, p_other, y, hierarchy, cols, *, n_boot=40, seed=0):
    """How much better ``p_other``'s ranking is than ``p_simple``'s, in bootstrap standard errors.

    Both rankings are HierRank rankings of the same rows; rows are resampled
    (the same resample for both, so the difference is paired) and the AU(PRC)
    difference ``other - simple`` divided by its bootstrap standard deviation.
    """
    yy = y[:, cols]
    k = yy.shape[1]
    sorted_pairs = []
    for p in (p_simple, p_other):
        order = np.argsort(ranking_positions(p, hierarchy, cols), axis=None, kind="stable")
        sorted_pairs.append((yy.ravel()[order].astype(float), order // k))
    (t1, row1), (t2, row2) = sorted_pairs
    diff = _sorted_ap(t2, row2) - _sorted_ap(t1, row1)
    rng = np.random.default_rng(seed)
    m = len(yy)
    boots = []
    for _ in range(n_boot):
        w = np.bincount(rng.integers(0, m, m), minlength=m).astype(float)
        boots.append(_sorted_ap(t2, row2, w) - _sorted_ap(t1, row1, w))
    se = float(np.nanstd(boots, ddof=1))
    return float(diff / se) if se > 0 else (np.inf if diff > 0 else 0.0), float(diff)


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


def choose_version(predictions, y, cols, criterion, versions, margin, hierarchy=None):
    """The simplest version whose criterion is not clearly worse than the best one's.

    With the log loss, "clearly worse" means a paired z statistic (per-row loss
    differences on the rows both versions predicted, mean over standard error)
    above ``margin``; versions are ordered by complexity indpt < nbh < full.
    With AU(PRC) (of the HierRank rankings), a more complex version replaces a
    simpler one only when its AU(PRC) on the rows both predicted is higher by
    more than ``margin`` paired bootstrap standard errors.
    """
    order = [v for v in VERSIONS if v in versions]
    values = {}
    for v in order:
        rows, p = predictions[v]["rows"], predictions[v]["mlpr"]
        values[v] = criterion_value(p, y[rows], cols, criterion, hierarchy)
    best = min(order, key=lambda v: values[v])
    if margin is None:
        return best, {}
    if criterion == "auprc":
        z, chosen = {order[0]: 0.0}, order[0]
        for v in order[1:]:
            rows_c, rows_v = predictions[chosen]["rows"], predictions[v]["rows"]
            common = np.intersect1d(rows_c, rows_v)
            pc = predictions[chosen]["mlpr"][np.searchsorted(rows_c, common)]
            pv = predictions[v]["mlpr"][np.searchsorted(rows_v, common)]
            z[v], _ = paired_auprc_z(pc, pv, y[common], hierarchy, cols)
            if z[v] > margin:
                chosen = v
        return chosen, z
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
