"""Figures for teaching and checking: hierarchies, hit and PR curves, LPRs, calibration.

matplotlib is an optional extra (``pip install "hmcpgm[plot]"``); it is imported
inside each function, so ``import hmcpgm.plot`` works without it and a call
without it raises an ImportError that says what to install.

Every function draws on ``ax`` (a new figure when omitted) and returns the
Axes, so figures can be combined and restyled with plain matplotlib.
"""

from collections.abc import Mapping

import numpy as np

from ._validation import check_hierarchy
from .exceptions import InputError

__all__ = [
    "hierarchy_layout",
    "plot_hierarchy",
    "plot_hit_curves",
    "plot_pr_curves",
    "plot_lpr",
    "plot_reliability",
    "reliability_table",
]

_INSTALL = 'pip install "hmcpgm[plot]"'


def _pyplot():
    """matplotlib.pyplot, or an ImportError naming the extra to install."""
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError(
            "hmcpgm's plotting functions need matplotlib, an optional dependency. Install it with:\n"
            + _INSTALL
        ) from None
    return plt


def _axes(ax, figsize):
    plt = _pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax


# ---------------------------------------------------------------------- hierarchy
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


def _class_values(values, hierarchy):
    """Values per class as a (K,) float array (NaN allowed: drawn grey)."""
    k_cls = hierarchy.n_classes
    if isinstance(values, Mapping) or (hasattr(values, "index") and hasattr(values, "reindex")):
        lookup = dict(values.items())
        missing = [c for c in hierarchy.classes if c not in lookup]
        if missing:
            raise InputError(
                f"values has no entry for {len(missing)} classes of the hierarchy (first: {missing[0]!r})"
            )
        values = [lookup[c] for c in hierarchy.classes]
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InputError(f"values must be numbers, one per class: {exc}") from None
    if arr.ndim == 2 and arr.shape[0] == 1:
        arr = arr[0]
    if arr.shape != (k_cls,):
        raise InputError(
            f"values must hold one number per class, shape ({k_cls},) (one object's mLPRs), "
            f"got shape {arr.shape}; for a matrix pass one row, e.g. mlpr[0]"
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
    values : array-like of shape (K,), dict or pandas Series, optional
        One value per class (column order, or keyed by class name), e.g. one
        object's mLPRs; shown by colour with a colorbar. NaN is drawn grey.
        None draws every node in one colour.
    ax : matplotlib Axes, optional
    labels : "auto", bool
        Write class names beside the nodes; ``"auto"``: when at most 60 classes.
    cmap : str or Colormap
    vmin, vmax : float
        Colour scale limits (probabilities by default).
    value_label : str
        Colorbar label.
    marked : array-like of 0/1 or bool, shape (K,), optional
        Classes to circle in red, e.g. the object's true labels (a hollow ring
        around the node, ``ax.collections[1]``, labelled ``"marked"``).
    node_size : float, optional
        Marker area; default shrinks with the number of classes.
    max_classes : int
        Refuse hierarchies larger than this (a drawing of thousands of classes
        is unreadable); raise it to draw anyway.
    title : str, optional

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
    plt = _pyplot()
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
    if ax is None:
        fig_w = min(max(5.0, 0.45 * width + 1.5), 24.0)
        _, ax = plt.subplots(figsize=(fig_w, max(2.5, 1.1 * n_rows + 0.8)), layout="constrained")
    if node_size is None:
        node_size = float(np.clip(6000 / max(k_cls, 1), 40, 250))

    ring = np.zeros(k_cls, dtype=bool)
    if marked is not None:
        ring = np.asarray(marked).astype(bool)
        if ring.shape != (k_cls,):
            raise InputError(f"marked must hold one 0/1 flag per class, shape ({k_cls},), got shape {ring.shape}")
    style = dict(s=node_size, edgecolors="black", linewidths=0.6, zorder=2)
    if v is None:
        nodes = ax.scatter(pos[:, 0], pos[:, 1], c="tab:blue", **style)
    else:
        cmap_obj = matplotlib.colormaps.get_cmap(cmap).with_extremes(bad="0.8")
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

    if labels == "auto":
        labels = k_cls <= 60
    if labels:
        long_names = max((len(str(c)) for c in h.classes), default=0) > 4 or width > 25
        for k, c in enumerate(h.classes):
            ax.annotate(str(c), pos[k], xytext=(0, -(np.sqrt(node_size) / 2 + 5.5)), textcoords="offset points", ha="center",
                        va="top", fontsize=8 if k_cls <= 30 else 6, rotation=40 if long_names else 0,
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


# ---------------------------------------------------------------------- curves
def _is_pair_with_labels(item):
    """True for ``(order, labels)``: a 2-sequence whose second entry is a 2-D matrix."""
    if isinstance(item, tuple | list) and len(item) == 2:
        return np.ndim(item[1]) == 2
    return False


def plot_hit_curves(curves, ax=None, *, max_rank=None, ideal=True, title="Hit curves"):
    """Several rankings' hit curves (true positives among the top r events) on one axes.

    Parameters
    ----------
    curves : dict
        Method name -> ``(order, labels)`` (a ranking of the flat events and the
        (M, K) true labels; the curve is :func:`hmcpgm.metrics.hit_curve`) or a
        precomputed 1-D hit curve.
    ax : matplotlib Axes, optional
    max_rank : int, optional
        Draw only the top ``max_rank`` events.
    ideal : bool
        Also draw the best possible curve ``min(r, P)`` (dotted), from the labels
        of the first ``(order, labels)`` entry.
    title : str

    Returns
    -------
    matplotlib.axes.Axes
        One line per method, labelled by its name, with y data the hit curve.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> labels = np.array([[1, 0], [1, 1]])
    >>> ax = plot_hit_curves({"by index": ([0, 1, 2, 3], labels)}, ideal=False)
    >>> ax.get_lines()[0].get_ydata().tolist()
    [1, 1, 2, 3]
    """
    from .metrics import hit_curve

    if not isinstance(curves, Mapping) or not curves:
        raise InputError(f"curves must be a non-empty dict name -> (order, labels) or hit curve, got {curves!r:.80}")
    ax = _axes(ax, (6, 4.2))
    n_pos = None
    for name, item in curves.items():
        if _is_pair_with_labels(item):
            hits = hit_curve(*item)
            if n_pos is None:
                n_pos = int(np.sum(item[1]))
        else:
            hits = np.asarray(item)
            if hits.ndim != 1:
                raise InputError(
                    f"curves[{name!r}] must be (order, labels) or a 1-D hit curve, got shape {hits.shape}"
                )
        if max_rank is not None:
            hits = hits[:max_rank]
        ax.plot(np.arange(1, hits.size + 1), hits, label=str(name), lw=1.6)
    if ideal and n_pos is not None:
        r = np.arange(1, (max_rank or max(len(line.get_xdata()) for line in ax.get_lines())) + 1)
        ax.plot(r, np.minimum(r, n_pos), ls=":", color="0.3", label="ideal", lw=1.2)
    ax.set_xlabel("rank r (events labelled positive)")
    ax.set_ylabel("true positives among the top r")
    ax.set_title(title)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return ax


def plot_pr_curves(curves, ax=None, *, title="Precision-recall curves"):
    """Several rankings' precision-recall curves on one axes.

    Parameters
    ----------
    curves : dict
        Method name -> ``(order, labels)`` (the curve is
        :func:`hmcpgm.metrics.pr_curve`) or a precomputed ``(precision, recall)``
        pair of 1-D arrays.
    ax : matplotlib Axes, optional
    title : str

    Returns
    -------
    matplotlib.axes.Axes
        One line per method: x data recall, y data precision.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> ax = plot_pr_curves({"m": ([2, 0, 1, 3], np.array([[1, 0], [0, 1]]))})
    >>> ax.get_lines()[0].get_ydata().tolist()   # precision at r = 1..4
    [0.0, 0.5, 0.3333333333333333, 0.5]
    """
    from .metrics import pr_curve

    if not isinstance(curves, Mapping) or not curves:
        raise InputError(
            f"curves must be a non-empty dict name -> (order, labels) or (precision, recall), got {curves!r:.80}"
        )
    ax = _axes(ax, (5.5, 4.5))
    for name, item in curves.items():
        if _is_pair_with_labels(item):
            precision, recall = pr_curve(*item)
        elif isinstance(item, tuple | list) and len(item) == 2 and np.ndim(item[0]) == np.ndim(item[1]) == 1:
            precision, recall = (np.asarray(a, dtype=float) for a in item)
            if precision.shape != recall.shape:
                raise InputError(
                    f"curves[{name!r}]: precision has shape {precision.shape} but recall {recall.shape}"
                )
        else:
            raise InputError(
                f"curves[{name!r}] must be (order, labels) or (precision, recall), got {type(item).__name__}"
            )
        ax.plot(recall, precision, label=str(name), lw=1.6)
    ax.set_xlabel("recall")
    ax.set_ylabel("precision")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.set_title(title)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return ax


# ---------------------------------------------------------------------- LPR
def _class_column(class_index, classes, k_cls):
    if isinstance(class_index, int | np.integer) and not isinstance(class_index, bool):
        if 0 <= class_index < k_cls:
            return int(class_index)
    if classes is not None and class_index in classes:
        return list(classes).index(class_index)
    raise InputError(
        f"class_index must be a column index in [0, {k_cls - 1}] or a class name of the model, "
        f"got {class_index!r}"
    )


def plot_lpr(scores, labels, model_or_lpr, class_index, ax=None, *, bins=30, grid_size=200, title=None):
    """A class's fitted local precision rate over the histogram of its scores.

    Bars: the class's scores, negatives and positives stacked (left axis).
    Curve: the fitted ``LPR_k(s) = P(Y_k = 1 | S_k = s)`` and, as points, the
    observed fraction of positives in each histogram bin (right axis, 0 to 1).
    When positives score lower than negatives (an inverted class) the LPR
    decreases.

    Parameters
    ----------
    scores : array of shape (M, K)
    labels : array of 0/1, shape (M, K)
    model_or_lpr : MLPR, ScoreModel, or callable
        A fitted :class:`hmcpgm.MLPR` or :class:`hmcpgm.likelihood.ScoreModel`
        (anything with ``lpr(scores_matrix)``), or a function mapping a 1-D array
        of this class's scores to LPR values.
    class_index : int or class name
    ax : matplotlib Axes, optional
    bins : int
        Histogram bins over the range of the class's scores.
    grid_size : int
        Points of the LPR curve.
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes
        The histogram axes; ``ax.right_ax`` holds the LPR curve (a line labelled
        ``"fitted LPR"``) and the observed fractions (labelled ``"observed"``).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, size=(200, 1))
    >>> s = rng.normal(loc=2.0 * y)
    >>> lpr = lambda x: 1 / (1 + np.exp(2 - 2 * x))   # the true LPR of this mixture
    >>> ax = plot_lpr(s, y, lpr, 0)
    >>> line = ax.right_ax.get_lines()[0]
    >>> np.allclose(line.get_ydata(), lpr(line.get_xdata()))
    True
    """
    plt = _pyplot()
    s = np.asarray(scores, dtype=float)
    y = np.asarray(labels)
    if s.ndim != 2 or y.shape != s.shape:
        raise InputError(
            f"scores and labels must be (n_objects, n_classes) matrices of the same shape, got "
            f"{s.shape} and {y.shape}"
        )
    if not np.all(np.isfinite(s)):
        raise InputError("scores must be finite")
    if not np.all((y == 0) | (y == 1)):
        raise InputError("labels must hold only 0 and 1")
    k_cls = s.shape[1]
    classes = getattr(model_or_lpr, "classes_", None) or getattr(model_or_lpr, "classes", None)
    k = _class_column(class_index, classes, k_cls)
    x, yk = s[:, k], y[:, k].astype(bool)
    lo, hi = float(x.min()), float(x.max())
    if hi <= lo:
        hi = lo + 1.0
    grid = np.linspace(lo, hi, grid_size)
    if hasattr(model_or_lpr, "lpr"):
        lpr = np.asarray(model_or_lpr.lpr(np.repeat(grid[:, None], k_cls, axis=1)))[:, k]
    elif callable(model_or_lpr):
        lpr = np.asarray(model_or_lpr(grid), dtype=float)
    else:
        raise InputError(
            "model_or_lpr must be a fitted MLPR or ScoreModel (with an lpr method) or a function "
            f"of the scores, got {type(model_or_lpr).__name__}"
        )
    if lpr.shape != grid.shape:
        raise InputError(f"the LPR function returned shape {lpr.shape} for {grid.size} scores")

    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 4.2), layout="constrained")
    edges = np.linspace(lo, hi, bins + 1)
    ax.hist([x[~yk], x[yk]], bins=edges, stacked=True, color=["0.75", "tab:blue"],
            label=["negatives", "positives"], alpha=0.85)
    ax.set_xlabel(f"score of class {classes[k] if classes is not None else k}")
    ax.set_ylabel("objects")
    right = ax.twinx()
    right.plot(grid, lpr, color="tab:red", lw=2, label="fitted LPR")
    n_all, _ = np.histogram(x, edges)
    n_pos, _ = np.histogram(x[yk], edges)
    centre = (edges[:-1] + edges[1:]) / 2
    seen = n_all > 0
    right.plot(centre[seen], n_pos[seen] / n_all[seen], "o", color="black", ms=3.5,
               label="observed (positives / objects per bin)")
    right.set_ylim(-0.02, 1.02)
    right.set_ylabel("P(Y = 1 | score)")
    handles = ax.get_legend_handles_labels()
    more = right.get_legend_handles_labels()
    right.legend(handles[0] + more[0], handles[1] + more[1], fontsize=8, loc="upper center",
                 bbox_to_anchor=(0.5, -0.16), ncol=2, frameon=False)
    ax.right_ax = right
    if title is None:
        title = f"Local precision rate, class {classes[k] if classes is not None else k}"
    ax.set_title(title)
    return ax


# ---------------------------------------------------------------------- calibration
def reliability_table(probabilities, labels, n_bins=10, *, strategy="uniform"):
    """Mean predicted probability, observed positive rate and count per bin.

    Parameters
    ----------
    probabilities : array of float in [0, 1]
        Predicted probabilities (e.g. mLPRs), any shape.
    labels : array of 0/1, same shape
    n_bins : int
    strategy : {"uniform", "quantile"}
        ``"uniform"``: bins of equal width on [0, 1] (the last one closed);
        ``"quantile"``: bins with about equal numbers of events.

    Returns
    -------
    mean_predicted, observed_rate, counts : ndarrays over the non-empty bins

    Examples
    --------
    >>> reliability_table([0.1, 0.2, 0.9, 1.0], [0, 1, 1, 1], n_bins=2)
    (array([0.15, 0.95]), array([0.5, 1. ]), array([2, 2]))
    """
    p = np.asarray(probabilities, dtype=float).ravel()
    y = np.asarray(labels, dtype=float).ravel()
    if p.shape != y.shape:
        raise InputError(
            f"probabilities has {p.size} entries but labels has {y.size}; they must describe the same events"
        )
    if not np.all(np.isfinite(p)) or p.size and (p.min() < 0 or p.max() > 1):
        raise InputError("probabilities must be finite and lie in [0, 1]")
    if not np.all((y == 0) | (y == 1)):
        raise InputError("labels must hold only 0 and 1")
    if isinstance(n_bins, bool) or not isinstance(n_bins, int | np.integer) or n_bins < 1:
        raise InputError(f"n_bins must be a positive integer, got {n_bins!r}")
    if strategy == "uniform":
        edges = np.linspace(0.0, 1.0, n_bins + 1)
    elif strategy == "quantile":
        edges = np.unique(np.quantile(p, np.linspace(0, 1, n_bins + 1)))
    else:
        raise InputError(f"strategy must be 'uniform' or 'quantile', got {strategy!r}")
    idx = np.clip(np.searchsorted(edges, p, side="right") - 1, 0, len(edges) - 2)
    counts = np.bincount(idx, minlength=len(edges) - 1)
    sum_p = np.bincount(idx, weights=p, minlength=len(edges) - 1)
    sum_y = np.bincount(idx, weights=y, minlength=len(edges) - 1)
    keep = counts > 0
    return sum_p[keep] / counts[keep], sum_y[keep] / counts[keep], counts[keep]


def plot_reliability(mlpr, labels, n_bins=10, ax=None, *, strategy="uniform", label="mLPR",
                     title="Reliability diagram"):
    """Reliability (calibration) diagram: mean predicted probability vs observed positive rate.

    A calibrated model's points lie on the diagonal. Each point is one bin of
    events (see :func:`reliability_table`); the grey bars in the lower third show
    how many events fall in each bin (log scale, right axis).

    Parameters
    ----------
    mlpr : array of float in [0, 1], shape (M, K)
        Predicted probabilities (e.g. ``MLPR.predict_proba``), or a fitted
        :class:`hmcpgm.MLPR` is NOT accepted here: pass its predictions.
    labels : array of 0/1, shape (M, K)
    n_bins : int
    ax : matplotlib Axes, optional
    strategy : {"uniform", "quantile"}
    label : str
        Legend label of the points.
    title : str

    Returns
    -------
    matplotlib.axes.Axes
        The line labelled ``label`` has x data the mean predicted probability and
        y data the observed rate per non-empty bin; ``ax.right_ax`` holds the
        count bars.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> ax = plot_reliability(np.array([[0.1, 0.2], [0.9, 1.0]]), np.array([[0, 1], [1, 1]]), n_bins=2)
    >>> ax.get_lines()[1].get_ydata().tolist()
    [0.5, 1.0]
    """
    mean_p, rate, counts = reliability_table(mlpr, labels, n_bins, strategy=strategy)
    ax = _axes(ax, (5.2, 5.0))
    right = ax.twinx()
    width = 0.6 / max(len(counts), 1)
    right.bar(mean_p, counts, width=width, color="0.88", edgecolor="0.65", zorder=0, label="events per bin")
    right.set_yscale("log")
    right.set_ylim(0.8, max(counts.max(), 2) ** 3)  # bars fill the lower third of the axes
    right.set_yticks(10.0 ** np.arange(int(np.log10(counts.max())) + 1))  # no ticks above the bars
    right.minorticks_off()
    right.set_ylabel("events per bin (log)", loc="bottom")
    ax.set_zorder(right.get_zorder() + 1)  # points above the bars
    ax.patch.set_visible(False)
    ax.plot([0, 1], [0, 1], ls="--", color="0.4", lw=1, label="perfect calibration")
    ax.plot(mean_p, rate, "o-", color="tab:red", lw=1.6, ms=5, label=label)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("mean predicted probability in bin")
    ax.set_ylabel("observed fraction of positives")
    handles = ax.get_legend_handles_labels()
    more = right.get_legend_handles_labels()
    ax.legend(handles[0] + more[0], handles[1] + more[1], fontsize=8, loc="upper left")
    ax.grid(alpha=0.3)
    ax.set_title(title)
    ax.right_ax = right
    return ax
