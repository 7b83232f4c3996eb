"""Does the default's consistency choice carry over from the training rows to new rows? (issue 19)

After choosing its version, the default ``MLPR()`` decides whether to lift each
class to the largest mLPR among its descendants (``consistency="max"``) before
HierRank, or to leave the values to HierRank alone (``"hierrank"``): it takes
``"max"`` when the paired bootstrap z of the cross-fitted AU(PRC) of the
training rows (max minus hierrank) exceeds the margin 1. This script asks, per
run, whether that z agrees with the gain of max on the validation and the test
rows. It fits the default once with ``consistency="hierrank"`` (the same
version, exponents and score models as the default, since the consistency
choice comes after them), lifts its validation and test mLPRs by max, and
prints

- ``z``: the default's own cross-fitted z (``cv_results_.attrs["consistency"]``);
- ``valid``, ``test``: max minus hierrank in AU(PRC) points of the HierRank
  rankings (the benchmark's evaluated classes);
- ``separation``: how far the first-stage scores of the positives lie from
  those of the negatives, ``(mean positive - mean negative) / sd`` per
  evaluated class with at least 5 positives and 5 negatives in the rows, the
  median over classes, on the training rows (out of fold: five fold models'
  scores pooled), the validation rows and the test rows (both scored by the
  one model fitted on all training rows). The choice reads training-row
  evidence that is weaker than the evidence of new rows when the first is
  well below the other two.

Scores: as in ``bench/version_transfer.py`` (the same cache of first-stage scores,
made by the benchmark's first stage when missing).

Usage (from the repository root)::

    python bench/consistency_transfer.py --runs cellcycle_FUN.joint
    python bench/consistency_transfer.py   # the 13 runs with cached scores: 10 on trees, 3 GO joint (minutes)
"""

import warnings

import numpy as np
from version_transfer import TREE_RUNS, auprc, load_run, run_arguments  # bench/ is on sys.path when a script runs

GO = ("cellcycle_GO", "eisen_GO", "gasch1_GO")


def separation(scores, labels, evaluated, min_count=5):
    """Median over evaluated classes of (mean positive score - mean negative score) / score sd."""
    out = []
    for k in np.flatnonzero(evaluated):
        pos = labels[:, k] == 1
        sd = scores[:, k].std()
        if min(pos.sum(), (~pos).sum()) >= min_count and sd > 0:
            out.append((scores[pos, k].mean() - scores[~pos, k].mean()) / sd)
    return float(np.median(out)) if out else float("nan")


def main():
    from hmcpgm import MLPR
    from hmcpgm.selection import consistent_values

    args = run_arguments(__doc__, TREE_RUNS + tuple(f"{d}.joint" for d in GO))
    warnings.simplefilter("ignore")
    print("max minus hierrank: the default's cross-fitted z (training rows), and AU(PRC) points on the "
          "validation and test rows")
    print(f"{'run':<24} {'version':<7} {'chosen':<8} {'z':>6} {'valid':>6} {'test':>6}   "
          f"separation: {'train':>5} {'valid':>5} {'test':>5}")
    for run in args.runs:
        name, first_stage = run.split(".")
        z, h = load_run(name, first_stage, args.cache_dir, args.data_dir)
        ev = z["evaluated"].astype(bool)
        model = MLPR(hierarchy=h, allow_empty=True, consistency="hierrank").fit(z["s_train"], z["y_train"])
        auto = MLPR(hierarchy=h, allow_empty=True).fit(z["s_train"], z["y_train"])
        assert auto.version_ == model.version_  # the consistency choice comes after the version's
        chosen = auto.cv_results_.attrs["consistency"]
        gain = []
        for part in ("valid", "test"):
            p = model.predict_proba(z[f"s_{part}"])
            gain.append(auprc(consistent_values(p, h, "max"), z[f"y_{part}"], h, ev)
                        - auprc(p, z[f"y_{part}"], h, ev))
        sep = [separation(z[f"s_{part}"], z[f"y_{part}"], ev) for part in ("train", "valid", "test")]
        print(f"{run:<24} {model.version_:<7} {chosen['chosen']:<8} {chosen['z']:>+6.2f} {gain[0]:>+6.2f} "
              f"{gain[1]:>+6.2f}   {'':>11} {sep[0]:5.2f} {sep[1]:5.2f} {sep[2]:5.2f}", flush=True)


if __name__ == "__main__":
    main()
