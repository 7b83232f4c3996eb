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
   picks the version with the best cross-fitted criterion, fits the
   recalibration map on the cross-fitted mLPRs of the chosen configuration
   (:func:`hmcpgm.calibration.fit_recalibration`), and refits the score models
   and ``theta`` on all training rows.

The result, :class:`SecondStage`, predicts mLPRs of new rows
(:meth:`SecondStage.predict_proba`) and their recalibrated values for the
Bayesian FDR (:meth:`SecondStage.predict_calibrated`).
"""

import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from ._validation import check_hierarchy, class_matrix, label_matrix
from .calibration import RecalibrationMap, fit_recalibration
from .exceptions import InputError
from .likelihood import (
    AUTO_BASELINE,
    AUTO_CANDIDATES,
    choose_candidates,
    cross_validated_lpr,
    fit_score_model,
    log_loss_by_class,
)
from .network import LabelNetwork
from .tempering import GROUPINGS, temper, tempered_lpr, tempering_groups

__all__ = [
    "CRITERIA",
    "CrossFit",
    "SecondStage",
    "VERSIONS",
    "cross_fit",
    "cross_fitted_mlpr",
    "fit_second_stage_auto",
    "resolve_engine",
]

VERSIONS = ("indpt", "nbh", "full")
CRITERIA = ("log_loss", "auprc")
_A_GRID = (0.03, 0.1, 0.3, 1.0)


# ---------------------------------------------------------------------- cross-fitting
@dataclass(frozen=True, eq=False)
class CrossFit:
    """Out-of-fold evidence of the training rows, made by :func:`cross_fit`.

    Attributes
    ----------
    likelihoods : ndarray of shape (M, K, 2)
        Out-of-fold evidence pairs of the chosen score model per class.
    lpr : ndarray of shape (M, K)
        Their local precision rates.
    folds : ndarray of shape (M,)
        Fold of each training row.
    thetas : ndarray of shape (n_folds, K)
        ``theta`` fitted on the other folds, per fold.
    choice : tuple of str
        Score model chosen per class.
    cv_log_loss : ndarray of shape (K, len(AUTO_CANDIDATES))
        Out-of-fold log loss of every candidate score model per class.
    labels : ndarray of shape (M, K)
    """

    likelihoods: np.ndarray
    lpr: np.ndarray
    folds: np.ndarray
    thetas: np.ndarray
    choice: tuple
    cv_log_loss: np.ndarray
    labels: np.ndarray
    cross_validation: dict = field(repr=False)


def cross_fit(scores, labels, hierarchy, *, score_model="auto", cv=5, seed=0, pseudo_count=0.5, **score_options):
    """Out-of-fold likelihoods of the training rows (per fold: models fitted on the other folds).

    Parameters
    ----------
    scores : array-like of shape (M, K)
        Training scores (out of fold from the first stage).
    labels : array-like of shape (M, K)
        0/1 training labels.
    hierarchy : Hierarchy
    score_model : str, default "auto"
        ``"auto"`` (each class keeps its best candidate by out-of-fold log loss)
        or one posterior-route model for every class.
    cv, seed : int
        ``KFold(cv, shuffle=True, random_state=seed)``.
    pseudo_count : float
        Of :meth:`hmcpgm.LabelNetwork.from_labels`.
    **score_options
        Options of :func:`hmcpgm.likelihood.fit_score_model`.

    Returns
    -------
    CrossFit

    Examples
    --------
    >>> from hmcpgm.datasets import make_paper_synthetic
    >>> data = make_paper_synthetic(2000, 10, seed=0)
    >>> fit = cross_fit(data.train_scores, data.train_labels, data.hierarchy, cv=3)
    >>> fit.likelihoods.shape, fit.thetas.shape
    ((2000, 25, 2), (3, 25))
    """
    hierarchy = check_hierarchy(hierarchy)
    s = class_matrix(scores, hierarchy, "scores")
    y = label_matrix(labels, hierarchy)
    kinds = AUTO_CANDIDATES if score_model == "auto" else (score_model,)
    res = cross_validated_lpr(s, y, hierarchy, kinds, cv=cv, seed=seed, **score_options)
    loss = log_loss_by_class(res["lpr"], y)
    pick = choose_candidates(res["lpr"], y, baseline=AUTO_BASELINE) if score_model == "auto" else \
        np.zeros(y.shape[1], np.intp)
    lpr = res["lpr"][pick, :, np.arange(len(pick))].T  # (M, K)
    folds = res["folds"]
    p = res["prevalence"][folds]  # (M, K) prevalence of the models that scored each row
    flat = (p <= 0) | (p >= 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        lik = np.stack([(1 - lpr) / (1 - p), lpr / p], axis=-1)
    lik[flat] = 1.0
    thetas = np.stack([LabelNetwork.from_labels(y[folds != f], hierarchy, pseudo_count=pseudo_count).theta
                       for f in range(res["prevalence"].shape[0])])
    if score_model == "auto":
        full_loss = loss
    else:
        full_loss = np.full((y.shape[1], len(AUTO_CANDIDATES)), np.nan)
        if score_model in AUTO_CANDIDATES:
            full_loss[:, AUTO_CANDIDATES.index(score_model)] = loss[:, 0]
    return CrossFit(lik, lpr, folds, thetas, tuple(kinds[i] for i in pick), full_loss, y, res)


def resolve_engine(hierarchy, version, engine="auto"):
    """The engine that cross-fitting runs ``version`` with.

    ``"auto"`` is :func:`hmcpgm.inference.choose_engine`'s choice (tree on forests,
    the dense junction tree where it fits) except that where that choice is the
    sparse junction tree (exact on the whole Gene Ontology, but about a second per
    object), cross-fitting uses loopy BP: choosing a version and its exponent then
    rests on approximate full mLPRs, and the cross-validation table says so in its
    ``engine`` column. Predictions of the fitted model use the estimator's engine.

    Returns
    -------
    str
    """
    if engine != "auto" or version == "indpt":
        return engine
    from .inference import choose_engine

    chosen, _ = choose_engine(hierarchy, version)
    return "loopy" if chosen == "sparse" else chosen


def cross_fitted_mlpr(crossfit, hierarchy, version, a=1.0, *, rows=None, engine="auto", **options):
    """mLPRs of training rows from second stages fitted without them (fold by fold).

    Parameters
    ----------
    crossfit : CrossFit
    hierarchy : Hierarchy
    version : {"indpt", "nbh", "full"}
    a : float or array of shape (K,)
        Tempering exponent(s).
    rows : array of int, optional
        Training rows to predict (default all).
    engine : str
        Inference engine (see :func:`resolve_engine`).
    **options
        Engine options.

    Returns
    -------
    ndarray of shape (len(rows), K)
    """
    from .inference import mlpr_from_likelihoods

    rows = np.arange(len(crossfit.folds)) if rows is None else np.asarray(rows)
    out = np.empty((len(rows), hierarchy.n_classes))
    folds = crossfit.folds[rows]
    for f in np.unique(folds):
        idx = np.flatnonzero(folds == f)
        if version == "indpt":  # the class's own LPR (tempered), no network
            prevalence = crossfit.cross_validation["prevalence"][f]
            out[idx] = tempered_lpr(crossfit.likelihoods[rows[idx]], prevalence, a)
            continue
        L = temper(crossfit.likelihoods[rows[idx]], a)
        network = LabelNetwork(hierarchy, crossfit.thetas[f])
        out[idx] = mlpr_from_likelihoods(network, L, version=version, engine=engine, **options)
    return out


# ---------------------------------------------------------------------- the fitted second stage
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

    def predict_proba(self, scores, **options):
        """mLPRs of new rows under the chosen version and tempering, shape (M, K)."""
        from .inference import mlpr_from_likelihoods

        if self.version == "indpt":
            return tempered_lpr(self.score_model.likelihoods(scores), self.score_model.prevalence, self.a)
        L = temper(self.score_model.likelihoods(scores), self.a)
        return mlpr_from_likelihoods(LabelNetwork(self.hierarchy, self.theta), L, version=self.version, engine=self.engine,
                                     **options)

    def predict_calibrated(self, scores=None, *, mlpr=None):
        """Recalibrated mLPRs ``g(mLPR)`` (for the Bayesian FDR); pass ``mlpr`` to skip inference."""
        p = self.predict_proba(scores) if mlpr is None else np.asarray(mlpr, dtype=float)
        return p if self.recalibration is None else self.recalibration(p)


# ---------------------------------------------------------------------- choosing
def _criterion(p, y, cols, criterion):
    if criterion == "log_loss":
        return float(log_loss_by_class(p[:, cols], y[:, cols]).mean())
    from .metrics import average_precision

    if not y[:, cols].any():
        return np.nan
    return -average_precision(p[:, cols], y[:, cols], exclude_roots=False)


def _golden(f, lo, hi, start, n_iter):
    """Minimise f over log-exponent in [lo, hi] by golden-section search from a bracket."""
    g = (np.sqrt(5) - 1) / 2
    a, b = lo, hi
    c, d = b - g * (b - a), a + g * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(n_iter):
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - g * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + g * (b - a)
            fd = f(d)
    return (c, fc) if fc <= fd else (d, fd)


def _fit_exponents(evaluate, groups, a_min, n_iter):
    """Exponent per group minimising ``evaluate(a_per_class)``: grid, golden section, then coordinates."""
    n_groups = groups.max() + 1
    cache = {}

    def f_vec(log_a):
        key = tuple(np.round(log_a, 6))
        if key not in cache:
            cache[key] = evaluate(np.exp(np.asarray(log_a))[groups])
        return cache[key]

    lo, hi = np.log(a_min), 0.0
    grid = np.log([a for a in _A_GRID if a >= a_min] or [a_min, 1.0])
    values = [f_vec(np.full(n_groups, x)) for x in grid]
    best = int(np.nanargmin(values))
    left = grid[best - 1] if best > 0 else lo
    right = grid[best + 1] if best + 1 < len(grid) else hi
    x, fx = _golden(lambda v: f_vec(np.full(n_groups, v)), left, right, grid[best], n_iter)
    if values[best] < fx:
        x, fx = grid[best], values[best]
    log_a = np.full(n_groups, x)
    if n_groups > 1:
        for _ in range(2):
            for j in range(n_groups):
                def fj(v, j=j):
                    trial = log_a.copy()
                    trial[j] = v
                    return f_vec(trial)
                xj, fj_val = _golden(fj, lo, hi, log_a[j], n_iter)
                if fj_val < fx:
                    log_a[j], fx = xj, fj_val
    return np.exp(log_a), fx, len(cache)


_SCREEN_GRID = (0.1, 0.3, 1.0)


def _indpt_parts(crossfit):
    """logit prevalence (of each row's fold models) and log Bayes factor, for fast tempered indpt."""
    p = np.clip(crossfit.cross_validation["prevalence"][crossfit.folds], 1e-12, 1 - 1e-12)
    with np.errstate(divide="ignore"):
        lbf = np.log(crossfit.likelihoods[..., 1]) - np.log(crossfit.likelihoods[..., 0])
    return np.log(p) - np.log1p(-p), lbf


def _screen(crossfit, hierarchy, version, engine, rows, indpt, y, cols):
    """Best exponent of ``version`` on a few rows, and its paired z against indpt there (positive: worse)."""
    best = None
    for a in _SCREEN_GRID:
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


def _choose_version(predictions, y, cols, criterion, versions, margin):
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
        values[v] = _criterion(p, y[rows], cols, criterion)
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


def fit_second_stage_auto(scores, labels, hierarchy, *, versions=VERSIONS, tempering="one", criterion="log_loss",
                          score_model="auto", cv=5, seed=0, evaluated=None, max_rows="auto", screen_rows="auto",
                          screen_margin=3.0, engine="auto", a_min=0.02, n_iter=6, margin=2.0, recalibrate=True,
                          pseudo_count=0.5, allow_empty=True, return_predictions=False, **score_options):
    """Choose version, tempering and score models by cross-fitting on the training rows.

    Parameters
    ----------
    scores : array-like of shape (M, K)
        Training scores (out of fold from the first stage).
    labels : array-like of shape (M, K)
    hierarchy : Hierarchy
    versions : tuple of str
        Candidates among ``"indpt"``, ``"nbh"``, ``"full"``.
    tempering : {"one", "depth", "frequency"} or None
        Grouping of the tempering exponents (:func:`hmcpgm.tempering.tempering_groups`);
        None fixes ``a = 1`` (the paper's model).
    criterion : {"log_loss", "auprc"}
        What the exponents and the version minimise: the mean cross-fitted
        log loss of the labels (a proper scoring rule: it rewards calibrated
        posteriors, which the Bayesian FDR needs) or minus the micro AU(PRC) of
        the cross-fitted mLPRs (ranking only).
    score_model : str, default "auto"
        Per-class choice among :data:`hmcpgm.likelihood.AUTO_CANDIDATES`, or one model.
    cv, seed : int
        Folds of the cross-fitting.
    evaluated : array of bool, shape (K,), optional
        Classes entering the criterion and the recalibration (default all).
    max_rows : int, "auto" or None
        For nbh and full, cross-fitted inference on a seeded subsample of at most
        this many training rows (their engines are slow on large DAGs). "auto":
        all rows on forests, 300 on DAGs; None: all rows.
    screen_rows : int, "auto" or None
        Before fitting its exponent, nbh and full are tried at a = 0.1, 0.3, 1 on
        a seeded subsample of this many rows and dropped when their best loss
        there is worse than indpt's by more than ``screen_margin`` paired
        standard errors. "auto": no screening on forests, 100 rows on DAGs.
    screen_margin : float
    engine : str
        Inference engine (``"auto"``: :func:`resolve_engine`).
    a_min : float
        Smallest exponent searched.
    margin : float or None
        Version choice with the log loss: the simplest version (indpt, then nbh,
        then full) whose cross-fitted loss exceeds the best version's by at most
        ``margin`` paired standard errors (per-row differences); None takes the
        best.
    n_iter : int
        Golden-section steps per search (after a grid over 0.03, 0.1, 0.3, 1).
    recalibrate : bool
        Fit the shared recalibration map on the cross-fitted mLPRs of the choice.
    pseudo_count : float
        Of ``theta``.
    allow_empty : bool
        Classes without training positives carry no evidence.
    return_predictions : bool
        Also return a dict with, per version not screened out, its fitted
        configuration and cross-fitted mLPRs (``"versions"``: ``{version:
        {"rows", "mlpr", "a", "engine"}}``), the :class:`CrossFit`
        (``"crossfit"``) and the subsample of rows for nbh and full (``"rows"``).
    **score_options
        Options of :func:`hmcpgm.likelihood.fit_score_model`.

    Returns
    -------
    SecondStage
        With ``return_predictions``: ``(SecondStage, details)``.

    Examples
    --------
    >>> from hmcpgm.datasets import make_paper_synthetic
    >>> data = make_paper_synthetic(3000, 500, seed=1)
    >>> stage = fit_second_stage_auto(data.train_scores, data.train_labels, data.hierarchy, cv=3)
    >>> stage.version
    'full'
    >>> stage.predict_proba(data.test_scores).shape
    (500, 25)
    """
    import pandas as pd

    hierarchy = check_hierarchy(hierarchy)
    if criterion not in CRITERIA:
        raise InputError(f"criterion must be one of {CRITERIA}, got {criterion!r}")
    bad = [v for v in versions if v not in VERSIONS]
    if bad or not len(versions):
        raise InputError(f"versions must be a non-empty tuple of {VERSIONS}, got {versions!r}")
    if tempering is not None and tempering not in GROUPINGS:
        raise InputError(f"tempering must be one of {GROUPINGS} or None, got {tempering!r}")
    s = class_matrix(scores, hierarchy, "scores")
    y = label_matrix(labels, hierarchy)
    cols = np.flatnonzero(np.ones(hierarchy.n_classes, bool) if evaluated is None else np.asarray(evaluated, bool))
    seconds = {}
    t0 = time.perf_counter()
    crossfit = cross_fit(s, y, hierarchy, score_model=score_model, cv=cv, seed=seed, pseudo_count=pseudo_count,
                         **score_options)
    seconds["cross_fit"] = time.perf_counter() - t0
    groups = np.zeros(hierarchy.n_classes, np.intp) if tempering is None else tempering_groups(
        hierarchy, tempering, y)
    all_rows = np.arange(len(s))
    sub = all_rows
    if max_rows == "auto":
        max_rows = None if hierarchy.is_forest else 300
    if screen_rows == "auto":
        screen_rows = None if hierarchy.is_forest else 100
    if max_rows is not None and max_rows < len(s):
        sub = np.sort(np.random.default_rng(seed).choice(len(s), size=int(max_rows), replace=False))
    rows_table, fitted, predictions = [], {}, {}
    screen = None
    if screen_rows is not None and screen_rows < len(s):
        screen = np.sort(np.random.default_rng(seed + 1).choice(len(s), size=int(screen_rows), replace=False))
    for version in [v for v in VERSIONS if v in versions]:
        t0 = time.perf_counter()
        eng = resolve_engine(hierarchy, version, engine)
        rows = all_rows if version == "indpt" else sub
        kept = {}

        indpt_parts = _indpt_parts(crossfit) if version == "indpt" else None

        def evaluate(a, version=version, rows=rows, eng=eng, kept=kept, parts=indpt_parts):
            if parts is not None:  # indpt: logit LPR = logit prevalence + a log Bayes factor, no network
                p = 0.5 * (1.0 + np.tanh(0.5 * (parts[0] + np.asarray(a, float) * parts[1])))
            else:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # loopy non-convergence on a few objects: judged by the loss
                    p = cross_fitted_mlpr(crossfit, hierarchy, version, a, rows=rows, engine=eng)
            value = _criterion(p, y[rows], cols, criterion)
            if not kept or value < kept["value"]:
                kept.update(value=value, a=np.asarray(a, float), mlpr=p)
            return value

        screened = None
        if version != "indpt" and screen is not None and "indpt" in predictions and tempering is not None:
            screened = _screen(crossfit, hierarchy, version, eng, screen, predictions["indpt"], y, cols)
        if screened is not None and screened[1] > screen_margin:
            a, value = screened[0], np.nan
            n_eval, rows_used, note = len(_SCREEN_GRID), len(screen), f"screened out (z {screened[1]:.1f})"
            other_value = np.nan
        else:
            if tempering is None:
                evaluate(np.ones(hierarchy.n_classes))
                n_eval = 1
            else:
                _, _, n_eval = _fit_exponents(evaluate, groups, a_min, n_iter)
            a, value, p = kept["a"], kept["value"], kept["mlpr"]
            predictions[version] = {"rows": rows, "mlpr": p, "a": a, "engine": eng}
            fitted[version] = (a, eng, value)
            rows_used, note = len(rows), ""
            other = "auprc" if criterion == "log_loss" else "log_loss"
            other_value = _criterion(p, y[rows], cols, other) * (-1 if other == "auprc" else 1)
        other = "auprc" if criterion == "log_loss" else "log_loss"
        rows_table.append({
            "version": version, "grouping": tempering or "fixed",
            "a": np.round(np.unique(a), 4).tolist(),
            f"cv_{criterion}": value if criterion == "log_loss" else -value,
            f"cv_{other}": other_value,
            "rows": rows_used, "evaluations": n_eval, "engine": eng, "note": note,
            "seconds": round(time.perf_counter() - t0, 2),
        })
        seconds[f"cv_{version}"] = time.perf_counter() - t0
    best, z = _choose_version(predictions, y, cols, criterion, tuple(predictions), margin)
    a, eng, _ = fitted[best]
    table = pd.DataFrame(rows_table)
    table["z_vs_best"] = [z.get(v, np.nan) for v in table["version"]]
    table["chosen"] = table["version"] == best
    t0 = time.perf_counter()
    recal = None
    if recalibrate:
        rows, p = predictions[best]["rows"], predictions[best]["mlpr"]
        recal = fit_recalibration(p[:, cols], y[rows][:, cols])
    seconds["recalibration"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    kind = "auto" if score_model == "auto" else score_model
    final = fit_score_model(s, y, hierarchy, kind=kind, allow_empty=allow_empty,
                            cross_validation=crossfit.cross_validation if kind == "auto" else None,
                            cv=cv, seed=seed, **score_options)
    theta = LabelNetwork.from_labels(y, hierarchy, pseudo_count=pseudo_count).theta
    seconds["final_fit"] = time.perf_counter() - t0
    stage = SecondStage(hierarchy, best, np.asarray(a, float), final, theta, recal, eng, table,
                        {k: round(v, 2) for k, v in seconds.items()})
    if return_predictions:
        return stage, {"versions": predictions, "crossfit": crossfit, "rows": sub}
    return stage
