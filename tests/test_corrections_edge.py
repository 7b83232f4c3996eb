"""The classic corrections (hmcpgm.corrections) on inputs the benchmark data does not hold: frames whose rows
or columns do not line up, bad option combinations, odd class names, and invariants on every kind of hierarchy."""

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import hierarchies, value_matrices

from hmcpgm import MLPR, Hierarchy
from hmcpgm.corrections import (
    CORRECTIONS,
    HierarchicalCorrection,
    add_root,
    fit_calibration,
    gpav,
    htd,
    maxnorm,
    obozinski,
    qnorm,
    resolve_options,
)
from hmcpgm.exceptions import InputError, LabelError

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
    # a Series holds one weight per class, named by its index (it was read by position: here w0 = 1, w1 = 3)
    got = gpav(values, CHAIN, weights=pd.Series({1: 1.0, 0: 3.0}))
    np.testing.assert_allclose(got.to_numpy(), [[(3 * 0.3 + 0.6) / 4] * 2, [(3 * 0.2 + 0.8) / 4] * 2])
    with pytest.raises(InputError, match=r"weights has 2 columns but the hierarchy has 2 classes \(missing: \[0\]"):
        gpav(values, CHAIN, weights=pd.Series({1: 1.0, "x": 3.0}))


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
    for root in (None, ["r"]):  # were networkx's "None cannot be a node" and a bare "unhashable type"
        with pytest.raises(InputError, match="root must be a hashable class name"):
            add_root(frame, CHAIN, root=root)


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
    # the column names name the maps: duplicates were accepted by fit and refused by every transform of a frame
    with pytest.raises(InputError, match=r"scores has duplicate column names: \['a'\]"):
        fit_calibration(x.set_axis(["a", "b", "a"], axis=1), y.to_numpy())


def test_fit_calibration_names_the_maps_by_a_label_frame_when_scores_are_an_array():
    _, x, y = _problem()
    flipped = y[y.columns[::-1]]  # labels in another column order; the array scores are read in that order
    cal = fit_calibration(x[flipped.columns].to_numpy(), flipped)
    assert cal.classes == tuple(flipped.columns)
    new = x.iloc[:10]
    pd.testing.assert_frame_equal(cal.transform(new), fit_calibration(x, y).transform(new))  # by name
    with pytest.raises(InputError, match=r"labels has duplicate column names: \['a'\]"):
        fit_calibration(x.to_numpy(), y.set_axis(["a", "b", "a"], axis=1))


def test_estimator_fit_pairs_frame_rows_by_index_like_mlpr():
    h, x, y = _problem()
    shuffled = y.sample(frac=1.0, random_state=2)
    for calibration in ("isotonic", "platt"):
        a = HierarchicalCorrection(h, calibration=calibration).fit(x, y).predict_proba(x)
        b = HierarchicalCorrection(h, calibration=calibration).fit(x, shuffled).predict_proba(x)
        pd.testing.assert_frame_equal(a, b)
    with pytest.raises(InputError, match="row indexes hold different labels"):
        HierarchicalCorrection(h).fit(x, y.rename(index={"g5": "other"}))


def test_estimator_refuses_labels_that_break_the_hierarchy_or_closes_them_as_mlpr_does():
    # fit accepted a positive class under a negative parent, which MLPR refuses: an annotation not propagated to
    # its ancestors, or label columns in another order than the classes, went unnoticed (a review, audit53)
    h = Hierarchy.from_edges([("a", "b"), ("a", "c")], classes=["c", "b", "a"])  # children first
    rng = np.random.default_rng(0)
    y = (rng.random((60, 3)) < 0.5).astype(int)
    y[:, :2] *= y[:, [2]]
    x = y + rng.normal(scale=0.8, size=y.shape)
    bad = y.copy()
    bad[0] = [1, 0, 0]  # c positive, its parent a negative
    for model in (HierarchicalCorrection(h), MLPR(hierarchy=h)):
        with pytest.raises(LabelError, match="y") as exc:
            model.fit(x, bad)
        assert one_line(exc)
    fitted = HierarchicalCorrection(h).fit(x, y)
    with pytest.raises(LabelError, match="y"):
        fitted.score(x, bad)
    closed = h.close_labels(bad)
    assert closed[0].tolist() == [1, 0, 1]
    for calibration in ("isotonic", "platt"):
        a = HierarchicalCorrection(h, calibration=calibration, close_labels=True).fit(x, bad)
        b = HierarchicalCorrection(h, calibration=calibration).fit(x, closed)
        np.testing.assert_array_equal(a.predict_proba(x), b.predict_proba(x))
        assert a.score(x, bad) == b.score(x, closed)
    with pytest.raises(InputError, match="close_labels must be True or False, got 1"):
        HierarchicalCorrection(h, close_labels=1).fit(x, y)


# --------------------------------------------------------------------------- invariants on any input layout
def _every_correction():
    """(label, function(values, hierarchy), needs probabilities, idempotent) for every registry entry and option."""
    out = []
    for name, entry in CORRECTIONS.items():
        variants = [{"method": m} for m in ("max", "and", "or")] if name == "obozinski" else [{}]
        if name == "descens":
            variants.append({"bottomup": "tau", "t": 0.3})
        if name == "tpr_dag":
            variants += [{"bottomup": b, "t": 0.4, "w": 0.3} for b in ("threshold", "weighted_threshold")]
        for options in variants:
            method = options.get("method")
            out.append((f"{name}{options or ''}", lambda v, h, e=entry, o=options: e(v, h, **o),
                        method in ("and", "or"), name in ("flat", "htd", "gpav", "mcm") or method == "max"))
    return out


EVERY = _every_correction()


@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_every_correction_is_indifferent_to_the_layout_of_its_input(data):
    # int or string class names, columns in no topological order; the same numbers from float32, int, Fortran,
    # read-only arrays and from a DataFrame with permuted str(class) headers; the input never changes
    h = data.draw(hierarchies(max_classes=7, int_names=data.draw(st.booleans())))
    k = h.n_classes
    y = data.draw(value_matrices(k, max_objects=3, low=-1.5, high=2.5))
    y32 = y.astype(np.float32)
    perm = data.draw(st.permutations(range(k)))
    for label, func, probabilities, idempotent in EVERY:
        base = np.clip(y32, 0.0, 1.0).astype(np.float64) if probabilities else y32.astype(np.float64)
        want = np.asarray(func(base, h))
        assert want.shape == base.shape and np.all(np.isfinite(want)), label
        layouts = {"float32": base.astype(np.float32), "fortran": np.asfortranarray(base),
                   "read-only": base.copy()}
        layouts["read-only"].flags.writeable = False
        if np.all(base == np.round(base)):
            layouts["int"] = base.astype(np.int64)
        for kind, arr in layouts.items():
            before = arr.copy()
            np.testing.assert_array_equal(np.asarray(func(arr, h)), want, err_msg=f"{label} {kind}")
            np.testing.assert_array_equal(arr, before, err_msg=f"{label} mutated its {kind} input")
        headers = [str(h.classes[j]) for j in perm]
        frame = pd.DataFrame(base[:, perm], columns=headers, index=[f"o{i}" for i in range(len(base))])
        before = frame.copy()
        got = func(frame, h)
        assert list(got.columns) == headers and list(got.index) == list(frame.index), label
        np.testing.assert_array_equal(got.to_numpy(), want[:, perm], err_msg=label)
        pd.testing.assert_frame_equal(frame, before)
        if CORRECTIONS[label.split("{")[0]].consistent:
            e = h.edge_indices
            assert np.all(want[:, e[:, 1]] <= want[:, e[:, 0]]), label  # exactly, values outside [0, 1] too
        if idempotent:
            np.testing.assert_allclose(np.asarray(func(want, h)), want, rtol=0, atol=1e-12, err_msg=label)


def test_normalisations_follow_their_rows_and_columns():
    # maxnorm and qnorm treat every column alike and every row alike: permuting either permutes the result
    from hmcpgm.corrections import maxnorm, qnorm

    rng = np.random.default_rng(3)
    y = np.round(rng.random((9, 5)) * 4 - 1, 1)  # ties, negatives, zeros
    rows, cols = rng.permutation(9), rng.permutation(5)
    for norm in (maxnorm, qnorm):
        want = norm(y)
        np.testing.assert_allclose(norm(y[rows][:, cols]), want[rows][:, cols], rtol=0, atol=1e-12)
        frame = pd.DataFrame(y[:, cols], columns=[f"c {j}" for j in cols])
        got = norm(frame)
        assert list(got.columns) == list(frame.columns)
        np.testing.assert_allclose(got.to_numpy(), want[:, cols], rtol=0, atol=1e-12)
        assert norm(y[:0]).shape == (0, 5) and norm(frame.iloc[:0]).shape == (0, 5)


@pytest.mark.parametrize("calibration", ["isotonic", "platt", "none"])
def test_estimator_behaves_like_a_scikit_learn_estimator_on_matching_shapes(calibration):
    # scikit-learn's generic checks of these properties are expected failures (they pass X with other column
    # counts than y), so they are made here on data of the right shape
    import pickle

    from sklearn.base import clone

    h, x, y = _problem(80, seed=4)
    xa, ya = x.to_numpy(), y.to_numpy()
    xa0, ya0 = xa.copy(), ya.copy()
    model = HierarchicalCorrection(h, calibration=calibration, correction="iso_tpr").fit(xa, ya)
    np.testing.assert_array_equal(xa, xa0)
    np.testing.assert_array_equal(ya, ya0)
    state = {k: v for k, v in vars(model).items()}
    p = model.predict_proba(xa)
    assert vars(model).keys() == state.keys()  # predicting leaves the fitted state alone
    np.testing.assert_array_equal(HierarchicalCorrection(h, calibration=calibration, correction="iso_tpr")
                                  .fit(xa, ya).predict_proba(xa), p)  # fit is deterministic
    order = np.random.default_rng(5).permutation(len(xa))
    np.testing.assert_array_equal(model.predict_proba(xa[order]), p[order])  # row order and subsets
    np.testing.assert_array_equal(model.predict_proba(xa[7:8]), p[7:8])
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(model)).predict_proba(xa), p)
    twin = clone(model)
    assert not hasattr(twin, "correction_") and twin.get_params() == model.get_params()
    twin.set_params(correction="htd", options=None)
    assert twin.fit(xa, ya).predict(xa).shape == ya.shape and h.violations(twin.predict(xa)) == 0
    # the calibrated scores are a new array, even with nothing to calibrate ("none" returned X itself)
    c_order = np.ascontiguousarray(xa)
    assert not np.shares_memory(model.calibrated(c_order), c_order)


def test_out_of_range_probabilities_are_named_by_class():
    # the position was that of the class order, not of the DataFrame's columns, and the value printed as
    # np.float64(1.6)
    frame = pd.DataFrame([[0.3, 1.6]], columns=[0, 1])  # child 1 holds 1.6; in class order it is column 0
    with pytest.raises(InputError, match=r"row 0, class 1 holds 1\.6$") as exc:
        obozinski(frame, CHAIN, "and")
    assert one_line(exc)


@pytest.mark.parametrize("rows", [0, 1])
def test_every_correction_keeps_empty_and_single_row_frames_with_odd_names(rows):
    # names with spaces beside an int name, two roots, one class under both; columns in another order
    h = Hierarchy.from_edges([("a b", 7), (" d", 7)], classes=[7, " d", "a b"])
    frame = pd.DataFrame(np.full((rows, 3), 0.25) + [0.5, 0.0, 0.0], columns=[" d", 7, "a b"],
                         index=pd.Index(["x"] * rows, name="object"))
    for label, func, _, _ in EVERY:
        out = func(frame, h)
        assert isinstance(out, pd.DataFrame) and out.shape == (rows, 3), label
        assert list(out.columns) == [" d", 7, "a b"] and out.index.equals(frame.index), label
        if rows and CORRECTIONS[label.split("{")[0]].consistent:
            assert (out[7] <= out[" d"]).all() and (out[7] <= out["a b"]).all(), label


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_gpav_is_equivariant_under_shifts_and_scalings(data):
    # least squares: gpav(a y + c) = a gpav(y) + c for a > 0, and scaling every weight of a row changes nothing;
    # a tolerance that were absolute rather than relative to the size of the values would break this
    h = data.draw(hierarchies(max_classes=12, max_parents=3))
    k = h.n_classes
    y = data.draw(value_matrices(k, max_objects=3))
    w = np.asarray(data.draw(st.lists(st.floats(0.1, 10.0), min_size=k, max_size=k)))
    a = data.draw(st.sampled_from([1e-6, 0.01, 3.0, 1e4]))
    c = data.draw(st.sampled_from([-1e3, -1.0, 0.0, 7.0]))
    x = gpav(y, h, weights=w)
    np.testing.assert_allclose(gpav(a * y + c, h, weights=w), a * x + c, rtol=0, atol=1e-9 * (a + abs(c)))
    np.testing.assert_allclose(gpav(y, h, weights=w * 1e3), x, rtol=0, atol=1e-12)


# ---------------------------------------------------------------------- tables of other libraries, NaN arrays
def _three_classes():
    h = Hierarchy.from_edges([("a", "b"), ("a", "c")], classes=["c", "a", "b"])  # columns not topological
    rng = np.random.default_rng(3)
    y = np.zeros((60, 3), int)
    y[:, 1] = rng.random(60) < 0.6
    y[:, 0] = y[:, 1] & (rng.random(60) < 0.5)
    y[:, 2] = y[:, 1] & (rng.random(60) < 0.5)
    return h, y + rng.normal(0, 0.4, size=y.shape), y


def test_a_pyarrow_table_is_aligned_by_class_name_in_corrections_and_rankings():
    """A pyarrow Table names its columns (the dataframe interchange protocol), but functions that take a
    DataFrame by name read it in position order: permuted columns were corrected as other classes."""
    pa = pytest.importorskip("pyarrow")
    from hmcpgm import hier_rank

    h, X, y = _three_classes()
    frame = pd.DataFrame(X, columns=list(h.classes))
    permuted = pa.Table.from_pandas(frame[["b", "a", "c"]])
    corrected = htd(permuted, h)  # a DataFrame in the table's column order, as for a DataFrame
    assert list(corrected.columns) == ["b", "a", "c"]
    np.testing.assert_array_equal(corrected[list(h.classes)].to_numpy(), htd(X, h))
    np.testing.assert_array_equal(hier_rank(permuted, h).ranks, hier_rank(X, h).ranks)
    expected = HierarchicalCorrection(hierarchy=h, correction="htd").fit(X, y).predict_proba(X)
    labels = pa.Table.from_pandas(pd.DataFrame(y, columns=list(h.classes))[["a", "c", "b"]])
    model = HierarchicalCorrection(hierarchy=h, correction="htd").fit(permuted, labels)
    got = model.predict_proba(permuted)
    assert list(got.columns) == list(h.classes)
    np.testing.assert_array_equal(got.to_numpy(), expected)


def test_a_pyarrow_table_is_aligned_by_class_name_in_weights_calibration_and_label_checks():
    """Hierarchy.violations, close_labels and check_labels, gpav's weights and the calibrations read a pyarrow
    table by column position (a review, audit32): valid labels were refused, weights went to other classes."""
    pa = pytest.importorskip("pyarrow")
    from hmcpgm.corrections import calibrate

    table = lambda frame: pa.Table.from_pandas(frame, preserve_index=False)  # noqa: E731
    h, X, y = _three_classes()  # classes c, a, b; a is the root
    labels = pd.DataFrame(y, columns=list(h.classes))[["b", "a", "c"]]
    assert h.violations(table(labels)) == h.violations(y) == 0
    h.check_labels(table(labels))
    root_only = pd.DataFrame({"b": [0], "a": [1], "c": [0]})
    assert h.violations(table(root_only[["c", "b", "a"]])) == 0
    pd.testing.assert_frame_equal(h.close_labels(table(labels)), h.close_labels(labels))
    values = pd.DataFrame(X, columns=list(h.classes))[["a", "c", "b"]].clip(0, 1)
    weights = pd.DataFrame(np.random.default_rng(0).uniform(0.1, 9, X.shape), columns=["b", "c", "a"])
    pd.testing.assert_frame_equal(gpav(table(values), h, weights=table(weights)), gpav(values, h, weights=weights))
    pd.testing.assert_frame_equal(calibrate(table(values), table(labels)), calibrate(values, labels))
    pd.testing.assert_frame_equal(calibrate(values, labels, table(values)), calibrate(values, labels))
    for normalise in (maxnorm, qnorm):  # no hierarchy: the table's columns as they are, named
        pd.testing.assert_frame_equal(normalise(table(values)), normalise(values))


def test_a_pyarrow_table_is_aligned_by_class_name_in_metrics_catch_and_propagation():
    """Without a hierarchy the metrics paired two pyarrow tables by position (AP 0.41 for 0.97 with DataFrames);
    catch read a table with a plain order array, and propagate_max a DataFrame, by position (a review, audit39)."""
    pa = pytest.importorskip("pyarrow")
    from hmcpgm import average_precision, catch, f1_score, fdp, hier_rank
    from hmcpgm.metrics import auprc_per_class, propagate_max

    table = lambda frame: pa.Table.from_pandas(frame, preserve_index=False)  # noqa: E731
    h, X, y = _three_classes()
    values = pd.DataFrame(X, columns=list(h.classes))
    labels = pd.DataFrame(y, columns=list(h.classes))
    shuffled = labels[["b", "a", "c"]]
    expected = average_precision(X, y, exclude_roots=False)
    assert average_precision(table(values), table(shuffled), exclude_roots=False) == expected
    assert average_precision(values, shuffled, exclude_roots=False) == expected
    got, ref = auprc_per_class(table(values), table(shuffled)), auprc_per_class(X, y)
    assert got.average == ref.average
    d = (X > 0.5).astype(int)
    decisions = pd.DataFrame(d, columns=list(h.classes))[["c", "b", "a"]]
    for metric in (f1_score, fdp):
        assert metric(table(decisions), table(shuffled)) == metric(d, y)
    with pytest.raises(InputError, match=r"^values lacks the column\(s\) \['c'\] that labels has"):
        average_precision(values.drop(columns=["c"]), labels, exclude_roots=False)  # was: "labels has 3 columns"
    # int class names beside a CSV's str headers are one class each, as column_positions matches them
    numbered = pd.DataFrame(y)
    read_back = pd.DataFrame(X, columns=["0", "1", "2"])[["2", "0", "1"]]
    assert average_precision(read_back, numbered, exclude_roots=False) == expected
    with pytest.raises(InputError, match="ranking is a plain order array"):  # a Series labelled by class
        catch(np.arange(3), values.iloc[0][["b", "a", "c"]])
    with pytest.raises(InputError, match="ranking is a plain order array"):
        catch(np.arange(X.size), table(values[["b", "a", "c"]]))
    r = hier_rank(X, h)
    assert catch(r, table(values[["b", "a", "c"]])) == catch(r, X)
    with pytest.raises(InputError, match=r"^values has 2 columns .* \(missing: \['c'\]\)"):
        catch(r, values.drop(columns=["c"]))  # was: "ranking ranks a 60 x 3 matrix ... shape (60, 2)"
    propagated = propagate_max(values[["b", "a", "c"]], h)
    assert list(propagated.columns) == ["b", "a", "c"]
    np.testing.assert_array_equal(propagated[list(h.classes)].to_numpy(), propagate_max(X, h))
    np.testing.assert_array_equal(propagate_max(table(values[["b", "c", "a"]]), h)[list(h.classes)],
                                  propagate_max(X, h))
    with pytest.raises(InputError, match=r"not classes of the hierarchy: \['z'\]"):
        propagate_max(values.rename(columns={"c": "z"}), h)


def test_second_stage_calibrate_aligns_a_dataframe_by_class_name():
    """A class every training row has takes 1 in calibrate: it was set by position, so with permuted columns
    another class became 1 (a review, audit39)."""
    from hmcpgm import MLPR

    h, X, y = _three_classes()  # classes c, a, b; a is the root
    y = y.copy()
    y[:, 1] = 1  # every row has the root: a certain class
    X = y + np.random.default_rng(1).normal(0, 0.6, y.shape)
    stage = MLPR(hierarchy=h, version="nbh", score_model="lpr", tempering=None).fit(X, y).second_stage_
    assert [h.classes[k] for k in stage.certain_classes()] == ["a"]
    p = stage.predict_proba(X)
    expected = stage.calibrate(p)
    assert np.all(expected[:, 1] == 1) and not np.all(expected[:, 0] == 1)
    frame = pd.DataFrame(p, columns=list(h.classes))[["b", "a", "c"]]
    np.testing.assert_array_equal(stage.calibrate(frame), expected)
    np.testing.assert_array_equal(stage.predict_calibrated(mlpr=frame), expected)
    with pytest.raises(InputError, match=r"^mlpr has 2 columns .*missing: \['c'\]"):
        stage.calibrate(frame.drop(columns=["c"]))


@pytest.mark.parametrize("calibration", ["isotonic", "platt", "none", "maxnorm", "qnorm"])
def test_values_near_the_float_limit_are_refused_in_one_line_not_corrected_to_inf(calibration):
    """gpav([[1e308, 1.5e308, 1.7e308]]) gave inf for finite values, tpr_dag a NaN root, Platt a constant map (a
    review, audit32)."""
    from hmcpgm.corrections import tpr_dag

    h = Hierarchy.from_edges([("a", "b"), ("a", "c")])
    huge = np.array([[1e308, 1.5e308, 1.7e308]])
    for correct in (gpav, tpr_dag, htd):
        with pytest.raises(InputError, match=r"^values must lie within \+-1e\+100 .*row 0, class 'a' holds 1e\+308$"):
            correct(huge, h)
    np.testing.assert_allclose(gpav(huge / 1e210, h) * 1e210, [[1.4e308] * 3], rtol=1e-12)  # both children above a
    with pytest.raises(InputError, match=r"scores must lie within .*row 1, column 0 holds -1e\+160"):
        fit_calibration([[0.0], [-1e160]], [[0], [1]], method="platt")
    X = np.random.default_rng(0).random((8, 3))
    y = (X > 0.5).astype(int)
    y[:, 0] = 1
    model = HierarchicalCorrection(hierarchy=h, correction="gpav", calibration=calibration).fit(X, y)
    if calibration in ("platt", "none", "qnorm"):  # Platt's fit, or the correction, reads the scores' scale
        X[3, 2] = -1e200
        with pytest.raises(InputError, match=r"^X must lie within \+-1e\+100 .*row 3, class 'c' holds -1e\+200$"):
            model.predict_proba(X)
        return
    # the isotonic maps compare scores and maxnorm divides by their maximum: any scale
    scaled = HierarchicalCorrection(hierarchy=h, correction="gpav", calibration=calibration).fit(X * 1e150, y)
    np.testing.assert_allclose(scaled.predict_proba(X * 1e150), model.predict_proba(X), rtol=1e-12)


def test_a_bad_label_in_a_matrix_of_another_width_is_named_by_its_column():
    """With four label columns for three classes, naming the class of column 3 raised IndexError (audit35)."""
    h = Hierarchy.from_edges([("a", "b"), ("a", "c")])
    for check in (h.close_labels, h.violations, h.check_labels):
        with pytest.raises(LabelError, match=r"^labels must hold only 0 and 1; row 0, column 3 holds 2\.0$"):
            check([[1, 1, 0, 2]])


def test_a_bad_label_is_named_by_its_class_not_its_position_in_the_hierarchy():
    """'row 2, column 2 holds nan' named the hierarchy's column 2 ('r'), not the DataFrame's: the NaN is in 'b'."""
    h = Hierarchy.from_edges([("r", "a"), ("r", "b")])
    X = pd.DataFrame(np.random.default_rng(0).random((4, 3)), columns=["r", "a", "b"])
    y = pd.DataFrame({"b": [0, 1, 2, 0], "a": [1, 0, 1, 0], "r": [1, 1, 1, 1]})
    for model in (MLPR(h), HierarchicalCorrection(h)):
        with pytest.raises(LabelError, match=r"^y must hold only 0 and 1; row 2, class 'b' holds 2\.0$"):
            model.fit(X, y)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_hierarchical_correction_refuses_a_nan_score_array_in_one_line(bad):
    """scikit-learn's message ran over several lines (advising HistGradientBoosting) and named no class."""
    h, X, y = _three_classes()
    X[7, 2] = bad
    model = HierarchicalCorrection(hierarchy=h, correction="htd")
    with pytest.raises(InputError, match=r"X must be finite.*row 7, class 'b'") as exc:
        model.fit(X, y)
    assert one_line(exc)
    X[7, 2] = 0.5
    model.fit(X, y)
    X[3, 0] = bad
    with pytest.raises(InputError, match=r"X must be finite.*row 3, class 'c'") as exc:
        model.predict_proba(X)
    assert one_line(exc)


def test_the_estimator_predicts_no_rows_as_mlpr_does():
    # a fitted correction refused an array of no rows (sklearn's "minimum of 1 is required") but took a
    # DataFrame of no rows; MLPR takes both. Fitting on no rows is still refused.
    from hmcpgm import MLPR

    h = Hierarchy.from_parents([None, 0])
    rng = np.random.default_rng(0)
    y = np.sort(rng.integers(0, 2, (200, 2)), axis=1)[:, ::-1]
    s = rng.normal(y)
    for model in (HierarchicalCorrection(h).fit(s, y), MLPR(h, version="indpt").fit(s, y)):
        assert model.predict_proba(np.zeros((0, 2))).shape == (0, 2)
        assert model.predict(np.zeros((0, 2))).shape == (0, 2)
    with pytest.raises(InputError, match="minimum of 1"):
        HierarchicalCorrection(h).fit(np.zeros((0, 2)), np.zeros((0, 2)))


@pytest.mark.parametrize("calibration", ["maxnorm", "qnorm"])
def test_a_normalisation_of_one_row_warns_that_it_is_normalised_against_itself(calibration):
    """audit50: maxnorm and qnorm normalise the matrix being predicted, as HEMDAG does: one object alone gets
    other values (maxnorm: 1 for every class of positive score) than within its batch, without a word."""
    from hmcpgm.corrections import HierarchicalCorrection

    h = Hierarchy.from_edges([("a", "b"), ("a", "c")])
    rng = np.random.default_rng(0)
    X = rng.uniform(0.01, 1, (50, 3))
    y = (X > 0.5).astype(int)
    y[:, 0] |= y[:, 1] | y[:, 2]
    model = HierarchicalCorrection(h, calibration=calibration).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        batch = model.predict_proba(X)
    with pytest.warns(UserWarning, match=f"calibration='{calibration}' normalises the matrix being predicted, here "
                                         "one row"):
        alone = model.predict_proba(X[:1])
    assert not np.allclose(alone, batch[:1])
