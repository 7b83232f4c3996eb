"""A DataFrame with shuffled columns gives the same numbers as the ordered array, everywhere.

Every public function that takes a values or labels matrix is called twice: with numpy
arrays in ``hierarchy.classes`` order, and with DataFrames whose columns (named by
class) are in a random order. The answers must be identical.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import hierarchies

import hmcpgm
from hmcpgm import LabelNetwork
from hmcpgm.likelihood import fit_score_model
from hmcpgm.plot import reliability_table


@st.composite
def problems(draw):
    h = draw(hierarchies(min_classes=2, max_classes=6))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    m = 60
    y = LabelNetwork(h, rng.uniform(0.3, 0.9, h.n_classes)).sample(m, rng)
    y[0] = 1  # every class has a positive and (row 1) a negative
    y[1] = 0
    scores = rng.normal(loc=1.5 * y)
    values = rng.random((m, h.n_classes))
    perm = draw(st.permutations(range(h.n_classes)))
    return h, scores, y, values, [h.classes[i] for i in perm]


def frame(matrix, h, columns):
    return pd.DataFrame(matrix, columns=list(h.classes))[columns]


def same_cutoff(a, b):
    """Cutoffs equal field by field (NaN equal to NaN)."""
    from dataclasses import astuple

    for x, z in zip(astuple(a), astuple(b)):
        assert x == z or (isinstance(x, float) and np.isnan(x) and np.isnan(z)), (a, b)


def same(a, b):
    if isinstance(a, pd.DataFrame):
        a = a.to_numpy()
    if isinstance(b, pd.DataFrame):
        b = b.to_numpy()
    if isinstance(a, tuple):
        for x, z in zip(a, b):
            same(x, z)
        return
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@settings(max_examples=25, deadline=None)
@given(problems())
def test_shuffled_dataframes_give_the_same_numbers(problem):
    h, s, y, v, cols = problem
    S, Y, V = frame(s, h, cols), frame(y, h, cols), frame(v, h, cols)

    # the label network and the score models
    same(LabelNetwork.from_labels(Y, h).theta, LabelNetwork.from_labels(y, h).theta)
    model_a = fit_score_model(s, y, h, kind="gaussian")
    model_f = fit_score_model(S, Y, h, kind="gaussian")
    same(model_f.lpr(S), model_a.lpr(s))
    same(model_f.likelihoods(S), model_a.likelihoods(s))

    # the estimator
    options = dict(hierarchy=h, score_model="gaussian", version="full", tempering=None, recalibrate=False)
    est_a = hmcpgm.MLPR(**options).fit(s, y)
    est_f = hmcpgm.MLPR(**options).fit(S, Y)
    same(est_f.theta_, est_a.theta_)
    same(est_f.predict_proba(S), est_a.predict_proba(s))
    same(est_f.predict(S), est_a.predict(s))
    same(est_f.lpr(S), est_a.lpr(s))
    same(est_f.likelihoods(S), est_a.likelihoods(s))
    pooled_a = hmcpgm.MLPR(**options, pool=0.5).fit(s, y)  # the pool's isotonic models align by name too
    pooled_f = hmcpgm.MLPR(**options, pool=0.5).fit(S, Y)
    same(pooled_f.predict_proba(S), pooled_a.predict_proba(s))

    # the hierarchy's label methods
    assert h.violations(Y) == h.violations(y)
    same(h.close_labels(Y), h.close_labels(y))
    h.check_labels(Y)

    # rankings
    for rank in (hmcpgm.hier_rank, hmcpgm.naive_sort):
        r_a, r_f = rank(v, h), rank(V, h)
        same(r_f.order, r_a.order)
        same(r_f.block_means, r_a.block_means)
        assert hmcpgm.catch(r_f, V) == hmcpgm.catch(r_a, v)
        same(r_f.ranked(V), r_a.ranked(v))
    assert hmcpgm.hier_rank_bound(V, h) == hmcpgm.hier_rank_bound(v, h)

    # decisions and metrics on a ranking (labels aligned to the ranking's classes)
    r = hmcpgm.hier_rank(v, h)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", hmcpgm.CutoffWarning)
        for rule in ("max_f1", "fdr"):
            same_cutoff(hmcpgm.choose_cutoff(r, Y, rule=rule), hmcpgm.choose_cutoff(r, y, rule=rule))
            same_cutoff(hmcpgm.bayes_cutoff(r, V, rule=rule), hmcpgm.bayes_cutoff(r, v, rule=rule))
        same_cutoff(hmcpgm.choose_cutoff(r, Y, values=V), hmcpgm.choose_cutoff(r, y, values=v))
    same(hmcpgm.estimated_fdr(r, V), hmcpgm.estimated_fdr(r, v))
    same(hmcpgm.expected_f1(r, V), hmcpgm.expected_f1(r, v))
    same(hmcpgm.hit_curve(r, Y), hmcpgm.hit_curve(r, y))
    assert hmcpgm.area_under_hit_curve(r, Y) == hmcpgm.area_under_hit_curve(r, y)
    same(hmcpgm.precision_recall_at(r, Y, [0.1, 0.5]), hmcpgm.precision_recall_at(r, y, [0.1, 0.5]))
    same(hmcpgm.pr_curve(r, Y), hmcpgm.pr_curve(r, y))

    # metrics on two matrices: aligned to the hierarchy, or to each other
    assert hmcpgm.average_precision(V, Y, h, exclude_roots=False) == hmcpgm.average_precision(
        v, y, h, exclude_roots=False
    )
    other = list(reversed(cols))
    assert hmcpgm.average_precision(V, frame(y, h, other), exclude_roots=False) == pytest.approx(
        hmcpgm.average_precision(v, y, exclude_roots=False), abs=0)
    d = r.top(v.size // 3)
    D = frame(d, h, cols)
    for metric in (hmcpgm.f1_score, hmcpgm.fdp, hmcpgm.discovery_proportion):
        assert metric(D, frame(y, h, other)) == metric(d, y)
    # CAFA, term-centric and hierarchical metrics (hmcpgm.metrics)
    from hmcpgm import metrics

    for metric in (metrics.fmax, metrics.smin, metrics.weighted_fmax):
        assert metric(V, frame(y, h, other), h) == metric(v, y, h)
    same(metrics.information_accretion(frame(y, h, other), h).to_numpy(), metrics.information_accretion(y, h))
    propagated = metrics.propagate_max(V, h)  # a DataFrame in V's column order
    assert list(propagated.columns) == cols
    same(propagated[list(h.classes)], metrics.propagate_max(v, h))
    for metric in (metrics.auprc_per_class, metrics.auroc_per_class):
        got, ref = metric(V, frame(y, h, other), h), metric(v, y, h)
        assert got.average == ref.average
        same(got.per_class.to_numpy(), ref.per_class)
    same(metrics.precision_at_recall(V, Y, h).per_class.to_numpy(), metrics.precision_at_recall(v, y, h).per_class)
    assert metrics.hierarchical_f1(D, frame(y, h, other), h) == metrics.hierarchical_f1(d, y, h)
    # the bins sum the same events in another order: equal up to rounding
    for got, ref in zip(reliability_table(V, frame(y, h, other), 5), reliability_table(v, y, 5)):
        np.testing.assert_allclose(got, ref, rtol=1e-12)


def test_a_dataframe_that_cannot_be_aligned_is_refused():
    h = hmcpgm.Hierarchy.from_edges([("a", "b"), ("a", "c")])
    v = pd.DataFrame(np.full((2, 3), 0.5), columns=["a", "b", "c"])
    r = hmcpgm.hier_rank(v, h)
    with pytest.raises(hmcpgm.InputError, match="cannot match its columns by class name"):
        hmcpgm.hit_curve(np.asarray(r), v.astype(int))
    with pytest.raises(hmcpgm.InputError, match=r"missing: \['c'\]"):
        hmcpgm.bayes_cutoff(r, v[["a", "b"]])
    with pytest.raises(hmcpgm.InputError, match="cannot be matched by class name"):
        hmcpgm.f1_score(v.astype(int), np.ones((2, 3), dtype=int))
    with pytest.raises(hmcpgm.InputError, match="different row indexes"):
        hmcpgm.fdp(v.astype(int), v.astype(int).set_index(pd.Index([5, 6])))


@settings(max_examples=25, deadline=None)
@given(problems(), st.integers(0, 10**6))
def test_decisions_on_a_ranking_of_a_dataframe_are_a_dataframe(problem, pick):
    """Ranking.top and Cutoff.apply give a DataFrame (class columns, the index kept) for a DataFrame in."""
    h, _, y, v, cols = problem
    index = pd.Index([f"obj{i}" for i in range(v.shape[0])][::-1])
    V = frame(v, h, cols).set_axis(index)
    r_a, r_f = hmcpgm.hier_rank(v, h), hmcpgm.hier_rank(V, h)
    r = pick % (r_a.n_events + 1)
    cut = hmcpgm.choose_cutoff(r_a, y)
    for got, ref in ((r_f.top(r), r_a.top(r)), (cut.apply(r_f), cut.apply(r_a)),
                     (cut.apply(r_f, by="threshold"), cut.apply(r_a, by="threshold"))):
        assert isinstance(ref, np.ndarray)
        assert isinstance(got, pd.DataFrame)
        assert list(got.columns) == list(h.classes) and got.index.equals(index)
        np.testing.assert_array_equal(got.to_numpy(), ref)
        assert got.to_numpy().dtype == np.int8
        assert h.violations(got) == 0
