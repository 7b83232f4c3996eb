"""The neighbour stack: each class's posterior from its own and its neighbours' calibrated scores.

The network reads a first-stage score only through its own class's label. The
stack reads the neighbours' scores directly: per class ``k``, a logistic
regression of the label on

    L_k,  min_{p parent of k} L_p,  max_{c child of k} L_c,  log sum_{c child of k} exp(L_c)

with ``L`` the Platt-calibrated logits of the scores (clipped to
``+-logit(1 - 1e-6)``; a root has no parent term and a leaf no child terms,
their inputs are 0). Platt's map reads each class's scores on the score models'
robust scale, ``t = asinh((s - median) / scale)`` (``scale`` the interquartile
range / 1.349, :mod:`hmcpgm.likelihood`): on the raw scores one extreme training
score (1e6 among scores near 0) flattens the class's map.

The fit is penalised maximum likelihood: a Gaussian prior of precision ``lam``
centres the slopes on the class's own calibrated score (slope 1 on ``L_k``, 0 on
the neighbours), with a nearly flat prior on the intercept; Newton's method with
step halving, compiled, the classes in parallel. A class whose training labels do
not vary keeps its Platt probability.

:class:`hmcpgm.MLPR` averages it with the values after the pool
(``MLPR(stack=v)``; docs/concepts.md, "Stacking the neighbours' scores?"): two
estimates of ``P(Y_k = 1 | scores)``, one through the network's labels, one
fitted on the scores.
"""

from dataclasses import dataclass, field

import numpy as np
from numba import prange

from .._columns import class_matrix
from .._numba import jit, jit_parallel
from ..exceptions import InputError
from ._grid import forward, robust_scale

__all__ = ["DEFAULT_STACK_PRECISION", "NeighbourStack", "crossfitted_stack", "fit_neighbour_stack"]

DEFAULT_STACK_PRECISION = 10.0
"""The prior precision ``lam`` of the stack's slopes (``bench/stack_budget.py`` measured with it)."""

N_TERMS = 5  # intercept, own logit, lowest parent, highest child, log-sum-exp of the children
LOGIT_LIMIT = float(np.log((1 - 1e-6) / 1e-6))


@jit
def _log1pexp(x):
    return x + np.log1p(np.exp(-x)) if x > 0 else np.log1p(np.exp(x))


@jit
def _objective(X, y, w, mu, prec):
    f = 0.0
    for i in range(X.shape[0]):
        eta = 0.0
        for d in range(X.shape[1]):
            eta += X[i, d] * w[d]
        f += _log1pexp(eta) - y[i] * eta
    for d in range(X.shape[1]):
        f += 0.5 * prec[d] * (w[d] - mu[d]) ** 2
    return f


@jit
def _newton(X, y, mu, prec, max_iter):
    """The penalised logistic fit: Newton steps, each halved until the objective does not rise."""
    n, d = X.shape
    w = mu.copy()
    f = _objective(X, y, w, mu, prec)
    for _ in range(max_iter):
        grad = prec * (w - mu)
        hess = np.diag(prec)
        for i in range(n):
            eta = 0.0
            for a in range(d):
                eta += X[i, a] * w[a]
            p = 1.0 / (1.0 + np.exp(-eta))
            r = p - y[i]
            v = p * (1.0 - p)
            for a in range(d):
                grad[a] += X[i, a] * r
                for b in range(d):
                    hess[a, b] += v * X[i, a] * X[i, b]
        step = np.linalg.solve(hess, grad)
        t = 1.0
        trial = w - step
        f_new = _objective(X, y, trial, mu, prec)
        while t > 1e-10 and f_new > f + 1e-12 * (abs(f) + 1.0):
            t /= 2.0
            trial = w - t * step
            f_new = _objective(X, y, trial, mu, prec)
        w = trial
        f = f_new
        if np.max(np.abs(t * step)) < 1e-9:
            break
    return w


@jit
def _design(LT, j, par_ptr, par_idx, ch_ptr, ch_idx):
    """Class ``j``'s design matrix (M, 5) from the transposed logits ``LT`` (K, M): each class's row contiguous."""
    m = LT.shape[1]
    X = np.zeros((m, N_TERMS))
    for i in range(m):
        X[i, 0] = 1.0
        X[i, 1] = LT[j, i]
    if par_ptr[j + 1] > par_ptr[j]:
        for i in range(m):
            X[i, 2] = np.inf
        for q in range(par_ptr[j], par_ptr[j + 1]):
            row = LT[par_idx[q]]
            for i in range(m):
                X[i, 2] = min(X[i, 2], row[i])
    if ch_ptr[j + 1] > ch_ptr[j]:
        for i in range(m):
            X[i, 3] = -np.inf
        for q in range(ch_ptr[j], ch_ptr[j + 1]):
            row = LT[ch_idx[q]]
            for i in range(m):
                X[i, 3] = max(X[i, 3], row[i])
        for q in range(ch_ptr[j], ch_ptr[j + 1]):
            row = LT[ch_idx[q]]
            for i in range(m):
                X[i, 4] += np.exp(row[i] - X[i, 3])
        for i in range(m):
            X[i, 4] = X[i, 3] + np.log(X[i, 4])
    return X


@jit_parallel
def _fit_all(LT, y, fitted, par_ptr, par_idx, ch_ptr, ch_idx, lam, max_iter):
    k, m = LT.shape
    coef = np.zeros((k, N_TERMS))
    mu = np.zeros(N_TERMS)
    mu[1] = 1.0
    prec = np.full(N_TERMS, lam)
    prec[0] = 1e-6
    for j in prange(k):
        coef[j, 1] = 1.0
        if not fitted[j]:
            continue
        coef[j] = _newton(_design(LT, j, par_ptr, par_idx, ch_ptr, ch_idx), y[j], mu, prec, max_iter)
    return coef


@jit_parallel
def _predict_all(LT, coef, par_ptr, par_idx, ch_ptr, ch_idx):
    """The posteriors (K, M) of the transposed logits ``LT`` (K, M), each class's design as the fit's."""
    k, m = LT.shape
    out = np.empty((k, m))
    for j in prange(k):
        X = _design(LT, j, par_ptr, par_idx, ch_ptr, ch_idx)
        for i in range(m):
            eta = 0.0
            for d in range(N_TERMS):
                eta += X[i, d] * coef[j, d]
            out[j, i] = 1.0 / (1.0 + np.exp(-eta))
    return out


def _csr(hierarchy):
    """Parents and children of every class as CSR arrays over class indices."""
    k = hierarchy.n_classes
    edges = np.asarray(hierarchy.edge_indices, dtype=np.int64).reshape(-1, 2)

    def grouped(key, value):
        order = np.argsort(key, kind="stable")
        ptr = np.zeros(k + 1, dtype=np.int64)
        np.add.at(ptr, key + 1, 1)
        return np.cumsum(ptr), np.ascontiguousarray(value[order])

    par_ptr, par_idx = grouped(edges[:, 1], edges[:, 0])
    ch_ptr, ch_idx = grouped(edges[:, 0], edges[:, 1])
    return par_ptr, par_idx, ch_ptr, ch_idx


@dataclass(frozen=True)
class NeighbourStack:
    """The fitted neighbour stack of a hierarchy (build one with :func:`fit_neighbour_stack`).

    Attributes
    ----------
    hierarchy : Hierarchy
        The hierarchy whose parents and children the terms read.
    center, scale : ndarray of shape (K,)
        Each class's median and robust scale: the stack reads ``t = asinh((s - center) / scale)``.
    platt : ndarray of shape (K, 2)
        Each class's Platt map ``(a_k, b_k)`` of ``t`` (:func:`hmcpgm.corrections.fit_calibration`).
    coef : ndarray of shape (K, 5)
        Intercept and slopes of own logit, lowest parent's, highest child's and the
        children's log-sum-exp; ``(0, 1, 0, 0, 0)`` (the Platt probability) for a class
        whose training labels do not vary.
    lam : float
        The prior precision of the slopes.
    kind : str
        ``"stack"`` (what a saved model's pool names).
    """

    hierarchy: object
    center: np.ndarray
    scale: np.ndarray
    platt: np.ndarray
    coef: np.ndarray
    lam: float
    kind: str = "stack"
    _csr: tuple = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self):
        k = self.hierarchy.n_classes
        platt, coef = np.asarray(self.platt, dtype=float), np.asarray(self.coef, dtype=float)
        center, scale = np.asarray(self.center, dtype=float), np.asarray(self.scale, dtype=float)
        if platt.shape != (k, 2) or coef.shape != (k, N_TERMS) or center.shape != (k,) or scale.shape != (k,):
            raise InputError(f"a stack of {k} classes needs center and scale of shape ({k},), platt of shape "
                             f"({k}, 2) and coef of shape ({k}, {N_TERMS}), got {center.shape}, {scale.shape}, "
                             f"{platt.shape} and {coef.shape}")
        if not all(np.isfinite(a).all() for a in (platt, coef, center, scale)) or not np.all(scale > 0):
            raise InputError("the stack's center, scale, platt and coef must be finite (scale positive)")
        object.__setattr__(self, "center", center)
        object.__setattr__(self, "scale", scale)
        lam = float(self.lam)
        if not np.isfinite(lam) or lam <= 0:
            raise InputError(f"lam must be a positive number, got {self.lam!r}")
        object.__setattr__(self, "lam", lam)
        object.__setattr__(self, "platt", platt)
        object.__setattr__(self, "coef", coef)
        object.__setattr__(self, "_csr", _csr(self.hierarchy))

    def logits(self, scores):
        """The clipped Platt logits ``L`` of the scores.

        Parameters
        ----------
        scores : array-like or DataFrame of shape (M, K)
            First-stage scores, columns in ``hierarchy.classes`` order (a DataFrame by class name).

        Returns
        -------
        ndarray of shape (M, K)
            ``a_k + b_k t`` clipped to ``+-logit(1 - 1e-6)``.
        """
        t = forward(class_matrix(scores, self.hierarchy, "scores"), self.center, self.scale, 1)
        return np.ascontiguousarray(np.clip(self.platt[:, 0] + self.platt[:, 1] * t, -LOGIT_LIMIT, LOGIT_LIMIT))

    def lpr(self, scores):
        """``P(Y_k = 1 | the class's and its neighbours' scores)`` for every row and class, shape (M, K).

        Named as a score model's LPR; :class:`hmcpgm.second_stage.SecondStage` reads it for its stack step.

        Parameters
        ----------
        scores : array-like or DataFrame of shape (M, K)
            First-stage scores, columns in ``hierarchy.classes`` order (a DataFrame by class name).

        Returns
        -------
        ndarray of shape (M, K)
            The stack's posteriors, in (0, 1).
        """
        return np.ascontiguousarray(_predict_all(np.ascontiguousarray(self.logits(scores).T), self.coef, *self._csr).T)

    def to_dict(self):
        """The stack as plain values (:meth:`from_dict` rebuilds it).

        Returns
        -------
        dict
            ``kind``, ``center``, ``scale``, ``platt``, ``coef`` (copies) and ``lam``.
        """
        return {"kind": self.kind, "center": self.center.copy(), "scale": self.scale.copy(),
                "platt": self.platt.copy(), "coef": self.coef.copy(), "lam": np.float64(self.lam)}

    @classmethod
    def from_dict(cls, data, hierarchy):
        """The stack of :meth:`to_dict` output.

        Parameters
        ----------
        data : dict
            ``center``, ``scale``, ``platt``, ``coef`` and ``lam`` (lists or arrays).
        hierarchy : Hierarchy
            The hierarchy it was fitted on.

        Returns
        -------
        NeighbourStack
            The same stack.
        """
        return cls(hierarchy, *(np.asarray(data[n], float) for n in ("center", "scale", "platt", "coef")),
                   float(data["lam"]))


def fit_neighbour_stack(scores, labels, hierarchy, *, lam=DEFAULT_STACK_PRECISION, max_iter=100):
    """Fit the neighbour stack on training scores and labels.

    Parameters
    ----------
    scores : array-like or DataFrame of shape (M, K)
        Training scores, columns in ``hierarchy.classes`` order (a DataFrame by class name).
    labels : array-like or DataFrame of shape (M, K)
        Their 0/1 labels, columns as ``scores``'.
    hierarchy : Hierarchy
        The class hierarchy (any DAG).
    lam : float, default 10
        Prior precision of the slopes (> 0): large keeps each class at its own
        calibrated score.
    max_iter : int, default 100
        Newton steps per class at most.

    Returns
    -------
    NeighbourStack
        The fitted stack; :meth:`NeighbourStack.lpr` gives its posteriors.
    """
    from ..corrections import fit_calibration

    if isinstance(lam, bool) or not isinstance(lam, (int, float, np.number)) or not np.isfinite(lam) or lam <= 0:
        raise InputError(f"lam must be a positive number, got {lam!r}")
    lam = float(lam)
    s = class_matrix(scores, hierarchy, "scores")
    y = class_matrix(labels, hierarchy, "labels")
    if s.shape != y.shape:
        raise InputError(f"labels has shape {y.shape} but scores has shape {s.shape}")
    if not np.isin(y, (0.0, 1.0)).all():
        raise InputError("labels must be 0 or 1")
    center, scale = robust_scale(s)
    platt = fit_calibration(forward(s, center, scale, 1), y, method="platt").params["coef"]
    start = np.tile([0.0, 1.0, 0.0, 0.0, 0.0], (hierarchy.n_classes, 1))
    stack = NeighbourStack(hierarchy, center, scale, platt, start, lam)
    n_pos = y.sum(axis=0)
    fitted = (n_pos > 0) & (n_pos < len(y))
    coef = _fit_all(np.ascontiguousarray(stack.logits(s).T), np.ascontiguousarray(y.T), fitted, *stack._csr, lam,
                    int(max_iter))
    return NeighbourStack(hierarchy, center, scale, platt, coef, lam)


def crossfitted_stack(scores, labels, hierarchy, folds, *, lam=DEFAULT_STACK_PRECISION):
    """Out-of-fold stack posteriors: each row's from the stack fitted on the other folds.

    Parameters
    ----------
    scores, labels : array-like of shape (M, K)
        Training scores and labels.
    hierarchy : Hierarchy
        The class hierarchy.
    folds : array-like of int, shape (M,)
        Each row's fold.
    lam : float, default 10
        As :func:`fit_neighbour_stack`.

    Returns
    -------
    ndarray of shape (M, K)
        Each row's posteriors from the stack fitted on the other folds.
    """
    s = class_matrix(scores, hierarchy, "scores")
    y = class_matrix(labels, hierarchy, "labels")
    folds = np.asarray(folds)
    if folds.shape != (len(s),):
        raise InputError(f"folds must have shape ({len(s)},), got {folds.shape}")
    out = np.empty(s.shape)
    for f in np.unique(folds):
        held = folds == f
        out[held] = fit_neighbour_stack(s[~held], y[~held], hierarchy, lam=lam).lpr(s[held])
    return out
