"""Cross-validated local precision rates of the candidate score models, and the per-class choice."""

import numpy as np

from .._sorting import stable_argsort
from .._validation import check_hierarchy, class_matrix, label_matrix
from ..exceptions import InputError
from ._common import AUTO_CANDIDATES, POSTERIOR_MODELS, check_options
from ._grid import column_orders, forward, interp_grid, restrict_flat_order, restrict_order
from ._tables import fit_grid_models


def cross_validated_lpr(scores, labels, hierarchy, kinds=AUTO_CANDIDATES, *, cv=5, seed=0, **options):
    """Out-of-fold local precision rates of several score models on the training rows.

    The rows are split into ``cv`` folds (``KFold(cv, shuffle=True,
    random_state=seed)``); each fold's LPRs come from models fitted on the other
    folds (``allow_empty=True``: a class without positives or negatives there
    gets its prevalence).

    Parameters
    ----------
    scores : array-like or DataFrame of shape (M, K)
        First-stage scores of the training rows.
    labels : array-like or DataFrame of shape (M, K)
        0/1 labels that respect the hierarchy.
    hierarchy : Hierarchy
        Fixes the column order.
    kinds : sequence of str
        Posterior-route models (``POSTERIOR_MODELS`` except ``"auto"``).
    cv, seed : int
        The number of folds (2 to M) and the seed of their shuffling.
    **options
        Options of :func:`fit_score_model` (``bandwidth``, ``prior_count``, ...).

    Returns
    -------
    dict
        ``lpr``: (len(kinds), M, K) out-of-fold LPRs; ``folds``: (M,) fold of
        each row; ``prevalence``: (cv, K) training prevalence of each fold's
        models.

    Examples
    --------
    >>> import numpy as np
    >>> from hmcpgm import Hierarchy
    >>> h = Hierarchy.from_parents([None])
    >>> rng = np.random.default_rng(0)
    >>> y = (rng.random((400, 1)) < 0.3).astype(int)
    >>> res = cross_validated_lpr(rng.normal(loc=y), y, h, ("lpr", "platt"), cv=4)
    >>> res["lpr"].shape, res["prevalence"].shape
    ((2, 400, 1), (4, 1))
    """
    from sklearn.model_selection import KFold

    hierarchy = check_hierarchy(hierarchy)
    bad = [k for k in kinds if k not in POSTERIOR_MODELS or k == "auto"]
    if bad or not len(kinds):
        raise InputError(f"kinds must be posterior-route score models {POSTERIOR_MODELS[:-1]}, got {kinds!r}")
    s = class_matrix(scores, hierarchy, "scores")
    y = label_matrix(labels, hierarchy).astype(bool)
    if isinstance(cv, bool) or not isinstance(cv, (int, np.integer)) or not 2 <= cv <= len(s):
        raise InputError(f"cv must be an int between 2 and the {len(s)} rows, got {cv!r}")
    opts = check_options("lpr", **{"bandwidth": "silverman", "gridsize": 512, "eps": 1e-6, "prior_count": 1.0,
                                    "min_count": 10.0, "transform": "asinh", **options, "cv": 5})
    out = np.empty((len(kinds), *s.shape))
    folds = np.empty(len(s), dtype=np.intp)
    prevalence = np.empty((cv, s.shape[1]))
    # the sorts the tables need, once for all folds (each fold keeps its rows' part)
    order = column_orders(s) if any(k in ("lpr", "isotonic") for k in kinds) else None
    flat_order = stable_argsort(s.ravel()) if "pooled" in kinds else None
    every_class = np.ones(s.shape[1], dtype=bool)
    for f, (train, test) in enumerate(KFold(cv, shuffle=True, random_state=seed).split(s)):
        folds[test] = f
        yt = y[train]
        n_pos = yt.sum(axis=0)
        informative = (n_pos > 0) & (n_pos < len(train))
        prevalence[f] = n_pos / len(train)
        keep = np.zeros(len(s), dtype=bool)
        keep[train] = True
        params = fit_grid_models(
            s[train], yt, informative, prevalence[f], tuple(kinds), opts,
            order=None if order is None else restrict_order(order, keep),
            flat_order=None if flat_order is None else restrict_flat_order(flat_order, keep, every_class))
        t = forward(s[test], params["center"], params["scale"], params["asinh"])
        for i in range(len(kinds)):
            lpr = interp_grid(t, params["lo"], params["hi"], params["lpr_by_kind"][i])
            out[i][test] = np.where(informative, lpr, prevalence[f])
    return {"lpr": out, "folds": folds, "prevalence": prevalence}


def log_loss_by_class(p, labels, *, clip=1e-6):
    """Mean Bernoulli log loss per class: ``-mean(y log p + (1 - y) log(1 - p))``.

    Parameters
    ----------
    p : array of shape (..., M, K)
        Probabilities (leading axes, e.g. candidate models, are kept).
    labels : array of 0/1, shape (M, K)
        The true labels.
    clip : float
        ``p`` is clipped to ``[clip, 1 - clip]``.

    Returns
    -------
    ndarray of shape (K, ...)
        The leading axes of ``p`` move last: ``(K, n_candidates)`` for an
        ``(n_candidates, M, K)`` input.

    Examples
    --------
    >>> log_loss_by_class([[0.5, 0.9], [0.5, 0.1]], [[1, 1], [0, 0]]).round(4)
    array([0.6931, 0.1054])
    """
    p = np.clip(np.asarray(p, dtype=float), clip, 1 - clip)
    y = np.asarray(labels, dtype=float)
    loss = -(y * np.log(p) + (1 - y) * np.log1p(-p)).mean(axis=-2)
    return np.moveaxis(loss, -1, 0)


def choose_candidates(p, labels, *, baseline=0, margin=2.0, clip=1e-6):
    """Per class, the candidate model kept by ``score_model="auto"``.

    The ``baseline`` candidate is kept unless another one's mean
    cross-validated log loss is lower by more than ``margin`` standard errors of
    the paired per-row difference: near-ties then never flip the choice (one
    extreme training score must not swap a class's model).

    Parameters
    ----------
    p : array of shape (n_candidates, M, K)
        Cross-validated probabilities of each candidate.
    labels : array of 0/1, shape (M, K)
        The true labels.
    baseline : int
        Index of the candidate kept by default (``fit_score_model`` passes
        ``"logistic"``, Platt scaling on the scores as they are: two parameters
        per class, monotone).
    margin : float
        How many standard errors lower another candidate's log loss must be.
    clip : float
        ``p`` is clipped to ``[clip, 1 - clip]``.

    Returns
    -------
    ndarray of int, shape (K,)
        The index of the kept candidate of each class.
    """
    p = np.clip(np.asarray(p, dtype=float), clip, 1 - clip)
    y = np.asarray(labels, dtype=float)
    rows = -(y * np.log(p) + (1 - y) * np.log1p(-p))  # (C, M, K)
    diff = rows - rows[baseline:baseline + 1]  # paired against the baseline
    mean = diff.mean(axis=1)  # (C, K)
    se = diff.std(axis=1, ddof=1) / np.sqrt(max(y.shape[0], 1)) if y.shape[0] > 1 else np.zeros_like(mean)
    gain = np.where(mean < -margin * se, mean, 0.0)
    gain[baseline] = -1e-300  # the baseline wins every tie
    return np.argmin(gain, axis=0)
