"""Is the noise of the default's cross-fitting what keeps it from the best correction? (issue 19)

The default ``MLPR()`` makes its choices (each class's score model, the exponents,
the version, the pool's weight, the consistency step) on one seeded split of the
training rows into folds. Another seed gives other folds and may give other
choices. This script fits the default once per seed (``--seeds``, default 0 to 4;
seed 0 is the leaderboard's) on each run and prints, on the validation and the
test rows (micro AU(PRC) % of HierRank rankings, evaluated classes):

- the version each seed chose;
- the spread of the single fits: lowest, mean and highest AU(PRC) over the seeds;
- ``avg``: the AU(PRC) of the seeds' averaged values (``predict_proba``), a bagged
  default that costs one fit per seed, and ``avg - mean``, what the averaging
  buys over a single fit's expected AU(PRC).

If the folds' noise mattered, single seeds would spread by tenths of a point and
the averaged values would gain on them.

On a DAG, nbh and full also fit their exponent on a seeded subsample of 300
training rows (``max_rows="auto"``). ``--max-rows 300,1000`` fits the default (seed
0) on the DAG runs with each of these subsamples instead and prints the version,
its paired z against indpt, the AU(PRC) on the validation and test rows and the fit's
seconds, one row each.

Scores: as ``bench/version_transfer.py`` (``--cache-dir``, else made from the
ARFF files with the benchmark's first stage; minutes).

Usage (from the repository root)::

    python bench/crossfit_noise.py --runs Enron_corr.classwise
    python bench/crossfit_noise.py   # the 10 runs on trees (about 10 minutes)
    python bench/crossfit_noise.py --runs all --seeds 0,1,2   # with the GO runs: about 20 minutes
    python bench/crossfit_noise.py --runs cellcycle_GO.joint --max-rows 300,1000
"""

import warnings

import numpy as np
from version_transfer import TREE_RUNS, auprc, load_run, run_arguments


def main():
    from hmcpgm.selection import fit_second_stage_auto

    def extra(parser):
        parser.add_argument("--seeds", default="0,1,2,3,4", help="comma-separated seeds of the cross-fitting's folds")
        parser.add_argument("--max-rows", help="comma-separated subsample sizes of nbh and full on DAGs (or 'all')")

    args = run_arguments(__doc__, TREE_RUNS, extra=extra)
    if args.max_rows:
        return subsamples(args, [None if m == "all" else int(m) for m in args.max_rows.split(",")])
    seeds = tuple(int(x) for x in args.seeds.split(","))
    warnings.simplefilter("ignore")
    print(f"AU(PRC) (%) of the default fitted with seeds {','.join(map(str, seeds))}: "
          "lowest / mean / highest single fit, the averaged values, averaged minus mean")
    print(f"{'run':<24} {'versions':<{6 * len(seeds)}} {'valid: low/mean/high':>21} {'avg':>6} {'gain':>6}"
          f"   {'test: low/mean/high':>21} {'avg':>6} {'gain':>6}")
    spreads, gains = [], []
    for run in args.runs:
        name, first_stage = run.split(".")
        z, h = load_run(name, first_stage, args.cache_dir, args.data_dir)
        ev = np.asarray(z["evaluated"], bool)
        values = {"valid": [], "test": []}
        single, versions = [], []
        for seed in seeds:
            stage = fit_second_stage_auto(z["s_train"], z["y_train"], h, allow_empty=True, seed=seed)
            versions.append(stage.version)
            for part in values:
                values[part].append(stage.predict_proba(z[f"s_{part}"]))
            single.append([auprc(values[p][-1], z[f"y_{p}"], h, ev) for p in values])
        single = np.array(single)  # (seeds, 2)
        averaged = np.array([auprc(np.mean(values[p], axis=0), z[f"y_{p}"], h, ev) for p in values])
        gain = averaged - single.mean(axis=0)
        spreads.append(single.max(axis=0) - single.min(axis=0))
        gains.append(gain)
        cells = [f"{single[:, j].min():6.2f}/{single[:, j].mean():6.2f}/{single[:, j].max():6.2f}"
                 f" {averaged[j]:6.2f} {gain[j]:+6.2f}" for j in range(2)]
        print(f"{run:<24} {','.join(versions):<{6 * len(seeds)}} {cells[0]:>35}   {cells[1]:>35}", flush=True)
    spreads, gains = np.array(spreads), np.array(gains)
    print(f"over {len(args.runs)} runs: highest minus lowest seed, mean {spreads[:, 0].mean():.2f} / "
          f"{spreads[:, 1].mean():.2f} (valid / test), largest {spreads[:, 0].max():.2f} / {spreads[:, 1].max():.2f}; "
          f"averaged minus mean, mean {gains[:, 0].mean():+.2f} / {gains[:, 1].mean():+.2f}, "
          f"largest {gains[:, 0].max():+.2f} / {gains[:, 1].max():+.2f}")



def subsamples(args, sizes):
    """The default on each DAG run with nbh's and full's subsample of ``sizes`` rows (seed 0)."""
    import time

    from hmcpgm.selection import fit_second_stage_auto

    print("the default with nbh's and full's exponent fitted on a subsample of rows (DAG runs only)")
    print(f"{'run':<24} {'rows':>5} {'version':<7} {'nbh z':>6} {'valid':>6} {'test':>6} {'fit s':>6}")
    for run in args.runs:
        name, first_stage = run.split(".")
        z, h = load_run(name, first_stage, args.cache_dir, args.data_dir)
        if h.is_forest:
            continue
        ev = np.asarray(z["evaluated"], bool)
        for size in sizes:
            start = time.perf_counter()
            stage = fit_second_stage_auto(z["s_train"], z["y_train"], h, allow_empty=True, seed=0, max_rows=size)
            seconds = time.perf_counter() - start
            table = stage.cv_table.set_index("version")
            nbh_z = table.loc["nbh", "z"] if "nbh" in table.index else np.nan
            valid, test = (auprc(stage.predict_proba(z[f"s_{p}"]), z[f"y_{p}"], h, ev) for p in ("valid", "test"))
            print(f"{run:<24} {'all' if size is None else size:>5} {stage.version:<7} {nbh_z:6.2f} {valid:6.2f} "
                  f"{test:6.2f} {seconds:6.0f}", flush=True)


if __name__ == "__main__":
    main()
