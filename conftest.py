"""Repository-level pytest configuration.

Doctests run over ``hmcpgm/`` (``--doctest-modules`` in pyproject.toml); the plotting
module's doctests need the optional matplotlib extra, so they are skipped where it
is not installed (``pip install "hmcpgm[plot]"``).
"""

import importlib.util

collect_ignore = []
if importlib.util.find_spec("matplotlib") is None:
    collect_ignore.append("hmcpgm/plot.py")
