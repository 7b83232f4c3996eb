"""Cutoffs and final decisions.

A :class:`~hmcpgm.ranking.Ranking` becomes decisions by labelling its top ``r``
events positive. Two routes choose ``r``:

- the *validation route* (:func:`choose_cutoff`): on a labelled validation set,
  the ``r`` that maximises F1, or the largest ``r`` whose precision is at least
  ``1 - alpha`` (target false discovery rate ``alpha``); :meth:`Cutoff.apply` then
  carries the cutoff to new objects by proportion (``r_new = round(kappa * n_new)``)
  or by value threshold (every event whose block mean reaches the threshold);
- the *Bayesian route* (:func:`bayes_cutoff`): the values are mLPRs, posterior
  probabilities, so the expected number of false discoveries among the top ``r``
  is ``sum(1 - mLPR)`` over them; no labels are needed.

Decisions taken from the top of a hierarchically consistent ranking respect the
hierarchy for every ``r`` (a child event is never above its parent's).
"""

from dataclasses import dataclass

import numpy as np

from ._arrays import binary_matrix, count, finite_array
from ._util import warn
from .exceptions import CutoffWarning, InputError
from .ranking._ranking import Ranking, matrix_for

__all__ = [
    "Cutoff",
    "bayes_cutoff",
    "choose_cutoff",
    "estimated_fdr",
    "expected_f1",
    "smallest_fdr",
]

_RULES = ("max_f1", "fdr")


@dataclass(frozen=True)
class Cutoff:
    """A chosen cutoff: the top ``rank`` of ``n_events`` events are positive.

    Attributes
    ----------
    rule : {"max_f1", "fdr"}
        How the cutoff was chosen.
    source : {"labels", "posterior"}
        ``"labels"``: the validation route, and ``precision``, ``recall``,
        ``f1`` are achieved on the validation labels. ``"posterior"``: the
        Bayesian route, and they are model-based estimates.
    alpha : float or None
        Target false discovery rate (rule ``"fdr"`` only).
    rank : int
        ``r``, the number of events labelled positive (0 when no prefix meets the
        target).
    n_events : int
        ``n``, the number of ranked events.
    precision, recall, f1 : float
        At the cutoff (``nan`` when undefined, e.g. ``rank == 0``).
    threshold : float
        The value of the event at rank ``r``: of the ``values`` given to the
        chooser, else of the ranking's block means; ``inf`` when ``rank == 0``,
        ``nan`` when there were neither.
    min_fdr : float
        Rule ``"fdr"``: the smallest (realised or estimated) false discovery
        proportion of any prefix of the ranking, and ``min_fdr_rank`` the
        longest prefix that has it: what the data can promise when no prefix
        meets ``alpha`` (``nan`` and 0 for ``"max_f1"`` or an empty ranking).
    min_fdr_rank : int
        See ``min_fdr``.
    """

    rule: str
    source: str
    alpha: float | None
    rank: int
    n_events: int
    precision: float
    recall: float
    f1: float
    threshold: float
    min_fdr: float = float("nan")
    min_fdr_rank: int = 0

    @property
    def message(self):
        """str or None: for an FDR cutoff that calls nothing, what the ranking can promise instead.

        Examples
        --------
        >>> Cutoff("fdr", "posterior", 0.1, 0, 2, float("nan"), 0.0, 0.0, float("inf"), 0.31, 12).message
        'no prefix is estimated below alpha=0.1; the smallest estimated FDR is 0.31 at 12 events'
        """
        if self.rule != "fdr" or self.rank > 0:
            return None
        what = "realised" if self.source == "labels" else "estimated"
        if not self.min_fdr_rank:
            return f"no prefix is {what} below alpha={self.alpha}: there are no events"
        return (f"no prefix is {what} below alpha={self.alpha}; the smallest {what} FDR is "
                f"{self.min_fdr:.2g} at {self.min_fdr_rank} events")

    @property
    def kappa(self):
        """float: the fraction of events labelled positive, ``rank / n_events``."""
        return self.rank / self.n_events if self.n_events else 0.0

    def rank_for(self, n_events):
        """The cutoff moved to ``n_events`` events by proportion.

        ``floor(kappa * n_events + 0.5)`` (``kappa * n`` rounded half up), so
        the same ``n`` gives back ``rank``.

        Parameters
        ----------
        n_events : int
            The number of events of the new ranking (>= 0).

        Returns
        -------
        int
            The number of events of the new ranking labelled positive.

        Examples
        --------
        >>> Cutoff("max_f1", "labels", None, 3, 10, 1.0, 0.5, 2 / 3, 0.7).rank_for(20)
        6
        >>> Cutoff("max_f1", "labels", None, 7, 10, 1.0, 0.5, 2 / 3, 0.7).rank_for(45)  # 31.5, up
        32
        """
        n = count(n_events, "n_events")
        if not self.n_events:
            return 0
        # in integers: kappa * n in floating point put exact halves (0.7 * 45 = 31.4999...) below them
        return (2 * self.rank * n + self.n_events) // (2 * self.n_events)

    def apply(self, ranking, *, by="rank"):
        """The (M, K) 0/1 decisions of this cutoff on a ranking (of the same or new objects).

        Parameters
        ----------
        ranking : Ranking
            A ranking of the events to decide, e.g. from :func:`hmcpgm.hier_rank`.
        by : {"rank", "threshold"}
            ``"rank"``: the top ``rank_for(ranking.n_events)`` events, the same
            proportion ``kappa`` (on the ranking the cutoff was chosen on: exactly
            its top ``rank``). ``"threshold"``: every event whose block mean is at
            least ``threshold`` (ties all positive); needs block means on the
            ranking and a cutoff chosen with them.

        Returns
        -------
        ndarray or DataFrame of int8, shape (M, K)
            Hierarchically consistent whenever the ranking is. A DataFrame (columns
            named by class, the ranked DataFrame's row index) when the ranking
            ranked a DataFrame (it has an ``index``), as :meth:`Ranking.top`.

        Examples
        --------
        >>> from hmcpgm import Hierarchy, hier_rank
        >>> h = Hierarchy.from_parents([None, 0])
        >>> valid = hier_rank([[0.9, 0.8], [0.3, 0.1]], h)
        >>> cut = choose_cutoff(valid, [[1, 1], [0, 0]])
        >>> cut.rank, cut.threshold             # the block mean at rank 2
        (2, 0.8)
        >>> new = hier_rank([[0.95, 0.5], [0.7, 0.9], [0.1, 0.0]], h)
        >>> cut.apply(new)                      # kappa = 1/2 of 6 events
        array([[1, 0],
               [1, 1],
               [0, 0]], dtype=int8)
        >>> cut.apply(new, by="threshold")      # block means >= 0.8: 0.95 and (0.7 + 0.9) / 2
        array([[1, 0],
               [1, 1],
               [0, 0]], dtype=int8)

        A ranking of a DataFrame gives a DataFrame (class columns, its index):

        >>> import pandas as pd
        >>> frame = pd.DataFrame([[0.5, 0.95], [0.9, 0.7]], index=["p", "q"], columns=[1, 0])
        >>> cut.apply(hier_rank(frame, h))      # the top 2 of 4 events
           0  1
        p  1  0
        q  1  0
        """
        if not isinstance(ranking, Ranking):
            raise TypeError(
                f"ranking must be an hmcpgm Ranking (from hier_rank or naive_sort), got {type(ranking).__name__}"
            )
        if by == "rank":
            return ranking.top(self.rank_for(ranking.n_events))
        if by != "threshold":
            raise InputError(f"by must be 'rank' or 'threshold', got {by!r}")
        if ranking.block_means is None:
            raise InputError("by='threshold' needs a ranking with block means (from hier_rank or naive_sort)")
        if np.isnan(self.threshold):
            raise InputError("by='threshold' needs a cutoff with a threshold (chosen with values or block means)")
        return ranking.labelled((ranking.block_means >= self.threshold).astype(np.int8))


# ---------------------------------------------------------------------- checks
def check_alpha(alpha):
    """``alpha`` as a float in (0, 1), a target false discovery rate, or a one-line InputError naming it."""
    try:
        if isinstance(alpha, (str, bytes)):  # float("0.1") would pass: a number is asked for, not its text
            raise TypeError
        a = float(alpha)
    except (TypeError, ValueError):
        raise InputError(f"alpha must be a number in (0, 1), got {alpha!r}") from None
    if not 0 < a < 1:
        raise InputError(f"alpha must lie in (0, 1) (a target false discovery rate), got {alpha!r}")
    return a


def _check_rule(rule):
    if rule not in _RULES:
        raise InputError(f"rule must be one of {list(_RULES)}, got {rule!r}")
    return rule


def _threshold(ranking, values, r):
    """The value at rank ``r``: of ``values`` if given, else of the ranking's block means."""
    if r == 0:
        return float("inf")
    source = values if values is not None else ranking.block_means
    if source is None:
        return float("nan")
    return float(ranking.ranked(source, "values", finite=True)[r - 1])


def _none_meet(alpha, what, min_fdr=float("nan"), min_rank=0):
    best = f"; the smallest {what.split()[-1]} FDR is {min_fdr:.2g} at {min_rank} events" if min_rank else ""
    warn(
        f"no prefix of the ranking has {what} false discovery rate <= alpha={alpha}{best}; "
        "the cutoff labels no event positive",
        CutoffWarning,
    )


def smallest_fdr(fdr):
    """The smallest value of a prefix FDR curve and the longest prefix that has it.

    Parameters
    ----------
    fdr : array of float, shape (n,)
        Entry ``r - 1``: the (realised or estimated) FDR of the top ``r`` events.

    Returns
    -------
    (float, int)
        The smallest FDR and the largest ``r`` (1-based) where it is reached;
        ``(nan, 0)`` for an empty curve.

    Examples
    --------
    >>> smallest_fdr(np.array([0.5, 0.25, 0.25, 0.4]))
    (0.25, 3)
    """
    if not len(fdr):
        return float("nan"), 0
    low = float(np.min(fdr))
    return low, int(np.flatnonzero(fdr <= low + 1e-12)[-1]) + 1


# ---------------------------------------------------------------------- validation route
def _pick_rank(tp, n_pos, rule, alpha, what):
    """The cutoff rank r from a true-positive curve ``tp[r - 1]`` (realised or expected).

    ``"max_f1"``: the smallest r maximising ``2 tp / (r + n_pos)``, 0 when that is 0
    for every r (no expected positive: each call would be a sure false positive);
    ``"fdr"``: the largest r whose false discovery proportion ``(r - tp) / r`` is at
    most alpha (0 with a warning when none is).
    """
    n = tp.size
    if n == 0:
        return 0
    r_all = np.arange(1, n + 1)
    if rule == "max_f1":
        f1 = 2 * tp / (r_all + n_pos)
        best = int(np.argmax(f1))
        return best + 1 if f1[best] > 0 else 0
    ok = np.flatnonzero((r_all - tp) / r_all <= alpha + 1e-12)
    r = int(ok[-1]) + 1 if ok.size else 0
    if r == 0:
        _none_meet(alpha, what, *smallest_fdr((r_all - tp) / r_all))
    return r


def _cutoff(tp, total, rule, alpha, source, ranking, values):
    """The :class:`Cutoff` picked on a true-positive curve (realised for ``source="labels"``,
    expected for ``"posterior"``) with ``total`` positives in all."""
    what = "a realised" if source == "labels" else "an estimated"
    r = _pick_rank(tp, total, rule, alpha, what)
    hits = float(tp[r - 1]) if r else 0.0
    low, low_rank = smallest_fdr((np.arange(1, tp.size + 1) - tp) / np.arange(1, tp.size + 1)) \
        if rule == "fdr" else (float("nan"), 0)
    return Cutoff(
        rule=rule,
        source=source,
        alpha=alpha,
        rank=r,
        n_events=tp.size,
        precision=hits / r if r else float("nan"),
        recall=hits / total if total > 0 else float("nan"),
        f1=2 * hits / (r + total) if r + total > 0 else float("nan"),
        threshold=_threshold(ranking, values, r),
        min_fdr=low,
        min_fdr_rank=low_rank,
    )


def choose_cutoff(ranking, labels, *, rule="max_f1", alpha=0.1, values=None):
    """Choose the cutoff on a labelled validation set (the paper's route).

    Parameters
    ----------
    ranking : Ranking or array of int, shape (n,)
        A ranking of the validation events, best first.
    labels : array or DataFrame of 0/1, shape (M, K)
        Validation labels, ``n = M * K``; a DataFrame is aligned to the ranking's
        classes by name.
    rule : {"max_f1", "fdr"}, default "max_f1"
        ``"max_f1"``: the ``r`` with the largest F1 ``2 TP(r) / (r + P)`` (the
        smallest such ``r`` on ties). ``"fdr"``: the largest ``r`` whose false
        discovery proportion ``FP(r) / r`` is at most ``alpha`` (precision at
        least ``1 - alpha``; compared with a 1e-12 tolerance for rounding), or 0
        with a :class:`~hmcpgm.exceptions.CutoffWarning` when there is none.
    alpha : float in (0, 1), default 0.1
        Target false discovery rate, used by ``rule="fdr"``.
    values : array or DataFrame of float, shape (M, K), optional
        Values by event for ``Cutoff.threshold``; default the ranking's block means.

    Returns
    -------
    Cutoff
        The chosen ``rank``, with its precision, recall and F1 on the validation labels.

    Examples
    --------
    >>> labels = np.array([[1, 1, 0, 1, 0, 0]])
    >>> order = np.arange(6)        # ranked labels 1, 1, 0, 1, 0, 0
    >>> cut = choose_cutoff(order, labels)   # F1 by r: .5, .8, .67, .86, .75, .67
    >>> cut.rank, round(cut.f1, 4)
    (4, 0.8571)
    >>> choose_cutoff(order, labels, rule="fdr", alpha=0.3).rank   # FDP 0, 0, 1/3, 1/4, 2/5
    4
    """
    _check_rule(rule)
    ranking, y = matrix_for(ranking, labels, "labels", flat=False)
    y = binary_matrix(y, "labels", ranking.classes)
    a = check_alpha(alpha) if rule == "fdr" else None
    hits = np.cumsum(y.reshape(-1)[ranking.order], dtype=np.int64)
    n_pos = int(hits[-1]) if hits.size else 0
    if n_pos == 0:
        raise InputError("labels has no positive event; a cutoff cannot be chosen on it")
    return _cutoff(hits, n_pos, rule, a, "labels", ranking, values)


# ---------------------------------------------------------------------- Bayesian route
def _posterior_by_rank(ranking, mlpr):
    ranking, p = matrix_for(ranking, mlpr, "mlpr")
    p = finite_array(p, "mlpr")
    if p.size and (p.min() < 0 or p.max() > 1):
        bad = p[(p < 0) | (p > 1)].ravel()[0]
        raise InputError(f"mlpr must hold posterior probabilities in [0, 1], got {bad}")
    return p.reshape(-1)[ranking.order], ranking


def estimated_fdr(ranking, mlpr):
    """Model-based FDR of the top ``r`` events, r = 1..n: ``mean(1 - mLPR)`` over them.

    If the labels are drawn independently with ``P(Y = 1) = mLPR`` this is the
    expected false discovery proportion of the top ``r`` (for any ranking that
    does not look at the labels).

    Parameters
    ----------
    ranking : Ranking or array of int, shape (n,)
        A ranking of the events, best first.
    mlpr : array or DataFrame of float in [0, 1], shape (M, K) or (n,)
        Posterior probabilities by event.

    Returns
    -------
    ndarray of float, shape (n,)
        Entry ``r - 1`` is the estimated FDR of the top ``r`` events.

    Examples
    --------
    >>> estimated_fdr([0, 1, 2], [0.9, 0.8, 0.1])
    array([0.1 , 0.15, 0.4 ])
    """
    p, _ = _posterior_by_rank(ranking, mlpr)
    return np.cumsum(1 - p) / np.arange(1, p.size + 1)


def expected_f1(ranking, mlpr):
    """Approximate expected F1 of the top ``r`` events, r = 1..n.

    ``E[F1(r)] ~= 2 E[TP(r)] / (r + E[P]) = 2 sum_{top r} p / (r + sum_all p)``:
    the ratio of expectations in place of the expectation of the ratio (exact
    up to O(1/n) when the number of positives is large and concentrated).

    Parameters
    ----------
    ranking : Ranking or array of int, shape (n,)
        A ranking of the events, best first.
    mlpr : array or DataFrame of float in [0, 1], shape (M, K) or (n,)
        Posterior probabilities by event; a DataFrame is aligned to the ranking's
        classes by name.

    Returns
    -------
    ndarray of float, shape (n,)
        Entry ``r - 1`` is the approximate expected F1 of the top ``r`` events.

    Examples
    --------
    >>> expected_f1([0, 1, 2], [0.9, 0.8, 0.1])   # 1.8/2.8, 3.4/3.8, 3.6/4.8
    array([0.64285714, 0.89473684, 0.75      ])
    """
    p, _ = _posterior_by_rank(ranking, mlpr)
    return 2 * np.cumsum(p) / (np.arange(1, p.size + 1) + p.sum())


def bayes_cutoff(ranking, mlpr, *, rule="fdr", alpha=0.1, values=None):
    """Choose the cutoff from posterior probabilities alone (no labels).

    Parameters
    ----------
    ranking : Ranking or array of int, shape (n,)
        A ranking of the events, best first.
    mlpr : array or DataFrame of float in [0, 1], shape (M, K) or (n,)
        The mLPRs (posterior probabilities) by event; a DataFrame is aligned to the
        ranking's classes by name.
    rule : {"fdr", "max_f1"}, default "fdr"
        ``"fdr"``: the largest ``r`` whose :func:`estimated_fdr` is at most
        ``alpha`` (0 with a :class:`~hmcpgm.exceptions.CutoffWarning` when there
        is none). ``"max_f1"``: the ``r`` that maximises :func:`expected_f1` (the
        smallest on ties; 0 when every mLPR is 0).
    alpha : float in (0, 1), default 0.1
        Target false discovery rate, used by ``rule="fdr"``.
    values : array or DataFrame of float, shape (M, K), optional
        Values for ``Cutoff.threshold``; default the ranking's block means, else
        ``mlpr``.

    Returns
    -------
    Cutoff
        ``precision`` is ``1 - estimated FDR``, ``recall`` the expected fraction
        of positives found ``sum_{top r} p / sum p``, ``f1`` the expected F1.

    Examples
    --------
    >>> cut = bayes_cutoff([0, 1, 2], [0.9, 0.8, 0.1], alpha=0.2)   # FDR .1, .15, .4
    >>> cut.rank, round(cut.precision, 2)
    (2, 0.85)
    >>> bayes_cutoff([0, 1, 2], [0.9, 0.8, 0.1], rule="max_f1").rank
    2
    """
    _check_rule(rule)
    p, ranking = _posterior_by_rank(ranking, mlpr)
    a = check_alpha(alpha) if rule == "fdr" else None
    if values is None and ranking.block_means is None:
        values = mlpr
    return _cutoff(np.cumsum(p), float(p.sum()), rule, a, "posterior", ranking, values)
