import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hmcpgm import (
    Hierarchy,
    InputError,
    LabelError,
    area_under_hit_curve,
    average_precision,
    discovery_proportion,
    f1_score,
    fdp,
    hit_curve,
    pr_curve,
    precision_recall_at,
)


def random_case(seed, m=7, k=5, rate=0.3, levels=None):
    rng = np.random.default_rng(seed)
    labels = (rng.random((m, k)) < rate).astype(int)
    labels[0, 0] = 1  # at least one positive
    values = rng.random((m, k))
    if levels is not None:  # coarse values: many ties
        values = np.round(values * levels) / levels
    order = np.argsort(-values.ravel(), kind="stable")
    return labels, values, order


# ---------------------------------------------------------------------- hit curve
def test_hit_curve_hand_checked():
    labels = np.array([[1, 0, 1], [0, 1, 0]])  # flat: 1 0 1 0 1 0
    order = np.array([4, 1, 0, 5, 2, 3])  # ranked labels: 1 0 1 0 1 0
    np.testing.assert_array_equal(hit_curve(order, labels), [1, 1, 2, 2, 3, 3])


@pytest.mark.parametrize("seed", range(5))
def test_hit_curve_and_area_match_loops(seed):
    labels, _, order = random_case(seed)
    flat = labels.ravel()
    n = flat.size
    hits, running = [], 0
    for e in order:
        running += flat[e]
        hits.append(running)
    np.testing.assert_array_equal(hit_curve(order, labels), hits)
    # raw area = CATCH of the labels: sum over ranks of (n - r + 1) * Y
    catch = sum((n - r + 1) * flat[e] for r, e in enumerate(order, start=1))
    assert area_under_hit_curve(order, labels, normalize=False) == catch


@pytest.mark.parametrize("seed", range(5))
def test_hit_area_rescaled_is_roc_auc(seed):
    from sklearn.metrics import roc_auc_score

    labels, _, order = random_case(seed, m=11, k=4)
    y = labels.ravel()
    n, p = y.size, int(y.sum())
    raw = area_under_hit_curve(order, labels, normalize=False)
    best = p * n - p * (p - 1) / 2  # all positives first
    worst = p * (p + 1) / 2  # all positives last
    rank = np.empty(n)
    rank[order] = np.arange(n)
    assert (raw - worst) / (best - worst) == pytest.approx(roc_auc_score(y, -rank), abs=1e-12)
    assert area_under_hit_curve(order, labels) == pytest.approx(raw / best)


def test_hit_area_perfect_ranking_is_one_and_no_positive_is_nan():
    labels, values, _ = random_case(3)
    perfect = np.argsort(-labels.ravel(), kind="stable")
    assert area_under_hit_curve(perfect, labels) == 1.0
    assert np.isnan(area_under_hit_curve(np.arange(4), np.zeros((2, 2))))


def test_hit_area_equals_ranking_catch_when_available():
    ranking = pytest.importorskip("hmcpgm.ranking")
    if not hasattr(ranking, "catch"):
        pytest.skip("hmcpgm.ranking.catch is not written yet")
    labels, _, order = random_case(4)
    assert area_under_hit_curve(order, labels, normalize=False) == pytest.approx(
        ranking.catch(order, labels.astype(float))
    )


# ---------------------------------------------------------------------- precision / recall
def test_precision_recall_at_rounds_the_written_kappa_half_up():
    """0.7 of 45 events is 31.5, so the top 32; in floating point 0.7 * 45 is 31.4999... (it gave 31)."""
    labels = np.zeros((9, 5), dtype=int)
    labels.flat[31] = 1  # the 32nd event of the ranking is the only positive
    assert precision_recall_at(np.arange(45), labels, 0.7) == (1 / 32, 1.0)
    assert precision_recall_at(np.arange(45), labels, [0.7, 0.68])[1].tolist() == [1.0, 0.0]  # 30.6: 31 events


def test_precision_recall_at_hand_checked_rounding():
    # 10 events, ranked labels 1 1 0 1 0 0 1 0 0 0, P = 4
    labels = np.array([[1, 1, 0, 1, 0], [0, 1, 0, 0, 0]])
    order = np.arange(10)
    # kappa .25 -> 2.5 rounds half up to r = 3: TP 2 -> precision 2/3, recall 2/4
    p, r = precision_recall_at(order, labels, 0.25)
    assert p == pytest.approx(2 / 3) and r == pytest.approx(0.5)
    # kappa .05 -> 0.5 rounds up to r = 1; kappa .01 -> 0.1 -> 0, raised to 1
    for kappa in (0.05, 0.01):
        assert precision_recall_at(order, labels, kappa) == (1.0, 0.25)
    # kappa 1 -> every event: precision 4/10, recall 1
    assert precision_recall_at(order, labels, 1.0) == (0.4, 1.0)
    p, r = precision_recall_at(order, labels, np.array([0.2, 0.4, 0.7]))  # r = 2, 4, 7
    np.testing.assert_allclose(p, [1.0, 0.75, 4 / 7])
    np.testing.assert_allclose(r, [0.5, 0.75, 1.0])


@pytest.mark.parametrize("seed", range(5))
def test_pr_curve_matches_sklearn_at_every_prefix(seed):
    from sklearn.metrics import precision_score, recall_score

    labels, _, order = random_case(seed)
    precision, recall = pr_curve(order, labels)
    y = labels.ravel()
    for r in range(1, y.size + 1):
        pred = np.zeros_like(y)
        pred[order[:r]] = 1
        assert precision[r - 1] == pytest.approx(precision_score(y, pred))
        assert recall[r - 1] == pytest.approx(recall_score(y, pred))
    kappas = np.array([0.05, 0.1, 0.2, 0.3, 0.5])
    p_at, r_at = precision_recall_at(order, labels, kappas)
    r_idx = np.maximum(np.floor(kappas * y.size + 0.5).astype(int), 1) - 1
    np.testing.assert_array_equal(p_at, precision[r_idx])
    np.testing.assert_array_equal(r_at, recall[r_idx])


# ---------------------------------------------------------------------- average precision
@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("levels", [None, 4, 10])
def test_average_precision_equals_sklearn_micro(seed, levels):
    from sklearn.metrics import average_precision_score

    labels, values, _ = random_case(seed, m=30, k=6, levels=levels)
    expected = average_precision_score(labels, values, average="micro")
    assert average_precision(values, labels, exclude_roots=False) == pytest.approx(expected, rel=1e-12)


def test_average_precision_excludes_roots_and_selects_classes():
    from sklearn.metrics import average_precision_score

    h = Hierarchy.from_parents([-1, 0, 0, -1, 3, 4])  # roots: columns 0 and 3
    rng = np.random.default_rng(0)
    values = np.round(rng.random((40, 6)), 1)
    labels = h.close_labels((rng.random((40, 6)) < 0.4).astype(int))
    cols = [1, 2, 4, 5]
    expected = average_precision_score(labels[:, cols], values[:, cols], average="micro")
    assert average_precision(values, labels, h) == pytest.approx(expected, rel=1e-12)
    # roots are the first and fourth columns: including them changes the answer
    everything = average_precision_score(labels, values, average="micro")
    assert average_precision(values, labels, h, exclude_roots=False) == pytest.approx(everything, rel=1e-12)
    # classes by name (with a hierarchy) or by index (without); roots still dropped
    sub = average_precision_score(labels[:, [2, 5]], values[:, [2, 5]], average="micro")
    assert average_precision(values, labels, h, classes=[0, 2, 5]) == pytest.approx(sub, rel=1e-12)
    assert average_precision(values, labels, classes=[2, 5], exclude_roots=False) == pytest.approx(sub, rel=1e-12)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 1), st.integers(0, 5)), min_size=2, max_size=40),
    st.integers(1, 4),
)
def test_average_precision_property_against_sklearn(pairs, k):
    from sklearn.metrics import average_precision_score

    pairs = pairs[: len(pairs) // k * k] or pairs[:1] * k
    y = np.array([p[0] for p in pairs]).reshape(-1, k)
    s = np.array([p[1] for p in pairs], dtype=float).reshape(-1, k) / 5  # heavy ties
    if y.sum() == 0:
        with pytest.raises(LabelError, match="no positive"):
            average_precision(s, y, exclude_roots=False)
        return
    ap = average_precision(s, y, exclude_roots=False)
    assert 0 < ap <= 1
    assert ap == pytest.approx(average_precision_score(y, s, average="micro"), rel=1e-12)


# ---------------------------------------------------------------------- decisions
@pytest.mark.parametrize("seed", range(5))
def test_decision_scores_match_sklearn(seed):
    from sklearn.metrics import f1_score as sk_f1
    from sklearn.metrics import precision_score, recall_score

    rng = np.random.default_rng(seed)
    labels = (rng.random((9, 4)) < 0.4).astype(int)
    labels[0, 0] = 1
    decisions = (rng.random((9, 4)) < 0.5).astype(int)
    decisions[1, 1] = 1
    y, d = labels.ravel(), decisions.ravel()
    assert f1_score(decisions, labels) == pytest.approx(sk_f1(y, d))
    assert fdp(decisions, labels) == pytest.approx(1 - precision_score(y, d))
    assert discovery_proportion(decisions, labels) == pytest.approx(recall_score(y, d))


def test_decision_scores_edge_conventions():
    none = np.zeros((2, 3), int)
    labels = np.array([[1, 0, 0], [0, 0, 0]])
    assert fdp(none, labels) == 0.0  # no discovery: no false discovery
    assert discovery_proportion(none, labels) == 0.0
    assert f1_score(none, labels) == 0.0
    assert np.isnan(discovery_proportion(labels, none))  # no positive: recall undefined
    assert np.isnan(f1_score(none, none))


# ---------------------------------------------------------------------- bad input
def test_order_length_must_match_labels():
    with pytest.raises(InputError, match="ranking ranks 5 events but the matrix has 6"):
        hit_curve(np.arange(5), np.zeros((2, 3)))


def test_order_must_be_a_permutation():
    with pytest.raises(InputError, match="ranking must be a permutation.*missing"):
        pr_curve([0, 1, 1, 3], np.ones((2, 2)))
    with pytest.raises(InputError, match=r"ranking must hold event indices in \[0, 3\]"):
        pr_curve([0, 1, 2, 4], np.ones((2, 2)))


def test_order_must_be_1d_integers():
    with pytest.raises(InputError, match="ranking must be a 1-D array"):
        hit_curve(np.arange(4).reshape(2, 2), np.ones((2, 2)))
    with pytest.raises(InputError, match="ranking must hold integer event indices"):
        hit_curve(np.arange(4.0), np.ones((2, 2)))


def test_labels_must_be_binary_2d():
    with pytest.raises(LabelError, match="labels must hold only 0 and 1"):
        hit_curve(np.arange(4), [[1, 2], [0, 0]])
    with pytest.raises(InputError, match="labels must be a 2-D"):
        hit_curve(np.arange(4), [1, 0, 0, 1])


@pytest.mark.parametrize("kappa", [0, -0.1, 1.5, [0.1, 2.0]])
def test_kappa_outside_unit_interval(kappa):
    with pytest.raises(InputError, match=r"kappa must lie in \(0, 1\]"):
        precision_recall_at(np.arange(4), np.ones((2, 2)), kappa)


def test_kappa_nan():
    with pytest.raises(InputError, match="kappa must be finite"):
        precision_recall_at(np.arange(4), np.ones((2, 2)), np.nan)


def test_average_precision_bad_values():
    labels = np.array([[1, 0], [0, 1]])
    with pytest.raises(InputError, match="values must be finite.*NaN"):
        average_precision([[0.1, np.nan], [0.2, 0.3]], labels, exclude_roots=False)
    with pytest.raises(InputError, match=r"values has shape \(2, 3\) but labels has shape \(2, 2\)"):
        average_precision(np.zeros((2, 3)), labels, exclude_roots=False)


def test_average_precision_roots_need_hierarchy():
    with pytest.raises(InputError, match="exclude_roots=True needs the hierarchy"):
        average_precision(np.zeros((2, 2)), np.eye(2))


def test_average_precision_bad_classes():
    with pytest.raises(InputError, match=r"classes must be column indices in \[0, 1\]"):
        average_precision(np.zeros((2, 2)), np.eye(2), classes=[0, 2], exclude_roots=False)
    h = Hierarchy.from_edges([("a", "b")])
    with pytest.raises(InputError, match="classes must name classes of the hierarchy"):
        average_precision(np.zeros((2, 2)), np.eye(2), h, classes=["zzz"])
    with pytest.raises(InputError, match="values has 3 columns but the hierarchy has 2"):
        average_precision(np.zeros((2, 3)), np.zeros((2, 3)), h)


def test_average_precision_no_positive():
    h = Hierarchy.from_edges([("a", "b")])
    labels = np.array([[1, 0], [1, 0]])  # only the root is ever positive
    with pytest.raises(LabelError, match="no positive among the evaluated classes"):
        average_precision(np.ones((2, 2)), labels, h)


def test_decisions_shape_must_match_labels():
    with pytest.raises(InputError, match=r"decisions has shape \(2, 2\) but labels has shape \(2, 3\)"):
        f1_score(np.ones((2, 2)), np.ones((2, 3)))
    with pytest.raises(LabelError, match="decisions must hold only 0 and 1"):
        fdp([[0.5, 1]], [[1, 1]])


# ---------------------------------------------------------------------- bootstrap of the AU(PRC)
@pytest.mark.parametrize("seed", range(4))
def test_bootstrap_average_precision_is_the_ap_of_the_resampled_rows(seed):
    """Reference: draw the rows as row_bootstrap_weights documents, repeat them, score with average_precision
    (the copies of an event tie, so they enter together)."""
    from hmcpgm.metrics import bootstrap_average_precision

    labels, values, _ = random_case(seed, m=9, k=4, levels=5)
    ranking = hmcpgm_naive_sort(values)
    got = bootstrap_average_precision(ranking, labels, n_resamples=30, seed=seed + 10)
    rng = np.random.default_rng(seed + 10)
    ranks = ranking.ranks.astype(float)
    for b in range(30):
        idx = rng.integers(0, len(labels), len(labels))
        y = labels[idx]
        if y.sum() == 0:
            assert np.isnan(got[b])
            continue
        assert got[b] == pytest.approx(average_precision(-ranks[idx], y, exclude_roots=False), abs=1e-12)


def test_bootstrap_of_two_rankings_with_one_seed_is_paired():
    """The same seed gives the same resamples: a ranking against itself differs by exactly zero, and the
    spread of a paired difference is smaller than the two spreads would give unpaired."""
    from hmcpgm.metrics import bootstrap_average_precision

    rng = np.random.default_rng(3)
    labels = (rng.random((300, 6)) < 0.2).astype(int)
    good = labels + rng.normal(scale=0.8, size=labels.shape)
    close = good + rng.normal(scale=0.1, size=labels.shape)
    a = bootstrap_average_precision(hmcpgm_naive_sort(good), labels, n_resamples=100, seed=1)
    b = bootstrap_average_precision(hmcpgm_naive_sort(close), labels, n_resamples=100, seed=1)
    assert np.array_equal(a, bootstrap_average_precision(hmcpgm_naive_sort(good), labels, n_resamples=100, seed=1))
    assert np.std(a - b) < 0.5 * np.hypot(np.std(a), np.std(b))
    assert not np.array_equal(a, bootstrap_average_precision(hmcpgm_naive_sort(good), labels, n_resamples=100,
                                                             seed=2))


def test_bootstrap_average_precision_with_unit_weights_is_the_ap():
    from hmcpgm.metrics import weighted_average_precisions

    labels, values, order = random_case(5, m=12, k=3)
    t = labels.ravel()[order].astype(float)
    got = weighted_average_precisions(t, order // 3, np.ones((12, 2)))
    assert got == pytest.approx([average_precision(values, labels, exclude_roots=False)] * 2, abs=1e-12)


@pytest.mark.parametrize("bad", [0, -1, 2.5, True])
def test_bootstrap_average_precision_refuses_a_bad_number_of_resamples(bad):
    from hmcpgm.metrics import bootstrap_average_precision

    labels, _, order = random_case(0)
    with pytest.raises(InputError, match="n_resamples"):
        bootstrap_average_precision(order, labels, n_resamples=bad)


def hmcpgm_naive_sort(values):
    """NaiveSort of the values over classes without edges (every class a root)."""
    from hmcpgm import naive_sort

    return naive_sort(values, Hierarchy.from_parents([None] * values.shape[1]))


def test_bootstrap_arguments_are_refused_in_one_line_naming_them():
    """A row number beyond the weights was read from memory past the array (the compiled pass checks nothing)."""
    from hmcpgm.metrics import bootstrap_average_precision, weighted_average_precisions

    t = np.array([0.0, 1.0])
    assert weighted_average_precisions(t, np.array([0, 1]), np.ones((2, 1))).tolist() == [0.5]
    for row in ([5, 1], [-3, 1], [0.0, 1.0]):
        with pytest.raises(InputError, match="row must hold row numbers from 0 to 1"):
            weighted_average_precisions(t, np.array(row), np.ones((2, 1)))
    with pytest.raises(InputError, match="one length"):
        weighted_average_precisions(t, np.array([0]), np.ones((2, 1)))
    with pytest.raises(InputError, match="weights must be a matrix"):
        weighted_average_precisions(t, np.array([0, 1]), np.ones(2))
    labels = np.array([[1, 0, 1], [0, 1, 1]])
    for seed in (-1, "a", 1.5):
        with pytest.raises(InputError, match="seed must be a non-negative int"):
            bootstrap_average_precision(np.arange(6), labels, n_resamples=2, seed=seed)


@pytest.mark.parametrize("metric", ["information_accretion", "average_precision", "auprc_per_class", "fmax",
                                    "precision_recall_at", "hierarchical_f1"])
def test_a_bad_label_in_a_dataframe_is_named_by_its_class(metric):
    """The ranked metrics said 'column 1' for the bad value of class 'B': its position in the hierarchy's
    order, where the DataFrame's column 1 is 'A' (a review, audit35)."""
    import pandas as pd

    from hmcpgm import LabelError, hier_rank, metrics

    h = Hierarchy.from_edges([("A", "B"), ("A", "C")])
    s = pd.DataFrame([[0.9, 0.5, 0.1], [0.2, 0.3, 0.4]], columns=["C", "A", "B"])
    y = pd.DataFrame([[1, 1, 0.5], [0, 0, 0]], columns=["C", "A", "B"])
    call = {"information_accretion": lambda f: f(y, h), "precision_recall_at": lambda f: f(hier_rank(s, h), y, 0.5),
            "hierarchical_f1": lambda f: f(y, y.round(), h)}.get(metric, lambda f: f(s, y, h))
    with pytest.raises(LabelError, match=r"row 0, class 'B' holds 0\.5$"):
        call(getattr(metrics, metric))
