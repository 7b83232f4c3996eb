"""The score-model registry: one table of every per-class score model, read by everything that names one.

Each :class:`ScoreModelSpec` says, once: its name, its route (``"posterior"``: an
LPR table, or ``"density"``: two densities), how it is fitted, which fitted arrays
a saved model holds (``params``), and whether ``kind="auto"`` considers it
(``AUTO_CANDIDATES``, in table order). :func:`~hmcpgm.likelihood.fit_score_model`,
:func:`~hmcpgm.likelihood.cross_validated_lpr`, :class:`~hmcpgm.likelihood.ScoreModel`,
model files, ``MLPR``'s parameter check and the command line read it; a new score
model is one entry in ``_TABLE`` below (its fitter in ``_tables.py`` or a module of
its own) plus its tests (docs/concepts.md, "Adding a score model").

Saved models store the per-class choice of ``"auto"`` as candidate *names*. Files
written before (model file format 3 and older) stored positions in the candidate
list of that time, frozen here as ``LEGACY_AUTO_CANDIDATES``: they load as the
same models.
"""

from dataclasses import dataclass, field

import numpy as np

from ..exceptions import InputError
from ..options import check_choice
from ._common import TRANSFORMS
from ._grid import backward, column_orders, forward, robust_scale
from ._kernel import kde_tables, kernel_lpr_tables
from ._tables import isotonic_tables, logistic_tables, platt_tables, pooled_tables, precision_tables

__all__ = ["ScoreModelSpec", "SCORE_MODELS", "POSTERIOR_MODELS", "AUTO_CANDIDATES", "AUTO_BASELINE",
           "LEGACY_AUTO_CANDIDATES", "get_score_model", "check_options", "fit_grid_models", "GridData",
           "choice_names"]

_GRID = ("lo", "hi", "center", "scale", "asinh")
_BANDWIDTH_RULES = ("silverman", "scott", "normal_reference")


@dataclass(frozen=True)
class GridData:
    """What a grid model's fitter may read: the training data on the grid's scale.

    Attributes
    ----------
    s, t : ndarray of shape (M, K)
        Scores, and scores on the transformed scale of the grid.
    y : ndarray of bool, shape (M, K)
    grid : ndarray of shape (K, G)
        Grid points on the transformed scale.
    lo, hi, center, scale, asinh : ndarray of shape (K,)
        Grid ends and the transform.
    prevalence : ndarray of shape (K,)
    opts : dict
        The checked options of :func:`~hmcpgm.likelihood.fit_score_model`.
    t_order : ndarray of shape (K, M) or None
        Stable argsort of each column of ``t`` (when a model needs it).
    robust : tuple or None
        Per-class median and robust scale of ``s`` (when a model needs it).
    pooled_events : tuple or None
        Scores and labels of every event, sorted by score (a shared model, when known).

    The fitters read their classes' columns through :meth:`columns`, which makes
    each subset once for all of them (the models only read it).
    """

    s: np.ndarray
    t: np.ndarray
    y: np.ndarray
    grid: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    center: np.ndarray
    scale: np.ndarray
    asinh: np.ndarray
    prevalence: np.ndarray
    opts: dict
    t_order: np.ndarray = None
    robust: tuple = None
    pooled_events: tuple = None
    _subsets: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def columns(self, name, cols):
        """``s``, ``t`` or ``y`` at the classes ``cols`` (``t_order``: its rows ``cols``), shared, not to be written.

        Made once per array and classes (every candidate of a fold reads the same
        ones). Always the indexed copy, even of all the classes: its memory order
        (column-major for ``[:, cols]``) fixes the order of the fitters' sums.
        """
        key = (name, np.asarray(cols).tobytes())
        if key not in self._subsets:
            whole = getattr(self, name)
            self._subsets[key] = whole[cols] if name == "t_order" else whole[:, cols]
        return self._subsets[key]

    def scores_grid(self, cols):
        """The grid of classes ``cols`` on the scale of the scores (K', G)."""
        return backward(self.grid[cols], self.center[cols, None], self.scale[cols, None], self.asinh[cols, None])


@dataclass(frozen=True)
class ScoreModelSpec:
    """One score model of :func:`~hmcpgm.likelihood.fit_score_model`.

    Attributes
    ----------
    name : str
        What ``kind=`` (and ``MLPR(score_model=...)``) is set to.
    route : {"posterior", "density"}
        ``"posterior"``: the model fits ``P(Y_k = 1 | s)`` on a grid (``params`` end with
        ``"lpr"``); ``"density"``: it fits ``p(s | Y_k = y)``.
    fit : callable
        Grid models: ``fit(data, cols)`` with ``data`` a :class:`GridData` and ``cols`` the
        classes to fit -> an ``(len(cols), G)`` LPR table (posterior route) or a dict of
        ``(K, G)`` density tables (density route). Models off the grid (``on_grid`` False):
        ``fit(s, y, informative)`` -> a dict of parameter arrays.
    params : tuple of str
        The fitted arrays a saved model holds.
    auto : bool
        ``kind="auto"`` considers it (``AUTO_CANDIDATES``).
    on_grid : bool
        Evaluated by interpolating tables on the grid.
    log_densities : callable or None
        Off-grid density models: ``log_densities(params, s)`` -> ``(M, K, 2)``.
    needs_order : bool
        The fitter reads ``data.t_order``.
    needs_robust : bool
        The fitter reads ``data.robust``.
    shared : bool
        Fitted on every informative class whenever it is fitted for one (its parameters are
        shared across classes); the pooled model.
    """

    name: str
    route: str
    fit: object
    params: tuple
    auto: bool = False
    on_grid: bool = True
    log_densities: object = None
    needs_order: bool = False
    needs_robust: bool = False
    shared: bool = False


def _lpr(data, cols):
    return kernel_lpr_tables(data.columns("t", cols), data.columns("y", cols), data.lo[cols], data.hi[cols],
                             data.prevalence[cols], data.opts, data.columns("t_order", cols))


def _isotonic(data, cols):
    return isotonic_tables(data.columns("t", cols), data.columns("y", cols), data.grid[cols], data.prevalence[cols],
                           data.opts["prior_count"], data.opts["min_count"], data.columns("t_order", cols))


def _platt(data, cols):
    return platt_tables(data.columns("t", cols), data.columns("y", cols), data.grid[cols])


def _logistic(data, cols):  # Platt scaling on the scores as they are (logit-like first stages)
    return logistic_tables(data.columns("s", cols), data.columns("y", cols), data.scores_grid(cols),
                           data.robust[0][cols], data.robust[1][cols])


def _pooled(data, cols):
    return pooled_tables(data.columns("s", cols), data.columns("y", cols), data.scores_grid(cols),
                         data.pooled_events)


def _precision(data, cols):
    return precision_tables(data.columns("t", cols), data.columns("y", cols), data.grid[cols])


def _kde(data, cols):
    return kde_tables(data.t, data.y, cols, data.lo, data.hi, data.opts)


def _spread(x):
    """The sample standard deviation of ``x``: exactly 0 when ``x`` is constant, and unit free.

    A constant sample's ``std`` is rounding noise (1e-16 for 0.3s), not 0; scores near
    1e-300 have squares that underflow to 0, so they are measured in units of their largest.
    """
    if len(x) < 2 or x.min() == x.max():
        return 0.0
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):  # scores near 1e300: the squares overflow
        sd = x.std(ddof=1)
    if not 0 < sd < np.inf:
        unit = np.abs(x).max()
        sd = (x / unit).std(ddof=1) * unit
    return float(sd)


def _mean(x):
    """The mean of ``x``, in units of its largest value where the sum overflows (scores near 1e306)."""
    with np.errstate(over="ignore", invalid="ignore"):
        mean = x.mean()
    if not np.isfinite(mean):
        unit = np.abs(x).max()
        mean = (x / unit).mean() * unit
    return float(mean)


def _fit_gaussian(s, y, informative):
    m, n_classes = s.shape
    mean = np.zeros((n_classes, 2))
    sd = np.ones((n_classes, 2))
    sd_all = np.array([_spread(s[:, k]) for k in range(n_classes)])
    for k in np.flatnonzero(informative):
        for label in (0, 1):
            x = s[y[:, k] == label, k]
            mean[k, label] = _mean(x)
            sd_k = _spread(x) if len(x) > 1 else sd_all[k]
            # guard zero variance: a constant sample borrows the spread of all scores,
            # and nothing is narrower than 1e-6 of it (or 1e-6 if all scores are equal)
            floor = 1e-6 * (sd_all[k] if sd_all[k] > 0 else 1.0)
            if not sd_k > 0:
                sd_k = sd_all[k] if sd_all[k] > 0 else 1.0
            sd[k, label] = max(sd_k, floor)
    return {"mean": mean, "sd": sd}


def _gaussian_log_densities(params, s):
    # clipped so z * z stays finite for scores like 1e300
    z = np.clip((s[..., None] - params["mean"]) / params["sd"], -1e150, 1e150)
    return -0.5 * z * z - np.log(params["sd"]) - 0.5 * np.log(2 * np.pi)


# The table. Its order is the order of SCORE_MODELS and of AUTO_CANDIDATES (the cross-validated
# candidates' axis); saved models name their choices, so reordering it does not change old files.
_TABLE = (
    ScoreModelSpec("lpr", "posterior", _lpr, (*_GRID, "lpr"), auto=True, needs_order=True),
    ScoreModelSpec("gaussian", "density", _fit_gaussian, ("mean", "sd"), on_grid=False,
                   log_densities=_gaussian_log_densities),
    ScoreModelSpec("kde", "density", _kde, (*_GRID, "density0", "density1")),
    ScoreModelSpec("precision", "posterior", _precision, (*_GRID, "lpr")),
    ScoreModelSpec("isotonic", "posterior", _isotonic, (*_GRID, "lpr"), auto=True, needs_order=True),
    ScoreModelSpec("platt", "posterior", _platt, (*_GRID, "lpr"), auto=True),
    ScoreModelSpec("pooled", "posterior", _pooled, (*_GRID, "lpr"), auto=True, shared=True),
    ScoreModelSpec("logistic", "posterior", _logistic, (*_GRID, "lpr"), auto=True, needs_robust=True),
)
_SPECS = {spec.name: spec for spec in _TABLE}

SCORE_MODELS = (*_SPECS, "auto")
"""Per-class score models of :func:`hmcpgm.likelihood.fit_score_model` (the registry's names, then "auto")."""

POSTERIOR_MODELS = (*(n for n, s in _SPECS.items() if s.route == "posterior"), "auto")
"""The score models that estimate ``P(Y_k = 1 | s)`` (the ones cross-fitting supports)."""

AUTO_CANDIDATES = tuple(n for n, s in _SPECS.items() if s.auto)
"""The candidates of ``kind="auto"``, in the order of the cross-validated axis."""

AUTO_BASELINE = AUTO_CANDIDATES.index("logistic")  # kept unless another candidate is clearly better

LEGACY_AUTO_CANDIDATES = ("lpr", "isotonic", "platt", "pooled", "logistic")
"""The candidates of model files of format 3 and older, whose ``choice`` held positions in this tuple."""

AUTO_PARAMS = ("choice", "candidates")  # the "auto" model's arrays of names (the rest are numbers)


def get_score_model(name):
    """The registry's entry for a score model (not ``"auto"``, which chooses among them).

    Parameters
    ----------
    name : str
        A score model's name.

    Returns
    -------
    ScoreModelSpec
        Its entry in the registry.

    Examples
    --------
    >>> spec = get_score_model("isotonic")
    >>> spec.route, spec.auto
    ('posterior', True)
    """
    check_choice(name, "kind", tuple(_SPECS))
    return _SPECS[name]


def param_names(kind):
    """The arrays a fitted ``kind`` model holds (``"auto"``: the grid, its LPRs, choices and losses)."""
    if kind == "auto":
        return (*_GRID, "lpr", "choice", "candidates", "cv_log_loss")
    return get_score_model(kind).params


def choice_names(choice, candidates=None, n_classes=None):
    """The per-class choice of an ``"auto"`` model as names; positions of old files read through the legacy table.

    ``choice`` holds names (files of format 4 on) or positions in
    ``LEGACY_AUTO_CANDIDATES`` (older files); every name must be a posterior-route
    model of the registry. Raises :class:`InputError` in one line otherwise.
    """
    choice = np.asarray(choice)
    if choice.ndim != 1 or (n_classes is not None and len(choice) != n_classes):
        raise InputError(f"the score model's choice must hold one name per class ({n_classes}), got shape "
                         f"{choice.shape}")
    if choice.dtype.kind in "fiu":  # positions: a model file of format 3 or older
        pos = choice.astype(float)
        if not np.all((pos == np.round(pos)) & (pos >= 0) & (pos < len(LEGACY_AUTO_CANDIDATES))):
            raise InputError(f"the score model's choice holds positions {sorted(set(pos.tolist()))}, not all "
                             f"in the old candidate list {LEGACY_AUTO_CANDIDATES}; refit the model")
        choice = np.array([LEGACY_AUTO_CANDIDATES[int(i)] for i in pos], dtype=str)
    elif choice.dtype.kind != "U":
        raise InputError(f"the score model's choice must hold candidate names, got dtype {choice.dtype}")
    allowed = tuple(AUTO_CANDIDATES if candidates is None else candidates)
    bad = sorted(n for n in set(choice.tolist())
                 if n not in allowed or n not in _SPECS or _SPECS[n].route != "posterior")
    if bad:
        raise InputError(f"the score model's choice names {bad}, which are not candidates of this hmcpgm "
                         f"({list(allowed)}); refit the model with this version")
    return choice.astype(str)


def check_options(kind, bandwidth, gridsize, eps, prior_count, min_count, transform, cv):
    """The checked options of :func:`~hmcpgm.likelihood.fit_score_model`, or a one-line :class:`InputError`."""
    check_choice(kind, "kind", SCORE_MODELS)
    if isinstance(bandwidth, str):
        if bandwidth not in _BANDWIDTH_RULES:
            raise InputError(
                f"bandwidth must be one of {_BANDWIDTH_RULES} or a positive number, got {bandwidth!r}"
            )
    elif isinstance(bandwidth, bool) or not (np.isscalar(bandwidth) and np.isfinite(bandwidth) and bandwidth > 0):
        raise InputError(f"bandwidth must be one of {_BANDWIDTH_RULES} or a positive number, got {bandwidth!r}")
    if isinstance(gridsize, bool) or not isinstance(gridsize, (int, np.integer)) or gridsize < 16:
        raise InputError(f"gridsize must be an int >= 16, got {gridsize!r}")
    if not (np.isscalar(eps) and 0 < eps < 0.5):
        raise InputError(f"eps must be a number in (0, 0.5), got {eps!r}")
    for name, value in (("prior_count", prior_count), ("min_count", min_count)):
        if isinstance(value, bool) or not (np.isscalar(value) and np.isfinite(value) and value >= 0):
            raise InputError(f"{name} must be a finite number >= 0, got {value!r}")
    if transform not in TRANSFORMS:
        raise InputError(f"transform must be one of {TRANSFORMS}, got {transform!r}")
    if isinstance(cv, bool) or not isinstance(cv, (int, np.integer)) or cv < 2:
        raise InputError(f"cv must be an int of at least 2, got {cv!r}")
    return {"bandwidth": bandwidth, "gridsize": int(gridsize), "eps": float(eps), "prior_count": float(prior_count),
            "min_count": float(min_count), "transform": transform}


def fit_grid_models(s, y, informative, prevalence, kinds, opts, only=None, order=None, pooled_events=None):
    """Grid parameters shared by the models, and one LPR (or density) table per kind.

    ``only`` ({kind index: bool mask}) restricts a kind to some classes (the
    others keep the prevalence); a ``shared`` model (pooled) is fitted on every
    class whenever one needs it, since its map and prior are shared. ``order`` ((K, M)
    stable argsort of each column of ``s``) and ``pooled_events`` (the scores and
    labels of the informative classes, in increasing order of score) save the sorts
    when the caller has them (cross-validation sorts once for all folds).
    """
    from .._sorting import stable_argsort

    specs = [get_score_model(kind) for kind in kinds]
    density = [spec for spec in specs if spec.route == "density"]
    m, n_classes = s.shape
    # per-class median and robust scale: the asinh grid's and the "logistic" fence's
    robust = None
    if opts["transform"] == "asinh" or any(spec.needs_robust for spec in specs):
        robust = robust_scale(s, None if order is None else np.take_along_axis(s.T, order, axis=1))
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
    t_order = None
    if any(spec.needs_order for spec in specs) and not density:
        # t is a non-decreasing map of s: the sort of s, ties of t put back in index order
        t_order = column_orders(t) if order is None else stable_argsort(t.T, order)
    data = GridData(s, t, y, grid, lo, hi, center, scale, asinh, prevalence, opts, t_order, robust, pooled_events)
    if density:
        params.update(density[0].fit(data, cols))
        return params
    tables = np.empty((len(kinds), n_classes, opts["gridsize"]))
    tables[:] = prevalence[None, :, None]
    all_cols = cols
    for i, spec in enumerate(specs):
        cols = all_cols
        if only is not None:
            if not np.any(only[i][all_cols]):
                continue
            if not spec.shared:
                cols = all_cols[only[i][all_cols]]
        if not len(cols):
            continue
        tables[i, cols] = np.clip(spec.fit(data, cols), opts["eps"], 1.0 - opts["eps"])
    params["lpr_by_kind"] = tables
    return params
