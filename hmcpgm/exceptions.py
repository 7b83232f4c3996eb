"""The exceptions and warnings that hmcpgm raises.

Every error is a subclass of a builtin (``ValueError`` mostly), so code that
already catches ``ValueError`` keeps working; catch :class:`HmcpgmError` to catch
only ours.
"""

__all__ = [
    "HmcpgmError",
    "HierarchyError",
    "LabelError",
    "InputError",
    "InferenceError",
    "ConvergenceWarning",
    "ApproximationWarning",
]


class HmcpgmError(Exception):
    """Base class of every error raised by hmcpgm."""


class HierarchyError(HmcpgmError, ValueError):
    """The class hierarchy is malformed: a cycle, a self loop, a duplicate or unknown name."""


class LabelError(HmcpgmError, ValueError):
    """A label matrix breaks the hierarchy, is not 0/1, or a class has no positives."""


class InputError(HmcpgmError, ValueError):
    """An array argument has the wrong shape, type or values (NaN, infinite, negative)."""


class InferenceError(HmcpgmError, ValueError):
    """An inference engine cannot answer: a clique too wide, an unknown engine or version."""


class ConvergenceWarning(UserWarning):
    """An iterative engine (loopy belief propagation) stopped before it converged."""


class ApproximationWarning(UserWarning):
    """The answer is approximate: the chosen engine is not exact on this hierarchy.

    ``engine="auto"`` emits it when no exact engine fits the memory budget and loopy
    belief propagation (exact only on forests and polytrees) answers instead.
    """
