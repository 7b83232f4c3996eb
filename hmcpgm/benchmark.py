"""The real-data benchmark: Clus HMC ARFF files, first stage, second stage, evaluation.

For one data set (train, validation and test files sharing a hierarchy):

1. first-stage scores: out-of-fold on the training rows
   (:func:`hmcpgm.first_stage.out_of_fold_scores`), and from classifiers trained
   on all training rows for the validation and test rows, so the second stage is
   never fitted on scores of rows its classifiers saw;
2. the second stage (:class:`hmcpgm.MLPR`) fitted on the out-of-fold training
   scores; classes without training positives carry no evidence
   (``allow_empty=True``), their mLPR follows from the hierarchy alone;
3. every method (Raw and mLPR-{indpt, nbh, full}, each ranked by NaiveSort and
   HierRank) evaluated on the test rows over the *evaluated* classes (the
   benchmark convention leaves out the artificial root and the three GO roots):
   micro-averaged AU(PRC) of the ranking, precision and recall at kappa, F1 at the
   max-F1 cutoff chosen on the validation rows, and hierarchy violations of the
   ranking (ancestor pairs out of order, all classes).

The published numbers beside ours come from ``shared/data/hmc/README.md``
(C-HMCNN's README, mean of 10 seeds; Clus-HMC from Wehrmann et al. 2018).
"""

import time
from pathlib import Path

import numpy as np

__all__ = ["PUBLISHED_AUPRC", "benchmark_arff", "format_benchmark"]

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


def _dataset_name(path):
    name = Path(path).name
    for suffix in (".train.arff", ".valid.arff", ".test.arff", "_Train.arff", "_trainvalid.arff", ".arff"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _restrict(order, keep, n_classes):
    """The ranking of the kept columns only, re-indexed to the (M, K_kept) sub-matrix."""
    cls = order % n_classes
    obj = order // n_classes
    mask = keep[cls]
    new_col = np.cumsum(keep) - 1
    return obj[mask] * int(keep.sum()) + new_col[cls[mask]]


def _rank_scores(order):
    """A score per event that reproduces ``order`` when sorted descending (no ties)."""
    scores = np.empty(order.size, dtype=float)
    scores[order] = np.arange(order.size, 0, -1, dtype=float)
    return scores


def _evaluate(order_valid, order_test, labels_valid, labels_test, hierarchy, keep, kappas):
    from .decision import choose_cutoff, decisions_from_cutoff
    from .metrics import average_precision, f1_score, precision_recall_at
    from .ranking import count_violations

    k = hierarchy.n_classes
    sub_valid = _restrict(order_valid, keep, k)
    sub_test = _restrict(order_test, keep, k)
    y_valid = labels_valid[:, keep]
    y_test = labels_test[:, keep]
    m_test, k_kept = y_test.shape
    ap = average_precision(
        _rank_scores(sub_test).reshape(m_test, k_kept), y_test, exclude_roots=False
    )
    precision, recall = precision_recall_at(sub_test, y_test, kappas)
    cut = choose_cutoff(sub_valid, y_valid, rule="max_f1")
    decisions = decisions_from_cutoff(cut, sub_test, m_test, k_kept)
    return {
        "auprc": float(ap),
        **{f"precision@{kap}": float(p) for kap, p in zip(kappas, precision)},
        **{f"recall@{kap}": float(r) for kap, r in zip(kappas, recall)},
        "f1_max_f1_cutoff": float(f1_score(decisions, y_test)),
        "kappa_max_f1": float(cut.kappa),
        "violations": int(count_violations(order_test, hierarchy)),
    }


def benchmark_arff(train, valid, test, *, seed=0, versions=("indpt", "nbh", "full"), classifier=None,
                   engine="auto", kappas=KAPPAS, progress=True):
    """Run the benchmark on one Clus HMC data set and return every number as a dict.

    Parameters
    ----------
    train, valid, test : str or Path
        ARFF files of one data set (same class attribute).
    seed : int
        Seeds the first stage's folds.
    versions : tuple of str
        mLPR versions to evaluate.
    classifier : scikit-learn estimator, optional
        First-stage classifier (default :func:`hmcpgm.first_stage.default_classifier`).
    engine : str
        Inference engine of the full version; ``"auto"`` takes the exact engine on
        forests and the junction tree on DAGs when its cliques are small, loopy
        belief propagation otherwise.
    kappas : tuple of float
        Proportions of the ranked events for precision and recall at kappa.
    progress : bool
        Show progress bars.

    Returns
    -------
    dict
        ``dataset``, ``hierarchy`` (kind and counts), ``rows`` (train/valid/test),
        ``methods`` ({method: {metric: value}}), ``published`` (AU(PRC) of other
        systems), ``seconds`` (time per step), ``engine`` (what ran the full version).
    """
    from tqdm.auto import tqdm

    from .datasets import load_hmc_arff
    from .estimator import MLPR
    from .exceptions import HierarchyError, InferenceError
    from .first_stage import fit_first_stage, out_of_fold_scores, predict_scores
    from .ranking import hier_rank, naive_sort

    seconds = {}
    t0 = time.perf_counter()
    data = {name: load_hmc_arff(path) for name, path in (("train", train), ("valid", valid), ("test", test))}
    hierarchy = data["train"].hierarchy
    for name in ("valid", "test"):
        if data[name].hierarchy != hierarchy:
            raise HierarchyError(f"{data[name].path} declares a different hierarchy than {data['train'].path}")
    keep = data["train"].evaluated
    seconds["read"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    x_train, y_train = data["train"].features, data["train"].labels
    s_train = out_of_fold_scores(x_train, y_train, classifier, seed=seed, progress=progress)
    first = fit_first_stage(x_train, y_train, classifier, progress=progress)
    s_valid = predict_scores(first, data["valid"].features)
    s_test = predict_scores(first, data["test"].features)
    seconds["first_stage"] = time.perf_counter() - t0

    values = {"Raw": (s_valid, s_test)}
    t0 = time.perf_counter()
    model = MLPR(allow_empty=True).fit(s_train, y_train, hierarchy)
    seconds["second_stage_fit"] = time.perf_counter() - t0
    full_engine = engine
    if full_engine == "auto" and not hierarchy.is_forest:
        full_engine = "junction"
    for version in tqdm(versions, desc="mLPR versions", disable=not progress, leave=False):
        t0 = time.perf_counter()
        model.set_params(version=version, engine=full_engine if version == "full" else "auto")
        try:
            pair = (model.predict_proba(s_valid), model.predict_proba(s_test))
        except InferenceError:
            if version != "full" or engine != "auto":
                raise
            # the junction tree of this DAG is too wide: loopy belief propagation
            full_engine = "loopy"
            model.set_params(engine="loopy")
            pair = (model.predict_proba(s_valid), model.predict_proba(s_test))
        values[f"mLPR-{version}"] = pair
        seconds[f"mlpr_{version}"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    methods = {}
    for family, (v_valid, v_test) in values.items():
        for rank_name, rank in (("NaiveSort", naive_sort), ("HierRank", hier_rank)):
            methods[f"{family}-{rank_name}"] = _evaluate(
                rank(v_valid, hierarchy), rank(v_test, hierarchy),
                data["valid"].labels, data["test"].labels, hierarchy, keep, kappas,
            )
    seconds["rank_and_evaluate"] = time.perf_counter() - t0
    name = _dataset_name(train)
    return {
        "dataset": name,
        "hierarchy": {
            "kind": hierarchy.kind,
            "classes": hierarchy.n_classes,
            "evaluated_classes": int(keep.sum()),
            "edges": len(hierarchy.edges),
            "multi_parent_classes": int(sum(len(p) > 1 for p in hierarchy.parent_indices)),
        },
        "rows": {part: int(d.n_objects) for part, d in data.items()},
        "engine": {"full": full_engine},
        "methods": methods,
        "published": PUBLISHED_AUPRC.get(name, {}),
        "seconds": {k: round(v, 2) for k, v in seconds.items()},
    }


def format_benchmark(result):
    """The benchmark result as a text table (percent)."""
    import pandas as pd

    table = pd.DataFrame.from_dict(result["methods"], orient="index")
    shown = table.drop(columns=["kappa_max_f1"]).copy()
    for col in shown.columns:
        if col != "violations":
            shown[col] = 100 * shown[col]
    h = result["hierarchy"]
    lines = [
        f"{result['dataset']}: {h['kind']} of {h['classes']} classes ({h['evaluated_classes']} evaluated, "
        f"{h['multi_parent_classes']} with several parents); rows train/valid/test "
        f"{result['rows']['train']}/{result['rows']['valid']}/{result['rows']['test']}; "
        f"full mLPR by the {result['engine']['full']} engine",
        "",
        "Percent on the test rows over evaluated classes; F1 at the max-F1 cutoff chosen on validation; "
        "violations = ancestor pairs out of order in the ranking",
    ]
    with pd.option_context("display.width", 250, "display.max_columns", 30):
        lines.append(shown.to_string(float_format=lambda x: f"{x:.1f}"))
    if result["published"]:
        lines.append(
            "\nPublished micro AU(PRC) (%): "
            + ", ".join(f"{k} {100 * v:.1f}" for k, v in result["published"].items())
        )
    lines.append("Seconds: " + ", ".join(f"{k} {v}" for k, v in result["seconds"].items()))
    return "\n".join(lines)
