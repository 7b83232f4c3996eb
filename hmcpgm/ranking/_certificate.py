"""How close a ranking is to the best consistent one, certified by an upper bound."""

from typing import NamedTuple

from .._validation import check_hierarchy
from ..exceptions import InputError
from ._basic import catch
from ._bound import hier_rank_bound
from ._checks import ranking_values
from ._lagrange import LAGRANGE_ITER
from ._ranking import Ranking, paired_rows

__all__ = ["Certificate", "certify"]


class Certificate(NamedTuple):
    """The CATCH of a ranking, an upper bound on the best consistent CATCH, and their ratio.

    Attributes
    ----------
    catch : float
        The CATCH of the ranking.
    bound : float
        :func:`hier_rank_bound` of the values: at least the CATCH of every consistent ranking.
    ratio : float
        ``catch / bound``.
    """

    catch: float
    bound: float
    ratio: float


def certify(order, values, hierarchy, *, max_iter=LAGRANGE_ITER):
    """Certify a ranking: its CATCH against :func:`hier_rank_bound`.

    Parameters
    ----------
    order : Ranking or array-like of int, shape (M*K,)
        A ranking of all events, for example from :func:`hier_rank`. A
        :class:`Ranking` must have the hierarchy's classes in the same order.
    values : array-like of shape (M, K), or a DataFrame with class columns
        The value of every event, for example mLPRs. Finite. A DataFrame's rows
        are paired with a Ranking's objects by its row index.
    hierarchy : Hierarchy
        Fixes the column order of ``values`` and the ancestor constraints.
    max_iter : int
        Subgradient rounds per object of the Lagrangian bound.

    Returns
    -------
    Certificate
        ``catch``, ``bound`` and ``ratio = catch / bound``. When the ranking is
        hierarchically consistent and the values are non-negative, ``ratio`` is
        a certified lower bound on CATCH(order) / (best consistent CATCH), so
        at most ``1``; ``bound - catch`` bounds the loss in CATCH whatever the
        signs. The ratio is 1.0 when both are 0.

    Examples
    --------
    >>> from hmcpgm import Hierarchy, hier_rank
    >>> from hmcpgm.ranking import certify
    >>> h = Hierarchy.from_edges([("A", "B"), ("A", "C"), ("B", "D"), ("C", "D")])
    >>> v = [[0.9, 0.1, 0.2, 0.8], [0.3, 0.6, 0.1, 0.2]]
    >>> cert = certify(hier_rank(v, h), v, h)  # "auto" is exact here: CATCH 17.1
    >>> round(cert.catch, 4), round(cert.bound, 4), round(cert.ratio, 4)
    (17.1, 17.2875, 0.9892)
    """
    check_hierarchy(hierarchy)
    if isinstance(order, Ranking):
        if order.classes != tuple(hierarchy.classes):
            raise InputError(
                f"order ranks the classes {order.classes[:3]}... but the hierarchy has "
                f"{tuple(hierarchy.classes)[:3]}... (not the same classes in the same order)"
            )
        values = paired_rows(values, order, "values")
    v = ranking_values(values, hierarchy)
    value = catch(order, v)
    bound = hier_rank_bound(v, hierarchy, max_iter=max_iter, orders=order)
    if bound == 0.0:
        ratio = 1.0 if value == 0.0 else float("-inf")
    else:
        ratio = value / bound
    return Certificate(value, bound, ratio)
