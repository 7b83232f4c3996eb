"""An upper bound on the best CATCH over hierarchically consistent rankings."""

import numpy as np

from ._checks import ranking_values
from ._hier_rank import horn_parent

__all__ = ["hier_rank_bound"]


def _spanning_forests(hierarchy):
    """Parent arrays of a few spanning forests (one parent kept per class)."""
    deepest = np.array(hierarchy.spanning_forest("deepest"))
    shallowest = np.array(hierarchy.spanning_forest("shallowest"))
    return [deepest] if np.array_equal(deepest, shallowest) else [deepest, shallowest]


def hier_rank_bound(values, hierarchy):
    """An upper bound on the CATCH of every hierarchically consistent ranking.

    Keeping a single parent per class relaxes the hierarchy to a spanning forest:
    every ranking consistent with the DAG is consistent with the forest, so the
    forest's optimal CATCH (Horn's rule, exact) bounds the DAG optimum from
    above. Two forests are solved (each class keeps its deepest parent; each
    keeps its shallowest parent, ties to the larger and smaller column index)
    and the smaller optimum is returned. On a forest the bound IS the optimum.

    This gives a per-instance certificate for any consistent ranking ``order``
    (for example from :func:`hier_rank` with any method): when all values are
    non-negative, so that CATCH is non-negative,

        ``catch(order, values) / hier_rank_bound(values, hierarchy)``
        ``<= catch(order, values) / max CATCH over consistent rankings <= 1``,

    that is, the first ratio is a certified lower bound on how close ``order``
    is to optimal. With negative values the ratio has no such meaning (use the
    difference ``hier_rank_bound(...) - catch(...)``, which is always an upper
    bound on the loss in CATCH).

    Parameters
    ----------
    values : array-like of shape (M, K), or a DataFrame with class columns
        The value of every event, for example mLPRs. Finite.
    hierarchy : Hierarchy

    Returns
    -------
    float
        ``>=`` the CATCH of every hierarchically consistent ranking; equal to
        the best one when the hierarchy is a forest. Costs two forest solves,
        O(n log n) for n = M*K events.

    Examples
    --------
    A diamond: D needs both B and C.

    >>> from hmcpgm import Hierarchy, catch, hier_rank
    >>> h = Hierarchy.from_edges([("A", "B"), ("A", "C"), ("B", "D"), ("C", "D")])
    >>> v = [[0.9, 0.1, 0.2, 0.8]]  # A, B, C, D
    >>> bound = hier_rank_bound(v, h)
    >>> best = catch(hier_rank(v, h, method="exact"), v)
    >>> round(best, 2), round(bound, 2)
    (5.2, 5.7)
    >>> round(catch(hier_rank(v, h), v) / bound, 3)  # certified: at least this close
    0.912
    """
    v = ranking_values(values, hierarchy)
    n = v.size
    weights = np.arange(n, 0, -1, dtype=float)
    best = np.inf
    for parent in _spanning_forests(hierarchy):
        order = horn_parent(parent, v)[0]
        best = min(best, float(weights @ v.ravel()[order]))
    return best if n else 0.0
