"""The paper's synthetic experiment end to end."""

import numpy as np
import pytest

from hmcpgm.applications import ALPHAS, KAPPAS, experiment_tables, format_tables, synthetic_experiment


@pytest.fixture(scope="module")
def result():
    return synthetic_experiment(n_train=20_000, n_test=6_000, seed=3, progress=False)


def test_tables_have_every_method_and_column(result):
    families = ("Raw", "mLPR-indpt", "mLPR-nbh", "mLPR-full", "mLPR-auto")
    methods = [f"{f}-{r}" for f in families for r in ("NaiveSort", "HierRank")]
    for name in ("precision", "recall"):
        assert list(result.tables[name].index) == methods
        assert list(result.tables[name].columns) == list(KAPPAS)
    for name in ("fdp", "discovery"):
        assert list(result.tables[name].columns) == list(ALPHAS)
    assert result.info["n_valid"] == 3000 and result.info["n_test"] == 3000
    # on data drawn from the paper's model the default second stage picks the full version
    assert result.info["auto"]["version"] == "full"
    assert all(abs(a - 1) < 0.15 for a in result.info["auto"]["tempering"])


def test_mlpr_full_hierrank_beats_raw_by_a_wide_margin(result):
    p = result.tables["precision"]
    for kappa in (0.05, 0.1):  # at larger kappa precision is capped by the share of positives
        best_raw = max(p.loc["Raw-NaiveSort", kappa], p.loc["Raw-HierRank", kappa])
        assert p.loc["mLPR-full-HierRank", kappa] > best_raw + 0.3
    f1 = result.tables["summary"]["F1 (max-F1 cutoff)"]
    assert f1["mLPR-full-HierRank"] > f1["Raw-HierRank"] + 0.2


def test_hierrank_never_worse_than_naive_by_hit_curve_and_always_consistent(result):
    s = result.tables["summary"]
    for family in ("Raw", "mLPR-indpt", "mLPR-nbh", "mLPR-full"):
        assert s.loc[f"{family}-HierRank", "hit-curve area"] >= s.loc[f"{family}-NaiveSort", "hit-curve area"] - 1e-12
        assert s.loc[f"{family}-HierRank", "violations"] == 0
    # full mLPRs respect the hierarchy already (Proposition 1): NaiveSort is consistent too
    assert s.loc["mLPR-full-NaiveSort", "violations"] == 0


def test_full_fdr_cutoffs_hold_their_target_approximately(result):
    fdp = result.tables["fdp"].loc["mLPR-full-HierRank"]
    for alpha in ALPHAS:
        # chosen on 3,000 validation objects, realised on 3,000 others
        assert fdp[alpha] <= alpha + 0.03


def test_format_and_csv(result, tmp_path):
    text = format_tables(result)
    assert "Criterion I: precision" in text and "mLPR-full-HierRank" in text
    assert "WORSE" not in text and "SPEC" not in text
    # every table is followed by its legend
    for word in ("Precision:", "Recall:", "FDP:", "Discovery:", "kappa % = the share"):
        assert word in text
    paths = result.to_csv(tmp_path)
    assert {p.name for p in paths} == {"precision.csv", "recall.csv", "fdp.csv", "discovery.csv", "summary.csv"}


def test_evaluate_methods_on_oracle_values_is_perfect():
    rng = np.random.default_rng(0)
    from hmcpgm import LabelNetwork
    from hmcpgm.datasets import paper_forest

    h = paper_forest()
    theta = rng.uniform(0.3, 0.9, h.n_classes)
    y = LabelNetwork(h, theta).sample(500, rng)
    # the labels themselves as values, validation = test: every measure is at its best
    tables = experiment_tables({"Oracle": (y.astype(float), y.astype(float))}, h, y, y)
    summary = tables["summary"]
    assert np.allclose(summary["hit-curve area"], 1.0)
    assert np.allclose(summary["F1 (max-F1 cutoff)"], 1.0)
    # the largest prefix within the target: it reaches into the negatives up to alpha
    for alpha in ALPHAS:
        assert np.all(tables["fdp"][alpha] <= alpha) and np.all(tables["fdp"][alpha] > alpha - 0.01)
    assert np.allclose(tables["discovery"], 1.0)
    assert np.allclose(tables["precision"][0.05], 1.0)


def test_fdr_curve_is_the_running_mean_along_the_hierrank_order():
    from hmcpgm import Hierarchy, hier_rank
    from hmcpgm.applications import fdr_curve

    h = Hierarchy.from_edges([("r", "a"), ("r", "b")], classes=["b", "r", "a"])  # not topological
    rng = np.random.default_rng(3)
    p = np.sort(rng.random((40, 3)), axis=1)[:, [0, 2, 1]]  # r (column 1) is each row's largest
    y = (rng.random((40, 3)) < p).astype(int)
    y[:, [0, 2]] *= y[:, [1]]
    q = p ** 2
    curve = fdr_curve(p, {"p": p, "q": q}, y, h, classes=["a", "b"], n_points=10)
    ranking = hier_rank(p, h).restrict(["a", "b"])
    cols = h.indices(ranking.classes)  # the restricted ranking's columns: b, a (it paired a's labels with b's events)
    order_y, order_p, order_q = (ranking.ranked(m[:, cols]) for m in (y, p, q))
    for i, r in enumerate(curve["rank"]):
        assert curve["realised"][i] == pytest.approx(1 - order_y[:r].mean())
        assert curve["p"][i] == pytest.approx(1 - order_p[:r].mean())
        assert curve["q"][i] == pytest.approx(1 - order_q[:r].mean())
    assert curve["rank"][0] == 1 and curve["rank"][-1] == 80


def test_evaluate_methods_bootstrap_is_paired_with_the_reference():
    """auprc_se and the paired difference come from bootstrap_average_precision with the same seed (reference:
    the function itself on each method's test ranking); a method equal to the reference differs by exactly 0."""
    from hmcpgm import InputError, LabelNetwork, hier_rank, naive_sort
    from hmcpgm.applications import evaluate_methods
    from hmcpgm.datasets import paper_forest
    from hmcpgm.metrics import bootstrap_average_precision

    rng = np.random.default_rng(1)
    h = paper_forest()
    y = LabelNetwork(h, rng.uniform(0.3, 0.9, h.n_classes)).sample(200, rng)
    noisy = y + rng.normal(scale=1.0, size=y.shape)
    noisier = y + rng.normal(scale=2.0, size=y.shape)
    values = {"A": (noisy, noisy), "B": (noisier, noisier), "C": (noisy.copy(), noisy.copy())}
    out = evaluate_methods(values, h, y, y, auprc=True, bootstrap=50, reference="A-HierRank", seed=4)
    a = bootstrap_average_precision(hier_rank(noisy, h), y, n_resamples=50, seed=4)
    b = bootstrap_average_precision(naive_sort(noisier, h), y, n_resamples=50, seed=4)
    assert out["A-HierRank"]["auprc_se"] == pytest.approx(np.std(a, ddof=1))
    assert out["B-NaiveSort"]["auprc_diff_se"] == pytest.approx(np.std(b - a, ddof=1))
    assert out["B-NaiveSort"]["auprc_diff_high"] == pytest.approx(np.quantile(b - a, 0.975))
    assert out["C-HierRank"]["auprc_diff_se"] == 0 and out["C-HierRank"]["auprc_diff_low"] == 0
    with pytest.raises(InputError, match="reference"):
        evaluate_methods(values, h, y, y, auprc=True, bootstrap=5, reference="D-HierRank")


def test_evaluated_classes_in_any_order_give_the_same_numbers():
    """Labels were sliced in the order the classes were listed, the ranking kept the hierarchy's: listed in
    another order, each label column was paired with another class's events (a perfect ranking scored 0.42)."""
    from hmcpgm import Hierarchy
    from hmcpgm.applications.evaluation import cutoff_power, evaluate_methods, fdr_curve

    rng = np.random.default_rng(0)
    h = Hierarchy.from_edges([("r", "a"), ("r", "b"), ("s", "c")], classes=["c", "a", "r", "s", "b"])
    labels = h.close_labels((rng.random((60, 5)) < 0.3).astype(int))
    values = np.clip(labels * 0.5 + rng.random((60, 5)) * 0.6, 0, 1)
    listed = [["a", "b", "c", "s"], ["s", "c", "b", "a"]]
    runs = [evaluate_methods({"X": (values, values)}, h, labels, labels, classes=cls, auprc=True,
                             bayes_alphas=(0.2,), rankers={"X": ("HierRank",)})["X-HierRank"] for cls in listed]
    assert runs[0] == runs[1] and runs[0]["auprc"] > 0.5
    assert cutoff_power(values, values, labels, h, listed[0], [0.2]) == \
        cutoff_power(values, values, labels, h, listed[1], [0.2])
    curves = [fdr_curve(values, {"p": values}, labels, h, classes=cls) for cls in listed]
    assert all(np.array_equal(curves[0][k], curves[1][k]) for k in curves[0])
