"""Per-class score models: where the evidence vectors ``[L_k(0), L_k(1)]`` come from.

The Bayesian network sees a first-stage score ``S_k`` only through the
likelihood pair ``L_k(y)`` proportional to ``p(S_k | Y_k = y)``. This module
fits one score model per class from training scores and labels.

Posterior route: ``L_k(y) = P(Y_k = y | s) / P(Y_k = y)`` with ``P(Y_k = 1 | s)``
the class's local precision rate ``LPR_k(s)`` and ``P(Y_k = 1)`` its training
prevalence. ``LPR_k`` is estimated by one of

``"lpr"`` (default)
    the kernel estimate ``LPR = 1 - pi0 f0 / f`` (Jiang, Liu & Huang 2014),
    written as the kernel-weighted rate of positives near ``s``: with
    ``n(s) = sum_i exp(-(t(s) - t_i)^2 / (2 h^2))`` the kernel-weighted number of
    training objects near ``s`` and ``n1(s)`` that of positives,
    ``LPR = (n1 + c p) / (n + c)``, shrunk toward the prevalence ``p`` by
    ``c = prior_count`` pseudo-objects (``c = 0`` is the plain kernel
    estimate). Where fewer than ``min_count`` objects are near (the tails, the
    scores of rare classes), the window widens (bandwidths ``h, 2h, ..., 16h``)
    until it holds ``min_count`` objects, so the LPR there is what the counts
    support and not ``1 - eps`` from one or two positives.
``"isotonic"``
    a monotone fit (increasing or decreasing, the direction of the class's
    rank correlation); neighbouring blocks merged until each holds
    ``min_count`` objects, each block's rate shrunk toward the prevalence by
    ``prior_count``; linear between block centres.
``"platt"``
    logistic regression of the label on the (transformed) score, with Platt's
    targets ``(n1 + 1) / (n1 + 2)`` and ``1 / (n0 + 2)``.
``"pooled"``
    empirical Bayes across classes: one increasing map ``g`` of the raw scores,
    fitted by isotonic regression on the events of every class pooled, and per
    class ``logit LPR_k = a_k + b_k logit g(s)`` with ``(a_k, b_k)`` drawn from a
    common Gaussian whose mean and variances are estimated from all classes (EM
    with Laplace approximations). A class with few positives is pulled to the
    common map; with a joint first stage, whose scores are on one scale, that
    keeps the raw ranking across classes.
``"auto"``
    per class, the candidate of ``AUTO_CANDIDATES`` with the smallest
    cross-validated log loss on the training rows (:func:`cross_validated_lpr`).
``"precision"``
    the R package's estimator: with ``u`` the score quantile and ``G(u)`` the
    precision of the objects scoring above it, ``LPR(u) = G(u) - (1 - u) G'(u)``,
    ``G`` read at 100 quantiles and smoothed by a cubic smoothing spline
    (scipy's ``make_smoothing_spline``, penalty by generalised cross-validation).
    Kept for comparison.

Density route: ``"gaussian"`` (normal densities per class and label) and
``"kde"`` (kernel density estimates ``f_{y,k}(s)``); the likelihood pair is the
two densities scaled so that the larger is 1 and the smaller is at least
``1e-12``.

Robust grids. Every model except ``"gaussian"`` is evaluated once, at fit time,
on a grid of ``gridsize`` points per class and interpolated linearly, vectorised
over all objects and classes. The grid is uniform on the transformed scale
``t = asinh((s - median) / scale)`` (``scale`` the class's interquartile range
/ 1.349, else its standard deviation, else 1; ``transform="none"`` keeps
``t = s``): near the median it is the standardised score, in the tails it grows
like a logarithm, so one training score of 1e6 stretches the grid by a few
units instead of squeezing every other score into one cell. Kernels (Gaussian)
work on ``t``; bandwidths come from statsmodels'
``select_bandwidth`` (Silverman's rule ``0.9 min(sd, IQR / 1.349) n^(-1/5)`` by
default) on ``t``; densities are binned (linear binning onto twice the
grid) and convolved by FFT for all classes at once. The grid spans the
training scores of the class; a score outside is clamped to the nearest end
(beyond the data a class gets the evidence of its most extreme training score).

A fitted model exports its parameters as plain arrays with
:meth:`ScoreModel.to_dict` and is rebuilt with :func:`score_model_from_dict`
(no pickle).
"""

import numpy as np

from ._util import preview
from ._validation import check_hierarchy, class_matrix, label_matrix
from .exceptions import InputError, LabelError
from .hierarchy import Hierarchy
from .options import SCORE_MODELS, check_choice

__all__ = [
    "AUTO_BASELINE",
    "AUTO_CANDIDATES",
    "POSTERIOR_MODELS",
    "ScoreModel",
    "cross_validated_lpr",
    "fit_score_model",
    "choose_candidates",
    "log_loss_by_class",
    "score_model_from_dict",
]

POSTERIOR_MODELS = ("lpr", "precision", "isotonic", "platt", "pooled", "auto")
AUTO_CANDIDATES = ("lpr", "isotonic", "platt", "pooled")
AUTO_BASELINE = AUTO_CANDIDATES.index("platt")  # kept unless another candidate is clearly better
TRANSFORMS = ("asinh", "none")
_BANDWIDTH_RULES = ("silverman", "scott", "normal_reference")
_MIN_RATIO = 1e-12  # density models: smaller likelihood of a pair >= this times the larger
_BALLOON = 2.0 ** np.arange(5)  # kernel LPR: bandwidth multiples tried where counts are thin
_OVERSAMPLE = 2  # kernel grids: binning and FFT on (gridsize - 1) * 2 + 1 points
_CHUNK = 256  # classes per FFT batch
_SUPPORT = 5  # kernel LPR: a grid point is well supported when its window holds 5 * min_count objects


# ---------------------------------------------------------------------- models
class ScoreModel:
    """A fitted per-class score model; build one with :func:`fit_score_model`.

    Attributes
    ----------
    kind : str
        One of ``SCORE_MODELS``.
    classes : tuple
        Column order of the score matrices it accepts.
    prevalence : ndarray of shape (K,)
        Training fraction of positives ``P(Y_k = 1)``.
    informative : ndarray of shape (K,), bool
        False for classes fitted without positives or without negatives (only
        with ``allow_empty=True``): their likelihoods are ``[1, 1]``.
    params : dict of ndarrays
        The fitted parameters: grid ends ``lo``, ``hi`` (on the transformed
        scale), the transform ``center``, ``scale`` and ``asinh`` flag, and the
        grid values (``lpr``, or ``density0`` and ``density1``), or the Gaussian
        ``mean`` and ``sd``. ``"auto"`` adds ``choice`` (index into
        ``AUTO_CANDIDATES`` per class) and ``cv_log_loss`` (K, candidates).
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

    @property
    def choice(self):
        """tuple of str: the score model chosen per class (``"auto"``), else ``kind`` for every class."""
        if "choice" in self.params:
            return tuple(AUTO_CANDIDATES[int(i)] for i in self.params["choice"])
        return (self.kind,) * self.n_classes

    def _scores(self, scores):
        return class_matrix(scores, self._hierarchy, "scores")

    def _t(self, s):
        p = self.params
        return _forward(s, p["center"], p["scale"], p["asinh"])

    def _table(self, s, name):
        p = self.params
        return _interp_grid(self._t(s), p["lo"], p["hi"], p[name])

    # -- evaluation -----------------------------------------------------
    def likelihoods(self, scores):
        """Evidence pairs ``[L_k(0), L_k(1)]`` for every object and class.

        Parameters
        ----------
        scores : array-like or DataFrame of shape (M, K)

        Returns
        -------
        ndarray of shape (M, K, 2)
            Finite and positive. Posterior route: ``P(Y=y | s) / P(Y=y)``;
            density models: the two densities scaled so the larger is 1.
        """
        s = self._scores(scores)
        if self.kind in POSTERIOR_MODELS:
            lpr = self._table(s, "lpr")
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

        The posterior route reads it from the fitted grid; the density models
        give ``p1 f1 / (p0 f0 + p1 f1)`` with the training prevalence ``p1``.

        Returns
        -------
        ndarray of shape (M, K)
        """
        s = self._scores(scores)
        p1 = np.broadcast_to(self.prevalence, s.shape)
        if self.kind in POSTERIOR_MODELS:
            out = self._table(s, "lpr")
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
        if self.kind in POSTERIOR_MODELS:
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
        f0 = self._table(s, "density0")
        f1 = self._table(s, "density1")
        # densities of t = asinh((s - c) / scale) -> densities of s (clamped like the grid)
        t = np.clip(self._t(s), p["lo"], p["hi"])
        with np.errstate(divide="ignore"):
            log_jac = np.where(p["asinh"] > 0, -np.log(p["scale"]) - np.log(np.cosh(t)), -np.log(p["scale"]))
            return np.log(np.stack([f0, f1], axis=-1)) + log_jac[..., None]

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


_GRID = ("lo", "hi", "center", "scale", "asinh")
_PARAM_NAMES = {
    "lpr": (*_GRID, "lpr"),
    "precision": (*_GRID, "lpr"),
    "isotonic": (*_GRID, "lpr"),
    "platt": (*_GRID, "lpr"),
    "pooled": (*_GRID, "lpr"),
    "auto": (*_GRID, "lpr", "choice", "cv_log_loss"),
    "gaussian": ("mean", "sd"),
    "kde": (*_GRID, "density0", "density1"),
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
    kind = data.get("kind")
    check_choice(kind, "data['kind']", SCORE_MODELS)
    names = list(_PARAM_NAMES[kind])
    params = {}
    if kind != "gaussian" and "center" not in data and "lo" in data:
        # models saved before the transform existed: grids on the raw scores
        k = len(np.atleast_1d(data["lo"]))
        params = {"center": np.zeros(k), "scale": np.ones(k), "asinh": np.zeros(k)}
        names = [n for n in names if n not in params]
    missing = [k for k in ("classes", "prevalence", "informative", *names) if k not in data]
    if missing:
        raise InputError(f"data for a {kind!r} score model lacks the keys {missing}")
    classes = tuple(data["classes"])
    if hierarchy is not None:
        check_hierarchy(hierarchy)
        if tuple(hierarchy.classes) != classes:
            raise InputError("hierarchy.classes differ from the classes the score model was fitted on")
    params.update({k: data[k] for k in names})
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
    prior_count=1.0,
    min_count=10.0,
    transform="asinh",
    cv=5,
    seed=0,
    cross_validation=None,
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
    kind : str, default "lpr"
        One of ``SCORE_MODELS``; see the module docstring.
    bandwidth : {"silverman", "scott", "normal_reference"} or float, default "silverman"
        Kernel bandwidth rule (statsmodels' ``select_bandwidth``) or a fixed
        bandwidth on the transformed scale; used by ``"lpr"`` and ``"kde"``. A
        sample whose rule gives 0 (e.g. a single positive) falls back to the
        bandwidth of all scores of the class.
    gridsize : int, default 512
        Grid points per class on which densities and LPRs are stored.
    eps : float, default 1e-6
        Posterior route: the local precision rate is clipped to ``[eps, 1 - eps]``.
    prior_count : float, default 1.0
        ``"lpr"`` and ``"isotonic"``: pseudo-objects at the class prevalence
        added to every local (or block) count; 0 turns the shrinkage off.
    min_count : float, default 10.0
        ``"lpr"``: the kernel window widens until it holds this many
        (kernel-weighted) training objects; ``"isotonic"``: blocks hold at
        least this many objects.
    transform : {"asinh", "none"}, default "asinh"
        Scale of the grids and kernels (see the module docstring).
    cv, seed : int
        ``"auto"``: folds (``KFold(cv, shuffle=True, random_state=seed)``) of the
        per-class choice.
    cross_validation : dict, optional
        ``"auto"``: the output of :func:`cross_validated_lpr` on these scores
        and labels with ``kinds=AUTO_CANDIDATES``, reused instead of recomputed.
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
    opts = _check_options(kind, bandwidth, gridsize, eps, prior_count, min_count, transform, cv)
    s = class_matrix(scores, hierarchy, "scores")
    y = label_matrix(labels, hierarchy, close=close_labels).astype(bool)
    if s.shape[0] != y.shape[0]:
        raise InputError(
            f"scores has {s.shape[0]} rows but labels has {y.shape[0]}; they must describe the same objects"
        )
    m = s.shape[0]
    n_pos = y.sum(axis=0)
    informative = (n_pos > 0) & (n_pos < m)
    if not allow_empty and not informative.all():
        raise LabelError(_empty_message(hierarchy, y, n_pos, m))
    prevalence = n_pos / m
    if kind == "gaussian":
        params = _fit_gaussian(s, y, informative)
    elif kind == "auto":
        cvres = cross_validation
        if cvres is None:
            cvres = cross_validated_lpr(s, y, hierarchy, AUTO_CANDIDATES, cv=cv, seed=seed, **opts)
        elif np.shape(cvres.get("lpr")) != (len(AUTO_CANDIDATES), *s.shape):
            raise InputError(
                f"cross_validation['lpr'] must have shape {(len(AUTO_CANDIDATES), *s.shape)} "
                f"(cross_validated_lpr with kinds=AUTO_CANDIDATES), got {np.shape(cvres.get('lpr'))}"
            )
        loss = log_loss_by_class(cvres["lpr"], y)
        choice = choose_candidates(cvres["lpr"], y, baseline=AUTO_BASELINE)
        params = _fit_grid_models(s, y, informative, prevalence, AUTO_CANDIDATES, opts,
                                  only={i: choice == i for i in range(len(AUTO_CANDIDATES))})
        params["lpr"] = params.pop("lpr_by_kind")[choice, np.arange(len(choice))]
        params["choice"] = choice.astype(float)
        params["cv_log_loss"] = loss
    else:
        params = _fit_grid_models(s, y, informative, prevalence, (kind,), opts)
        if kind != "kde":
            params["lpr"] = params.pop("lpr_by_kind")[0]
    return ScoreModel(kind, hierarchy.classes, prevalence, informative, params, hierarchy)


def _check_options(kind, bandwidth, gridsize, eps, prior_count, min_count, transform, cv):
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


# ---------------------------------------------------------------------- cross-validation
def cross_validated_lpr(scores, labels, hierarchy, kinds=AUTO_CANDIDATES, *, cv=5, seed=0, **options):
    """Out-of-fold local precision rates of several score models on the training rows.

    The rows are split into ``cv`` folds (``KFold(cv, shuffle=True,
    random_state=seed)``); each fold's LPRs come from models fitted on the other
    folds (``allow_empty=True``: a class without positives or negatives there
    gets its prevalence).

    Parameters
    ----------
    scores, labels, hierarchy
        As in :func:`fit_score_model`.
    kinds : sequence of str
        Posterior-route models (``POSTERIOR_MODELS`` except ``"auto"``).
    cv, seed : int
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
    s = class_matrix(scores, hierarchy, "scores")
    y = label_matrix(labels, hierarchy).astype(bool)
    if isinstance(cv, bool) or not isinstance(cv, (int, np.integer)) or not 2 <= cv <= len(s):
        raise InputError(f"cv must be an int between 2 and the {len(s)} rows, got {cv!r}")
    opts = _check_options("lpr", **{"bandwidth": "silverman", "gridsize": 512, "eps": 1e-6, "prior_count": 1.0,
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
        params = _fit_grid_models(s[train], yt, informative, prevalence[f], tuple(kinds), opts)
        t = _forward(s[test], params["center"], params["scale"], params["asinh"])
        for i in range(len(kinds)):
            lpr = _interp_grid(t, params["lo"], params["hi"], params["lpr_by_kind"][i])
            out[i][test] = np.where(informative, lpr, prevalence[f])
    return {"lpr": out, "folds": folds, "prevalence": prevalence}


def log_loss_by_class(p, labels, *, clip=1e-6):
    """Mean Bernoulli log loss per class: ``-mean(y log p + (1 - y) log(1 - p))``.

    Parameters
    ----------
    p : array of shape (..., M, K)
        Probabilities (leading axes, e.g. candidate models, are kept).
    labels : array of 0/1, shape (M, K)
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
    p = np.clip(np.asarray(p, dtype=float), clip, 1 - clip)
    y = np.asarray(labels, dtype=float)
    loss = -(y * np.log(p) + (1 - y) * np.log1p(-p)).mean(axis=-2)
    return np.moveaxis(loss, -1, 0)


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
    baseline : int
        Index of the candidate kept by default (``fit_score_model`` passes
        Platt scaling: two parameters per class, monotone, robust in the tails).
    margin : float

    Returns
    -------
    ndarray of int, shape (K,)
    """
    p = np.clip(np.asarray(p, dtype=float), clip, 1 - clip)
    y = np.asarray(labels, dtype=float)
    rows = -(y * np.log(p) + (1 - y) * np.log1p(-p))  # (C, M, K)
    diff = rows - rows[baseline:baseline + 1]  # paired against the baseline
    mean = diff.mean(axis=1)  # (C, K)
    se = diff.std(axis=1, ddof=1) / np.sqrt(max(y.shape[0], 1)) if y.shape[0] > 1 else np.zeros_like(mean)
    gain = np.where(mean < -margin * se, mean, 0.0)
    gain[baseline] = -1e-300  # the baseline wins every tie
    return np.argmin(gain, axis=0)


# ---------------------------------------------------------------------- grid models
def _forward(s, center, scale, asinh):
    z = (s - center) / scale
    return np.where(asinh > 0, np.arcsinh(z), z)


def _backward(t, center, scale, asinh):
    return center + scale * np.where(asinh > 0, np.sinh(t), t)


def _robust_scale(s):
    """Per-column median and scale (IQR / 1.349, else the standard deviation, else 1)."""
    q25, center, q75 = np.percentile(s, [25, 50, 75], axis=0)
    scale = (q75 - q25) / 1.349
    sd = s.std(axis=0)
    scale = np.where(scale > 0, scale, np.where(sd > 0, sd, 1.0))
    return center, scale


def _fit_grid_models(s, y, informative, prevalence, kinds, opts, only=None):
    """Grid parameters shared by the models, and one LPR (or density) table per kind.

    ``only`` ({kind index: bool mask}) restricts a kind to some classes (the
    others keep the prevalence); the pooled model is fitted on every class
    whenever one needs it, since its map and prior are shared.
    """
    m, n_classes = s.shape
    if opts["transform"] == "asinh":
        center, scale = _robust_scale(s)
        asinh = np.ones(n_classes)
    else:
        center, scale, asinh = np.zeros(n_classes), np.ones(n_classes), np.zeros(n_classes)
    t = _forward(s, center, scale, asinh)
    lo, hi = t.min(axis=0), t.max(axis=0)
    hi = np.where(hi > lo, hi, lo + 1.0)
    params = {"lo": lo, "hi": hi, "center": center, "scale": scale, "asinh": asinh}
    grid = lo[:, None] + (hi - lo)[:, None] * np.linspace(0.0, 1.0, opts["gridsize"])[None, :]
    cols = np.flatnonzero(informative)
    if "kde" in kinds:
        params.update(_kde_tables(t, y, cols, lo, hi, opts))
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
            table = _kernel_lpr_tables(t[:, cols], y[:, cols], lo[cols], hi[cols], prevalence[cols], opts)
        elif kind == "isotonic":
            table = _isotonic_tables(t[:, cols], y[:, cols], grid[cols], prevalence[cols], opts["prior_count"],
                                     opts["min_count"])
        elif kind == "platt":
            table = _platt_tables(t[:, cols], y[:, cols], grid[cols])
        elif kind == "pooled":
            grid_s = _backward(grid[cols], center[cols, None], scale[cols, None], asinh[cols, None])
            table = _pooled_tables(s[:, cols], y[:, cols], grid_s)
        else:  # precision
            table = _precision_tables(t[:, cols], y[:, cols], grid[cols])
        tables[i, cols] = np.clip(table, opts["eps"], 1.0 - opts["eps"])
    params["lpr_by_kind"] = tables
    return params


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


def _kernel_lpr_tables(t, y, lo, hi, prevalence, opts):
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


def _kde_tables(t, y, cols, lo, hi, opts):
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
    floor_d = _MIN_RATIO * mix.max(axis=1, keepdims=True)
    for table in dens.values():
        table[cols] = np.maximum(table[cols], floor_d)
    return dens


def _isotonic_tables(t, y, grid, prevalence, prior_count, min_count):
    from .calibration import isotonic_knots

    out = np.empty(grid.shape)
    ranks = np.argsort(np.argsort(t, axis=0, kind="stable"), axis=0)
    for j in range(t.shape[1]):
        yj = y[:, j]
        increasing = ranks[yj, j].mean() >= ranks[:, j].mean()
        kx, ky, _ = isotonic_knots(t[:, j], yj.astype(float), increasing=increasing,
                                   prior_rate=prevalence[j], prior_count=prior_count, min_count=min_count)
        out[j] = np.interp(grid[j], kx, ky)
    return out


def _platt_tables(t, y, grid):
    from .calibration import fit_logistic_pairs

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


def _pooled_tables(s, y, grid_s, n_em=6):
    """Empirical-Bayes pooled map: ``logit LPR_k = a_k + b_k logit g(s)``, ``(a_k, b_k)`` shrunk together."""
    from .calibration import fit_logistic_pairs, isotonic_knots

    # knots on a robust scale of the pooled scores, so that one extreme score moves the
    # centre of the top block by a few units, not to the extreme value
    center, scale = _robust_scale(s.reshape(-1, 1))
    u = np.arcsinh((s - center[0]) / scale[0])
    kx, ky, _ = isotonic_knots(u.ravel(), y.ravel().astype(float), prior_rate=float(y.mean()), prior_count=1.0,
                               min_count=10.0)

    def logit_g(x):
        g = np.clip(np.interp(np.arcsinh((x - center[0]) / scale[0]), kx, ky), 1e-4, 1 - 1e-4)
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
