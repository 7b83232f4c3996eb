"""The paper's synthetic experiment (section 5 of Ye et al.).

Data are drawn from the paper's 25-class forest; the methods are Raw-NaiveSort,
Raw-HierRank and mLPR-{indpt, nbh, full} x {NaiveSort, HierRank} (the paper's
model: evidence exponent 1, no recalibration), and mLPR-auto, the default
:class:`hmcpgm.MLPR` (version, exponent and score models chosen by
cross-fitting on the training rows). Criterion I is
precision and recall of the top kappa of all test events; Criterion II is the
false discovery proportion and discovery proportion at the cutoff chosen on a
validation half for a target FDR, and F1 at the max-F1 cutoff.
"""

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .._atomic import atomic_writes
from .evaluation import evaluate_methods, paper_mlprs

__all__ = ["KAPPAS", "ALPHAS", "TABLES", "ExperimentResult", "synthetic_experiment", "experiment_tables",
           "format_tables"]

KAPPAS = (0.05, 0.1, 0.2, 0.3, 0.5)
ALPHAS = (0.01, 0.05, 0.1, 0.2)
TABLES = ("precision", "recall", "fdp", "discovery", "summary")  # the tables of experiment_tables, in order

_SUMMARY = {
    "f1_max_f1_cutoff": "F1 (max-F1 cutoff)",
    "kappa_max_f1": "kappa (max-F1)",
    "hit_curve_area": "hit-curve area",
    "violations": "violations",
}


@dataclass(frozen=True)
class ExperimentResult:
    """Tables of the synthetic experiment, one pandas DataFrame each (rows = methods).

    Attributes
    ----------
    tables : dict of pandas.DataFrame
        Table name (``precision``, ``recall``, ``fdp``, ``discovery``, ``summary``)
        -> table, as :func:`experiment_tables` returns them.
    info : dict
        The run's settings and what mLPR-auto chose (``n_train``, ``n_valid``,
        ``n_test``, ``seed``, ``theta``, ``score_model``, ``auto``).
    """

    tables: dict
    info: dict = field(default_factory=dict)

    def to_csv(self, directory):
        """Write every table as ``<directory>/<name>.csv``; return the paths.

        Parameters
        ----------
        directory : str or Path
            Created (with its parents) if missing; existing files of the same names
            are replaced, all of them or none (a full disk leaves the old ones).

        Returns
        -------
        list of Path
            The written files, in the order of ``tables``.
        """
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        paths = [directory / f"{name}.csv" for name in self.tables]
        with atomic_writes(paths) as files:  # every table new, or every old file left as it was
            for fh, table in zip(files, self.tables.values()):
                table.to_csv(fh, float_format="%.6g")
        return paths


def experiment_tables(values, hierarchy, labels_valid, labels_test, *, kappas=KAPPAS, alphas=ALPHAS):
    """Criterion I and II tables for several value matrices.

    Parameters
    ----------
    values : dict
        Method family name -> ``(valid_values, test_values)``, each (M, K).
    hierarchy : Hierarchy
        Fixes the column order of the values and labels.
    labels_valid, labels_test : (M, K) 0/1 arrays
        The true labels of the validation and the test objects.
    kappas, alphas : tuples of float
        The fractions of test events of Criterion I; the target FDRs of Criterion II.

    Returns
    -------
    dict of pandas.DataFrame
        ``precision``, ``recall`` (Criterion I, on the test objects), ``fdp``,
        ``discovery`` (Criterion II, cutoff chosen on validation and carried to
        test by proportion), ``summary`` (F1 at the max-F1 cutoff and its kappa,
        normalised area under the hit curve, hierarchy violations of the ranking).
    """
    import pandas as pd

    rows = evaluate_methods(values, hierarchy, labels_valid, labels_test, kappas=kappas, fdr_alphas=alphas)

    def table(prefix, keys):
        return pd.DataFrame({m: {k: r[f"{prefix}@{k}"] for k in keys} for m, r in rows.items()}).T

    return {  # in the order of TABLES
        "precision": table("precision", kappas),
        "recall": table("recall", kappas),
        "fdp": table("fdp", alphas),
        "discovery": table("discovery", alphas),
        "summary": pd.DataFrame({m: {v: r[k] for k, v in _SUMMARY.items()} for m, r in rows.items()}).T,
    }


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
        The mLPR versions to compare.
    score_model : str
        Score model of :class:`hmcpgm.MLPR`.
    progress : bool
        Show a progress bar.

    Returns
    -------
    ExperimentResult
        The tables of :func:`experiment_tables` and the run's settings.
    """
    from tqdm.auto import tqdm

    from ..datasets import make_paper_synthetic
    from ..estimator import MLPR

    data = make_paper_synthetic(n_train=n_train, n_test=n_test, seed=seed)
    scores_valid, labels_valid, scores_test, labels_test = data.split_test()
    bar = tqdm(total=2 + len(versions), desc="synthetic experiment", disable=not progress, leave=False)
    model = MLPR(hierarchy=data.hierarchy, version="full", score_model=score_model, tempering=None,
                 recalibrate=False).fit(data.train_scores, data.train_labels)
    bar.update(1)
    values = {"Raw": (scores_valid, scores_test)}
    for version in versions:
        values[f"mLPR-{version}"] = paper_mlprs(model, version, (scores_valid, scores_test))
        bar.update(1)
    auto = MLPR(hierarchy=data.hierarchy, random_state=seed).fit(data.train_scores, data.train_labels)
    values["mLPR-auto"] = (auto.predict_proba(scores_valid), auto.predict_proba(scores_test))
    bar.update(1)
    bar.close()
    tables = experiment_tables(values, data.hierarchy, labels_valid, labels_test)
    info = {
        "n_train": n_train,
        "n_valid": len(scores_valid),
        "n_test": len(scores_test),
        "seed": seed,
        "theta": np.round(data.theta, 4).tolist(),
        "score_model": score_model,
        "auto": {"version": auto.version_, "tempering": sorted({round(float(a), 3) for a in auto.tempering_})},
    }
    return ExperimentResult(tables=tables, info=info)


_LEGENDS = {
    "precision": (
        "Precision: the fraction of positives among the top kappa of all (object, class) test events "
        "in the method's ranking."
    ),
    "recall": "Recall: the fraction of all positive test events that are in the top kappa.",
    "fdp": (
        "FDP: the realised false discovery proportion on test at the cutoff chosen on validation as "
        "the largest prefix with realised FDR <= alpha (carried over as the same fraction of events). "
        "0.0 where no validation prefix meets alpha: nothing is called (raw scores put confident "
        "negatives first for the classes whose scores are inverted)."
    ),
    "discovery": "Discovery: the fraction of all positive test events called at the same cutoffs.",
    "summary": (
        "F1 % at the max-F1 cutoff chosen on validation; kappa % = the share of test events called "
        "positive at that cutoff; hit-curve area % = the area under the hit curve (true positives "
        "found against the number of events called) as a share of the ideal ranking's; violations = "
        "ancestor pairs the ranking puts after their descendant."
    ),
}


def format_tables(result):
    """The experiment's tables as text, in the layout of the paper's tables (percent).

    Parameters
    ----------
    result : ExperimentResult
        The return value of :func:`synthetic_experiment`.

    Returns
    -------
    str
        Each table with its title and legend.
    """
    import pandas as pd

    t = result.tables
    info = result.info
    parts = [
        f"The paper's synthetic experiment: {info.get('n_train')} training, "
        f"{info.get('n_valid')} validation, {info.get('n_test')} test objects; seed {info.get('seed')}",
    ]
    if info.get("auto"):
        parts.append(f"mLPR-auto (the default MLPR) chose version {info['auto']['version']} with evidence "
                     f"exponent {'/'.join(str(a) for a in info['auto']['tempering'])}; mLPR-indpt/nbh/full "
                     "are the paper's model (exponent 1, no recalibration)")
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
            parts.append(f"\n{title}\n" + table.to_string(float_format=pct) + "\n" + _LEGENDS[key])
        summary = t["summary"].copy()
        for col in ("F1 (max-F1 cutoff)", "kappa (max-F1)", "hit-curve area"):
            summary[col] *= 100
        summary = summary.rename(columns={
            "F1 (max-F1 cutoff)": "F1 %", "kappa (max-F1)": "kappa %", "hit-curve area": "hit-curve area %",
        })
        summary["violations"] = summary["violations"].astype(int)
        parts.append("\nSummary\n" + summary.to_string(float_format=pct) + "\n" + _LEGENDS["summary"])
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
