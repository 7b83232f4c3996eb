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

Upward messages are kept in log space and normalised per node; classes at the
same depth are processed together, and every array has all objects on its last
axis.
"""

from functools import lru_cache

import numpy as np

from ._common import impossible_evidence

__all__ = ["tree_full", "child_messages"]


class _Levels:
    """Per-depth groups of a forest: children sorted by parent, reduceat offsets."""

    def __init__(self, hierarchy):
        parent = np.asarray(hierarchy.spanning_forest())
        self.parent = parent
        self.roots = np.asarray(hierarchy.root_indices)
        depth = np.asarray(hierarchy.depth)
        self.levels = []  # depth 1 .. D
        for d in range(1, int(depth.max()) + 1 if len(depth) else 1):
            kids = np.flatnonzero(depth == d)
            kids = kids[np.argsort(parent[kids], kind="stable")]
            pars, starts = np.unique(parent[kids], return_index=True)
            self.levels.append((kids, parent[kids], pars, starts))


@lru_cache(maxsize=64)
def _levels(hierarchy):
    return _Levels(hierarchy)


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


def tree_full(hierarchy, theta, l0, l1):
    """Exact P(Y_k = 1 | all evidence) on a forest; ``l0, l1`` are (K, M) log likelihoods.

    Returns a (K, M) array.
    """
    lv = _levels(hierarchy)
    l0 = l0.copy()
    l1 = l1.copy()
    q = np.empty_like(l0)
    for kids, _, pars, starts in reversed(lv.levels):
        m0, m1, q[kids], _ = child_messages(l0[kids], l1[kids], theta[kids])
        l0[pars] += np.add.reduceat(m0, starts, axis=0)
        l1[pars] += np.add.reduceat(m1, starts, axis=0)
    roots = lv.roots
    _, _, q[roots], ok = child_messages(l0[roots], l1[roots], theta[roots])
    bad = ~ok.all(axis=0)
    if bad.any():
        raise impossible_evidence(hierarchy, np.flatnonzero(bad))
    out = np.empty_like(q)
    out[roots] = q[roots]
    for kids, par_of_kids, _, _ in lv.levels:
        out[kids] = out[par_of_kids] * q[kids]
    return out
