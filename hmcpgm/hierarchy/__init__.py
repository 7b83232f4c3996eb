"""The class hierarchy: a tree, a forest or a DAG of named classes (:class:`Hierarchy`)."""

from ._hierarchy import Hierarchy

__all__ = ["Hierarchy"]
