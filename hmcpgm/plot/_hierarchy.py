"""Drawing a hierarchy top-down, nodes coloured by one object's values."""

from collections.abc import Mapping

import numpy as np

from .._columns import is_frame, series_row
from .._validation import check_hierarchy
from ..exceptions import InputError
from ._axes import pyplot

__all__ = ["hierarchy_layout", "plot_hierarchy"]


def hierarchy_layout(hierarchy):
    """Top-down layered positions of the classes: ``y = -depth``, tidy ``x``.

    Each class is hung under one *layout parent* (its first parent, in column
    order, whose depth is one less; on a tree, its parent). On that spanning
    forest the leaves take consecutive slots ``x = 0, 1, 2, ...`` in depth-first
    order and every other class sits midway between its outermost layout
    children. Pure numpy; no graphviz.

    Parameters
    ----------
    hierarchy : Hierarchy
        The classes to place (a forest or a DAG).

    Returns
    -------
    pos : ndarray of shape (K, 2)
        ``pos[k] = (x, y)`` for class ``k`` (column order); ``y = -depth``.
    layout_parent : ndarray of int, shape (K,)
        The layout parent of each class, -1 for roots. Edges of the hierarchy
        that are not ``(layout_parent[k], k)`` are the extra parents of DAG
        classes.

    Examples
    --------
    >>> from hmcpgm import Hierarchy
    >>> h = Hierarchy.from_parents([None, 0, 0, [1, 2]])
    >>> pos, lp = hierarchy_layout(h)
    >>> pos.tolist()
    [[0.5, 0.0], [0.0, -1.0], [1.0, -1.0], [0.0, -2.0]]
    >>> lp.tolist()
    [-1, 0, 0, 1]
    """
    h = check_hierarchy(hierarchy)
    k_cls = h.n_classes
    depth = np.asarray(h.depth)
    layout_parent = np.full(k_cls, -1, dtype=np.intp)
    children = [[] for _ in range(k_cls)]
    for k in range(k_cls):
        parents = np.asarray(h.parent_indices[k])
        if parents.size:
            p = int(parents[depth[parents] == depth[k] - 1][0])
            layout_parent[k] = p
            children[p].append(k)
    x = np.zeros(k_cls)
    slot = 0
    for root in h.root_indices:
        stack = [(int(root), False)]
        while stack:  # iterative post-order depth-first walk
            k, expanded = stack.pop()
            if not children[k]:
                x[k] = slot
                slot += 1
            elif expanded:
                xs = x[children[k]]
                x[k] = (xs.min() + xs.max()) / 2
            else:
                stack.append((k, True))
                stack.extend((c, False) for c in reversed(children[k]))
    pos = np.column_stack([x, (-depth).astype(float)])
    return pos, layout_parent


def _class_values(values, hierarchy, name="values"):
    """Values per class as a (K,) float array (NaN allowed: drawn grey): an array in class order, or a dict,
    Series or one-row DataFrame by class name (a Series of a default ``RangeIndex`` in class order, unless
    the classes are the integers 0 .. n-1 in another order: :func:`hmcpgm._columns.series_row`)."""
    k_cls = hierarchy.n_classes
    if is_frame(values):  # one object's row of a DataFrame of mLPRs, columns named by class
        if len(values) != 1:
            raise InputError(
                f"{name} is a DataFrame of {len(values)} rows; pass one row (one object), e.g. {name}.iloc[[m]]"
            )
        values = values.iloc[0]
    elif hasattr(values, "to_frame") and not is_frame(series_row(values, hierarchy.classes)):  # names no class
        values = values.to_numpy()
    if isinstance(values, Mapping) or (hasattr(values, "index") and hasattr(values, "reindex")):
        lookup = dict(values.items())
        missing = [c for c in hierarchy.classes if c not in lookup]
        if missing:
            raise InputError(
                f"{name} has no entry for {len(missing)} classes of the hierarchy (first: {missing[0]!r})"
            )
        values = [lookup[c] for c in hierarchy.classes]
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name} must be numbers, one per class: {exc}") from None
    if arr.ndim == 2 and arr.shape[0] == 1:
        arr = arr[0]
    if arr.shape != (k_cls,):
        raise InputError(
            f"{name} must hold one number per class, shape ({k_cls},) (one object's values), "
            f"got shape {arr.shape}; for a matrix pass one row, e.g. {name}[0]"
        )
    return arr


def plot_hierarchy(hierarchy, values=None, ax=None, *, labels="auto", cmap="viridis", vmin=0.0, vmax=1.0,
                   value_label="mLPR", marked=None, node_size=None, max_classes=150, title=None):
    """Draw the hierarchy top-down, nodes coloured by one object's values.

    Roots are at the top, each class on the row of its depth (longest path from
    a root), laid out by :func:`hierarchy_layout`. Edges to the layout parent
    are solid; the extra parents of DAG classes are joined by dashed orange
    edges.

    Parameters
    ----------
    hierarchy : Hierarchy
        At most ``max_classes`` classes; draw a part of a larger one with
        ``hierarchy.subgraph(names)``.
    values : array-like of shape (K,), dict, pandas Series or one-row DataFrame, optional
        One value per class (column order, or keyed by class name; a Series of a
        default ``RangeIndex`` in column order, unless the classes are the integers
        0 .. n-1 in another order, which its labels then name), e.g. one object's mLPRs; shown
        by colour with a colorbar. NaN is drawn grey. None draws every node in
        one colour.
    ax : matplotlib Axes, optional
        Draw into these axes; default a new figure.
    labels : "auto", bool or dict
        Write class names beside the nodes; ``"auto"``: when at most 60 classes. A
        dict writes its text for the classes it names (e.g. GO term names,
        ``hmcpgm.ontology.read_ontology(path).names``) and the class name for the others.
    cmap : str or Colormap
        The colour map of ``values``.
    vmin, vmax : float
        Colour scale limits (probabilities by default).
    value_label : str
        Colorbar label.
    marked : array-like of 0/1 or bool, shape (K,), dict, Series or one-row DataFrame, optional
        Classes to circle in red, e.g. the object's true labels (a hollow ring
        around the node, ``ax.collections[1]``, labelled ``"marked"``); in column
        order or keyed by class name, as ``values``.
    node_size : float, optional
        Marker area; default shrinks with the number of classes.
    max_classes : int
        Refuse hierarchies larger than this (a drawing of thousands of classes
        is unreadable); raise it to draw anyway.
    title : str, optional
        Default: the hierarchy's kind and size.

    Returns
    -------
    matplotlib.axes.Axes
        ``ax.collections[0]`` holds the nodes (offsets ``= hierarchy_layout``
        positions; with ``values``, ``get_array()`` equals ``values``); the
        edges are LineCollections after it.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from hmcpgm import Hierarchy
    >>> h = Hierarchy.from_edges([("a", "b"), ("a", "c")])
    >>> ax = plot_hierarchy(h, [0.9, 0.7, 0.2])
    >>> ax.collections[0].get_array().tolist()
    [0.9, 0.7, 0.2]
    """
    plt = pyplot()
    import matplotlib
    from matplotlib.collections import LineCollection

    h = check_hierarchy(hierarchy)
    k_cls = h.n_classes
    if k_cls > max_classes:
        raise InputError(
            f"the hierarchy has {k_cls} classes, more than max_classes={max_classes}; a drawing "
            "that large is unreadable. Draw a part with hierarchy.subgraph(names) (the classes "
            "and their ancestors), or pass a larger max_classes"
        )
    v = None if values is None else _class_values(values, h)
    pos, layout_parent = hierarchy_layout(h)
    width = pos[:, 0].max() + 1 if k_cls else 1
    n_rows = int(-pos[:, 1].min()) + 1 if k_cls else 1
    ring = np.zeros(k_cls, dtype=bool)
    if marked is not None:  # aligned as values are: by class name, or in class order
        flags = _class_values(marked, h, "marked")
        if not np.isin(flags, (0, 1)).all():
            raise InputError(f"marked must hold one 0/1 flag per class, got {flags[~np.isin(flags, (0, 1))][0]}")
        ring = flags.astype(bool)
    cmap_obj = None
    if v is not None:
        try:
            cmap_obj = matplotlib.colormaps.get_cmap(cmap).with_extremes(bad="0.8")
        except ValueError as exc:  # before the figure: matplotlib's message, in one line
            raise InputError(f"cmap: {' '.join(str(exc).split())}"[:300]) from None
    if ax is None:  # after every check: a refused call leaves no figure open
        fig_w = min(max(5.0, 0.45 * width + 1.5), 24.0)
        _, ax = plt.subplots(figsize=(fig_w, max(2.5, 1.1 * n_rows + 0.8)), layout="constrained")
    if node_size is None:
        node_size = float(np.clip(6000 / max(k_cls, 1), 40, 250))

    style = dict(s=node_size, edgecolors="black", linewidths=0.6, zorder=2)
    if v is None:
        nodes = ax.scatter(pos[:, 0], pos[:, 1], c="tab:blue", **style)
    else:
        nodes = ax.scatter(pos[:, 0], pos[:, 1], c=np.ma.masked_invalid(v), cmap=cmap_obj, vmin=vmin,
                           vmax=vmax, plotnonfinite=True, **style)
        ax.figure.colorbar(nodes, ax=ax, label=value_label, shrink=0.9)
    if ring.any():  # a hollow red ring around each marked node, leaving its colour visible
        ax.scatter(pos[ring, 0], pos[ring, 1], s=(np.sqrt(node_size) + 7) ** 2, facecolors="none",
                   edgecolors="tab:red", linewidths=1.6, zorder=1.5, label="marked")
    edges = np.asarray(h.edge_indices).reshape(-1, 2)
    if len(edges):
        tree_edge = layout_parent[edges[:, 1]] == edges[:, 0]
        for mask, style in ((tree_edge, dict(colors="0.45", linewidths=1.0, linestyles="solid")),
                            (~tree_edge, dict(colors="tab:orange", linewidths=1.0, linestyles="dashed"))):
            if mask.any():
                segs = np.stack([pos[edges[mask, 0]], pos[edges[mask, 1]]], axis=1)
                ax.add_collection(LineCollection(segs, zorder=1, **style))

    text = {c: str(c) for c in h.classes}
    if isinstance(labels, dict):
        text.update({c: str(labels[c]) for c in h.classes if c in labels})
        labels = True
    if isinstance(labels, str) and labels == "auto":
        labels = k_cls <= 60
    if labels:
        long_names = max((len(s) for s in text.values()), default=0) > 4 or width > 25
        for k, c in enumerate(h.classes):
            ax.annotate(text[c], pos[k], xytext=(0, -(np.sqrt(node_size) / 2 + 5.5)), textcoords="offset points",
                        ha="center", va="top", fontsize=8 if k_cls <= 30 else 6, rotation=40 if long_names else 0,
                        rotation_mode="anchor" if long_names else "default", zorder=3,
                        bbox=dict(boxstyle="round,pad=0.1", fc="white", ec="none", alpha=0.75))
    ax.set_xlim(-0.7, width - 0.3)
    ax.set_ylim(pos[:, 1].min() - 0.7 if k_cls else -1, 0.4)
    ax.set_yticks(-np.arange(n_rows))
    ax.set_yticklabels([str(d) for d in range(n_rows)])
    ax.set_ylabel("depth")
    ax.set_xticks([])
    for side in ("top", "right", "bottom"):
        ax.spines[side].set_visible(False)
    n_multi = sum(len(p) > 1 for p in h.parent_indices)
    if title is None:
        title = f"{h.kind}: {k_cls} classes" + (f", {n_multi} with several parents (dashed)" if n_multi else "")
        if ring.any():
            title += "; red rings: marked classes"
    ax.set_title(title)
    return ax
