"""The one place hmcpgm imports numba (compiled kernels of HierRank and loopy BP).

Kernels are compiled on first use and cached on disk (``cache=True``). The cache
goes to a per-user folder, set by ``hmcpgm/__init__`` (:mod:`hmcpgm._cachedir`)
before any module imports numba (``$XDG_CACHE_HOME/hmcpgm/numba``, else
``~/.cache/hmcpgm/numba``) rather than numba's default ``__pycache__`` beside the
installed sources: files left inside an installed package outlive ``pip
uninstall`` and turn a later editable install into an empty namespace package.
Set ``NUMBA_CACHE_DIR`` yourself to choose another folder; numba reads it when it
is first imported, so this has no effect if numba was imported before hmcpgm.

When developing: numba checks only the file of the function it loads, so after
editing a compiled helper (say ``ranking/_compiled.py``) its callers in other
files keep their old machine code until that folder is deleted. An installed
release replaces every file, so users are not affected.
"""

from numba import njit  # hmcpgm/__init__ has set the cache folder (hmcpgm._cachedir) before this runs

__all__ = ["jit", "jit_parallel", "njit"]


def jit(func):
    """Compile ``func`` with numba in nopython mode, cached on disk, releasing the GIL."""
    return njit(cache=True, nogil=True)(func)


def jit_parallel(func):
    """:func:`jit` with ``parallel=True``: its ``numba.prange`` loops run on every core
    (``numba.set_num_threads`` or ``NUMBA_NUM_THREADS`` limit them)."""
    return njit(cache=True, nogil=True, parallel=True)(func)
