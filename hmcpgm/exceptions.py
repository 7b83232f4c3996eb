"""The exceptions and warnings that hmcpgm raises.

Every error is a subclass of a builtin (``ValueError`` mostly), so code that
already catches ``ValueError`` keeps working; catch :class:`HmcpgmError` to catch
only ours. Every warning is a subclass of :class:`HmcpgmWarning`, so one filter
silences or escalates all of them, and each has a category of its own to act on.
"""

__all__ = [
    "HmcpgmError",
    "HierarchyError",
    "LabelError",
    "InputError",
    "InferenceError",
    "TooLargeError",
    "MissingDependencyError",
    "HmcpgmWarning",
    "ConvergenceWarning",
    "ApproximationWarning",
    "CutoffWarning",
]


class HmcpgmError(Exception):
    """Base class of every error raised by hmcpgm."""


class HierarchyError(HmcpgmError, ValueError):
    """The class hierarchy is malformed: a cycle, a self loop, a duplicate or unknown name."""


class LabelError(HmcpgmError, ValueError):
    """A label matrix breaks the hierarchy, is not 0/1, or a class has no positives."""


class InputError(HmcpgmError, ValueError):
    """An argument has the wrong type, shape or value (NaN, infinite, negative, unknown option)."""


class InferenceError(HmcpgmError, ValueError):
    """An inference engine cannot answer.

    The evidence is impossible, or the engine does not apply to the hierarchy (a
    forest-only engine on a DAG).
    """


class TooLargeError(HmcpgmError, ValueError):
    """The computation asked for is too large to run.

    Its size is named in the message (a junction tree clique, an enumeration, a
    ranking lattice) with what to do instead.
    """


class MissingDependencyError(HmcpgmError, ImportError):
    """An optional dependency is not installed; the message gives the ``pip install`` line."""


class HmcpgmWarning(UserWarning):
    """Base class of every warning hmcpgm emits."""


class ConvergenceWarning(HmcpgmWarning):
    """An iterative engine (loopy belief propagation) stopped before it converged."""


class ApproximationWarning(HmcpgmWarning):
    """The answer is approximate: the chosen engine is not exact on this hierarchy.

    ``engine="auto"`` emits it when no exact engine fits the memory budget and loopy
    belief propagation (exact only on forests and polytrees) answers instead; an
    engine asked for by name emits it where it is not exact (``engine="loopy"`` on a
    DAG whose undirected skeleton has a loop).
    """


class CutoffWarning(HmcpgmWarning):
    """A cutoff could not meet its target, so it labels no event positive.

    No prefix of the ranking meets the target FDR.
    """
