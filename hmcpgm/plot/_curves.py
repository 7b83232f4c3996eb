"""Hit curves and precision-recall curves of rankings."""

from collections.abc import Mapping

import numpy as np

from .._arrays import count
from ..exceptions import InputError
from ._axes import new_axes

__all__ = ["plot_hit_curves", "plot_pr_curves"]


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
        Draw into these axes; default a new figure.
    max_rank : int, optional
        Draw only the top ``max_rank`` events.
    ideal : bool
        Also draw the best possible curve ``min(r, P)`` (dotted), from the labels
        of the first ``(order, labels)`` entry.
    title : str
        The axes title.

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
    from ..metrics import hit_curve

    if max_rank is not None:
        max_rank = count(max_rank, "max_rank", minimum=1)  # a negative one cut events off the end
    if not isinstance(curves, Mapping) or not curves:
        raise InputError(f"curves must be a non-empty dict name -> (order, labels) or hit curve, got {curves!r:.80}")
    n_pos, lines = None, []
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
        lines.append((name, hits))
    ax = new_axes(ax, (6, 4.2))  # after every check: a refused call leaves no figure open
    for name, hits in lines:
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
        Draw into these axes; default a new figure.
    title : str
        The axes title.

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
    from ..metrics import pr_curve

    if not isinstance(curves, Mapping) or not curves:
        raise InputError(
            f"curves must be a non-empty dict name -> (order, labels) or (precision, recall), got {curves!r:.80}"
        )
    lines = []
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
        lines.append((name, precision, recall))
    ax = new_axes(ax, (5.5, 4.5))  # after every check: a refused call leaves no figure open
    for name, precision, recall in lines:
        ax.plot(recall, precision, label=str(name), lw=1.6)
    ax.set_xlabel("recall")
    ax.set_ylabel("precision")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.set_title(title)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return ax
