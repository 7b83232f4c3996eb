"""Compiled (numba) kernels that calibrate the sparse junction tree, batch by batch.

numba is imported here only, and this module only when the sparse engine runs.

A clique state is an int64 bit code: bit ``i`` is the label of the clique member
placed at bit ``i``. Only feasible states are listed (a positive member has every
member that is its ancestor positive). Messages live on separator states, one
column per object of a batch: ``msg[offset + s, o]``.

Local factors. A clique's evidence pairs, CPD entries and the messages of children
with narrow separators each depend on a few of its members; they are packed into
*groups* of at most 12 members, and each group gets a table per object over the
configurations of its members (the product of its factors). A state then costs one
table look-up per group (its group key is gathered from the state code byte by
byte) and one per child whose separator is wide (through a stored int32 map). In
the downward pass the belief is summed per group configuration and the group sums
give the children's separator marginals and the class marginals.

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

from .._numba import jit as _jit

_TINY = 1e-280  # linear products at least this large lost no precision


@_jit
def _cpd_log(c, lo, hi, bcpd, bcpd_bit, bcpd_pmask, lt1, lt0):
    x = 0.0
    for a in range(lo, hi):
        e = bcpd[a]
        if (c >> bcpd_bit[a]) & 1:
            x += lt1[e]
        elif (c & bcpd_pmask[a]) == bcpd_pmask[a]:
            x += lt0[e]
    return x


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
def _normalise_linear(b, lo, n, mlin, has_log, bad):
    """:func:`_normalise` of linear rows lo..lo+n for every object at once (two sweeps along the rows)."""
    n_obj = mlin.shape[1]
    top = np.zeros(n_obj)
    for s in range(lo, lo + n):
        for o in range(n_obj):
            top[o] = max(top[o], mlin[s, o])
    for o in range(n_obj):
        if top[o] == 0.0:
            bad[o] = True
            top[o] = 1.0
        has_log[b, o] = False
    for s in range(lo, lo + n):
        for o in range(n_obj):
            mlin[s, o] /= top[o]


@_jit
def _tables(b, log_space, st, gr, el0, el1, ll0, ll1, mlin, mlog, has_log, tab):
    """Per-object tables of clique ``b``'s groups: the product (or log sum) of their factors."""
    (parent, state_ptr, states, blk_off, blk_ptr, msg_off, ch_ptr, children, ckind, maps, map_off, luts,
     lut_off, bcpd_ptr, bcpd, bcpd_bit, bcpd_pmask, t1, t0, lt1, lt0, n_bytes) = st
    (grp_ptr, gnb, gpext_off, gpext, gtab, gf_ptr, gf_kind, gf_a, gf_i, gf_pm, gf_sb_ptr, gf_sb) = gr
    n_obj = el0.shape[1]
    if log_space:
        for f in range(gf_ptr[grp_ptr[b]], gf_ptr[grp_ptr[b + 1]]):
            if gf_kind[f] == 2:
                ch = gf_a[f]
                _ensure_log(ch, msg_off[ch], blk_off[ch + 1] - blk_off[ch] - 1, mlin, mlog, has_log)
    for g in range(grp_ptr[b], grp_ptr[b + 1]):
        t0_row = gtab[g]
        for u in range(1 << gnb[g]):
            row = t0_row + u
            for o in range(n_obj):
                tab[row, o] = 0.0 if log_space else 1.0
            for f in range(gf_ptr[g], gf_ptr[g + 1]):
                kind = gf_kind[f]
                if kind == 0:  # evidence of a class
                    j = gf_a[f]
                    on = (u >> gf_i[f]) & 1
                    for o in range(n_obj):
                        if log_space:
                            tab[row, o] += ll1[j, o] if on else ll0[j, o]
                        else:
                            tab[row, o] *= el1[j, o] if on else el0[j, o]
                    continue
                if kind == 1:  # a CPD entry
                    e = gf_a[f]
                    if (u >> gf_i[f]) & 1:
                        val = lt1[e] if log_space else t1[e]
                    elif (u & gf_pm[f]) == gf_pm[f]:
                        val = lt0[e] if log_space else t0[e]
                    else:
                        continue
                    for o in range(n_obj):
                        if log_space:
                            tab[row, o] += val
                        else:
                            tab[row, o] *= val
                    continue
                # the upward message of a child with a narrow separator
                ch = gf_a[f]
                key = 0
                for q in range(gf_sb_ptr[f], gf_sb_ptr[f + 1]):
                    key = (key << 1) | ((u >> gf_sb[q]) & 1)
                idx = luts[lut_off[ch] + key]
                for o in range(n_obj):
                    if idx < 0:  # not a feasible configuration of the group: never looked up
                        tab[row, o] = -math.inf if log_space else 0.0
                    elif log_space:
                        tab[row, o] += mlog[msg_off[ch] + idx, o]
                    else:
                        tab[row, o] *= mlin[msg_off[ch] + idx, o]


@_jit
def _inputs_log(b, with_own, st, gr, el0, el1, ll0, ll1, mlin, mlog, has_log, tab_log):
    """Log tables of clique ``b`` and log copies of its wide children's (and its own) messages."""
    (parent, state_ptr, states, blk_off, blk_ptr, msg_off, ch_ptr, children, ckind, maps, map_off, luts,
     lut_off, bcpd_ptr, bcpd, bcpd_bit, bcpd_pmask, t1, t0, lt1, lt0, n_bytes) = st
    _tables(b, True, st, gr, el0, el1, ll0, ll1, mlin, mlog, has_log, tab_log)
    for t in range(ch_ptr[b], ch_ptr[b + 1]):
        ch = children[t]
        if ckind[ch] == 0:
            _ensure_log(ch, msg_off[ch], blk_off[ch + 1] - blk_off[ch] - 1, mlin, mlog, has_log)
    if with_own:
        _ensure_log(b, msg_off[b], blk_off[b + 1] - blk_off[b] - 1, mlin, mlog, has_log)


@_jit
def _pass(b, upward, log_path, st, gr, el0, el1, ll0, ll1, mlin, mlog, has_log, tab, tab_log, gsum, marg,
          keys, ikeys, gkeys, mbase, acc, top, bad):
    """One clique's pass for a batch; False if a linear product lost precision.

    Upward: the message to the parent, one sum per block of states. Downward: the
    belief summed per group configuration (``gsum``) and onto the separators of
    wide children (``marg``, at rows ``mbase``), the normaliser in ``acc`` (relative
    to ``top`` in log space).
    """
    (parent, state_ptr, states, blk_off, blk_ptr, msg_off, ch_ptr, children, ckind, maps, map_off, luts,
     lut_off, bcpd_ptr, bcpd, bcpd_bit, bcpd_pmask, t1, t0, lt1, lt0, n_bytes) = st
    (grp_ptr, gnb, gpext_off, gpext, gtab, gf_ptr, gf_kind, gf_a, gf_i, gf_pm, gf_sb_ptr, gf_sb) = gr
    n_obj = el0.shape[1]
    g_lo = grp_ptr[b]
    n_g = grp_ptr[b + 1] - g_lo
    nb = n_bytes[b]
    use_own = (not upward) and parent[b] >= 0
    vv = np.empty(n_obj)
    n_k = 0
    wide_map = np.empty(ch_ptr[b + 1] - ch_ptr[b], np.int64)
    wide_msg = np.empty(ch_ptr[b + 1] - ch_ptr[b], np.int64)
    for t in range(ch_ptr[b], ch_ptr[b + 1]):
        ch = children[t]
        if ckind[ch] == 0:
            wide_map[n_k] = map_off[ch]
            wide_msg[n_k] = msg_off[ch]
            n_k += 1
    if log_path:
        _inputs_log(b, use_own, st, gr, el0, el1, ll0, ll1, mlin, mlog, has_log, tab_log)
    else:
        _tables(b, False, st, gr, el0, el1, ll0, ll1, mlin, mlog, has_log, tab)
    msg = mlog if log_path else mlin
    table = tab_log if log_path else tab
    any_bad = False  # bad objects (zero evidence) do not change during a pass
    for o in range(n_obj):
        any_bad |= bad[o]
    log_ready = log_path
    s0 = state_ptr[b]
    bo = blk_off[b]
    n_blk = blk_off[b + 1] - bo - 1
    m0 = msg_off[b]
    if not upward:
        n_rows = 0
        for g in range(g_lo, g_lo + n_g):
            n_rows = max(n_rows, gtab[g] + (1 << gnb[g]))
        for r in range(n_rows):
            for o in range(n_obj):
                gsum[r, o] = 0.0
        # rows of the wide children's separator marginals, one child after another
        n_m = 0
        row = 0
        for t in range(ch_ptr[b], ch_ptr[b + 1]):
            ch = children[t]
            if ckind[ch] == 0:
                n_sep = blk_off[ch + 1] - blk_off[ch] - 1
                mbase[n_m] = row
                for r in range(row, row + n_sep):
                    for o in range(n_obj):
                        marg[r, o] = 0.0
                row += n_sep
                n_m += 1
        for o in range(n_obj):
            acc[o] = 0.0
            top[o] = -math.inf
    for sweep in range(2 if (log_path and not upward) else 1):
        # downward in log space: sweep 0 finds each object's largest log belief, sweep 1 sums
        for s in range(n_blk):
            if upward:
                for o in range(n_obj):
                    acc[o] = 0.0
                    top[o] = -math.inf
            own = m0 + s if use_own else -1
            for si in range(blk_ptr[bo + s], blk_ptr[bo + s + 1]):
                c = states[s0 + si]
                base = 0.0 if log_path else 1.0
                for a in range(bcpd_ptr[b], bcpd_ptr[b + 1]):  # CPD entries too wide for a group
                    e = bcpd[a]
                    if (c >> bcpd_bit[a]) & 1:
                        val = t1[e]
                    elif (c & bcpd_pmask[a]) == bcpd_pmask[a]:
                        val = t0[e]
                    else:
                        continue
                    if log_path:
                        base += math.log(val) if val > 0 else -math.inf
                    else:
                        base *= val
                if base == (-math.inf if log_path else 0.0):
                    continue
                # table rows of this state: per group, and per wide child its message row
                for g in range(n_g):
                    off = gpext_off[g_lo + g]
                    key = gtab[g_lo + g]
                    for byte in range(nb):
                        key += gpext[off + byte * 256 + ((c >> (8 * byte)) & 255)]
                    gkeys[g] = key
                for t in range(n_k):
                    i = maps[wide_map[t] + si]
                    ikeys[t] = i
                    keys[t] = wide_msg[t] + i
                if not log_path:
                    # linear: one vector over the batch per factor (contiguous, vectorised)
                    if n_g > 0:
                        row = gkeys[0]
                        for o in range(n_obj):
                            vv[o] = base * table[row, o]
                    else:
                        for o in range(n_obj):
                            vv[o] = base
                    for g in range(1, n_g):
                        row = gkeys[g]
                        for o in range(n_obj):
                            vv[o] *= table[row, o]
                    for t in range(n_k):
                        row = keys[t]
                        for o in range(n_obj):
                            vv[o] *= msg[row, o]
                    if own >= 0:
                        for o in range(n_obj):
                            vv[o] *= msg[own, o]
                    # sum, and look for products below _TINY in the same sweep: adding one to acc
                    # is harmless, since it is either a true zero (a factor is 0, so the product
                    # is exactly 0.0) or the pass is abandoned and redone in log space
                    low = np.inf
                    for o in range(n_obj):
                        acc[o] += vv[o]
                        low = min(low, vv[o])
                    if low < _TINY:
                        for o in range(n_obj):
                            if vv[o] >= _TINY or (bad[o] and not upward):
                                continue
                            if not log_ready:
                                _inputs_log(b, use_own, st, gr, el0, el1, ll0, ll1, mlin, mlog, has_log, tab_log)
                                log_ready = True
                            x = _cpd_log(c, bcpd_ptr[b], bcpd_ptr[b + 1], bcpd, bcpd_bit, bcpd_pmask, lt1, lt0)
                            for g in range(n_g):
                                x += tab_log[gkeys[g], o]
                            for t in range(n_k):
                                x += mlog[keys[t], o]
                            if own >= 0:
                                x += mlog[own, o]
                            if x > -math.inf:
                                return False
                            vv[o] = 0.0  # a true zero (hard evidence): already 0.0 in linear space
                    if upward:
                        continue
                    if any_bad:
                        for o in range(n_obj):
                            if bad[o]:
                                vv[o] = 0.0
                    for g in range(n_g):
                        row = gkeys[g]
                        for o in range(n_obj):
                            gsum[row, o] += vv[o]
                    for t in range(n_k):
                        row = mbase[t] + ikeys[t]
                        for o in range(n_obj):
                            marg[row, o] += vv[o]
                    continue
                for o in range(n_obj):
                    if bad[o] and not upward:
                        continue
                    x = base
                    for g in range(n_g):
                        x += table[gkeys[g], o]
                    for t in range(n_k):
                        x += msg[keys[t], o]
                    if own >= 0:
                        x += msg[own, o]
                    if x == -math.inf:
                        continue
                    if upward:
                        if x > top[o]:  # online log-sum-exp
                            acc[o] = acc[o] * math.exp(top[o] - x) + 1.0
                            top[o] = x
                        else:
                            acc[o] += math.exp(x - top[o])
                        continue
                    if sweep == 0:
                        top[o] = max(top[o], x)
                        continue
                    v = math.exp(x - top[o])
                    acc[o] += v
                    for g in range(n_g):
                        gsum[gkeys[g], o] += v
                    for t in range(n_k):
                        marg[mbase[t] + ikeys[t], o] += v
            if upward:
                for o in range(n_obj):
                    if log_path:
                        mlog[m0 + s, o] = top[o] + math.log(acc[o]) if acc[o] > 0 else -math.inf
                    else:
                        mlin[m0 + s, o] = acc[o]
    if upward:
        if log_path:
            for o in range(n_obj):
                _normalise(b, m0, n_blk, o, True, mlin, mlog, has_log, bad)
        else:
            _normalise_linear(b, m0, n_blk, mlin, has_log, bad)
    return True



@_jit
def _send_down(b, log_path, st, gr, mlin, mlog, has_log, gsum, marg, mbase, acc, out, bad):
    """After a downward pass: class marginals, then each child's message (Hugin division)."""
    (parent, state_ptr, states, blk_off, blk_ptr, msg_off, ch_ptr, children, ckind, maps, map_off, luts,
     lut_off, bcpd_ptr, bcpd, bcpd_bit, bcpd_pmask, t1, t0, lt1, lt0, n_bytes) = st
    (grp_ptr, gnb, gpext_off, gpext, gtab, gf_ptr, gf_kind, gf_a, gf_i, gf_pm, gf_sb_ptr, gf_sb) = gr
    n_obj = mlin.shape[1]
    for o in range(n_obj):
        if acc[o] == 0.0:
            bad[o] = True
    # class marginals and the separator marginals of narrow children, from the group sums
    # narrow children's marginals go after the wide ones
    row = 0
    for t in range(ch_ptr[b], ch_ptr[b + 1]):
        ch = children[t]
        if ckind[ch] == 0:
            row += blk_off[ch + 1] - blk_off[ch] - 1
    for g in range(grp_ptr[b], grp_ptr[b + 1]):
        for f in range(gf_ptr[g], gf_ptr[g + 1]):
            kind = gf_kind[f]
            if kind == 0:
                j = gf_a[f]
                for o in range(n_obj):
                    if bad[o]:
                        continue
                    pos = 0.0
                    for u in range(1 << gnb[g]):
                        if (u >> gf_i[f]) & 1:
                            pos += gsum[gtab[g] + u, o]
                    out[j, o] = pos / acc[o]
            elif kind == 2:
                ch = gf_a[f]
                n_sep = blk_off[ch + 1] - blk_off[ch] - 1
                for r in range(row, row + n_sep):
                    for o in range(n_obj):
                        marg[r, o] = 0.0
                for u in range(1 << gnb[g]):
                    key = 0
                    for q in range(gf_sb_ptr[f], gf_sb_ptr[f + 1]):
                        key = (key << 1) | ((u >> gf_sb[q]) & 1)
                    idx = luts[lut_off[ch] + key]
                    if idx >= 0:
                        for o in range(n_obj):
                            marg[row + idx, o] += gsum[gtab[g] + u, o]
                _hugin(ch, row, n_sep, log_path, msg_off, mlin, mlog, has_log, marg, bad)
                row += n_sep
    n = 0
    for t in range(ch_ptr[b], ch_ptr[b + 1]):
        ch = children[t]
        if ckind[ch] == 0:
            _hugin(ch, mbase[n], blk_off[ch + 1] - blk_off[ch] - 1, log_path, msg_off, mlin, mlog, has_log,
                   marg, bad)
            n += 1


@_jit
def _hugin(ch, row, n_sep, log_path, msg_off, mlin, mlog, has_log, marg, bad):
    """Message to child ``ch``: its separator marginal (``marg`` rows) over its upward message.

    Objects whose upward message is linear and free of tiny entries are divided in
    row-major sweeps (all objects of a row together); the others in log space.
    """
    c0 = msg_off[ch]
    n_obj = mlin.shape[1]
    lin = np.empty(n_obj, np.bool_)
    for o in range(n_obj):
        lin[o] = not (bad[o] or log_path or has_log[ch, o])
    for s in range(n_sep):
        for o in range(n_obj):
            u = mlin[c0 + s, o]
            if 0.0 < u < _TINY:
                lin[o] = False
    top = np.zeros(n_obj)
    for s in range(n_sep):
        for o in range(n_obj):
            if lin[o]:
                u = mlin[c0 + s, o]
                v = marg[row + s, o] / u if u > 0 else 0.0
                mlin[c0 + s, o] = v
                top[o] = max(top[o], v)
    for o in range(n_obj):
        if lin[o]:
            if top[o] == 0.0:
                bad[o] = True
                top[o] = 1.0
            has_log[ch, o] = False
    for s in range(n_sep):
        for o in range(n_obj):
            if lin[o]:
                mlin[c0 + s, o] /= top[o]
    for o in range(n_obj):
        if bad[o] or lin[o]:
            continue
        if not has_log[ch, o]:
            for s in range(n_sep):
                u = mlin[c0 + s, o]
                mlog[c0 + s, o] = math.log(u) if u > 0 else -math.inf
        for s in range(n_sep):
            mg = marg[row + s, o]
            u = mlog[c0 + s, o]
            mlog[c0 + s, o] = math.log(mg) - u if mg > 0 and u > -math.inf else -math.inf
        _normalise(ch, c0, n_sep, o, True, mlin, mlog, has_log, bad)


@_jit
def calibrate(st, gr, el0, el1, ll0, ll1, mlin, mlog, has_log, tab, tab_log, gsum, marg, out, bad, max_ch, max_g):
    """Calibrate the junction forest for one batch of objects (columns of ``ll0, ll1``).

    ``st`` and ``gr`` are tuples of the compiled structure's arrays; ``el0, el1``
    are ``exp(ll0), exp(ll1)``. Fills ``out[j, o]`` = P(Y_j = 1 | evidence of object
    o) and ``bad[o]`` for evidence of probability zero. Upward pass (children before
    parents): each non-root clique sends the sum of its potential times its
    children's messages over each block of states sharing a parent-separator state.
    Downward pass (parents first): the belief (that product times the parent's
    message) is summed onto each child's separator and divided by the child's upward
    message (Hugin; 0/0 is 0), and onto the classes the clique reports. Returns the
    number of clique passes redone in log space.
    """
    parent = st[0]
    n_cl = len(parent)
    n_obj = ll0.shape[1]
    keys = np.empty(max_ch, np.int64)
    ikeys = np.empty(max_ch, np.int64)
    mbase = np.empty(max_ch, np.int64)
    gkeys = np.empty(max_g, np.int64)
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
        if not _pass(b, True, False, st, gr, el0, el1, ll0, ll1, mlin, mlog, has_log, tab, tab_log, gsum, marg,
                     keys, ikeys, gkeys, mbase, acc, top, bad):
            n_log += 1
            _pass(b, True, True, st, gr, el0, el1, ll0, ll1, mlin, mlog, has_log, tab, tab_log, gsum, marg,
                  keys, ikeys, gkeys, mbase, acc, top, bad)
    for b in range(n_cl):
        log_path = False
        if not _pass(b, False, False, st, gr, el0, el1, ll0, ll1, mlin, mlog, has_log, tab, tab_log, gsum, marg,
                     keys, ikeys, gkeys, mbase, acc, top, bad):
            n_log += 1
            log_path = True
            _pass(b, False, True, st, gr, el0, el1, ll0, ll1, mlin, mlog, has_log, tab, tab_log, gsum, marg,
                  keys, ikeys, gkeys, mbase, acc, top, bad)
        _send_down(b, log_path, st, gr, mlin, mlog, has_log, gsum, marg, mbase, acc, out, bad)
    return n_log
