"""hmcpgm's per-user cache folder, and numba's cache inside it, set without importing numba.

``hmcpgm/__init__`` calls :func:`set_numba_cache_dir` before any of its modules
can import numba (numba reads ``NUMBA_CACHE_DIR`` when it is first imported), and
importing this module costs nothing: ``import hmcpgm`` and the ``hmcpgm`` command
start without numba, so a Ctrl-C in their first moments is already handled.
"""

import os
from pathlib import Path

__all__ = ["set_numba_cache_dir", "user_cache_dir"]


def user_cache_dir():
    """hmcpgm's per-user cache folder: ``$XDG_CACHE_HOME/hmcpgm``, else ``~/.cache/hmcpgm``."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "hmcpgm"


def set_numba_cache_dir():
    """Point numba's cache at ``user_cache_dir() / "numba"`` unless ``NUMBA_CACHE_DIR`` is set already."""
    os.environ.setdefault("NUMBA_CACHE_DIR", str(user_cache_dir() / "numba"))
