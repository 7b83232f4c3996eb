"""The full version: one engine run with the evidence of every class."""


def full_posterior(hierarchy, theta, l0, l1, engine, options):
    """(K, M) posterior with all evidence, and the loopy report (or None)."""
    if engine == "tree":
        from ._tree import tree_full

        return tree_full(hierarchy, theta, l0, l1), None
    if engine == "enumerate":
        from ._enumerate import MAX_ENUMERATE, enumerate_full

        return enumerate_full(hierarchy, theta, l0, l1, options.get("max_classes", MAX_ENUMERATE)), None
    if engine == "junction":
        from ._junction import junction_full

        return junction_full(hierarchy, theta, l0, l1, options.get("max_clique", 20)), None
    if engine == "sparse":
        from ._sparse_junction import DEFAULT_BUDGET, sparse_junction_full

        return sparse_junction_full(hierarchy, theta, l0, l1, budget_bytes=options.get("budget_bytes", DEFAULT_BUDGET),
                                    progress=options.get("progress", False)), None
    from ._loopy import loopy_full

    opts = {n: options[n] for n in ("damping", "tol", "max_iter", "start") if n in options}
    return loopy_full(hierarchy, theta, l0, l1, **opts)
