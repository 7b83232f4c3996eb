"""The class hierarchy: a tree, a forest or a DAG of named classes.

:class:`Hierarchy` is a small immutable object that holds a networkx ``DiGraph``
(edges point from parent to child) and fixes the column order of every score and
label matrix: column ``k`` of a matrix belongs to ``hierarchy.classes[k]``.
Engines work on integer indices (``parent_indices``, ``topological_order``), users
on names (``parents("GO0003674")``).
"""

from functools import cached_property

import networkx as nx
import numpy as np

from .._arrays import binary_matrix
from .._columns import as_pandas, class_matrix, is_frame
from .._util import as_names, preview
from ..exceptions import HierarchyError, LabelError
from ._convert import directed_graph, frozen_graph, graph_from_edges, graph_from_parents, read_obo
from ._structure import (
    adjacent_indices,
    ancestor_closure,
    ancestor_lists,
    compressed,
    edge_index_array,
    frozen_array,
    longest_depth,
    one_parent_each,
    reachable,
    topological_indices,
)

__all__ = ["Hierarchy", "as_binary"]


def as_binary(labels, hierarchy, name):
    """An (M, K) 0/1 matrix in the hierarchy's column order; a DataFrame is aligned by name."""
    labels = as_pandas(labels)  # a pyarrow or polars table names its columns: by name too
    if is_frame(labels):
        labels = class_matrix(labels, hierarchy, name, allow_nan=True, keep_integers=True)
    y = labels if isinstance(labels, np.ndarray) and labels.dtype == bool else binary_matrix(labels, name, hierarchy)
    if y.shape[1] != hierarchy.n_classes:
        raise LabelError(f"{name} must have shape (n_objects, {hierarchy.n_classes}), got shape {y.shape}")
    return y


class Hierarchy:
    """An immutable class hierarchy (tree, forest or DAG).

    Build one with :meth:`from_edges`, :meth:`from_parents` or
    :meth:`from_networkx`. A class is positive only if all its parents are.

    Parameters
    ----------
    graph : networkx.DiGraph
        Edges from parent to child. It is copied; later changes to it do not
        reach the hierarchy.
    classes : sequence, optional
        The column order. Default: the order of ``graph.nodes``. Must name each
        node of ``graph`` exactly once.

    Examples
    --------
    >>> h = Hierarchy.from_edges([("animal", "dog"), ("animal", "cat"), ("dog", "puppy")])
    >>> h.classes
    ('animal', 'dog', 'cat', 'puppy')
    >>> h.kind
    'tree'
    >>> h.ancestors("puppy")
    ('animal', 'dog')
    >>> h.parent_indices[3]
    array([1])
    """

    def __init__(self, graph, classes=None):
        self._graph, self._classes = frozen_graph(graph, classes)
        self._index = {c: i for i, c in enumerate(self._classes)}

    # ------------------------------------------------------------------ builders
    @classmethod
    def from_edges(cls, edges, classes=None):
        """Build from ``(parent, child)`` pairs.

        Parameters
        ----------
        edges : iterable of (parent, child)
            Duplicated pairs are an error (they usually mean a copy-paste slip).
        classes : sequence, optional
            Column order, and a way to add classes with no edge (isolated roots).
            Default: order of first appearance in ``edges``.

        Returns
        -------
        Hierarchy
            The hierarchy of these edges.

        Examples
        --------
        >>> Hierarchy.from_edges([(0, 1), (0, 2)], classes=[0, 1, 2, 3]).roots
        (0, 3)
        """
        return cls(*graph_from_edges(edges, classes))

    @classmethod
    def from_parents(cls, parents):
        """Build from a parent list: entry ``k`` describes class ``k``.

        Parameters
        ----------
        parents : sequence
            Entry ``k`` is an int parent index, a list of parent indices (a DAG
            node), or ``None`` / ``-1`` / ``[]`` for a root.

        Returns
        -------
        Hierarchy
            Classes named ``0 .. K-1``, in that column order.

        Examples
        --------
        >>> h = Hierarchy.from_parents([None, 0, 0, [1, 2]])
        >>> h.kind, h.parents(3)
        ('dag', (1, 2))
        """
        return cls(*graph_from_parents(parents))

    @classmethod
    def from_networkx(cls, graph, classes=None, *, direction="parent_to_child", relations=None):
        """Build from a networkx ``DiGraph`` or ``MultiDiGraph``.

        Parameters
        ----------
        graph : networkx.DiGraph or networkx.MultiDiGraph
            Not changed. Parallel edges of a multigraph (e.g. ``is_a`` and ``part_of``
            between the same two terms) become one edge.
        classes : sequence, optional
            Column order; default the order of ``graph.nodes``.
        direction : {"parent_to_child", "child_to_parent"}
            Which way the edges of ``graph`` point. Ontology graphs read from OBO
            files (obonet) point from child to parent.
        relations : collection of str, optional
            Keep only the edges whose key (multigraphs; obonet stores the relation
            type there) or ``"relation"`` attribute (simple graphs) is one of these.
            Default: every edge.

        Returns
        -------
        Hierarchy
            Edges from parent to child.

        Examples
        --------
        >>> import networkx as nx
        >>> g = nx.MultiDiGraph([("b", "a", "is_a"), ("c", "b", "part_of"), ("c", "a", "regulates")])
        >>> h = Hierarchy.from_networkx(g, direction="child_to_parent", relations=("is_a", "part_of"))
        >>> h.parents("c"), h.parents("b")
        (('b',), ('a',))
        """
        return cls(directed_graph(graph, direction, relations), classes)

    @classmethod
    def from_obo(cls, path, relations=("is_a", "part_of"), *, namespace=None):
        """Read an ontology (e.g. the Gene Ontology) from an OBO file with obonet.

        The file is read as :func:`hmcpgm.ontology.read_ontology` reads it (the same
        lines, the same one-line errors), but into one hierarchy: all namespaces at
        once unless ``namespace`` picks one.

        Parameters
        ----------
        path : str or Path
            An ``.obo`` file, plain or gzip-compressed, UTF-8 (or, as obonet reads
            them, a URL or a ``.bz2`` / ``.xz`` file).
        relations : str or collection of str, default ("is_a", "part_of")
            The relations that make a term a child of another. None of them in the file
            is an error (a misspelt name would drop every edge); one missing other than
            is_a and part_of is a warning.
        namespace : str, optional
            Keep only the terms of one namespace (e.g. ``"biological_process"``);
            edges to terms outside it are dropped.

        Returns
        -------
        Hierarchy
            Obsolete terms, and terms the file names as a parent without defining them
            (with a warning), are left out with their edges; edges point from parent
            to child. When no term names its namespace, ``namespace`` is matched
            against the header's ``default-namespace``.
        """
        from .._obo import relation_names

        relations = relation_names(relations)
        graph = read_obo(path, relations, namespace)
        return cls.from_networkx(graph, direction="child_to_parent", relations=relations)

    # ------------------------------------------------------------------ names
    @property
    def classes(self):
        """tuple: the class names, in the column order of every matrix."""
        return self._classes

    @property
    def n_classes(self):
        """int: the number of classes K."""
        return len(self._classes)

    def __len__(self):
        return len(self._classes)

    def __contains__(self, name):
        try:
            return name in self._index
        except TypeError:  # unhashable: not a class
            return False

    def __iter__(self):
        return iter(self._classes)

    def __eq__(self, other):
        if not isinstance(other, Hierarchy):
            return NotImplemented
        return self._classes == other._classes and set(self._graph.edges) == set(
            other._graph.edges
        )

    def __hash__(self):
        return self._hash

    @cached_property
    def _hash(self):  # immutable: hashed once (the engines' caches look hierarchies up by hash)
        return hash((self._classes, frozenset(self._graph.edges)))

    def __copy__(self):
        return self  # immutable: a copy is the object itself

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        # rebuilt from the graph and column order: cached properties (the hash of str
        # names differs between processes; arrays would come back writeable) are recomputed
        return (type(self), (nx.DiGraph(self._graph), self._classes))

    def __repr__(self):
        return (
            f"Hierarchy({self.kind}, {self.n_classes} classes, "
            f"{self._graph.number_of_edges()} edges, {len(self.roots)} roots)"
        )

    def index(self, name):
        """Column index of class ``name``; a clear error for unknown names.

        Parameters
        ----------
        name : hashable
            A class of the hierarchy.

        Returns
        -------
        int
            The column of ``name`` in every matrix.

        Raises
        ------
        HierarchyError
            ``name`` is not a class of the hierarchy.
        """
        try:
            return self._index[name]
        except (KeyError, TypeError):
            raise HierarchyError(
                f"unknown class {name!r}; the hierarchy has {self.n_classes} classes, "
                f"e.g. {preview(self._classes)}"
            ) from None

    def indices(self, names):
        """Column indices of several classes, as an int array.

        Parameters
        ----------
        names : iterable
            Classes of the hierarchy.

        Returns
        -------
        ndarray of int
            Their columns, in the order of ``names``.
        """
        return np.array([self.index(n) for n in names], dtype=np.intp)

    @property
    def graph(self):
        """networkx.DiGraph: a frozen (read-only) view of the hierarchy."""
        return self._graph

    def to_networkx(self):
        """A mutable copy of the graph (parent -> child edges).

        Returns
        -------
        networkx.DiGraph
            A new graph; changing it does not change the hierarchy.
        """
        return nx.DiGraph(self._graph)

    @property
    def edges(self):
        """tuple of (parent, child) names."""
        return tuple(self._graph.edges)

    # ------------------------------------------------------------------ structure by name
    def parents(self, name):
        """The parents of class ``name``, in column order.

        Parameters
        ----------
        name : hashable
            A class of the hierarchy.

        Returns
        -------
        tuple
            Their names.
        """
        return tuple(self._classes[i] for i in self.parent_indices[self.index(name)])

    def children(self, name):
        """The children of class ``name``, in column order.

        Parameters
        ----------
        name : hashable
            A class of the hierarchy.

        Returns
        -------
        tuple
            Their names.
        """
        return tuple(self._classes[i] for i in self.child_indices[self.index(name)])

    def ancestors(self, name):
        """All ancestors of class ``name``, in column order.

        Parameters
        ----------
        name : hashable
            A class of the hierarchy.

        Returns
        -------
        tuple
            Their names.
        """
        k = self.index(name)
        return tuple(self._classes[i] for i in np.flatnonzero(self._reach(k, up=True)))

    def descendants(self, name):
        """All descendants of class ``name``, in column order.

        Parameters
        ----------
        name : hashable
            A class of the hierarchy.

        Returns
        -------
        tuple
            Their names.
        """
        k = self.index(name)
        return tuple(self._classes[i] for i in np.flatnonzero(self._reach(k, up=False)))

    def _reach(self, k, up):
        """(K,) bool: the proper ancestors (``up``) or descendants of class ``k``; a row of the ancestor
        matrix once it is built, else a walk over the edges (no (K, K) matrix for one query)."""
        if "ancestor_matrix" in self.__dict__:
            return self.ancestor_matrix[k] if up else self.ancestor_matrix[:, k]
        return reachable([k], self.parent_indices if up else self.child_indices, self.n_classes)

    def neighbourhood(self, name):
        """The parents and children of ``name`` (the nbh version of mLPR, SPEC section 4).

        Parameters
        ----------
        name : hashable
            A class of the hierarchy.

        Returns
        -------
        tuple
            The parents, then the children.
        """
        return self.parents(name) + self.children(name)

    @cached_property
    def roots(self):
        """tuple: the classes with no parent."""
        return tuple(self._classes[i] for i in self.root_indices)

    @cached_property
    def leaves(self):
        """tuple: the classes with no child."""
        return tuple(c for c in self._classes if self._graph.out_degree(c) == 0)

    # ------------------------------------------------------------------ structure by index
    @cached_property
    def parent_indices(self):
        """tuple of int arrays: ``parent_indices[k]`` lists the parents of class ``k``."""
        return adjacent_indices(self._classes, self._index, self._graph.predecessors)

    @cached_property
    def child_indices(self):
        """tuple of int arrays: ``child_indices[k]`` lists the children of class ``k``."""
        return adjacent_indices(self._classes, self._index, self._graph.successors)

    @cached_property
    def root_indices(self):
        """int array: column indices of the roots."""
        return frozen_array([k for k, p in enumerate(self.parent_indices) if len(p) == 0])

    @cached_property
    def edge_indices(self):
        """int array of shape (E, 2): (parent, child) column indices of every edge."""
        return edge_index_array(self._graph, self._index)

    @cached_property
    def topological_order(self):
        """int array: every class after all of its parents (ties in column order)."""
        return topological_indices(self._graph, self._index)

    @cached_property
    def depth(self):
        """int array: the length of the longest path from a root to each class."""
        return longest_depth(self.topological_order, self.parent_indices)

    @cached_property
    def parent_csr(self):
        """(ptr, idx) int64 arrays: the parents of class ``k`` are ``idx[ptr[k]:ptr[k + 1]]``.

        The compressed layout the compiled kernels (HierRank, loopy BP) read.
        """
        return compressed(self.parent_indices)

    def spanning_forest(self, keep="deepest"):
        """One parent per class: an int64 array, -1 for roots.

        On a forest this is the parent of each class. On a DAG each class keeps its
        ``"deepest"`` parent (largest depth, ties to the larger column index) or its
        ``"shallowest"`` (smallest depth, ties to the smaller column index).

        Parameters
        ----------
        keep : {"deepest", "shallowest"}
            Which parent a class with several keeps.

        Returns
        -------
        ndarray of int64, shape (K,)
            The kept parent's column index of each class (read-only), -1 for roots.

        Examples
        --------
        >>> h = Hierarchy.from_parents([None, 0, [0, 1]])
        >>> h.spanning_forest().tolist(), h.spanning_forest("shallowest").tolist()
        ([-1, 0, 1], [-1, 0, 0])
        """
        return one_parent_each(self.parent_indices, self.depth, keep)

    @cached_property
    def ancestor_matrix(self):
        """bool array (K, K): ``A[k, a]`` is True when ``a`` is a proper ancestor of ``k``."""
        return ancestor_closure(self.topological_order, self.parent_indices)

    @cached_property
    def ancestor_pairs(self):
        """(descendant, ancestor) int arrays: each class with each of its proper ancestors.

        The True entries of :attr:`ancestor_matrix`, row by row (by class, then by
        ancestor index); read-only, computed once per hierarchy, without the dense
        matrix when it has not been made.
        """
        if "ancestor_matrix" in self.__dict__:  # cached already
            pairs = np.nonzero(self.ancestor_matrix)
        else:
            lists = ancestor_lists(self.topological_order, self.parent_indices)
            pairs = (np.repeat(np.arange(self.n_classes), [len(a) for a in lists]),
                     np.concatenate(lists).astype(np.intp))
        for a in pairs:
            a.flags.writeable = False
        return pairs

    @cached_property
    def _ancestor_csr(self):
        """:attr:`ancestor_matrix` as a sparse int32 matrix, built once from :attr:`ancestor_pairs` (close_labels'
        product; made from the dense matrix on every call, it cost seconds per call on an ontology of 27,000
        classes, audit26)."""
        from scipy import sparse

        descendants, ancestors = self.ancestor_pairs
        return sparse.csr_matrix((np.ones(descendants.size, np.int32), (descendants, ancestors)),
                                 shape=(self.n_classes, self.n_classes))

    @cached_property
    def kind(self):
        """str: ``"tree"`` (one root, one parent each), ``"forest"`` or ``"dag"``."""
        if any(len(p) > 1 for p in self.parent_indices):
            return "dag"
        return "tree" if len(self.root_indices) == 1 else "forest"

    @property
    def is_forest(self):
        """bool: every class has at most one parent (trees are forests)."""
        return self.kind != "dag"

    @property
    def is_tree(self):
        """bool: a forest with a single root."""
        return self.kind == "tree"

    def subgraph(self, names):
        """The hierarchy induced by ``names`` and all their ancestors (column order kept).

        Parameters
        ----------
        names : iterable or class name
            Classes of the hierarchy; a single class (a string such as
            ``"GO:0008150"``, or any name that is a class) stands for itself.

        Returns
        -------
        Hierarchy
            These classes and their ancestors, with the edges among them.

        Examples
        --------
        >>> h = Hierarchy.from_edges([("r", "a"), ("a", "b"), ("r", "c")])
        >>> h.subgraph("b").classes
        ('r', 'a', 'b')
        """
        idx = self.indices(as_names(names, self.__contains__))  # one name (maybe unknown) or several
        keep = reachable(idx, self.parent_indices, self.n_classes)
        keep[idx] = True
        classes = [c for c, k in zip(self._classes, keep) if k]
        return Hierarchy(self._graph.subgraph(classes), classes)

    # -- label matrices ---------------------------------------------------

    def close_labels(self, labels):
        """Close a 0/1 label matrix upward: a positive class makes its ancestors positive.

        Parameters
        ----------
        labels : array-like or DataFrame of shape (M, K)
            Columns in class order, or a DataFrame (or a pyarrow or polars table) with
            columns named by class.

        Returns
        -------
        ndarray or DataFrame of shape (M, K), dtype int8
            The labels with every ancestor of a positive class positive, columns in
            class order; a DataFrame (the input's index, columns named by class, as
            :class:`~hmcpgm.MLPR` returns them) when ``labels`` is one.

        Examples
        --------
        >>> from hmcpgm import Hierarchy
        >>> h = Hierarchy.from_parents([None, 0, 1])
        >>> h.close_labels([[0, 0, 1]])
        array([[1, 1, 1]], dtype=int8)
        """
        labels = as_pandas(labels)  # a pyarrow or polars table: a DataFrame, as for a DataFrame
        y = as_binary(labels, self, "labels").astype(bool)
        # positive if the class or any descendant is: one sparse matrix product
        from scipy import sparse

        reach = sparse.csr_matrix(y, dtype=np.int32) @ self._ancestor_csr
        closed = y.astype(np.int8)
        # the ancestors reached, set in place: no dense (M, K) int32 temporary (half a gigabyte for 5,000 targets
        # on the Gene Ontology's 27,000 process terms)
        closed[np.repeat(np.arange(y.shape[0]), np.diff(reach.indptr)), reach.indices] = 1
        if not is_frame(labels):
            return closed
        import pandas as pd

        return pd.DataFrame(closed, index=labels.index, columns=list(self._classes))

    def violations(self, labels):
        """Number of (object, edge) pairs where a child is positive and its parent is not.

        Parameters
        ----------
        labels : array-like or DataFrame of shape (M, K)
            0/1 labels: columns in class order, or a DataFrame with columns named by class.

        Returns
        -------
        int
            0 when the labels respect the hierarchy.
        """
        y = as_binary(labels, self, "labels").astype(bool)
        e = self.edge_indices
        if len(e) == 0:
            return 0
        return int(np.count_nonzero(y[:, e[:, 1]] & ~y[:, e[:, 0]]))

    def check_labels(self, labels, name="labels", *, where=None):
        """Raise :class:`LabelError` if a positive class has a negative parent.

        Parameters
        ----------
        labels : array-like or DataFrame of shape (M, K)
            0/1 labels: columns in class order, or a DataFrame with columns named by class.
        name : str
            What the labels are called in the message.
        where : callable, optional
            Row index -> description of the row (e.g. its line in a file); default
            ``"row i"`` (from 0).

        Raises
        ------
        LabelError
            The labels break the hierarchy; the message names the first offending
            row, child and parent.
        """
        y = as_binary(labels, self, name).astype(bool)
        e = self.edge_indices
        if len(e) == 0:
            return
        bad = y[:, e[:, 1]] & ~y[:, e[:, 0]]
        if bad.any():
            rows, edges = np.nonzero(bad)
            p, c = e[edges[0]]
            row = f"row {rows[0]}" if where is None else where(rows[0])
            raise LabelError(
                f"{name} break the hierarchy in {len(rows)} places ({len(np.unique(rows))} "
                f"rows); first: {row} has class {self.classes[c]!r} positive but "
                f"its parent {self.classes[p]!r} negative. Close the labels upward with "
                "Hierarchy.close_labels if that is what you mean."
            )
