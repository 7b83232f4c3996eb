"""Cross-validated local precision rates of the candidate score models, and the per-class choice."""

import numpy as np
from numba import prange

from .._columns import labels_by_score_rows
from .._numba import jit, jit_parallel
from .._validation import check_hierarchy, class_matrix, label_matrix
from ..exceptions import InputError
from ._grid import column_orders, forward, interp_grids, restrict_order
from ._registry import AUTO_CANDIDATES, POSTERIOR_MODELS, check_options, fit_grid_models, get_score_model


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
    labels = labels_by_score_rows(scores, labels)
    s = class_matrix(scores, hierarchy, "scores")
    y = label_matrix(labels, hierarchy).astype(bool)
    if isinstance(cv, bool) or not isinstance(cv, (int, np.integer)) or not 2 <= cv <= len(s):
        raise InputError(f"cv must be an int between 2 and the {len(s)} rows, got {cv!r}")
    defaults = {"bandwidth": "silverman", "gridsize": 512, "eps": 1e-6, "prior_count": 1.0, "min_count": 10.0,
                "transform": "asinh"}
    unknown = sorted(set(options) - set(defaults))
    if unknown:
        raise InputError(f"unknown option {unknown[0]!r}; cross_validated_lpr takes {sorted(defaults)}")
    opts = check_options("lpr", **{**defaults, **options, "cv": 5})
    out = np.empty((len(kinds), *s.shape))
    folds = np.empty(len(s), dtype=np.intp)
    prevalence = np.empty((cv, s.shape[1]))
    # the sorts the tables need, once for all folds (each fold keeps its rows' part)
    order = column_orders(s) if any(get_score_model(k).needs_order for k in kinds) else None
    events = None
    if any(get_score_model(k).shared for k in kinds):  # every (row, class) event in increasing order of score
        flat = np.argsort(s.ravel())
        rows, classes = np.divmod(flat.astype(np.int32 if flat.size < 2**31 else np.int64), s.shape[1])
        events = (s.ravel()[flat], y.ravel()[flat], rows, classes)
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
            pooled_events=None if events is None else _fold_events(events, keep, informative))
        t = forward(s[test], params["center"], params["scale"], params["asinh"])
        lpr = interp_grids(t, params["lo"], params["hi"], params["lpr_by_kind"])  # every kind's at once
        out[:, test] = np.where(informative, lpr, prevalence[f])
    return {"lpr": out, "folds": folds, "prevalence": prevalence}


def _fold_events(events, keep_rows, keep_classes):
    """The sorted events of the kept rows and classes (still sorted)."""
    scores, labels, rows, classes = events
    kept = keep_rows[rows] & keep_classes[classes]
    return scores[kept], labels[kept]


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
    p = np.asarray(p, dtype=float)
    y = np.asarray(labels, dtype=float)
    if p.ndim < 2 or y.shape != p.shape[-2:]:
        raise InputError(f"labels must have shape (M, K) as p's last two axes; got p {p.shape}, labels {y.shape}")
    lead = p.shape[:-2]
    flat = np.ascontiguousarray(p.reshape(-1, *p.shape[-2:]))
    loss = np.empty((flat.shape[0], p.shape[-1]))
    _mean_losses(flat, np.ascontiguousarray(y), float(clip), loss)
    return np.moveaxis(loss.reshape(*lead, p.shape[-1]), -1, 0)


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
    p = np.ascontiguousarray(p, dtype=float)
    if p.ndim != 3:
        raise InputError(f"p must be (candidates, M, K), got shape {p.shape}")
    if isinstance(baseline, (bool, np.bool_)) or not isinstance(baseline, (int, np.integer)) \
            or not 0 <= baseline < p.shape[0]:
        raise InputError(f"baseline must be the index of one of the {p.shape[0]} candidates, got {baseline!r}")
    try:
        y = np.ascontiguousarray(np.broadcast_to(np.asarray(labels, dtype=float), p.shape[1:]))
    except ValueError:
        raise InputError(f"labels must have shape {p.shape[1:]}, as p's rows and classes; got "
                         f"{np.shape(labels)}") from None
    choice = np.empty(p.shape[2], dtype=np.intp)
    _choose(p, y, int(baseline), float(margin), float(clip), choice)
    return choice


_BLOCK = 64  # classes per parallel task of the loss kernels (rows are read 64 classes at a time)


def _row_loss_python(q, y, clip):
    """The log loss of one probability (clipped to ``[clip, 1 - clip]``) for one label."""
    q = min(max(q, clip), 1 - clip)
    if y == 0.0:  # numpy's -(0 * log(q) + 1 * log1p(-q)), bit for bit, with one logarithm
        return -np.log1p(-q)
    if y == 1.0:
        return -np.log(q)
    return -(y * np.log(q) + (1 - y) * np.log1p(-q))


_row_loss = jit(_row_loss_python)


def _mean_losses_python(p, y, clip, out):
    """``out[c, k]``: mean over rows ``m`` of the log loss of ``p[c, m, k]`` (rows summed in order)."""
    n_cand, m, n_cols = p.shape
    for b in prange((n_cols + _BLOCK - 1) // _BLOCK):
        k0 = b * _BLOCK
        k1 = min(n_cols, k0 + _BLOCK)
        acc = np.zeros((n_cand, k1 - k0))
        for i in range(m):
            for c in range(n_cand):
                for k in range(k0, k1):
                    acc[c, k - k0] += _row_loss(p[c, i, k], y[i, k], clip)
        for c in range(n_cand):
            for k in range(k0, k1):
                out[c, k] = acc[c, k - k0] / m


_mean_losses = jit_parallel(_mean_losses_python)


def _choose_python(p, y, baseline, margin, clip, out):
    """:func:`choose_candidates` class by class: mean and standard deviation (ddof 1) of the paired
    per-row differences in two passes over the rows, as numpy's ``mean`` and ``std`` compute them."""
    n_cand, m, n_cols = p.shape
    for b in prange((n_cols + _BLOCK - 1) // _BLOCK):
        k0 = b * _BLOCK
        k1 = min(n_cols, k0 + _BLOCK)
        diff = np.empty((m, n_cand, k1 - k0))  # the paired per-row differences of this block
        total = np.zeros((n_cand, k1 - k0))
        for i in range(m):
            for k in range(k0, k1):
                base = _row_loss(p[baseline, i, k], y[i, k], clip)
                for c in range(n_cand):
                    d = _row_loss(p[c, i, k], y[i, k], clip) - base
                    diff[i, c, k - k0] = d
                    total[c, k - k0] += d
        mean = total / m
        squares = np.zeros((n_cand, k1 - k0))
        for i in range(m):
            for c in range(n_cand):
                for k in range(k1 - k0):
                    d = diff[i, c, k] - mean[c, k]
                    squares[c, k] += d * d
        for k in range(k0, k1):
            best = baseline
            best_gain = -1e-300  # the baseline wins every tie
            for c in range(n_cand):
                if c == baseline:
                    gain = -1e-300
                else:
                    se = np.sqrt(squares[c, k - k0] / (m - 1)) / np.sqrt(max(m, 1)) if m > 1 else 0.0
                    gain = mean[c, k - k0] if mean[c, k - k0] < -margin * se else 0.0
                if gain < best_gain or (gain == best_gain and c < best):
                    best = c
                    best_gain = gain
            out[k] = best


_choose = jit_parallel(_choose_python)
