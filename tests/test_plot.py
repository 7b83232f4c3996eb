"""Tests for hmcpgm.plot: the drawn artists hold the data they claim to show."""

import sys

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.collections  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402

from hmcpgm import (  # noqa: E402
    MLPR,
    Hierarchy,
    InputError,
    LabelError,
    LabelNetwork,  # noqa: E402
    hier_rank,
    hit_curve,
    naive_sort,
    pr_curve,
)
from hmcpgm.plot import (  # noqa: E402
    hierarchy_layout,
    plot_hierarchy,
    plot_hit_curves,
    plot_lpr,
    plot_pr_curves,
    plot_reliability,
    reliability_table,
)


@pytest.fixture(autouse=True)
def _draw_and_close_figures():
    yield
    for number in plt.get_fignums():  # rendering catches errors raised only at draw time
        plt.figure(number).canvas.draw()
    plt.close("all")


@pytest.fixture
def dag():
    # 0, 1 roots; 2 under 0; 3 under 0 and 1; 4 under 2 and 3; 5 under 4
    return Hierarchy.from_parents([None, None, 0, [0, 1], [2, 3], 4])


@pytest.fixture
def ranked():
    rng = np.random.default_rng(3)
    h = Hierarchy.from_parents([None, 0, 0, 1])
    labels = LabelNetwork(h, [0.6, 0.5, 0.4, 0.5]).sample(40, rng)
    values = np.clip(labels + rng.normal(0, 0.6, labels.shape), 0, 1)
    return h, values, labels


# ---------------------------------------------------------------------- hierarchy
def test_layout_rows_are_depths_and_parents_centre_over_children(dag):
    pos, lp = hierarchy_layout(dag)
    assert np.array_equal(pos[:, 1], -np.asarray(dag.depth))
    for k in range(dag.n_classes):
        if lp[k] >= 0:
            assert lp[k] in dag.parent_indices[k]
            assert dag.depth[lp[k]] == dag.depth[k] - 1
        kids = np.flatnonzero(lp == k)
        if kids.size:
            assert pos[k, 0] == pytest.approx((pos[kids, 0].min() + pos[kids, 0].max()) / 2)
    leaves = [k for k in range(dag.n_classes) if not np.any(lp == k)]
    assert sorted(pos[leaves, 0]) == list(range(len(leaves)))  # leaves take slots 0, 1, ...


def test_hierarchy_node_colours_follow_values(dag):
    values = np.array([0.9, 0.2, 0.7, 0.15, 0.1, 0.05])
    ax = plot_hierarchy(dag, values, cmap="viridis")
    nodes = ax.collections[0]
    assert np.allclose(nodes.get_array(), values)
    assert np.allclose(nodes.get_offsets(), hierarchy_layout(dag)[0])
    expected = matplotlib.colormaps["viridis"](values)
    ax.figure.canvas.draw()  # colours are mapped when drawn
    assert np.allclose(nodes.get_facecolors(), expected)
    # one solid edge per class with a parent, dashed edges for the extra parents
    segments = [c for c in ax.collections if isinstance(c, matplotlib.collections.LineCollection)]
    n_edges = sum(len(c.get_segments()) for c in segments)
    assert n_edges == len(dag.edges)
    assert len(segments[1].get_segments()) == sum(len(p) - 1 for p in dag.parent_indices if len(p))
    assert [t.get_text() for t in ax.texts] == [str(c) for c in dag.classes]
    assert len(ax.figure.axes) == 2  # the colorbar


def test_hierarchy_accepts_values_by_name_and_marks_classes():
    h = Hierarchy.from_edges([("a", "b"), ("a", "c")])
    ax = plot_hierarchy(h, {"c": 0.2, "a": 0.9, "b": 0.5}, marked=[1, 0, 1])
    nodes = ax.collections[0]
    assert np.allclose(nodes.get_array(), [0.9, 0.5, 0.2])
    rings = next(c for c in ax.collections if c.get_label() == "marked")
    pos, _ = hierarchy_layout(h)
    assert np.allclose(rings.get_offsets(), pos[[0, 2]])


def test_hierarchy_without_values_has_no_colorbar(dag):
    ax = plot_hierarchy(dag)
    assert ax.collections[0].get_array() is None
    assert len(ax.figure.axes) == 1


def test_marked_is_aligned_by_class_name_as_values_are():
    """audit47: values were aligned by class name and marked read by position, so the rings of a DataFrame row
    in another column order circled other classes; a dict or a one-row DataFrame was refused."""
    import pandas as pd

    h = Hierarchy.from_edges([("A", "B"), ("A", "C"), ("B", "D")])
    columns = ["D", "C", "B", "A"]
    truth = pd.DataFrame([[0, 0, 1, 1]], columns=columns)  # A and B
    positions = dict(zip(h.classes, map(tuple, hierarchy_layout(h)[0])))
    in_class_order = pd.Series([1, 1, 0, 0])  # a RangeIndex names no class (audit51: it was refused)
    for marked in (truth.iloc[0], truth, {"A": 1, "B": True, "C": 0, "D": 0}, [1, 1, 0, 0], in_class_order):
        ax = plot_hierarchy(h, pd.Series([0.1, 0.2, 0.6, 0.9], index=columns), marked=marked)
        ringed = {c for c, p in positions.items() if any(np.allclose(p, q) for q in ax.collections[1].get_offsets())}
        assert ringed == {"A", "B"}, marked
        plt.close(ax.figure)


def test_hierarchy_bad_input(dag):
    with pytest.raises(InputError, match=r"values must hold one number per class, shape \(6,\)"):
        plot_hierarchy(dag, [0.1, 0.2])
    with pytest.raises(InputError, match="no entry for 1 classes"):
        plot_hierarchy(Hierarchy.from_edges([("a", "b")]), {"a": 0.3})
    with pytest.raises(InputError, match="max_classes=3"):
        plot_hierarchy(dag, max_classes=3)
    with pytest.raises(InputError, match=r"marked must hold one number per class, shape \(6,\)"):
        plot_hierarchy(dag, marked=[1, 0])
    with pytest.raises(InputError, match="marked must hold one 0/1 flag per class, got 2"):
        plot_hierarchy(dag, marked=[1, 0, 2, 0, 0, 0])
    with pytest.raises(TypeError, match="hierarchy must be an hmcpgm.Hierarchy"):
        plot_hierarchy({"a": "b"})


# ---------------------------------------------------------------------- curves
def test_hit_curves_hold_hit_curve_data(ranked):
    h, values, labels = ranked
    curves = {"NaiveSort": (naive_sort(values, h), labels), "HierRank": (hier_rank(values, h), labels)}
    precomputed = hit_curve(np.arange(labels.size), labels)
    curves["by index"] = precomputed
    ax = plot_hit_curves(curves)
    lines = {line.get_label(): line for line in ax.get_lines()}
    assert set(lines) == {"NaiveSort", "HierRank", "by index", "ideal"}
    for name in ("NaiveSort", "HierRank"):
        assert np.array_equal(lines[name].get_ydata(), hit_curve(*curves[name]))
        assert np.array_equal(lines[name].get_xdata(), np.arange(1, labels.size + 1))
    assert np.array_equal(lines["by index"].get_ydata(), precomputed)
    r = np.arange(1, labels.size + 1)
    assert np.array_equal(lines["ideal"].get_ydata(), np.minimum(r, labels.sum()))


def test_hit_curves_max_rank(ranked):
    h, values, labels = ranked
    order = naive_sort(values, h)
    ax = plot_hit_curves({"a": (order, labels)}, max_rank=10)
    assert np.array_equal(ax.get_lines()[0].get_ydata(), hit_curve(order, labels)[:10])
    assert ax.get_lines()[1].get_xdata()[-1] == 10


def test_pr_curves_hold_pr_curve_data(ranked):
    h, values, labels = ranked
    order = hier_rank(values, h)
    precision, recall = pr_curve(order, labels)
    ax = plot_pr_curves({"HierRank": (order, labels), "given": (precision[::-1], recall[::-1])})
    first, second = ax.get_lines()
    assert np.allclose(first.get_xdata(), recall) and np.allclose(first.get_ydata(), precision)
    assert np.allclose(second.get_ydata(), precision[::-1])
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["HierRank", "given"]


def test_curves_bad_input():
    with pytest.raises(InputError, match="non-empty dict"):
        plot_hit_curves({})
    with pytest.raises(InputError, match="1-D hit curve"):
        plot_hit_curves({"x": np.zeros((2, 2))})
    with pytest.raises(InputError, match=r"curves\['x'\] must be \(order, labels\) or \(precision, recall\)"):
        plot_pr_curves({"x": np.zeros(4)})
    with pytest.raises(InputError, match="precision has shape"):
        plot_pr_curves({"x": (np.zeros(3), np.zeros(4))})


# ---------------------------------------------------------------------- LPR
@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(0)
    h = Hierarchy.from_parents([None, 0])
    labels = LabelNetwork(h, [0.6, 0.5]).sample(1500, rng)
    scores = rng.normal(loc=np.where(labels == 1, [1.5, -1.5], [0.0, 0.0]))  # class 1 inverted
    return h, scores, labels, MLPR(hierarchy=h).fit(scores, labels)


def test_lpr_curve_is_the_models_lpr_and_bars_count_scores(fitted):
    h, scores, labels, model = fitted
    ax = plot_lpr(scores, labels, model, 1, bins=12)
    line = ax.right_ax.get_lines()[0]
    x = line.get_xdata()
    grid_matrix = np.repeat(x[:, None], 2, axis=1)
    assert np.allclose(line.get_ydata(), model.lpr(grid_matrix)[:, 1])
    assert x.min() == scores[:, 1].min() and x.max() == scores[:, 1].max()
    # inverted class: positives score low, so the fitted LPR falls with the score
    assert line.get_ydata()[0] > 0.8 > 0.2 > line.get_ydata()[-1]
    edges = np.linspace(scores[:, 1].min(), scores[:, 1].max(), 13)
    neg, _ = np.histogram(scores[labels[:, 1] == 0, 1], edges)
    pos, _ = np.histogram(scores[labels[:, 1] == 1, 1], edges)
    heights = np.array([p.get_height() for p in ax.patches])
    assert np.array_equal(heights, np.concatenate([neg, pos]))  # stacked: negatives, then positives
    observed = ax.right_ax.get_lines()[1]
    keep = (neg + pos) > 0
    assert np.allclose(observed.get_ydata(), pos[keep] / (neg + pos)[keep])


def test_lpr_by_class_name_and_score_model(fitted):
    h, scores, labels, model = fitted
    a = plot_lpr(scores, labels, model, h.classes[0]).right_ax.get_lines()[0].get_ydata()
    b = plot_lpr(scores, labels, model.score_model_, 0).right_ax.get_lines()[0].get_ydata()
    assert np.allclose(a, b)


def test_lpr_bad_input(fitted):
    h, scores, labels, model = fitted
    with pytest.raises(InputError, match=r"class_index must be a column index in \[0, 1\]"):
        plot_lpr(scores, labels, model, 5)
    with pytest.raises(InputError, match="labels has 1 columns but there are 2 classes"):
        plot_lpr(scores, labels[:, :1], model, 0)
    with pytest.raises(InputError, match="model_or_lpr must be a fitted MLPR"):
        plot_lpr(scores, labels, 3.0, 0)
    with pytest.raises(LabelError, match="labels must hold only 0 and 1"):
        plot_lpr(scores, labels * 2, model, 0)


# ---------------------------------------------------------------------- reliability
def _hand_binned(p, y, n_bins):
    out = []
    for b in range(n_bins):
        lo, hi = b / n_bins, (b + 1) / n_bins
        inside = [(pi, yi) for pi, yi in zip(p, y) if lo <= pi < hi or (b == n_bins - 1 and pi == 1.0)]
        if inside:
            ps, ys = zip(*inside)
            out.append((sum(ps) / len(ps), sum(ys) / len(ys), len(ps)))
    return np.array(out)


def test_reliability_points_equal_hand_binning():
    rng = np.random.default_rng(1)
    p = rng.random((60, 3)) ** 2
    p[0, 0], p[1, 1] = 1.0, 0.0  # both ends of the range
    y = (rng.random((60, 3)) < p).astype(int)
    expected = _hand_binned(p.ravel().tolist(), y.ravel().tolist(), 7)
    ax = plot_reliability(p, y, n_bins=7, label="model")
    line = next(line for line in ax.get_lines() if line.get_label() == "model")
    assert np.allclose(line.get_xdata(), expected[:, 0])
    assert np.allclose(line.get_ydata(), expected[:, 1])
    heights = [bar.get_height() for bar in ax.right_ax.patches]
    assert np.array_equal(heights, expected[:, 2])
    assert sum(heights) == p.size


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_reliability_table_is_scikit_learns_calibration_curve(strategy):
    from sklearn.calibration import calibration_curve

    rng = np.random.default_rng(3)
    p = np.round(rng.random((80, 4)), 1)  # many values on the bin edges
    y = (rng.random((80, 4)) < p).astype(int)
    mean_p, rate, counts = reliability_table(p, y, 10, strategy=strategy)
    ref_rate, ref_mean = calibration_curve(y.ravel(), p.ravel(), n_bins=10, strategy=strategy)
    np.testing.assert_array_equal(mean_p, ref_mean)
    np.testing.assert_array_equal(rate, ref_rate)
    assert counts.sum() == p.size and len(counts) == len(ref_rate)


def test_reliability_dataframes_are_matched_by_name():
    import pandas as pd

    rng = np.random.default_rng(4)
    p = rng.random((50, 3))
    y = (rng.random((50, 3)) < p).astype(int)
    pf = pd.DataFrame(p, columns=["a", "b", "c"])
    yf = pd.DataFrame(y, columns=["a", "b", "c"])[["c", "a", "b"]]
    for got, ref in zip(reliability_table(pf, yf, 5), reliability_table(p, y, 5)):
        np.testing.assert_array_equal(got, ref)
    with pytest.raises(InputError, match="cannot be matched by class name"):
        reliability_table(pf, y)


def test_reliability_quantile_bins_hold_equal_counts():
    p = np.linspace(0.01, 0.99, 100)
    y = (np.arange(100) % 2).astype(int)
    mean_p, rate, counts = reliability_table(p, y, 4, strategy="quantile")
    assert counts.tolist() == [25, 25, 25, 25]
    assert np.allclose(mean_p, [p[i * 25:(i + 1) * 25].mean() for i in range(4)])


def test_reliability_bad_input():
    with pytest.raises(InputError, match=r"lie in \[0, 1\]"):
        reliability_table([0.5, 1.5], [0, 1])
    with pytest.raises(InputError, match=r"probabilities has shape \(2,\) but labels has shape \(3,\)"):
        reliability_table([0.5, 0.5], [0, 1, 1])
    with pytest.raises(InputError, match="n_bins must be an integer >= 1"):
        reliability_table([0.5], [1], n_bins=0)
    with pytest.raises(InputError, match="strategy must be"):
        reliability_table([0.5], [1], strategy="equal")
    with pytest.raises(LabelError, match="labels must hold only 0 and 1"):
        reliability_table([0.5], [2])


# ---------------------------------------------------------------------- optional dependency
@pytest.mark.parametrize(
    "call",
    [
        lambda: plot_hierarchy(Hierarchy.from_parents([None, 0])),
        lambda: plot_hit_curves({"a": np.array([1, 2])}),
        lambda: plot_pr_curves({"a": (np.array([1.0]), np.array([1.0]))}),
        lambda: plot_reliability(np.array([[0.5]]), np.array([[1]])),
        lambda: plot_lpr(np.zeros((2, 1)), np.array([[0], [1]]), lambda s: s * 0 + 0.5, 0),
    ],
)
def test_missing_matplotlib_names_the_extra(monkeypatch, call):
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ImportError) as info:
        call()
    assert 'pip install "hmcpgm[plot]"' in str(info.value).splitlines()
