"""The default's values pooled with a classic correction's: how far ahead of the best correction? (issue 19)

The default ``MLPR()`` pools its mLPRs with each class's isotonic posterior (its
``pool``). This script asks whether a second opinion that already respects the
hierarchy would do better: per run it fits the default once, takes its values
before the consistency step (as ``bench/post_correction.py``) and the leaderboard's
corrections (per-class isotonic or Platt calibration fitted on the training rows,
then the correction: :func:`hmcpgm.applications.leaderboard.correction_values`),
and ranks by HierRank the linear pools ``w * default + (1 - w) * correction`` for
``w`` in 0.25, 0.5, 0.75 and the corrections of ``POOLED``. Printed per run, in
AU(PRC) points (evaluated classes) minus the best of the leaderboard's 18
corrections on the test rows (the leaderboard's strongest baseline): the default;
the pool (or the default alone) with the best AU(PRC) on the validation rows, a
choice the model itself could only make by cross-fitting, so an optimistic
estimate; and each fixed pool, averaged over the runs.

Scores: as ``bench/version_transfer.py`` (``--cache-dir``, else made from the
ARFF files with the benchmark's first stage; minutes).

Usage (from the repository root)::

    python bench/pool_with_correction.py --runs cellcycle_FUN.joint
    python bench/pool_with_correction.py   # the 16 runs of the leaderboard (about 40 minutes)
"""

import warnings

import numpy as np
from post_correction import fitted_default
from version_transfer import auprc, run_arguments

POOLED = ("tpr", "iso_tpr", "descens", "mcm", "gpav")  # labels of hmcpgm.applications.leaderboard.LEADERBOARD
WEIGHTS = (0.25, 0.5, 0.75)


def main():
    from hmcpgm.applications.leaderboard import correction_values

    args = run_arguments(__doc__, runs=("all",))
    warnings.simplefilter("ignore")
    print("AU(PRC) points minus the best correction on the test rows (picked on them)")
    print(f"{'run':<24}{'best correction':>18}{'its AU(PRC)':>12}{'default':>9}   {'chosen on valid':<22}{'':>6}",
          flush=True)
    gaps, chosen_gaps, fixed = [], [], {}
    for run in args.runs:
        z, h, ev, model, before = fitted_default(run, args.cache_dir, args.data_dir)
        corrections, _ = correction_values(z["s_train"], z["y_train"], [z["s_valid"], z["s_test"]], h)
        score = {}  # (method, part) -> AU(PRC)
        for i, part in enumerate(("valid", "test")):
            y = z[f"y_{part}"]
            score["default", part] = auprc(model.predict_proba(z[f"s_{part}"]), y, h, ev)
            values = before.predict_proba(z[f"s_{part}"])
            for key, sets in corrections.items():
                if part == "test":
                    score[key, part] = auprc(sets[i], y, h, ev)
                if key.split("-", 1)[1] in POOLED:
                    for w in WEIGHTS:
                        score[f"{key}@{w}", part] = auprc(w * values + (1 - w) * sets[i], y, h, ev)
        best = max(corrections, key=lambda k: score[k, "test"])
        top = score[best, "test"]
        pools = [k for k, part in score if part == "valid" and k != "default"]
        chosen = max(["default", *pools], key=lambda k: score[k, "valid"])
        gaps.append(score["default", "test"] - top)
        chosen_gaps.append(score[chosen, "test"] - top)
        for k in pools:
            fixed.setdefault(k, []).append(score[k, "test"] - top)
        print(f"{run:<24}{best:>18}{top:>12.2f}{gaps[-1]:>+9.2f}   {chosen:<22}{chosen_gaps[-1]:>+6.2f}", flush=True)
    print(f"\nover {len(args.runs)} runs, minus the best correction: mean, worst")
    print(f"{'the default':<24} {np.mean(gaps):+.2f}, {np.min(gaps):+.2f}")
    print(f"{'the pool chosen on valid':<24} {np.mean(chosen_gaps):+.2f}, {np.min(chosen_gaps):+.2f}")
    for k, g in sorted(fixed.items(), key=lambda kv: -np.mean(kv[1]))[:8]:
        print(f"{k:<24} {np.mean(g):+.2f}, {np.min(g):+.2f}")


if __name__ == "__main__":
    main()
