"""CAFA metrics against the CAFA evaluator itself (cafaeval 1.3) on generated ontologies and files."""

import sys

import numpy as np
import pytest
from go_fixtures import (
    NAMESPACES,
    live_terms,
    obo_text,
    parents_within,
    random_annotations,
    random_ontology,
    random_predictions,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import dags

from hmcpgm import Hierarchy
from hmcpgm.exceptions import InputError, LabelError
from hmcpgm.metrics import cafa_curve, cafa_metrics, fmax, information_accretion, smin, weighted_fmax


def _matrices(rng, terms, annotations, predictions, namespace):
    """(hierarchy with shuffled columns, values, labels, targets) built straight from the generated data."""
    live = live_terms(terms, namespace)
    canonical = {t: t for t in live} | {a: t for t in live for a in terms[t]["alt_id"]}
    edges = [(p, t) for t in live for p in parents_within(terms, t)]
    order = [live[j] for j in rng.permutation(len(live))]
    h = Hierarchy.from_edges(edges, classes=order)
    targets = sorted({g for g, t in annotations if t in canonical})
    row = {g: i for i, g in enumerate(targets)}
    y = np.zeros((len(targets), len(live)), dtype=int)
    for g, t in annotations:
        if t in canonical:
            y[row[g], h.index(canonical[t])] = 1
    s = np.zeros(y.shape)
    for g, t, v in predictions:
        if g in row and t in canonical:
            s[row[g], h.index(canonical[t])] = max(s[row[g], h.index(canonical[t])], v)
    return h, s, y


def _write(folder, terms, annotations, predictions):
    (folder / "go.obo").write_text(obo_text(terms))
    (folder / "gt.tsv").write_text("".join(f"{g}\t{t}\n" for g, t in annotations))
    (folder / "pred").mkdir()
    (folder / "pred" / "method.tsv").write_text("".join(f"{g}\t{t}\t{v}\n" for g, t, v in predictions))


def _cafaeval(folder, **options):
    cafaeval = pytest.importorskip("cafaeval.evaluation")
    df, best = cafaeval.cafa_eval(str(folder / "go.obo"), str(folder / "pred"), str(folder / "gt.tsv"),
                                  n_cpu=1, **options)
    return df.reset_index(), best


def _one_of_their_best(theirs, column, mine, their_best, coverage=None):
    """``mine``'s threshold is one where cafaeval's curve reaches its best value (up to rounding), with the
    coverage cafaeval has there (its column ``coverage``). Where two thresholds tie in exact arithmetic, the
    sums of the two tools may differ in the last bit and pick different ones: either is the answer."""
    at = theirs[np.isclose(theirs["tau"], mine.threshold, rtol=0, atol=1e-12)]
    assert len(at) == 1, (column, mine.threshold)
    assert float(at[column].iloc[0]) == pytest.approx(their_best, abs=1e-9), (column, mine, their_best)
    if coverage is not None:
        assert mine.coverage == pytest.approx(float(at[coverage].iloc[0]), abs=1e-12)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), norm=st.sampled_from(["cafa", "pred", "gt"]), no_orphans=st.booleans())
def test_fmax_smin_weighted_fmax_equal_cafaeval(seed, norm, no_orphans, tmp_path_factory):
    pytest.importorskip("cafaeval")
    rng = np.random.default_rng(seed)
    terms = random_ontology(rng, (int(rng.integers(3, 9)), int(rng.integers(2, 7))))
    annotations = random_annotations(rng, terms)
    predictions = random_predictions(rng, terms)
    folder = tmp_path_factory.mktemp("cafa")
    _write(folder, terms, annotations, predictions)
    per_ns = {ns: _matrices(rng, terms, annotations, predictions, ns) for ns in NAMESPACES}
    ia = {}
    for h, _, y in per_ns.values():
        if y.any():
            ia.update(zip(h.classes, information_accretion(y, h).tolist()))
    for term in ia:  # cafaeval weighs only the terms of positive IA: a negative IA leaves its term out
        if rng.random() < 0.2:
            ia[term] = -abs(ia[term]) - 0.5
    (folder / "ia.tsv").write_text("".join(f"{t}\t{v!r}\n" for t, v in ia.items()))
    df, best = _cafaeval(folder, ia=str(folder / "ia.tsv"), norm=norm, no_orphans=no_orphans)
    compared = 0
    for ns, (h, s, y) in per_ns.items():
        theirs = df[df["ns"] == ns].reset_index(drop=True)
        if not y.any() or not s.any() or len(theirs) == 0:
            continue
        options = dict(exclude_roots=no_orphans, normalization=norm)
        curve = cafa_curve(s, y, h, **options)
        np.testing.assert_allclose(curve["tau"], theirs["tau"], atol=1e-12)
        for mine, col in [("precision", "pr"), ("recall", "rc"), ("f", "f"), ("coverage", "cov"),
                          ("misinformation", "mi"), ("remaining_uncertainty", "ru"), ("s", "s")]:
            np.testing.assert_allclose(curve[mine], theirs[col], atol=1e-9, rtol=0, err_msg=f"{ns} {mine}")
        weighted = cafa_curve(s, y, h, ia=ia, weighted=True, **options)
        for mine, col in [("precision", "pr_w"), ("recall", "rc_w"), ("f", "f_w"), ("coverage", "cov_w"),
                          ("misinformation", "mi_w"), ("remaining_uncertainty", "ru_w"), ("s", "s_w")]:
            np.testing.assert_allclose(weighted[mine], theirs[col], atol=1e-9, rtol=0, err_msg=f"{ns} {mine}")
        f = fmax(s, y, h, **options)
        row = best["f"].reset_index().set_index("ns").loc[ns]
        assert f.value == pytest.approx(row["f"], abs=1e-9)
        _one_of_their_best(theirs, "f", f, row["f"], coverage="cov")
        fw = weighted_fmax(s, y, h, ia=ia, **options)
        row = best["f_w"].reset_index().set_index("ns").loc[ns]
        assert fw.value == pytest.approx(row["f_w"], abs=1e-9)
        _one_of_their_best(theirs, "f_w", fw, row["f_w"])
        sm = smin(s, y, h, ia=ia, **options)
        together = cafa_metrics(s, y, h, ia=ia, **options)
        assert (together["fmax"], together["fmax_threshold"], together["fmax_coverage"]) == f
        assert (together["weighted_fmax"], together["weighted_fmax_threshold"]) == fw[:2]
        assert (together["smin"], together["smin_threshold"]) == sm[:2]
        best_s = float(theirs["s_w"].min())
        assert sm.value == pytest.approx(best_s, abs=1e-9)
        _one_of_their_best(theirs, "s_w", sm, best_s)
        # with every term weighing 1, smin is cafaeval's unweighted s (its evaluation_best_s)
        if not no_orphans:
            row = best["s"].reset_index().set_index("ns").loc[ns]
            assert smin(s, y, h, ia=np.ones(h.n_classes), **options).value == pytest.approx(row["s"], abs=1e-9)
        compared += 1
    assert compared >= 1  # the generated files always give cafaeval something to evaluate


def _ia_brute_force(y, h):
    """The CAFA organisers' ia.py, object by object: counts with one extra object annotated with everything."""
    closed = [set(h.classes[k] for k in np.flatnonzero(r)) | {a for k in np.flatnonzero(r) for a in
                                                              h.ancestors(h.classes[k])} for r in y]
    closed = [c for c in closed if c] + [set(h.classes)]
    out = []
    for c in h.classes:
        with_term = sum(c in row for row in closed)
        with_parents = sum(set(h.parents(c)) <= row for row in closed)
        out.append(0.0 if with_term == with_parents else -np.log2(with_term / with_parents))
    return np.array(out)


@settings(max_examples=40, deadline=None)
@given(h=dags(max_classes=8), data=st.data())
def test_information_accretion_is_the_organisers_definition(h, data):
    m = data.draw(st.integers(1, 12))
    y = np.array(data.draw(st.lists(st.lists(st.integers(0, 1), min_size=h.n_classes, max_size=h.n_classes),
                                    min_size=m, max_size=m)))
    np.testing.assert_allclose(information_accretion(y, h), _ia_brute_force(y, h), atol=1e-12)


def test_labels_are_not_copied_to_float():
    """An int8 label matrix of the Gene Ontology is a gigabyte; a float copy was eight (for the IA, the metrics)."""
    import pandas as pd

    from hmcpgm._columns import aligned_matrices, class_matrix

    h = Hierarchy.from_edges([("r", "a"), ("r", "b")])
    y = np.array([[1, 1, 0], [1, 0, 1]], dtype=np.int8)
    assert class_matrix(y, h, "labels", keep_integers=True) is y
    (same,) = aligned_matrices([(y, "labels")], h, keep_integers=("labels",))
    assert same is y
    frame = pd.DataFrame(y[:, ::-1], columns=["b", "a", "r"])
    (aligned,) = aligned_matrices([(frame, "labels")], h, keep_integers=("labels",))
    assert aligned.dtype == np.int8
    np.testing.assert_array_equal(aligned, y)
    assert class_matrix(y, h, "labels").dtype == float  # without it: float, as before


def test_dataframes_are_aligned_by_class_name():
    import pandas as pd

    h = Hierarchy.from_edges([("r", "a"), ("r", "b"), ("a", "c")])
    rng = np.random.default_rng(3)
    s = pd.DataFrame(np.round(rng.random((9, 4)), 2), columns=list(h.classes))
    y = pd.DataFrame(rng.integers(0, 2, (9, 4)), columns=list(h.classes))
    shuffled = ["c", "a", "r", "b"]
    assert fmax(s[shuffled], y, h) == fmax(s, y, h)
    assert smin(s, y[shuffled], h) == smin(s, y, h)
    ia = information_accretion(y[shuffled], h)
    assert list(ia.index) == list(h.classes)
    assert weighted_fmax(s, y, h, ia=ia) == weighted_fmax(s, y, h, ia=ia.to_numpy())


def test_errors_name_the_argument():
    h = Hierarchy.from_edges([("r", "a")])
    with pytest.raises(LabelError, match="no positive"):
        fmax([[0.5, 0.5]], [[0, 0]], h)
    with pytest.raises(InputError, match="normalization"):
        fmax([[0.5, 0.5]], [[1, 0]], h, normalization="protein")
    for step in (1.5, 0.0, 1e-300, float("nan"), "a", None, True):  # 1e-300: an array of 1e300 thresholds
        with pytest.raises(InputError, match=r"threshold_step must be a number in \[1e-05, 1\)"):
            fmax([[0.5, 0.5]], [[1, 0]], h, threshold_step=step)
    with pytest.raises(InputError, match="ia must have one value per class"):
        smin([[0.5, 0.5]], [[1, 0]], h, ia=[1.0])
    with pytest.raises(InputError, match="weighted must be True or False"):
        cafa_curve([[0.5, 0.5]], [[1, 0]], h, weighted="yes")
    from hmcpgm.metrics import propagate_max

    for values in ([0.5, 0.5], [[0.5, 0.5, 0.9]]):  # a third column was ignored
        with pytest.raises(InputError, match=r"values must have shape \(M, 2\)"):
            propagate_max(np.array(values), h)
    for ia in (["x", "y"], {"a": "x"}):
        with pytest.raises(InputError, match="ia must hold one number per class"):
            smin([[0.5, 0.5]], [[1, 0]], h, ia=ia)
    with pytest.raises(InputError, match="values has 3 columns"):
        fmax([[0.5, 0.5, 0.1]], [[1, 0]], h)


def test_a_fine_threshold_grid_is_counted_in_blocks_of_targets_with_the_same_curve(monkeypatch):
    """The (target, threshold) counts come a block of targets at a time, the block smaller as the grid is
    finer: blocks of 3 targets give the curves of one block."""
    import pandas as pd

    from hmcpgm.metrics import _cafa

    rng = np.random.default_rng(0)
    h = Hierarchy.from_edges([("r", "a"), ("r", "b"), ("a", "c")], classes=["c", "r", "b", "a"])
    y = h.close_labels((rng.random((40, 4)) < 0.4).astype(int))
    s = np.round(rng.random((40, 4)), 3)
    ia = rng.random(4)
    whole = [cafa_curve(s, y, h, ia=ia, weighted=w, threshold_step=1e-3) for w in (False, True)]
    monkeypatch.setattr(_cafa, "_CHUNK_CELLS", 3 * 1000)  # 999 thresholds: 3 targets per block
    blocks = [cafa_curve(s, y, h, ia=ia, weighted=w, threshold_step=1e-3) for w in (False, True)]
    assert len(whole[0]) > 100
    for a, b in zip(whole, blocks):
        pd.testing.assert_frame_equal(a, b, check_exact=False, rtol=1e-12)


@pytest.mark.parametrize("density", [0.03, 0.9])
def test_a_blocks_counts_are_the_thresholded_sums_whether_few_or_most_values_reach_a_threshold(density):
    """_sums bins only the values that reach the first threshold when they are few (a CAFA block is mostly the
    terms a target has no prediction for) and every value otherwise: both against each threshold applied in
    turn, cafaeval's way."""
    from hmcpgm.metrics._cafa import _sums

    rng = np.random.default_rng(int(density * 100))
    pred = np.where(rng.random((37, 60)) < density, np.round(rng.random((37, 60)), 2), 0.0)
    g = rng.random((37, 60)) < 0.2
    g[3] = False  # a target without ground truth in the block
    taus = np.arange(0.01, 1, 0.01)
    for w in (None, rng.exponential(size=60) * (rng.random(60) < 0.7)):
        weights = np.ones(60) if w is None else w
        expected = []
        for tau in taus:
            n_pred = ((pred >= tau) * weights).sum(axis=1)
            n_inter = (((pred >= tau) & g) * weights).sum(axis=1)
            n_gt = (g * weights).sum(axis=1)
            expected.append([(n_pred > 0).sum(), n_inter.sum(), (n_pred - n_inter).sum(), (n_gt - n_inter).sum(),
                             (n_inter[n_pred > 0] / n_pred[n_pred > 0]).sum(),
                             (n_inter[n_gt > 0] / n_gt[n_gt > 0]).sum()])
        np.testing.assert_allclose(_sums(taus, g, pred, w), expected, rtol=1e-12, atol=1e-12)


def test_no_prediction_above_any_threshold_gives_nan():
    h = Hierarchy.from_edges([("r", "a")])
    assert np.isnan(fmax([[0.0, 0.0]], [[1, 1]], h).value)


@settings(max_examples=40, deadline=None)
@given(h=dags(max_classes=8), data=st.data())
def test_propagate_max_is_the_max_over_descendants(h, data):
    from hmcpgm.metrics import propagate_max

    m = data.draw(st.integers(1, 4))
    s = np.array(data.draw(st.lists(st.lists(st.floats(0, 1), min_size=h.n_classes, max_size=h.n_classes),
                                    min_size=m, max_size=m)))
    expected = np.column_stack([s[:, [h.index(c), *h.indices(h.descendants(c))]].max(axis=1) for c in h.classes])
    np.testing.assert_array_equal(propagate_max(s, h), expected)


def test_no_term_of_positive_ia_gives_zero_weighted_metrics():
    # cafaeval evaluates no term then: every weighted count is 0, so f_w = s_w = 0 at every threshold
    h = Hierarchy.from_edges([("r", "a"), ("r", "b")])
    s, y = [[0.9, 0.8, 0.1], [0.6, 0.3, 0.5]], [[1, 1, 0], [1, 0, 1]]
    assert weighted_fmax(s, y, h, ia=[0, 0, 0]).value == 0.0
    assert smin(s, y, h, ia=[0, 0, 0]).value == 0.0


@settings(max_examples=60, deadline=None)
@given(h=dags(max_classes=9), data=st.data())
def test_propagated_auprc_is_average_precision_of_the_propagated_values(h, data):
    """Independent reference: average_precision (checked against scikit-learn) on propagate_max's values and the
    closed labels, with ties (values on a coarse grid) and blocks of one to a few rows."""
    from hmcpgm.metrics import _cafa, average_precision, propagate_max, propagated_auprc

    m = data.draw(st.integers(1, 12))
    values = np.array(data.draw(st.lists(st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.9, 1.0]), min_size=m * h.n_classes,
                                         max_size=m * h.n_classes))).reshape(m, h.n_classes)
    labels = np.array(data.draw(st.lists(st.integers(0, 1), min_size=m * h.n_classes,
                                         max_size=m * h.n_classes))).reshape(m, h.n_classes)
    exclude_roots = data.draw(st.booleans())
    block_cells = data.draw(st.integers(1, 3 * h.n_classes))
    closed, kept = h.close_labels(labels), np.ones(h.n_classes, bool)
    if exclude_roots:
        kept[h.root_indices] = False
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_cafa, "_AP_BLOCK_CELLS", block_cells)
        if not kept.any() or not closed[:, kept].any():
            with pytest.raises((LabelError, InputError)):
                propagated_auprc(values, labels, h, exclude_roots=exclude_roots)
            return
        got = propagated_auprc(values, labels, h, exclude_roots=exclude_roots)
    expected = average_precision(propagate_max(values, h), closed, h, exclude_roots=exclude_roots)
    assert got == pytest.approx(expected, rel=1e-12)


def _propagated_sum(seed):
    from hmcpgm.metrics import propagate_max

    h = Hierarchy.from_edges([("r", "a"), ("r", "b"), ("a", "c"), ("b", "c")], classes=["c", "a", "r", "b"])
    return float(propagate_max(np.random.default_rng(seed).random((50, 4)), h).sum())


@pytest.mark.skipif(sys.platform != "linux", reason="fork is the default start method on Linux only")
def test_the_metrics_are_safe_before_a_fork():
    """A parallel (OpenMP) propagate_max made a forked child stop with 'fork() called from a process already
    using GNU OpenMP' and the pool hang, after any CAFA metric had run in the parent."""
    import multiprocessing

    first = _propagated_sum(0)
    with multiprocessing.get_context("fork").Pool(2) as pool:
        assert pool.map_async(_propagated_sum, [0, 1]).get(timeout=120)[0] == first
