"""Local precision rates of one class and reliability (calibration) diagrams."""

import numpy as np

from .._arrays import binary_matrix, count, finite_array
from .._validation import aligned_matrices, class_matrix, is_frame, matrix_classes
from ..exceptions import InputError
from ..options import check_choice
from ._axes import new_axes, pyplot

__all__ = ["plot_lpr", "plot_reliability", "reliability_table"]


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
        First-stage scores (a DataFrame is aligned to the model's classes by name).
    labels : array of 0/1, shape (M, K)
        The true labels of the same objects.
    model_or_lpr : MLPR, ScoreModel, or callable
        A fitted :class:`hmcpgm.MLPR` or :class:`hmcpgm.likelihood.ScoreModel`
        (anything with ``lpr(scores_matrix)``), or a function mapping a 1-D array
        of this class's scores to LPR values.
    class_index : int or class name
        The class drawn: a column index, or a class name of the model.
    ax : matplotlib Axes, optional
        Draw into these axes; default a new figure.
    bins : int
        Histogram bins over the range of the class's scores.
    grid_size : int
        Points of the LPR curve.
    title : str, optional
        Default ``"Local precision rate, class <name>"``.

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
    plt = pyplot()
    classes = getattr(model_or_lpr, "classes_", None)
    if classes is None:
        classes = getattr(model_or_lpr, "classes", None)
    if classes is not None:  # DataFrames are aligned to the model's classes by name
        s = class_matrix(scores, list(classes), "scores")
        y = binary_matrix(class_matrix(labels, list(classes), "labels", allow_nan=True), "labels", list(classes))
    else:
        items = [(scores, "scores"), (labels, "labels")]
        s, y = aligned_matrices(items)
        s, y = finite_array(s, "scores"), binary_matrix(y, "labels", matrix_classes(items))
    if s.ndim != 2 or y.shape != s.shape:
        raise InputError(
            f"scores and labels must be (n_objects, n_classes) matrices of the same shape, got "
            f"{s.shape} and {y.shape}"
        )
    k_cls = s.shape[1]
    k = _class_column(class_index, classes, k_cls)
    bins = count(bins, "bins", minimum=1)
    grid_size = count(grid_size, "grid_size", minimum=2)
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


def reliability_table(probabilities, labels, n_bins=10, *, strategy="uniform"):
    """Mean predicted probability, observed positive rate and count per bin.

    The first two are scikit-learn's ``calibration_curve`` (same bins); the count
    of events per bin is added for the bars of :func:`plot_reliability`.

    Parameters
    ----------
    probabilities : array or DataFrame of float in [0, 1]
        Predicted probabilities (e.g. mLPRs), any shape.
    labels : array or DataFrame of 0/1, the same shape
        DataFrames are matched to each other by class name.
    n_bins : int
        The number of bins (empty bins are dropped from the result).
    strategy : {"uniform", "quantile"}
        ``"uniform"``: bins of equal width on [0, 1]; ``"quantile"``: bins with
        about equal numbers of events.

    Returns
    -------
    mean_predicted, observed_rate, counts : ndarrays over the non-empty bins
        The mean probability, the fraction of positives and the number of events in each bin.

    Examples
    --------
    >>> reliability_table([[0.1, 0.2, 0.9, 1.0]], [[0, 1, 1, 1]], n_bins=2)
    (array([0.15, 0.95]), array([0.5, 1. ]), array([2, 2]))
    """
    from sklearn.calibration import calibration_curve

    if is_frame(probabilities) or is_frame(labels):
        p, y = aligned_matrices([(probabilities, "probabilities"), (labels, "labels")])
    else:
        p, y = np.asarray(probabilities), np.asarray(labels)
    if p.shape != y.shape:
        raise InputError(f"probabilities has shape {p.shape} but labels has shape {y.shape}; they must match")
    if p.size == 0:
        raise InputError(f"probabilities has shape {p.shape}: no event to bin")
    p = finite_array(p, "probabilities").ravel()
    y = binary_matrix(y.reshape(len(y), -1) if y.ndim else y.reshape(1, 1), "labels").ravel()
    if p.size and (p.min() < 0 or p.max() > 1):
        raise InputError("probabilities must lie in [0, 1]")
    n_bins = count(n_bins, "n_bins", minimum=1)
    check_choice(strategy, "strategy", ("uniform", "quantile"))
    observed, mean_p = calibration_curve(y, p, n_bins=n_bins, strategy=strategy)
    # the bins of calibration_curve, to count the events in each
    if strategy == "uniform":
        edges = np.linspace(0.0, 1.0, n_bins + 1)
    else:
        edges = np.percentile(p, np.linspace(0, 1, n_bins + 1) * 100)
    counts = np.bincount(np.searchsorted(edges[1:-1], p), minlength=n_bins)
    return mean_p, observed, counts[counts > 0]


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
        The true labels of the same events.
    n_bins : int
        The number of bins (see :func:`reliability_table`).
    ax : matplotlib Axes, optional
        Draw into these axes; default a new figure.
    strategy : {"uniform", "quantile"}
        Bins of equal width, or of about equal numbers of events.
    label : str
        Legend label of the points.
    title : str
        The axes title.

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
    ax = new_axes(ax, (5.2, 5.0))
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
