"""Does the pool's weight, chosen on the cross-fitted training rows, carry over to new rows? (issue 19)

The default ``MLPR()`` averages the chosen version's mLPRs with each class's own
isotonic posterior, ``w * mLPR + (1 - w) * q`` (``pool="auto"``), the weight
``w`` among :data:`hmcpgm.selection.POOL_WEIGHTS` chosen by the flat AU(PRC) of
the pooled cross-fitted values. This script fits the default once per run and,
for every weight of the grid, rebuilds the fitted stage with that weight (same
version, exponents, score models and consistency) and prints the AU(PRC) points
of each weight minus the mLPRs alone (``w = 1``) on

- ``cv``: the cross-fitted training rows the choice was made on (flat AU(PRC),
  the choice's criterion);
- ``valid``: the validation rows (HierRank, evaluated classes);
- ``test``: the test rows, where the benchmark measures the default.

Scores: as ``bench/version_transfer.py`` (``--cache-dir``, else made from the
ARFF files with the benchmark's first stage; minutes).

Usage (from the repository root)::

    python bench/pool_transfer.py --runs Enron_corr.joint
    python bench/pool_transfer.py   # the 10 runs on trees (minutes)
    python bench/pool_transfer.py --runs cellcycle_GO.joint,eisen_GO.joint,gasch1_GO.joint   # about 5 minutes each
"""

import warnings
from dataclasses import replace

import numpy as np
from version_transfer import load_run, new_rows_auprc, run_arguments


def main():
    from hmcpgm.likelihood import fit_score_model
    from hmcpgm.selection import POOL_WEIGHTS, fit_second_stage_auto

    args = run_arguments(__doc__)
    warnings.simplefilter("ignore")
    grid = sorted(POOL_WEIGHTS)
    print("AU(PRC) points of each pool weight minus the mLPRs alone (w = 1): cv / valid / test")
    print(f"{'run':<24} {'version':<7} {'chosen':>6}  " + "  ".join(f"{'w=' + format(w, 'g'):>17}" for w in grid[:-1]))
    for run in args.runs:
        name, first_stage = run.split(".")
        z, h = load_run(name, first_stage, args.cache_dir, args.data_dir)
        ev = np.asarray(z["evaluated"], bool)
        stage = fit_second_stage_auto(z["s_train"], z["y_train"], h, allow_empty=True, seed=0)
        table = stage.cv_table.attrs["pool"]["cv"]
        iso = stage.pool_model if stage.pool_model is not None else fit_score_model(
            z["s_train"], z["y_train"], h, kind="isotonic", allow_empty=True)
        new = {}
        for w in grid:
            fitted = replace(stage, pool_weight=None if w == 1 else w, pool_model=iso)
            new[w] = new_rows_auprc(fitted, z, h, ev)
        cells = []
        for w in grid[:-1]:
            d = [100 * (table[w] - table[1.0]), new[w][0] - new[1.0][0], new[w][1] - new[1.0][1]]
            cells.append("/".join(f"{x:+.2f}" for x in d))
        weight = 1.0 if stage.pool_weight is None else stage.pool_weight
        print(f"{run:<24} {stage.version:<7} {weight:>6g}  " + "  ".join(f"{c:>17}" for c in cells), flush=True)


if __name__ == "__main__":
    main()
