"""Compiled (numba) kernels of the sparse junction tree: states, index maps, calibration.

numba is imported here only, and this module only when the sparse engine runs.

A clique state is an int64 bit code: bit ``i`` is the label of the clique member
placed at bit ``i``. Only feasible states are listed (a positive member has every
member that is its ancestor positive). Messages live on separator states, one
column per object of a batch: ``msg[offset + s, o]``.

Numbers. Every factor is scaled so that its largest value is 1 (CPD entries,
evidence pairs, messages normalised per object), so a product of factors never
overflows and, unless it falls below ``_TINY``, carries full relative precision.
Each clique is first computed in linear space (multiplications only). A product
below ``_TINY`` is checked in log space: if it is truly zero (hard evidence) it is
skipped; otherwise precision may have been lost and the clique is recomputed for
the batch in log space (one exp per state), which is exact for any evidence.
Messages are kept linear (``mlin``) and, when some consumer needs it or the
producer worked in log space, also as logs (``mlog``; ``has_log`` per clique and
object says whether that copy is current).
"""

import math

import numpy as np

from .._numba import njit


def _jit(func):
    return func if njit is None else njit(cache=True, nogil=True)(func)


_TINY = 1e-280  # linear products at least this large lost no precision


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
def _fill_evidence(b, ev_ptr, ev_class, ll0, ll1, tab_lin, tab_log, emask):
    """Evidence tables of clique ``b`` (its evidence classes sit at bits 0, 1, ...).

    Chunk ``q`` of up to 8 evidence bits has rows ``q * 256 + idx``; ``emask[q]``
    selects its bits. Returns the number of chunks.
    """
    lo, hi = ev_ptr[b], ev_ptr[b + 1]
    n_ev = hi - lo
    n_obj = tab_lin.shape[1]
    n_q = (n_ev + 7) // 8
    for q in range(n_q):
        width = min(8, n_ev - 8 * q)
        emask[q] = (np.int64(1) << width) - 1
        for idx in range(1 << width):
            for o in range(n_obj):
                x = 0.0
                for i in range(width):
                    j = ev_class[lo + 8 * q + i]
                    x += ll1[j, o] if (idx >> i) & 1 else ll0[j, o]
                tab_log[q * 256 + idx, o] = x
                tab_lin[q * 256 + idx, o] = math.exp(x)
    return n_q


@_jit
def _cpd(c, lo, hi, cpd_bit, cpd_pmask, t1, t0):
    """Product of the clique's CPD entries at state ``c`` (``t1, t0``: linear or log tables)."""
    v = 1.0
    for a in range(lo, hi):
        if (c >> cpd_bit[a]) & 1:
            v *= t1[a]
        elif (c & cpd_pmask[a]) == cpd_pmask[a]:
            v *= t0[a]
    return v


@_jit
def _cpd_log(c, lo, hi, cpd_bit, cpd_pmask, lt1, lt0):
    x = 0.0
    for a in range(lo, hi):
        if (c >> cpd_bit[a]) & 1:
            x += lt1[a]
        elif (c & cpd_pmask[a]) == cpd_pmask[a]:
            x += lt0[a]
    return x


@_jit
def _child_keys(c, si, clo, chi, children, ckind, maps, map_off, luts, lut_off, sbit_ptr, sbits, keys):
    """Index of state ``c`` (the ``si``-th state of its clique) in each child's separator."""
    for t in range(clo, chi):
        ch = children[t]
        if ckind[ch] == 0:
            keys[t - clo] = maps[map_off[ch] + si]
        else:
            key = np.int64(0)
            for u in range(sbit_ptr[ch], sbit_ptr[ch + 1]):
                key = (key << 1) | ((c >> sbits[u]) & 1)
            keys[t - clo] = luts[lut_off[ch] + key]


@_jit
def _ensure_log(b, lo, n, mlin, mlog, has_log):
    """Make the log copy of message rows lo..lo+n current for every object."""
    for o in range(mlin.shape[1]):
        if not has_log[b, o]:
            for s in range(lo, lo + n):
                v = mlin[s, o]
                mlog[s, o] = math.log(v) if v > 0 else -math.inf
            has_log[b, o] = True


@_jit
def _normalise(b, lo, n, o, from_log, mlin, mlog, has_log, bad):
    """Scale message rows lo..lo+n of object ``o`` to a largest value of 1 (0 in logs)."""
    if from_log:
        top = -math.inf
        for s in range(lo, lo + n):
            top = max(top, mlog[s, o])
        if top == -math.inf:
            bad[o] = True
            top = 0.0
        for s in range(lo, lo + n):
            mlog[s, o] -= top
            mlin[s, o] = math.exp(mlog[s, o])
        has_log[b, o] = True
    else:
        top = 0.0
        for s in range(lo, lo + n):
            top = max(top, mlin[s, o])
        if top == 0.0:
            bad[o] = True
            top = 1.0
        for s in range(lo, lo + n):
            mlin[s, o] /= top
        has_log[b, o] = False


@_jit
def _log_product(c, o, base, n_q, emask, tab_log, keys, clo, chi, children, msg_off, mlog, extra):
    """Log of one state's product for object ``o`` (``extra``: the parent message row or -1)."""
    x = base
    for q in range(n_q):
        x += tab_log[q * 256 + ((c >> (8 * q)) & emask[q]), o]
    for t in range(chi - clo):
        x += mlog[msg_off[children[clo + t]] + keys[t], o]
    if extra >= 0:
        x += mlog[extra, o]
    return x


@_jit
def _inputs_log(b, clo, chi, children, msg_off, blk_off, mlin, mlog, has_log, with_own):
    for t in range(clo, chi):
        ch = children[t]
        _ensure_log(ch, msg_off[ch], blk_off[ch + 1] - blk_off[ch] - 1, mlin, mlog, has_log)
    if with_own:
        _ensure_log(b, msg_off[b], blk_off[b + 1] - blk_off[b] - 1, mlin, mlog, has_log)


@_jit
def _upward(b, log_path, st, ev, ll0, ll1, mlin, mlog, has_log, tab_lin, tab_log, emask, keys, acc, top, bad):
    """Message from clique ``b`` to its parent for every object; False if linear precision was lost."""
    (state_ptr, states, blk_off, blk_ptr, msg_off, ch_ptr, children, ckind, maps, map_off, luts,
     lut_off, sbit_ptr, sbits, cpd_ptr, cpd_bit, cpd_pmask, t1, t0, lt1, lt0) = st
    ev_ptr, ev_class = ev
    n_obj = ll0.shape[1]
    clo, chi = ch_ptr[b], ch_ptr[b + 1]
    n_q = _fill_evidence(b, ev_ptr, ev_class, ll0, ll1, tab_lin, tab_log, emask)
    if log_path:
        _inputs_log(b, clo, chi, children, msg_off, blk_off, mlin, mlog, has_log, False)
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
            _child_keys(c, si, clo, chi, children, ckind, maps, map_off, luts, lut_off, sbit_ptr, sbits, keys)
            if not log_path:
                base = _cpd(c, cpd_ptr[b], cpd_ptr[b + 1], cpd_bit, cpd_pmask, t1, t0)
                if base == 0.0:
                    continue
                for o in range(n_obj):
                    v = base
                    for q in range(n_q):
                        v *= tab_lin[q * 256 + ((c >> (8 * q)) & emask[q]), o]
                    for t in range(chi - clo):
                        v *= mlin[msg_off[children[clo + t]] + keys[t], o]
                    if v < _TINY:
                        _inputs_log(b, clo, chi, children, msg_off, blk_off, mlin, mlog, has_log, False)
                        lb = _cpd_log(c, cpd_ptr[b], cpd_ptr[b + 1], cpd_bit, cpd_pmask, lt1, lt0)
                        if _log_product(c, o, lb, n_q, emask, tab_log, keys, clo, chi, children, msg_off,
                                        mlog, -1) > -math.inf:
                            return False
                        continue
                    acc[o] += v
            else:
                base = _cpd_log(c, cpd_ptr[b], cpd_ptr[b + 1], cpd_bit, cpd_pmask, lt1, lt0)
                if base == -math.inf:
                    continue
                for o in range(n_obj):
                    x = _log_product(c, o, base, n_q, emask, tab_log, keys, clo, chi, children, msg_off, mlog, -1)
                    if x == -math.inf:
                        continue
                    if x > top[o]:  # online log-sum-exp
                        acc[o] = acc[o] * math.exp(top[o] - x) + 1.0
                        top[o] = x
                    else:
                        acc[o] += math.exp(x - top[o])
        for o in range(n_obj):
            if log_path:
                mlog[m0 + s, o] = top[o] + math.log(acc[o]) if acc[o] > 0 else -math.inf
            else:
                mlin[m0 + s, o] = acc[o]
    for o in range(n_obj):
        _normalise(b, m0, n_blk, o, log_path, mlin, mlog, has_log, bad)
    return True


@_jit
def _downward(b, p, log_path, st, ev, out_ptr, out_class, out_bit, ll0, ll1, mlin, mlog, has_log,
              tab_lin, tab_log, emask, keys, crow, marg, z, big, out, bad):
    """Belief of clique ``b``: class marginals and messages to its children; False if precision was lost."""
    (state_ptr, states, blk_off, blk_ptr, msg_off, ch_ptr, children, ckind, maps, map_off, luts,
     lut_off, sbit_ptr, sbits, cpd_ptr, cpd_bit, cpd_pmask, t1, t0, lt1, lt0) = st
    ev_ptr, ev_class = ev
    n_obj = ll0.shape[1]
    clo, chi = ch_ptr[b], ch_ptr[b + 1]
    n_q = _fill_evidence(b, ev_ptr, ev_class, ll0, ll1, tab_lin, tab_log, emask)
    if log_path:
        _inputs_log(b, clo, chi, children, msg_off, blk_off, mlin, mlog, has_log, p >= 0)
    s0 = state_ptr[b]
    bo = blk_off[b]
    n_blk = blk_off[b + 1] - bo - 1
    m0 = msg_off[b]
    n_marg = 0
    for t in range(clo, chi):
        ch = children[t]
        crow[t - clo] = n_marg
        n_marg += blk_off[ch + 1] - blk_off[ch] - 1
    for r in range(n_marg):
        for o in range(n_obj):
            marg[r, o] = 0.0
    for t in range(out_ptr[b], out_ptr[b + 1]):
        for o in range(n_obj):
            out[out_class[t], o] = 0.0
    for o in range(n_obj):
        z[o] = 0.0
        big[o] = -math.inf
    for sweep in range(2 if log_path else 1):
        # log path: sweep 0 finds each object's largest log belief, sweep 1 sums
        for s in range(n_blk):
            own = m0 + s if p >= 0 else -1
            for si in range(blk_ptr[bo + s], blk_ptr[bo + s + 1]):
                c = states[s0 + si]
                if log_path:
                    base = _cpd_log(c, cpd_ptr[b], cpd_ptr[b + 1], cpd_bit, cpd_pmask, lt1, lt0)
                    if base == -math.inf:
                        continue
                else:
                    base = _cpd(c, cpd_ptr[b], cpd_ptr[b + 1], cpd_bit, cpd_pmask, t1, t0)
                    if base == 0.0:
                        continue
                _child_keys(c, si, clo, chi, children, ckind, maps, map_off, luts, lut_off, sbit_ptr, sbits, keys)
                for o in range(n_obj):
                    if bad[o]:
                        continue
                    if log_path:
                        x = _log_product(c, o, base, n_q, emask, tab_log, keys, clo, chi, children, msg_off,
                                         mlog, own)
                        if sweep == 0:
                            big[o] = max(big[o], x)
                            continue
                        if x == -math.inf:
                            continue
                        v = math.exp(x - big[o])
                    else:
                        v = base
                        for q in range(n_q):
                            v *= tab_lin[q * 256 + ((c >> (8 * q)) & emask[q]), o]
                        for t in range(chi - clo):
                            v *= mlin[msg_off[children[clo + t]] + keys[t], o]
                        if own >= 0:
                            v *= mlin[own, o]
                        if v < _TINY:
                            _inputs_log(b, clo, chi, children, msg_off, blk_off, mlin, mlog, has_log, p >= 0)
                            lb = _cpd_log(c, cpd_ptr[b], cpd_ptr[b + 1], cpd_bit, cpd_pmask, lt1, lt0)
                            if _log_product(c, o, lb, n_q, emask, tab_log, keys, clo, chi, children, msg_off,
                                            mlog, own) > -math.inf:
                                return False
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
    for t in range(clo, chi):
        ch = children[t]
        n_sep = blk_off[ch + 1] - blk_off[ch] - 1
        c0 = msg_off[ch]
        row = crow[t - clo]
        for o in range(n_obj):
            if bad[o]:
                continue
            use_log = log_path or has_log[ch, o]
            if not use_log:
                for s in range(n_sep):
                    u = mlin[c0 + s, o]
                    if 0.0 < u < _TINY:
                        use_log = True
                        break
            if use_log:
                if not has_log[ch, o]:
                    for s in range(n_sep):
                        u = mlin[c0 + s, o]
                        mlog[c0 + s, o] = math.log(u) if u > 0 else -math.inf
                for s in range(n_sep):
                    mg = marg[row + s, o]
                    u = mlog[c0 + s, o]
                    mlog[c0 + s, o] = math.log(mg) - u if mg > 0 and u > -math.inf else -math.inf
                _normalise(ch, c0, n_sep, o, True, mlin, mlog, has_log, bad)
            else:
                for s in range(n_sep):
                    u = mlin[c0 + s, o]
                    mlin[c0 + s, o] = marg[row + s, o] / u if u > 0 else 0.0
                _normalise(ch, c0, n_sep, o, False, mlin, mlog, has_log, bad)
    return True


@_jit
def calibrate(parent, st, ev, out_ptr, out_class, out_bit, ll0, ll1, mlin, mlog, has_log,
              tab_lin, tab_log, marg, out, bad):
    """Calibrate the junction forest for one batch of objects (columns of ``ll0, ll1``).

    ``st`` and ``ev`` are tuples of the compiled structure's arrays. Fills
    ``out[j, o]`` = P(Y_j = 1 | evidence of object o) and ``bad[o]`` for evidence of
    probability zero. Upward pass (children before parents): each non-root clique
    sends the sum of its potential times its children's messages over each block of
    states sharing a parent-separator state. Downward pass (parents first): the
    belief (that product times the parent's message) is summed onto each child's
    separator and divided by the child's upward message (Hugin; 0/0 is 0), and onto
    the classes the clique reports. Returns the number of cliques redone in log space.
    """
    n_cl = len(parent)
    n_obj = ll0.shape[1]
    ch_ptr = st[5]
    max_ch = 1
    for b in range(n_cl):
        max_ch = max(max_ch, ch_ptr[b + 1] - ch_ptr[b])
    keys = np.empty(max_ch, np.int64)
    crow = np.empty(max_ch, np.int64)
    emask = np.empty(8, np.int64)
    acc = np.empty(n_obj)
    top = np.empty(n_obj)
    n_log = 0
    for o in range(n_obj):
        bad[o] = False
    for b in range(n_cl):
        for o in range(n_obj):
            has_log[b, o] = False
    for b in range(n_cl - 1, -1, -1):
        if parent[b] < 0:
            continue
        if not _upward(b, False, st, ev, ll0, ll1, mlin, mlog, has_log, tab_lin, tab_log, emask, keys,
                       acc, top, bad):
            n_log += 1
            _upward(b, True, st, ev, ll0, ll1, mlin, mlog, has_log, tab_lin, tab_log, emask, keys,
                    acc, top, bad)
    for b in range(n_cl):
        p = parent[b]
        if not _downward(b, p, False, st, ev, out_ptr, out_class, out_bit, ll0, ll1, mlin, mlog, has_log,
                         tab_lin, tab_log, emask, keys, crow, marg, acc, top, out, bad):
            n_log += 1
            _downward(b, p, True, st, ev, out_ptr, out_class, out_bit, ll0, ll1, mlin, mlog, has_log,
                      tab_lin, tab_log, emask, keys, crow, marg, acc, top, out, bad)
    return n_log
