"""Ranking events (object, class): the CATCH objective, NaiveSort and HierRank.

An *event* is a pair (object m, class k), numbered ``m*K + k`` (row-major in an
(M, K) matrix). A ranking (:class:`Ranking`: the order with its shape, class
names and blocks) is a permutation of the events, best first; it is
*hierarchically consistent* when every ancestor event comes before its
descendants. HierRank maximises CATCH among consistent rankings: exactly on
forests (Horn's rule), on DAGs exactly on small components (dynamic
programming over ancestor-closed sets) and by a greedy generalisation of
Horn's rule elsewhere, or by a Sidney decomposition (factor 2 on the weighted
completion time). :func:`hier_rank_bound` gives an upper bound on the optimum
(a Lagrangian relaxation), hence a per-instance certificate for any ranking
(:func:`certify`).
"""

from ._auto import AUTO_MAX_STATES
from ._basic import catch, count_violations, naive_sort
from ._bound import hier_rank_bound
from ._certificate import Certificate, certify
from ._exact import MAX_STATES
from ._hier_rank import hier_rank
from ._ranking import Ranking

__all__ = [
    "Ranking", "catch", "naive_sort", "hier_rank", "hier_rank_bound", "count_violations", "MAX_STATES",
    "AUTO_MAX_STATES", "certify", "Certificate",
]
