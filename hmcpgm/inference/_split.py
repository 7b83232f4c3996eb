"""The full version on a forest with the descendants' evidence at its own strength.

Every class ``j``'s likelihood ratio ``LR_j`` enters the posterior of a class ``k``
raised to one of three exponents, by how ``j`` stands to ``k``: ``own[k]`` for
``j = k``, ``desc[j]`` when ``j`` is a descendant of ``k``, ``out[j]`` otherwise
(ancestors, siblings and the rest of the forest). With ``desc = out`` this is the
full version with tempered evidence and each class's own evidence at ``own``
(:func:`hmcpgm.tempering.own_evidence`).

On a forest the evidence below ``k`` and the evidence outside its subtree are
separated by ``Y_k``, so the posterior odds of ``Y_k = 1`` factor into

    odds_k = rho_k * LR_k ** own[k] * prod_{children c of k} r_c,

where ``r_c = P(subtree evidence of c | Y_k = 1) / P(... | Y_k = 0)`` is the
upward message of the child's subtree with every ratio raised to ``desc``, and
``rho_k = P(Y_k = 1, outside evidence) / P(Y_k = 0, outside evidence)`` is the
downward message with every ratio raised to ``out``. Two upward passes (one per
exponent) and one downward pass, per object: the cost of two tree-engine runs.
In logs, with ``R_c = e_c log LR_c + sum_children log r``:

    log r_c = logaddexp(log theta_c + R_c, log(1 - theta_c)),
    rho_root = theta / (1 - theta),
    rho_c = theta_c / (1 / q + 1 - theta_c),  q = rho_p * LR_p ** out[p] * prod_{siblings s} r_s,

(``q`` is the odds of the parent with all evidence outside the subtree of ``c``).
"""

import math

import numpy as np
from numba import prange

from .._numba import jit as _jit
from .._numba import jit_parallel as _jit_parallel
from ._tree_kernel import logaddexp

__all__ = ["split_full_posterior"]


@_jit
def _one_object(lr, own, desc, out, log_th, log_1mth, order, parent, up_d, msg_d, up_o, msg_o, rho, post):
    k_cls = lr.shape[0]
    for c in range(k_cls):
        up_d[c] = desc[c] * lr[c]
        up_o[c] = out[c] * lr[c]
    for i in range(k_cls - 1, -1, -1):
        c = order[i]
        msg_d[c] = logaddexp(log_th[c] + up_d[c], log_1mth[c])
        msg_o[c] = logaddexp(log_th[c] + up_o[c], log_1mth[c])
        p = parent[c]
        if p >= 0:
            up_d[p] += msg_d[c]
            up_o[p] += msg_o[c]
    for i in range(k_cls):
        c = order[i]
        p = parent[c]
        if p < 0:
            rho[c] = log_th[c] - log_1mth[c]
        else:
            log_q = rho[p] + up_o[p] - msg_o[c]
            rho[c] = log_th[c] - logaddexp(-log_q, log_1mth[c])
        logit = rho[c] + own[c] * lr[c] + (up_d[c] - desc[c] * lr[c])
        if logit != logit:  # an impossible class (theta 0) under certain evidence: no posterior mass
            post[c] = 0.0
        elif logit >= 0:
            post[c] = 1.0 / (1.0 + math.exp(-logit))
        else:
            e = math.exp(logit)
            post[c] = e / (1.0 + e)


@_jit_parallel
def _split_kernel(lr, own, desc, out, log_th, log_1mth, order, parent, post):
    m_obj, k_cls = lr.shape
    n_blocks = (m_obj + 255) // 256
    for b in prange(n_blocks):
        scratch = np.empty((5, k_cls))
        for m in range(b * 256, min(m_obj, (b + 1) * 256)):
            _one_object(lr[m], own, desc, out, log_th, log_1mth, order, parent,
                        scratch[0], scratch[1], scratch[2], scratch[3], scratch[4], post[m])


def split_full_posterior(hierarchy, theta, log_ratio, out, desc, own):
    """Posteriors of the full version on a forest, evidence at ``own`` / ``desc`` / ``out`` by relation.

    Parameters
    ----------
    hierarchy : Hierarchy
        A forest (one parent per class).
    theta : array of shape (K,)
        The network's ``P(Y_k = 1 | parent positive)`` (a root's prior).
    log_ratio : array of shape (M, K)
        ``log L_k(1) - log L_k(0)`` of every event (:func:`hmcpgm.tempering.log_evidence_ratio`).
    out, desc, own : array of shape (K,)
        The exponent of class ``j``'s evidence when ``j`` is outside the queried
        class's subtree, below it, and the class itself.

    Returns
    -------
    ndarray of shape (M, K)
        ``P(Y_k = 1 | evidence)`` of every class of every object.

    Examples
    --------
    >>> from hmcpgm import Hierarchy
    >>> h = Hierarchy.from_parents([None, 0])
    >>> lr = np.log([[1.0, 3.0]])                       # evidence only on the child
    >>> split_full_posterior(h, [0.5, 0.5], lr, [1.0, 1.0], [1.0, 1.0], [1.0, 1.0]).round(4)
    array([[0.6667, 0.5   ]])
    >>> # desc = 0: the root ignores its child's evidence
    >>> split_full_posterior(h, [0.5, 0.5], lr, [1.0, 1.0], [0.0, 0.0], [1.0, 1.0]).round(4)
    array([[0.5, 0.5]])
    """
    theta = np.asarray(theta, dtype=float)
    with np.errstate(divide="ignore"):
        log_th, log_1mth = np.log(theta), np.log1p(-theta)
    order = np.asarray(hierarchy.topological_order, dtype=np.int64)
    parent = np.array(hierarchy.spanning_forest(), dtype=np.int64)
    lr = np.ascontiguousarray(log_ratio, dtype=float)
    post = np.empty_like(lr)
    k = lr.shape[1]
    own, desc, out = (np.ascontiguousarray(np.broadcast_to(np.asarray(e, dtype=float), (k,))) for e in (own, desc, out))
    _split_kernel(lr, own, desc, out, log_th, log_1mth, order, parent, post)
    return post
