"""Judging versions on cross-fitted mLPRs: the criterion, screening against indpt, the version choice."""

import warnings

import numpy as np

from .._numba import jit
from ..likelihood import log_loss_by_class
from ..metrics import row_bootstrap_weights, weighted_average_precisions
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


def ranking_order(p, hierarchy, cols, memo=None, key=None):
    """Flat indices (into ``p[:, cols]``) of the events in the HierRank ranking order of ``p``.

    ``memo`` (a dict) keeps each order under ``key``: the version choice and the
    consistency choice rank the same cross-fitted mLPRs several times.
    """
    from ..ranking import hier_rank

    if memo is not None and key in memo:
        return memo[key]
    ranking = hier_rank(p, hierarchy)
    if not np.array_equal(cols, np.arange(hierarchy.n_classes)):
        ranking = ranking.restrict([hierarchy.classes[c] for c in cols])
    order = np.asarray(ranking.order, dtype=np.intp)  # the events in rank order: the inverse of the ranks
    if memo is not None:
        memo[key] = order
    return order


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
    order = _rank_order(ranks)
    return _sorted_ap(y.ravel()[order].astype(float), order // y.shape[1], weights)


def _rank_order(ranks):
    """Flat indices of the events in rank order: the inverse permutation when the ranks are 0..N-1."""
    flat = np.asarray(ranks).ravel()
    n = flat.size
    if n and flat.min() == 0 and flat.max() == n - 1 and np.bincount(flat, minlength=n).max() == 1:
        order = np.empty(n, np.intp)
        order[flat] = np.arange(n)
        return order
    return np.argsort(flat, kind="stable")


def _sorted_ap(t, row, weights=None):
    """AU(PRC) of labels ``t`` already in rank order (``row``: each event's row, for the weights)."""
    w = np.ones((int(row.max(initial=-1)) + 1, 1)) if weights is None else np.asarray(weights, float)[:, None]
    return float(weighted_average_precisions(t, row, w)[0])


def criterion_value(p, y, cols, criterion, hierarchy=None):
    """The criterion to minimise: mean log loss, or minus the AU(PRC) of the HierRank ranking of ``p``."""
    if criterion == "log_loss":
        return float(log_loss_by_class(_columns(p, cols), _columns(y, cols)).mean())
    yy = _columns(y, cols)
    if not yy.any():
        return np.nan
    if hierarchy is None:
        return -flat_ap(_columns(p, cols), yy)
    return -ranked_ap(ranking_positions(p, hierarchy, cols), yy)


def _columns(a, cols):
    """``a[:, cols]``, without the copy when ``cols`` are all the columns in order (the exponent search's case)."""
    return a if len(cols) == a.shape[1] and np.array_equal(cols, np.arange(a.shape[1])) else a[:, cols]


def flat_ap(p, y):
    """Micro AU(PRC) of the values ``p`` (no hierarchy): :func:`hmcpgm.metrics.average_precision`'s
    definition (tied values enter together) without its input checks, for the exponent search's many calls.

    Parameters
    ----------
    p : ndarray of float, shape (M, K)
        Values, higher first.
    y : ndarray of 0/1, shape (M, K)
        Labels.

    Returns
    -------
    float
        The AU(PRC); nan without a positive or with a nan value.

    Examples
    --------
    >>> flat_ap(np.array([[0.9, 0.5], [0.5, 0.1]]), np.array([[1, 0], [1, 0]]))  # the tie enters together
    0.8333333333333333
    """
    s = np.asarray(p, dtype=float).ravel()
    t = np.asarray(y).ravel()
    if np.isnan(s).any():  # no order of a nan value
        return np.nan
    # only the values holding a hit add to the sum: per distinct value v of a hit, the hits and the
    # events with a value >= v, from the sorted hit values and one sort of the values (no argsort)
    hit = t != 0
    if not hit.any():
        return np.nan
    values, counts = np.unique(s[hit], return_counts=True)
    hits = np.cumsum(counts[::-1]).astype(np.float64)  # distinct hit values decreasing: hits so far
    seen = s.size - np.searchsorted(np.sort(s), values[::-1], side="left")  # events so far
    return float(_ap_groups(hits, seen.astype(np.float64), hits[-1]))


@jit
def _ap_groups(hits, seen, n_pos):  # pragma: no cover - compiled
    """``sum_g (R_g - R_{g-1}) P_g`` over the distinct values of the hits, decreasing (``hits``, ``seen``: hits
    and events with a value at least the group's): recall ``R_g = hits_g / n_pos``, precision ``P_g = hits_g / seen_g``
    (a value without a hit would add an exact zero)."""
    ap = 0.0
    previous = 0.0
    for g in range(hits.size):
        recall = hits[g] / n_pos
        ap += (recall - previous) * (hits[g] / seen[g])
        previous = recall
    return ap


def paired_auprc_z(p_simple, p_other, y, hierarchy, cols, *, n_boot=40, seed=0, memo=None, keys=(None, None)):
    """How much better ``p_other``'s ranking is than ``p_simple``'s, in bootstrap standard errors.

    Both rankings are HierRank rankings of the same rows; rows are resampled
    (the same resample for both, so the difference is paired) and the AU(PRC)
    difference ``other - simple`` divided by its bootstrap standard deviation.
    ``memo`` and ``keys``: the two rankings are kept in (or taken from) the dict
    ``memo`` under ``keys`` (:func:`ranking_order`).
    """
    yy = y[:, cols]
    k = yy.shape[1]
    m = len(yy)
    # column 0: the rows themselves; then the resamples
    weights = np.column_stack([np.ones(m), row_bootstrap_weights(m, n_boot, seed)])
    aps = []
    for p, key in zip((p_simple, p_other), keys):
        order = ranking_order(p, hierarchy, cols, memo if key is not None else None, key)
        aps.append(weighted_average_precisions(yy.ravel()[order].astype(float), order // k, weights))
    d = aps[1] - aps[0]
    diff = float(d[0])
    # fewer than two resamples with a positive (e.g. no positive at all): no spread to measure
    se = float(np.nanstd(d[1:], ddof=1)) if np.count_nonzero(~np.isnan(d[1:])) > 1 else 0.0
    return float(diff / se) if se > 0 else (np.inf if diff > 0 else 0.0), diff


def indpt_logit_parts(crossfit):
    """logit prevalence (of each row's fold models) and log Bayes factor, for fast tempered indpt."""
    p = np.clip(crossfit.cross_validation["prevalence"][crossfit.folds], 1e-12, 1 - 1e-12)
    with np.errstate(divide="ignore"):
        lbf = np.log(crossfit.likelihoods[..., 1]) - np.log(crossfit.likelihoods[..., 0])
    return np.log(p) - np.log1p(-p), lbf


def screen_version(crossfit, hierarchy, version, engine, rows, indpt, y, cols, own=None, prior="network"):
    """Best exponent of ``version`` on a few rows, and its paired z against indpt there (positive: worse).

    ``own`` (K,): each class's own evidence at this exponent (indpt's), the others' at
    the grid's, as the exponent search evaluates ``version`` (:func:`cross_fitted_mlpr`'s ``own``);
    None: every class's evidence at the grid's exponent. ``prior``: of nbh and full
    (:func:`cross_fitted_mlpr`'s).
    """
    best = None
    for a in SCREEN_GRID:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            p = cross_fitted_mlpr(crossfit, hierarchy, version, a, rows=rows, engine=engine, own=own, prior=prior)
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


def choose_version(predictions, y, cols, criterion, versions, margin, hierarchy=None, memo=None):
    """The simplest version whose criterion is not clearly worse than the best one's.

    With the log loss, "clearly worse" means a paired z statistic (per-row loss
    differences on the rows both versions predicted, mean over standard error)
    above ``margin``; versions are ordered by complexity indpt < nbh < full.
    With AU(PRC) (of the HierRank rankings), a more complex version replaces a
    simpler one only when its AU(PRC) on the rows both predicted is higher by
    more than ``margin`` paired bootstrap standard errors. ``memo`` (a dict)
    keeps the HierRank orders of the comparisons under ``(version, rows)``
    (:func:`ranking_order`), for a later comparison of the same mLPRs.
    """
    order = [v for v in VERSIONS if v in versions]
    if margin is not None and criterion == "auprc":  # the paired comparisons alone decide
        memo = {} if memo is None else memo
        z, chosen = {order[0]: 0.0}, order[0]
        for v in order[1:]:
            rows_c, rows_v = predictions[chosen]["rows"], predictions[v]["rows"]
            common = np.intersect1d(rows_c, rows_v)
            pc = predictions[chosen]["mlpr"][np.searchsorted(rows_c, common)]
            pv = predictions[v]["mlpr"][np.searchsorted(rows_v, common)]
            rows_key = common.tobytes()
            z[v], _ = paired_auprc_z(pc, pv, y[common], hierarchy, cols, memo=memo,
                                     keys=((chosen, rows_key), (v, rows_key)))
            if z[v] > margin:
                chosen = v
        return chosen, z
    values = {}
    for v in order:
        rows, p = predictions[v]["rows"], predictions[v]["mlpr"]
        values[v] = criterion_value(p, y[rows], cols, criterion, hierarchy)
    best = min(order, key=lambda v: values[v])
    if margin is None:
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
