"""Cutoffs and final decisions (SPEC section 7).

A ranking (a permutation of the flat event indices ``m * K + k``, best first)
becomes decisions by labelling its top ``r`` events positive. Two routes choose
``r``:

- the *validation route* (:func:`choose_cutoff`): on a labelled validation set,
  the ``r`` that maximises F1, or the largest ``r`` whose precision is at least
  ``1 - alpha`` (target false discovery rate ``alpha``); the cutoff then moves to
  new objects by proportion (``r_new = round(kappa * n_new)``) or by value
  threshold (every event whose value, e.g. HierRank block mean, reaches the
  threshold);
- the *Bayesian route* (:func:`bayes_cutoff`): the values are mLPRs, posterior
  probabilities, so the expected number of false discoveries among the top ``r``
  is ``sum(1 - mLPR)`` over them; no labels are needed.

Decisions taken from the top of a hierarchically consistent ranking respect the
hierarchy for every ``r`` (a child event is never above its parent's).
"""

import warnings
from dataclasses import dataclass

import numpy as np

from .exceptions import InputError
from .metrics import _binary_matrix, _check_order, _value_matrix

__all__ = [
    "Cutoff",
    "bayes_cutoff",
    "choose_cutoff",
    "decide",
    "decide_by_threshold",
    "decisions_from_cutoff",
    "estimated_fdr",
    "expected_f1",
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
        The value of the event at rank ``r`` (``values`` given to the chooser,
        e.g. mLPRs or HierRank block means); ``inf`` when ``rank == 0``, else
        ``nan`` when no values were given.
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

    @property
    def kappa(self):
        """float: the fraction of events labelled positive, ``rank / n_events``."""
        return self.rank / self.n_events if self.n_events else 0.0

    def rank_for(self, n_events):
        """The cutoff moved to ``n_events`` events by proportion.

        ``floor(kappa * n_events + 0.5)`` (``kappa * n`` rounded half up), so
        the same ``n`` gives back ``rank``.

        Examples
        --------
        >>> Cutoff("max_f1", "labels", None, 3, 10, 1.0, 0.5, 2 / 3, 0.7).rank_for(20)
        6
        """
        n = _count(n_events, "n_events")
        return int(np.floor(self.kappa * n + 0.5))


# ---------------------------------------------------------------------- checks
def _count(value, name):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 0:
        raise InputError(f"{name} must be a non-negative integer, got {value!r}")
    return int(value)


def _check_alpha(alpha):
    try:
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


def _flat_values(values, n_events, name):
    """Values per flat event: an (M, K) matrix or a length-n vector, finite."""
    v = _value_matrix(values, name)
    if v.size != n_events or v.ndim > 2:
        raise InputError(
            f"{name} must hold one value per event ({n_events} = n_objects * n_classes, "
            f"as an (M, K) matrix or a flat vector), got shape {v.shape}"
        )
    return v.reshape(-1)


def _threshold(flat_values, order, r):
    if r == 0:
        return float("inf")
    return float("nan") if flat_values is None else float(flat_values[order[r - 1]])


def _none_meet(alpha, what):
    warnings.warn(
        f"no prefix of the ranking has {what} false discovery rate <= alpha={alpha}; "
        "the cutoff labels no event positive",
        UserWarning,
        stacklevel=3,
    )


# ---------------------------------------------------------------------- validation route
def _pick_rank(tp, n_pos, rule, alpha, what):
    """The cutoff rank r from a true-positive curve ``tp[r - 1]`` (realised or expected).

    ``"max_f1"``: the smallest r maximising ``2 tp / (r + n_pos)``; ``"fdr"``: the
    largest r whose false discovery proportion ``(r - tp) / r`` is at most alpha (0
    with a warning when none is).
    """
    n = tp.size
    if n == 0:
        return 0
    r_all = np.arange(1, n + 1)
    if rule == "max_f1":
        return int(np.argmax(2 * tp / (r_all + n_pos))) + 1
    ok = np.flatnonzero((r_all - tp) / r_all <= alpha + 1e-12)
    r = int(ok[-1]) + 1 if ok.size else 0
    if r == 0:
        _none_meet(alpha, what)
    return r


def _cutoff(tp, total, rule, alpha, source, order, flat):
    """The :class:`Cutoff` picked on a true-positive curve (realised for ``source="labels"``,
    expected for ``"posterior"``) with ``total`` positives in all."""
    what = "a realised" if source == "labels" else "an estimated"
    r = _pick_rank(tp, total, rule, alpha, what)
    hits = float(tp[r - 1]) if r else 0.0
    return Cutoff(
        rule=rule,
        source=source,
        alpha=alpha,
        rank=r,
        n_events=tp.size,
        precision=hits / r if r else float("nan"),
        recall=hits / total if total > 0 else float("nan"),
        f1=2 * hits / (r + total) if r + total > 0 else float("nan"),
        threshold=_threshold(flat, order, r),
    )


def choose_cutoff(order, labels, *, rule="max_f1", alpha=0.1, values=None):
    """Choose the cutoff on a labelled validation set (the paper's route).

    Parameters
    ----------
    order : array of int, shape (n,)
        A ranking of the flat validation events ``m * K + k``, best first.
    labels : array of 0/1, shape (M, K)
        Validation labels, ``n = M * K``.
    rule : {"max_f1", "fdr"}, default "max_f1"
        ``"max_f1"``: the ``r`` with the largest F1 ``2 TP(r) / (r + P)`` (the
        smallest such ``r`` on ties). ``"fdr"``: the largest ``r`` whose false
        discovery proportion ``FP(r) / r`` is at most ``alpha`` (precision at
        least ``1 - alpha``; compared with a 1e-12 tolerance for rounding), or 0
        with a warning when there is none.
    alpha : float in (0, 1), default 0.1
        Target false discovery rate, used by ``rule="fdr"``.
    values : array of float, shape (M, K) or (n,), optional
        Values by event (mLPRs, or HierRank block means for a threshold that
        keeps blocks whole); gives ``Cutoff.threshold``.

    Returns
    -------
    Cutoff

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
    y = _binary_matrix(labels, "labels")
    n = y.size
    order = _check_order(order, n)
    a = _check_alpha(alpha) if rule == "fdr" else None
    flat = None if values is None else _flat_values(values, n, "values")
    hits = np.cumsum(y.reshape(-1)[order], dtype=np.int64)
    n_pos = int(hits[-1]) if n else 0
    if n_pos == 0:
        raise InputError("labels has no positive event; a cutoff cannot be chosen on it")
    return _cutoff(hits, n_pos, rule, a, "labels", order, flat)


# ---------------------------------------------------------------------- Bayesian route
def _posterior_by_rank(order, mlpr):
    p = _value_matrix(mlpr, "mlpr")
    if p.size and (p.min() < 0 or p.max() > 1):
        bad = p[(p < 0) | (p > 1)].ravel()[0]
        raise InputError(f"mlpr must hold posterior probabilities in [0, 1], got {bad}")
    order = _check_order(order, p.size)
    if p.ndim > 2:
        raise InputError(f"mlpr must be an (M, K) matrix or a flat vector, got shape {p.shape}")
    return p.reshape(-1)[order], order


def estimated_fdr(order, mlpr):
    """Model-based FDR of the top ``r`` events, r = 1..n: ``mean(1 - mLPR)`` over them.

    If the labels are drawn independently with ``P(Y = 1) = mLPR`` this is the
    expected false discovery proportion of the top ``r`` (for any ranking that
    does not look at the labels).

    Parameters
    ----------
    order : array of int, shape (n,)
        A ranking of the flat events, best first.
    mlpr : array of float in [0, 1], shape (M, K) or (n,)
        Posterior probabilities by event.

    Returns
    -------
    ndarray of float, shape (n,)

    Examples
    --------
    >>> estimated_fdr([0, 1, 2], [0.9, 0.8, 0.1])
    array([0.1 , 0.15, 0.4 ])
    """
    p, _ = _posterior_by_rank(order, mlpr)
    return np.cumsum(1 - p) / np.arange(1, p.size + 1)


def expected_f1(order, mlpr):
    """Approximate expected F1 of the top ``r`` events, r = 1..n.

    ``E[F1(r)] ~= 2 E[TP(r)] / (r + E[P]) = 2 sum_{top r} p / (r + sum_all p)``:
    the ratio of expectations in place of the expectation of the ratio (exact
    up to O(1/n) when the number of positives is large and concentrated).

    Examples
    --------
    >>> expected_f1([0, 1, 2], [0.9, 0.8, 0.1])   # 1.8/2.8, 3.4/3.8, 3.6/4.8
    array([0.64285714, 0.89473684, 0.75      ])
    """
    p, _ = _posterior_by_rank(order, mlpr)
    return 2 * np.cumsum(p) / (np.arange(1, p.size + 1) + p.sum())


def bayes_cutoff(order, mlpr, *, rule="fdr", alpha=0.1, values=None):
    """Choose the cutoff from posterior probabilities alone (no labels).

    Parameters
    ----------
    order : array of int, shape (n,)
        A ranking of the flat events, best first.
    mlpr : array of float in [0, 1], shape (M, K) or (n,)
        mLPRs (posterior probabilities) by event.
    rule : {"fdr", "max_f1"}, default "fdr"
        ``"fdr"``: the largest ``r`` whose :func:`estimated_fdr` is at most
        ``alpha`` (0 with a warning when there is none). ``"max_f1"``: the ``r``
        that maximises :func:`expected_f1` (the smallest on ties).
    alpha : float in (0, 1), default 0.1
        Target false discovery rate, used by ``rule="fdr"``.
    values : array of float, shape (M, K) or (n,), optional
        Values for ``Cutoff.threshold`` (e.g. HierRank block means); default
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
    p, order = _posterior_by_rank(order, mlpr)
    a = _check_alpha(alpha) if rule == "fdr" else None
    n = p.size
    flat = _flat_values(mlpr if values is None else values, n, "values")
    expected_tp = np.cumsum(p)
    total = float(p.sum())
    return _cutoff(expected_tp, total, rule, a, "posterior", order, flat)


# ---------------------------------------------------------------------- decisions
def decide(order, n_objects, n_classes, r):
    """The (M, K) 0/1 decision matrix that labels the top ``r`` events positive.

    Hierarchically consistent whenever ``order`` is.

    Parameters
    ----------
    order : array of int, shape (n_objects * n_classes,)
        A ranking of the flat events ``m * K + k``, best first.
    n_objects, n_classes : int
        ``M`` and ``K``.
    r : int
        Number of events labelled positive, ``0 <= r <= n``.

    Returns
    -------
    ndarray of int8, shape (n_objects, n_classes)

    Examples
    --------
    >>> decide([3, 0, 1, 2], 2, 2, 2)
    array([[1, 0],
           [0, 1]], dtype=int8)
    """
    m = _count(n_objects, "n_objects")
    k = _count(n_classes, "n_classes")
    order = _check_order(order, m * k)
    r = _count(r, "r")
    if r > m * k:
        raise InputError(f"r must be at most the number of events {m * k}, got {r}")
    out = np.zeros(m * k, dtype=np.int8)
    out[order[:r]] = 1
    return out.reshape(m, k)


def decide_by_threshold(values, threshold):
    """The 0/1 decision matrix of the events whose value reaches ``threshold``.

    With HierRank block means as ``values`` the decisions respect the hierarchy
    (a child's block mean never exceeds its parent's), so a threshold never
    splits a parent from a positive child. Ties at the threshold are all
    positive.

    Examples
    --------
    >>> decide_by_threshold([[0.9, 0.4], [0.7, 0.7]], 0.7)
    array([[1, 0],
           [1, 1]], dtype=int8)
    """
    v = _value_matrix(values, "values")
    try:
        t = float(threshold)
    except (TypeError, ValueError):
        raise InputError(f"threshold must be a number, got {threshold!r}") from None
    if np.isnan(t):
        raise InputError("threshold must be a number, got nan (the cutoff was chosen without values)")
    return (v >= t).astype(np.int8)


def decisions_from_cutoff(cutoff, order=None, n_objects=None, n_classes=None, *, values=None):
    """Apply a cutoff chosen elsewhere (e.g. on validation data) to new objects.

    Either by proportion: give ``order``, ``n_objects``, ``n_classes``; the top
    ``cutoff.rank_for(n_objects * n_classes)`` events are positive. Or by value:
    give ``values`` (the same kind of values the cutoff's threshold came from,
    e.g. HierRank block means); events with value ``>= cutoff.threshold`` are
    positive.

    Examples
    --------
    >>> cut = choose_cutoff([0, 1, 2, 3], [[1, 1], [0, 0]], values=[0.9, 0.8, 0.3, 0.1])
    >>> cut.rank, cut.threshold
    (2, 0.8)
    >>> decisions_from_cutoff(cut, [5, 4, 3, 2, 1, 0], 3, 2)   # kappa 1/2 of 6 events
    array([[0, 0],
           [0, 1],
           [1, 1]], dtype=int8)
    >>> decisions_from_cutoff(cut, values=[[0.95, 0.5], [0.8, 0.85]])
    array([[1, 0],
           [1, 1]], dtype=int8)
    """
    if not isinstance(cutoff, Cutoff):
        raise TypeError(f"cutoff must be an hmcpgm.Cutoff (from choose_cutoff or bayes_cutoff), got {type(cutoff).__name__}")
    if values is not None:
        if order is not None:
            raise InputError("give either order (cut by proportion) or values (cut by threshold), not both")
        return decide_by_threshold(values, cutoff.threshold)
    if order is None or n_objects is None or n_classes is None:
        raise InputError("cutting by proportion needs order, n_objects and n_classes (or give values=)")
    m = _count(n_objects, "n_objects")
    k = _count(n_classes, "n_classes")
    return decide(order, m, k, cutoff.rank_for(m * k))
