import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hmcpgm import (
    Cutoff,
    CutoffWarning,
    Hierarchy,
    InputError,
    Ranking,
    bayes_cutoff,
    choose_cutoff,
    estimated_fdr,
    expected_f1,
    f1_score,
    fdp,
    hier_rank,
)


def ranking(order, m, k, block_means=None):
    """A Ranking of an (m, k) matrix with columns named 0..k-1."""
    return Ranking(order, m, tuple(range(k)), block_means=block_means)


# ---------------------------------------------------------------------- validation route, by hand
def test_max_f1_hand_worked():
    # ranked labels 1 0 1 1 0 0 1 0, P = 4; F1(r) = 2 TP(r) / (r + 4):
    # r:  1    2    3    4    5    6    7    8
    # TP: 1    1    2    3    3    3    4    4
    # F1: 2/5  2/6  4/7  6/8  6/9  6/10 8/11 8/12  -> max 6/8 = .75 at r = 4 (8/11 = .727)
    labels = np.array([[1, 0, 1, 1], [0, 0, 1, 0]])
    cut = choose_cutoff(np.arange(8), labels)
    assert (cut.rank, cut.n_events, cut.kappa) == (4, 8, 0.5)
    assert cut.f1 == pytest.approx(0.75)
    assert cut.precision == pytest.approx(0.75) and cut.recall == pytest.approx(0.75)
    assert np.isnan(cut.threshold)  # no values given


def test_max_f1_ties_take_the_smallest_rank():
    # ranked labels 1 0 1 0, P = 2: F1 = 2/3, 2/4, 4/5, 4/6 -> r = 3;
    # ranked labels 1 0 0 1, P = 2: F1 = 2/3, 2/4, 2/5, 4/6 -> tie 2/3 at r = 1 and r = 4: r = 1
    assert choose_cutoff(np.arange(4), [[1, 0, 1, 0]]).rank == 3
    assert choose_cutoff(np.arange(4), [[1, 0, 0, 1]]).rank == 1


def test_target_fdr_hand_worked():
    # ranked labels 1 1 0 1 1 0 0 1 0 0
    # r:    1  2  3    4    5    6    7    8    9    10
    # FP:   0  0  1    1    1    2    3    3    4    5
    # FDP:  0  0  .333 .25  .2   .333 .429 .375 .444 .5
    labels = np.array([[1, 1, 0, 1, 1], [0, 0, 1, 0, 0]])
    order = np.arange(10)
    expected = {0.1: 2, 0.2: 5, 0.25: 5, 0.4: 8, 0.45: 9, 0.5: 10}
    for alpha, r in expected.items():
        cut = choose_cutoff(order, labels, rule="fdr", alpha=alpha)
        assert cut.rank == r, alpha
        assert cut.alpha == alpha and cut.rule == "fdr" and cut.source == "labels"
    # the largest prefix, not the first one that fails: .2 is met again at r = 5 after r = 3 fails
    assert choose_cutoff(order, labels, rule="fdr", alpha=0.2).precision == pytest.approx(0.8)


def test_target_fdr_unreachable_warns_and_cuts_nothing():
    with pytest.warns(CutoffWarning, match="no prefix") as record:
        cut = choose_cutoff(np.arange(4), [[0, 1, 1, 1]], rule="fdr", alpha=0.2)
    assert record[0].filename == __file__  # attributed to the caller, not to hmcpgm
    assert cut.rank == 0 and cut.threshold == np.inf and np.isnan(cut.precision)
    np.testing.assert_array_equal(cut.apply(ranking(np.arange(4), 1, 4)), np.zeros((1, 4)))


@pytest.mark.parametrize("seed", range(10))
def test_cutoffs_match_brute_force_scan(seed):
    rng = np.random.default_rng(seed)
    m, k = int(rng.integers(2, 8)), int(rng.integers(1, 6))
    labels = (rng.random((m, k)) < rng.uniform(0.2, 0.8)).astype(int)
    labels[0, 0] = 1
    order = rng.permutation(m * k)
    f1s, fdps = [], []
    for r in range(1, m * k + 1):  # one decision matrix per prefix, scored independently
        d = ranking(order, m, k).top(r)
        f1s.append(f1_score(d, labels))
        fdps.append(fdp(d, labels))
        assert d.sum() == r and d.ravel()[order[:r]].all()
    best = int(np.argmax(f1s)) + 1
    cut = choose_cutoff(order, labels)
    assert cut.rank == best and cut.f1 == pytest.approx(f1s[best - 1])
    for alpha in (0.05, 0.1, 0.3, 0.6):
        ok = [r for r in range(1, m * k + 1) if fdps[r - 1] <= alpha]
        with pytest.warns(CutoffWarning) if not ok else _no_warning():
            cut = choose_cutoff(order, labels, rule="fdr", alpha=alpha)
        assert cut.rank == (max(ok) if ok else 0)
        if ok:
            assert 1 - cut.precision == pytest.approx(fdps[cut.rank - 1])


class _no_warning:
    def __enter__(self):
        import warnings

        self._catch = warnings.catch_warnings()
        self._catch.__enter__()
        warnings.simplefilter("error")

    def __exit__(self, *exc):
        return self._catch.__exit__(*exc)


# ---------------------------------------------------------------------- transfer to new objects
@pytest.mark.parametrize("seed", range(5))
def test_threshold_transfer_reproduces_the_top_r(seed):
    rng = np.random.default_rng(seed)
    values = rng.random((20, 6))  # continuous: no ties
    labels = (rng.random((20, 6)) < values).astype(int)
    order = ranking(np.argsort(-values.ravel(), kind="stable"), 20, 6, block_means=values)
    for cut in (
        choose_cutoff(order, labels),
        choose_cutoff(order, labels, rule="fdr", alpha=0.3),
        choose_cutoff(np.asarray(order), labels, values=values),
    ):
        by_rank = order.top(cut.rank)
        np.testing.assert_array_equal(cut.apply(order, by="threshold"), by_rank)
        np.testing.assert_array_equal(cut.apply(order), by_rank)
        assert cut.rank_for(120) == cut.rank


def test_transfer_by_proportion_rounds_half_up():
    # 3 of 8 events: kappa = .375; 20 events -> 7.5 -> 8; 12 -> 4.5 -> 5; 4 -> 1.5 -> 2; 2 -> .75 -> 1
    cut = choose_cutoff(np.arange(8), [[1, 1, 1, 0, 0, 0, 0, 0]])
    assert cut.rank == 3
    assert [cut.rank_for(n) for n in (20, 12, 4, 2, 0)] == [8, 5, 2, 1, 0]
    new = cut.apply(ranking(np.arange(20)[::-1], 4, 5))
    np.testing.assert_array_equal(new.ravel(), np.r_[np.zeros(12), np.ones(8)])


def test_transfer_by_proportion_rounds_exact_halves_up_in_exact_arithmetic():
    # rank / n * n_new rounded half up, in fractions; in floating point 0.7 * 45 = 31.4999... went down to 31
    from fractions import Fraction

    from hmcpgm.decision import Cutoff

    for n in range(1, 41):
        for r in range(n + 1):
            cut = Cutoff("max_f1", "labels", None, r, n, 1.0, 0.5, 0.5, 0.5)
            for n_new in range(0, 120, 7):
                exact = Fraction(r * n_new, n) + Fraction(1, 2)
                assert cut.rank_for(n_new) == exact.numerator // exact.denominator, (r, n, n_new)
    assert Cutoff("max_f1", "labels", None, 7, 10, 1.0, 0.5, 0.5, 0.5).rank_for(45) == 32


# ---------------------------------------------------------------------- Bayesian route
def test_bayes_hand_worked():
    p = np.array([[0.95, 0.3], [0.85, 0.6]])
    order = np.argsort(-p.ravel(), kind="stable")  # .95 .85 .6 .3
    # estimated FDR: .05, .1, (.05+.15+.4)/3 = .2, (.6+.7)/4 = .325
    np.testing.assert_allclose(estimated_fdr(order, p), [0.05, 0.1, 0.2, 0.325])
    # expected F1 = 2 cumsum / (r + 2.7): 1.9/3.7, 3.6/4.7, 4.8/5.7, 5.4/6.7
    np.testing.assert_allclose(expected_f1(order, p), [1.9 / 3.7, 3.6 / 4.7, 4.8 / 5.7, 5.4 / 6.7])
    assert bayes_cutoff(order, p, alpha=0.1).rank == 2
    assert bayes_cutoff(order, p, alpha=0.25).rank == 3
    cut = bayes_cutoff(order, p, rule="max_f1")
    assert cut.rank == 3 and cut.f1 == pytest.approx(4.8 / 5.7)
    assert cut.threshold == 0.6 and cut.source == "posterior"
    assert cut.recall == pytest.approx(2.4 / 2.7)


def draws(p, n_draws, rng):
    """Labels drawn independently, Y ~ Bernoulli(p), one row per draw."""
    return (rng.random((n_draws, p.size)) < p.ravel()).astype(np.int64)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("alpha", [0.05, 0.1, 0.2])
def test_bayes_fdr_matches_realised_fdp_on_model_data(seed, alpha):
    rng = np.random.default_rng(seed)
    p = rng.beta(0.5, 0.5, size=(400, 5))
    order = np.argsort(-p.ravel(), kind="stable")
    cut = bayes_cutoff(order, p, alpha=alpha)
    r = cut.rank
    assert r > 50
    est = estimated_fdr(order, p)
    assert est[r - 1] <= alpha < est[r]  # largest r: p is sorted, so the curve increases
    y = draws(p, 400, rng)[:, order[:r]]
    realised = 1 - y.mean(axis=1)  # FDP of the top r in each draw
    p_top = p.ravel()[order[:r]]
    # the mean of 400 FDPs has standard error sqrt(sum p(1-p)) / r / sqrt(400);
    # allow 4 standard errors, and the estimate sits within one event of alpha
    se = np.sqrt(np.sum(p_top * (1 - p_top))) / r / np.sqrt(400)
    assert abs(realised.mean() - est[r - 1]) <= 4 * se
    assert abs(realised.mean() - alpha) <= 4 * se + (est[r] - est[r - 1])


@pytest.mark.parametrize("seed", range(3))
def test_estimated_fdr_is_the_expected_fdp_for_any_fixed_order(seed):
    # holds for every prefix of any ranking chosen without looking at the labels
    rng = np.random.default_rng(seed)
    p = rng.beta(0.7, 0.7, size=(50, 4))
    order = rng.permutation(p.size)
    y = draws(p, 2000, rng)[:, order]
    r = np.arange(1, p.size + 1)
    realised = 1 - np.cumsum(y, axis=1) / r  # (draws, n)
    p_sorted = p.ravel()[order]
    se = np.sqrt(np.cumsum(p_sorted * (1 - p_sorted))) / r / np.sqrt(2000)
    # 200 prefixes: 5 standard errors keeps a false alarm below ~1e-4
    assert np.all(np.abs(realised.mean(axis=0) - estimated_fdr(order, p)) <= 5 * se)


@pytest.mark.parametrize("seed", range(3))
def test_expected_f1_matches_realised_f1_on_model_data(seed):
    rng = np.random.default_rng(seed)
    p = rng.beta(0.5, 0.5, size=(400, 5))
    order = np.argsort(-p.ravel(), kind="stable")
    y = draws(p, 400, rng)
    ranked = y[:, order]
    r = np.arange(1, p.size + 1)
    realised = 2 * np.cumsum(ranked, axis=1) / (r + y.sum(axis=1, keepdims=True))  # (draws, n)
    mean_f1 = realised.mean(axis=0)
    se = realised.std(axis=0) / np.sqrt(400)
    # ratio of expectations vs expectation of the ratio: with ~1000 expected positives the
    # delta-method bias is O(1/1000); allow 0.002 on top of 4 standard errors, at every r
    approx = expected_f1(order, p)
    assert np.all(np.abs(approx - mean_f1) <= 4 * se + 0.002)
    cut = bayes_cutoff(order, p, rule="max_f1")
    assert cut.f1 == pytest.approx(approx.max())
    # the chosen r is close to the best r for the realised mean F1
    assert mean_f1[cut.rank - 1] >= mean_f1.max() - 0.005


# ---------------------------------------------------------------------- hierarchy
@st.composite
def hierarchies(draw):
    k = draw(st.integers(1, 9))
    edges = []
    for child in range(1, k):
        parents = draw(st.sets(st.integers(0, child - 1), max_size=min(child, 2)))
        edges += [(p, child) for p in parents]
    h = Hierarchy.from_edges(edges, classes=range(k)) if edges else Hierarchy.from_parents([-1] * k)
    return h


def consistent_values(hierarchy, m, rng):
    """Integer values that strictly decrease from every parent to its child."""
    v = rng.integers(0, 6, size=(m, hierarchy.n_classes))
    for k in hierarchy.topological_order:
        parents = hierarchy.parent_indices[k]
        if len(parents):
            v[:, k] = np.minimum(v[:, k], v[:, parents].min(axis=1) - 1)
    return v


@settings(max_examples=50, deadline=None)
@given(hierarchies(), st.integers(1, 5), st.integers(0, 2**32 - 1))
def test_top_r_of_a_consistent_order_never_violates(h, m, seed):
    rng = np.random.default_rng(seed)
    v = consistent_values(h, m, rng)
    order = Ranking(np.argsort(-v.ravel(), kind="stable"), m, h.classes, block_means=v)
    for r in range(m * h.n_classes + 1):
        assert h.violations(order.top(r)) == 0
    # thresholds on values that never increase down the hierarchy (like block means) too
    for t in np.unique(v):
        cut = Cutoff("max_f1", "labels", None, 1, v.size, 1.0, 1.0, 1.0, float(t))
        assert h.violations(cut.apply(order, by="threshold")) == 0


def test_top_r_of_an_inconsistent_order_can_violate():
    h = Hierarchy.from_edges([("a", "b")])
    assert h.violations(Ranking([1, 0], 1, h.classes).top(1)) == 1  # the child first


def test_hier_rank_decisions_respect_the_hierarchy():
    h = Hierarchy.from_parents([-1, 0, 0, 1, 1, 2, -1, 6])
    rng = np.random.default_rng(0)
    values = rng.random((30, 8))  # not monotone down the hierarchy: NaiveSort would violate
    labels = h.close_labels((rng.random((30, 8)) < 0.5).astype(int))
    order = hier_rank(values, h)
    for r in range(0, values.size + 1, 7):
        assert h.violations(order.top(r)) == 0
    cut = choose_cutoff(order, labels)
    assert h.violations(cut.apply(order)) == 0


@pytest.mark.parametrize(
    "edges",
    [
        [(0, 1), (0, 2), (1, 3), (1, 4), (2, 5), (6, 7)],  # forest
        [(0, 1), (0, 2), (1, 3), (2, 3), (3, 4), (2, 5)],  # DAG: 3 has two parents
    ],
)
def test_block_mean_thresholds_respect_the_hierarchy(edges):
    h = Hierarchy.from_edges(edges)
    rng = np.random.default_rng(1)
    k = h.n_classes
    values, new_values = rng.random((40, k)), rng.random((25, k))
    labels = h.close_labels((rng.random((40, k)) < 0.5).astype(int))
    order = hier_rank(values, h)
    means = order.block_means
    # a cutoff chosen on validation block means moves to new objects by threshold
    for cut in (
        choose_cutoff(order, labels),
        choose_cutoff(order, labels, rule="fdr", alpha=0.3),
    ):
        new_order = hier_rank(new_values, h)
        assert h.violations(cut.apply(new_order, by="threshold")) == 0
        assert h.violations(cut.apply(new_order)) == 0
        # on the validation set itself, the threshold keeps whole blocks: it labels the
        # top r events and then the rest of the block the r-th event is in
        d = cut.apply(order, by="threshold").ravel()
        top = order.top(cut.rank).ravel()
        assert np.all(d >= top)
        assert np.all(means.ravel()[(d == 1) & (top == 0)] == cut.threshold)


# ---------------------------------------------------------------------- bad input
def test_unknown_rule():
    with pytest.raises(InputError, match=r"rule must be one of \['max_f1', 'fdr'\], got 'f2'"):
        choose_cutoff(np.arange(2), [[1, 0]], rule="f2")
    with pytest.raises(InputError, match="rule must be one of"):
        bayes_cutoff(np.arange(2), [[0.9, 0.1]], rule="max_precision")


@pytest.mark.parametrize("alpha", [0, 1, -0.1, 1.5, np.nan, "x", "0.1"])
def test_alpha_outside_unit_interval(alpha):
    with pytest.raises(InputError, match="alpha must"):
        choose_cutoff(np.arange(2), [[1, 0]], rule="fdr", alpha=alpha)
    with pytest.raises(InputError, match="alpha must"):
        bayes_cutoff(np.arange(2), [[0.9, 0.1]], rule="fdr", alpha=alpha)


def test_order_not_a_permutation():
    with pytest.raises(InputError, match="ranking must be a permutation"):
        choose_cutoff([0, 0, 1], [[1, 0, 1]])
    with pytest.raises(InputError, match="ranking must be a permutation"):
        bayes_cutoff([2, 2, 1], [[0.9, 0.1, 0.5]])
    with pytest.raises(InputError, match="order ranks 3 events but the matrix has 4"):
        ranking([0, 1, 2], 2, 2)


def test_labels_shape_mismatch():
    with pytest.raises(InputError, match="ranking ranks 4 events but the matrix has 6"):
        choose_cutoff(np.arange(4), np.ones((2, 3)))
    with pytest.raises(InputError, match="values has 2 columns but the ranking has 3 classes"):
        choose_cutoff(np.arange(6), np.ones((2, 3)), values=np.ones((2, 2)))
    with pytest.raises(InputError, match="labels has 2 columns but the ranking has 3 classes"):
        choose_cutoff(ranking(np.arange(6), 2, 3), np.ones((3, 2)))
    with pytest.raises(
        InputError, match=r"ranking ranks a 2 x 3 matrix but the matrix given with it has shape \(3, 3\)"
    ):
        choose_cutoff(ranking(np.arange(6), 2, 3), np.ones((3, 3)))


def test_nan_values():
    with pytest.raises(InputError, match="mlpr must be finite"):
        bayes_cutoff(np.arange(2), [[0.5, np.nan]])
    with pytest.raises(InputError, match="values must be finite"):
        choose_cutoff(np.arange(2), [[1, 0]], values=[np.nan, 1.0])


def test_mlpr_outside_unit_interval():
    with pytest.raises(InputError, match=r"mlpr must hold posterior probabilities in \[0, 1\], got 1.2"):
        estimated_fdr(np.arange(2), [0.5, 1.2])


def test_no_positive_validation_labels():
    with pytest.raises(InputError, match="labels has no positive event"):
        choose_cutoff(np.arange(3), [[0, 0, 0]])


def test_bad_counts_and_rank():
    with pytest.raises(InputError, match="r must be at most the number of events 4, got 5"):
        ranking(np.arange(4), 2, 2).top(5)
    with pytest.raises(InputError, match="r must be an integer >= 0, got 1.5"):
        ranking(np.arange(4), 2, 2).top(1.5)
    with pytest.raises(InputError, match="n_objects must be an integer >= 0, got -2"):
        Ranking(np.arange(4), -2, (0, 1))


def test_bad_cutoff_application():
    cut = choose_cutoff(np.arange(2), [[1, 0]])  # a plain order: no block means, threshold is nan
    plain = ranking(np.arange(2), 1, 2)
    with pytest.raises(InputError, match="needs a ranking with block means"):
        cut.apply(plain, by="threshold")
    with pytest.raises(InputError, match="needs a cutoff with a threshold"):
        cut.apply(ranking(np.arange(2), 1, 2, block_means=[[0.3, 0.2]]), by="threshold")
    with pytest.raises(InputError, match="by must be 'rank' or 'threshold'"):
        cut.apply(plain, by="value")
    with pytest.raises(TypeError, match="ranking must be an hmcpgm Ranking"):
        cut.apply(np.arange(2))
    assert isinstance(cut, Cutoff)
