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

from ._validation import check_hierarchy
from .exceptions import InputError

__all__ = ["GROUPINGS", "temper", "tempered_lpr", "tempering_groups"]

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
        ``likelihoods ** a`` per class (a new array).

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
    if a.shape != (L.shape[1],) or not np.all(np.isfinite(a)) or np.any(a < 0):
        raise InputError(f"a must be a number >= 0 or {L.shape[1]} of them (one per class), got shape {a.shape}")
    if np.all(a == 1.0):
        return L.copy()
    with np.errstate(divide="ignore"):
        return np.power(L, a[None, :, None])


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
    p = np.clip(np.asarray(prevalence, dtype=float), 1e-12, 1 - 1e-12)
    with np.errstate(divide="ignore"):
        logit = np.log(p) - np.log1p(-p) + np.log(L[..., 1]) - np.log(L[..., 0])
    return 0.5 * (1.0 + np.tanh(0.5 * logit))


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
        counts = np.asarray(labels).sum(axis=0)
        if counts.shape != (k,):
            raise InputError(f"labels must have {k} columns, got shape {np.shape(labels)}")
        edges = np.quantile(counts, np.linspace(0, 1, n_groups + 1)[1:-1])
        raw = np.searchsorted(edges, counts, side="right")
    return np.unique(raw, return_inverse=True)[1].astype(np.intp)
