"""Research harness for the second stage on real data (issue 9).

For every data set in the HMC data folder (``--data-dir``; default the first
``shared/data/hmc`` found in the repository's parent folders) and both first
stages (``joint``: the default multi-output ridge; ``classwise``: one logistic
regression per class) this script

1. computes first-stage scores once and caches them in ``bench/out/scores/``
   (git-ignored): out-of-fold scores of the training rows, and scores of the
   test rows from the model refitted on all training rows (``refit``) and from
   the average of the fold models (``crossfit``);
2. fits candidate second stages on the TRAINING rows only (every choice,
   tempering, version, recalibration, is made by cross-validation there);
3. measures them on the TEST rows over the evaluated classes: micro AU(PRC) of
   the HierRank ranking, and for the Bayesian FDR cutoff on the HierRank order
   at alpha 0.05 / 0.1 / 0.2 the number of events called and their realised
   false discovery proportion.

Data sets without a validation file (ImCLEF07A, Enron_corr) lose a seeded 30%
of their training rows to validation (the rule of ``bench/benchmarks_table.py``)
so that the training rows are the same as the benchmark's; the validation rows
are not used here.

Usage (from the repository root)::

    python bench/realdata_study.py cache                 # first-stage scores of all data sets
    python bench/realdata_study.py table                 # the issue-9 table (auto and the three versions)
    python bench/realdata_study.py table --datasets cellcycle_FUN --first-stages joint
    python bench/realdata_study.py table --datasets Enron_corr --data-dir /path/to/shared/data/hmc --out enron.json
    python bench/realdata_study.py synthetic             # hmcpgm demo's data: auto's choice and precision
    python bench/realdata_study.py shift                 # test scores: refit vs fold average (cross-fitting)

``cache``, ``table`` and ``shift`` take ``--datasets``, ``--first-stages``,
``--seed`` and ``--data-dir``; ``table`` also ``--tempering``, ``--criterion``,
``--score-model``, ``--max-rows``, ``--test-scores`` and ``--out``;
``synthetic`` only ``--seed`` (see ``--help``).
"""

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
from _paths import HMC_DATA, require_data  # bench/ is on sys.path when a script runs

ROOT = Path(__file__).resolve().parents[1]
DATA = HMC_DATA
OUT = ROOT / "bench" / "out"
ORDER = ("cellcycle_FUN", "eisen_FUN", "gasch1_FUN", "ImCLEF07A", "Enron_corr",
         "cellcycle_GO", "eisen_GO", "gasch1_GO")
FIRST_STAGES = ("joint", "classwise")
ALPHAS = (0.05, 0.1, 0.2)
VALID_FRACTION = 0.3
N_BINS = 10  # reliability bins on [0, 1]


# ---------------------------------------------------------------------- data and first stage
def load(name, seed=0, data_dir=DATA):
    """(hierarchy, evaluated mask, X_train, Y_train, X_test, Y_test) with the carved split rule."""
    from hmcpgm.datasets import load_hmc_split

    require_data(data_dir)
    split = load_hmc_split(name, data_dir)
    X, Y = split.train.features, split.train.labels
    if split.valid is None:  # bench/benchmarks_table.py's carve_validation, on arrays
        perm = np.random.default_rng(seed).permutation(len(X))
        n_valid = int(round(VALID_FRACTION * len(X)))
        keep = np.sort(perm[n_valid:])
        X, Y = X[keep], Y[keep]
    return split.hierarchy, split.evaluated, X, Y, split.test.features, split.test.labels


def first_stage_scores(name, first_stage, *, seed=0, refresh=False, progress=False, data_dir=DATA):
    """Cached dict: train (out of fold), test (refit), test_crossfit (mean of fold models), seconds."""
    from hmcpgm.first_stage import OutOfFoldScores, fit_first_stage, predict_scores

    path = OUT / "scores" / f"{name}.{first_stage}.npz"
    if path.is_file() and not refresh:
        return dict(np.load(path))
    _, _, X, Y, X_test, _ = load(name, seed, data_dir)
    classwise = first_stage == "classwise"
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # lbfgs convergence chatter on rare classes
        crossfit = OutOfFoldScores(classwise=classwise, refit=False, random_state=seed, progress=progress)
        train = crossfit.fit_transform(X, Y)
        test_crossfit = crossfit.transform(X_test)
        t1 = time.perf_counter()
        est = None
        if classwise:
            from hmcpgm.first_stage import default_classwise_classifier

            est = default_classwise_classifier()
        model = fit_first_stage(X, Y, est, joint=not classwise, progress=progress)
        test = predict_scores(model, X_test)
    t2 = time.perf_counter()
    path.parent.mkdir(parents=True, exist_ok=True)
    out = {"train": train, "test": test, "test_crossfit": test_crossfit,
           "seconds": np.array([t1 - t0, t2 - t1])}
    np.savez_compressed(path, **out)
    return out


# ---------------------------------------------------------------------- evaluation on test rows
def evaluate(values, labels, hierarchy, evaluated, fdr_values=None, alphas=ALPHAS):
    """AU(PRC) (%) of the HierRank ranking of ``values``; Bayesian FDR cutoffs on that order.

    ``fdr_values`` (posterior probabilities, e.g. recalibrated mLPRs) give the
    estimated FDR ``mean(1 - p)`` of each prefix of the HierRank order restricted
    to the evaluated classes; for each alpha: events called and realised FDP.
    """
    from hmcpgm.decision import bayes_cutoff
    from hmcpgm.exceptions import CutoffWarning
    from hmcpgm.metrics import average_precision

    ranking = evaluated_ranking(values, hierarchy, evaluated)
    y = labels[:, evaluated]
    out = {"auprc": 100 * average_precision(-ranking.ranks.astype(float), y, exclude_roots=False)}
    if fdr_values is not None:
        p = np.clip(fdr_values[:, evaluated], 0.0, 1.0)
        hits = ranking.ranked(y)  # labels in ranked order
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CutoffWarning)  # "no prefix meets alpha": 0 events, reported as such
            for alpha in alphas:
                r = bayes_cutoff(ranking, p, alpha=alpha).rank
                out[f"n@{alpha}"] = int(r)
                out[f"fdp@{alpha}"] = float(1 - hits[:r].mean()) if r else float("nan")
    return out


def evaluated_ranking(values, hierarchy, evaluated):
    """The HierRank ranking of ``values`` restricted to the evaluated classes (order kept)."""
    from hmcpgm.ranking import hier_rank

    names = [c for c, e in zip(hierarchy.classes, evaluated) if e]
    return hier_rank(values, hierarchy).restrict(names)


def fdr_curves(values, labels, hierarchy, evaluated, calibrated, n_points=200, max_fdr=0.5):
    """Estimated (raw and recalibrated mLPRs) and realised FDP of each prefix of the HierRank order."""
    ranking = evaluated_ranking(values, hierarchy, evaluated)
    y = ranking.ranked(labels[:, evaluated])
    r = np.arange(1, ranking.n_events + 1)
    est_raw = np.cumsum(1 - ranking.ranked(values[:, evaluated])) / r
    est = np.cumsum(1 - ranking.ranked(calibrated[:, evaluated])) / r
    real = np.cumsum(1 - y) / r
    stop = max(int(np.searchsorted(np.maximum.accumulate(est), max_fdr)), 10)
    idx = np.unique(np.geomspace(1, min(stop, ranking.n_events), n_points).astype(int)) - 1
    return {"rank": (idx + 1).tolist(), "estimated": est[idx].tolist(), "estimated_raw": est_raw[idx].tolist(),
            "realised": real[idx].tolist()}


def reliability(p, y, n_bins=N_BINS):
    """``hmcpgm.plot.reliability_table`` as JSON lists, with the (0-based) uniform bin of each row.

    The table keeps the non-empty bins only; ``bin`` says which they are (the
    bins of scikit-learn's ``calibration_curve``: ``searchsorted`` on the inner
    edges of ``linspace(0, 1, n_bins + 1)``).
    """
    from hmcpgm.plot import reliability_table

    mean_predicted, observed_rate, counts = reliability_table(p, y, n_bins)
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    bins = np.unique(np.searchsorted(edges[1:-1], np.asarray(p, float).ravel()))
    return {"n_bins": n_bins, "bin": bins.tolist(), "mean_predicted": mean_predicted.tolist(),
            "observed_rate": observed_rate.tolist(), "counts": counts.tolist()}


def cache_all(names, first_stages, seed=0, data_dir=DATA):
    for name in names:
        for fs in first_stages:
            t0 = time.perf_counter()
            first_stage_scores(name, fs, seed=seed, data_dir=data_dir)
            print(f"[{time.strftime('%H:%M:%S')}] {name} {fs}: {time.perf_counter() - t0:.0f} s", flush=True)


# ---------------------------------------------------------------------- one data set
def study_one(name, first_stage, *, versions=("indpt", "nbh", "full"), tempering="one", criterion="log_loss",
              score_model="auto", max_rows=None, seed=0, test_scores="refit", data_dir=DATA):
    """Fit the auto second stage on the training rows; evaluate every version and the choice on test rows."""
    from dataclasses import replace

    from hmcpgm.calibration import fit_recalibration
    from hmcpgm.selection import cross_fitted_mlpr, fit_second_stage_auto

    h, keep, _, Y, _, Y_test = load(name, seed, data_dir)
    sc = first_stage_scores(name, first_stage, seed=seed, data_dir=data_dir)
    s_train, s_test = sc["train"], sc["test" if test_scores == "refit" else "test_crossfit"]
    t0, c0 = time.perf_counter(), time.process_time()
    stage, details = fit_second_stage_auto(
        s_train, Y, h, versions=versions, tempering=tempering, criterion=criterion, score_model=score_model,
        evaluated=keep, max_rows=max_rows, seed=seed, return_predictions=True)
    fit_seconds, fit_cpu = time.perf_counter() - t0, time.process_time() - c0
    preds = dict(details["versions"])
    table = stage.cv_table.set_index("version")
    for version in versions:  # screened out: its screening exponent, cross-fitted here for the table only
        if version not in preds:
            a = np.full(h.n_classes, table.loc[version, "a"][0])
            eng = table.loc[version, "engine"]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                p = cross_fitted_mlpr(details["crossfit"], h, version, a, rows=details["rows"], engine=eng)
            preds[version] = {"rows": details["rows"], "mlpr": p, "a": a, "engine": eng, "screened": True}
    t0, c0 = time.perf_counter(), time.process_time()
    L_test = stage.score_model.likelihoods(s_test)
    likelihood_seconds, likelihood_cpu = time.perf_counter() - t0, time.process_time() - c0
    result = {"dataset": name, "first_stage": first_stage, "raw": evaluate(s_test, Y_test, h, keep),
              "chosen": stage.version, "a": stage.a, "cv_table": stage.cv_table, "seconds_fit": fit_seconds,
              "stage_seconds": stage.seconds, "choice": stage.score_model.choice, "versions": {}}
    for version in versions:
        cfg = preds[version]
        t0, c0 = time.perf_counter(), time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # each version as cross-fitted here: its exponent, all evidence at it, no max constraint, and
            # the network's mLPRs alone (no pool with the isotonic posterior: the cross-fitted mLPRs the
            # recalibration is fitted on have none; bench/benchmarks_table.py measures the default whole)
            p = replace(stage, version=version, a=cfg["a"], engine=cfg["engine"], own=None,
                        consistency="hierrank", pool_weight=None, pool_model=None).mlpr(L_test)
        predict_seconds, predict_cpu = time.perf_counter() - t0, time.process_time() - c0
        rows = cfg["rows"]
        g = fit_recalibration(cfg["mlpr"][:, keep], Y[rows][:, keep])
        res = evaluate(p, Y_test, h, keep, g(p))
        res.update({f"raw_{k}": v for k, v in evaluate(p, Y_test, h, keep, p).items() if k != "auprc"})
        res["screened"] = bool(cfg.get("screened", False))
        result["versions"][version] = res
        if version == stage.version:
            result["curves"] = fdr_curves(p, Y_test, h, keep, g(p))
            result["reliability"] = {"test": reliability(g(p)[:, keep], Y_test[:, keep]),
                                     "test_raw": reliability(p[:, keep], Y_test[:, keep])}
            result["seconds_predict"] = likelihood_seconds + predict_seconds
            result["cpu_predict"] = likelihood_cpu + predict_cpu
    result["auto"] = result["versions"][stage.version]
    result["seconds"] = fit_seconds + result["seconds_predict"]
    result["cpu_seconds"] = fit_cpu + result["cpu_predict"]
    return result


# ---------------------------------------------------------------------- refit or cross-fit for new rows
def first_stage_shift(names, first_stages, seed=0, data_dir=DATA):
    """How far the test scores sit from the out-of-fold training scores, refit against fold average.

    Per class (evaluated, with training positives and negatives): the
    Kolmogorov-Smirnov distance between the training rows' out-of-fold scores and
    the test rows' scores, averaged over classes; and the test log loss (per
    event) of the per-class LPRs (``"lpr"`` score model fitted on the training
    rows) applied to each set of test scores.
    """
    from scipy.stats import ks_2samp

    from hmcpgm.likelihood import fit_score_model, log_loss_by_class

    print("| data set | first stage | KS refit | KS fold average | test log loss refit | test log loss fold average |")
    print("|---|---|---|---|---|---|")
    for name in names:
        for fs in first_stages:
            h, keep, _, Y, _, Y_test = load(name, seed, data_dir)
            sc = first_stage_scores(name, fs, seed=seed, data_dir=data_dir)
            n1 = Y.sum(axis=0)
            cols = np.flatnonzero(keep & (n1 > 0) & (n1 < len(Y)))
            ks = {key: np.mean([ks_2samp(sc["train"][:, k], sc[key][:, k]).statistic for k in cols])
                  for key in ("test", "test_crossfit")}
            model = fit_score_model(sc["train"], Y, h, allow_empty=True)
            loss = {key: log_loss_by_class(model.lpr(sc[key])[:, cols], Y_test[:, cols]).mean()
                    for key in ("test", "test_crossfit")}
            print(f"| {name} | {fs} | {ks['test']:.3f} | {ks['test_crossfit']:.3f} | {loss['test']:.5f} | "
                  f"{loss['test_crossfit']:.5f} |", flush=True)


# ---------------------------------------------------------------------- the paper's synthetic data
def synthetic(seed=0):
    """``hmcpgm demo``'s data: does auto pick full, and where does its precision at kappa land?"""
    from hmcpgm.datasets import make_paper_synthetic
    from hmcpgm.estimator import MLPR
    from hmcpgm.metrics import precision_recall_at
    from hmcpgm.ranking import hier_rank
    from hmcpgm.selection import fit_second_stage_auto

    data = make_paper_synthetic(50_000, 10_000, seed=seed)
    _, _, s_test, y_test = data.split_test()
    t0, c0 = time.perf_counter(), time.process_time()
    stage = fit_second_stage_auto(data.train_scores, data.train_labels, data.hierarchy, seed=seed)
    print(f"auto second stage on {len(data.train_scores)} training rows: {time.perf_counter() - t0:.0f} s wall, "
          f"{time.process_time() - c0:.0f} s cpu; chosen {stage.version}, a = {np.unique(stage.a.round(3))}")
    print(stage.cv_table.to_string())
    kappas = (0.05, 0.1, 0.2)
    # the paper's model (MLPR's defaults when this harness was written; now version="auto" with tempering)
    paper = MLPR(hierarchy=data.hierarchy, version="full", score_model="lpr", tempering=None, recalibrate=False)
    full = paper.fit(data.train_scores, data.train_labels).predict_proba(s_test)
    auto = stage.predict_proba(s_test)
    for name, p in (("mLPR-full-HierRank (paper's model: lpr, a = 1)", full), ("mLPR-auto-HierRank", auto)):
        precision, _ = precision_recall_at(hier_rank(p, data.hierarchy), y_test, kappas)
        print(f"{name}: precision at kappa {kappas}: " + " / ".join(f"{100 * x:.1f}" for x in precision))


# ---------------------------------------------------------------------- the table
def _fmt(x, pct=False):
    if x is None or (isinstance(x, float) and np.isnan(x)):
        return "-"
    return f"{x:.1f}" if pct else f"{x:.3f}"


def _fdr_cells(res):
    return [f"{res[f'n@{a}']}/{_fmt(res[f'fdp@{a}'])}" for a in ALPHAS]


def render(results, command):
    """The two tables and the target checks as text."""
    lines = [f"$ {command}", "",
             "AU(PRC) % of HierRank on the test rows (evaluated classes); auto = the version chosen on the "
             "training rows (* = screened out on 100 rows, exponent from the 3-point screening grid); Bayesian "
             "FDR cutoff of auto (recalibrated mLPRs) as events called / realised FDP",
             ""]
    head = ["data set", "first stage", "Raw", "indpt", "nbh", "full", "auto", "auto-Raw", "chosen", "a",
            *[f"auto@{a}" for a in ALPHAS], "seconds (wall/cpu)"]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in results:
        v = r["versions"]
        cells = [r["dataset"], r["first_stage"], _fmt(r["raw"]["auprc"], True)]
        cells += [(_fmt(v[x]["auprc"], True) + ("*" if v[x].get("screened") else "")) if x in v else "-"
                  for x in ("indpt", "nbh", "full")]
        cells += [_fmt(r["auto"]["auprc"], True), f"{r['auto']['auprc'] - r['raw']['auprc']:+.2f}", r["chosen"],
                  "/".join(f"{a:.2f}" for a in np.unique(np.round(r["a"], 2))), *_fdr_cells(r["auto"]),
                  f"{r['seconds']:.0f}/{r['cpu_seconds']:.0f}"]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "Bayesian FDR cutoff per version, events called / realised FDP at alpha "
              + ", ".join(str(a) for a in ALPHAS) + "; recalibrated (cross-fitted shared isotonic map) and, "
              "after 'raw:', on the mLPRs as they are", ""]
    head = ["data set", "first stage", "version", *[f"@{a}" for a in ALPHAS], *[f"raw @{a}" for a in ALPHAS]]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in results:
        for version, res in r["versions"].items():
            raw = [f"{res[f'raw_n@{a}']}/{_fmt(res[f'raw_fdp@{a}'])}" for a in ALPHAS]
            lines.append("| " + " | ".join([r["dataset"], r["first_stage"], version, *_fdr_cells(res), *raw]) + " |")
    lines += ["", "Targets:"]
    for fs in FIRST_STAGES:
        sub = [r for r in results if r["first_stage"] == fs]
        if not sub:
            continue
        gain = np.array([r["auto"]["auprc"] - r["raw"]["auprc"] for r in sub])
        worst = sub[int(np.argmin(gain))]["dataset"]
        lines.append(f"* {fs}: auto - Raw AU(PRC) mean {gain.mean():+.2f} points over {len(sub)} data sets, "
                     f"worst {gain.min():+.2f} ({worst})")
    bad = []
    for r in results:
        for name, res in [("auto", r["auto"]), *r["versions"].items()]:
            for a in ALPHAS:
                if res[f"n@{a}"] >= 50 and res[f"fdp@{a}"] > a + 0.05:
                    bad.append(f"{r['dataset']}/{r['first_stage']}/{name}@{a}: {res[f'n@{a}']} called, "
                               f"FDP {res[f'fdp@{a}']:.3f}")
    lines.append("* FDP > alpha + 0.05 with >= 50 events called: " + ("; ".join(bad) if bad else "none"))
    return "\n".join(lines)


def _jsonable(r):
    out = {k: v for k, v in r.items() if k not in ("cv_table", "a", "choice")}
    out["a"] = np.unique(np.round(r["a"], 4)).tolist()
    out["cv_table"] = r["cv_table"].to_dict(orient="records")
    out["choice"] = {k: int(v) for k, v in zip(*np.unique(r["choice"], return_counts=True))}
    return out


def main(argv=None):
    import json
    import shlex
    import sys

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("cache", "table", "synthetic", "shift"))
    parser.add_argument("--datasets", default=",".join(ORDER))
    parser.add_argument("--first-stages", default=",".join(FIRST_STAGES))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data-dir", default=str(DATA),
                        help="folder of the HMC ARFF files (default: the first shared/data/hmc in the "
                             f"repository's parent folders, here {DATA})")
    parser.add_argument("--tempering", default="one", help="one, depth, frequency or none")
    parser.add_argument("--criterion", default="log_loss")
    parser.add_argument("--score-model", default="auto")
    parser.add_argument("--max-rows", type=int, default=None,
                        help="nbh/full cross-fitting on at most this many training rows (default: the library's)")
    parser.add_argument("--test-scores", default="refit", choices=("refit", "crossfit"))
    parser.add_argument("--out", default=None, help="JSON file for the results (default bench/out/realdata_<tag>.json)")
    args = parser.parse_args(argv)
    names = args.datasets.split(",")
    first_stages = args.first_stages.split(",")
    if args.command == "cache":
        cache_all(names, first_stages, args.seed, args.data_dir)
        return
    if args.command == "synthetic":
        synthetic(args.seed)
        return
    if args.command == "shift":
        first_stage_shift(names, first_stages, args.seed, args.data_dir)
        return
    command = "python bench/realdata_study.py " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:]))
    results = []
    for name in names:
        for fs in first_stages:
            t_wall, t_cpu = time.perf_counter(), time.process_time()
            max_rows = args.max_rows if args.max_rows is not None else "auto"
            r = study_one(name, fs, tempering=None if args.tempering == "none" else args.tempering,
                          criterion=args.criterion, score_model=args.score_model, max_rows=max_rows,
                          seed=args.seed, test_scores=args.test_scores, data_dir=args.data_dir)
            r["total_cpu"] = time.process_time() - t_cpu
            r["total_wall"] = time.perf_counter() - t_wall
            results.append(r)
            print(f"[{time.strftime('%H:%M:%S')}] {name} {fs}: raw {r['raw']['auprc']:.2f} auto "
                  f"{r['auto']['auprc']:.2f} ({r['chosen']}, a {np.unique(np.round(r['a'], 2))}) "
                  f"{r['seconds']:.0f} s", flush=True)
    text = render(results, command)
    print(text)
    out = Path(args.out) if args.out else OUT / f"realdata_{args.tempering}_{args.criterion}_{args.score_model}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"command": command, "results": [_jsonable(r) for r in results]}, indent=1,
                              default=float))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
