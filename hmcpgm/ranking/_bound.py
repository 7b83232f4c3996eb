"""An upper bound on the best CATCH over hierarchically consistent rankings."""

import numpy as np

from .._arrays import count, event_order
from ..exceptions import InputError
from ._auto import greedy_sequences
from ._checks import ranking_values
from ._horn import horn_parent
from ._lagrange import LAGRANGE_ITER, lagrangian
from ._structure import better_sequences, object_sequences

__all__ = ["hier_rank_bound"]


def _spanning_forests(hierarchy):
    """Parent arrays of a few spanning forests (one parent kept per class)."""
    deepest = np.array(hierarchy.spanning_forest("deepest"))
    shallowest = np.array(hierarchy.spanning_forest("shallowest"))
    return [deepest] if np.array_equal(deepest, shallowest) else [deepest, shallowest]


def hier_rank_bound(values, hierarchy, *, method="lagrangian", max_iter=LAGRANGE_ITER, orders=None):
    """An upper bound on the CATCH of every hierarchically consistent ranking.

    Keeping a single parent per class relaxes the hierarchy to a spanning forest:
    every ranking consistent with the DAG is consistent with the forest, so the
    forest's optimal CATCH (Horn's rule, exact) bounds the DAG optimum from
    above. Two forests are solved (each class keeps its deepest parent; each
    keeps its shallowest parent, ties to the larger and smaller column index).
    On a forest the bound IS the optimum.

    ``method="lagrangian"`` (default) tightens this: every edge ``a -> b`` that
    the deepest-parent forest drops gets a multiplier ``lam >= 0`` per object,
    which moves ``lam`` of value from b to a; the forest problem on the
    shifted values (Horn's rule, then Chain-Merge over objects) minus the sum
    of the multipliers is an upper bound for every ``lam`` (Lagrangian
    relaxation, Potts 1985; van de Velde 1995), and ``lam = 0`` gives the
    forest bound. The multipliers are tuned object by object by ``max_iter``
    rounds of projected subgradient ascent (Polyak steps towards the CATCH of
    a consistent order of the object: the ``"greedy"`` order of
    :func:`hier_rank`, or the given ``orders`` when better). The smallest of
    the three bounds is returned.

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
        The value of every event, for example mLPRs. Finite, and at most
        ``float max / (4 K^2)`` in magnitude (their weighted sums must not overflow).
    hierarchy : Hierarchy
        Fixes the column order of ``values`` and the ancestor constraints.
    method : {"lagrangian", "forest"}
        ``"forest"``: the two spanning forests only.
    max_iter : int
        Subgradient rounds per object (``"lagrangian"``); 0 gives the forest bound.
    orders : Ranking or array-like of int, shape (M*K,), optional
        A consistent ranking of all events (for example from :func:`hier_rank`)
        whose objects' orders serve as targets where they beat ``"greedy"``.
        Only the speed of convergence depends on it, never the validity.

    Returns
    -------
    float
        ``>=`` the CATCH of every hierarchically consistent ranking; equal to
        the best one when the hierarchy is a forest. ``"forest"`` costs two
        forest solves, O(n log n) for n = M*K events; ``"lagrangian"`` adds
        up to ``max_iter`` forest solves per object.

    Examples
    --------
    A diamond: D needs both B and C.

    >>> from hmcpgm import Hierarchy, catch, hier_rank
    >>> h = Hierarchy.from_edges([("A", "B"), ("A", "C"), ("B", "D"), ("C", "D")])
    >>> v = [[0.9, 0.1, 0.2, 0.8]]  # A, B, C, D
    >>> bound = hier_rank_bound(v, h)
    >>> best = catch(hier_rank(v, h, method="exact"), v)
    >>> round(best, 2), round(bound, 4), round(hier_rank_bound(v, h, method="forest"), 2)
    (5.2, 5.3875, 5.7)
    >>> round(catch(hier_rank(v, h), v) / bound, 3)  # certified: at least this close
    0.965
    """
    v = ranking_values(values, hierarchy, summed=True)
    if method not in ("lagrangian", "forest"):
        raise InputError(f"method must be 'lagrangian' or 'forest', got {method!r}")
    max_iter = count(max_iter, "max_iter")
    n = v.size
    if n == 0:
        return 0.0
    weights = np.arange(n, 0, -1, dtype=float)
    best = np.inf
    for parent in _spanning_forests(hierarchy):
        order = horn_parent(parent, v)[0]
        best = min(best, float(weights @ v.ravel()[order]))
    if method == "forest" or hierarchy.is_forest or max_iter == 0:
        return best
    seq = greedy_sequences(v, hierarchy)
    if orders is not None:
        seq = better_sequences(v, seq, object_sequences(event_order(np.asarray(orders), n, "orders"), *v.shape))
    return min(best, lagrangian(v, hierarchy, seq, max_iter)[0])
