"""Loopy belief propagation on the hierarchy's factor graph, object by object.

Each class ``k`` has one factor, its CPD over (Y_k, parents of k), and one unary
evidence factor. Messages between binary variables and factors are log-odds
``log m(1) - log m(0)``. The CPD's structure gives closed forms, with ``P`` the
probability that all parents are positive under the incoming messages and ``R``
the same without one parent:

* factor -> child:  P(Y_k = 1) message ``theta_k P``;
* factor -> parent: ratio ``1 + R theta_k (m_k(1) / m_k(0) - 1)``.

Schedule: one iteration is an upward sweep (classes in reverse topological
order, each factor sending to its parents) followed by a downward sweep
(topological order, each factor sending to its class), every update using the
newest messages. On a forest the first iteration is the exact two-pass
sum-product; on the Gene Ontology DAGs a handful of iterations reach the fixed
point that the earlier flooding schedule needed hundreds of damped iterations
for (the fixed point does not depend on the schedule). Each object stops as soon
as it has converged: the compiled kernel in ``_loopy_kernel`` runs one object at
a time over (K,) and (E,) message arrays.

Infinite log-odds (hard evidence, theta in {0, 1}) are counted apart from the
finite parts of sums, so removing one message from a sum never computes
inf - inf. On forests and polytrees the fixed point is the exact posterior; on
other DAGs it is an approximation. Damping (off by default: the sequential
schedule does not need it, and measured on cellcycle_GO it multiplies the
iterations by about eight for the same fixed point) mixes in the log-odds domain:
``new = (1 - damping) * update + damping * old``. An object has converged when
no message moved by more than ``tol`` (log-odds) in an iteration.
"""

from dataclasses import dataclass

import numpy as np

from .._util import warn
from ..exceptions import ConvergenceWarning, InputError
from ._common import impossible_evidence

__all__ = ["LoopyReport", "loopy_full", "check_loopy_options", "DEFAULTS"]

DEFAULTS = {"damping": 0.0, "tol": 1e-6, "max_iter": 200, "start": "uniform"}
STARTS = ("uniform", "forest")


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
        """The report of a run on no objects.

        Parameters
        ----------
        damping : float
            The damping setting reported.
        tol : float
            The tolerance setting reported.
        max_iter : int
            The iteration limit reported.

        Returns
        -------
        LoopyReport
            Empty ``converged``, ``n_iter`` and ``residual`` arrays.
        """
        return cls(np.zeros(0, bool), np.zeros(0, int), np.zeros(0), damping, tol, max_iter)

    def __repr__(self):
        n = len(self.converged)
        it = f", iterations {self.n_iter.min()}..{self.n_iter.max()}" if n else ""
        return (
            f"LoopyReport({int(self.converged.sum())} of {n} objects converged{it}, "
            f"damping={self.damping}, tol={self.tol}, max_iter={self.max_iter})"
        )


def loopy_full(hierarchy, theta, l0, l1, damping=DEFAULTS["damping"], tol=DEFAULTS["tol"],
               max_iter=DEFAULTS["max_iter"], warn_unconverged=True, start=DEFAULTS["start"]):
    """Loopy BP posteriors; ``l0, l1`` are (K, M) log likelihoods. Returns ((K, M), report)."""
    from ._loopy_kernel import loopy_kernel

    damping, tol, max_iter = check_loopy_options(damping, tol, max_iter)
    if start not in STARTS:
        raise InputError(f"start must be one of {STARTS}, got {start!r}")
    in_ptr, edge_par = hierarchy.parent_csr
    order = np.asarray(hierarchy.topological_order, dtype=np.int64)
    k, m = l0.shape
    with np.errstate(invalid="ignore"):
        ev = np.ascontiguousarray((l1 - l0).T)  # (M, K) log-odds; one of l0, l1 is 0
    theta = np.asarray(theta, dtype=float)
    with np.errstate(divide="ignore"):
        log_th = np.log(theta)
        log_1mth = np.log1p(-theta)
        root_logit = log_th - log_1mth
    out = np.empty((m, k))
    converged = np.zeros(m, dtype=np.bool_)
    n_iter = np.zeros(m, dtype=np.int64)
    residual = np.zeros(m)
    loopy_kernel(ev, log_th, log_1mth, root_logit, order, in_ptr, edge_par, damping, tol, max_iter,
                 out, converged, n_iter, residual, *_start_messages(hierarchy, theta, l0, l1, in_ptr, edge_par, start))
    bad = np.isnan(out).any(axis=1)
    if bad.any():
        raise impossible_evidence(hierarchy, np.flatnonzero(bad))
    report = LoopyReport(converged, n_iter, residual, damping, tol, max_iter)
    if warn_unconverged and not report.all_converged:
        warn(unconverged_warning(int((~converged).sum()), m, max_iter, float(np.nanmax(residual)), tol),
             ConvergenceWarning)
    return np.ascontiguousarray(out.T), report


def unconverged_warning(unconverged, objects, max_iter, residual, tol):
    """The ConvergenceWarning of loopy BP stopped at ``max_iter`` for ``unconverged`` of ``objects`` objects.

    Its numbers are kept as attributes (``unconverged``, ``objects``, ``max_iter``, ``residual``, ``tol``), so
    that a run in chunks can say once how many objects of all did not converge (:func:`hmcpgm.scale`'s
    ``ordered_map``).
    """
    warning = ConvergenceWarning(
        f"loopy belief propagation did not converge for {unconverged} of {objects} objects within "
        f"max_iter={max_iter} (largest final change {residual:.3g} > tol={tol}); "
        "raise max_iter or damping, or use engine='junction'")
    warning.unconverged, warning.objects, warning.max_iter, warning.residual, warning.tol = (
        unconverged, objects, max_iter, residual, tol)
    return warning


def _start_messages(hierarchy, theta, l0, l1, in_ptr, edge_par, start):
    """Starting messages (M, K) and (M, E); none (uniform start) unless ``start="forest"``.

    ``"forest"``: the exact solution on the spanning forest that keeps each class's
    first parent. Kept edges start with the forest's upward messages, the other
    edges uniform; each class's factor-to-child message starts at what makes its
    belief the forest's exact posterior. Messages that come out infinite or
    undefined (hard evidence) start uniform, and so does every message of an
    object whose evidence the forest rules out (the DAG may still allow it).
    """
    k, m = l0.shape
    if start == "uniform":
        return np.zeros((0, k)), np.zeros((0, len(edge_par)))
    from ..hierarchy import Hierarchy
    from ._tree import tree_full

    keep = [int(p[0]) if len(p) else None for p in hierarchy.parent_indices]
    forest = Hierarchy.from_parents(keep)
    with np.errstate(divide="ignore", invalid="ignore"):
        post = tree_full(forest, theta, l0, l1, impossible_nan=True)  # (K, M)
        log_th, log_1mth = np.log(theta), np.log1p(-theta)
        a = l1 - l0  # log-odds from each class's evidence and its kept children
        up = np.zeros_like(a)
        for c in np.asarray(forest.topological_order)[::-1]:
            if keep[c] is not None:
                up[c] = np.logaddexp(log_1mth[c], log_th[c] + a[c])
                a[keep[c]] += up[c]
        fc0 = np.log(post) - np.log1p(-post) - a
    ruled_out = np.isnan(post).any(axis=0)  # impossible on the forest: these objects start uniform
    fc0[:, ruled_out] = 0.0
    up[:, ruled_out] = 0.0
    roots = np.array([p is None for p in keep])
    fc0[roots] = 0.0
    fc0[~np.isfinite(fc0)] = 0.0
    up[~np.isfinite(up)] = 0.0
    with np.errstate(divide="ignore"):
        fc0[roots] = (log_th - log_1mth)[roots, None]
    fp0 = np.zeros((m, len(edge_par)))
    child = np.repeat(np.arange(k), np.diff(in_ptr))
    kept = np.array([keep[c] == p for c, p in zip(child, edge_par)], dtype=bool)
    fp0[:, kept] = up[child[kept]].T
    return np.ascontiguousarray(fc0.T), fp0


def check_loopy_options(damping, tol, max_iter):
    """``(damping, tol, max_iter)`` as numbers, or one line naming the first out of range."""
    try:
        damping = float(damping)
        tol = float(tol)
    except (TypeError, ValueError):
        raise InputError(f"damping and tol must be numbers, got {damping!r} and {tol!r}") from None
    if not 0.0 <= damping < 1.0:
        raise InputError(f"damping must be in [0, 1), got {damping}")
    if not 0 < tol < np.inf:  # an infinite tol would stop after one sweep and report convergence
        raise InputError(f"tol must be a positive finite number, got {tol}")
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise InputError(f"max_iter must be a positive int, got {max_iter!r}")
    return damping, tol, int(max_iter)
