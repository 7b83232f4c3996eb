"""Compiled (numba) kernel of loopy belief propagation, one object at a time.

numba is imported here only, and this module only when loopy BP runs, so
``import hmcpgm`` stays quick. ``cache=True`` keeps the compiled code in a per-user
cache after the first call (see ``hmcpgm._numba``).

Messages are log-odds ``log m(1) - log m(0)`` and may be +-inf (hard evidence,
theta in {0, 1}). Sums of messages keep their finite part and their counts of
+inf and -inf apart, so that removing one message from a sum (the cavity of an
edge) never computes inf - inf; +inf together with -inf is a contradiction (NaN).

Schedule (one iteration): an upward sweep over the classes in reverse
topological order, each class's CPD factor sending to its parents, then a
downward sweep in topological order, each factor sending to its class. Updates
are sequential (each uses the newest messages), so on a forest one iteration is
the exact two-pass sum-product and the second one only confirms it.
"""

import math

import numpy as np
from numba import prange

from .._numba import jit as _jit
from .._numba import jit_parallel as _jit_parallel


@_jit
def _fin(x):
    return 0.0 if math.isinf(x) else x


@_jit
def _combine(fin, pos, neg):
    """A log-odds sum from its finite part and its counts of +inf and -inf."""
    if pos > 0:
        return math.nan if neg > 0 else math.inf
    if neg > 0:
        return -math.inf
    return fin


@_jit
def _log_sigmoid(v):
    if v >= 0:
        return -math.log1p(math.exp(-v))
    if v < 0:
        return v - math.log1p(math.exp(v))
    return v  # NaN


@_jit
def _logaddexp(a, b):
    if math.isnan(a) or math.isnan(b):
        return math.nan
    hi, lo = (a, b) if a >= b else (b, a)
    if hi == -math.inf:
        return -math.inf
    if hi == math.inf:
        return math.inf
    return hi + math.log1p(math.exp(lo - hi))


@_jit
def _to_parent(log_t, log_1mt, sv):
    """log(1 - t + t e^sv): the factor's log-odds message to one parent.

    ``t`` is theta_child times P(all other parents positive), given as ``log_t`` and ``log_1mt`` =
    log(1 - t), and ``sv`` is the child's incoming log-odds (its evidence and its children's factors).
    Both logs are kept: below 1e-308 ``t`` is still not zero (a child forced positive must send
    ``+inf``, not the contradiction of ``t = 0``), and within 1e-16 of 1, ``1 - t`` is still not zero.
    """
    if math.isnan(sv) or math.isnan(log_t):
        return math.nan
    if log_t == -math.inf:
        return math.nan if sv == math.inf else 0.0
    # both terms in log space: log1p(t * expm1(sv)) loses everything when t = 1, sv << 0
    return _logaddexp(log_1mt, log_t + sv)  # sv = -inf gives log(1 - t)


@_jit
def _log_one_minus(log_t, others, skip, log_1mth):
    """log(1 - t) for t = theta * prod_i sigma(x_i): ``others`` holds log sigma(-x_i) of the parents
    (``skip`` excluded), ``log_1mth`` is log(1 - theta). With e_j those complements, 1 - t =
    1 - prod_j (1 - e_j): log(-expm1(log t)) while it is not tiny, else log(sum_j e_j), whose error
    is below sum_j e_j < 1e-12 relative, where e^(log t) is 1 to the last bit (x_i of 1e3)."""
    s = log_1mth
    for i in range(len(others)):
        if i != skip:
            s = _logaddexp(s, others[i])
    if s < -27.6:  # sum_j e_j < 1e-12
        return s
    return math.log(-math.expm1(log_t)) if log_t < 0.0 else -math.inf


@_jit
def _damp(new, old, damping):
    if damping > 0.0 and not math.isinf(new) and not math.isinf(old):
        return (1.0 - damping) * new + damping * old
    return new


@_jit
def _moved(new, old):
    if new == old:
        return 0.0
    return abs(new - old)  # NaN when either is NaN


@_jit
def _cavity(e, p, ev, fc, fp, s_fin, s_pos, s_neg):
    """Log-odds message from parent ``p`` to the factor of edge ``e``: all but that edge."""
    x = fp[e]
    fin = ev[p] if not math.isinf(ev[p]) else 0.0
    pos = (1 if ev[p] == math.inf else 0) + (1 if fc[p] == math.inf else 0) + s_pos[p] - (1 if x == math.inf else 0)
    neg = (1 if ev[p] == -math.inf else 0) + (1 if fc[p] == -math.inf else 0) + s_neg[p] - (1 if x == -math.inf else 0)
    fin += _fin(fc[p]) + s_fin[p] - _fin(x)
    if math.isnan(ev[p]) or math.isnan(fc[p]) or math.isnan(s_fin[p]) or math.isnan(x):
        return math.nan
    return _combine(fin, pos, neg)


@_jit
def _resum(fp, edge_par, s_fin, s_pos, s_neg):
    s_fin[:] = 0.0
    s_pos[:] = 0
    s_neg[:] = 0
    for e in range(len(fp)):
        p = edge_par[e]
        x = fp[e]
        if x == math.inf:
            s_pos[p] += 1
        elif x == -math.inf:
            s_neg[p] += 1
        else:
            s_fin[p] += x


@_jit_parallel
def loopy_kernel(ev_all, log_th, log_1mth, root_logit, order, in_ptr, edge_par, damping, tol, max_iter,
                 out, converged, n_iter, residual, fc0, fp0):
    """Loopy BP for every object (rows of ``ev_all``, shape (M, K)); fills the outputs.

    Edges are sorted by child: the parents of class ``c`` are
    ``edge_par[in_ptr[c]:in_ptr[c + 1]]`` and ``fp`` holds one factor-to-parent
    message per edge in that order. ``fc0`` (M, K) and ``fp0`` (M, E) are starting
    messages; with zero rows every object starts from uniform messages (roots: their
    prior).
    """
    n_obj, k = ev_all.shape
    n_e = len(edge_par)
    for m in prange(n_obj):  # objects are independent: one per thread, each with its own messages
        fc = np.empty(k)
        fp = np.empty(n_e)
        ls = np.empty(n_e)
        lq = np.empty(n_e)
        s_fin = np.empty(k)
        s_pos = np.empty(k, dtype=np.int64)
        s_neg = np.empty(k, dtype=np.int64)
        ev = ev_all[m]
        if fc0.shape[0] > 0:
            fc[:] = fc0[m]
            fp[:] = fp0[m]
        else:
            for c in range(k):
                fc[c] = root_logit[c] if in_ptr[c + 1] == in_ptr[c] else 0.0
            fp[:] = 0.0
        _resum(fp, edge_par, s_fin, s_pos, s_neg)
        change = math.inf
        it = 0
        done = False
        while it < max_iter and not done:
            it += 1
            change = 0.0
            damp = damping if it > 1 else 0.0  # the first messages replace the start values
            # upward sweep: each factor -> its parents, children before parents
            for i in range(k - 1, -1, -1):
                c = order[i]
                lo, hi = in_ptr[c], in_ptr[c + 1]
                if lo == hi:
                    continue
                sv = _combine(s_fin[c] + _fin(ev[c]), s_pos[c] + (1 if ev[c] == math.inf else 0),
                              s_neg[c] + (1 if ev[c] == -math.inf else 0))
                if math.isnan(ev[c]) or math.isnan(s_fin[c]):
                    sv = math.nan
                ls_fin, ls_neg, ls_nan = 0.0, 0, False
                if hi - lo > 1:  # with one parent R = 1 and the sums stay empty
                    for e in range(lo, hi):
                        x = _cavity(e, edge_par[e], ev, fc, fp, s_fin, s_pos, s_neg)
                        v = _log_sigmoid(x)
                        ls[e] = v
                        lq[e] = _log_sigmoid(-x)
                        if math.isnan(v):
                            ls_nan = True
                        elif v == -math.inf:
                            ls_neg += 1
                        else:
                            ls_fin += v
                for e in range(lo, hi):
                    if hi - lo == 1:
                        log_r = 0.0
                    elif ls_nan:
                        log_r = math.nan
                    else:
                        own_neg = 1 if ls[e] == -math.inf else 0
                        log_r = -math.inf if ls_neg - own_neg > 0 else ls_fin - _fin(ls[e])
                    log_t = log_r + log_th[c]
                    log_1mt = _log_one_minus(log_t, lq[lo:hi], e - lo, log_1mth[c])
                    new = _damp(_to_parent(log_t, log_1mt, sv), fp[e], damp)
                    old = fp[e]
                    d = _moved(new, old)
                    if not d <= change:
                        change = d
                    p = edge_par[e]
                    if old == math.inf:
                        s_pos[p] -= 1
                    elif old == -math.inf:
                        s_neg[p] -= 1
                    else:
                        s_fin[p] -= old
                    if new == math.inf:
                        s_pos[p] += 1
                    elif new == -math.inf:
                        s_neg[p] += 1
                    else:
                        s_fin[p] += new
                    fp[e] = new
            _resum(fp, edge_par, s_fin, s_pos, s_neg)  # no drift from the running sums
            # downward sweep: each factor -> its class, parents before children
            for i in range(k):
                c = order[i]
                lo, hi = in_ptr[c], in_ptr[c + 1]
                if lo == hi:
                    continue
                a = log_th[c]
                for e in range(lo, hi):
                    x = _cavity(e, edge_par[e], ev, fc, fp, s_fin, s_pos, s_neg)
                    a += _log_sigmoid(x)
                    lq[e] = _log_sigmoid(-x)
                # logit(exp(a)) = a - log(1 - e^a); 1 - e^a = 0 gives +inf, a = -inf gives -inf, NaN stays NaN
                if math.isnan(a):
                    upd = math.nan
                elif a == -math.inf:
                    upd = -math.inf
                else:
                    upd = a - _log_one_minus(a, lq[lo:hi], -1, log_1mth[c])
                new = _damp(upd, fc[c], damp)
                d = _moved(new, fc[c])
                if not d <= change:
                    change = d
                fc[c] = new
            if math.isnan(change):
                done = True  # contradictory evidence: reported as impossible by the caller
            elif change <= tol:
                done = True
        converged[m] = done  # NaN counts as done: impossible evidence, reported by the caller
        n_iter[m] = it if converged[m] else max_iter
        residual[m] = change
        for c in range(k):
            b = _combine(s_fin[c] + _fin(ev[c]) + _fin(fc[c]),
                         s_pos[c] + (1 if ev[c] == math.inf else 0) + (1 if fc[c] == math.inf else 0),
                         s_neg[c] + (1 if ev[c] == -math.inf else 0) + (1 if fc[c] == -math.inf else 0))
            if math.isnan(ev[c]) or math.isnan(fc[c]) or math.isnan(s_fin[c]):
                b = math.nan
            if b >= 0:
                out[m, c] = 1.0 / (1.0 + math.exp(-b))
            elif b < 0:
                eb = math.exp(b)
                out[m, c] = eb / (1.0 + eb)
            else:
                out[m, c] = math.nan
