"""Helpers shared by the compiled (numba) ranking kernels."""

from .._numba import jit

__all__ = ["find"]


@jit
def find(uf, k):
    """Union-find root of ``k``, with path compression."""
    root = k
    while uf[root] != root:
        root = uf[root]
    while uf[k] != root:
        nxt = uf[k]
        uf[k] = root
        k = nxt
    return root
