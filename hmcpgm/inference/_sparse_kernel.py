"""Compiled (numba) kernels of the sparse junction tree: states, index maps, calibration.

numba is imported here only, and this module only when the sparse engine runs.

A clique state is an int64 bit code: bit ``i`` is the label of the clique member
placed at bit ``i``. Only feasible states are listed (a positive member has every
member that is its ancestor positive). Messages live on separator states, one
column per object of a batch: ``msg[offset + s, o]``.

Numbers. Each clique is computed on one of two paths, chosen per clique and batch:

* linear: potentials are products of factors each scaled so that its largest value
  is 1 (CPD entries, evidence, normalised messages); when the sum of the factors'
  log ranges (-log of the smallest non-zero value) is below ``_LINEAR_RANGE`` no
  product can underflow, so the products are exact to rounding. Zeros are exact
  zeros (hard evidence).
* log: the same sums in log space (one exp per state), for extreme evidence.

Messages are stored linear (max 1) when their smallest non-zero entry is above
``e^-700``, otherwise as logs (max 0); ``fmt`` records which, per clique and object.
"""

import math

import numpy as np

from .._numba import njit


def _jit(func):
    return func if njit is None else njit(cache=True, nogil=True)(func)


_LINEAR_RANGE = 600.0  # sum of factor log ranges below which the linear path is exact
_STORE_LINEAR = 700.0  # messages whose log range is below this are stored linear


@_jit
def enumerate_states(decide, up, down, out):
    """Write every feasible state code into ``out`` in decision order (0 before 1); return the count.

    ``decide`` lists bit positions in decision order; ``up[b]`` / ``down[b]`` are the
    codes of the members that are ancestors / descendants of the member at bit ``b``.
    Every partial assignment kept is extendable, so no branch is a dead end.
    """
    n = len(decide)
    choice = np.zeros(n + 1, np.int64)
    ones = np.zeros(n + 1, np.int64)
    dec = np.zeros(n + 1, np.int64)
    count = 0
    level = 0
    while level >= 0:
        if level == n:
            out[count] = ones[level]
            count += 1
            level -= 1
            continue
        ch = choice[level]
        if ch == 2:
            level -= 1
            continue
        choice[level] = ch + 1
        b = decide[level]
        bit = np.int64(1) << b
        if ch == 0:
            if down[b] & ones[level]:
                continue  # a decided descendant is positive
            ones[level + 1] = ones[level]
        else:
            if up[b] & dec[level] & ~ones[level]:
                continue  # a decided ancestor is negative
            ones[level + 1] = ones[level] | bit
        dec[level + 1] = dec[level] | bit
        choice[level + 1] = 0
        level += 1
    return count


@_jit
def separator_keys(states, bits):
    """Key of each state on a separator: the bits at positions ``bits``, first most significant."""
    out = np.empty(len(states), np.int64)
    for i in range(len(states)):
        c = states[i]
        key = np.int64(0)
        for b in bits:
            key = (key << 1) | ((c >> b) & 1)
        out[i] = key
    return out


@_jit
def blocks(keys):
    """Start of each run of equal keys (sorted ``keys``), plus the end; and the distinct keys."""
    n = len(keys)
    starts = np.empty(n + 1, np.int64)
    uniq = np.empty(n, np.int64)
    nb = 0
    for i in range(n):
        if i == 0 or keys[i] != keys[i - 1]:
            starts[nb] = i
            uniq[nb] = keys[i]
            nb += 1
    starts[nb] = n
    return starts[: nb + 1].copy(), uniq[:nb].copy()


@_jit
def _fill_evidence(b, ev_ptr, ev_class, ll0, ll1, log_path, tab):
    """Evidence tables of clique ``b``: chunk ``q`` of 8 evidence bits at rows ``q*256 + idx``."""
    lo, hi = ev_ptr[b], ev_ptr[b + 1]
    n_ev = hi - lo
    n_obj = tab.shape[1]
    q = 0
    while 8 * q < n_ev:
        width = min(8, n_ev - 8 * q)
        for idx in range(1 << width):
            for o in range(n_obj):
                v = 0.0 if log_path else 1.0
                for i in range(width):
                    j = ev_class[lo + 8 * q + i]
                    if (idx >> i) & 1:
                        x = ll1[j, o]
                    else:
                        x = ll0[j, o]
                    if log_path:
                        v += x
                    else:
                        v *= math.exp(x)
                tab[q * 256 + idx, o] = v
        q += 1
    return n_ev


@_jit
def _cpd_value(c, lo, hi, cpd_bit, cpd_pmask, cpd_t1, cpd_t0, log_path):
    v = 0.0 if log_path else 1.0
    for a in range(lo, hi):
        if (c >> cpd_bit[a]) & 1:
            x = cpd_t1[a]
        elif (c & cpd_pmask[a]) == cpd_pmask[a]:
            x = cpd_t0[a]
        else:
            continue
        if log_path:
            v += math.log(x) if x > 0 else -math.inf
        else:
            v *= x
    return v


@_jit
def _child_key(ch, c, si, ckind, maps, map_off, luts, lut_off, sbit_ptr, sbits):
    """Index of state ``c`` (the ``si``-th state of the parent clique) in child ``ch``'s separator."""
    if ckind[ch] == 0:
        return maps[map_off[ch] + si]
    key = np.int64(0)
    for t in range(sbit_ptr[ch], sbit_ptr[ch + 1]):
        key = (key << 1) | ((c >> sbits[t]) & 1)
    return luts[lut_off[ch] + key]


@_jit
def _msg_log(msg, fmt, ch, row, o):
    v = msg[row, o]
    if fmt[ch, o] == 1:
        return v
    return math.log(v) if v > 0 else -math.inf


@_jit
def _finish(msg, fmt, rng, b, lo, n, o, log_path, bad):
    """Normalise the message rows lo..lo+n of object ``o``; store linear or log with its range."""
    if log_path:
        top = -math.inf
        for s in range(lo, lo + n):
            if msg[s, o] > top:
                top = msg[s, o]
        if top == -math.inf:
            bad[o] = True
            for s in range(lo, lo + n):
                msg[s, o] = 0.0
            fmt[b, o] = 0
            rng[b, o] = 0.0
            return
        low = 0.0
        for s in range(lo, lo + n):
            msg[s, o] -= top
            if msg[s, o] < low and msg[s, o] > -math.inf:
                low = msg[s, o]
        rng[b, o] = -low
        if -low < _STORE_LINEAR:
            for s in range(lo, lo + n):
                msg[s, o] = math.exp(msg[s, o])
            fmt[b, o] = 0
        else:
            fmt[b, o] = 1
    else:
        top = 0.0
        for s in range(lo, lo + n):
            if msg[s, o] > top:
                top = msg[s, o]
        if top == 0.0:
            bad[o] = True
            rng[b, o] = 0.0
            fmt[b, o] = 0
            return
        low = 1.0
        for s in range(lo, lo + n):
            msg[s, o] /= top
            if msg[s, o] < low and msg[s, o] > 0.0:
                low = msg[s, o]
        rng[b, o] = -math.log(low)
        fmt[b, o] = 0


@_jit
def calibrate(parent, state_ptr, states, blk_off, blk_ptr, msg_off,
              ch_ptr, children, ckind, map_off, maps, lut_off, luts, sbit_ptr, sbits,
              cpd_ptr, cpd_bit, cpd_pmask, cpd_t1, cpd_t0, cpd_rng,
              ev_ptr, ev_class, out_ptr, out_class, out_bit,
              ll0, ll1, ev_rng, msg, fmt, rng, ev_tab, marg, acc, out, bad):
    """Calibrate the junction forest for one batch of objects (columns of ``ll0, ll1``).

    Fills ``out[j, o]`` = P(Y_j = 1 | evidence of object o) and ``bad[o]`` for
    evidence of probability zero. Upward pass (children before parents): each
    non-root clique sends the sum of its potential times its children's messages
    over each block of states sharing a parent-separator state. Downward pass
    (parents first): the belief (the same product times the parent's message) is
    summed onto each child's separator and divided by the child's upward message
    (Hugin; 0/0 is 0), and onto the classes the clique reports.
    """
    n_cl = len(parent)
    n_obj = ll0.shape[1]
    max_ch = 0
    for b in range(n_cl):
        max_ch = max(max_ch, ch_ptr[b + 1] - ch_ptr[b])
    keys = np.empty(max_ch, np.int64)
    crow = np.empty(max_ch, np.int64)
    emask = np.empty(8, np.int64)
    big = np.empty(n_obj)
    z = np.empty(n_obj)
    top = np.empty(n_obj)
    for o in range(n_obj):
        bad[o] = False
    # ------------------------------------------------------------------ upward
    for b in range(n_cl - 1, -1, -1):
        if parent[b] < 0:
            continue
        clo, chi = ch_ptr[b], ch_ptr[b + 1]
        log_path = False
        for o in range(n_obj):
            r = cpd_rng[b]
            for t in range(ev_ptr[b], ev_ptr[b + 1]):
                r += ev_rng[ev_class[t], o]
            for t in range(clo, chi):
                r += rng[children[t], o]
            if r >= _LINEAR_RANGE:
                log_path = True
        n_ev = _fill_evidence(b, ev_ptr, ev_class, ll0, ll1, log_path, ev_tab)
        n_q = (n_ev + 7) // 8
        for q in range(n_q):
            emask[q] = (np.int64(1) << min(8, n_ev - 8 * q)) - 1
        s0 = state_ptr[b]
        bo = blk_off[b]
        n_blk = blk_off[b + 1] - bo - 1
        m0 = msg_off[b]
        for s in range(n_blk):
            for o in range(n_obj):
                acc[o] = 0.0
                top[o] = -math.inf
            for si in range(blk_ptr[bo + s], blk_ptr[bo + s + 1]):
                c = states[s0 + si]
                base = _cpd_value(c, cpd_ptr[b], cpd_ptr[b + 1], cpd_bit, cpd_pmask, cpd_t1, cpd_t0, log_path)
                for t in range(clo, chi):
                    keys[t - clo] = msg_off[children[t]] + _child_key(
                        children[t], c, si, ckind, maps, map_off, luts, lut_off, sbit_ptr, sbits)
                if not log_path:
                    if base == 0.0:
                        continue
                    for o in range(n_obj):
                        v = base
                        for q in range(n_q):
                            v *= ev_tab[q * 256 + ((c >> (8 * q)) & emask[q]), o]
                        for t in range(chi - clo):
                            v *= msg[keys[t], o]
                        acc[o] += v
                else:
                    for o in range(n_obj):
                        x = base
                        for q in range(n_q):
                            x += ev_tab[q * 256 + ((c >> (8 * q)) & emask[q]), o]
                        for t in range(chi - clo):
                            x += _msg_log(msg, fmt, children[clo + t], keys[t], o)
                        if x == -math.inf:
                            continue
                        if x > top[o]:  # online log-sum-exp
                            acc[o] = acc[o] * math.exp(top[o] - x) + 1.0
                            top[o] = x
                        else:
                            acc[o] += math.exp(x - top[o])
            for o in range(n_obj):
                if log_path:
                    msg[m0 + s, o] = top[o] + math.log(acc[o]) if acc[o] > 0 else -math.inf
                else:
                    msg[m0 + s, o] = acc[o]
        for o in range(n_obj):
            _finish(msg, fmt, rng, b, m0, n_blk, o, log_path, bad)
    # ------------------------------------------------------------------ downward
    for b in range(n_cl):
        clo, chi = ch_ptr[b], ch_ptr[b + 1]
        p = parent[b]
        log_path = False
        for o in range(n_obj):
            r = cpd_rng[b]
            for t in range(ev_ptr[b], ev_ptr[b + 1]):
                r += ev_rng[ev_class[t], o]
            for t in range(clo, chi):
                r += rng[children[t], o]
            if p >= 0:
                r += rng[b, o]
            if r >= _LINEAR_RANGE:
                log_path = True
        n_ev = _fill_evidence(b, ev_ptr, ev_class, ll0, ll1, log_path, ev_tab)
        n_q = (n_ev + 7) // 8
        for q in range(n_q):
            emask[q] = (np.int64(1) << min(8, n_ev - 8 * q)) - 1
        s0 = state_ptr[b]
        bo = blk_off[b]
        n_blk = blk_off[b + 1] - bo - 1
        m0 = msg_off[b]
        # scratch rows of each child's separator marginal
        n_marg = 0
        for t in range(clo, chi):
            ch = children[t]
            n_sep = blk_off[ch + 1] - blk_off[ch] - 1
            crow[t - clo] = n_marg
            for s in range(n_marg, n_marg + n_sep):
                for o in range(n_obj):
                    marg[s, o] = 0.0
            n_marg += n_sep
        for t in range(out_ptr[b], out_ptr[b + 1]):
            for o in range(n_obj):
                out[out_class[t], o] = 0.0
        for o in range(n_obj):
            z[o] = 0.0
            big[o] = -math.inf
        for sweep in range(2 if log_path else 1):
            # log path: sweep 0 finds each object's largest log belief, sweep 1 sums
            for s in range(n_blk):
                for si in range(blk_ptr[bo + s], blk_ptr[bo + s + 1]):
                    c = states[s0 + si]
                    base = _cpd_value(c, cpd_ptr[b], cpd_ptr[b + 1], cpd_bit, cpd_pmask, cpd_t1, cpd_t0, log_path)
                    if not log_path and base == 0.0:
                        continue
                    for t in range(clo, chi):
                        keys[t - clo] = _child_key(children[t], c, si, ckind, maps, map_off, luts, lut_off,
                                                   sbit_ptr, sbits)
                    for o in range(n_obj):
                        if bad[o]:
                            continue
                        if log_path:
                            x = base
                            for q in range(n_q):
                                x += ev_tab[q * 256 + ((c >> (8 * q)) & emask[q]), o]
                            for t in range(chi - clo):
                                ch = children[clo + t]
                                x += _msg_log(msg, fmt, ch, msg_off[ch] + keys[t], o)
                            if p >= 0:
                                x += _msg_log(msg, fmt, b, m0 + s, o)
                            if sweep == 0:
                                if x > big[o]:
                                    big[o] = x
                                continue
                            if x == -math.inf:
                                continue
                            v = math.exp(x - big[o])
                        else:
                            v = base
                            for q in range(n_q):
                                v *= ev_tab[q * 256 + ((c >> (8 * q)) & emask[q]), o]
                            for t in range(chi - clo):
                                v *= msg[msg_off[children[clo + t]] + keys[t], o]
                            if p >= 0:
                                v *= msg[m0 + s, o]
                        if v == 0.0:
                            continue
                        z[o] += v
                        for t in range(chi - clo):
                            marg[crow[t] + keys[t], o] += v
                        for t in range(out_ptr[b], out_ptr[b + 1]):
                            if (c >> out_bit[t]) & 1:
                                out[out_class[t], o] += v
        for o in range(n_obj):
            if z[o] == 0.0:
                bad[o] = True
            if bad[o]:
                continue
            for t in range(out_ptr[b], out_ptr[b + 1]):
                out[out_class[t], o] /= z[o]
        # Hugin: the message to each child is its separator marginal over its upward message
        row = 0
        for t in range(clo, chi):
            ch = children[t]
            n_sep = blk_off[ch + 1] - blk_off[ch] - 1
            c0 = msg_off[ch]
            for o in range(n_obj):
                if bad[o]:
                    continue
                child_log = fmt[ch, o] == 1
                if log_path or child_log:
                    for s in range(n_sep):
                        mg = marg[row + s, o]
                        upv = _msg_log(msg, fmt, ch, c0 + s, o)
                        if mg > 0 and upv > -math.inf:
                            lm = math.log(mg) - upv
                            msg[c0 + s, o] = lm
                        else:
                            msg[c0 + s, o] = -math.inf
                    _finish(msg, fmt, rng, ch, c0, n_sep, o, True, bad)
                else:
                    for s in range(n_sep):
                        upv = msg[c0 + s, o]
                        msg[c0 + s, o] = marg[row + s, o] / upv if upv > 0 else 0.0
                    _finish(msg, fmt, rng, ch, c0, n_sep, o, False, bad)
            row += n_sep
