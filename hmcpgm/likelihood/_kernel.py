"""Kernel tables on the grid: the kernel LPR (count prior, widening window) and kernel densities."""

import numpy as np
from numba import prange

from .._numba import jit, jit_parallel
from ._common import MIN_RATIO
from ._grid import numpy_lerp, positives_rank_high

_BALLOON = 2.0 ** np.arange(5)  # kernel LPR: bandwidth multiples tried where counts are thin
_OVERSAMPLE = 2  # kernel grids: binning and FFT on (gridsize - 1) * 2 + 1 points
_CHUNK = 256  # classes per FFT batch
_SUPPORT = 5  # kernel LPR: a grid point is well supported when its window holds 5 * min_count objects


def _bandwidths(t, rule, order=None):
    """Per-column bandwidth of the rule on ``t``: each column's from that column alone.

    statsmodels' rules (``bandwidths.bw_silverman``, ``bw_scott``,
    ``bw_normal_reference``): ``c * A * n ** (-1/5)`` with ``A = min(sd, IQR / 1.349)``
    (``sd`` with ``ddof=1``; ``A = sd`` where the IQR is 0) and ``c`` 0.9, 1.059 or the
    Gaussian kernel's normal-reference constant. Computed here column by column, vectorised:
    statsmodels' ``select_bandwidth`` takes the IQR of a 2-D array over all its values, so
    called on several classes at once it would make each class's bandwidth depend on the
    other classes' scores. A column with no spread (all its values equal) gets exactly 0,
    whatever rounding leaves in its standard deviation (twenty copies of one value can
    have an ``sd`` of 1e-16); the caller falls back. ``order`` ((C, M) argsort of each
    column of ``t``), when at hand, saves the selection of the quartiles and extremes.
    """
    if not isinstance(rule, str):
        return np.full(t.shape[1], float(rule))
    n = t.shape[0]
    if n < 2:
        return np.zeros(t.shape[1])
    q75, q25 = _quantiles(t, (0.75, 0.25), order)
    iqr = (q75 - q25) / 1.349
    sd = np.std(t, axis=0, ddof=1)
    spread = np.where(iqr > 0, np.minimum(sd, iqr), sd)
    if order is None:
        constant = np.min(t, axis=0) == np.max(t, axis=0)
    else:
        cols = np.arange(t.shape[1])
        constant = t[order[:, 0], cols] == t[order[:, -1], cols]
    return _rule_constant(rule) * np.where(constant, 0.0, spread) * n ** (-0.2)


def _quantiles(t, qs, order=None):
    """Per-column quantiles of ``t`` (numpy's default "linear" method, the same bits as ``np.quantile``);
    from the column sorts ``order`` when given, reading only the order statistics needed."""
    if order is None:
        return list(np.quantile(t, qs, axis=0))
    n, cols = t.shape[0], np.arange(t.shape[1])
    out = []
    for q in qs:
        virtual = (n - 1) * q
        below = int(np.floor(virtual))
        above = min(below + 1, n - 1)
        out.append(numpy_lerp(t[order[:, below], cols], t[order[:, above], cols], virtual - below))
    return out


def _rule_constant(rule):
    """The constant ``c`` of a bandwidth rule (statsmodels' values)."""
    if rule == "normal_reference":
        from statsmodels.nonparametric.kde import kernel_switch

        return float(kernel_switch["gau"]().normal_reference_constant)
    return {"silverman": 0.9, "scott": 1.059}[rule]


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


def kernel_lpr_tables(t, y, lo, hi, prevalence, opts, order=None):
    """Kernel LPR with a count prior and a window that widens where counts are thin.

    ``order``: (C, M) stable argsort of each column of ``t``, if at hand.
    """
    n_fine = (opts["gridsize"] - 1) * _OVERSAMPLE + 1
    h = _bandwidths(t, opts["bandwidth"], order)
    for j in np.flatnonzero(~(h > 0)):
        h[j] = _spread_fallback(t[:, j])
    h = np.maximum(h, 2.0 * (hi - lo) / (n_fine - 1))  # at least two bins of the fine grid
    out = np.empty((t.shape[1], opts["gridsize"]))
    increasing = positives_rank_high(t, y, order)
    for start in range(0, t.shape[1], _CHUNK):
        sl = slice(start, start + _CHUNK)
        n_all, n_pos = _widening_counts(t[:, sl], y[:, sl].astype(float), lo[sl], hi[sl], h[sl], n_fine,
                                        opts["min_count"])
        _lpr_from_counts(n_all, n_pos, prevalence[sl], increasing[sl], float(opts["prior_count"]),
                         float(opts["min_count"]), float(_SUPPORT * max(opts["min_count"], 1.0)), _OVERSAMPLE,
                         out[sl])
    return out


def _widening_counts(t, y, lo, hi, h, n_grid, n_min):
    """Kernel-weighted counts of all objects and of positives at the bandwidths ``_BALLOON * h``.

    As :func:`_kernel_counts` (same binning, same FFTs, row by row), but a class
    gets the next, wider level only while some grid point has fewer than ``n_min``
    objects in every window so far: the levels past it are never read. Returns
    two (len(_BALLOON), C, n_grid) arrays, the unread levels left unset.
    """
    c = t.shape[1]
    step = (hi - lo) / (n_grid - 1)
    size = 1 << int(np.ceil(np.log2(2 * n_grid - 1)))
    counts = np.empty((2, c, n_grid))
    _linear_binning(np.ascontiguousarray(t), np.ascontiguousarray(y), lo, step, counts)
    specs = [np.fft.rfft(counts[0], size, axis=1), np.fft.rfft(counts[1], size, axis=1)]
    offset = np.arange(size)
    offset = np.where(offset < size // 2, offset, offset - size)
    reach = np.abs(offset) <= n_grid - 1
    n_levels = len(_BALLOON)
    n_all = np.empty((n_levels, c, n_grid))
    n_pos = np.empty((n_levels, c, n_grid))
    active = np.arange(c)
    settled = np.zeros((c, n_grid), dtype=bool)  # some window so far holds n_min objects
    for level in range(n_levels):
        z = offset[None, :] * (step[active] / (_BALLOON[level] * h[active]))[:, None]
        kernel = np.fft.rfft(np.where(reach[None, :], np.exp(-0.5 * z * z), 0.0), size, axis=1)
        for out, spec in ((n_all, specs[0]), (n_pos, specs[1])):
            out[level, active] = np.maximum(np.fft.irfft(spec[active] * kernel, size, axis=1)[:, :n_grid], 0.0)
        settled[active] |= n_all[level, active] >= n_min
        active = active[~settled[active].all(axis=1)]
        if not len(active):
            break
    return n_all, n_pos


def _linear_binning_python(t, y, lo, step, counts):
    """Linear binning of every object (weight 1) into ``counts[0]`` and of the positives into ``counts[1]``.

    The bins and fractions of :func:`_kernel_counts`, and its sums in its order
    (``numpy.bincount`` over the rows, the lower bins' shares, then the upper bins').
    """
    m, c = t.shape
    n_grid = counts.shape[2]
    lower = np.zeros((2, c, n_grid))
    upper = np.zeros((2, c, n_grid))
    for r in range(m):
        for k in range(c):
            pos = min(max((t[r, k] - lo[k]) / step[k], 0.0), n_grid - 1.0)
            i = min(int(pos), n_grid - 2)
            frac = pos - i
            lower[0, k, i] += 1 - frac
            upper[0, k, i + 1] += frac
            lower[1, k, i] += y[r, k] * (1 - frac)
            upper[1, k, i + 1] += y[r, k] * frac
    for w in range(2):
        for k in range(c):
            for g in range(n_grid):
                counts[w, k, g] = lower[w, k, g] + upper[w, k, g]


_linear_binning = jit(_linear_binning_python)


def _lpr_from_counts_python(n_all, n_pos, prevalence, increasing, c, n_min, support, oversample, out):
    """Per class and fine grid point: the window holding ``n_min`` objects, the LPR there, monotone tails.

    The first level whose window holds ``n_min`` objects (else the widest), blended
    with the level before by count; ``(n1 + c p) / (n + c)``; beyond the
    well-supported range (``n_all[0] >= support``) :func:`_monotone_tails`; every
    ``oversample``-th point into ``out``.
    """
    n_levels, n_cols, n_grid = n_all.shape
    for k in prange(n_cols):
        p0 = prevalence[k]
        fine = np.empty(n_grid)
        first_sup = -1
        last_sup = -1
        for g in range(n_grid):
            first = n_levels - 1
            for level in range(n_levels):
                if n_all[level, k, g] >= n_min:
                    first = level
                    break
            prev = max(first - 1, 0)
            n_hi = n_all[first, k, g]
            n_lo = n_all[prev, k, g]
            p_hi = min(n_pos[first, k, g], n_hi)
            p_lo = min(n_pos[prev, k, g], n_lo)
            if first > 0:
                w = min(max((n_min - n_lo) / max(n_hi - n_lo, 1e-300), 0.0), 1.0)
            else:
                w = 1.0
            n_w = w * n_hi + (1 - w) * n_lo
            p_w = w * p_hi + (1 - w) * p_lo
            fine[g] = (p_w + c * p0) / max(n_w + c, 1e-300) if n_w + c > 0 else p0
            if n_all[0, k, g] >= support:
                if first_sup < 0:
                    first_sup = g
                last_sup = g
        if first_sup < 0:  # nothing well supported: the whole grid is "tail" on neither side
            first_sup = 0
            last_sup = n_grid - 1
        # outward from the well-supported range the LPR may move away from the prevalence, not back
        up = increasing[k]
        run = fine[last_sup]
        for g in range(last_sup + 1, n_grid):
            run = max(run, fine[g]) if up else min(run, fine[g])
            fine[g] = run
        run = fine[first_sup]
        for g in range(first_sup - 1, -1, -1):
            run = min(run, fine[g]) if up else max(run, fine[g])
            fine[g] = run
        for g in range(out.shape[1]):
            out[k, g] = fine[g * oversample]


_lpr_from_counts = jit_parallel(_lpr_from_counts_python)


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
