"""Figures for teaching and checking: hierarchies, hit and PR curves, LPRs, calibration.

matplotlib is an optional extra (``pip install "hmcpgm[plot]"``); it is imported
inside each function, so ``import hmcpgm.plot`` works without it and a call
without it raises an ImportError that says what to install.

Every function draws on ``ax`` (a new figure when omitted) and returns the
Axes, so figures can be combined and restyled with plain matplotlib.
"""

from ._calibration import plot_lpr, plot_reliability, reliability_table
from ._curves import plot_hit_curves, plot_pr_curves
from ._hierarchy import hierarchy_layout, plot_hierarchy

__all__ = [
    "hierarchy_layout",
    "plot_hierarchy",
    "plot_hit_curves",
    "plot_pr_curves",
    "plot_lpr",
    "plot_reliability",
    "reliability_table",
]
