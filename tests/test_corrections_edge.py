"""The classic corrections (hmcpgm.corrections) on inputs the benchmark data does not hold: frames whose rows
or columns do not line up, bad option combinations, odd class names, and invariants on every kind of hierarchy."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import hierarchies, value_matrices

from hmcpgm import Hierarchy
from hmcpgm.corrections import (
    CORRECTIONS,
    HierarchicalCorrection,
    add_root,
    fit_calibration,
    gpav,
    htd,
    mcm,
    obozinski,
    resolve_options,
    tpr_dag,
)
from hmcpgm.exceptions import InputError

CHAIN = Hierarchy.from_edges([(0, 1)], classes=[1, 0])  # int names, the child first


def one_line(exc):
    return len(str(exc.value).splitlines()) == 1


# --------------------------------------------------------------------------- gpav's weights
def test_gpav_refuses_a_weight_frame_of_another_shape():
    # a one-row weight frame beside three rows of values was read past its end (no bounds checks in the
    # compiled kernels): rows 1 and 2 were pooled with whatever memory followed
    values = np.array([[0.6, 0.3]] * 3)  # CHAIN's column order: child 1, parent 0
    weights = pd.DataFrame([[2.0, 1.0]], columns=[0, 1])
    with pytest.raises(InputError, match=r"weights has 1 rows but values has 3") as exc:
        gpav(values, CHAIN, weights=weights)
    assert one_line(exc)
    with pytest.raises(InputError, match=r"weights has 4 rows but values has 3"):
        gpav(values, CHAIN, weights=pd.concat([weights] * 4))
    # beside a DataFrame of values the rows are paired by index, so the mismatch is named that way
    with pytest.raises(InputError, match="row indexes hold different labels"):
        gpav(pd.DataFrame(values, columns=[1, 0]), CHAIN, weights=weights)


def test_gpav_pairs_weight_frame_rows_by_index():
    # parent 0, child 1 violate; the pooled value is the weighted mean (w0 y0 + w1 y1) / (w0 + w1)
    values = pd.DataFrame({0: [0.3, 0.2], 1: [0.6, 0.8]}, index=["g1", "g2"])
    weights = pd.DataFrame({1: [1.0, 1.0], 0: [1.0, 2.0]}, index=["g2", "g1"])   # g1: w0 = 2, g2: w0 = 1
    got = gpav(values, CHAIN, weights=weights)
    np.testing.assert_allclose(got.loc["g1"].to_numpy(), [(2 * 0.3 + 0.6) / 3] * 2)
    np.testing.assert_allclose(got.loc["g2"].to_numpy(), [(0.2 + 0.8) / 2] * 2)
    with pytest.raises(InputError, match="row indexes hold different labels"):
        gpav(values, CHAIN, weights=weights.rename(index={"g2": "g3"}))


# --------------------------------------------------------------------------- add_root
def test_add_root_takes_frames_with_string_headers_of_int_classes():
    # every correction accepts str(class) headers (CSV files); add_root raised a KeyError on them
    frame = pd.DataFrame([[0.3, 0.6]], columns=["0", "1"], index=["g"])
    assert htd(frame, CHAIN).columns.tolist() == ["0", "1"]
    values, rooted = add_root(frame, CHAIN)
    assert list(values.columns) == ["00", "0", "1"] and list(values.index) == ["g"]
    assert values.iloc[0].tolist() == [0.6, 0.3, 0.6]
    assert rooted.parents(0) == ("00",)
    np.testing.assert_array_equal(htd(values, rooted).to_numpy(), [[0.6, 0.3, 0.3]])
    # a root named like a class's header would make such frames ambiguous
    with pytest.raises(InputError, match="already a class"):
        add_root(frame, CHAIN, root="0")


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf, "high", None])
def test_add_root_refuses_a_root_value_that_is_not_a_finite_number(value):
    if value is None:  # the default: the largest value of the matrix
        assert add_root([[0.3, 0.6]], CHAIN)[0].tolist() == [[0.6, 0.3, 0.6]]
        return
    with pytest.raises(InputError, match="value must be a finite number") as exc:
        add_root([[0.3, 0.6]], CHAIN, value=value)
    assert one_line(exc)


# --------------------------------------------------------------------------- options
def test_tau_without_descendants_is_refused_when_the_options_are_resolved():
    # HierarchicalCorrection.fit resolves its options; tau with positive="children" passed fit and only
    # failed at predict time, which GridSearchCV turns into NaN scores and warnings
    with pytest.raises(InputError, match="positive='descendants'") as exc:
        resolve_options("tpr_dag", {"bottomup": "tau"})
    assert one_line(exc)
    assert resolve_options("tpr_dag", {"bottomup": "tau", "positive": "descendants"})["bottomup"] == "tau"
    assert resolve_options("descens", {"bottomup": "tau"})["positive"] == "descendants"
    with pytest.raises(InputError, match="option 'method' of correction 'obozinski' must be one of"):
        resolve_options("obozinski", {"method": np.array(["max", "and"])})  # was numpy's ambiguous-truth error
    x, y = np.random.default_rng(0).random((20, 2)), np.ones((20, 2), dtype=int)
    with pytest.raises(InputError, match="positive='descendants'"):
        HierarchicalCorrection(CHAIN, options={"bottomup": "tau"}).fit(x, y)


# --------------------------------------------------------------------------- calibration and estimator rows
def _problem(n=60, seed=0):
    rng = np.random.default_rng(seed)
    h = Hierarchy.from_edges([("a", "b"), ("a", "c")], classes=["c", "b", "a"])
    y = (rng.random((n, 3)) < 0.5).astype(int)
    y[:, :2] *= y[:, [2]]
    x = rng.normal(loc=1.5 * y)
    index = [f"g{i}" for i in range(n)]
    return h, pd.DataFrame(x, columns=h.classes, index=index), pd.DataFrame(y, columns=h.classes, index=index)


def test_fit_calibration_pairs_frame_rows_by_index():
    _, x, y = _problem()
    shuffled = y.sample(frac=1.0, random_state=1)
    new = x.iloc[:10]
    want = fit_calibration(x, y).transform(new)
    pd.testing.assert_frame_equal(fit_calibration(x, shuffled).transform(new), want)
    with pytest.raises(InputError, match="row indexes hold different labels") as exc:
        fit_calibration(x, y.rename(index={"g3": "other"}))
    assert one_line(exc)


def test_estimator_fit_pairs_frame_rows_by_index_like_mlpr():
    h, x, y = _problem()
    shuffled = y.sample(frac=1.0, random_state=2)
    for calibration in ("isotonic", "platt"):
        a = HierarchicalCorrection(h, calibration=calibration).fit(x, y).predict_proba(x)
        b = HierarchicalCorrection(h, calibration=calibration).fit(x, shuffled).predict_proba(x)
        pd.testing.assert_frame_equal(a, b)
    with pytest.raises(InputError, match="row indexes hold different labels"):
        HierarchicalCorrection(h).fit(x, y.rename(index={"g5": "other"}))
