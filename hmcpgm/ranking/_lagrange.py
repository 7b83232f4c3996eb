"""Lagrangian relaxation of the precedences a spanning forest drops (compiled).

Keep one parent per class (a spanning forest) and *relax* every other edge
``a -> b`` ("a before b", ``C_b >= C_a + 1`` for ranks C) with a multiplier
``lam >= 0``. For any consistent ranking

    sum_j V_j C_j >= sum_j V_j C_j + sum lam (C_a + 1 - C_b) = sum_j V'_j C_j + sum lam,

where ``V' = V`` plus ``lam`` on a and minus ``lam`` on b (value moves from b
to a). Since ``CATCH = (n + 1) sum V - sum V C`` and ``sum V' = sum V``, the
best CATCH over DAG-consistent rankings is at most the best CATCH of the forest
problem with values ``V'`` (Horn's rule, exact) minus ``sum lam``: an upper
bound for every ``lam >= 0`` (Potts 1985; van de Velde 1995 for
1|prec|sum w_j C_j). ``lam = 0`` is the plain spanning-forest bound.

The multipliers are tuned per object by projected subgradient ascent with
Polyak steps towards the CATCH of a known consistent order of the object (its
target): the subgradient of the dual at ``lam`` is ``C_a + 1 - C_b`` in the
forest solution. Each forest solution is also turned into a consistent order
(the greedy DAG rule run on the values ``V'``) and kept when it beats the
object's best order so far: the multipliers steer the heuristic.
"""

import numpy as np

from .._numba import jit
from ._dag_greedy import dag_greedy_sequences, greedy_order, greedy_workspace
from ._merge import chain_merge
from ._structure import object_catch, relaxed_edges

__all__ = ["LAGRANGE_ITER", "lagrangian", "lagrangian_rows"]

#: default number of subgradient rounds per object
LAGRANGE_ITER = 10



@jit
def _shift(vals, lam, da, db, out):
    for k in range(len(vals)):
        out[k] = vals[k]
    for e in range(len(da)):
        out[da[e]] += lam[e]
        out[db[e]] -= lam[e]


@jit
def _catch_local(vals, seq):
    n = len(seq)
    total = 0.0
    for j in range(n):
        total += (n - j) * vals[seq[j]]
    return total


@jit
def lagrangian_rows(values, f_ptr, f_idx, da, db, d_ptr, d_idx, best_seq, best_val,
                    max_iter, rel_tol, improve, vp_out, lam_sum, ub_out):
    """Subgradient ascent on every object's multipliers.

    ``f_ptr``/``f_idx``: the spanning forest's parents (CSR); ``da``/``db``: the
    relaxed edges ``a -> b``; ``d_ptr``/``d_idx``: the DAG's parents (CSR).
    ``best_seq[m]``/``best_val[m]``: a consistent order of object m and its
    CATCH within the object (weights K..1), the Polyak target; with ``improve``
    they are replaced by better orders found on the way. Fills, for the
    multipliers of the object's smallest bound, ``vp_out[m]`` (the shifted
    values ``V'``), ``lam_sum[m]`` (the sum of the multipliers) and ``ub_out[m]``
    (that bound on the object's own CATCH). Stops an object when its bound is within
    ``rel_tol`` of its target, after ``max_iter`` forest solves, or when the
    step has shrunk 20 times.
    """
    n_obj, n_cls = values.shape
    n_d = len(da)
    work_f = greedy_workspace(n_cls, len(f_idx))
    work_d = greedy_workspace(n_cls, len(d_idx))
    vp = np.empty(n_cls)
    lam = np.empty(n_d)
    grad = np.empty(n_d)
    pos = np.empty(n_cls, np.int64)
    seq = np.empty(n_cls, np.int64)
    cand = np.empty(n_cls, np.int64)
    for m in range(n_obj):
        vals = values[m]
        for e in range(n_d):
            lam[e] = 0.0
        best_ub = np.inf
        theta = 1.0
        stall = 0
        halvings = 0
        for it in range(max_iter):
            _shift(vals, lam, da, db, vp)
            greedy_order(vp, f_ptr, f_idx, work_f, seq)
            ub = 0.0
            for j in range(n_cls):
                pos[seq[j]] = j
                ub += (n_cls - j) * vp[seq[j]]
            total = 0.0
            for e in range(n_d):
                total += lam[e]
            ub -= total
            if ub < best_ub:
                if ub < best_ub - 1e-12 * abs(best_ub):
                    stall = 0
                else:
                    stall += 1
                best_ub = ub
                lam_sum[m] = total
                for k in range(n_cls):
                    vp_out[m, k] = vp[k]
            else:
                stall += 1
            if stall >= 5:
                theta *= 0.5
                stall = 0
                halvings += 1
            if improve and it > 0:
                greedy_order(vp, d_ptr, d_idx, work_d, cand)
                val = _catch_local(vals, cand)
                if val > best_val[m]:
                    best_val[m] = val
                    for j in range(n_cls):
                        best_seq[m, j] = cand[j]
            gap = best_ub - best_val[m]
            if gap <= rel_tol * abs(best_ub) or halvings >= 20:
                break
            norm = 0.0
            for e in range(n_d):
                g = pos[da[e]] + 1 - pos[db[e]]  # > 0: the forest solution breaks a -> b
                if g < 0 and lam[e] <= 0.0:
                    g = 0
                grad[e] = g
                norm += g * g
            if norm == 0.0:
                break  # the forest solution is consistent with the DAG: optimal
            step = theta * gap / norm
            for e in range(n_d):
                lam[e] = max(0.0, lam[e] + step * grad[e])
        ub_out[m] = best_ub


def lagrangian(values, hierarchy, seq, max_iter, rel_tol=1e-9, improve=False):
    """The Lagrangian upper bound on the best CATCH of all events, after tuning.

    ``seq``: a consistent order of every object, shape (M, K) (the Polyak
    targets). Returns ``(bound, seq)``: the bound on the CATCH of every
    hierarchically consistent ranking of all events (None with ``improve``),
    and every object's best order found (``seq`` itself unless ``improve``).
    The bound is the forest problem's optimum over all events (Horn's rule per
    object, Chain-Merge across objects) at each object's best multipliers,
    minus their sum.
    """
    f_ptr, f_idx, da, db, d_ptr, d_idx = relaxed_edges(hierarchy)
    values = np.ascontiguousarray(values, dtype=np.float64)
    n_obj, n_cls = values.shape
    best_seq = np.array(seq, dtype=np.int64, order="C", copy=True)
    best_val = object_catch(values, best_seq)
    vp = values.copy()
    lam_sum = np.zeros(n_obj)
    ub = np.empty(n_obj)
    if len(da) and max_iter > 0:
        lagrangian_rows(values, f_ptr, f_idx, da, db, d_ptr, d_idx, best_seq, best_val,
                        int(max_iter), float(rel_tol), bool(improve), vp, lam_sum, ub)
    if improve:
        return None, best_seq  # the orders are what was asked for
    fseq = np.empty((n_obj, n_cls), dtype=np.int64)
    dag_greedy_sequences(vp, f_ptr, f_idx, fseq)
    order = chain_merge(vp, fseq)[0]
    n = values.size
    bound = float(np.dot(np.arange(n, 0, -1, dtype=float), vp.ravel()[order]) - lam_sum.sum())
    return bound, best_seq
