"""The pool and the stack: averaging the chosen version's mLPRs with each class's own isotonic posterior, then
with the neighbour stack's posteriors, each weight by cross-fitting."""

import numpy as np

from ..likelihood import AUTO_CANDIDATES, cross_validated_lpr

POOL_WEIGHTS = (0.0, 0.25, 0.5, 0.75, 1.0)
"""The weights of the mLPRs that ``pool="auto"`` tries (1: no pool)."""

STACK_WEIGHTS = (0.0, 0.25, 0.5, 0.75, 1.0)
"""The weights of the neighbour stack's posteriors that ``stack="auto"`` tries (0: no stack)."""


def crossfitted_isotonic(crossfit, scores, labels, hierarchy, *, cv=5, seed=0, **score_options):
    """Out-of-fold LPRs of the isotonic score model on the folds of ``crossfit``.

    Read from the candidates ``crossfit`` already cross-validated (``score_model="auto"``,
    or isotonic for every class); otherwise cross-validated here on the same folds.

    Parameters
    ----------
    crossfit : CrossFit
        The cross-fit of the training rows (:func:`hmcpgm.selection.cross_fit`).
    scores, labels : ndarray of shape (M, K)
        The training rows it was made from.
    hierarchy : Hierarchy
        The hierarchy it was made with.
    cv, seed : int
        Its folds (checked: the isotonic model's folds must be the same).
    **score_options
        Score-model options of :func:`hmcpgm.likelihood.cross_validated_lpr`.

    Returns
    -------
    ndarray of shape (M, K)
        Each row's isotonic LPRs from the score models of the fold that left it out.
    """
    cvres = crossfit.cross_validation
    if "choice" in cvres:  # score_model="auto": every candidate's out-of-fold LPRs are there
        return cvres["lpr"][AUTO_CANDIDATES.index("isotonic")]
    if all(c == "isotonic" for c in crossfit.choice):
        return crossfit.lpr
    res = cross_validated_lpr(scores, labels, hierarchy, ("isotonic",), cv=cv, seed=seed, **score_options)
    if not np.array_equal(res["folds"], crossfit.folds):  # same KFold, same seed: a change of either is a bug
        raise RuntimeError("the isotonic model's folds differ from the cross-fit's")
    return res["lpr"][0]


def choose_pool_weight(p, q, y, cols, criterion, pool="auto"):
    """The weight ``w`` of ``w * p + (1 - w) * q`` (``pool="auto"``: the best of :data:`POOL_WEIGHTS`).

    Parameters
    ----------
    p, q : ndarray of shape (M, K)
        Cross-fitted mLPRs of the chosen version and isotonic LPRs of the same rows.
    y : ndarray of shape (M, K)
        Their labels.
    cols : ndarray of int
        The evaluated classes.
    criterion : {"auprc", "log_loss"}
        As :func:`hmcpgm.selection.criterion_value` (AU(PRC): of the values, flat).
    pool : "auto" or float
        ``"auto"`` or the weight itself.

    Returns
    -------
    weight : float
        The weight; 1 means no pool.
    table : dict
        ``{weight: criterion}`` of every weight tried (AU(PRC) as itself, log loss as itself).
    """
    if pool != "auto":
        return float(pool), {}
    return _best_weight(POOL_WEIGHTS, lambda w: w * p + (1.0 - w) * q, y, cols, criterion, keep=1.0)


def choose_stack_weight(p, r, y, cols, criterion, stack="auto"):
    """The weight ``v`` of the stack in ``(1 - v) * p + v * r`` (``stack="auto"``: the best of :data:`STACK_WEIGHTS`).

    Parameters
    ----------
    p, r : ndarray of shape (M, K)
        Cross-fitted values after the pool and the neighbour stack's out-of-fold
        posteriors (:func:`hmcpgm.likelihood.crossfitted_stack`) of the same rows.
    y : ndarray of shape (M, K)
        Their labels.
    cols : ndarray of int
        The evaluated classes.
    criterion : {"auprc", "log_loss"}
        As :func:`hmcpgm.selection.criterion_value` (AU(PRC): of the values, flat).
    stack : "auto" or float
        ``"auto"`` or the weight itself.

    Returns
    -------
    weight : float or None
        The weight; None for no stack (a weight of 0).
    table : dict
        ``{weight: criterion}`` of every weight tried (AU(PRC) as itself, log loss as itself).

    Examples
    --------
    >>> y = np.array([[1, 0], [0, 1], [1, 1], [0, 0]])
    >>> p = np.array([[0.6, 0.5], [0.7, 0.4], [0.8, 0.6], [0.1, 0.2]])  # ranks one negative first
    >>> r = np.array([[0.9, 0.1], [0.2, 0.9], [0.9, 0.8], [0.1, 0.1]])  # ranks every positive first
    >>> choose_stack_weight(p, r, y, np.arange(2), "auprc")[0]
    0.5
    >>> choose_stack_weight(p, p, y, np.arange(2), "auprc")[0] is None  # ties: no stack
    True
    """
    if stack != "auto":
        return (None if float(stack) == 0.0 else float(stack)), {}
    best, table = _best_weight(STACK_WEIGHTS, lambda v: (1.0 - v) * p + v * r, y, cols, criterion, keep=0.0)
    return (None if best == 0.0 else best), table


def _best_weight(weights, mix, y, cols, criterion, keep):
    """The weight whose ``mix(weight)`` has the best ``criterion``, and ``{weight: criterion}`` of every one.

    Ties (and no positive to rank: every value nan) go to the weight nearest ``keep``,
    the one that mixes nothing in (the pool's 1, the stack's 0).
    """
    from ._choice import criterion_value

    values = {w: criterion_value(mix(w), y, cols, criterion) for w in weights}  # minimised
    finite = {w: v for w, v in values.items() if np.isfinite(v)}
    best = min(sorted(finite, key=lambda w: abs(w - keep)), key=finite.get) if finite else keep
    table = {w: (-v if criterion == "auprc" else v) for w, v in values.items()}
    return float(best), table
