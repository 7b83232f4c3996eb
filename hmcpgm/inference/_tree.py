"""Batched exact sum-product on trees and forests.

With the hierarchy's CPDs (a child can be positive only when its parent is) the
downward pass collapses to a product along root-to-class paths:

    P(Y_k = 1 | e) = P(Y_p = 1 | e) * q_k,
    q_k = P(Y_k = 1 | Y_p = 1, evidence in the subtree of k)
        = theta_k a_k(1) / ((1 - theta_k) a_k(0) + theta_k a_k(1)),

where ``a_k`` is the upward (lambda) message of ``k``: its own likelihood times
the messages of its children. Given ``Y_p = 1`` the subtree of ``k`` is separated
from the rest of the evidence, so this is exact and needs no division by
messages (no 0/0 with hard evidence). A root uses ``Y_p = 1`` implicitly.

Upward messages are kept in log space and normalised per node. The full posterior
runs as a compiled kernel over objects in parallel (:mod:`._tree_kernel`);
:func:`child_messages` is the same step vectorised over classes and objects, used
by the nbh version.
"""

import numpy as np

from ._common import impossible_evidence

__all__ = ["tree_full", "tree_full_from_likelihoods", "child_messages"]


def child_messages(l0, l1, theta):
    """Messages to the parent (normalised log) and q = P(child = 1 | parent = 1, subtree).

    Returns ``m0, m1, q, ok`` where ``ok`` is False where the subtree's evidence is
    impossible even with the parent positive.
    """
    top = np.maximum(l0, l1)
    top[~np.isfinite(top)] = 0.0  # both -inf: an impossible subtree, messages stay -inf
    m0 = l0 - top
    with np.errstate(divide="ignore"):
        w1 = np.log(theta)[:, None] + (l1 - top)
        m1 = np.logaddexp(np.log1p(-theta)[:, None] + m0, w1)  # log of (1-th) a0 + th a1
    ok = m1 > -np.inf
    with np.errstate(invalid="ignore"):
        q = np.where(ok, np.exp(w1 - m1), 0.0)
    return m0, m1, q, ok


def _tree_arrays(hierarchy, theta):
    theta = np.asarray(theta, dtype=float)
    with np.errstate(divide="ignore"):
        log_th, log_1mth = np.log(theta), np.log1p(-theta)
    order = np.asarray(hierarchy.topological_order, dtype=np.int64)
    parent = np.array(hierarchy.spanning_forest(), dtype=np.int64)
    return log_th, log_1mth, order, parent


def tree_full(hierarchy, theta, l0, l1, impossible_nan=False):
    """Exact P(Y_k = 1 | all evidence) on a forest; ``l0, l1`` are (K, M) log likelihoods.

    Runs the compiled kernel of :mod:`hmcpgm.inference._tree_kernel`, objects in
    parallel. Returns a (K, M) array. Evidence of probability zero raises, or with
    ``impossible_nan`` gives NaN columns.
    """
    from ._tree_kernel import tree_kernel_logs

    k, m = l0.shape
    out = np.empty((m, k))
    impossible = np.zeros(m, dtype=np.bool_)
    tree_kernel_logs(np.ascontiguousarray(l0.T), np.ascontiguousarray(l1.T), *_tree_arrays(hierarchy, theta),
                     out, impossible)
    if impossible.any():
        if not impossible_nan:
            raise impossible_evidence(hierarchy, np.flatnonzero(impossible))
        out[impossible] = np.nan
    return np.ascontiguousarray(out.T)


def tree_full_from_likelihoods(hierarchy, theta, likelihoods):
    """:func:`tree_full` from checked (M, K, 2) likelihoods; returns (M, K).

    The logs are taken inside the parallel kernel, so nothing before or after it
    is a serial pass over the M x K events.
    """
    from ._tree_kernel import tree_kernel

    m, k = likelihoods.shape[:2]
    out = np.empty((m, k))
    impossible = np.zeros(m, dtype=np.bool_)
    tree_kernel(np.ascontiguousarray(likelihoods), *_tree_arrays(hierarchy, theta), out, impossible)
    if impossible.any():
        raise impossible_evidence(hierarchy, np.flatnonzero(impossible))
    return out
