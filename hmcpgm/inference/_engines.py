"""Which engine answers exactly, on which hierarchies: the one table every report reads.

:func:`inference_plan`, :func:`engine_in_use` and :func:`compare_engines` all say
whether an answer is exact; they read it here, so the claim is written once.
"""

__all__ = ["EXACTNESS", "is_exact", "is_polytree"]

# engine -> the hierarchies on which its answer is the exact posterior
EXACTNESS = {
    "tree": "always (it refuses DAGs)",
    "junction": "always",
    "sparse": "always",
    "enumerate": "always",
    "pgmpy": "always",
    "pyagrum": "always",
    "loopy": "polytrees only (DAGs whose undirected skeleton has no loop)",
}


def is_polytree(hierarchy):
    """Whether the undirected skeleton has no cycle (a forest: E = K - number of components).

    Parameters
    ----------
    hierarchy : Hierarchy
        Any hierarchy.

    Returns
    -------
    bool
        True for forests and polytrees.

    Examples
    --------
    >>> from hmcpgm import Hierarchy
    >>> is_polytree(Hierarchy.from_parents([None, None, [0, 1]]))  # two roots, one child
    True
    >>> is_polytree(Hierarchy.from_parents([None, 0, 0, [1, 2]]))  # a diamond
    False
    """
    import networkx as nx

    g = hierarchy.graph
    return g.number_of_edges() == g.number_of_nodes() - nx.number_weakly_connected_components(g)


def is_exact(engine, hierarchy):
    """Whether ``engine``'s answer is the exact posterior on ``hierarchy`` (see :data:`EXACTNESS`).

    Parameters
    ----------
    engine : str
        An engine of :func:`hmcpgm.mlpr_from_likelihoods` (not ``"auto"``), or ``"pyagrum"``.
    hierarchy : Hierarchy
        The hierarchy it would run on.

    Returns
    -------
    bool
        True when the engine's answer is the exact posterior there.

    Examples
    --------
    >>> from hmcpgm import Hierarchy
    >>> h = Hierarchy.from_parents([None, 0, 0, [1, 2]])  # a diamond: one undirected loop
    >>> is_exact("sparse", h), is_exact("loopy", h)
    (True, False)
    """
    if engine not in EXACTNESS:
        raise KeyError(engine)
    if EXACTNESS[engine].startswith("polytrees"):
        return is_polytree(hierarchy)
    return True
