"""Ranking events (object, class): the CATCH objective, NaiveSort and HierRank.

An *event* is a pair (object m, class k), numbered ``m*K + k`` (row-major in an
(M, K) matrix). A ranking is a permutation of the events, best first; it is
*hierarchically consistent* when every ancestor event comes before its
descendants. HierRank maximises CATCH among consistent rankings: exactly on
forests (Horn's rule), by a documented always-consistent heuristic on DAGs, and
exactly by dynamic programming on small hierarchies.
"""

from ._basic import catch, count_violations, naive_sort
from ._exact import MAX_STATES
from ._hier_rank import hier_rank

__all__ = ["catch", "naive_sort", "hier_rank", "count_violations", "MAX_STATES"]
