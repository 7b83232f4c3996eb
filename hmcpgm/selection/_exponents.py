"""Fitting the tempering exponents: a grid, golden-section search, then coordinate steps per group."""

import numpy as np

_A_GRID = (0.03, 0.1, 0.3, 1.0)


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


def fit_exponents(evaluate, groups, a_min, n_iter):
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
