"""Compiled (numba) kernels of the exact tree engine: objects in parallel (``prange``).

Per object, one upward pass over the classes in reverse topological order (each class
sends its normalised log message to its parent) and one downward pass (the posterior of
a class is its parent's times ``q_k``); see :mod:`hmcpgm.inference._tree` for the
algebra. Objects are independent, so the outer loop runs on every core, over blocks of
objects that share one scratch allocation (an allocation per object serialises the
threads on the allocator).

Two entry points: :func:`tree_kernel` from (M, K, 2) likelihoods, taking their logs
inside the parallel loop (the whole ``engine="tree"`` path: no serial pass over the
likelihoods before or after it), and :func:`tree_kernel_logs` from normalised log
likelihoods (the start of loopy BP).
"""

import math

import numpy as np
from numba import prange

from .._numba import jit as _jit
from .._numba import jit_parallel as _jit_parallel

BLOCK = 256  # objects per scratch allocation


@_jit
def logaddexp(a, b):
    """``log(exp(a) + exp(b))`` of two floats, ``-inf`` when both are (compiled; the split kernel shares it)."""
    hi, lo = (a, b) if a >= b else (b, a)
    if hi == -math.inf:
        return -math.inf
    return hi + math.log1p(math.exp(lo - hi))


@_jit
def _one_object(a0, a1, q, log_th, log_1mth, order, parent, out):
    """Posterior of one object from its log likelihoods ``a0, a1`` (overwritten); True if impossible."""
    k_cls = a0.shape[0]
    bad = False
    for i in range(k_cls - 1, -1, -1):
        k = order[i]
        top = max(a0[k], a1[k])
        if not math.isfinite(top):
            top = 0.0  # both -inf: an impossible subtree, its messages stay -inf
        m0 = a0[k] - top
        w1 = log_th[k] + (a1[k] - top)
        m1 = logaddexp(log_1mth[k] + m0, w1)  # log of (1 - theta) a0 + theta a1
        q[k] = math.exp(w1 - m1) if m1 > -math.inf else 0.0
        p = parent[k]
        if p >= 0:
            a0[p] += m0
            a1[p] += m1
        elif m1 == -math.inf:
            bad = True
    for i in range(k_cls):
        k = order[i]
        p = parent[k]
        out[k] = q[k] if p < 0 else out[p] * q[k]
    return bad


@_jit
def _log(x):
    return math.log(x) if x > 0.0 else -math.inf


@_jit_parallel
def tree_kernel(lik, log_th, log_1mth, order, parent, out, impossible):
    """Fill ``out`` (M, K) with P(Y_k = 1 | evidence) from ``lik`` (M, K, 2) likelihoods.

    ``order`` lists the classes parents first; ``parent[k]`` is -1 for a root.
    ``impossible[m]`` is set when object m's evidence has probability zero.
    """
    n_obj, k_cls = lik.shape[0], lik.shape[1]
    for b in prange((n_obj + BLOCK - 1) // BLOCK):
        a0, a1, q = np.empty(k_cls), np.empty(k_cls), np.empty(k_cls)
        for m in range(b * BLOCK, min(n_obj, (b + 1) * BLOCK)):
            for k in range(k_cls):
                y0, y1 = _log(lik[m, k, 0]), _log(lik[m, k, 1])  # as log_likelihood_pairs: logs first,
                top = max(y0, y1)                                 # so a ratio beyond the float range stays finite
                a0[k] = y0 - top
                a1[k] = y1 - top
            impossible[m] = _one_object(a0, a1, q, log_th, log_1mth, order, parent, out[m])


@_jit_parallel
def tree_kernel_logs(l0, l1, log_th, log_1mth, order, parent, out, impossible):
    """:func:`tree_kernel` from (M, K) log likelihoods ``l0, l1`` (each pair's larger is 0)."""
    n_obj, k_cls = l0.shape
    for b in prange((n_obj + BLOCK - 1) // BLOCK):
        a0, a1, q = np.empty(k_cls), np.empty(k_cls), np.empty(k_cls)
        for m in range(b * BLOCK, min(n_obj, (b + 1) * BLOCK)):
            a0[:] = l0[m]
            a1[:] = l1[m]
            impossible[m] = _one_object(a0, a1, q, log_th, log_1mth, order, parent, out[m])
