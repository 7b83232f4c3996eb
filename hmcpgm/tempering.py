"""Evidence strength: tempered likelihood ratios.

The network treats the scores of different classes as independent given the
labels. Real first-stage scores are not: one model (or one feature set) scores
every class, so the full version counts the same evidence many times and its
posteriors become overconfident. Tempering replaces every class's likelihood
ratio ``L_k(1) / L_k(0)`` by its power ``a_k`` (``0 < a_k <= 1``): ``a = 1`` is
the paper's model, ``a -> 0`` ignores the scores and leaves the prior.
``a`` is learned by cross-validation on the training rows
(:func:`hmcpgm.selection.fit_second_stage_auto`), one value or one per group
of classes (:func:`tempering_groups`).
"""

import numpy as np
from scipy.special import expit

from ._validation import check_hierarchy
from .exceptions import InputError

__all__ = [
    "GROUPINGS", "log_evidence_ratio", "own_evidence", "temper", "tempered_lpr", "tempering_groups", "with_prior",
]

GROUPINGS = ("one", "depth", "frequency")


def temper(likelihoods, a):
    """Raise each likelihood pair to the power ``a``: ratio ``L(1)/L(0)`` becomes its ``a``-th power.

    Parameters
    ----------
    likelihoods : array of shape (M, K, 2)
        Positive evidence pairs ``[L_k(0), L_k(1)]``.
    a : float or array of shape (K,)
        Exponents in ``[0, inf)``; ``a = 1`` returns the pairs unchanged, ``a = 0``
        gives ``[1, 1]`` (no evidence).

    Returns
    -------
    ndarray of shape (M, K, 2)
        ``likelihoods ** a`` per class (a new array). Where ``a > 1`` each pair is
        first divided by its larger entry (only the ratio matters), so that the power
        neither overflows nor underflows to a hard zero; a ratio beyond the float
        range keeps its smaller entry at the smallest normal float.

    Examples
    --------
    >>> L = np.array([[[1.0, 4.0], [2.0, 1.0]]])
    >>> temper(L, 0.5)
    array([[[1.        , 2.        ],
            [1.41421356, 1.        ]]])
    >>> temper(L, [1.0, 0.0])
    array([[[1., 4.],
            [1., 1.]]])
    """
    L = np.asarray(likelihoods, dtype=float)
    if L.ndim != 3 or L.shape[2] != 2:
        raise InputError(f"likelihoods must have shape (M, K, 2), got {L.shape}")
    a = np.asarray(a, dtype=float)
    if a.ndim == 0:
        a = np.full(L.shape[1], float(a))
    if a.shape != (L.shape[1],):
        raise InputError(f"a must be a number >= 0 or {L.shape[1]} of them (one per class), got shape {a.shape}")
    if not np.all(np.isfinite(a)) or np.any(a < 0):
        bad = a[~(np.isfinite(a) & (a >= 0))][0]
        raise InputError(f"a must be finite and >= 0, got {float(bad)}")
    if not np.all(L >= 0):
        raise InputError(f"likelihoods must be >= 0, got {float(L[~(L >= 0)][0])}")
    if np.all(a == 1.0):
        return L.copy()
    big = a > 1.0  # a power that can leave the float range: of the pair scaled to a larger entry of 1
    if not np.any(big):
        with np.errstate(divide="ignore"):
            return np.power(L, a[None, :, None])
    out = np.empty_like(L)
    with np.errstate(divide="ignore"):
        out[:, ~big] = np.power(L[:, ~big], a[None, ~big, None])
    pairs = L[:, big]
    top = pairs.max(axis=2, keepdims=True)
    with np.errstate(under="ignore"):
        scaled = np.power(pairs / np.where(top > 0, top, 1.0), a[None, big, None])
    out[:, big] = np.where((scaled == 0) & (pairs > 0), np.finfo(float).tiny, scaled)  # soft evidence stays soft
    return out


def tempered_lpr(likelihoods, prevalence, a=1.0):
    """The indpt version with tempered evidence: ``logit p_k + a_k log(L_k(1) / L_k(0))``.

    With posterior-route likelihoods ``L(y) = P(Y = y | s) / P(Y = y)`` and
    ``p`` the same prevalence, ``a = 1`` gives back the local precision rate
    ``LPR_k(s)`` exactly (the indpt version) and ``a = 0`` the prevalence.

    Parameters
    ----------
    likelihoods : array of shape (M, K, 2)
        Positive evidence pairs ``[L_k(0), L_k(1)]``.
    prevalence : array of shape (K,) or (M, K)
        Strictly between 0 and 1 where the likelihoods carry evidence.
    a : float or array of shape (K,)
        Tempering exponents in ``[0, inf)``, as in :func:`temper`.

    Returns
    -------
    ndarray of shape (M, K)
        The tempered posterior probabilities ``P(Y_k = 1 | s_k)``.

    Examples
    --------
    >>> L = np.array([[[0.5, 3.0]]])        # LPR 0.6 at prevalence 0.2: (1 - .6)/.8, .6/.2
    >>> tempered_lpr(L, [0.2]).round(6), tempered_lpr(L, [0.2], 0.0).round(6)
    (array([[0.6]]), array([[0.2]]))
    """
    L = temper(likelihoods, a)
    p = np.asarray(prevalence, dtype=float)
    if p.shape not in ((L.shape[1],), L.shape[:2]):
        raise InputError(f"prevalence must have shape ({L.shape[1]},) or {L.shape[:2]}, got {p.shape}")
    p = np.clip(p, 1e-12, 1 - 1e-12)
    with np.errstate(divide="ignore"):
        logit = np.log(p) - np.log1p(-p) + np.log(L[..., 1]) - np.log(L[..., 0])
    return expit(logit)


def log_evidence_ratio(likelihoods):
    """``log(L_k(1) / L_k(0))`` of each evidence pair, an infinite or undefined ratio at +-745 (its sign).

    The factor :func:`own_evidence` raises to ``own - a``; computed once, it serves
    every call on the same likelihoods (an exponent search).

    Parameters
    ----------
    likelihoods : array of shape (M, K, 2)
        Evidence pairs ``[L_k(0), L_k(1)]``.

    Returns
    -------
    ndarray of shape (M, K)
        The log likelihood ratios.

    Examples
    --------
    >>> log_evidence_ratio(np.array([[[1.0, np.e], [1.0, 0.0]]]))
    array([[   1., -745.]])
    """
    L = np.asarray(likelihoods, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_ratio = np.log(L[..., 1]) - np.log(L[..., 0])
        return np.where(np.isfinite(log_ratio), log_ratio, np.where(L[..., 1] > L[..., 0], 745.0, -745.0))


def own_evidence(mlpr, likelihoods, a, own, *, log_ratio=None, query=None):
    """Posteriors with each class's own evidence at strength ``own`` and every other class's at ``a``.

    ``mlpr`` are the posteriors of a network query in which every class's
    likelihood ratio was raised to ``a`` (:func:`temper`). A class's score enters
    the network only through its own likelihood factor on ``Y_k``, so raising
    that one factor from ``a_k`` to ``own_k`` multiplies the posterior odds of
    ``Y_k = 1`` by ``(L_k(1) / L_k(0)) ** (own_k - a_k)``, and nothing else about
    ``Y_k``'s posterior changes: the result is exactly the posterior of the
    query with class ``k``'s evidence at ``own_k`` and the others' at ``a``, for
    every class at once and for any exact engine (an approximate engine's error
    carries over). With ``a = 0`` it is the class's own tempered LPR under the
    network's prior marginal; with ``own = a`` it returns ``mlpr``.

    Hard evidence (a zero in the class's likelihood pair) is read from
    ``likelihoods``: at any positive exponent it forces the class (1 or 0, kept
    from ``mlpr`` when ``a_k > 0``). Two events cannot be answered from ``mlpr``:
    a posterior that rounded to 1.0 (its odds are lost) when ``own_k`` lowers
    them, and hard evidence taken out (``own_k = 0 < a_k``). ``query`` answers
    them exactly, one network query per class that has any; without it they keep
    ``mlpr``.

    The scores of different classes share their errors (one first stage scores
    every class), so the evidence of *other* classes needs a smaller strength
    than a class's own, which the per-class score models calibrate.

    Parameters
    ----------
    mlpr : array of shape (M, K)
        Posteriors from evidence tempered by ``a``.
    likelihoods : array of shape (M, K, 2)
        The untempered evidence pairs ``[L_k(0), L_k(1)]``.
    a, own : float or array of shape (K,)
        The exponents of the query and of each class's own evidence.
    log_ratio : array of shape (M, K), optional
        :func:`log_evidence_ratio` of ``likelihoods``, when already computed.
    query : callable, optional
        ``query(likelihoods, exponents)`` -> the (M', K) posteriors of the same
        network query for some rows of ``likelihoods`` (untempered) with the
        exponents ``exponents`` ((K,)), for the events above.

    Returns
    -------
    ndarray of shape (M, K)
        The posteriors with each class's own evidence at ``own``.

    Examples
    --------
    >>> L = np.array([[[1.0, 4.0]]])            # likelihood ratio 4
    >>> own_evidence(np.array([[0.5]]), L, 0.5, 1.0).round(6)    # odds 1 * 4 ** 0.5
    array([[0.666667]])
    >>> own_evidence(np.array([[0.5]]), np.array([[[0.0, 1.0]]]), 0.0, 0.1)  # hard evidence: positive
    array([[1.]])
    """
    mlpr = np.asarray(mlpr, dtype=float)
    p = np.clip(mlpr, 1e-300, 1.0)
    L = np.asarray(likelihoods, dtype=float)
    if L.shape != (*mlpr.shape, 2):
        raise InputError(f"likelihoods must have shape {(*mlpr.shape, 2)} (mlpr's and 2), got {L.shape}")
    a = np.broadcast_to(np.asarray(a, dtype=float), (L.shape[1],))
    own = np.broadcast_to(np.asarray(own, dtype=float), (L.shape[1],))
    shift = own - a
    if not np.any(shift):
        return mlpr.copy()
    if log_ratio is None:
        log_ratio = log_evidence_ratio(L)
    with np.errstate(divide="ignore", invalid="ignore"):
        logit = np.log(p) - np.log1p(-np.minimum(p, 1 - 1e-16)) + shift * log_ratio
    q = expit(logit)
    keep = (mlpr >= 1.0) | (mlpr <= 1e-300)
    zero = L == 0
    hard = None
    if zero.any():  # hard evidence (rare: checked once, so that the exponent search pays for it only then)
        positive = zero[..., 0]
        hard = positive | zero[..., 1]
        # hard evidence the query (a = 0) did not hold forces the class, unless the query rules that value out
        forced = hard & (a == 0) & (own > 0) & np.where(positive, mlpr > 0, mlpr < 1)
        keep |= hard & ~forced
    out = np.where(keep, mlpr, q)
    if hard is not None:
        out[forced] = positive[forced]
    if query is not None:
        lost = mlpr >= 1.0
        if lost.any():
            lost &= shift * log_ratio < 0
        if hard is not None:
            lost = np.where(hard, (own == 0) & (a > 0), lost)
        for k in np.flatnonzero(lost.any(axis=0)):
            rows = np.flatnonzero(lost[:, k])
            exponents = a.copy()
            exponents[k] = own[k]
            out[rows, k] = np.asarray(query(L[rows], exponents), dtype=float)[:, k]
    return out


def with_prior(mlpr, log_odds_shift):
    """Posteriors whose prior odds of ``Y_k = 1`` are multiplied by ``exp(log_odds_shift_k)``.

    Bayes' rule: the posterior odds are the prior odds times the Bayes factor of the
    evidence, so adding ``logit pi'_k - logit pi_k`` to the posterior's logit gives
    the posterior under the prior ``pi'_k`` with the same Bayes factor. Posteriors
    of exactly 0 or 1 (hard evidence, or a class the network rules out) are kept.

    Parameters
    ----------
    mlpr : array of shape (M, K)
        Posteriors under the old prior.
    log_odds_shift : array of shape (K,)
        ``logit`` of the new prior minus ``logit`` of the old one, per class.

    Returns
    -------
    ndarray of shape (M, K)
        The posteriors under the new prior.

    Examples
    --------
    >>> with_prior(np.array([[0.5]]), np.log([3.0])).round(6)    # odds 1 -> 3
    array([[0.75]])
    """
    p = np.asarray(mlpr, dtype=float)
    q = np.clip(p, 1e-300, 1.0 - 1e-16)
    logit = np.log(q) - np.log1p(-q) + np.asarray(log_odds_shift, dtype=float)
    return np.where((p >= 1.0) | (p <= 0.0), p, expit(logit))


def tempering_groups(hierarchy, grouping="one", labels=None, *, n_groups=4):
    """Assign every class to a tempering group.

    Parameters
    ----------
    hierarchy : Hierarchy
        Gives each class's depth (and the column order of ``labels``).
    grouping : {"one", "depth", "frequency"}
        ``"one"``: a single group. ``"depth"``: by depth (longest path from a
        root), depths beyond ``n_groups - 1`` merged into the last group.
        ``"frequency"``: by the number of training positives, in ``n_groups``
        groups of equal size (quantiles of the count among classes).
    labels : array of shape (M, K), optional
        Training labels; needed for ``"frequency"``.
    n_groups : int, default 4
        The largest number of groups of ``"depth"`` and ``"frequency"``.

    Returns
    -------
    ndarray of int, shape (K,)
        Group index per class, ``0 .. n - 1`` (every index used).

    Examples
    --------
    >>> from hmcpgm import Hierarchy
    >>> h = Hierarchy.from_parents([None, 0, 1, 2, 3])
    >>> tempering_groups(h, "depth", n_groups=3).tolist()
    [0, 1, 2, 2, 2]
    """
    hierarchy = check_hierarchy(hierarchy)
    if grouping not in GROUPINGS:
        raise InputError(f"grouping must be one of {GROUPINGS}, got {grouping!r}")
    if isinstance(n_groups, bool) or not isinstance(n_groups, (int, np.integer)) or n_groups < 1:
        raise InputError(f"n_groups must be a positive int, got {n_groups!r}")
    k = hierarchy.n_classes
    if grouping == "one":
        raw = np.zeros(k, dtype=np.intp)
    elif grouping == "depth":
        raw = np.minimum(np.asarray(hierarchy.depth), n_groups - 1)
    else:
        if labels is None:
            raise InputError("grouping='frequency' needs the training labels")
        labels = np.asarray(labels, dtype=float)
        if labels.ndim != 2 or labels.shape[1] != k:
            raise InputError(f"labels must have {k} columns, got shape {labels.shape}")
        if not np.isin(labels, (0.0, 1.0)).all():
            raise InputError("labels must hold only 0 and 1 (no missing values)")
        counts = labels.sum(axis=0)
        edges = np.quantile(counts, np.linspace(0, 1, n_groups + 1)[1:-1])
        raw = np.searchsorted(edges, counts, side="right")
    return np.unique(raw, return_inverse=True)[1].astype(np.intp)
