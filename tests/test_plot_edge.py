"""Plots on tiny and odd inputs: no crash, one-line errors, every figure closed."""

import numpy as np
import pandas as pd
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from hmcpgm import Hierarchy, InputError  # noqa: E402
from hmcpgm.plot import (  # noqa: E402
    hierarchy_layout,
    plot_hierarchy,
    plot_hit_curves,
    plot_pr_curves,
    plot_reliability,
    reliability_table,
)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _dag():
    # column order not topological; "d" has three parents at different depths
    return Hierarchy.from_edges([("c", "d"), ("a", "b"), ("b", "d"), ("a", "c"), ("x", "d")],
                                classes=["d", "c", "x", "b", "a"])


@pytest.mark.parametrize("h", [
    Hierarchy.from_edges([], classes=["solo"]),
    Hierarchy.from_edges([], classes=range(40)),
    Hierarchy.from_parents([None] + list(range(99))),
    Hierarchy.from_edges([(("a", 1), ("b", 2)), (("a", 1), "GO:1 cell, cycle")]),
    _dag(),
])
def test_layout_puts_every_class_below_its_parents_and_plots(h):
    pos, layout_parent = hierarchy_layout(h)
    assert pos.shape == (h.n_classes, 2)
    for p, c in h.edge_indices:
        assert pos[c, 1] < pos[p, 1]
    for k, p in enumerate(layout_parent):
        assert (p == -1) == (len(h.parent_indices[k]) == 0)
    ax = plot_hierarchy(h, np.linspace(0, 1, h.n_classes))
    assert np.allclose(ax.collections[0].get_offsets(), pos)


def test_values_by_name_in_a_series_or_one_row_dataframe():
    h = _dag()
    by_name = {"a": 0.9, "b": 0.1, "c": 0.5, "d": np.nan, "x": 0.3}
    expect = [by_name[c] for c in h.classes]
    for values in (pd.Series(by_name), pd.DataFrame([by_name]), pd.DataFrame([by_name], index=["gene7"])):
        got = plot_hierarchy(h, values).collections[0].get_array()
        assert np.allclose(np.ma.filled(got, np.nan), expect, equal_nan=True)
    with pytest.raises(InputError, match="one row"):
        plot_hierarchy(h, pd.DataFrame([by_name, by_name]))


def test_reliability_counts_agree_with_the_binned_means():
    rng = np.random.default_rng(0)
    p = rng.random(400) ** 2
    p[:30] = 0.5  # on a bin edge
    y = (rng.random(400) < p).astype(int)
    for strategy in ("uniform", "quantile"):
        for n_bins in (1, 4, 10):
            mean_p, rate, counts = reliability_table(p, y, n_bins, strategy=strategy)
            assert counts.sum() == p.size and len(counts) == len(mean_p) == len(rate)
            assert np.isclose((counts * mean_p).sum(), p.sum())
            assert np.isclose((counts * rate).sum(), y.sum())


@pytest.mark.parametrize("p, y", [([], []), (np.empty((0, 3)), np.empty((0, 3)))])
def test_reliability_of_no_event_is_refused_in_one_line(p, y):
    with pytest.raises(InputError, match="no event") as info:
        reliability_table(p, y)
    assert "\n" not in str(info.value)
    with pytest.raises(InputError, match="no event"):
        plot_reliability(np.asarray(p), np.asarray(y))


def test_reliability_of_one_event_and_of_one_label_value():
    ax = plot_reliability(np.array([[0.5]]), np.array([[1]]))
    assert ax.get_lines()[1].get_ydata().tolist() == [1.0]
    assert reliability_table([0.1, 0.9], [0, 0])[1].tolist() == [0.0, 0.0]


@pytest.mark.parametrize("bad_call", [
    lambda: plot_hit_curves({"ok": [0, 1, 2], "bad": [[1, 2], [3, 4]]}),
    lambda: plot_pr_curves({"bad": ([0.5, 1.0], [0.5])}),
    lambda: plot_hierarchy(_dag(), marked=[1, 0]),
    lambda: plot_reliability(np.array([[0.5]]), np.array([[2]])),
])
def test_a_refused_call_leaves_no_figure_open(bad_call):
    plt.close("all")
    with pytest.raises(ValueError):  # InputError or LabelError, one line
        bad_call()
    assert plt.get_fignums() == []


def test_bad_plot_options_are_one_line_and_leave_no_figure():
    """An unknown cmap raised matplotlib's error with the figure open; bins=0 drew an empty histogram;
    max_rank=-2 dropped the last two events."""
    from hmcpgm.plot import plot_hierarchy, plot_hit_curves, plot_lpr

    plt.close("all")
    h = Hierarchy.from_edges([("a", "b"), ("a", "c"), ("b", "d")])
    with pytest.raises(InputError, match="^cmap: 'nope' is not a valid value for cmap"):
        plot_hierarchy(h, [0.1] * 4, cmap="nope")
    with pytest.raises(InputError, match="max_rank must be an integer >= 1, got -2"):
        plot_hit_curves({"x": ([0, 1, 2, 3], np.array([[1, 0], [1, 1]]))}, max_rank=-2)
    s, y = np.array([[0.1], [0.5], [0.9]]), np.array([[0], [1], [1]])
    with pytest.raises(InputError, match="bins must be an integer >= 1, got 0"):
        plot_lpr(s, y, lambda g: np.clip(g, 0, 1), 0, bins=0)
    assert not plt.get_fignums()
