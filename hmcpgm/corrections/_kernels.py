"""Compiled (numba) passes of the corrections over a class-major (K, M) value matrix.

Row ``k`` of the matrix holds class ``k`` for every object, so a pass over the
classes in a level order touches contiguous rows and handles all objects of a
class at once. Every kernel works in place.
"""

import numpy as np

from .._numba import jit

__all__ = [
    "cap_rows",
    "bottom_up_max",
    "closure_and",
    "closure_or",
    "htd_pass",
    "tpr_bottom_up",
    "tpr_tau",
]

THRESHOLD_FREE, THRESHOLD, WEIGHTED_THRESHOLD_FREE, WEIGHTED_THRESHOLD = 0, 1, 2, 3


@jit
def htd_pass(x, up, parent_ptr, parent_idx):
    """HTD-DAG: by increasing level, each class takes the minimum of itself and its (corrected) parents."""
    m = x.shape[1]
    for k in up:
        for j in range(parent_ptr[k], parent_ptr[k + 1]):
            p = parent_idx[j]
            for i in range(m):
                if x[p, i] < x[k, i]:
                    x[k, i] = x[p, i]


@jit
def cap_rows(x, up, parent_ptr, parent_idx):
    """HTD-DAG on an object-major (M, K) matrix, in place: removes rounding-level violations of a solution
    that respects the hierarchy in exact arithmetic (so that child <= parent holds in floating point)."""
    for i in range(x.shape[0]):
        for k in up:
            for j in range(parent_ptr[k], parent_ptr[k + 1]):
                if x[i, parent_idx[j]] < x[i, k]:
                    x[i, k] = x[i, parent_idx[j]]


@jit
def _add(total, comp, i, v):
    """``total[i] += v`` with Neumaier's compensation kept in ``comp[i]``: ``total[i] + comp[i]`` is the sum
    to about one rounding, whatever the order of the terms, as R's extended-precision ``sum`` gives it."""
    s = total[i]
    t = s + v
    if abs(s) >= abs(v):
        comp[i] += (s - t) + v
    else:
        comp[i] += (v - t) + s
    total[i] = t


@jit
def tpr_bottom_up(x, down, ptr, idx, mode, t, w):
    """TPR-DAG's bottom-up step: by decreasing level, each class pools its own value with its
    "positive" children or descendants (their current, already updated values). The sum of the
    positive values is compensated (:func:`_add`), so that a pooled value sitting exactly on a
    threshold of the next class up compares as HEMDAG's (R's ``sum``) does."""
    m = x.shape[1]
    total = np.zeros(m)
    comp = np.zeros(m)
    count = np.zeros(m)
    for k in down:
        start, stop = ptr[k], ptr[k + 1]
        if start == stop:
            continue
        total[:] = 0.0
        comp[:] = 0.0
        count[:] = 0.0
        for j in range(start, stop):
            v = idx[j]
            for i in range(m):
                threshold = x[k, i] if mode == THRESHOLD_FREE or mode == WEIGHTED_THRESHOLD_FREE else t
                if x[v, i] > threshold:
                    _add(total, comp, i, x[v, i])
                    count[i] += 1.0
        for i in range(m):
            pooled = total[i] + comp[i]
            if mode == THRESHOLD_FREE or mode == THRESHOLD:
                x[k, i] = (x[k, i] + pooled) / (1.0 + count[i])
            elif count[i] > 0:
                x[k, i] = w * x[k, i] + (1.0 - w) * pooled / count[i]


@jit
def tpr_tau(x, down, child_ptr, child_idx, far_ptr, far_idx, t):
    """DESCENS-tau's bottom-up step: ``t`` times the threshold-free pool over the children plus
    ``1 - t`` times the pool over the other descendants (both selected by ``> own value``; sums
    compensated as in :func:`tpr_bottom_up`)."""
    m = x.shape[1]
    c_total = np.zeros(m)
    c_comp = np.zeros(m)
    c_count = np.zeros(m)
    d_total = np.zeros(m)
    d_comp = np.zeros(m)
    d_count = np.zeros(m)
    for k in down:
        if child_ptr[k] == child_ptr[k + 1]:
            continue
        c_total[:] = 0.0
        c_comp[:] = 0.0
        c_count[:] = 0.0
        d_total[:] = 0.0
        d_comp[:] = 0.0
        d_count[:] = 0.0
        for j in range(child_ptr[k], child_ptr[k + 1]):
            v = child_idx[j]
            for i in range(m):
                if x[v, i] > x[k, i]:
                    _add(c_total, c_comp, i, x[v, i])
                    c_count[i] += 1.0
        for j in range(far_ptr[k], far_ptr[k + 1]):
            v = far_idx[j]
            for i in range(m):
                if x[v, i] > x[k, i]:
                    _add(d_total, d_comp, i, x[v, i])
                    d_count[i] += 1.0
        for i in range(m):  # each pool's mean first, then the mix: HEMDAG's order of the floating-point operations
            p, c_sum, d_sum = x[k, i], c_total[i] + c_comp[i], d_total[i] + d_comp[i]
            x[k, i] = t * ((p + c_sum) / (1.0 + c_count[i])) + (1.0 - t) * ((p + d_sum) / (1.0 + d_count[i]))


@jit
def bottom_up_max(x, down, child_ptr, child_idx):
    """Obozinski's max (MCM): by decreasing level, each class takes the maximum of itself and its children."""
    m = x.shape[1]
    for k in down:
        for j in range(child_ptr[k], child_ptr[k + 1]):
            c = child_idx[j]
            for i in range(m):
                if x[c, i] > x[k, i]:
                    x[k, i] = x[c, i]


@jit
def closure_and(flat, out, anc_ptr, anc_idx):
    """Obozinski's and: the product of the flat values of the class and all its ancestors."""
    k_classes, m = flat.shape
    for k in range(k_classes):
        for i in range(m):
            out[k, i] = flat[k, i]
        for j in range(anc_ptr[k], anc_ptr[k + 1]):
            a = anc_idx[j]
            for i in range(m):
                out[k, i] *= flat[a, i]


@jit
def closure_or(flat, out, desc_ptr, desc_idx):
    """Obozinski's or: one minus the product of ``1 - flat`` over the class and all its descendants."""
    k_classes, m = flat.shape
    for k in range(k_classes):
        for i in range(m):
            out[k, i] = 1.0 - flat[k, i]
        for j in range(desc_ptr[k], desc_ptr[k + 1]):
            d = desc_idx[j]
            for i in range(m):
                out[k, i] *= 1.0 - flat[d, i]
        for i in range(m):
            out[k, i] = 1.0 - out[k, i]
