"""What the default's fit time buys: cheaper configurations of ``MLPR``, their fit time and test AU(PRC) (issue 19).

Issue 19 asks for the default ``MLPR()`` both ahead of the best classic correction
and within 5x of the paper's fixed model's fit. This script measures whether a
cheaper configuration could be the default: per run it fits, on the training rows,

- ``default``: ``MLPR()``;
- ``cv3``: ``cv=3`` (every choice as the default's, cross-fitted on 3 folds
  instead of 5);
- ``indpt``: ``version="indpt"`` (no search over nbh and full; score models,
  pool and consistency still chosen);
- ``indpt-logistic``: and ``score_model="logistic"`` (one score model, no
  cross-validated choice among the candidates);
- ``indpt-logistic-nopool``: and ``pool=None``;
- ``indpt-logistic-plain``: and ``consistency="hierrank"`` (the cheapest
  configuration that still fits an exponent and a recalibration map);
- ``paper-indpt``: the paper's indpt (``score_model="lpr"``, no tempering, no
  recalibration, no pool, HierRank);
- ``paper-indpt-pool``: the same pooled with each class's isotonic posterior at
  the fixed weight 0.5 (no cross-fitting: one more isotonic fit);

each timed beside the paper's fixed model (``version="full", score_model="lpr",
tempering=None, recalibrate=False``) fitted on the same rows in the same run
(after one untimed warm-up fit; best of ``--repeats``), and prints, per run and
configuration, its fit in fixed fits and its test AU(PRC) (HierRank, evaluated
classes) minus the default's. The summary gives, per configuration, its fit ratio
over the runs (min, median, max) and its test AU(PRC) minus the default's and
minus the best correction of ``--benchmarks-json`` (mean, worst; the best picked
on the test rows, as on the leaderboard of docs/benchmarks.md; that file must come
from the same first-stage scores).

Scores: as ``bench/version_transfer.py`` (``--cache-dir``, else made from the
ARFF files with the benchmark's first stage; minutes).

Usage (from the repository root)::

    python bench/fit_budget.py --runs cellcycle_FUN.joint
    python bench/fit_budget.py --runs all   # the 16 runs of the leaderboard (about 20 minutes)
"""

import json
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fit_time import FIXED, best_of  # noqa: E402
from version_transfer import CACHE, DATA, ROOT, auprc, load_run  # noqa: E402

CONFIGS = {
    "default": {},
    "cv3": {"cv": 3},
    "indpt": {"version": "indpt"},
    "indpt-logistic": {"version": "indpt", "score_model": "logistic"},
    "indpt-logistic-nopool": {"version": "indpt", "score_model": "logistic", "pool": None},
    "indpt-logistic-plain": {"version": "indpt", "score_model": "logistic", "pool": None,
                             "consistency": "hierrank"},
    "paper-indpt": {"version": "indpt", "score_model": "lpr", "tempering": None, "recalibrate": False,
                    "pool": None, "consistency": "hierrank"},
    "paper-indpt-pool": {"version": "indpt", "score_model": "lpr", "tempering": None, "recalibrate": False,
                         "pool": 0.5, "consistency": "hierrank"},
}


def best_correction(path):
    """{(data set, first stage): (name, test AU(PRC) %)} of the best correction of each run in a benchmark JSON
    (the leaderboard's pick, ``bench/benchmarks_table.py``)."""
    from benchmarks_table import _best_correction

    out = {}
    for r in json.loads(Path(path).read_text())["results"]:
        name, scores = _best_correction(r)
        out[(r["dataset"], r["first_stage"])] = (name, 100 * scores["auprc"])
    return out


def timed_fit(kwargs, h, s, y, repeats):
    """The fitted model and the best wall time of ``repeats`` fits."""
    from hmcpgm import MLPR

    fitted = []
    seconds = best_of(lambda: fitted.append(MLPR(hierarchy=h, allow_empty=True, **kwargs).fit(s, y)), repeats)
    return fitted[-1], seconds


def main():
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", default="all",
                        help="comma-separated <data set>.<joint|classwise>, or all (the runs of --benchmarks-json)")
    parser.add_argument("--configs", default=",".join(CONFIGS), help="comma-separated names of CONFIGS")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--benchmarks-json", type=Path, default=ROOT / "docs" / "benchmarks.json")
    parser.add_argument("--cache-dir", type=Path, default=CACHE)
    parser.add_argument("--data-dir", type=Path, default=DATA)
    args = parser.parse_args()
    best = best_correction(args.benchmarks_json)
    runs = [f"{d}.{f}" for d, f in best] if args.runs == "all" else args.runs.split(",")
    configs = args.configs.split(",")
    if configs[0] != "default":
        configs = ["default", *[c for c in configs if c != "default"]]
    unknown = [c for c in configs if c not in CONFIGS]
    if unknown:
        parser.error(f"--configs: unknown {unknown}; choose from {list(CONFIGS)}")
    warnings.simplefilter("ignore")
    print("per run: fit in fixed fits / test AU(PRC) points minus the default's (the default: its AU(PRC))")
    print(f"{'run':<24}{'fixed s':>8}  " + "".join(f"{c:>24}" for c in configs), flush=True)
    ratios, gaps, deltas = ({c: [] for c in configs} for _ in range(3))
    for run in runs:
        name, first_stage = run.split(".")
        z, h = load_run(name, first_stage, args.cache_dir, args.data_dir)
        ev = np.asarray(z["evaluated"], bool)
        s, y = z["s_train"], z["y_train"]
        timed_fit(FIXED, h, s, y, 1)  # warm-up: imports, numba loads
        _, fixed = timed_fit(FIXED, h, s, y, args.repeats)
        cells, score = [], {}
        for c in configs:
            model, seconds = timed_fit(CONFIGS[c], h, s, y, args.repeats)
            score[c] = auprc(model.predict_proba(z["s_test"]), z["y_test"], h, ev)
            ratios[c].append(seconds / fixed)
            gaps[c].append(score[c] - best[(name, first_stage)][1])
            deltas[c].append(score[c] - score["default"])
            delta = f"{score[c]:.2f}" if c == "default" else f"{score[c] - score['default']:+.2f}"
            cells.append(f"{seconds / fixed:.1f}x / {delta}")
        print(f"{run:<24}{fixed:>8.2f}  " + "".join(f"{cell:>24}" for cell in cells), flush=True)
    print(f"\nover {len(runs)} runs: fit in fixed fits (min, median, max); test AU(PRC) points minus the "
          f"default's (mean, worst) and minus the best correction (picked on the test rows, "
          f"{args.benchmarks_json.name}; mean, worst)")
    for c in configs:
        r, d, g = np.array(ratios[c]), np.array(deltas[c]), np.array(gaps[c])
        print(f"{c:<24} {r.min():5.1f}x {np.median(r):5.1f}x {r.max():5.1f}x   vs default {d.mean():+.2f} "
              f"{d.min():+.2f}   vs best correction {g.mean():+.2f} {g.min():+.2f}")


if __name__ == "__main__":
    main()
