"""The vocabulary of hmcpgm: every named choice, defined once.

The estimator, the inference engines, the ranking functions and the command line
all read their choices from here, and :func:`check_choice` gives the one error
message for a value outside them. The inference engines and the score models are the
rows of their registries: :data:`hmcpgm.inference.ENGINES` and
:data:`hmcpgm.likelihood.SCORE_MODELS`.
"""

import numbers

from .exceptions import InputError

__all__ = ["VERSIONS", "PRIORS", "RANK_METHODS", "check_choice", "check_pool", "check_stack", "resolve_prior",
           "resolve_stack"]

VERSIONS = ("indpt", "nbh", "full")  # simplest first: the order version="auto" prefers
"""mLPR versions: evidence from every class, from the neighbourhood, from the class alone."""

PRIORS = ("network", "prevalence")
"""Prior of ``Y_k`` in nbh's and full's posterior: the label network's marginal, or the training prevalence."""

RANK_METHODS = ("auto", "horn", "greedy", "relaxed", "sidney", "lagrangian", "exact")
"""HierRank methods of :func:`hmcpgm.hier_rank`."""


def resolve_prior(prior, hierarchy):
    """The prior ``"auto"`` stands for on ``hierarchy``: ``"prevalence"`` on a DAG, ``"network"`` on a forest.

    On a forest the network's marginal ``P(Y_k = 1)`` is the prevalence up to the
    pseudo-count in ``theta``, and full's posteriors respect the hierarchy; on a DAG
    it is a product over a class's parents that can fall far below the prevalence.
    Other values are checked and returned.

    Examples
    --------
    >>> from hmcpgm import Hierarchy
    >>> resolve_prior("auto", Hierarchy.from_edges([("a", "c"), ("b", "c")]))
    'prevalence'
    >>> resolve_prior("auto", Hierarchy.from_parents([None, 0])), resolve_prior("prevalence", None)
    ('network', 'prevalence')
    """
    if isinstance(prior, str) and prior == "auto":
        return "network" if hierarchy.is_forest else "prevalence"
    return check_choice(prior, "prior", PRIORS)


def check_choice(value, name, choices):
    """Return ``value`` if it is one of ``choices``, else raise :class:`InputError`.

    Examples
    --------
    >>> check_choice("nbh", "version", VERSIONS)
    'nbh'
    >>> check_choice("ful", "version", VERSIONS)
    Traceback (most recent call last):
    ...
    hmcpgm.exceptions.InputError: version must be one of 'indpt', 'nbh', 'full'; got 'ful'
    """
    try:
        if all(isinstance(c, str) for c in choices):  # names: a name, not an array that compares equal to one
            ok = isinstance(value, str) and value in choices
        else:
            ok = value in choices
    except (TypeError, ValueError):  # unhashable or incomparable values, an array's ambiguous truth value
        ok = False
    if not ok or isinstance(value, bool):
        listed = ", ".join(repr(c) for c in choices)
        raise InputError(f"{name} must be one of {listed}; got {value!r}")
    return value


def check_pool(pool):
    """Return ``pool`` if it is ``"auto"``, None or a weight in [0, 1], else raise :class:`InputError`.

    Examples
    --------
    >>> check_pool(0.5)
    0.5
    >>> check_pool(1.5)
    Traceback (most recent call last):
    ...
    hmcpgm.exceptions.InputError: pool must be 'auto', None or a weight in [0, 1]; got 1.5
    """
    if isinstance(pool, str) and pool == "auto":
        return pool
    return _weight_or_none(pool, "pool", "'auto', None")


def check_stack(stack):
    """Return ``stack`` if it is ``"auto"``, None or a weight in [0, 1], else raise :class:`InputError`.

    Examples
    --------
    >>> check_stack(0.5)
    0.5
    >>> check_stack("half")
    Traceback (most recent call last):
    ...
    hmcpgm.exceptions.InputError: stack must be 'auto', None or a weight in [0, 1]; got 'half'
    """
    if isinstance(stack, str) and stack == "auto":
        return stack
    return _weight_or_none(stack, "stack", "'auto', None")


def _weight_or_none(value, name, allowed):
    """``value`` if it is None or a real number in [0, 1] (not a bool), else the one-line error naming ``name``
    and what it ``allowed``."""
    if value is None:
        return value
    number = isinstance(value, numbers.Real) and not isinstance(value, bool)
    if not number or not 0.0 <= float(value) <= 1.0:  # also refuses nan
        raise InputError(f"{name} must be {allowed} or a weight in [0, 1]; got {value!r}")
    return value


def resolve_stack(stack):
    """The stack's weight as a float, or None for no stack, after :func:`check_stack`, for a fit that does not
    cross-fit (the paper's model).

    ``"auto"`` chooses the weight on cross-fitted values
    (:func:`hmcpgm.selection.choose_stack_weight`); without them it is no stack, as are
    None and 0.

    Examples
    --------
    >>> resolve_stack("auto"), resolve_stack(0), resolve_stack(None), resolve_stack(0.25)
    (None, None, None, 0.25)
    """
    check_stack(stack)
    if isinstance(stack, str) or stack is None or float(stack) == 0.0:
        return None
    return float(stack)
