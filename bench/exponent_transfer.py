"""Do the evidence exponents, chosen on the cross-fitted training rows, carry over to new rows? (issue 19)

The default ``MLPR()`` tempers each class's likelihood ratio by an exponent chosen on
the cross-fitted training rows (``a``, and for nbh and full ``own``, the exponent of a
class's own evidence). Those rows' out-of-fold first-stage scores separate positives
from negatives less than the scores of new rows do on the yeast data sets
(docs/concepts.md, "Does the consistency choice carry over to new rows?"), so the
fitted exponents might read the evidence as weaker than it is on new rows. This script
fits the default once per run and rebuilds the fitted stage with every exponent
multiplied by one factor ``c`` (same version, score models, pool, consistency and
recalibration), and prints the AU(PRC) points (HierRank, evaluated classes) of each
factor minus the fitted exponents (``c = 1``) on the validation and the test rows.

Scores: as ``bench/version_transfer.py`` (``--cache-dir``, else made from the
ARFF files with the benchmark's first stage; minutes).

Usage (from the repository root)::

    python bench/exponent_transfer.py --runs Enron_corr.joint
    python bench/exponent_transfer.py   # the 10 runs on trees (about 5 minutes)
    python bench/exponent_transfer.py --runs cellcycle_GO.joint,eisen_GO.joint,gasch1_GO.joint   # GO: minutes each
"""

import warnings
from dataclasses import replace

import numpy as np
from version_transfer import load_run, new_rows_auprc, run_arguments

FACTORS = (0.5, 0.75, 1.5, 2.0)


def scaled(stage, c):
    """The fitted stage with every evidence exponent (``a`` and ``own``) multiplied by ``c``."""
    return replace(stage, a=stage.a * c, own=None if stage.own is None else stage.own * c)


def main():
    from hmcpgm.selection import fit_second_stage_auto

    args = run_arguments(__doc__)
    warnings.simplefilter("ignore")
    print("AU(PRC) points of the exponents times c minus the fitted exponents (c = 1): valid / test")
    print(f"{'run':<24} {'version':<7} {'median a':>8} " + " ".join(f"{'c=' + format(c, 'g'):>13}" for c in FACTORS))
    gains = {c: [] for c in FACTORS}
    for run in args.runs:
        name, first_stage = run.split(".")
        z, h = load_run(name, first_stage, args.cache_dir, args.data_dir)
        ev = np.asarray(z["evaluated"], bool)
        stage = fit_second_stage_auto(z["s_train"], z["y_train"], h, allow_empty=True, seed=0)

        base = new_rows_auprc(stage, z, h, ev)
        cells = []
        for c in FACTORS:
            d = new_rows_auprc(scaled(stage, c), z, h, ev) - base
            gains[c].append(d)
            cells.append("/".join(f"{x:+.2f}" for x in d))
        print(f"{run:<24} {stage.version:<7} {np.median(stage.a):>8.3f} " + " ".join(f"{s:>13}" for s in cells),
              flush=True)
    means = ["/".join(f"{x:+.2f}" for x in np.mean(gains[c], axis=0)) for c in FACTORS]
    print(f"{'mean':<24} {'':<7} {'':>8} " + " ".join(f"{s:>13}" for s in means))


if __name__ == "__main__":
    main()
