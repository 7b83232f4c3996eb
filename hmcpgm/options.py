"""The vocabulary of hmcpgm: every named choice, defined once.

The estimator, the inference engines, the ranking functions and the command line
all read their choices from here, and :func:`check_choice` gives the one error
message for a value outside them. The inference engines are the rows of the engine
registry, :data:`hmcpgm.inference.ENGINES`.
"""

from .exceptions import InputError

__all__ = ["VERSIONS", "SCORE_MODELS", "RANK_METHODS", "check_choice"]

VERSIONS = ("indpt", "nbh", "full")  # simplest first: the order version="auto" prefers
"""mLPR versions: evidence from every class, from the neighbourhood, from the class alone."""

SCORE_MODELS = ("lpr", "gaussian", "kde", "precision", "isotonic", "platt", "logistic", "pooled", "auto")
"""Per-class score models of :func:`hmcpgm.likelihood.fit_score_model`."""

RANK_METHODS = ("auto", "horn", "greedy", "relaxed", "sidney", "lagrangian", "exact")
"""HierRank methods of :func:`hmcpgm.hier_rank`."""


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
        ok = value in choices
    except TypeError:  # unhashable or incomparable values
        ok = False
    if not ok or isinstance(value, bool):
        listed = ", ".join(repr(c) for c in choices)
        raise InputError(f"{name} must be one of {listed}; got {value!r}")
    return value
