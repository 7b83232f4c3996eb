"""The robust per-class grids: the asinh transform of the scores and linear interpolation on the grid.

Also the sort orders the kernel and isotonic tables share: the transform
is non-decreasing in the score, so a stable argsort of the scores, computed once
and restricted to a fold's rows, becomes the stable argsort of the transformed
scores by re-sorting only the runs the transform made equal.
"""

import numpy as np
from numba import prange

from .._numba import jit_parallel
from .._sorting import stable_argsort


def positives_rank_high(t, y, order=None):
    """Per column of ``t`` (M, K): do positives rank above negatives on average (rank correlation >= 0)?

    Ranks are midranks (tied values share their mean position), so the answer does
    not depend on the order of rows among equal values. ``order``: (K, M) stable
    argsort of each column, if at hand.
    """
    if order is None:
        order = stable_argsort(t.T)
    t_sorted = np.take_along_axis(np.asarray(t, dtype=float).T, order, axis=1)
    y_sorted = np.take_along_axis(np.asarray(y, dtype=float).T, order, axis=1)
    n = t_sorted.shape[1]
    position = np.arange(n)
    new_run = np.ones(t_sorted.shape, dtype=bool)
    new_run[:, 1:] = t_sorted[:, 1:] != t_sorted[:, :-1]
    first = np.maximum.accumulate(np.where(new_run, position, 0), axis=1)
    run_ends = np.ones(t_sorted.shape, dtype=bool)
    run_ends[:, :-1] = new_run[:, 1:]
    last = np.minimum.accumulate(np.where(run_ends, position, n)[:, ::-1], axis=1)[:, ::-1]
    return (y_sorted * (first + last)).sum(axis=1) >= y_sorted.sum(axis=1) * (n - 1)


_T_MAX = 30.0  # the asinh transform is clipped at +-30 (scores some 5e12 robust scales from the median)


def forward(s, center, scale, asinh):
    """The scores on the grid's axis: ``(s - center) / scale``, through arcsinh where ``asinh`` (clipped at
    +-30, so that a score near the largest double neither overflows nor stretches the grid beyond use)."""
    with np.errstate(over="ignore"):
        z = (s - center) / scale
    return np.where(asinh > 0, np.clip(np.arcsinh(z), -_T_MAX, _T_MAX), z)


def backward(t, center, scale, asinh):
    with np.errstate(over="ignore"):
        return center + scale * np.where(asinh > 0, np.sinh(t), t)


def robust_scale(s, sorted_values=None):
    """Per-column median and scale (IQR / 1.349, else the standard deviation, else 1 for a constant column).

    ``sorted_values``: the columns' values in increasing order, if at hand, as a
    (K, M) array (or (M,) for a one-column ``s``); the quartiles are then read off
    it (numpy's "linear" percentiles, same arithmetic) instead of partitioning
    ``s``. The standard deviation is computed only when some interquartile range is 0.
    Scores beyond +-1e150 are first divided by a power of two (exactly), so that
    neither the quartiles' differences nor the squares overflow.
    """
    big = max(float(np.max(s)), -float(np.min(s))) if np.size(s) else 0.0  # no temporary of s's size
    if big > _HUGE:
        unit = 2.0 ** np.ceil(np.log2(big / _HUGE))
        center, scale = robust_scale(s / unit, None if sorted_values is None else np.asarray(sorted_values) / unit)
        return center * unit, np.minimum(scale * unit, np.finfo(float).max)
    if sorted_values is None:
        q25, center, q75 = np.percentile(s, [25, 50, 75], axis=0)
    else:
        xs = np.asarray(sorted_values).reshape(-1, s.shape[0])
        q25, center, q75 = (sorted_percentile(xs, q) for q in (0.25, 0.5, 0.75))
    scale = (q75 - q25) / 1.349
    if not np.all(scale > 0):
        sd = s.std(axis=0)  # a constant column's can be 1e-16, not 0: "constant" is read off its range
        spread = (sd > 0) & (np.max(s, axis=0) > np.min(s, axis=0))
        scale = np.where(scale > 0, scale, np.where(spread, sd, 1.0))
    return center, scale


_HUGE = 1e150


def sorted_percentile(xs, q):
    """``numpy.percentile(xs, 100 * q, axis=-1)`` of ``xs`` sorted along its last axis
    ("linear" method, numpy's arithmetic)."""
    n = xs.shape[-1]
    virtual = (n - 1) * q
    if virtual >= n - 1:
        return xs[..., -1].copy()
    below = np.floor(virtual)
    return numpy_lerp(xs[..., int(below)], xs[..., int(below) + 1], virtual - below)


def numpy_lerp(a, b, gamma):
    """``a + (b - a) * gamma`` with numpy's arithmetic for its "linear" percentiles (from ``b`` when gamma >= 0.5)."""
    diff = b - a
    return b - diff * (1 - gamma) if gamma >= 0.5 else a + diff * gamma


def interp_grid(s, lo, hi, table):
    """Linear interpolation of per-class uniform grids, vectorised over (M, K).

    Column ``k`` of ``s`` is read off ``table[k]`` (values on
    ``linspace(lo[k], hi[k], G)``); scores outside ``[lo, hi]`` are clamped.
    One compiled pass, rows in parallel (the arithmetic of the numpy form:
    ``t = clip((s - lo) / width, 0, 1) * (G - 1)``, cell ``min(int(t), G - 2)``).
    """
    return interp_grids(s, lo, hi, np.asarray(table, dtype=float)[None])[0]


def interp_grids(s, lo, hi, tables):
    """:func:`interp_grid` of the same scores on several tables of shape (K, G) at once: shape (T, M, K).

    Each score's cell and fraction are found once for all ``tables`` (T, K, G)
    (cross-validation reads every candidate's table at a fold's rows), with the
    arithmetic of :func:`interp_grid`.
    """
    s = np.ascontiguousarray(s, dtype=float)
    tables = np.ascontiguousarray(tables, dtype=float)
    out = np.empty((tables.shape[0], *s.shape))
    width = np.where(hi > lo, hi - lo, 1.0)
    _interp_rows(s, np.ascontiguousarray(lo, dtype=float), width, tables, out)
    return out


def _interp_rows_python(s, lo, width, tables, out):
    m, n_cols = s.shape
    n_tables, _, n_grid = tables.shape
    for r in prange(m):
        cell = np.empty(n_cols, np.intp)  # the row's cells and fractions, then each table's row in turn
        fraction = np.empty(n_cols)
        for k in range(n_cols):
            t = min(max((s[r, k] - lo[k]) / width[k], 0.0), 1.0) * (n_grid - 1)
            if not t == t:  # NaN in, NaN out
                cell[k] = -1
                continue
            cell[k] = min(int(t), n_grid - 2)
            fraction[k] = t - cell[k]
        for j in range(n_tables):
            for k in range(n_cols):
                i = cell[k]
                if i < 0:
                    out[j, r, k] = np.nan
                else:
                    frac = fraction[k]
                    out[j, r, k] = tables[j, k, i] * (1 - frac) + tables[j, k, i + 1] * frac


_interp_rows = jit_parallel(_interp_rows_python)


def column_orders(values):
    """(K, M) stable argsort of each column of an (M, K) matrix."""
    return stable_argsort(np.ascontiguousarray(values.T))


def restrict_order(order, keep):
    """Each row of ``order`` (argsorts over M rows) restricted to the rows ``keep`` (bool, M).

    Returns positions among the kept rows: the stable argsort of the kept rows'
    values when ``order`` was that of all rows.
    """
    kept = order[keep[order]].reshape(order.shape[0], int(keep.sum()))
    position = np.cumsum(keep) - 1
    return position[kept]
