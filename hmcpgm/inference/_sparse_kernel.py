"""Compiled (numba) kernels that build the sparse junction tree: states and index maps.

numba is imported here only, and this module only when the sparse engine compiles a
hierarchy. A clique state is an int64 bit code: bit ``i`` is the label of the clique
member placed at bit ``i``. Only feasible states are listed (a positive member has
every member that is its ancestor positive). The calibration kernels are in
:mod:`hmcpgm.inference._sparse_calibrate`.
"""


import numpy as np

from .._numba import jit as _jit


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
