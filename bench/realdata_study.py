"""Research harness for the second stage on real data (issue 9).

For every data set in ``../shared/data/hmc/`` and both first stages (``joint``:
the default multi-output ridge; ``classwise``: one logistic regression per
class) this script

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
"""

import argparse
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = next((p / "shared" / "data" / "hmc" for p in ROOT.parents if (p / "shared" / "data" / "hmc").is_dir()),
            ROOT.parent / "shared" / "data" / "hmc")
OUT = ROOT / "bench" / "out"
ORDER = ("cellcycle_FUN", "eisen_FUN", "gasch1_FUN", "ImCLEF07A", "Enron_corr",
         "cellcycle_GO", "eisen_GO", "gasch1_GO")
FIRST_STAGES = ("joint", "classwise")
ALPHAS = (0.05, 0.1, 0.2)
VALID_FRACTION = 0.3


# ---------------------------------------------------------------------- data and first stage
def load(name, seed=0):
    """(hierarchy, evaluated mask, X_train, Y_train, X_test, Y_test) with the carved split rule."""
    from hmcpgm.datasets import load_hmc_split

    split = load_hmc_split(name, DATA)
    X, Y = split.train.features, split.train.labels
    if split.valid is None:  # bench/benchmarks_table.py's carve_validation, on arrays
        perm = np.random.default_rng(seed).permutation(len(X))
        n_valid = int(round(VALID_FRACTION * len(X)))
        keep = np.sort(perm[n_valid:])
        X, Y = X[keep], Y[keep]
    return split.hierarchy, split.evaluated, X, Y, split.test.features, split.test.labels


def first_stage_scores(name, first_stage, *, seed=0, refresh=False, progress=False):
    """Cached dict: train (out of fold), test (refit), test_crossfit (mean of fold models), seconds."""
    from hmcpgm.first_stage import OutOfFoldScores, fit_first_stage, predict_scores

    path = OUT / "scores" / f"{name}.{first_stage}.npz"
    if path.is_file() and not refresh:
        return dict(np.load(path))
    _, _, X, Y, X_test, _ = load(name, seed)
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
    from hmcpgm.benchmark import _rank_scores, _restrict
    from hmcpgm.decision import bayes_cutoff
    from hmcpgm.metrics import average_precision
    from hmcpgm.ranking import hier_rank

    order = hier_rank(values, hierarchy)
    sub = _restrict(order, evaluated, hierarchy.n_classes)
    y = labels[:, evaluated]
    out = {"auprc": 100 * average_precision(_rank_scores(sub).reshape(y.shape), y, exclude_roots=False)}
    if fdr_values is not None:
        p = np.clip(fdr_values[:, evaluated].reshape(-1), 0.0, 1.0)
        flat = y.reshape(-1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "no prefix meets alpha"
            for alpha in alphas:
                r = bayes_cutoff(sub, p, alpha=alpha).rank
                out[f"n@{alpha}"] = int(r)
                out[f"fdp@{alpha}"] = float(1 - flat[sub[:r]].mean()) if r else float("nan")
    return out


def cache_all(names, first_stages, seed=0):
    for name in names:
        for fs in first_stages:
            t0 = time.perf_counter()
            first_stage_scores(name, fs, seed=seed)
            print(f"[{time.strftime('%H:%M:%S')}] {name} {fs}: {time.perf_counter() - t0:.0f} s", flush=True)


# ---------------------------------------------------------------------- one data set
def study_one(name, first_stage, *, versions=("indpt", "nbh", "full"), tempering="one", criterion="log_loss",
              score_model="auto", max_rows=None, seed=0):
    """Fit the auto second stage on the training rows; evaluate every version and the choice on test rows."""
    from hmcpgm.calibration import fit_recalibration
    from hmcpgm.inference import mlpr_from_likelihoods
    from hmcpgm.selection import fit_second_stage_auto
    from hmcpgm.tempering import temper

    h, keep, _, Y, _, Y_test = load(name, seed)
    sc = first_stage_scores(name, first_stage, seed=seed)
    s_train, s_test = sc["train"], sc["test"]
    t0 = time.perf_counter()
    stage, preds = fit_second_stage_auto(
        s_train, Y, h, versions=versions, tempering=tempering, criterion=criterion, score_model=score_model,
        evaluated=keep, max_rows=max_rows, seed=seed, return_predictions=True)
    fit_seconds = time.perf_counter() - t0
    t0 = time.perf_counter()
    L_test = stage.score_model.likelihoods(s_test)
    likelihood_seconds = time.perf_counter() - t0
    result = {"dataset": name, "first_stage": first_stage, "raw": evaluate(s_test, Y_test, h, keep),
              "chosen": stage.version, "a": stage.a, "cv_table": stage.cv_table, "seconds_fit": fit_seconds,
              "stage_seconds": stage.seconds, "choice": stage.score_model.choice, "versions": {}}
    for version in versions:
        cfg = preds[version]
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            p = mlpr_from_likelihoods(h, stage.theta, temper(L_test, cfg["a"]), version=version,
                                      engine=cfg["engine"])
        predict_seconds = time.perf_counter() - t0
        rows = cfg["rows"]
        g = fit_recalibration(cfg["mlpr"][:, keep], Y[rows][:, keep])
        res = evaluate(p, Y_test, h, keep, g(p))
        res.update({f"raw_{k}": v for k, v in evaluate(p, Y_test, h, keep, p).items() if k != "auprc"})
        result["versions"][version] = res
        if version == stage.version:
            result["seconds_predict"] = likelihood_seconds + predict_seconds
    result["auto"] = result["versions"][stage.version]
    result["seconds"] = fit_seconds + result["seconds_predict"]
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("cache", "table"))
    parser.add_argument("--datasets", default=",".join(ORDER))
    parser.add_argument("--first-stages", default=",".join(FIRST_STAGES))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    names = args.datasets.split(",")
    first_stages = args.first_stages.split(",")
    if args.command == "cache":
        cache_all(names, first_stages, args.seed)


if __name__ == "__main__":
    main()
