"""Batched loopy belief propagation on the hierarchy's factor graph.

Each class ``k`` has one factor, its CPD over (Y_k, parents of k), and one unary
evidence factor. Messages between binary variables and factors are stored as
log-odds ``log m(1) - log m(0)`` in arrays of shape (n_messages, M): every object
is updated at once (flooding schedule). The CPD's structure gives closed forms,
with ``P`` the probability that all parents are positive under the incoming
messages and ``R`` the same without one parent:

* factor -> child:  P(Y_k = 1) message ``theta_k P``;
* factor -> parent: ratio ``1 + R theta_k (m_k(1) / m_k(0) - 1)``.

Products over many messages are sums of logs; infinite log-odds (hard evidence)
are counted separately so that removing one message from a product never
computes inf - inf. On forests the fixed point is the exact posterior; on DAGs
it is an approximation. Factor messages are damped in the log-odds domain:
``new = (1 - damping) * update + damping * old``. An object has converged when
no message moved by more than ``tol`` (log-odds) in an iteration.
"""

import warnings
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..exceptions import ConvergenceWarning, InferenceError
from ._common import impossible_evidence

__all__ = ["LoopyReport", "loopy_full", "DEFAULTS"]

DEFAULTS = {"damping": 0.0, "tol": 1e-10, "max_iter": 200}


@dataclass(frozen=True)
class LoopyReport:
    """Convergence of loopy belief propagation, one entry per object.

    Attributes
    ----------
    converged : ndarray of bool, shape (M,)
        The largest message change fell below ``tol``.
    n_iter : ndarray of int, shape (M,)
        The first iteration at which the object converged (``max_iter`` if never).
    residual : ndarray of float, shape (M,)
        The largest message change (log-odds) in the object's last iteration.
    damping, tol, max_iter
        The settings used.
    """

    converged: np.ndarray
    n_iter: np.ndarray
    residual: np.ndarray
    damping: float
    tol: float
    max_iter: int

    @property
    def all_converged(self):
        """bool: every object converged."""
        return bool(self.converged.all())

    @classmethod
    def empty(cls, damping=DEFAULTS["damping"], tol=DEFAULTS["tol"], max_iter=DEFAULTS["max_iter"]):
        return cls(np.zeros(0, bool), np.zeros(0, int), np.zeros(0), damping, tol, max_iter)

    def __repr__(self):
        n = len(self.converged)
        it = f", iterations {self.n_iter.min()}..{self.n_iter.max()}" if n else ""
        return (
            f"LoopyReport({int(self.converged.sum())} of {n} objects converged{it}, "
            f"damping={self.damping}, tol={self.tol}, max_iter={self.max_iter})"
        )


class _Graph:
    def __init__(self, hierarchy):
        from scipy import sparse

        e = np.asarray(hierarchy.edge_indices).reshape(-1, 2)
        self.par, self.child = e[:, 0].copy(), e[:, 1].copy()
        k, n_e = hierarchy.n_classes, len(e)
        ones = np.ones(n_e)
        # by_parent[k, e] = 1 if parent(e) = k; by_child[k, e] = 1 if child(e) = k
        self.by_parent = sparse.csr_matrix((ones, (self.par, np.arange(n_e))), shape=(k, n_e))
        self.by_child = sparse.csr_matrix((ones, (self.child, np.arange(n_e))), shape=(k, n_e))
        self.roots = np.asarray(hierarchy.root_indices)
        self.nonroots = np.flatnonzero([len(p) > 0 for p in hierarchy.parent_indices])


@lru_cache(maxsize=64)
def _graph(hierarchy):
    return _Graph(hierarchy)


class _Sums:
    """Sums of log values over groups, with +inf and -inf counted apart."""

    def __init__(self, matrix, x):
        self.fin = matrix @ np.where(np.isinf(x), 0.0, x)  # NaN stays NaN
        self.pos = matrix @ (x == np.inf).astype(float)
        self.neg = matrix @ (x == -np.inf).astype(float)

    @staticmethod
    def combine(fin, pos, neg):
        out = fin.copy()
        with np.errstate(invalid="ignore"):
            out[pos > 0.5] = np.inf
            out[neg > 0.5] = -np.inf
            out[(pos > 0.5) & (neg > 0.5)] = np.nan
        return out


def _split(x):
    return np.where(np.isinf(x), 0.0, x), (x == np.inf).astype(float), (x == -np.inf).astype(float)


def _log_sigmoid(r):
    with np.errstate(invalid="ignore", over="ignore"):
        return -np.logaddexp(0.0, -r)


def _change(new, old):
    with np.errstate(invalid="ignore"):
        d = np.abs(new - old)
    d[new == old] = 0.0  # equal infinities
    return d


def loopy_full(hierarchy, theta, l0, l1, damping=DEFAULTS["damping"], tol=DEFAULTS["tol"],
               max_iter=DEFAULTS["max_iter"], warn=True):
    """Loopy BP posteriors; ``l0, l1`` are (K, M) log likelihoods. Returns ((K, M), report)."""
    damping, tol, max_iter = _check_options(damping, tol, max_iter)
    g = _graph(hierarchy)
    k, m = l0.shape
    with np.errstate(invalid="ignore"):
        ev = l1 - l0  # log-odds of the evidence; one of l0, l1 is 0
    with np.errstate(divide="ignore"):
        log_th = np.log(theta)[:, None]
        root_logit = (np.log(theta) - np.log1p(-theta))[:, None]
    n_e = len(g.par)
    fc = np.zeros((k, m))  # own factor -> class
    fc[g.roots] = root_logit[g.roots]
    fp = np.zeros((n_e, m))  # child's factor -> parent
    converged = np.zeros(m, bool)
    n_iter = np.full(m, max_iter)
    residual = np.full(m, np.inf)
    ev_split = _split(ev)
    for it in range(1, max_iter + 1):
        # variables -> factors
        s = _Sums(g.by_parent, fp)
        fpf, fpp, fpn = _split(fp)
        evf, evp, evn = ev_split
        vc = _Sums.combine(evf + s.fin, evp + s.pos, evn + s.neg)  # class -> own factor
        fcf, fcp, fcn = _split(fc)
        par = g.par
        vp = _Sums.combine(  # parent -> child's factor: all but this edge's message
            evf[par] + fcf[par] + s.fin[par] - fpf,
            evp[par] + fcp[par] + s.pos[par] - fpp,
            evn[par] + fcn[par] + s.neg[par] - fpn,
        )
        # factors -> variables
        ls = _log_sigmoid(vp)  # log P(parent = 1) under its message
        lsf, lsp, lsn = _split(ls)  # lsp never happens: log sigmoid <= 0
        p_all = _Sums(g.by_child, ls)  # log P(all parents = 1), per child
        new_fc = fc.copy()
        nr = g.nonroots
        if len(nr):
            a = log_th[nr] + _Sums.combine(p_all.fin[nr], p_all.pos[nr], p_all.neg[nr])
            with np.errstate(divide="ignore", invalid="ignore"):
                new_fc[nr] = a - np.log(-np.expm1(a))
        ch = g.child
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            log_r = _Sums.combine(p_all.fin[ch] - lsf, p_all.pos[ch], p_all.neg[ch] - lsn)
            t = np.exp(log_r + log_th[ch])  # P(other parents = 1) * theta_child
            sv = vc[ch]
            u = np.where(sv > 0, sv, 0.0)
            new_fp = u + np.log((1.0 - t) * np.exp(-u) + t * np.exp(sv - u))
            inf_s = sv == np.inf
            new_fp[inf_s] = np.where(t[inf_s] > 0, np.inf, np.nan)
        if damping > 0 and it > 1:
            with np.errstate(invalid="ignore"):
                new_fc = np.where(np.isinf(new_fc) | np.isinf(fc), new_fc, (1 - damping) * new_fc + damping * fc)
                new_fp = np.where(np.isinf(new_fp) | np.isinf(fp), new_fp, (1 - damping) * new_fp + damping * fp)
        change = np.zeros(m)
        if n_e:
            change = np.maximum(_change(new_fc, fc).max(axis=0), _change(new_fp, fp).max(axis=0))
        fc, fp = new_fc, new_fp
        residual = change
        done = ~(change > tol)  # NaN counts as done: impossible evidence, reported below
        newly = done & ~converged
        n_iter[newly] = it
        converged |= done
        if converged.all():
            break
        converged &= done  # an object counts as converged only if it stays so
    n_iter[~converged] = max_iter
    s = _Sums(g.by_parent, fp)
    evf, evp, evn = ev_split
    fcf, fcp, fcn = _split(fc)
    belief = _Sums.combine(evf + fcf + s.fin, evp + fcp + s.pos, evn + fcn + s.neg)
    with np.errstate(over="ignore"):
        out = 1.0 / (1.0 + np.exp(-belief))
    bad = np.isnan(out).any(axis=0)
    if bad.any():
        raise impossible_evidence(hierarchy, np.flatnonzero(bad))
    report = LoopyReport(converged, n_iter, residual, damping, tol, max_iter)
    if warn and not report.all_converged:
        n_bad = int((~converged).sum())
        warnings.warn(
            f"loopy belief propagation did not converge for {n_bad} of {m} objects within "
            f"max_iter={max_iter} (largest final change {np.nanmax(residual):.3g} > tol={tol}); "
            "raise max_iter or damping, or use engine='junction'",
            ConvergenceWarning,
            stacklevel=4,
        )
    return out, report


def _check_options(damping, tol, max_iter):
    try:
        damping = float(damping)
        tol = float(tol)
    except (TypeError, ValueError):
        raise InferenceError(f"damping and tol must be numbers, got {damping!r} and {tol!r}") from None
    if not 0.0 <= damping < 1.0:
        raise InferenceError(f"damping must be in [0, 1), got {damping}")
    if not tol > 0:
        raise InferenceError(f"tol must be positive, got {tol}")
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise InferenceError(f"max_iter must be a positive int, got {max_iter!r}")
    return damping, tol, int(max_iter)
