"""Graphs from other tools turned into parent -> child DiGraphs (networkx, OBO files), and their checks."""

from collections.abc import Iterable

import networkx as nx
import numpy as np

from .._util import plain_name, preview, repeated
from ..exceptions import HierarchyError, InputError

__all__ = [
    "check_name",
    "check_unique",
    "directed_graph",
    "frozen_graph",
    "graph_from_edges",
    "graph_from_parents",
    "read_obo",
]


def check_unique(names, what):
    """Raise :class:`HierarchyError` naming the class names that occur twice."""
    dup = repeated(names)
    if dup:
        raise HierarchyError(f"{what} has duplicate class names: {preview(dup)}")


def check_name(name, what):
    """Raise :class:`HierarchyError` for a class name that is missing (None, NaN) or unhashable."""
    try:
        hash(name)
    except TypeError:
        raise HierarchyError(f"{what} names a class {name!r} that is not hashable (use a str, int or tuple)") from None
    if name is None or (isinstance(name, (float, np.floating)) and name != name):
        raise HierarchyError(f"{what} names a class {name!r}: a missing value, not a class name")


def frozen_graph(graph, classes=None):
    """The checks of :class:`Hierarchy`'s constructor: ``(frozen DiGraph, classes tuple)``.

    The graph holds the nodes in ``classes`` order (default ``graph.nodes``) and
    the edges of ``graph``; a multigraph, unknown or missing classes, no class,
    self loops and cycles raise :class:`HierarchyError`. Numpy scalar names
    become the Python scalars they equal (:func:`plain_name`).
    """
    if not isinstance(graph, nx.DiGraph) or graph.is_multigraph():
        raise HierarchyError(
            f"graph must be a networkx.DiGraph, got {type(graph).__name__} "
            "(Hierarchy.from_networkx reads a MultiDiGraph)"
        )
    if classes is None:
        classes = list(graph.nodes)
        for c in classes:
            check_name(c, "graph")
    else:
        classes = list(classes)
        for i, c in enumerate(classes):
            check_name(c, f"classes item {i}")
        check_unique(classes, "classes")
        known = set(classes)
        missing = [c for c in graph.nodes if c not in known]
        extra = [c for c in classes if c not in graph]
        if missing or extra:
            raise HierarchyError(
                "classes must name every node of the graph exactly once; "
                f"nodes missing from classes: {preview(missing)}, "
                f"classes not in the graph: {preview(extra)}"
            )
    if len(classes) == 0:
        raise HierarchyError("a hierarchy needs at least one class, got none")
    loops = list(nx.selfloop_edges(graph))
    if loops:
        raise HierarchyError(
            f"the hierarchy has self loops (a class that is its own parent): {preview([u for u, _ in loops])}"
        )
    if not nx.is_directed_acyclic_graph(graph):
        cycle = [u for u, _ in nx.find_cycle(graph)]
        shown = [repr(u) for u in cycle[:6]] + ([f"... ({len(cycle)} classes in the cycle)"] if len(cycle) > 6 else [])
        raise HierarchyError(f"the hierarchy has a cycle: {' -> '.join(shown)} -> {cycle[0]!r}")
    classes = [plain_name(c) for c in classes]
    frozen = nx.DiGraph()
    frozen.add_nodes_from(classes)
    frozen.add_edges_from((plain_name(u), plain_name(v)) for u, v in graph.edges)
    return nx.freeze(frozen), tuple(classes)


def graph_from_edges(edges, classes=None):
    """``(graph, classes)`` from ``(parent, child)`` pairs (see :meth:`Hierarchy.from_edges`)."""
    if edges is None or isinstance(edges, (str, bytes)) or not isinstance(edges, Iterable):
        raise HierarchyError(f"edges must be an iterable of (parent, child) pairs, got {type(edges).__name__}")
    graph = nx.DiGraph()
    seen = set()
    order = {}
    for i, pair in enumerate(edges):
        try:
            if isinstance(pair, (str, bytes)):
                raise TypeError
            parent, child = pair
        except (TypeError, ValueError):
            raise HierarchyError(
                f"edges must be (parent, child) pairs; item {i} is {pair!r}"
            ) from None
        check_name(parent, f"edges item {i} ({parent!r}, {child!r})")
        check_name(child, f"edges item {i} ({parent!r}, {child!r})")
        if (parent, child) in seen:
            raise HierarchyError(f"edges lists the edge {parent!r} -> {child!r} twice")
        seen.add((parent, child))
        order.setdefault(parent, None)
        order.setdefault(child, None)
        graph.add_edge(parent, child)
    if classes is None:
        classes = list(order)
    else:
        classes = list(classes)
        for i, c in enumerate(classes):
            check_name(c, f"classes item {i}")
        check_unique(classes, "classes")
        known = set(classes)
        unknown = [c for c in order if c not in known]
        if unknown:
            raise HierarchyError(
                f"edges name classes that are not in classes: {preview(unknown)}"
            )
        graph.add_nodes_from(classes)
    return graph, classes



def graph_from_parents(parents):
    """``(graph, classes)`` from a parent list (see :meth:`Hierarchy.from_parents`)."""
    parents = list(parents)
    n = len(parents)
    graph = nx.DiGraph()
    graph.add_nodes_from(range(n))
    for k, entry in enumerate(parents):
        if entry is None:
            continue
        if isinstance(entry, (bool, np.bool_)):
            raise HierarchyError(f"parents[{k}] must be an int, a list of ints, None or -1; got {entry!r}")
        if isinstance(entry, (int, np.integer)):
            entry = [] if entry == -1 else [entry]
        try:
            entry = list(entry)
        except TypeError:
            raise HierarchyError(
                f"parents[{k}] must be an int, a list of ints, None or -1; got {entry!r}"
            ) from None
        if len(set(entry)) != len(entry):
            raise HierarchyError(f"parents[{k}] lists a parent twice: {entry!r}")
        for p in entry:
            if isinstance(p, (bool, np.bool_)) or not isinstance(p, (int, np.integer)) or not 0 <= p < n:
                raise HierarchyError(
                    f"parents[{k}] names parent {p!r}, but parent indices must be "
                    f"ints in 0..{n - 1}"
                )
            graph.add_edge(int(p), k)
    return graph, list(range(n))



def directed_graph(graph, direction="parent_to_child", relations=None):
    """A simple parent -> child ``DiGraph`` from a DiGraph or MultiDiGraph (see
    :meth:`Hierarchy.from_networkx`)."""
    if not isinstance(graph, nx.DiGraph):
        raise HierarchyError(f"graph must be a networkx.DiGraph or MultiDiGraph, got {type(graph).__name__}")
    if direction not in ("parent_to_child", "child_to_parent"):
        raise InputError(f"direction must be 'parent_to_child' or 'child_to_parent', got {direction!r}")
    if graph.is_multigraph():
        edges = graph.edges(keys=True)
    else:
        edges = ((u, v, d.get("relation")) for u, v, d in graph.edges(data=True))
    if isinstance(relations, str):  # one relation, not its characters
        relations = (relations,)
    simple = nx.DiGraph()
    simple.add_nodes_from(graph.nodes)
    seen = {}
    for u, v, kind in edges:
        if relations is not None and kind not in relations:
            seen.setdefault(kind, None)
            continue
        simple.add_edge(*((u, v) if direction == "parent_to_child" else (v, u)))
    if seen and simple.number_of_edges() == 0:
        raise HierarchyError(
            f"relations={tuple(relations)!r} keeps no edge of the graph; its edges have the relations "
            f"{preview(seen)} (the key of a multigraph's edge, or a simple graph's 'relation' attribute)"
        )
    return simple


def read_obo(path, relations, namespace=None):
    """The ontology of an OBO file as obonet's MultiDiGraph (child -> parent edges keyed by
    relation): the terms the file defines (not obsolete), optionally those of one namespace
    (the header's ``default-namespace`` when no term names one), read as
    :func:`hmcpgm.ontology.read_ontology` reads it; ``relations`` is a list of names
    (:func:`hmcpgm._obo.relation_names`)."""
    from .._obo import read_obo_graph, term_namespaces

    graph, terms = read_obo_graph(path, relations, what="OBO file")
    keep = [t for t, ns in term_namespaces(graph, terms).items() if namespace is None or ns == namespace]
    if namespace is not None and not keep:
        raise InputError(f"namespace {namespace!r} has no term in {path}")
    # a copy with the terms in file order: networkx's subgraph view lists a small part's nodes in set order,
    # which changed the classes' order from one run to the next (PYTHONHASHSEED)
    kept = set(keep)
    sub = graph.__class__()
    sub.graph.update(graph.graph)
    sub.add_nodes_from((t, graph.nodes[t]) for t in keep)
    multi = graph.is_multigraph()
    edges = [e for e in (graph.edges(keys=True, data=True) if multi else graph.edges(data=True))
             if e[0] in kept and e[1] in kept]
    if namespace is not None and multi and any(key in relations for _, _, key in graph.edges(keys=True)):
        edges = [e for e in edges if e[2] in relations]  # the file's relations are right: the namespace's own
        # edges of other relations only (has_part) leave it without edges, as read_ontology reads it
    sub.add_edges_from(edges)
    return sub
