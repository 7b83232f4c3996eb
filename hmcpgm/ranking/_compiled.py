"""Helpers shared by the compiled (numba) ranking kernels."""

from .._numba import njit

__all__ = ["find", "jit"]


def jit(func):
    """Compile ``func`` with numba (cached per user, no GIL); unchanged without numba."""
    return func if njit is None else njit(cache=True, nogil=True)(func)


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
