"""The LPR tables of the grid models: isotonic, Platt, logistic, pooled and precision.

The kernel tables are in ``_kernel``; the registry (``_registry``) says which
function fits which model and runs them (``fit_grid_models``).
"""

import numpy as np

from ._grid import forward, positives_rank_high, robust_scale


def isotonic_tables(t, y, grid, prevalence, prior_count, min_count, order):
    from ..calibration import isotonic_columns

    return isotonic_columns(t, y, grid, increasing=positives_rank_high(t, y, order), prior_rate=prevalence,
                            prior_count=prior_count, min_count=min_count, order=order)


def platt_tables(t, y, grid):
    from ..calibration import fit_logistic_pairs

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


def logistic_tables(s, y, grid_s, center, scale):
    """Platt scaling on the scores as they are, robust to a few extreme scores.

    Scores are measured in robust scales (``scale``) from the class's median
    (``center``) and clipped at ``_FENCE`` of them: one score of 1e6 neither
    inflates the standard deviation (which would squeeze every other score
    together) nor pulls the slope.
    """
    with np.errstate(over="ignore"):  # beyond the fence anyway
        z = np.clip((s - center) / scale, -_FENCE, _FENCE)
        zg = np.clip((grid_s - center[:, None]) / scale[:, None], -_FENCE, _FENCE)
    return platt_tables(z, y, zg)


def pooled_tables(s, y, grid_s, events=None, n_em=6):
    """Empirical-Bayes pooled map: ``logit LPR_k = a_k + b_k logit g(s)``, ``(a_k, b_k)`` shrunk together.

    ``events``: ``(scores, labels)`` of every entry of ``s`` and ``y``, in increasing
    order of score, if at hand (the isotonic fit of ``g`` sums the labels of equal
    values, so any order of ties gives the same map).
    """
    from ..calibration import fit_logistic_pairs_shrunk, isotonic_knots

    # knots on a robust scale of the pooled scores, so that one extreme score moves the
    # centre of the top block by a few units, not to the extreme value
    center, scale = robust_scale(s.reshape(-1, 1), None if events is None else events[0])
    if events is None:
        u, labels = forward(s, center[0], scale[0], 1.0).ravel(), y.ravel()
        order = np.argsort(u)  # ties in any order (see above)
    else:  # non-decreasing in the score: still sorted
        u, labels = forward(events[0], center[0], scale[0], 1.0), events[1]
        order = "sorted"
    kx, ky, _ = isotonic_knots(u, labels.astype(float), prior_rate=float(y.mean()), prior_count=1.0,
                               min_count=10.0, order=order)

    def logit_g(x):
        g = np.clip(np.interp(forward(x, center[0], scale[0], 1.0), kx, ky), 1e-4, 1 - 1e-4)
        return np.log(g / (1 - g))

    theta, _, _ = fit_logistic_pairs_shrunk(logit_g(s), y, n_em=n_em, em_steps=2, final_steps=10)
    eta = theta[:, :1] + theta[:, 1:] * logit_g(grid_s)
    return 1.0 / (1.0 + np.exp(-np.clip(eta, -700, 700)))


def precision_tables(t, y, grid, n_quantiles=100):
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
        if len(first) < 5:  # too few distinct quantiles to smooth: each group's rate of positives, nearest group
            ys, bounds = yk[order], np.append(first, n)
            rate = np.array([ys[a:b].mean() for a, b in zip(bounds[:-1], bounds[1:])])
            out[j] = rate[np.searchsorted((xs[first[1:] - 1] + xs[first[1:]]) / 2, grid[j])]
            continue
        count = n - first
        u = first / n
        g = make_smoothing_spline(u, pos_above[first] / count, w=count / count.max())
        ug = np.clip(np.searchsorted(xs, grid[j], side="left") / n, u[0], u[-1])
        out[j] = g(ug) - (1 - ug) * g.derivative()(ug)
    return out
