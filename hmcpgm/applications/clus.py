"""The real-data benchmark: Clus-HMC ARFF data, first stage, second stage, evaluation.

For one data set (training, optional validation and test rows sharing a hierarchy):

1. first-stage scores: out-of-fold on the training rows, and from classifiers
   trained on all training rows for the validation and test rows, so the second
   stage is never fitted on scores of rows its classifiers saw. ``"joint"``: one
   ridge regression for every class at once; ``"classwise"``: one logistic
   regression per class;
2. the second stage fitted on the out-of-fold training scores: ``mLPR-auto``, the
   default :class:`hmcpgm.MLPR` (version, evidence strength and score models
   chosen by cross-fitting on the training rows, mLPRs recalibrated for the
   Bayesian FDR), and the paper's model for each version (``mLPR-indpt``,
   ``mLPR-nbh``, ``mLPR-full``: tempering None, no recalibration, kernel LPR
   score models). Classes without training positives carry no evidence
   (``allow_empty=True``), their mLPR follows from the hierarchy alone. The
   paper's versions predict with ``engine``: ``"auto"`` answers ``mLPR-full``
   exactly wherever an exact engine fits the memory budget (on the Gene Ontology,
   the sparse junction tree). Where that exact engine is not loopy BP and the
   hierarchy is a DAG, ``mLPR-full-loopy`` is the same model answered by loopy BP,
   and ``full_exact_vs_loopy`` says how far apart the two answers are: how much
   of mLPR-full's result is the model's and how much the engine's;
3. every method (Raw and mLPR, each ranked by NaiveSort and HierRank)
   evaluated on the test rows over the *evaluated* classes (the convention leaves
   out the artificial root and the three GO roots): micro-averaged AU(PRC) of the
   ranking, precision and recall at kappa, F1 at the max-F1 cutoff chosen on the
   validation rows, the Bayesian FDR cutoff's calls and realised FDP, and
   hierarchy violations of the ranking (ancestor pairs out of order, all classes).

The published numbers beside ours come from ``shared/data/hmc/README.md``
(C-HMCNN's README, mean of 10 seeds; Clus-HMC from Wehrmann et al. 2018).
"""

import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from .._util import check_seed
from ..datasets import dataset_name
from ..options import check_choice
from .evaluation import cutoff_power, evaluate_methods, fdr_curve, paper_mlprs
from .leaderboard import correction_values

__all__ = ["PUBLISHED_AUPRC", "FIRST_STAGES", "first_stage_scores", "run_benchmark", "format_benchmark",
           "split_validation"]

#: Published micro AU(PRC) on the test split: {data set: {system: value}}.
PUBLISHED_AUPRC = {
    "cellcycle_FUN": {"C-HMCNN": 0.255, "Clus-HMC": 0.172, "Clus-Ens": 0.227},
    "eisen_FUN": {"C-HMCNN": 0.306},
    "gasch1_FUN": {"C-HMCNN": 0.286},
    "cellcycle_GO": {"C-HMCNN": 0.413},
    "eisen_GO": {"C-HMCNN": 0.455},
    "gasch1_GO": {"C-HMCNN": 0.436},
    "ImCLEF07A": {"C-HMCNN": 0.956},
    "Enron_corr": {"C-HMCNN": 0.756},
}

KAPPAS = (0.01, 0.05, 0.1, 0.2)
RECALLS = (0.1, 0.2)
BAYES_ALPHAS = (0.05, 0.1, 0.2)
FIRST_STAGES = ("joint", "classwise")


def split_validation(data, fraction=0.3, seed=0):
    """Carve a seeded random ``fraction`` of the rows of ``data`` out as validation rows.

    Parameters
    ----------
    data : HMCData
        The rows to split (features and labels are split together).
    fraction : float in (0, 1)
        Share of the rows that become validation rows (rounded to a whole number).
    seed : int
        Seeds the random choice of the validation rows.

    Returns
    -------
    train, valid : HMCData
        The remaining rows and the validation rows, in their original order.
    """
    from ..exceptions import InputError

    if isinstance(fraction, (bool, np.bool_)) or not isinstance(fraction, (int, float, np.integer, np.floating)) \
            or not 0 < fraction < 1:
        raise InputError(f"valid_fraction must be a number in (0, 1), got {fraction!r}")
    rng = np.random.default_rng(check_seed(seed, "seed", none=False))
    m = data.n_objects
    n_valid = int(round(fraction * m))
    if not 0 < n_valid < m:
        raise InputError(f"valid_fraction={fraction!r} of the {m} training rows leaves "
                         f"{'no validation' if n_valid == 0 else 'no training'} rows")
    valid_rows = np.zeros(m, dtype=bool)
    valid_rows[rng.choice(m, size=n_valid, replace=False)] = True
    part = lambda rows: replace(data, features=data.features[rows], labels=data.labels[rows])  # noqa: E731
    return part(~valid_rows), part(valid_rows)


def _first_stage(kind, classifier):
    """The scikit-learn estimator and whether it is fitted once for all classes."""
    if classifier is not None:
        return classifier, kind == "joint"
    from ..first_stage import default_classifier, default_classwise_classifier

    if kind == "joint":
        return default_classifier(), True
    return default_classwise_classifier(), False


def first_stage_scores(train, others, first_stage="joint", *, classifier=None, seed=0, progress=True):
    """The benchmark's first stage: out-of-fold scores of the training rows, and the scores of other rows.

    Parameters
    ----------
    train : HMCData
        The training rows.
    others : sequence of HMCData
        Rows scored by the first stage fitted on all training rows (validation, test).
    first_stage : {"joint", "classwise"}
        Joint ridge regression on all classes, or one logistic regression per class.
    classifier : scikit-learn estimator, optional
        Replaces the first stage's default estimator.
    seed : int
        Seeds the out-of-fold folds.
    progress : bool
        Show progress bars.

    Returns
    -------
    (ndarray, list of ndarray)
        The (M, K) out-of-fold training scores, and the scores of each of ``others``.
    """
    from ..first_stage import fit_first_stage, out_of_fold_scores, predict_scores

    check_choice(first_stage, "first_stage", FIRST_STAGES)
    estimator, joint = _first_stage(first_stage, classifier)
    s_train = out_of_fold_scores(train.features, train.labels, estimator, seed=seed, joint=joint, progress=progress)
    fitted = fit_first_stage(train.features, train.labels, estimator, joint=joint, progress=progress)
    return s_train, [predict_scores(fitted, part.features) for part in others]


def run_benchmark(train, test, valid=None, *, first_stage="joint", valid_fraction=0.3, seed=0,
                  versions=("indpt", "nbh", "full"), classifier=None, engine="auto", kappas=KAPPAS,
                  alphas=BAYES_ALPHAS, recalls=RECALLS, corrections=True, bootstrap=200, progress=True,
                  nominal="one-hot"):
    """Run the benchmark on one Clus-HMC data set and return every number as a dict.

    Parameters
    ----------
    train, test : str, Path or HMCData
        ARFF files (or loaded data) of one data set (same class attribute and features).
        Nominal features of three or more values are read one-hot, for files and loaded
        data alike (:meth:`hmcpgm.datasets.HMCData.one_hot`), unless ``nominal="codes"``.
    valid : str, Path or HMCData, optional
        Validation rows; without them a seeded ``valid_fraction`` of the training
        rows is carved out as validation rows.
    first_stage : {"joint", "classwise"}
        Joint ridge regression on all classes, or one logistic regression per class.
    valid_fraction : float in (0, 1)
        Share of the training rows carved out as validation rows when ``valid`` is not given.
    seed : int
        Seeds the first stage's folds and the validation carving.
    versions : tuple of str
        The mLPR versions to evaluate.
    classifier : scikit-learn estimator, optional
        Replaces the first stage's default estimator.
    engine : str
        Inference engine; ``"auto"`` is the one policy of
        :func:`hmcpgm.inference.choose_engine` (exact wherever an exact engine fits
        the memory budget, loopy BP with a warning otherwise).
    kappas, alphas : tuples of float
        Precision/recall at kappa; Bayesian FDR targets.
    recalls : tuple of float
        Precision at these recall levels (the start of the PR curve).
    corrections : bool
        Also run the classic corrections of
        :data:`hmcpgm.applications.leaderboard.LEADERBOARD` after per-class
        isotonic and Platt calibration (the leaderboard).
    bootstrap : int
        Resamples of the test rows (seeded with ``seed``, the same for every
        method) for the standard error of each method's AU(PRC) and of its
        paired difference with mLPR-auto-HierRank (``auprc_se``,
        ``auprc_diff_se``, ``auprc_diff_low``, ``auprc_diff_high`` in
        ``methods``); 0 skips them.
    progress : bool
        Show progress bars.
    nominal : {"one-hot", "codes"}
        How the first stage reads nominal features: one 0/1 column per value (a
        feature of three or more values), or the codes of the values, for values that
        are ordered (``low, mid, high``).

    Returns
    -------
    dict
        ``dataset``, ``hierarchy`` (kind and counts), ``rows`` (train/valid/test),
        ``first_stage``, ``engine`` (per version: which engine ran and whether it is
        exact), ``full_exact_vs_loopy`` (DAGs where the full version's engine is
        exact and not loopy BP: the largest and mean absolute difference between
        the exact and the loopy test mLPRs, and the seconds of each), ``fit_seconds``
        (seconds to fit each second stage: the family's name -> seconds), ``methods``
        ({method: {metric: value}}), ``bootstrap`` (resamples and the reference
        method of the paired differences), ``published`` (AU(PRC) of other systems),
        ``seconds`` (time per step).
    """
    from tqdm.auto import tqdm

    from ..datasets import load_hmc_arff
    from ..estimator import MLPR
    from ..exceptions import InputError
    from ..inference import engine_in_use
    from ..plot import reliability_table

    check_choice(first_stage, "first_stage", FIRST_STAGES)
    check_choice(nominal, "nominal", ("one-hot", "codes"))
    seconds = {}
    t0 = time.perf_counter()
    data = {part: load_hmc_arff(d) if isinstance(d, (str, Path)) else d
            for part, d in (("train", train), ("valid", valid), ("test", test)) if d is not None}
    if nominal == "one-hot":  # nominal features of 3+ values (C-HMCNN one-hot encodes them too): linear first stages
        data = {part: d.one_hot() for part, d in data.items()}
    for part, d in data.items():
        if len(d.labels) == 0:
            raise InputError(f"the {part} rows ({d.path}) are empty: the ARFF file has no data rows")
        d.check_features_like(data["train"])
        infinite = np.argwhere(np.isinf(d.features))
        if len(infinite):  # the first stage's message named neither the file nor the row
            i, j = infinite[0]
            raise InputError(f"the {part} rows ({d.path}) hold an infinite feature value: data row {i + 1}, feature "
                             f"{d.feature_names[j]!r} is {d.features[i, j]}; the first stage needs numbers, or ? for "
                             "a missing one")
    if "valid" not in data:
        data["train"], data["valid"] = split_validation(data["train"], valid_fraction, seed)
    hierarchy = data["train"].hierarchy
    for name in ("valid", "test"):
        data[name].check_hierarchy_like(data["train"])
    evaluated = [c for c, keep in zip(hierarchy.classes, data["train"].evaluated) if keep]
    for name in ("valid", "test"):  # AU(PRC) and the cutoffs need a positive (the error named no file)
        if not data[name].labels[:, hierarchy.indices(evaluated)].any():
            raise InputError(f"the {name} rows ({data[name].path or 'split from TRAIN'}) have no positive label "
                             "among the evaluated classes: there is nothing to rank")
    seconds["read"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    y_train = data["train"].labels
    s_train, (s_valid, s_test) = first_stage_scores(data["train"], (data["valid"], data["test"]), first_stage,
                                                    classifier=classifier, seed=seed, progress=progress)
    seconds["first_stage"] = time.perf_counter() - t0

    values = {"Raw": (s_valid, s_test)}
    fit_seconds = {}
    t0 = time.perf_counter()
    auto = MLPR(hierarchy=hierarchy, allow_empty=True, engine=engine, random_state=seed).fit(s_train, y_train)
    seconds["auto_fit"] = fit_seconds["mLPR-auto"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    values["mLPR-auto"] = (auto.predict_proba(s_valid), auto.predict_proba(s_test))
    crossfitted = auto.calibrated_proba(s_test)  # the map fit() built by cross-fitting
    seconds["auto_predict"] = time.perf_counter() - t0
    # the FDR cutoff's map refitted on the validation rows, which the final model did not see
    t0 = time.perf_counter()
    auto.fit_recalibration(s_valid, data["valid"].labels)
    seconds["auto_recalibrate"] = time.perf_counter() - t0
    fit_seconds["mLPR-auto"] += seconds["auto_recalibrate"]
    bayes_values = {"mLPR-auto": auto.second_stage_.calibrate(values["mLPR-auto"][1])}  # calibrated_proba's values
    engines = {"auto": dict(zip(("engine", "exact"), auto.engine_in_use()))}
    second_stage = {
        "version": auto.version_,
        "tempering": sorted({round(float(a), 4) for a in auto.tempering_}),
        "pool_weight": auto.pool_weight_,
        "stack_weight": auto.stack_weight_,
        "consistency": auto.consistency_,
        "score_models": {k: int(n) for k, n in zip(*np.unique(auto.score_model_.choice, return_counts=True))}
        if getattr(auto.score_model_, "choice", None) is not None else auto.score_model_.kind,
        "cv_results": auto.cv_results_.to_dict(orient="records"),
    }
    t0 = time.perf_counter()
    model = MLPR(hierarchy=hierarchy, version="full", score_model="lpr", tempering=None, recalibrate=False,
                 allow_empty=True).fit(s_train, y_train)
    seconds["paper_fit"] = time.perf_counter() - t0
    for version in versions:
        fit_seconds[f"mLPR-{version}"] = seconds["paper_fit"]
    for version in tqdm(versions, desc="mLPR versions", disable=not progress, leave=False):
        t0 = time.perf_counter()
        engines[version] = dict(zip(("engine", "exact"), engine_in_use(hierarchy, version, engine)))
        values[f"mLPR-{version}"] = paper_mlprs(model, version, (s_valid, s_test), engine)
        seconds[f"mlpr_{version}"] = time.perf_counter() - t0
    full_vs_loopy = None
    if "full" in versions and not hierarchy.is_forest and engines["full"]["engine"] != "loopy":
        # the same model answered by loopy BP: is mLPR-full's result the model's or the engine's?
        t0 = time.perf_counter()
        values["mLPR-full-loopy"] = paper_mlprs(model, "full", (s_valid, s_test), "loopy")
        seconds["mlpr_full_loopy"] = time.perf_counter() - t0
        engines["full-loopy"] = dict(zip(("engine", "exact"), engine_in_use(hierarchy, "full", "loopy")))
        gap = np.abs(values["mLPR-full"][1] - values["mLPR-full-loopy"][1])
        full_vs_loopy = {"exact_engine": engines["full"]["engine"], "max_abs_diff": float(gap.max()),
                         "mean_abs_diff": float(gap.mean()), "seconds_exact": round(seconds["mlpr_full"], 2),
                         "seconds_loopy": round(seconds["mlpr_full_loopy"], 2)}

    rankers = {}
    if corrections:
        t0 = time.perf_counter()
        fixed, corr_seconds = correction_values(s_train, y_train, (s_valid, s_test), hierarchy)
        values.update(fixed)
        fit_seconds.update(corr_seconds)
        rankers = {family: ("NaiveSort",) for family in fixed}
        seconds["corrections"] = time.perf_counter() - t0
    cafa_ia = None
    if not hierarchy.is_forest:  # the Gene Ontology sets: CAFA's Fmax and Smin too, IA from the training labels
        from ..metrics import information_accretion

        cafa_ia = information_accretion(y_train, hierarchy)
    t0 = time.perf_counter()
    methods = evaluate_methods(
        values, hierarchy, data["valid"].labels, data["test"].labels, classes=evaluated,
        kappas=kappas, bayes_alphas=alphas, auprc=True, bayes_values=bayes_values, recalls=recalls,
        rankers=rankers, bayes_families=[f for f in values if f.startswith("mLPR") and f != "mLPR-full-loopy"],
        cafa_ia=cafa_ia, bootstrap=bootstrap, reference="mLPR-auto-HierRank" if bootstrap else None, seed=seed,
    )
    curve = fdr_curve(values["mLPR-auto"][1], {"calibrated": bayes_values["mLPR-auto"], "cross-fitted": crossfitted,
                                               "mlpr": values["mLPR-auto"][1]},
                      data["test"].labels, hierarchy, classes=evaluated)
    fdr_crossfitted = cutoff_power(values["mLPR-auto"][1], crossfitted, data["test"].labels, hierarchy, evaluated,
                                   alphas)
    reliability = {}
    cols = hierarchy.indices(evaluated)
    for name, p in (("calibrated", bayes_values["mLPR-auto"]), ("mlpr", values["mLPR-auto"][1])):
        mean_p, observed, counts = reliability_table(p[:, cols], data["test"].labels[:, cols], 10)
        reliability[name] = {"mean_p": mean_p.tolist(), "observed": observed.tolist(), "events": counts.tolist()}
    seconds["rank_and_evaluate"] = time.perf_counter() - t0
    name = dataset_name(data["train"].path or "data")
    return {
        "dataset": name,
        "hierarchy": {
            "kind": hierarchy.kind,
            "classes": hierarchy.n_classes,
            "evaluated_classes": len(evaluated),
            "edges": len(hierarchy.edges),
            "multi_parent_classes": int(sum(len(p) > 1 for p in hierarchy.parent_indices)),
        },
        "rows": {part: int(d.n_objects) for part, d in data.items()},
        "first_stage": first_stage,
        "engine": engines,
        **({"full_exact_vs_loopy": full_vs_loopy} if full_vs_loopy else {}),
        "second_stage": second_stage,
        "fdr_curve": curve,
        "fdr_crossfitted": fdr_crossfitted,
        "reliability": reliability,
        "fit_seconds": {k: round(v, 3) for k, v in fit_seconds.items()},
        "methods": methods,
        "bootstrap": {"resamples": int(bootstrap), "reference": "mLPR-auto-HierRank", "seed": seed},
        "published": PUBLISHED_AUPRC.get(name, {}),
        "seconds": {k: round(v, 2) for k, v in seconds.items()},
    }


def _second_stage_line(stage):
    if not stage:
        return ""
    pool, stack = stage.get("pool_weight", 1.0), stage.get("stack_weight", 0.0)
    return (f"; mLPR-auto chose {stage['version']} with evidence exponent "
            f"{'/'.join(str(a) for a in stage['tempering'])}"
            + (f", pooled with the isotonic posteriors at weight {pool:g}" if pool < 1 else "")
            + (f", averaged with the neighbour stack at weight {stack:g}" if stack else ""))


def format_benchmark(result):
    """The benchmark result as a text table (percent).

    Parameters
    ----------
    result : dict
        The return value of :func:`run_benchmark`.

    Returns
    -------
    str
        The data set line, the table of metrics per method, the Bayesian FDR
        cutoffs, published AU(PRC) and the seconds per step.
    """
    import pandas as pd

    table = pd.DataFrame.from_dict(result["methods"], orient="index")
    shown = table.drop(columns=[c for c in table.columns if c == "kappa_max_f1"
                                or c.startswith(("bayes_", "oracle_", "auprc_se", "auprc_diff"))]).copy()
    for col in shown.columns:
        if col not in ("violations", "smin"):  # Smin is in bits of information, not a share
            shown[col] = 100 * shown[col]
    h = result["hierarchy"]
    lines = [
        f"{result['dataset']}: {h['kind']} of {h['classes']} classes ({h['evaluated_classes']} evaluated, "
        f"{h['multi_parent_classes']} with several parents); rows train/valid/test "
        f"{result['rows']['train']}/{result['rows']['valid']}/{result['rows']['test']}; "
        f"{result['first_stage']} first stage; "
        + ", ".join(f"mLPR-{v} by {e['engine']} ({'exact' if e['exact'] else 'approximate'})"
                    for v, e in result["engine"].items())
        + _second_stage_line(result.get("second_stage")),
        "",
        "Percent on the test rows over evaluated classes; F1 at the max-F1 cutoff chosen on validation; "
        "violations = ancestor pairs out of order in the ranking",
    ]
    with pd.option_context("display.width", 250, "display.max_columns", 30):
        lines.append(shown.to_string(float_format=lambda x: f"{x:.1f}"))
    bayes = [c for c in table.columns if c.startswith("bayes_rank@")]
    if bayes:
        lines.append("\nBayesian FDR cutoff on the test mLPRs: events called (realised FDP %, and the oracle's count: "
                     "the longest prefix whose realised FDP is at most alpha)")
        for method, row in table.iterrows():
            # mLPR-full-loopy checks an engine, it is not a second stage: no cutoff of its own
            if method.startswith("mLPR") and method.endswith("HierRank") and not pd.isna(row[bayes[0]]):
                cells = []
                for col in bayes:
                    alpha = col.split("@", 1)[1]
                    f = row[f"bayes_fdp@{alpha}"]
                    fdp = "-" if f is None or pd.isna(f) else f"{100 * f:.1f}"
                    oracle = row.get(f"oracle_rank@{alpha}")
                    tail = "" if oracle is None or pd.isna(oracle) else f", oracle {int(oracle)}"
                    cells.append(f"alpha {alpha}: {int(row[col])} ({fdp}{tail})")
                lines.append(f"  {method}: " + "; ".join(cells))
    boot = result.get("bootstrap", {})
    if boot.get("resamples") and "auprc_diff_se" in table.columns:
        ref = boot["reference"]
        lines.append(f"\nBootstrap of the test rows ({boot['resamples']} resamples, every method on the same ones): "
                     f"{ref} AU(PRC) {100 * table.loc[ref, 'auprc']:.1f} ± {100 * table.loc[ref, 'auprc_se']:.1f}")
        others = table.drop(index=ref)
        if len(others):
            best = others["auprc"].astype(float).idxmax()
            row = others.loc[best]
            lines.append(f"  best other method {best} minus it: {100 * (row['auprc'] - table.loc[ref, 'auprc']):+.2f} "
                         f"± {100 * row['auprc_diff_se']:.2f} (95% interval {100 * row['auprc_diff_low']:+.2f} to "
                         f"{100 * row['auprc_diff_high']:+.2f})")
    if result["published"]:
        lines.append(
            "\nPublished micro AU(PRC) (%): "
            + ", ".join(f"{k} {100 * v:.1f}" for k, v in result["published"].items())
        )
    lines.append("Seconds: " + ", ".join(f"{k} {v}" for k, v in result["seconds"].items()))
    return "\n".join(lines)
