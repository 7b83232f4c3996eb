"""A classic correction on top of the default's own values: does it add anything? (issue 19)

The default ``MLPR()`` makes its values consistent with the hierarchy by HierRank
alone or by the max constraint (``consistency``, chosen by cross-fitting). The
classic corrections (HTD, GPAV, TPR-DAG, ISO-TPR, DESCENS, MCM) could take that
step instead, on the mLPRs rather than on calibrated scores. This script fits the
default once per run, takes its values before the consistency step (the fitted
stage with ``consistency="hierrank"``: pooled mLPRs as HierRank ranks them), applies
each correction of :data:`hmcpgm.corrections.CORRECTIONS` with its default options,
ranks the result by HierRank and prints the AU(PRC) points of each minus the
default (with its chosen consistency) on the validation rows and on the test rows
(evaluated classes). A correction that helped would show on both.

Scores: as ``bench/version_transfer.py`` (``--cache-dir``, else made from the
ARFF files with the benchmark's first stage; minutes).

Usage (from the repository root)::

    python bench/post_correction.py --runs cellcycle_FUN.joint
    python bench/post_correction.py   # the 16 runs of the leaderboard (about 10 minutes)
"""

import argparse
import json
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
from version_transfer import CACHE, DATA, ROOT, auprc, load_run

POST = ("mcm", "gpav", "htd", "tpr_dag", "iso_tpr", "descens")


def main():
    from hmcpgm import MLPR
    from hmcpgm.corrections import CORRECTIONS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", default="all",
                        help="comma-separated <data set>.<joint|classwise>, or all (the runs of --benchmarks-json)")
    parser.add_argument("--benchmarks-json", type=Path, default=ROOT / "docs" / "benchmarks.json")
    parser.add_argument("--cache-dir", type=Path, default=CACHE)
    parser.add_argument("--data-dir", type=Path, default=DATA)
    args = parser.parse_args()
    runs = args.runs.split(",") if args.runs != "all" else [
        f"{r['dataset']}.{r['first_stage']}" for r in json.loads(args.benchmarks_json.read_text())["results"]]
    warnings.simplefilter("ignore")
    print("AU(PRC) points of each correction on the default's values minus the default: valid / test")
    print(f"{'run':<24}{'version':>8}{'consistency':>12}" + "".join(f"{c:>15}" for c in POST), flush=True)
    gains = {c: [] for c in POST}
    for run in runs:
        name, first_stage = run.split(".")
        z, h = load_run(name, first_stage, args.cache_dir, args.data_dir)
        ev = np.asarray(z["evaluated"], bool)
        model = MLPR(hierarchy=h, allow_empty=True).fit(z["s_train"], z["y_train"])
        before = replace(model.second_stage_, consistency="hierrank")  # the values before the consistency step
        cells = {c: [] for c in POST}
        for part in ("valid", "test"):
            s, y = z[f"s_{part}"], z[f"y_{part}"]
            default = auprc(model.predict_proba(s), y, h, ev)
            values = before.predict_proba(s)
            for c in POST:
                cells[c].append(auprc(np.asarray(CORRECTIONS[c](values, h)), y, h, ev) - default)
        for c in POST:
            gains[c].append(cells[c])
        print(f"{run:<24}{model.version_:>8}{model.consistency_:>12}"
              + "".join(f"{'/'.join(f'{x:+.2f}' for x in cells[c]):>15}" for c in POST), flush=True)
    print(f"\nover {len(runs)} runs, points minus the default: mean valid / test; best and worst test")
    for c in POST:
        g = np.array(gains[c])
        print(f"{c:<10} {g[:, 0].mean():+.2f} / {g[:, 1].mean():+.2f}; {g[:, 1].max():+.2f}, {g[:, 1].min():+.2f}")


if __name__ == "__main__":
    main()
