"""The paper's synthetic experiment (section 5 of Ye et al.; SPEC sections 8 and 9).

Data are drawn from the paper's 25-class forest; the methods are Raw-NaiveSort,
Raw-HierRank and mLPR-{indpt, nbh, full} x {NaiveSort, HierRank}. Criterion I is
precision and recall of the top kappa of all test events; Criterion II is the
false discovery proportion and discovery proportion at the cutoff chosen on a
validation half for a target FDR, and F1 at the max-F1 cutoff.
"""

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

__all__ = ["KAPPAS", "ALPHAS", "ExperimentResult", "synthetic_experiment", "evaluate_methods", "format_tables"]

KAPPAS = (0.05, 0.1, 0.2, 0.3, 0.5)
ALPHAS = (0.01, 0.05, 0.1, 0.2)


@dataclass(frozen=True)
class ExperimentResult:
    """Tables of the synthetic experiment, one pandas DataFrame each (rows = methods)."""

    tables: dict
    info: dict = field(default_factory=dict)

    def to_csv(self, directory):
        """Write every table as ``<directory>/<name>.csv``; return the paths."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        paths = []
        for name, table in self.tables.items():
            path = directory / f"{name}.csv"
            table.to_csv(path, float_format="%.6g")
            paths.append(path)
        return paths


def _method_values(model, scores_valid, scores_test, versions, progress):
    """Values for every method on the validation and test objects: name -> (valid, test)."""
    values = {"Raw": (scores_valid, scores_test)}
    for version in versions:
        model.set_params(version=version)
        values[f"mLPR-{version}"] = (model.predict_proba(scores_valid), model.predict_proba(scores_test))
        if progress is not None:
            progress.update(1)
    return values


def evaluate_methods(values, hierarchy, labels_valid, labels_test, *, kappas=KAPPAS, alphas=ALPHAS):
    """Criterion I and II tables for several value matrices.

    Parameters
    ----------
    values : dict
        Method family name -> ``(valid_values, test_values)``, each (M, K). Each
        family is ranked by NaiveSort and by HierRank.
    hierarchy : Hierarchy
    labels_valid, labels_test : (M, K) 0/1 arrays

    Returns
    -------
    dict of pandas.DataFrame
        ``precision``, ``recall`` (Criterion I, on the test objects),
        ``fdp``, ``discovery`` (Criterion II, cutoff chosen on validation and applied
        to test by proportion), ``summary`` (F1 at the max-F1 cutoff, hit-curve area,
        CATCH of the values, hierarchy violations of the ranking).
    """
    import pandas as pd

    import warnings

    from .decision import choose_cutoff, decisions_from_cutoff
    from .metrics import area_under_hit_curve, discovery_proportion, f1_score, fdp, precision_recall_at
    from .ranking import catch, count_violations, hier_rank, naive_sort

    m_test, k = np.shape(labels_test)
    rows = {name: {} for name in ("precision", "recall", "fdp", "discovery", "summary")}
    for family, (v_valid, v_test) in values.items():
        for rank_name, rank in (("NaiveSort", naive_sort), ("HierRank", hier_rank)):
            method = f"{family}-{rank_name}"
            order_valid = rank(v_valid, hierarchy)
            order_test = rank(v_test, hierarchy)
            precision, recall = precision_recall_at(order_test, labels_test, kappas)
            rows["precision"][method] = dict(zip(kappas, precision))
            rows["recall"][method] = dict(zip(kappas, recall))
            fdps, dps = {}, {}
            for alpha in alphas:
                with warnings.catch_warnings():  # a target no prefix meets gives rank 0, reported as such
                    warnings.simplefilter("ignore")
                    cut = choose_cutoff(order_valid, labels_valid, rule="fdr", alpha=alpha)
                decisions = decisions_from_cutoff(cut, order_test, m_test, k)
                fdps[alpha] = fdp(decisions, labels_test)
                dps[alpha] = discovery_proportion(decisions, labels_test)
            rows["fdp"][method] = fdps
            rows["discovery"][method] = dps
            best = choose_cutoff(order_valid, labels_valid, rule="max_f1")
            decisions = decisions_from_cutoff(best, order_test, m_test, k)
            rows["summary"][method] = {
                "F1 (max-F1 cutoff)": f1_score(decisions, labels_test),
                "kappa (max-F1)": best.kappa,
                "hit-curve area": area_under_hit_curve(order_test, labels_test),
                "CATCH of values": catch(order_test, v_test),
                "violations": count_violations(order_test, hierarchy),
            }
    return {name: pd.DataFrame.from_dict(r, orient="index") for name, r in rows.items()}


def synthetic_experiment(n_train=50_000, n_test=10_000, *, seed=0, versions=("indpt", "nbh", "full"),
                         score_model="lpr", progress=True):
    """Run the paper's synthetic experiment and return its tables.

    The test objects are split in half: the first half is the validation set on
    which Criterion II cutoffs are chosen, the second half the test set on which
    every number is reported.

    Parameters
    ----------
    n_train, n_test : int
        Objects drawn for training and for validation + test.
    seed : int
        Seeds the data (theta, labels and scores).
    versions : tuple of str
        mLPR versions to compare.
    score_model : str
        Score model of :class:`hmcpgm.MLPR`.
    progress : bool
        Show a progress bar.

    Returns
    -------
    ExperimentResult
    """
    from tqdm.auto import tqdm

    from .datasets import make_paper_synthetic
    from .estimator import MLPR

    data = make_paper_synthetic(n_train=n_train, n_test=n_test, seed=seed)
    scores_valid, labels_valid, scores_test, labels_test = data.split_test()
    bar = tqdm(total=1 + len(versions), desc="synthetic experiment", disable=not progress, leave=False)
    model = MLPR(score_model=score_model).fit(data.train_scores, data.train_labels, data.hierarchy)
    bar.update(1)
    values = _method_values(model, scores_valid, scores_test, versions, bar)
    bar.close()
    tables = evaluate_methods(values, data.hierarchy, labels_valid, labels_test)
    info = {
        "n_train": n_train,
        "n_valid": len(scores_valid),
        "n_test": len(scores_test),
        "seed": seed,
        "theta": np.round(data.theta, 4).tolist(),
        "score_model": score_model,
    }
    return ExperimentResult(tables=tables, info=info)


def format_tables(result):
    """The experiment's tables as text, in the layout of the paper's tables (percent)."""
    import pandas as pd

    t = result.tables
    info = result.info
    parts = [
        f"Synthetic experiment (SPEC section 9): {info.get('n_train')} training, "
        f"{info.get('n_valid')} validation, {info.get('n_test')} test objects; seed {info.get('seed')}",
    ]
    pct = lambda x: f"{x:.1f}"  # noqa: E731
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        for key, title, col in (
            ("precision", "Criterion I: precision (%) of the top kappa of all test events", "kappa"),
            ("recall", "Criterion I: recall (%) of the top kappa of all test events", "kappa"),
            ("fdp", "Criterion II: false discovery proportion (%) at the cutoff chosen on "
                    "validation for target FDR alpha", "alpha"),
            ("discovery", "Criterion II: discovery proportion (%, true positives found / all "
                          "positives) at the same cutoffs", "alpha"),
        ):
            table = (100 * t[key]).rename(columns=lambda v, c=col: f"{c}={v}")
            parts.append(f"\n{title}\n" + table.to_string(float_format=pct))
        summary = t["summary"].copy()
        summary["F1 (max-F1 cutoff)"] *= 100
        summary["hit-curve area"] *= 100
        summary["kappa (max-F1)"] *= 100
        summary = summary.rename(columns={
            "F1 (max-F1 cutoff)": "F1 % (max-F1 cutoff)",
            "kappa (max-F1)": "kappa % (max-F1)",
            "hit-curve area": "hit-curve area %",
        })
        parts.append(
            "\nF1 at the max-F1 cutoff chosen on validation; area under the hit curve (% of the "
            "ideal); CATCH of the ranked values; hierarchy violations (ancestor pairs out of order)\n"
            + summary.to_string(float_format=lambda x: f"{x:.4g}")
        )
    parts.append("\n" + _hierrank_check(t["summary"]))
    return "\n".join(parts)


def _hierrank_check(summary):
    """One line per value family: is HierRank's hit-curve area at least NaiveSort's?"""
    lines = ["HierRank vs NaiveSort on the same values (area under the hit curve of the test labels):"]
    for method in summary.index:
        if method.endswith("-NaiveSort"):
            family = method[: -len("-NaiveSort")]
            naive = summary.loc[method, "hit-curve area"]
            hier = summary.loc[f"{family}-HierRank", "hit-curve area"]
            verdict = "not worse" if hier >= naive - 1e-12 else "WORSE"
            lines.append(f"  {family:<12} HierRank {100 * hier:.2f}% vs NaiveSort {100 * naive:.2f}%: {verdict}")
    return "\n".join(lines)
