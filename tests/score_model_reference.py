"""Frozen numpy reference of the score-model layer, as it was before the compiled kernels.

The fast paths of :mod:`hmcpgm.likelihood` and :func:`hmcpgm.calibration.fit_logistic_pairs`
must give the numbers of this code (to rounding); tests/test_score_model_speed.py compares them.
Copied verbatim from the commit before the rewrite, docstrings shortened; the helpers that did not
change are imported from the library.
"""

import numpy as np
from scipy.special import expit
from scipy.stats import rankdata

from hmcpgm._validation import check_hierarchy, class_matrix, label_matrix
from hmcpgm.calibration import _pav_python
from hmcpgm.exceptions import InputError
from hmcpgm.likelihood._kernel import _bandwidths, _spread_fallback, kde_tables
from hmcpgm.likelihood._registry import AUTO_CANDIDATES, POSTERIOR_MODELS, check_options

_BALLOON = 2.0 ** np.arange(5)
_OVERSAMPLE = 2
_CHUNK = 256
_SUPPORT = 5


def forward(s, center, scale, asinh):
    z = (s - center) / scale
    return np.where(asinh > 0, np.clip(np.arcsinh(z), -30.0, 30.0), z)


def backward(t, center, scale, asinh):
    return center + scale * np.where(asinh > 0, np.sinh(t), t)


def robust_scale(s):
    """Per-column median and scale (IQR / 1.349, else the standard deviation, else 1 for a constant column)."""
    q25, center, q75 = np.percentile(s, [25, 50, 75], axis=0)
    scale = (q75 - q25) / 1.349
    sd = s.std(axis=0)
    scale = np.where(scale > 0, scale, np.where((sd > 0) & (np.ptp(s, axis=0) > 0), sd, 1.0))
    return center, scale


def interp_grid(s, lo, hi, table):
    """Linear interpolation of per-class uniform grids, vectorised over (M, K).

    Column ``k`` of ``s`` is read off ``table[k]`` (values on
    ``linspace(lo[k], hi[k], G)``); scores outside ``[lo, hi]`` are clamped.
    """
    n_grid = table.shape[1]
    width = np.where(hi > lo, hi - lo, 1.0)
    t = np.clip((s - lo) / width, 0.0, 1.0) * (n_grid - 1)
    i = np.minimum(t.astype(np.intp), n_grid - 2)
    frac = t - i
    cols = np.arange(table.shape[0])
    return table[cols, i] * (1 - frac) + table[cols, i + 1] * frac


def isotonic_knots(x, y, *, weight=None, increasing=True, prior_rate=None, prior_count=0.0, min_count=0.0):
    """The knots of the isotonic fit (numpy, before the compiled core)."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    w = np.ones_like(x) if weight is None else np.asarray(weight, dtype=float)
    order = np.argsort(x, kind="stable")
    xs = x[order]
    bx, by_sum, bw, _ = _pav_python(xs, y[order], w[order], bool(increasing))
    if min_count > 0 and len(bw) > 1:
        bx, by_sum, bw = _merge_small(bx * bw, by_sum, bw, float(min_count))
        bx = bx / bw
    if len(bw) > 1:
        # the end knots sit at the inner edges of the end blocks (not their means), so
        # one extreme value does not drag them outward; beyond, the map is flat
        last = np.searchsorted(np.cumsum(w[order]), np.cumsum(bw) - 1e-9 * bw.max())
        bx = bx.copy()
        bx[0] = xs[min(last[0], len(xs) - 1)]
        bx[-1] = xs[min(last[-2] + 1, len(xs) - 1)]
    if prior_rate is None or prior_count == 0:
        return bx, by_sum / bw, bw
    # shrinking pulls light blocks further toward the prior rate and can break
    # monotonicity; pool the shrunk blocks again (weights include the pseudo-counts)
    shrunk = (by_sum + prior_count * prior_rate) / (bw + prior_count)
    blocks = _pav_members(shrunk, bw + prior_count, bool(increasing))
    if len(blocks) == len(bx):
        return bx, shrunk, bw
    sy, sw = np.array([b[0] for b in blocks]), np.array([b[1] for b in blocks])
    starts = np.array([b[2][0] for b in blocks])
    bw_merged = np.add.reduceat(bw, starts)
    bx_merged = np.add.reduceat(bx * bw, starts) / bw_merged
    return bx_merged, sy / sw, bw_merged


def _pav_members(rates, weights, increasing):
    """Pool adjacent violators over points in order, keeping each block's members: [sum w*r, sum w, members]."""
    sign = 1.0 if increasing else -1.0
    blocks = []
    for i, (r, w) in enumerate(zip(rates, weights)):
        blocks.append([0.0 + w * r, 0.0 + w, [i]])
        while len(blocks) > 1 and sign * blocks[-2][0] * blocks[-1][1] >= sign * blocks[-1][0] * blocks[-2][1]:
            s, ww, members = blocks.pop()
            blocks[-1][0] += s
            blocks[-1][1] += ww
            blocks[-1][2] += members
    return blocks


def _merge_small(sx, sy, sw, min_weight):
    """Merge neighbouring blocks (sums of w*x, w*y, w) until each weighs at least ``min_weight``."""
    ends = []
    acc = 0.0
    for i, w in enumerate(sw):
        acc += w
        if acc >= min_weight:
            ends.append(i + 1)
            acc = 0.0
    if not ends:
        ends = [len(sw)]
    elif ends[-1] != len(sw):  # a light last group joins the one before
        ends[-1] = len(sw)
    starts = [0, *ends[:-1]]
    return np.add.reduceat(sx, starts), np.add.reduceat(sy, starts), np.add.reduceat(sw, starts)


def fit_logistic_pairs(z, y, *, weight=None, prior_mean=None, prior_precision=None, start=None,
                       max_iter=50, tol=1e-8):
    """The vectorised numpy Newton steps (every column steps until all columns have converged; a step that
    raises a column's penalised objective by more than 1e-9 relative is halved, at most 60 times, after which
    the column stays where it was)."""
    z = np.asarray(z, dtype=float)
    y = np.asarray(y, dtype=float)
    k = z.shape[1]
    w = np.ones_like(z) if weight is None else np.asarray(weight, dtype=float)
    mu = np.zeros((k, 2)) if prior_mean is None else np.broadcast_to(np.asarray(prior_mean, float), (k, 2))
    prec = np.zeros((k, 2)) if prior_precision is None else np.broadcast_to(
        np.asarray(prior_precision, float), (k, 2))
    theta = mu.copy() if start is None else np.array(start, dtype=float)

    def objective(t):
        eta = t[:, 0] + t[:, 1] * z
        return (w * (np.logaddexp(0.0, eta) - y * eta)).sum(axis=0) + 0.5 * (prec * (t - mu) ** 2).sum(axis=1)

    stopped = np.zeros(k, dtype=bool)
    value = objective(theta)
    for _ in range(max_iter):
        eta = theta[:, 0] + theta[:, 1] * z
        p = expit(eta)
        r = w * (p - y)
        v = w * p * (1 - p)
        g0 = r.sum(axis=0) + prec[:, 0] * (theta[:, 0] - mu[:, 0])
        g1 = (r * z).sum(axis=0) + prec[:, 1] * (theta[:, 1] - mu[:, 1])
        h00 = v.sum(axis=0) + prec[:, 0] + 1e-10
        h01 = (v * z).sum(axis=0)
        h11 = (v * z * z).sum(axis=0) + prec[:, 1] + 1e-10
        det = h00 * h11 - h01 * h01
        det = np.where(det > 1e-300, det, 1e-300)
        step = np.stack([(h11 * g0 - h01 * g1) / det, (h00 * g1 - h01 * g0) / det], axis=1)
        big = np.abs(step).max(axis=1, keepdims=True)
        step = np.where(big > 5, step * (5 / np.maximum(big, 1e-300)), step)
        step[stopped] = 0.0
        new = objective(theta - step)
        for _ in range(60):  # halve the steps that went uphill
            up = new > value + 1e-9 * (np.abs(value) + 1.0)
            if not up.any():
                break
            step[up] *= 0.5
            new = objective(theta - step)
        up = new > value + 1e-9 * (np.abs(value) + 1.0)
        step[up] = 0.0
        stopped |= up
        new[up] = value[up]
        theta -= step
        value = new
        if np.abs(step).max(initial=0.0) < tol:
            break
    eta = theta[:, 0] + theta[:, 1] * z
    p = expit(eta)
    v = w * p * (1 - p)
    h00 = v.sum(axis=0) + prec[:, 0] + 1e-10
    h01 = (v * z).sum(axis=0)
    h11 = (v * z * z).sum(axis=0) + prec[:, 1] + 1e-10
    det = h00 * h11 - h01 * h01
    cov = np.stack([np.stack([h11, -h01], -1), np.stack([-h01, h00], -1)], axis=1) / det[:, None, None]
    return theta, cov




def _kernel_counts(t, weights, lo, hi, h, n_grid):
    """Kernel-weighted counts ``sum_i w_i exp(-(g - t_i)^2 / (2 h^2))`` on a uniform grid per column."""
    c = t.shape[1]
    step = (hi - lo) / (n_grid - 1)
    pos = np.clip((t - lo) / step, 0, n_grid - 1)
    i = np.minimum(pos.astype(np.intp), n_grid - 2)
    frac = pos - i
    idx = (i + (np.arange(c) * n_grid)[None, :]).ravel()
    size = 1 << int(np.ceil(np.log2(2 * n_grid - 1)))
    specs = []
    for w in weights:
        counts = np.bincount(idx, (w * (1 - frac)).ravel(), minlength=c * n_grid)
        counts += np.bincount(idx + 1, (w * frac).ravel(), minlength=c * n_grid)
        specs.append(np.fft.rfft(counts.reshape(c, n_grid), size, axis=1))
    offset = np.arange(size)
    offset = np.where(offset < size // 2, offset, offset - size)
    reach = np.abs(offset) <= n_grid - 1
    out = np.empty((len(weights), h.shape[0], c, n_grid))
    for level in range(h.shape[0]):
        z = offset[None, :] * (step / h[level])[:, None]
        kernel = np.fft.rfft(np.where(reach[None, :], np.exp(-0.5 * z * z), 0.0), size, axis=1)
        for j, spec in enumerate(specs):
            out[j, level] = np.fft.irfft(spec * kernel, size, axis=1)[:, :n_grid]
    return np.maximum(out, 0.0)


def kernel_lpr_tables(t, y, lo, hi, prevalence, opts):
    """Kernel LPR with a count prior and a window that widens where counts are thin."""
    n_fine = (opts["gridsize"] - 1) * _OVERSAMPLE + 1
    h = _bandwidths(t, opts["bandwidth"])
    for j in np.flatnonzero(~(h > 0)):
        h[j] = _spread_fallback(t[:, j])
    h = np.maximum(h, 2.0 * (hi - lo) / (n_fine - 1))  # at least two bins of the fine grid
    out = np.empty((t.shape[1], opts["gridsize"]))
    c, n_min = opts["prior_count"], opts["min_count"]
    for start in range(0, t.shape[1], _CHUNK):
        sl = slice(start, start + _CHUNK)
        levels = _BALLOON[:, None] * h[None, sl]
        n_all, n_pos = _kernel_counts(t[:, sl], [np.ones(t[:, sl].shape), y[:, sl].astype(float)],
                                      lo[sl], hi[sl], levels, n_fine)
        n_pos = np.minimum(n_pos, n_all)
        p = prevalence[sl][None, :, None]
        # first level whose window holds n_min objects; blend with the level before by count
        enough = n_all >= n_min
        first = np.where(enough.any(axis=0), enough.argmax(axis=0), len(_BALLOON) - 1)
        prev = np.maximum(first - 1, 0)
        take = np.take_along_axis
        n_hi, n_lo = take(n_all, first[None], 0)[0], take(n_all, prev[None], 0)[0]
        p_hi, p_lo = take(n_pos, first[None], 0)[0], take(n_pos, prev[None], 0)[0]
        # between the two windows, the one holding exactly n_min objects (counts interpolated)
        w = np.where(first > 0, np.clip((n_min - n_lo) / np.maximum(n_hi - n_lo, 1e-300), 0.0, 1.0), 1.0)
        n_w, p_w = w * n_hi + (1 - w) * n_lo, w * p_hi + (1 - w) * p_lo
        p0 = p[0]
        fine = np.where(n_w + c > 0, (p_w + c * p0) / np.maximum(n_w + c, 1e-300), p0)
        supported = n_all[0] >= _SUPPORT * max(n_min, 1.0)
        out[sl] = _monotone_tails(fine, supported, _increasing(t[:, sl], y[:, sl]))[:, ::_OVERSAMPLE]
    return out


def _increasing(t, y):
    """Per column: do positives rank above negatives on average (rank correlation >= 0, midranks)?"""
    ranks = rankdata(t, axis=0)
    n1 = y.sum(axis=0)
    return (ranks * y).sum(axis=0) >= n1 * ranks.mean(axis=0)


def _monotone_tails(lpr, supported, increasing):
    """Beyond the well-supported range, keep the LPR from drifting back toward the prevalence."""
    n = lpr.shape[1]
    idx = np.arange(n)[None, :]
    has = supported.any(axis=1)
    last = np.where(has, n - 1 - supported[:, ::-1].argmax(axis=1), n - 1)[:, None]
    first = np.where(has, supported.argmax(axis=1), 0)[:, None]
    up = increasing[:, None]
    out = lpr.copy()
    upper_max = np.maximum.accumulate(np.where(idx >= last, lpr, -np.inf), axis=1)
    upper_min = np.minimum.accumulate(np.where(idx >= last, lpr, np.inf), axis=1)
    out = np.where(idx > last, np.where(up, upper_max, upper_min), out)
    rev = lpr[:, ::-1]
    ridx = n - 1 - idx
    lower_max = np.maximum.accumulate(np.where(ridx <= first, rev, -np.inf), axis=1)[:, ::-1]
    lower_min = np.minimum.accumulate(np.where(ridx <= first, rev, np.inf), axis=1)[:, ::-1]
    return np.where(idx < first, np.where(up, lower_min, lower_max), out)




def fit_grid_models(s, y, informative, prevalence, kinds, opts, only=None):
    """Grid parameters shared by the models, and one LPR (or density) table per kind."""
    m, n_classes = s.shape
    # per-class median and robust scale: the asinh grid's and the "logistic" fence's
    robust = robust_scale(s) if opts["transform"] == "asinh" or "logistic" in kinds else None
    if opts["transform"] == "asinh":
        center, scale = robust
        asinh = np.ones(n_classes)
    else:
        center, scale, asinh = np.zeros(n_classes), np.ones(n_classes), np.zeros(n_classes)
    t = forward(s, center, scale, asinh)
    lo, hi = t.min(axis=0), t.max(axis=0)
    hi = np.where(hi > lo, hi, lo + 1.0)
    params = {"lo": lo, "hi": hi, "center": center, "scale": scale, "asinh": asinh}
    grid = lo[:, None] + (hi - lo)[:, None] * np.linspace(0.0, 1.0, opts["gridsize"])[None, :]
    cols = np.flatnonzero(informative)
    if "kde" in kinds:
        params.update(kde_tables(t, y, cols, lo, hi, opts))
        return params
    tables = np.empty((len(kinds), n_classes, opts["gridsize"]))
    tables[:] = prevalence[None, :, None]
    all_cols = cols
    for i, kind in enumerate(kinds):
        cols = all_cols
        if only is not None:
            if not np.any(only[i][all_cols]):
                continue
            if kind != "pooled":
                cols = all_cols[only[i][all_cols]]
        if not len(cols):
            continue
        if kind == "lpr":
            table = kernel_lpr_tables(t[:, cols], y[:, cols], lo[cols], hi[cols], prevalence[cols], opts)
        elif kind == "isotonic":
            table = _isotonic_tables(t[:, cols], y[:, cols], grid[cols], prevalence[cols], opts["prior_count"],
                                     opts["min_count"])
        elif kind == "platt":
            table = _platt_tables(t[:, cols], y[:, cols], grid[cols])
        elif kind == "logistic":  # Platt scaling on the scores as they are (logit-like first stages)
            grid_s = backward(grid[cols], center[cols, None], scale[cols, None], asinh[cols, None])
            table = _logistic_tables(s[:, cols], y[:, cols], grid_s, robust[0][cols], robust[1][cols])
        elif kind == "pooled":
            grid_s = backward(grid[cols], center[cols, None], scale[cols, None], asinh[cols, None])
            table = _pooled_tables(s[:, cols], y[:, cols], grid_s)
        else:  # precision
            table = _precision_tables(t[:, cols], y[:, cols], grid[cols])
        tables[i, cols] = np.clip(table, opts["eps"], 1.0 - opts["eps"])
    params["lpr_by_kind"] = tables
    return params


def _isotonic_tables(t, y, grid, prevalence, prior_count, min_count):
    out = np.empty(grid.shape)
    ranks = rankdata(t, axis=0)
    for j in range(t.shape[1]):
        yj = y[:, j]
        increasing = ranks[yj, j].mean() >= ranks[:, j].mean()
        kx, ky, _ = isotonic_knots(t[:, j], yj.astype(float), increasing=increasing,
                                   prior_rate=prevalence[j], prior_count=prior_count, min_count=min_count)
        out[j] = np.interp(grid[j], kx, ky)
    return out


def _platt_tables(t, y, grid):
    mean, sd = t.mean(axis=0), t.std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    n1 = y.sum(axis=0)
    n0 = len(y) - n1
    target = np.where(y, (n1 + 1) / (n1 + 2), 1 / (n0 + 2))
    rate = target.mean(axis=0)
    start = np.column_stack([np.log(rate / (1 - rate)), np.zeros(len(rate))])
    theta, _ = fit_logistic_pairs((t - mean) / sd, target, start=start)
    z = (grid - mean[:, None]) / sd[:, None]
    return 1.0 / (1.0 + np.exp(-np.clip(theta[:, :1] + theta[:, 1:] * z, -700, 700)))


_FENCE = 20.0  # "logistic": scores beyond this many robust scales from the median are clipped there


def _logistic_tables(s, y, grid_s, center, scale):
    """Platt scaling on the scores as they are, robust to a few extreme scores."""
    z = np.clip((s - center) / scale, -_FENCE, _FENCE)
    zg = np.clip((grid_s - center[:, None]) / scale[:, None], -_FENCE, _FENCE)
    return _platt_tables(z, y, zg)


def _pooled_tables(s, y, grid_s, n_em=6):
    """Empirical-Bayes pooled map: ``logit LPR_k = a_k + b_k logit g(s)``, ``(a_k, b_k)`` shrunk together."""
    # knots on a robust scale of the pooled scores, so that one extreme score moves the
    # centre of the top block by a few units, not to the extreme value
    center, scale = robust_scale(s.reshape(-1, 1))
    u = forward(s, center[0], scale[0], 1.0)
    kx, ky, _ = isotonic_knots(u.ravel(), y.ravel().astype(float), prior_rate=float(y.mean()), prior_count=1.0,
                               min_count=10.0)

    def logit_g(x):
        g = np.clip(np.interp(forward(x, center[0], scale[0], 1.0), kx, ky), 1e-4, 1 - 1e-4)
        return np.log(g / (1 - g))

    z = logit_g(s)
    yf = y.astype(float)
    mu, var = np.array([0.0, 1.0]), np.array([1.0, 1.0])
    theta = np.broadcast_to(mu, (s.shape[1], 2)).copy()
    for _ in range(n_em):  # EM: MAP per class given the prior, then the prior from all classes
        theta, cov = fit_logistic_pairs(z, yf, prior_mean=mu, prior_precision=1 / var, start=theta, max_iter=2)
        mu_new = theta.mean(axis=0)
        var_new = np.maximum(((theta - mu_new) ** 2 + cov[:, [0, 1], [0, 1]]).mean(axis=0), 1e-4)
        done = np.allclose(mu_new, mu, atol=1e-4) and np.allclose(var_new, var, rtol=1e-3)
        mu, var = mu_new, var_new
        if done:
            break
    theta, _ = fit_logistic_pairs(z, yf, prior_mean=mu, prior_precision=1 / var, start=theta, max_iter=10)
    eta = theta[:, :1] + theta[:, 1:] * logit_g(grid_s)
    return 1.0 / (1.0 + np.exp(-np.clip(eta, -700, 700)))


def _precision_tables(t, y, grid, n_quantiles=100):
    from scipy.interpolate import make_smoothing_spline

    out = np.empty(grid.shape)
    n = len(t)
    for j in range(t.shape[1]):
        x, yk = t[:, j], y[:, j]
        order = np.argsort(x, kind="stable")
        xs = x[order]
        pos_above = np.concatenate([np.cumsum(yk[order][::-1])[::-1], [0]])  # positives at rank >= i
        cuts = np.quantile(xs, np.linspace(0, 1, n_quantiles + 1)[:-1])
        first = np.unique(np.searchsorted(xs, cuts, side="left"))  # ties: one point per distinct cut
        if len(first) < 5:  # too few distinct scores to smooth: the class's prevalence
            out[j] = yk.mean()
            continue
        count = n - first
        u = first / n
        g = make_smoothing_spline(u, pos_above[first] / count, w=count / count.max())
        ug = np.clip(np.searchsorted(xs, grid[j], side="left") / n, u[0], u[-1])
        out[j] = g(ug) - (1 - ug) * g.derivative()(ug)
    return out


def cross_validated_lpr(scores, labels, hierarchy, kinds=AUTO_CANDIDATES, *, cv=5, seed=0, **options):
    """Out-of-fold local precision rates of several score models on the training rows."""
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
    for f, (train, test) in enumerate(KFold(cv, shuffle=True, random_state=seed).split(s)):
        folds[test] = f
        yt = y[train]
        n_pos = yt.sum(axis=0)
        informative = (n_pos > 0) & (n_pos < len(train))
        prevalence[f] = n_pos / len(train)
        params = fit_grid_models(s[train], yt, informative, prevalence[f], tuple(kinds), opts)
        t = forward(s[test], params["center"], params["scale"], params["asinh"])
        for i in range(len(kinds)):
            lpr = interp_grid(t, params["lo"], params["hi"], params["lpr_by_kind"][i])
            out[i][test] = np.where(informative, lpr, prevalence[f])
    return {"lpr": out, "folds": folds, "prevalence": prevalence}


def log_loss_by_class(p, labels, *, clip=1e-6):
    """Mean Bernoulli log loss per class: ``-mean(y log p + (1 - y) log(1 - p))``."""
    p = np.clip(np.asarray(p, dtype=float), clip, 1 - clip)
    y = np.asarray(labels, dtype=float)
    loss = -(y * np.log(p) + (1 - y) * np.log1p(-p)).mean(axis=-2)
    return np.moveaxis(loss, -1, 0)


def choose_candidates(p, labels, *, baseline=0, margin=2.0, clip=1e-6):
    """Per class, the candidate model kept by ``score_model="auto"``."""
    p = np.clip(np.asarray(p, dtype=float), clip, 1 - clip)
    y = np.asarray(labels, dtype=float)
    rows = -(y * np.log(p) + (1 - y) * np.log1p(-p))  # (C, M, K)
    diff = rows - rows[baseline:baseline + 1]  # paired against the baseline
    mean = diff.mean(axis=1)  # (C, K)
    se = diff.std(axis=1, ddof=1) / np.sqrt(max(y.shape[0], 1)) if y.shape[0] > 1 else np.zeros_like(mean)
    gain = np.where(mean < -margin * se, mean, 0.0)
    gain[baseline] = -1e-300  # the baseline wins every tie
    return np.argmin(gain, axis=0)
