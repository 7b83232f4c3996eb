"""The default ``MLPR()`` with fewer cross-fitting folds: fit time against test AU(PRC) (issue 19).

The default chooses each class's score model, the evidence exponents, the
version and the consistency by ``cv=5``-fold cross-fitting of the training
rows; the cross-fit of the five candidate score models is the largest single
step of its fit. For each run this fits ``MLPR(hierarchy=h, allow_empty=True,
cv=c)`` for every ``c`` of ``--folds`` (alternating, ``--repeats`` times each,
after one untimed warm-up fit on 300 rows) and prints, per ``c``, the best wall
time, the ratio to the first ``c`` of the list, the version and consistency
chosen, and the micro AU(PRC) (%) of the HierRank ranking of the test rows
(evaluated classes, as in the benchmark), with its difference to the first
``c``'s. Timed in one run, so the ratios are comparable; the absolute seconds
depend on the machine's load.

Scores: as ``bench/version_transfer.py`` (``<cache-dir>/<run>.npz`` or the
benchmark's first stage).

Usage (from the repository root)::

    python bench/cv_folds.py --runs cellcycle_FUN.joint,Enron_corr.classwise
    python bench/cv_folds.py --folds 5,3,2   # all 16 runs (about an hour)
"""

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
from version_transfer import CACHE, DATA, TREES, auprc, load_run  # bench/ is on sys.path when a script runs

DAGS = ("cellcycle_GO", "eisen_GO", "gasch1_GO")


def main():
    from hmcpgm import MLPR

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", default=",".join(f"{d}.{f}" for f in ("joint", "classwise") for d in TREES + DAGS),
                        help="comma-separated <data set>.<joint|classwise>")
    parser.add_argument("--folds", default="5,3", help="comma-separated values of cv; the first is the reference")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--cache-dir", type=Path, default=CACHE)
    parser.add_argument("--data-dir", type=Path, default=DATA)
    args = parser.parse_args()
    folds = [int(c) for c in args.folds.split(",")]
    warnings.simplefilter("ignore")
    gaps = {c: [] for c in folds[1:]}
    for run in args.runs.split(","):
        name, first_stage = run.split(".")
        z, h = load_run(name, first_stage, args.cache_dir, args.data_dir)
        ev = np.asarray(z["evaluated"], bool)
        MLPR(hierarchy=h, allow_empty=True, cv=folds[0]).fit(z["s_train"][:300], z["y_train"][:300])
        best, models = {c: np.inf for c in folds}, {}
        for _ in range(args.repeats):
            for c in folds:
                t0 = time.perf_counter()
                models[c] = MLPR(hierarchy=h, allow_empty=True, cv=c).fit(z["s_train"], z["y_train"])
                best[c] = min(best[c], time.perf_counter() - t0)
        score = {c: auprc(m.predict_proba(z["s_test"]), z["y_test"], h, ev) for c, m in models.items()}
        for c in folds:
            m = models[c]
            line = (f"{run:<24} cv={c}  fit {best[c]:7.2f} s ({best[c] / best[folds[0]]:.2f}x)  "
                    f"{m.version_:<5} {m.consistency_:<8}  AU(PRC) {score[c]:6.2f}")
            if c != folds[0]:
                gaps[c].append(score[c] - score[folds[0]])
                line += f"  {score[c] - score[folds[0]]:+.2f}"
            print(line, flush=True)
    for c, g in gaps.items():
        if g:
            print(f"cv={c} minus cv={folds[0]} over {len(g)} runs: mean {np.mean(g):+.2f} points, "
                  f"worst {min(g):+.2f}, best {max(g):+.2f}")


if __name__ == "__main__":
    main()
