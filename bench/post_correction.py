"""A classic correction on top of the default's own values: does it add anything? (issue 19)

The default ``MLPR()`` makes its values consistent with the hierarchy by HierRank
alone or by the max constraint (``consistency="auto"`` chooses by cross-fitting).
``consistency`` also takes a classic correction (HTD, GPAV, TPR-DAG, ISO-TPR,
DESCENS: :data:`hmcpgm.second_stage.CONSISTENCY`), applied to the mLPRs rather
than to calibrated scores. This script fits the default once per run, takes its
values before the consistency step (the fitted stage with
``consistency="hierrank"``: pooled mLPRs as HierRank ranks them), applies each of
these consistency steps to them (:func:`hmcpgm.second_stage.consistent_values`),
ranks the result by HierRank and prints the AU(PRC) points of each minus the
default (with its chosen consistency) on the validation rows and on the test rows
(evaluated classes). A step that helped would show on both.

Scores: as ``bench/version_transfer.py`` (``--cache-dir``, else made from the
ARFF files with the benchmark's first stage; minutes). ``--synthetic N`` adds the
first N seeds of ``bench/fdr_noisy_dag.py``'s synthetic DAG benchmarks (joint first
stage, 900 / 300 / 600 rows), data the default was not tuned on; the mean also gets
its standard error over the runs.

Usage (from the repository root)::

    python bench/post_correction.py --runs cellcycle_FUN.joint
    python bench/post_correction.py   # the 16 runs of the leaderboard (about 10 minutes)
    python bench/post_correction.py --runs "" --synthetic 20   # 20 synthetic DAGs (about 5 minutes)
"""

import tempfile
import warnings
from dataclasses import replace
from itertools import chain

import numpy as np
from version_transfer import auprc, load_run, run_arguments, standard_error

POST = ("max", "gpav", "htd", "tpr_dag", "iso_tpr", "descens")  # consistency steps; "max" is MCM


def fitted_default(run, cache_dir, data_dir):
    """One leaderboard run ``<data set>.<first stage>``: its arrays, hierarchy, evaluated classes, the default
    fitted on its training rows, and that fit with ``consistency="hierrank"`` (the values before the
    consistency step)."""
    from hmcpgm import MLPR

    name, first_stage = run.split(".")
    z, h = load_run(name, first_stage, cache_dir, data_dir)
    model = MLPR(hierarchy=h, allow_empty=True).fit(z["s_train"], z["y_train"])
    return z, h, np.asarray(z["evaluated"], bool), model, replace(model.second_stage_, consistency="hierrank")


def synthetic_runs(n, folder):
    """The first ``n`` synthetic DAG benchmarks of ``bench/fdr_noisy_dag.py``, as ``fitted_default`` gives a run."""
    from fdr_noisy_dag import synthetic_scores

    from hmcpgm import MLPR

    for name, h, evaluated, z in synthetic_scores(n, folder):
        model = MLPR(hierarchy=h, allow_empty=True, random_state=0).fit(z["s_train"], z["y_train"])
        yield name, z, h, evaluated, model, replace(model.second_stage_, consistency="hierrank")


def leaderboard_runs(runs, cache_dir, data_dir):
    """The leaderboard runs, as ``fitted_default`` gives them, each with its name first."""
    for run in runs:
        yield (run, *fitted_default(run, cache_dir, data_dir))


def main():
    from hmcpgm.second_stage import consistent_values

    args = run_arguments(__doc__, runs=("all",), extra=lambda parser: parser.add_argument(
        "--synthetic", type=int, default=0, help="also the first N seeds of bench/fdr_noisy_dag.py's benchmarks"))
    warnings.simplefilter("ignore")
    runs = [r for r in args.runs if r]
    print("AU(PRC) points of each correction on the default's values minus the default: valid / test")
    print(f"{'run':<24}{'version':>8}{'consistency':>12}" + "".join(f"{c:>15}" for c in POST), flush=True)
    gains = {c: [] for c in POST}
    folder = tempfile.TemporaryDirectory()
    for run, z, h, ev, model, before in chain(leaderboard_runs(runs, args.cache_dir, args.data_dir),
                                              synthetic_runs(args.synthetic, folder.name)):
        cells = {c: [] for c in POST}
        for part in ("valid", "test"):
            y = z[f"y_{part}"]
            values = before.predict_proba(z[f"s_{part}"])
            default = auprc(consistent_values(values, h, model.consistency_), y, h, ev)
            for c in POST:
                cells[c].append(auprc(consistent_values(values, h, c), y, h, ev) - default)
        for c in POST:
            gains[c].append(cells[c])
        print(f"{run:<24}{model.version_:>8}{model.consistency_:>12}"
              + "".join(f"{'/'.join(f'{x:+.2f}' for x in cells[c]):>15}" for c in POST), flush=True)
    folder.cleanup()
    n = len(gains[POST[0]])
    print(f"\nover {n} runs, points minus the default: mean valid / test (+- its standard error); "
          "best and worst test")
    for c in POST:
        g = np.array(gains[c])
        print(f"{c:<10} {g[:, 0].mean():+.2f} / {g[:, 1].mean():+.2f} (+- {standard_error(g[:, 1]):.2f}); "
              f"{g[:, 1].max():+.2f}, {g[:, 1].min():+.2f}")


if __name__ == "__main__":
    main()
