"""Edge cases of cutoffs, the recalibration map and the ranking metrics."""

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import average_precision_score, f1_score, precision_score, recall_score
from strategies import hierarchies, value_matrices

from hmcpgm import CutoffWarning, Hierarchy, InputError, bayes_cutoff, choose_cutoff, hier_rank, naive_sort
from hmcpgm.calibration import fit_recalibration
from hmcpgm.metrics import average_precision, pr_curve, precision_recall_at


@pytest.fixture
def chain():
    return Hierarchy.from_parents([None, 0])


# ---------------------------------------------------------------------- metrics of rankings
def test_precision_recall_at_without_events_is_nan(chain):
    # zero objects: no event to call, so precision and recall are 0 / 0
    ranking = hier_rank(np.zeros((0, 2)), chain)
    precision, recall = precision_recall_at(ranking, np.zeros((0, 2)), 0.5)
    assert np.isnan(precision) and np.isnan(recall)
    precision, recall = precision_recall_at(ranking, np.zeros((0, 2)), [0.1, 1.0])
    assert precision.shape == (2,) and np.isnan(precision).all() and np.isnan(recall).all()


# ---------------------------------------------------------------------- Bayesian route
def test_bayes_max_f1_with_every_mlpr_zero_calls_nothing(chain):
    # every event is surely negative: the expected F1 is 0 at every r >= 1, and calling
    # an event whose mLPR is 0 is a sure false positive; the cutoff calls nothing
    mlpr = np.zeros((3, 2))
    cut = bayes_cutoff(hier_rank(mlpr, chain), mlpr, rule="max_f1")
    assert cut.rank == 0 and cut.threshold == np.inf
    assert np.isnan(cut.f1) and np.isnan(cut.precision)


def test_bayes_max_f1_with_one_positive_mlpr_calls_it(chain):
    mlpr = np.array([[0.0, 0.0], [1e-9, 0.0], [0.0, 0.0]])
    cut = bayes_cutoff(hier_rank(mlpr, chain), mlpr, rule="max_f1")
    assert cut.rank == 1 and cut.f1 == pytest.approx(2e-9 / (1 + 1e-9))


# ---------------------------------------------------------------------- recalibration map
@pytest.mark.parametrize("prior_count", [-1.0, np.nan, np.inf, "2"])
def test_fit_recalibration_refuses_a_bad_prior_count(prior_count):
    # a negative count made knots of -inf, NaN gave a map of NaN: both silently
    with pytest.raises(InputError, match="prior_count"):
        fit_recalibration([0.1, 0.5, 0.9], [0, 1, 1], prior_count=prior_count)


@pytest.mark.parametrize("prior_rate", ["0.5", [0.5]])
def test_fit_recalibration_refuses_a_prior_rate_that_is_not_a_number(prior_rate):
    with pytest.raises(InputError, match="prior_rate"):
        fit_recalibration([0.1, 0.5, 0.9], [0, 1, 1], prior_count=1.0, prior_rate=prior_rate)


def test_recalibration_is_exact_on_the_top_block_and_close_above_other_boundaries():
    # what fit_recalibration's docstring promises, against sklearn's isotonic blocks
    from sklearn.isotonic import IsotonicRegression

    rng = np.random.default_rng(2)
    p = rng.random(400)
    y = (rng.random(400) < p ** 2).astype(int)
    g = fit_recalibration(p, y)
    order = np.argsort(-p, kind="stable")
    fitted = IsotonicRegression().fit(p, y).predict(p)[order]
    top = int(np.flatnonzero(fitted != fitted[0])[0])
    assert g(p[order[:top]]).sum() == pytest.approx(y[order[:top]].sum(), abs=1e-9)
    for b in np.flatnonzero(np.diff(fitted)) + 1:
        assert abs(g(p[order[:b]]).mean() - y[order[:b]].mean()) < 0.1
    small = fit_recalibration([0.1, 0.3, 0.32, 0.5], [0, 1, 0, 1])  # the docstring's example
    assert 1 - small([0.3, 0.32, 0.5]).mean() == pytest.approx(0.332, abs=5e-4)


# ---------------------------------------------------------------------- AU(PRC)
def test_average_precision_of_one_class_named_by_a_string():
    # classes="ab" evaluated the classes "a" and "b" (the string's letters)
    h = Hierarchy.from_edges([("r", "a"), ("r", "b"), ("r", "ab")])
    values = np.array([[0.9, 0.8, 0.1, 0.7], [0.7, 0.3, 0.6, 0.2]])
    labels = np.array([[1, 1, 0, 0], [1, 0, 1, 1]])
    assert average_precision(values, labels, h, classes="ab") == average_precision(values, labels, h, classes=["ab"])
    assert average_precision(values, labels, h, classes=["ab"]) == average_precision_score([0, 1], [0.7, 0.2])


def test_average_precision_with_no_class_left_says_so():
    # every class of a flat hierarchy is a root: the error said "no positive" of labels that had some
    flat = Hierarchy.from_edges([], classes=["a", "b"])
    with pytest.raises(InputError, match="no class.*exclude_roots=False"):
        average_precision([[0.1, 0.2]], [[1, 0]], flat)
    assert average_precision([[0.1, 0.2]], [[1, 0]], flat, exclude_roots=False) == average_precision_score([1, 0],
                                                                                                        [0.1, 0.2])


# ---------------------------------------------------------------------- properties against brute force
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_cutoffs_equal_brute_force_on_random_dags(data):
    # DAGs with shuffled columns, values on a coarse grid (many ties, exact 0 and 1)
    h = data.draw(hierarchies(max_classes=7))
    p = data.draw(value_matrices(h.n_classes, max_objects=4, ties=True, low=0.0, high=1.0))
    y = data.draw(st.lists(st.integers(0, 1), min_size=p.size, max_size=p.size))
    y = h.close_labels(np.asarray(y).reshape(p.shape))
    alpha = data.draw(st.sampled_from([0.01, 0.1, 0.25, 0.5, 0.99]))
    ranking = hier_rank(p, h)
    order = np.asarray(ranking)
    ranked_p, ranked_y = p.ravel()[order], y.ravel()[order]
    n = p.size
    # Bayesian FDR: the largest r whose mean of (1 - p) over the top r is <= alpha
    fdr = [np.mean(1 - ranked_p[:r]) for r in range(1, n + 1)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CutoffWarning)
        cut = bayes_cutoff(ranking, p, alpha=alpha)
    assert cut.rank == max([r for r in range(1, n + 1) if fdr[r - 1] <= alpha + 1e-12], default=0)
    assert h.violations(ranking.top(cut.rank)) == 0
    # expected F1 by hand; the smallest r of the largest value (0 when every value is 0)
    ef1 = [2 * ranked_p[:r].sum() / (r + p.sum()) for r in range(1, n + 1)]
    best = bayes_cutoff(ranking, p, rule="max_f1").rank
    assert (best == 0) == (max(ef1) == 0)
    if best:  # prefixes whose F1 ties in exact arithmetic may differ in the last bit: compare up to rounding
        assert ef1[best - 1] == pytest.approx(max(ef1)) and all(e < max(ef1) - 1e-12 for e in ef1[:best - 1])
    if not y.any():
        return
    # validation route against sklearn's F1 and precision of every prefix
    f1 = [f1_score(y.ravel(), ranking.top(r).ravel()) for r in range(1, n + 1)]
    cut = choose_cutoff(ranking, y)
    assert f1[cut.rank - 1] == pytest.approx(max(f1)) and all(f < max(f1) - 1e-12 for f in f1[:cut.rank - 1])
    precision = [precision_score(y.ravel(), ranking.top(r).ravel()) for r in range(1, n + 1)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CutoffWarning)
        cut = choose_cutoff(ranking, y, rule="fdr", alpha=alpha)
    assert cut.rank == max([r for r in range(1, n + 1) if 1 - precision[r - 1] <= alpha + 1e-12], default=0)
    if cut.rank:
        assert cut.precision == pytest.approx(ranked_y[:cut.rank].mean())


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_metrics_equal_sklearn_with_ties(data):
    h = data.draw(hierarchies(max_classes=6))
    s = data.draw(value_matrices(h.n_classes, max_objects=6, ties=True, low=0.0, high=1.0))
    y = np.asarray(data.draw(st.lists(st.integers(0, 1), min_size=s.size, max_size=s.size))).reshape(s.shape)
    cols = [k for k in range(h.n_classes) if k not in set(h.root_indices)]
    if cols and y[:, cols].any():
        assert average_precision(s, y, h) == pytest.approx(
            average_precision_score(y[:, cols].ravel(), s[:, cols].ravel()), abs=1e-12)
    if y.any():
        ranking = naive_sort(s, h)
        precision, recall = pr_curve(ranking, y)
        top = [ranking.top(r).ravel() for r in range(1, s.size + 1)]
        np.testing.assert_allclose(precision, [precision_score(y.ravel(), t, zero_division=0) for t in top])
        np.testing.assert_allclose(recall, [recall_score(y.ravel(), t) for t in top])


def test_fit_recalibration_aligns_two_dataframes_by_class_name():
    # the labels' columns in another order paired each probability with another class's label
    rng = np.random.default_rng(0)
    p = pd.DataFrame(rng.random((200, 3)), columns=["a", "b", "c"])
    p["c"] *= 0.1
    y = pd.DataFrame((rng.random((200, 3)) < p.to_numpy()).astype(int), columns=["a", "b", "c"])
    reference = fit_recalibration(p.to_numpy(), y.to_numpy())
    shuffled = fit_recalibration(p, y[["c", "b", "a"]])
    np.testing.assert_array_equal(shuffled.knots_x, reference.knots_x)
    np.testing.assert_array_equal(shuffled.knots_y, reference.knots_y)
    with pytest.raises(InputError, match="row indexes"):
        fit_recalibration(p, y.iloc[::-1])


def test_recalibration_map_of_a_dataframe_is_a_dataframe():
    g = fit_recalibration([0.1, 0.5, 0.9, 0.2], [0, 1, 1, 0])
    p = pd.DataFrame([[0.1, 0.7], [0.95, 0.3]], columns=["b", "a"], index=["x", "y"])
    out = g(p)
    assert isinstance(out, pd.DataFrame) and out.index.equals(p.index) and out.columns.equals(p.columns)
    np.testing.assert_array_equal(out.to_numpy(), g(p.to_numpy()))


# ---------------------------------------------------------------------- MLPR.decide
def test_decide_refuses_mlpr_that_are_not_numbers_in_one_line():
    from hmcpgm import MLPR

    h = Hierarchy.from_parents([None, 0])
    rng = np.random.default_rng(0)
    y = h.close_labels((rng.random((60, 2)) < 0.5).astype(int))
    model = MLPR(hierarchy=h, version="indpt").fit(y + rng.normal(0, 1, y.shape), y)
    for bad in ([["a", "b"]], [[0.1, [0.2]]]):
        with pytest.raises(InputError, match="mlpr"):
            model.decide(bad)
    assert model.decide([[0.9, 0.2]]).tolist() == [[1, 0]]


# ---------------------------------------------------------------------- arguments that are not numbers
_JUNK = [[["a", "b"]], [[0.1, [0.2]]]]


@pytest.mark.parametrize("bad", _JUNK)
def test_metrics_and_cutoffs_refuse_junk_in_one_line(bad):
    # numpy's ValueError escaped from every function below instead of an error naming the argument
    from hmcpgm.metrics import auprc_per_class, f1_score, hit_curve, precision_at_recall

    calls = {
        "values": [lambda: average_precision(bad, [[1, 0]], exclude_roots=False),
                   lambda: auprc_per_class(bad, [[1, 0]]), lambda: precision_at_recall(bad, [[1, 0]])],
        "labels": [lambda: average_precision([[0.1, 0.2]], bad, exclude_roots=False),
                   lambda: choose_cutoff([0, 1], bad), lambda: hit_curve([0, 1], bad)],
        "decisions": [lambda: f1_score(bad, [[1, 0]])],
        "kappa": [lambda: precision_recall_at([0, 1], [[1, 0]], bad)],
        "mlpr": [lambda: bayes_cutoff([0, 1], bad)],
        "p": [lambda: fit_recalibration(bad, [[1, 0]])],
        "y": [lambda: fit_recalibration([[0.1, 0.2]], bad)],
    }
    for name, fs in calls.items():
        for f in fs:
            with pytest.raises(InputError, match=name):
                f()


def test_a_class_every_training_row_has_stays_out_of_both_recalibration_maps(monkeypatch):
    # its events (mLPR 1 - 1e-12, label 1) would join the top isotonic block and lift the uncertain
    # events there toward its rate of 1: the Bayesian FDR cutoff then over-called on a DAG whose root
    # column every object has (bench/fdr_noisy_dag.py)
    import hmcpgm.selection._auto as auto
    from hmcpgm import MLPR
    from hmcpgm.estimator import HELD_OUT_PRIOR_COUNT

    rng = np.random.default_rng(0)
    h = Hierarchy.from_parents([None, 0, 0, 1, 2])  # class 0: every row has it
    m = 400
    y = np.zeros((m, 5), int)
    y[:, 0] = 1
    y[:, 1] = rng.random(m) < 0.5
    y[:, 2] = rng.random(m) < 0.4
    y[:, 3] = y[:, 1] & (rng.random(m) < 0.5)
    y[:, 4] = y[:, 2] & (rng.random(m) < 0.5)
    s = y + rng.normal(scale=0.8, size=y.shape)
    seen = []
    real = auto.fit_recalibration
    monkeypatch.setattr(auto, "fit_recalibration", lambda p, labels: seen.append(p.shape) or real(p, labels))
    model = MLPR(hierarchy=h, version="indpt", cv=3, stack=None).fit(s[:300], y[:300])
    assert seen == [(300, 4)]  # the cross-fitted map: the four classes whose labels vary
    held_p = model._mlpr(model._check_X(s[300:]))
    assert np.all(held_p[:, 0] > 1 - 1e-9)  # the model is certain of class 0
    model.fit_recalibration(s[300:], y[300:])
    prior = model.crossfit_recalibration_
    expected = fit_recalibration(held_p[:, 1:], y[300:, 1:], prior_count=HELD_OUT_PRIOR_COUNT, prior_rate=prior)
    with_root = fit_recalibration(held_p, y[300:], prior_count=HELD_OUT_PRIOR_COUNT, prior_rate=prior)
    grid = np.linspace(0, 1, 201)
    np.testing.assert_array_equal(model.recalibration_(grid), expected(grid))
    assert not np.array_equal(with_root(grid), expected(grid))  # the column would have moved the map


def test_a_class_every_training_row_has_takes_its_training_rate_through_the_recalibration():
    """Out of the map, such a class still took the map's top rate: 0.88 in a review's FunCat-shaped case
    (audit36), where it headed the ranking, and the Bayesian FDR cutoff called nothing at alpha 0.05 and 0.1
    though 228 of its events were certain. It takes its training rate, 1, in calibrated_proba, the chunked
    predict_proba and the benchmark alike."""
    from dataclasses import replace

    from hmcpgm import MLPR
    from hmcpgm.calibration import RecalibrationMap
    from hmcpgm.scale import predict_stream

    rng = np.random.default_rng(0)
    h = Hierarchy.from_parents([1, None, 1, 0])  # class 1, the root, is in every row; columns not topological
    m = 400
    y = np.zeros((m, 4), int)
    y[:, 1] = 1
    y[:, 0] = rng.random(m) < 0.5
    y[:, 2] = rng.random(m) < 0.4
    y[:, 3] = y[:, 0] & (rng.random(m) < 0.5)
    s = y + rng.normal(scale=0.8, size=y.shape)
    model = MLPR(hierarchy=h, version="indpt", cv=3).fit(s[:300], y[:300])
    top = RecalibrationMap(np.array([0.0, 1.0]), np.array([0.0, 0.88]))  # a map whose top rate is 0.88
    model.second_stage_ = replace(model.second_stage_, recalibration=top)
    p = model.predict_proba(s[300:])
    calibrated = model.calibrated_proba(s[300:])
    assert np.all(calibrated[:, 1] == 1.0)  # certain: its training rate, not 0.88
    np.testing.assert_array_equal(calibrated[:, [0, 2, 3]], top(p[:, [0, 2, 3]]))
    chunks = predict_stream(model, s[300:], chunk_size=37, calibrated=True)  # what 'hmcpgm predict' writes
    np.testing.assert_array_equal(np.vstack([block for block, _ in chunks]), calibrated)
    cut = bayes_cutoff(hier_rank(p, h), calibrated, alpha=0.05)
    assert cut.rank >= 100  # the root's 100 certain events are called


@pytest.mark.parametrize("version", ["indpt", "nbh"])
def test_calibrated_values_keep_the_hierarchys_order_beside_a_class_every_row_has(version):
    """Kept at its mLPR (below 1 under nbh's prior), a class every row has fell below its children's mapped
    values, and predict called a child without it (a review, audit37); a class no row has (allow_empty) rose
    above its mapped parent. At 1 and 0 the order holds."""
    from hmcpgm import MLPR

    rng = np.random.default_rng(0)
    h = Hierarchy.from_parents([None, 0, 0, 0, 1, 1, 4])  # class 6 (below 4): no training row has it
    y = np.zeros((600, 7), int)
    y[:, 0] = 1
    y[:, 1:4] = rng.random((600, 3)) < 0.3
    y[:, 4:6] = y[:, [1]] & (rng.random((600, 2)) < 0.5)
    s = rng.normal(1.0 * y, 1.0)
    model = MLPR(hierarchy=h, version=version, tempering=None, consistency="hierrank", pool=None, cv=3,
                 allow_empty=True).fit(s, y)
    assert list(model.second_stage_.certain_classes()) == [0, 6]
    new = rng.normal(1.0 * (rng.random((2000, 7)) < 0.3), 1.0)
    calibrated = model.calibrated_proba(new)
    assert np.all(calibrated[:, 0] == 1.0) and np.all(calibrated[:, 6] == 0.0)
    # the edges of the two certain classes keep their order (the others are as the mLPRs are)
    assert np.all(calibrated[:, 1:4] <= calibrated[:, [0]]) and np.all(calibrated[:, 6] <= calibrated[:, 4])
    for threshold in (0.5, 0.9, 0.99999):
        assert h.violations(model.set_params(threshold=threshold).predict(new)) == 0


def test_complex_posteriors_are_refused_by_the_bayesian_cutoff_as_hier_rank_refuses_them():
    # numpy dropped the imaginary part with a ComplexWarning and the cutoff was chosen on the real part
    from hmcpgm.decision import estimated_fdr, expected_f1

    h = Hierarchy.from_parents([None, 0])
    v = np.array([[0.9, 0.8], [0.3, 0.1]])
    r = hier_rank(v, h)
    for call in (lambda p: bayes_cutoff(r, p, alpha=0.3), lambda p: estimated_fdr(r, p), lambda p: expected_f1(r, p)):
        with pytest.raises(InputError, match="mlpr must be real numbers"):
            call(v + 0.5j)


def test_fit_recalibration_refuses_a_dataframe_beside_an_array_of_several_columns():
    # the columns of a DataFrame p were paired with an array y by position, whatever their names
    rng = np.random.default_rng(0)
    p = pd.DataFrame(rng.random((200, 3)), columns=["a", "b", "c"])
    y = (rng.random((200, 3)) < p.to_numpy()).astype(int)
    for args in ((p[["c", "a", "b"]], y), (p.to_numpy(), pd.DataFrame(y, columns=["a", "b", "c"]))):
        with pytest.raises(InputError, match="DataFrame but . is not"):
            fit_recalibration(*args)
    expect = fit_recalibration(p, pd.DataFrame(y, columns=["a", "b", "c"]))
    again = fit_recalibration(p[["c", "a", "b"]], pd.DataFrame(y, columns=["a", "b", "c"]))
    np.testing.assert_array_equal(again.knots_y, expect.knots_y)
    np.testing.assert_array_equal(fit_recalibration(p[["a"]], y[:, :1]).knots_y, fit_recalibration(p.to_numpy()[:, :1],
                                                                                                   y[:, :1]).knots_y)
