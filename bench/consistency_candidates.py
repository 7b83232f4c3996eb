"""Should the default's consistency choice also try HTD-DAG? (issue 19)

``consistency="auto"`` tries each step of
``hmcpgm.selection.CONSISTENCY_CANDIDATES`` (the max constraint) against HierRank
alone on the cross-fitted values and takes the one with the largest paired z when
it beats the margin. On the synthetic DAGs of ``bench/fdr_noisy_dag.py`` the
leaderboard's best correction is Platt calibration followed by HTD-DAG, and HTD
applied to the default's own values gains there (``bench/post_correction.py
--synthetic 20``). This script fits the default once per run with ``--candidates``
(default ``max,htd``) in place of the library's. The fit reports every
candidate's z, so the choice the library's candidates alone would make (the max
constraint when its z beats the margin, else HierRank) is the same fitted stage
with that consistency. Per run it prints the version, both choices, the candidates'
z and the AU(PRC) points (HierRank, evaluated classes) of the extended choice minus
the library's on the validation and the test rows; then the mean (and its standard
error) and the worst run, separately for the leaderboard runs and the synthetic ones.

Runs: ``--runs`` (leaderboard runs, scores as ``bench/version_transfer.py``) and
``--synthetic N`` (the first N seeds of ``bench/fdr_noisy_dag.py``'s benchmarks).

Usage (from the repository root)::

    python bench/consistency_candidates.py --runs all --synthetic 20   # about 20 minutes
    python bench/consistency_candidates.py --runs cellcycle_FUN.joint --synthetic 0
"""

import tempfile
import warnings
from dataclasses import replace
from itertools import chain

import numpy as np
from post_correction import leaderboard_runs, synthetic_runs
from version_transfer import auprc, run_arguments, standard_error


def summary(label, gaps):
    if not gaps:
        return
    g = np.array(gaps, dtype=float)
    se = standard_error(g)
    print(f"{label} ({len(g)} runs): extended minus library, valid {g[:, 0].mean():+.3f} +- {se[0]:.3f}, "
          f"test {g[:, 1].mean():+.3f} +- {se[1]:.3f}; worst test {g[:, 1].min():+.2f}, best {g[:, 1].max():+.2f}; "
          f"choice changed on {int(np.count_nonzero(g[:, 2]))}")


def main():
    import hmcpgm.selection._auto as auto

    args = run_arguments(__doc__, runs=("all",), extra=lambda parser: (
        parser.add_argument("--synthetic", type=int, default=20,
                            help="the first N seeds of bench/fdr_noisy_dag.py's benchmarks (0: none)"),
        parser.add_argument("--candidates", default="max,htd", help="the extended candidates, comma-separated")))
    warnings.simplefilter("ignore")
    library = auto.CONSISTENCY_CANDIDATES
    auto.CONSISTENCY_CANDIDATES = tuple(args.candidates.split(","))
    margin = 1.0  # fit_second_stage_auto's default, which MLPR uses
    print(f"consistency candidates {auto.CONSISTENCY_CANDIDATES} against the library's {library}; "
          "AU(PRC) points of the extended choice minus the library's: valid / test")
    gaps = {"leaderboard": [], "synthetic": []}
    folder = tempfile.TemporaryDirectory()
    runs = [r for r in args.runs if r]
    for run, z, h, ev, model, _ in chain(leaderboard_runs(runs, args.cache_dir, args.data_dir),
                                         synthetic_runs(args.synthetic, folder.name)):
        attrs = model.cv_results_.attrs["consistency"]
        zs = {c: v for c, v in attrs["candidates"].items() if c in library}
        top = max(zs, key=zs.get) if zs else None
        old = top if top is not None and zs[top] > margin else "hierrank"
        stages = (model.second_stage_, replace(model.second_stage_, consistency=old))
        cells = [auprc(stages[0].predict_proba(z[f"s_{part}"]), z[f"y_{part}"], h, ev)
                 - auprc(stages[1].predict_proba(z[f"s_{part}"]), z[f"y_{part}"], h, ev) for part in ("valid", "test")]
        gaps["synthetic" if run.startswith("noisydag") else "leaderboard"].append([*cells, attrs["chosen"] != old])
        print(f"{run:<24} {model.version_:>6} {attrs['chosen']:>9} (library {old:>8}) z "
              + ", ".join(f"{c} {v:+.2f}" for c, v in attrs["candidates"].items())
              + f"  {cells[0]:+.2f} / {cells[1]:+.2f}", flush=True)
    folder.cleanup()
    print()
    for label, g in gaps.items():
        summary(label, g)


if __name__ == "__main__":
    main()
