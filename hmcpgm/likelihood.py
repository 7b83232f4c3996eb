"""Per-class score models: where the evidence vectors ``[L_k(0), L_k(1)]`` come from.

The Bayesian network sees a first-stage score ``S_k`` only through the
likelihood pair ``L_k(y)`` proportional to ``p(S_k | Y_k = y)``. This module
fits one score model per class from training scores and labels:

``"lpr"`` (the paper's default, posterior route)
    ``L_k(y) = P(Y_k = y | s) / P(Y_k = y)`` with ``P(Y_k = 1 | s)`` the local
    precision rate ``LPR_k(s) = 1 - pi0_k f0_k(s) / f_k(s)`` (Jiang, Liu & Huang
    2014): ``f0_k`` is a kernel density estimate of the scores of the negatives,
    ``f_k`` of the scores of all objects, ``pi0_k`` the negative fraction.
    ``LPR`` is clipped to ``[eps, 1 - eps]``; ``P(Y_k = 1)`` is the training
    prevalence.
``"gaussian"`` (density route)
    ``L_k(y)`` is the normal *density* (not the CDF) with a mean and standard
    deviation per class and label.
``"kde"`` (density route)
    ``L_k(y)`` is a kernel density estimate ``f_{y,k}(s)`` per class and label.
``"precision"`` (posterior route, the R package's estimator)
    as ``"lpr"``, but ``LPR_k`` comes from the precision curve: with ``u`` the
    score quantile and ``G(u)`` the precision of the objects scoring above it,
    ``LPR(u) = G(u) - (1 - u) G'(u)``. ``G`` is read at 100 quantiles and
    smoothed by a cubic smoothing spline (scipy's ``make_smoothing_spline``,
    penalty chosen by generalised cross-validation, points weighted by how many
    objects they average). Less accurate than ``"lpr"`` for the lowest scores
    (``G`` there averages nearly every object); kept for comparison.

Kernel density estimates use statsmodels' ``KDEUnivariate`` (Gaussian kernel,
FFT on a binned grid) with Silverman's rule of thumb by default,
``0.9 min(sd, IQR / 1.349) n^(-1/5)``. They are evaluated once, at fit time, on
a uniform grid of ``gridsize`` points per class; predictions interpolate that
grid linearly, vectorised over all objects and classes, so evaluating 10^5
objects costs a few array operations. The grid spans the range where the
density of all training scores of the class is numerically reliable (its value
at least ``1e-10`` of its maximum, about five bandwidths beyond the extreme
training scores); a score outside that range is clamped to its end, so it gets
the evidence of the most extreme reliable score.

Likelihoods are defined up to a positive factor per object and class. The
density models return pairs scaled so that the larger value is 1 and the
smaller is at least ``1e-12`` (so no single score can be infinitely strong
evidence and contradictory scores never make the network's evidence impossible);
:meth:`ScoreModel.densities` returns the unscaled densities.

A fitted model exports its parameters as plain arrays with
:meth:`ScoreModel.to_dict` and is rebuilt with :func:`score_model_from_dict`
(no pickle).
"""

import numpy as np

from ._validation import check_hierarchy, class_matrix, label_matrix
from .exceptions import InputError, LabelError
from .options import SCORE_MODELS, check_choice
from ._util import preview
from .hierarchy import Hierarchy

__all__ = [
    "ScoreModel",
    "fit_score_model",
    "score_model_from_dict",
]
_BANDWIDTH_RULES = ("silverman", "scott", "normal_reference")
_RELIABLE = 1e-10  # grid range: where the density of all scores is >= this times its maximum
_MIN_RATIO = 1e-12  # density models: smaller likelihood of a pair >= this times the larger
_CUT = 6.0  # statsmodels KDE support: extreme training scores +- _CUT bandwidths
_KDE_GRID = 4096  # statsmodels' own FFT grid (power of two)


# ---------------------------------------------------------------------- models
class ScoreModel:
    """A fitted per-class score model; build one with :func:`fit_score_model`.

    Attributes
    ----------
    kind : str
        ``"lpr"``, ``"gaussian"``, ``"kde"`` or ``"precision"``.
    classes : tuple
        Column order of the score matrices it accepts.
    prevalence : ndarray of shape (K,)
        Training fraction of positives ``P(Y_k = 1)``.
    informative : ndarray of shape (K,), bool
        False for classes fitted without positives or without negatives (only
        with ``allow_empty=True``): their likelihoods are ``[1, 1]``.
    params : dict of ndarrays
        The fitted parameters (grid ends and values, or means and sds).
    """

    def __init__(self, kind, classes, prevalence, informative, params, hierarchy=None):
        self.kind = kind
        self.classes = tuple(classes)
        self.prevalence = np.asarray(prevalence, dtype=float)
        self.informative = np.asarray(informative, dtype=bool)
        self.params = {k: np.asarray(v, dtype=float) for k, v in params.items()}
        if hierarchy is None:
            hierarchy = Hierarchy.from_edges([], classes=self.classes)
        self._hierarchy = hierarchy

    def __repr__(self):
        return f"ScoreModel(kind={self.kind!r}, n_classes={len(self.classes)})"

    @property
    def n_classes(self):
        """int: number of classes."""
        return len(self.classes)

    def _scores(self, scores):
        return class_matrix(scores, self._hierarchy, "scores")

    # -- evaluation -----------------------------------------------------
    def likelihoods(self, scores):
        """Evidence pairs ``[L_k(0), L_k(1)]`` for every object and class.

        Parameters
        ----------
        scores : array-like or DataFrame of shape (M, K)

        Returns
        -------
        ndarray of shape (M, K, 2)
            Finite and positive. ``"lpr"``: ``P(Y=y | s) / P(Y=y)``; density
            models: the two densities scaled so the larger is 1.
        """
        s = self._scores(scores)
        if self.kind in ("lpr", "precision"):
            lpr = _interp_grid(s, self.params["lo"], self.params["hi"], self.params["lpr"])
            p1 = np.where(self.informative, self.prevalence, 0.5)  # 0 or 1 when uninformative
            out = np.stack([(1 - lpr) / (1 - p1), lpr / p1], axis=-1)
        else:
            logf = self._log_densities(s)
            logf = logf - logf.max(axis=-1, keepdims=True)
            out = np.exp(np.maximum(logf, np.log(_MIN_RATIO)))
        out[:, ~self.informative, :] = 1.0
        return out

    def lpr(self, scores):
        """Local precision rate ``P(Y_k = 1 | S_k = s)`` for every object and class.

        ``"lpr"`` reads it from the fitted grid; the density models give
        ``p1 f1 / (p0 f0 + p1 f1)`` with the training prevalence ``p1``.

        Returns
        -------
        ndarray of shape (M, K)
        """
        s = self._scores(scores)
        p1 = np.broadcast_to(self.prevalence, s.shape)
        if self.kind in ("lpr", "precision"):
            out = _interp_grid(s, self.params["lo"], self.params["hi"], self.params["lpr"])
        else:
            logf = self._log_densities(s)
            # p1 f1 / (p0 f0 + p1 f1) = 1 / (1 + exp(log p0 f0 - log p1 f1))
            with np.errstate(divide="ignore"):
                z = np.log1p(-p1) + logf[..., 0] - np.log(p1) - logf[..., 1]
            out = 1.0 / (1.0 + np.exp(np.clip(z, -700, 700)))
        return np.where(self.informative, out, p1).astype(float)

    def densities(self, scores):
        """Fitted class-conditional densities ``[f_0k(s), f_1k(s)]`` (density models only).

        Returns
        -------
        ndarray of shape (M, K, 2)
        """
        if self.kind in ("lpr", "precision"):
            raise InputError(
                "densities() is defined for the 'gaussian' and 'kde' score models; "
                f"the {self.kind!r} model estimates P(Y | s), use lpr() or likelihoods()"
            )
        return np.exp(self._log_densities(self._scores(scores)))

    def _log_densities(self, s):
        p = self.params
        if self.kind == "gaussian":
            # clipped so z * z stays finite for scores like 1e300
            z = np.clip((s[..., None] - p["mean"]) / p["sd"], -1e150, 1e150)
            return -0.5 * z * z - np.log(p["sd"]) - 0.5 * np.log(2 * np.pi)
        f0 = _interp_grid(s, p["lo"], p["hi"], p["density0"])
        f1 = _interp_grid(s, p["lo"], p["hi"], p["density1"])
        with np.errstate(divide="ignore"):
            return np.log(np.stack([f0, f1], axis=-1))

    # -- export ---------------------------------------------------------
    def to_dict(self):
        """The model as a dict of plain values and numpy arrays (no pickle needed).

        Arrays can be saved with ``numpy.savez`` or turned into lists for JSON;
        :func:`score_model_from_dict` rebuilds the model.
        """
        return {
            "kind": self.kind,
            "classes": list(self.classes),
            "prevalence": self.prevalence.copy(),
            "informative": self.informative.copy(),
            **{k: v.copy() for k, v in self.params.items()},
        }


_PARAM_NAMES = {
    "lpr": ("lo", "hi", "lpr"),
    "precision": ("lo", "hi", "lpr"),
    "gaussian": ("mean", "sd"),
    "kde": ("lo", "hi", "density0", "density1"),
}


def score_model_from_dict(data, hierarchy=None):
    """Rebuild a :class:`ScoreModel` from :meth:`ScoreModel.to_dict` output.

    Parameters
    ----------
    data : dict
        Values may be lists (from JSON) or arrays.
    hierarchy : Hierarchy, optional
        Used only to reorder DataFrame columns; must have the same classes.

    Examples
    --------
    >>> import numpy as np
    >>> from hmcpgm import Hierarchy
    >>> h = Hierarchy.from_parents([None, 0])
    >>> rng = np.random.default_rng(0)
    >>> y = np.array([[1, 1], [1, 0], [0, 0], [1, 1]] * 25)
    >>> s = y + rng.normal(size=y.shape)
    >>> model = fit_score_model(s, y, h, kind="gaussian")
    >>> again = score_model_from_dict(model.to_dict())
    >>> bool(np.allclose(again.likelihoods(s), model.likelihoods(s)))
    True
    """
    kind = check_choice(data.get("kind"), "data['kind']", SCORE_MODELS)
    missing = [k for k in ("classes", "prevalence", "informative", *_PARAM_NAMES[kind]) if k not in data]
    if missing:
        raise InputError(f"data for a {kind!r} score model lacks the keys {missing}")
    classes = tuple(data["classes"])
    if hierarchy is not None:
        check_hierarchy(hierarchy)
        if tuple(hierarchy.classes) != classes:
            raise InputError("hierarchy.classes differ from the classes the score model was fitted on")
    params = {k: data[k] for k in _PARAM_NAMES[kind]}
    return ScoreModel(kind, classes, data["prevalence"], data["informative"], params, hierarchy)


# ---------------------------------------------------------------------- fitting
def fit_score_model(
    scores,
    labels,
    hierarchy,
    kind="lpr",
    *,
    bandwidth="silverman",
    gridsize=512,
    eps=1e-6,
    allow_empty=False,
    close_labels=False,
):
    """Fit one score model per class from training scores and labels.

    Parameters
    ----------
    scores : array-like or DataFrame of shape (M, K)
        First-stage scores (any real numbers; higher need not mean positive).
    labels : array-like or DataFrame of shape (M, K)
        0/1 labels that respect the hierarchy.
    hierarchy : Hierarchy
    kind : {"lpr", "gaussian", "kde", "precision"}, default "lpr"
        See the module docstring.
    bandwidth : {"silverman", "scott", "normal_reference"} or float, default "silverman"
        Kernel bandwidth rule (statsmodels) or a fixed bandwidth; used by
        ``"lpr"`` and ``"kde"``. A sample with zero spread (e.g. a single
        positive) falls back to the bandwidth of all scores of the class.
    gridsize : int, default 512
        Grid points per class on which densities and LPRs are stored.
    eps : float, default 1e-6
        ``"lpr"``, ``"precision"``: the local precision rate is clipped to ``[eps, 1 - eps]``.
    allow_empty : bool, default False
        A class with no positive (or no negative) training example is an error
        unless this is True; then its likelihoods are ``[1, 1]`` (its score
        carries no evidence) and its LPR is its prevalence.
    close_labels : bool, default False
        Close labels upward instead of raising on hierarchy violations.

    Returns
    -------
    ScoreModel

    Examples
    --------
    >>> import numpy as np
    >>> from hmcpgm import Hierarchy
    >>> h = Hierarchy.from_parents([None, 0])
    >>> rng = np.random.default_rng(0)
    >>> y = (rng.random((2000, 1)) < [0.5, 0.25]).astype(int)
    >>> y[:, 1] &= y[:, 0]
    >>> s = rng.normal(loc=2.0 * y)
    >>> model = fit_score_model(s, y, h, kind="lpr")
    >>> model.likelihoods(s).shape
    (2000, 2, 2)
    >>> lpr = model.lpr([[-3.0, -3.0], [5.0, 5.0]])
    >>> bool(lpr[0, 0] < 0.05 and lpr[1, 0] > 0.95)
    True
    """
    hierarchy = check_hierarchy(hierarchy)
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

    s = class_matrix(scores, hierarchy, "scores")
    y = label_matrix(labels, hierarchy, close=close_labels).astype(bool)
    if s.shape[0] != y.shape[0]:
        raise InputError(
            f"scores has {s.shape[0]} rows but labels has {y.shape[0]}; they must describe the same objects"
        )
    m, n_classes = s.shape
    n_pos = y.sum(axis=0)
    informative = (n_pos > 0) & (n_pos < m)
    if not allow_empty and not informative.all():
        raise LabelError(_empty_message(hierarchy, y, n_pos, m))
    prevalence = n_pos / m

    if kind == "gaussian":
        params = _fit_gaussian(s, y, informative)
    else:
        params = {"lo": np.zeros(n_classes), "hi": np.ones(n_classes)}
        names = ("density0", "density1") if kind == "kde" else ("lpr",)
        for name in names:
            params[name] = np.ones((n_classes, gridsize))
        for k in np.flatnonzero(informative):
            fit = {"lpr": _fit_lpr_class, "kde": _fit_kde_class, "precision": _fit_precision_class}[kind]
            fit(s[:, k], y[:, k], bandwidth, gridsize, eps, params, k)
    return ScoreModel(kind, hierarchy.classes, prevalence, informative, params, hierarchy)


def _empty_message(hierarchy, y, n_pos, m):
    parts = []
    no_pos = np.flatnonzero(n_pos == 0)
    if len(no_pos):
        never = [
            k for k in no_pos
            if len(hierarchy.parent_indices[k]) and not y[:, hierarchy.parent_indices[k]].all(axis=1).any()
        ]
        text = f"no positive example for {len(no_pos)} classes ({preview(hierarchy.classes[i] for i in no_pos)})"
        if never:
            text += (
                f", of which {len(never)} never have all parents positive "
                f"({preview(hierarchy.classes[i] for i in never)})"
            )
        parts.append(text)
    no_neg = np.flatnonzero(n_pos == m)
    if len(no_neg):
        parts.append(
            f"no negative example for {len(no_neg)} classes ({preview(hierarchy.classes[i] for i in no_neg)})"
        )
    return (
        "labels give " + "; ".join(parts) + ", so their score models cannot be fitted; "
        "drop those classes (Hierarchy.subgraph) or pass allow_empty=True to treat their "
        "scores as carrying no evidence"
    )


def _fit_gaussian(s, y, informative):
    m, n_classes = s.shape
    mean = np.zeros((n_classes, 2))
    sd = np.ones((n_classes, 2))
    sd_all = s.std(axis=0, ddof=1) if m > 1 else np.zeros(n_classes)
    for k in np.flatnonzero(informative):
        for label in (0, 1):
            x = s[y[:, k] == label, k]
            mean[k, label] = x.mean()
            sd_k = x.std(ddof=1) if len(x) > 1 else sd_all[k]
            # guard zero variance: a constant sample borrows the spread of all scores,
            # and nothing is narrower than 1e-6 of it (or 1e-6 if all scores are equal)
            floor = 1e-6 * (sd_all[k] if sd_all[k] > 0 else 1.0)
            if not sd_k > 0:
                sd_k = sd_all[k] if sd_all[k] > 0 else 1.0
            sd[k, label] = max(sd_k, floor)
    return {"mean": mean, "sd": sd}


def _kde(x, bandwidth, fallback):
    """statsmodels Gaussian FFT KDE of ``x``: (support, density, bw)."""
    from statsmodels.nonparametric.kde import KDEUnivariate

    x = np.asarray(x, dtype=float)
    if len(x) == 1:  # statsmodels needs two points; the KDE of [x, x] is that of [x]
        x = np.repeat(x, 2)
    kde = KDEUnivariate(x)
    try:
        kde.fit(kernel="gau", bw=bandwidth, fft=True, gridsize=_KDE_GRID, cut=_CUT)
    except RuntimeError:  # statsmodels: "Selected KDE bandwidth is 0"
        kde.fit(kernel="gau", bw=fallback, fft=True, gridsize=_KDE_GRID, cut=_CUT)
    return kde.support, np.maximum(kde.density, 0.0), float(kde.bw)


def _spread_fallback(x):
    """A bandwidth for samples whose rule gives 0: a small fraction of the range, or 1e-3."""
    span = float(np.ptp(x)) if len(x) else 0.0
    return 0.05 * span if span > 0 else 1e-3


def _reliable_range(support, density):
    ok = np.flatnonzero(density >= _RELIABLE * density.max())
    return support[ok[0]], support[ok[-1]]


def _fit_lpr_class(x, yk, bandwidth, gridsize, eps, params, k):
    # One bandwidth for f and f0, the smaller of the rule on all scores and on the
    # negatives: with a shared kernel f = pi0 f0 + pi1 f1 holds exactly, so the
    # estimated LPR stays within [0, 1] and its tails do not drift from a
    # bandwidth mismatch.
    bw_all = _kde(x, bandwidth, _spread_fallback(x))[2]
    bw = min(bw_all, _kde(x[~yk], bandwidth, bw_all)[2])
    sup_all, f_all, _ = _kde(x, bw, bw)
    sup_0, f_0, _ = _kde(x[~yk], bw, bw)
    lo, hi = _reliable_range(sup_all, f_all)
    grid = np.linspace(lo, hi, gridsize)
    f = np.interp(grid, sup_all, f_all, left=0.0, right=0.0)
    f0 = np.interp(grid, sup_0, f_0, left=0.0, right=0.0)
    pi0 = np.mean(~yk)
    ok = f > 0
    lpr = np.empty(gridsize)
    lpr[ok] = 1.0 - pi0 * f0[ok] / f[ok]
    if not ok.all():  # interpolation holes: take the nearest reliable value
        lpr[~ok] = np.interp(grid[~ok], grid[ok], lpr[ok])
    params["lo"][k], params["hi"][k] = lo, hi
    params["lpr"][k] = np.clip(lpr, eps, 1.0 - eps)


def _fit_kde_class(x, yk, bandwidth, gridsize, eps, params, k):
    fallback = _kde(x, bandwidth, _spread_fallback(x))[2]
    pi1 = np.mean(yk)
    sup_0, f_0, _ = _kde(x[~yk], bandwidth, fallback)
    sup_1, f_1, _ = _kde(x[yk], bandwidth, fallback)
    wide = np.linspace(min(sup_0[0], sup_1[0]), max(sup_0[-1], sup_1[-1]), 2 * _KDE_GRID)
    mix = (1 - pi1) * np.interp(wide, sup_0, f_0, 0.0, 0.0) + pi1 * np.interp(wide, sup_1, f_1, 0.0, 0.0)
    lo, hi = _reliable_range(wide, mix)
    grid = np.linspace(lo, hi, gridsize)
    floor = _MIN_RATIO * mix.max()
    params["lo"][k], params["hi"][k] = lo, hi
    params["density0"][k] = np.maximum(np.interp(grid, sup_0, f_0, 0.0, 0.0), floor)
    params["density1"][k] = np.maximum(np.interp(grid, sup_1, f_1, 0.0, 0.0), floor)


def _fit_precision_class(x, yk, bandwidth, gridsize, eps, params, k, n_quantiles=100):
    from scipy.interpolate import make_smoothing_spline

    n = len(x)
    order = np.argsort(x, kind="stable")
    xs = x[order]
    pos_above = np.concatenate([np.cumsum(yk[order][::-1])[::-1], [0]])  # positives at rank >= i
    cuts = np.quantile(xs, np.linspace(0, 1, n_quantiles + 1)[:-1])
    first = np.unique(np.searchsorted(xs, cuts, side="left"))  # ties: one point per distinct cut
    lo, hi = xs[0], xs[-1]
    grid = np.linspace(lo, hi, gridsize)
    if len(first) < 5:  # too few distinct scores to smooth: the class's prevalence
        lpr = np.full(gridsize, yk.mean())
    else:
        count = n - first
        u = first / n
        g = make_smoothing_spline(u, pos_above[first] / count, w=count / count.max())
        ug = np.clip(np.searchsorted(xs, grid, side="left") / n, u[0], u[-1])
        lpr = g(ug) - (1 - ug) * g.derivative()(ug)
    params["lo"][k], params["hi"][k] = lo, hi
    params["lpr"][k] = np.clip(lpr, eps, 1.0 - eps)


def _interp_grid(s, lo, hi, table):
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
