"""Kernel tables on the grid: the kernel LPR (count prior, widening window) and kernel densities."""

import numpy as np

from ._common import MIN_RATIO

_BALLOON = 2.0 ** np.arange(5)  # kernel LPR: bandwidth multiples tried where counts are thin
_OVERSAMPLE = 2  # kernel grids: binning and FFT on (gridsize - 1) * 2 + 1 points
_CHUNK = 256  # classes per FFT batch
_SUPPORT = 5  # kernel LPR: a grid point is well supported when its window holds 5 * min_count objects


def _bandwidths(t, rule):
    """Per-column bandwidth of the rule on ``t`` (statsmodels' ``select_bandwidth``, all columns at once).

    A column whose rule gives 0 (no spread) gets 0; the caller falls back.
    """
    from statsmodels.nonparametric.bandwidths import select_bandwidth
    from statsmodels.nonparametric.kde import kernel_switch

    if not isinstance(rule, str):
        return np.full(t.shape[1], float(rule))
    if t.shape[0] < 2:
        return np.zeros(t.shape[1])
    kernel = kernel_switch["gau"]()
    try:
        return np.asarray(select_bandwidth(t, rule, kernel), dtype=float).reshape(t.shape[1])
    except RuntimeError:  # "Selected KDE bandwidth is 0" for some column: one at a time
        out = np.zeros(t.shape[1])
        for j in range(t.shape[1]):
            try:
                out[j] = float(select_bandwidth(t[:, j], rule, kernel))
            except RuntimeError:
                out[j] = 0.0
        return out


def _spread_fallback(x):
    """A bandwidth for samples whose rule gives 0: a small fraction of the range, or 1e-3."""
    span = float(np.ptp(x)) if len(x) else 0.0
    return 0.05 * span if span > 0 else 1e-3


def _kernel_counts(t, weights, lo, hi, h, n_grid):
    """Kernel-weighted counts ``sum_i w_i exp(-(g - t_i)^2 / (2 h^2))`` on a uniform grid per column.

    ``t``: (M, C); ``weights``: a list of (M, C) weight arrays; ``lo``, ``hi``:
    (C,); ``h``: (L, C) bandwidths. Linear binning onto ``n_grid`` points, then
    FFT convolutions (one kernel spectrum per bandwidth, shared by the weights).
    Returns (len(weights), L, C, n_grid).
    """
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
    """Per column: do positives rank above negatives on average (rank correlation >= 0)?"""
    ranks = np.argsort(np.argsort(t, axis=0, kind="stable"), axis=0).astype(float)
    n1 = y.sum(axis=0)
    return (ranks * y).sum(axis=0) >= n1 * ranks.mean(axis=0)


def _monotone_tails(lpr, supported, increasing):
    """Beyond the well-supported range, keep the LPR from drifting back toward the prevalence.

    Outward from the last (first) well-supported grid point the LPR of a class
    whose positives score high may rise (fall) but not fall (rise): a running
    maximum on the positive side, a running minimum on the negative side
    (mirrored for classes whose positives score low).
    """
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


def kde_tables(t, y, cols, lo, hi, opts):
    """Density route: per-label kernel densities of t on the grid (per unit of t)."""
    n_classes, g = t.shape[1], opts["gridsize"]
    n_fine = (g - 1) * _OVERSAMPLE + 1
    dens = {name: np.ones((n_classes, g)) for name in ("density0", "density1")}
    if not len(cols):
        return dens
    tc, yc = t[:, cols], y[:, cols]
    h_all = _bandwidths(tc, opts["bandwidth"])
    for j in np.flatnonzero(~(h_all > 0)):
        h_all[j] = _spread_fallback(tc[:, j])
    floor = 2.0 * (hi[cols] - lo[cols]) / (n_fine - 1)
    mix = np.zeros((len(cols), g))
    for label, name in ((0, "density0"), (1, "density1")):
        mask = yc if label else ~yc
        h = np.array([_bandwidths(tc[mask[:, j], j][:, None], opts["bandwidth"])[0] for j in range(len(cols))])
        h = np.maximum(np.where(h > 0, h, h_all), floor)
        n = mask.sum(axis=0)
        counts = _kernel_counts(tc, [mask.astype(float)], lo[cols], hi[cols], h[None, :], n_fine)[0, 0]
        f = counts[:, ::_OVERSAMPLE] / (n * h * np.sqrt(2 * np.pi))[:, None]
        dens[name][cols] = f
        mix += f * (n / len(t))[:, None]
    floor_d = MIN_RATIO * mix.max(axis=1, keepdims=True)
    for table in dens.values():
        table[cols] = np.maximum(table[cols], floor_d)
    return dens
