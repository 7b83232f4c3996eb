"""Cross-fitting: out-of-fold evidence of the training rows, and mLPRs of second stages that never saw them."""

import warnings
from dataclasses import dataclass, field

import numpy as np

from .._columns import labels_by_score_rows
from .._validation import check_hierarchy, class_matrix, label_matrix
from ..exceptions import ApproximationWarning
from ..likelihood import AUTO_BASELINE, AUTO_CANDIDATES, choose_candidates, cross_validated_lpr, log_loss_by_class
from ..network import LabelNetwork
from ..second_stage import SecondStage


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
        The 0/1 training labels.
    cross_validation : dict
        The output of :func:`hmcpgm.likelihood.cross_validated_lpr` (``lpr`` of every
        candidate, ``folds``, ``prevalence`` of each fold's models); with
        ``score_model="auto"`` also the per-class ``log_loss`` and ``choice`` made from it
        (:func:`hmcpgm.likelihood.fit_score_model` reuses them for the final fit).
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
        Fixes the column order and the network of each fold.
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
        The out-of-fold evidence, the folds and each fold's ``theta``.

    Examples
    --------
    >>> from hmcpgm.datasets import make_paper_synthetic
    >>> data = make_paper_synthetic(2000, 10, seed=0)
    >>> fit = cross_fit(data.train_scores, data.train_labels, data.hierarchy, cv=3)
    >>> fit.likelihoods.shape, fit.thetas.shape
    ((2000, 25, 2), (3, 25))
    """
    hierarchy = check_hierarchy(hierarchy)
    labels = labels_by_score_rows(scores, labels)
    s = class_matrix(scores, hierarchy, "scores")
    y = label_matrix(labels, hierarchy)
    kinds = AUTO_CANDIDATES if score_model == "auto" else (score_model,)
    res = cross_validated_lpr(s, y, hierarchy, kinds, cv=cv, seed=seed, **score_options)
    loss = log_loss_by_class(res["lpr"], y)
    pick = choose_candidates(res["lpr"], y, baseline=AUTO_BASELINE) if score_model == "auto" else \
        np.zeros(y.shape[1], np.intp)
    if score_model == "auto":  # the final fit's choice (fit_score_model reads them instead of recomputing)
        res = {**res, "log_loss": loss, "choice": pick}
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

    ``"auto"`` is :func:`hmcpgm.inference.choose_engine`'s choice (the tree engine on
    forests; on DAGs the cheaper exact junction tree, which is the sparse one on
    every DAG measured, small ones too) except that where that choice is the sparse
    junction tree (exact on the whole Gene Ontology, but about 0.1 s per object
    there, for every row, fold and exponent tried), cross-fitting uses loopy BP (the
    engine registry's ``cross_fit_engine``), whatever the DAG's size: choosing a
    version and its exponent, and the cross-fitted recalibration map, then rest on
    approximate full mLPRs, and the cross-validation table says so in its ``engine``
    column. Predictions of the fitted model use the estimator's engine; an engine
    given by name (``MLPR(engine="junction")``) cross-fits exactly. Exact
    cross-fitting on small DAGs was measured and not taken (docs/concepts.md,
    "Exact cross-fitting on a small DAG?").

    Parameters
    ----------
    hierarchy : Hierarchy
        The hierarchy of the second stage.
    version : {"indpt", "nbh", "full"}
        The mLPR version cross-fitted.
    engine : str
        The engine asked for; anything but ``"auto"`` is kept.

    Returns
    -------
    str
        The engine's name (``engine`` itself for the indpt version).
    """
    if engine != "auto" or version == "indpt":
        return engine
    from ..inference import choose_engine, get_engine

    chosen, _ = choose_engine(hierarchy, version)
    return get_engine(chosen).cross_fit_engine or chosen


def cross_fitted_mlpr(crossfit, hierarchy, version, a=1.0, *, rows=None, engine="auto", own=None, prior="network",
                      **options):
    """mLPRs of training rows from second stages fitted without them (fold by fold).

    Parameters
    ----------
    crossfit : CrossFit
        The out-of-fold evidence of the training rows, from :func:`cross_fit`.
    hierarchy : Hierarchy
        The hierarchy ``crossfit`` was made with.
    version : {"indpt", "nbh", "full"}
        The mLPR version.
    a : float or array of shape (K,)
        Tempering exponent(s).
    rows : array of int, optional
        Training rows to predict (default all).
    engine : str
        Inference engine (see :func:`resolve_engine`).
    own : array of shape (K,), optional
        For nbh and full: each class's own evidence at this exponent, the
        others' at ``a`` (:class:`~hmcpgm.second_stage.SecondStage`'s ``own``);
        the model the exponent search fits.
    prior : {"network", "prevalence"}
        The prior of nbh and full (:class:`~hmcpgm.second_stage.SecondStage`'s
        ``prior``; ``"prevalence"``: each fold's own training prevalence).
    **options
        Engine options.

    Returns
    -------
    ndarray of shape (len(rows), K)
        Each row's mLPRs from the second stage of the fold that left it out.
    """
    rows = np.arange(len(crossfit.folds)) if rows is None else np.asarray(rows)
    out = np.empty((len(rows), hierarchy.n_classes))
    folds = crossfit.folds[rows]
    with warnings.catch_warnings():  # loopy's approximation here is the cross-validation table's engine column
        warnings.simplefilter("ignore", ApproximationWarning)
        for f in np.unique(folds):
            idx = np.flatnonzero(folds == f)
            # the second stage of fold f: its theta and its score models' prevalence (indpt's prior), fed the
            # out-of-fold evidence of the rows it left out
            stage = SecondStage(hierarchy, version, a, None, crossfit.thetas[f], engine=engine, options=options,
                                prevalence=crossfit.cross_validation["prevalence"][f], own=own, prior=prior)
            out[idx] = stage.mlpr(crossfit.likelihoods[rows[idx]])
    return out
