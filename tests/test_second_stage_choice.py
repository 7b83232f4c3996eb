"""The default second stage's new pieces: own evidence, the ranking criterion, the max constraint,
what an FDR cutoff can promise, and the leaderboard's helpers, each against an independent reference."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import dags

from hmcpgm import MLPR, Hierarchy, LabelNetwork, hier_rank
from hmcpgm.applications.evaluation import oracle_rank
from hmcpgm.applications.leaderboard import correction_values, precision_at_recall_levels
from hmcpgm.decision import bayes_cutoff, choose_cutoff, smallest_fdr
from hmcpgm.exceptions import CutoffWarning, InferenceError
from hmcpgm.inference import mlpr_from_likelihoods
from hmcpgm.metrics import average_precision
from hmcpgm.ranking import count_violations
from hmcpgm.second_stage import SecondStage
from hmcpgm.selection import consistent_values, ranked_ap
from hmcpgm.selection._choice import flat_ap, paired_auprc_z
from hmcpgm.tempering import own_evidence, temper


@settings(max_examples=30, deadline=None)
@given(h=dags(max_classes=6), seed=st.integers(0, 10_000), a=st.floats(0.0, 1.0), own=st.floats(0.0, 1.5))
def test_own_evidence_is_the_posterior_with_the_own_factor_at_its_own_strength(h, seed, a, own):
    # reference: for each class k, enumerate the network with k's evidence at `own`, the others' at `a`
    rng = np.random.default_rng(seed)
    net = LabelNetwork(h, rng.uniform(0.1, 0.9, h.n_classes))
    L = rng.uniform(0.05, 4.0, (5, h.n_classes, 2))
    got = own_evidence(mlpr_from_likelihoods(net, temper(L, a), version="full", engine="enumerate"), L, a, own)
    ref = np.empty_like(got)
    for k in range(h.n_classes):
        e = np.full(h.n_classes, a)
        e[k] = own
        ref[:, k] = mlpr_from_likelihoods(net, temper(L, e), version="full", engine="enumerate")[:, k]
    np.testing.assert_allclose(got, ref, atol=1e-12)



def own_reference(net, L, a, own, version="full"):
    """For each class k: the network query with k's evidence at own[k], every other class's at a (enumeration)."""
    k = net.hierarchy.n_classes
    a, own = np.broadcast_to(a, (k,)), np.broadcast_to(own, (k,))
    ref = np.empty(L.shape[:2])
    for j in range(k):
        e = a.copy()
        e[j] = own[j]
        ref[:, j] = mlpr_from_likelihoods(net, temper(L, e), version=version, engine="enumerate")[:, j]
    return ref


def test_own_evidence_of_a_posterior_that_rounded_to_one():
    # the root's ratio 1e20 at a = 1: its posterior is 1 - 1e-20, 1.0 in floats, which was read as hard evidence
    # and kept; at own = 0.1 its odds are 1e2 (0.990099). The second stage asks the network again there
    net = LabelNetwork(Hierarchy.from_parents([None, 0]), [0.5, 0.5])
    L = np.array([[[1e-20, 1.0], [1.0, 1.0]], [[1.0, 2.0], [1.0, 3.0]]])
    a, own = np.array([1.0, 1.0]), np.array([0.1, 0.1])
    ref = own_reference(net, L, a, own)
    assert ref[0, 0] == pytest.approx(100 / 101, abs=1e-12)
    stage = SecondStage(net.hierarchy, "full", a, None, net.theta, own=own, engine="enumerate")
    np.testing.assert_allclose(stage.mlpr(L), ref, atol=1e-12, rtol=0)


@pytest.mark.parametrize("own", [0.001, 0.003, 1.0])
def test_own_evidence_brings_in_hard_evidence_at_a_zero(own):
    # a = 0 (no evidence in the query), hard evidence [0, 1]: at any positive own the class is positive; the
    # infinite log ratio was clamped at 745, and own * 745 gave 0.678 for own = 0.001
    net = LabelNetwork(Hierarchy.from_parents([None, 0, 0]), [0.5, 0.4, 0.7])
    L = np.array([[[0.0, 1.0], [1.0, 2.0], [3.0, 0.0]], [[1.0, 2.0], [0.0, 0.5], [1.0, 1.0]]])
    p0 = mlpr_from_likelihoods(net, temper(L, 0.0), engine="enumerate")
    np.testing.assert_allclose(own_evidence(p0, L, 0.0, own), own_reference(net, L, 0.0, own), atol=1e-12, rtol=0)


@settings(max_examples=40, deadline=None)
@given(h=dags(max_classes=5), seed=st.integers(0, 10_000), a=st.sampled_from([0.0, 0.5, 1.0]),
       own=st.sampled_from([0.0, 0.1, 0.7, 1.5]), version=st.sampled_from(["full", "nbh"]))
def test_second_stage_own_evidence_with_hard_and_overwhelming_evidence(h, seed, a, own, version):
    # hard zeros and ratios of 1e100 (posteriors that round to 1.0) among ordinary evidence: the second stage's
    # answer is the network's with each class's evidence at its own exponent
    from hypothesis import assume

    rng = np.random.default_rng(seed)
    net = LabelNetwork(h, rng.uniform(0.1, 0.9, h.n_classes))
    L = rng.uniform(0.05, 4.0, (4, h.n_classes, 2))
    kind = rng.integers(0, 5, L.shape[:2])
    L[kind == 0] = [0.0, 1.0]
    L[kind == 1] = [1.0, 0.0]
    L[kind == 2] = [1e-100, 1.0]
    stage = SecondStage(h, version, a, None, net.theta, own=own, engine="enumerate")
    try:
        got = stage.mlpr(L)
    except InferenceError:  # hard evidence the network rules out
        assume(False)
    np.testing.assert_allclose(got, own_reference(net, L, a, own, version), atol=1e-12, rtol=0)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), m=st.integers(1, 8), k=st.integers(1, 5), levels=st.integers(2, 50))
def test_flat_ap_is_scikit_learns_micro_average_precision(seed, m, k, levels):
    from sklearn.metrics import average_precision_score

    rng = np.random.default_rng(seed)
    p = rng.integers(0, levels, (m, k)) / levels  # few levels: many ties
    y = (rng.random((m, k)) < 0.4).astype(int)
    y[0, 0] = 1
    assert flat_ap(p, y) == pytest.approx(average_precision_score(y.ravel(), p.ravel()), abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), m=st.integers(1, 30), k=st.integers(1, 6), levels=st.integers(1, 8),
       signed_zeros=st.booleans(), nan=st.booleans())
def test_flat_ap_equals_the_event_by_event_sum_bit_for_bit(seed, m, k, levels, signed_zeros, nan):
    """Reference: the definition over the distinct values in decreasing order, each value's events entering
    together (precision and recall after it), in plain Python; flat_ap computes it from one sort of the values
    and the hits' values: the same float, not just close."""

    def event_by_event(s, t):
        n_pos = float(sum(t))
        if n_pos <= 0:
            return np.nan
        ap, previous, hits, seen = 0.0, 0.0, 0.0, 0
        for v in sorted(set(s.tolist()), reverse=True):
            group = s == v
            hits += float(t[group].sum())
            seen += int(group.sum())
            recall = hits / n_pos
            ap += (recall - previous) * (hits / seen)
            previous = recall
        return ap

    rng = np.random.default_rng(seed)
    p = rng.integers(0, levels, (m, k)) / levels if seed % 2 else rng.random((m, k))
    if signed_zeros:  # -0.0 and 0.0 tie
        p[rng.random((m, k)) < 0.3] = -0.0
    if nan:
        p[rng.random((m, k)) < 0.2] = np.nan
    y = (rng.random((m, k)) < 0.3).astype(np.int8)
    got = flat_ap(p, y)
    if nan and np.isnan(p).any():  # no order of a nan value
        assert np.isnan(got)
        return
    expected = event_by_event(p.ravel(), y.ravel())
    assert (np.isnan(got) and np.isnan(expected)) or got == expected


def test_ranking_order_is_the_order_of_the_hierrank_ranks_and_is_kept_in_the_memo():
    from hmcpgm.selection._choice import ranking_order, ranking_positions

    rng = np.random.default_rng(4)
    h = Hierarchy.from_edges([(0, 1), (0, 2), (2, 3)], classes=[3, 0, 2, 1])
    p = rng.random((7, 4))
    for cols in (np.arange(4), np.array([0, 2, 3])):
        ranks = ranking_positions(p, h, cols)  # 1 = first
        memo = {}
        order = ranking_order(p, h, cols, memo, "key")
        np.testing.assert_array_equal(order, np.argsort(ranks.ravel(), kind="stable"))
        assert memo["key"] is order and ranking_order(None, h, cols, memo, "key") is order


def test_paired_bootstrap_z_by_explicit_resamples():
    """Reference: re-rank nothing, but score each resample by repeating its rows (ranked_ap's weights are
    checked against that above), with the generator drawn in the same order."""
    rng = np.random.default_rng(3)
    h = Hierarchy.from_edges([(0, 1), (0, 2), (2, 3)], classes=[3, 0, 2, 1])
    m = 60
    y = h.close_labels((rng.random((m, 4)) < 0.3).astype(int))
    p1, p2 = rng.random((m, 4)), np.clip(y * 0.3 + rng.random((m, 4)) * 0.7, 0, 1)
    cols = np.arange(4)
    z, diff = paired_auprc_z(p1, p2, y, h, cols, n_boot=25, seed=5)
    r1, r2 = (hier_rank(p, h).ranks for p in (p1, p2))
    draw = np.random.default_rng(5)
    boots = []
    for _ in range(25):
        w = np.bincount(draw.integers(0, m, m), minlength=m).astype(float)
        boots.append(ranked_ap(r2, y, w) - ranked_ap(r1, y, w))
    assert diff == pytest.approx(ranked_ap(r2, y) - ranked_ap(r1, y), abs=1e-12)
    assert z == pytest.approx(diff / np.std(boots, ddof=1), rel=1e-9)

def test_own_evidence_keeps_hard_zeros_and_ones():
    L = np.array([[[1.0, 4.0], [1.0, 0.5]]])
    p = np.array([[1.0, 0.0]])
    np.testing.assert_array_equal(own_evidence(p, L, 0.2, 1.0), p)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), m=st.integers(1, 6), k=st.integers(1, 5))
def test_ranked_ap_is_the_micro_average_precision_of_the_ranking(seed, m, k):
    rng = np.random.default_rng(seed)
    y = (rng.random((m, k)) < 0.4).astype(int)
    y[0, 0] = 1
    ranks = rng.permutation(m * k).reshape(m, k)
    # distinct values in rank order: scikit-learn's convention, as average_precision computes it
    assert ranked_ap(ranks, y) == pytest.approx(average_precision(-ranks.astype(float), y, exclude_roots=False))
    # integer row weights are the same as repeating rows (the bootstrap's resamples): a repeated
    # event ties with its copy, and tied events enter the PR curve together
    w = rng.integers(0, 3, m).astype(float)
    w[0] = max(w[0], 1)
    rows = np.repeat(np.arange(m), w.astype(int))
    expected = average_precision(-ranks[rows].astype(float), y[rows], exclude_roots=False)
    assert ranked_ap(ranks, y, w) == pytest.approx(expected)


@settings(max_examples=30, deadline=None)
@given(h=dags(max_classes=7), seed=st.integers(0, 10_000))
def test_the_max_constraint_is_consistent_and_lifts_only(h, seed):
    p = np.random.default_rng(seed).random((4, h.n_classes))
    q = consistent_values(p, h, "max")
    assert np.all(q >= p)
    for k in range(h.n_classes):
        for d in h.descendants(h.classes[k]):
            assert np.all(q[:, k] >= p[:, h.index(d)])  # at least every descendant's posterior
    assert count_violations(hier_rank(q, h), h) == 0
    assert consistent_values(p, h, "hierrank") is p


def test_smallest_fdr_and_the_cutoff_message_match_a_brute_force_scan():
    p = np.array([0.6, 0.8, 0.7, 0.1, 0.5])
    fdr = np.cumsum(1 - p) / np.arange(1, 6)  # 0.4, 0.3, 0.3, 0.475, 0.48
    assert smallest_fdr(fdr) == (pytest.approx(0.3), 3)
    with pytest.warns(CutoffWarning, match="smallest estimated FDR is 0.3 at 3 events"):
        cut = bayes_cutoff(np.arange(5), p, alpha=0.1)
    assert (cut.rank, cut.min_fdr_rank) == (0, 3) and cut.min_fdr == pytest.approx(0.3)
    assert cut.message == "no prefix is estimated below alpha=0.1; the smallest estimated FDR is 0.3 at 3 events"
    ok = bayes_cutoff(np.arange(5), p, alpha=0.35)
    assert ok.rank == 3 and ok.message is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CutoffWarning)
        lab = choose_cutoff(np.arange(4), np.array([[0, 1, 0, 0]]), rule="fdr", alpha=0.2)
    assert (lab.rank, lab.min_fdr, lab.min_fdr_rank) == (0, 0.5, 2)
    assert "realised" in lab.message


def test_oracle_rank_and_precision_at_recall_match_a_scan():
    rng = np.random.default_rng(0)
    h = Hierarchy.from_edges([], classes=list(range(6)))
    v = rng.random((20, 6))
    y = (rng.random((20, 6)) < v).astype(int)
    r = hier_rank(v, h)
    ranked = r.ranked(y)
    for alpha in (0.05, 0.2, 0.5):
        best = max([n for n in range(1, ranked.size + 1) if (1 - ranked[:n]).mean() <= alpha] or [0])
        assert oracle_rank(r, y, alpha) == best
        assert oracle_rank(r, np.zeros_like(y), alpha) == 0  # no positive: every prefix has FDP 1 (was refused)
    hits = np.cumsum(ranked)
    precision, recall = hits / np.arange(1, ranked.size + 1), hits / hits[-1]
    for level in (0.1, 0.5, 1.0):
        n = next(i for i in range(ranked.size) if recall[i] >= level)
        assert precision_at_recall_levels(precision, recall, [level]) == [precision[n]]


def test_correction_values_are_consistent_families():
    h = Hierarchy.from_edges([("r", "a"), ("r", "b"), ("a", "c"), ("b", "c")], classes=["c", "a", "r", "b"])
    rng = np.random.default_rng(1)
    y = (rng.random((300, 4)) < 0.5).astype(int)
    y = h.close_labels(y)
    s = rng.normal(loc=y)
    values, seconds = correction_values(s, y, (s[:50], s[50:80]), h)
    assert set(values) == set(seconds) and "iso-tpr" in values and "platt-mcm" in values
    for name, (v1, v2) in values.items():
        assert v1.shape == (50, 4) and v2.shape == (30, 4)
        if not name.endswith("-flat"):
            for v in (v1, v2):
                for child, parents in zip(range(4), h.parent_indices):
                    for p in parents:
                        assert np.all(v[:, child] <= v[:, p] + 1e-12), name


def test_evaluate_methods_records_the_validation_auprc_a_user_can_choose_by():
    # reference: scikit-learn's average precision of the values themselves (consistent, no ties, so the
    # NaiveSort ranking is the order of the values), on the validation rows and on the test rows
    from sklearn.metrics import average_precision_score

    from hmcpgm.applications.evaluation import evaluate_methods

    h = Hierarchy.from_edges([("r", "a"), ("r", "b"), ("a", "c"), ("b", "c")], classes=["c", "a", "r", "b"])
    rng = np.random.default_rng(4)
    y_valid, y_test = (h.close_labels((rng.random((m, 4)) < 0.4).astype(int)) for m in (60, 40))
    values = {}
    for name, noise in (("sharp", 0.3), ("blurred", 3.0)):
        v = tuple(np.clip(y + noise * rng.random(y.shape), 0, None) for y in (y_valid, y_test))
        values[name] = tuple(np.stack([x[:, 0], x[:, 1] + x[:, 0], x[:, 2] + 2 * x.sum(1), x[:, 3] + x[:, 0]], 1)
                             for x in v)  # child <= parent: c <= a, b <= r
    got = evaluate_methods(values, h, y_valid, y_test, auprc=True, rankers={n: ("NaiveSort",) for n in values})
    for name, (v_valid, v_test) in values.items():
        row = got[f"{name}-NaiveSort"]
        assert row["valid_auprc"] == pytest.approx(average_precision_score(y_valid.ravel(), v_valid.ravel()))
        assert row["auprc"] == pytest.approx(average_precision_score(y_test.ravel(), v_test.ravel()))
    assert got["sharp-NaiveSort"]["valid_auprc"] > got["blurred-NaiveSort"]["valid_auprc"]


def test_fitted_choice_is_visible_and_saved(tmp_path):
    from hmcpgm.datasets import make_paper_synthetic
    from hmcpgm.persist import load_model, save_model

    data = make_paper_synthetic(2000, 200, seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = MLPR(hierarchy=data.hierarchy, score_model="platt", cv=3).fit(data.train_scores, data.train_labels)
    assert model.consistency_ in ("hierrank", "max")
    assert model.cv_results_.attrs["consistency"]["chosen"] == model.consistency_
    assert set(model.cv_results_.attrs["consistency"]["candidates"]) == {"max"}
    if model.version_ != "indpt":
        assert model.own_tempering_.shape == (25,)
    path = save_model(model, tmp_path / "m.npz")
    again = load_model(path)
    assert again.consistency_ == model.consistency_
    np.testing.assert_array_equal(again.predict_proba(data.test_scores), model.predict_proba(data.test_scores))


def test_consistency_choice_reports_every_candidate_and_takes_the_largest_z_beyond_the_margin(monkeypatch):
    # the candidates' z are forced (by the values each candidate's step returns, its own reference:
    # consistent_values called directly); the choice must follow them and report them
    import hmcpgm.selection._auto as auto
    from hmcpgm.datasets import make_paper_synthetic
    from hmcpgm.selection import CONSISTENCY_CANDIDATES

    assert CONSISTENCY_CANDIDATES == ("max",)  # the library's: HTD measured and not adopted
    data = make_paper_synthetic(600, 10, seed=1)
    h = data.hierarchy
    monkeypatch.setattr(auto, "CONSISTENCY_CANDIDATES", ("max", "htd"))
    real = auto.paired_auprc_z

    for forced, expected in [({"max": 0.5, "htd": 2.0}, "htd"), ({"max": 3.0, "htd": 2.0}, "max"),
                             ({"max": 0.4, "htd": 0.9}, "hierrank")]:
        def fake(p_simple, p_other, *args, forced=forced, **kwargs):
            real(p_simple, p_other, *args, **kwargs)  # the real call still runs
            name = next(c for c in ("max", "htd") if np.array_equal(p_other, consistent_values(p_simple, h, c)))
            return forced[name], 0.0

        monkeypatch.setattr(auto, "paired_auprc_z", fake)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = MLPR(hierarchy=h, version="indpt", pool=None, cv=3).fit(data.train_scores, data.train_labels)
        attrs = model.cv_results_.attrs["consistency"]
        assert attrs["candidates"] == forced
        assert attrs["chosen"] == model.consistency_ == expected
        assert attrs["z"] == max(forced.values())


def test_fit_progress_bar_counts_every_step(monkeypatch):
    import tqdm.auto

    seen = []

    class Recorder:
        def __init__(self, total, disable, **kwargs):
            self.total, self.disable, self.n, self.posts = total, disable, 0, []
            seen.append(self)

        def update(self, n=1):
            self.n += n

        def set_postfix_str(self, s, refresh=True):
            self.posts.append(s)

        def close(self):
            self.closed = True

    monkeypatch.setattr(tqdm.auto, "tqdm", Recorder)
    from hmcpgm.datasets import make_paper_synthetic

    data = make_paper_synthetic(1500, 10, seed=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        MLPR(hierarchy=data.hierarchy, score_model="platt", cv=3, verbose=True).fit(data.train_scores,
                                                                                    data.train_labels)
        MLPR(hierarchy=data.hierarchy, version="full", score_model="platt", cv=3).fit(data.train_scores,
                                                                                      data.train_labels)
    shown, quiet = seen
    assert shown.disable is None and quiet.disable is True  # tqdm decides for a terminal; verbose=False: off
    for bar in seen:
        assert bar.n == bar.total and bar.closed
    assert shown.posts[:2] == ["score models", "indpt"] and "final fit" in shown.posts
