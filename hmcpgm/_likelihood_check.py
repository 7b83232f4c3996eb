"""A compiled, parallel pass that finds the first bad entry of an (M, K, 2) likelihood array.

For large inputs the numpy checks of :func:`hmcpgm._validation.likelihood_array`
make several serial passes and temporaries over the array; this does one pass on
every core and reports the same first bad entry.
"""

import math

from numba import prange

from ._numba import jit_parallel


@jit_parallel
def first_bad_likelihoods(arr):
    """``(bad, zero)``: flat index (C order) of the first entry that is not finite or is
    negative, and pair index (``m * K + k``) of the first pair [0, 0]; -1 when there is none."""
    n_obj, n_cls = arr.shape[0], arr.shape[1]
    none = n_obj * n_cls * 2
    bad = none
    zero = none
    for m in prange(n_obj):
        for k in range(n_cls):
            a, b = arr[m, k, 0], arr[m, k, 1]
            if not (0.0 <= a < math.inf):
                bad = min(bad, (m * n_cls + k) * 2)
            elif not (0.0 <= b < math.inf):
                bad = min(bad, (m * n_cls + k) * 2 + 1)
            elif a == 0.0 and b == 0.0:
                zero = min(zero, m * n_cls + k)
    return (bad if bad < none else -1), (zero if zero < none else -1)
