"""The robust per-class grids: the asinh transform of the scores and linear interpolation on the grid."""

import numpy as np


def forward(s, center, scale, asinh):
    z = (s - center) / scale
    return np.where(asinh > 0, np.arcsinh(z), z)


def backward(t, center, scale, asinh):
    return center + scale * np.where(asinh > 0, np.sinh(t), t)


def robust_scale(s):
    """Per-column median and scale (IQR / 1.349, else the standard deviation, else 1)."""
    q25, center, q75 = np.percentile(s, [25, 50, 75], axis=0)
    scale = (q75 - q25) / 1.349
    sd = s.std(axis=0)
    scale = np.where(scale > 0, scale, np.where(sd > 0, sd, 1.0))
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
