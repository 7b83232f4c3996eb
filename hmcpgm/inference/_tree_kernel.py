"""Compiled (numba) kernel of the exact tree engine: objects in parallel (``prange``).

Per object, one upward pass over the classes in reverse topological order (each class
sends its normalised log message to its parent) and one downward pass (the posterior of
a class is its parent's times ``q_k``); see :mod:`hmcpgm.inference._tree` for the
algebra. Objects are independent, so the outer loop runs on every core.
"""

import math

import numpy as np
from numba import prange

from .._numba import jit as _jit
from .._numba import jit_parallel as _jit_parallel


@_jit
def _logaddexp(a, b):
    hi, lo = (a, b) if a >= b else (b, a)
    if hi == -math.inf:
        return -math.inf
    return hi + math.log1p(math.exp(lo - hi))


@_jit_parallel
def tree_kernel(l0, l1, log_th, log_1mth, order, parent, out, impossible):
    """Fill ``out`` (M, K) with P(Y_k = 1 | evidence); ``l0, l1`` are (M, K) log likelihoods.

    ``order`` lists the classes parents first; ``parent[k]`` is -1 for a root.
    ``impossible[m]`` is set when object m's evidence has probability zero.
    """
    n_obj, k_cls = l0.shape
    for m in prange(n_obj):
        a0 = l0[m].copy()
        a1 = l1[m].copy()
        q = np.empty(k_cls)
        bad = False
        for i in range(k_cls - 1, -1, -1):
            k = order[i]
            top = max(a0[k], a1[k])
            if not math.isfinite(top):
                top = 0.0  # both -inf: an impossible subtree, its messages stay -inf
            m0 = a0[k] - top
            w1 = log_th[k] + (a1[k] - top)
            m1 = _logaddexp(log_1mth[k] + m0, w1)  # log of (1 - theta) a0 + theta a1
            q[k] = math.exp(w1 - m1) if m1 > -math.inf else 0.0
            p = parent[k]
            if p >= 0:
                a0[p] += m0
                a1[p] += m1
            elif m1 == -math.inf:
                bad = True
        impossible[m] = bad
        for i in range(k_cls):
            k = order[i]
            p = parent[k]
            out[m, k] = q[k] if p < 0 else out[m, p] * q[k]
