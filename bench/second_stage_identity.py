"""Same numbers before and after a refactoring of the second stage: every mLPR compared bit for bit.

The baseline's ``hmcpgm`` package is exported with ``git archive REV`` (default
``main``) into a cache folder; the same child script then runs in a subprocess on
the baseline and on this checkout. On cellcycle_FUN's cached out-of-fold joint
first-stage scores (``<cache-dir>/cellcycle_FUN.joint.npz``, made by
the benchmark's first stage when absent: ``version_transfer.load_run``) it fits

- the default ``MLPR(allow_empty=True)`` (cross-fitted: version, tempering,
  own evidence, consistency and recalibration chosen on the training rows) and
  ``MLPR(version=v, allow_empty=True)`` for v in indpt, nbh, full;
- the paper's model (``tempering=None, recalibrate=False``, ``score_model="lpr"``)
  and its three versions through ``set_params(version=...)``;

and saves, on the test rows, ``predict_proba``, ``calibrated_proba``,
``predict``, the same after ``save_model``/``load_model``, the cross-fitted
mLPRs of every version (``cross_fitted_mlpr``) and the benchmark's
``paper_mlprs``. It prints, per array, whether the two runs agree bit for bit and
the largest difference otherwise.

Usage (from the repository root)::

    python bench/second_stage_identity.py [--baseline main] [--rows 600] [--cache-dir /work/cache]
"""

import argparse
import json
import tempfile
from pathlib import Path

from _baseline import check_package, export_baseline, run_child  # bench/ is on sys.path when a script runs
from version_transfer import CACHE, DATA, load_run

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import sys, warnings
import numpy as np
import hmcpgm
from hmcpgm import Hierarchy, MLPR
from hmcpgm.applications.evaluation import paper_mlprs
from hmcpgm.persist import load_model, save_model
from hmcpgm.selection import cross_fit, cross_fitted_mlpr

warnings.simplefilter("ignore")
z = np.load(sys.argv[1], allow_pickle=True)
rows = int(sys.argv[2])
h = Hierarchy.from_edges([tuple(e) for e in z["edges"]], classes=list(z["classes"]))
s, y, t = z["s_train"][:rows], z["y_train"][:rows], z["s_test"][:rows]
out = {}

def record(name, model):
    out[f"{name}/proba"] = np.asarray(model.predict_proba(t))
    out[f"{name}/calibrated"] = np.asarray(model.calibrated_proba(t))
    out[f"{name}/predict"] = np.asarray(model.predict(t))
    path = sys.argv[3] + ".model.npz"
    save_model(model, path)
    out[f"{name}/loaded"] = np.asarray(load_model(path).predict_proba(t))

for version in ("auto", "indpt", "nbh", "full"):
    record(version, MLPR(hierarchy=h, version=version, allow_empty=True).fit(s, y))
paper = MLPR(hierarchy=h, version="full", score_model="lpr", tempering=None, recalibrate=False,
             allow_empty=True).fit(s, y)
for version in ("indpt", "nbh", "full"):
    paper.set_params(version=version)
    record(f"paper-{version}", paper)
    out[f"paper_mlprs/{version}"] = paper_mlprs(paper, version, (t,))[0]
fit = cross_fit(s, y, h, cv=3)
for version in ("indpt", "nbh", "full"):
    out[f"cross_fitted/{version}"] = cross_fitted_mlpr(fit, h, version, 0.5)
np.savez(sys.argv[3], **out)
print(hmcpgm.__file__)
"""


def run(code_root, scores, rows, out):
    check_package(run_child(code_root, CHILD, scores, rows, out).strip().splitlines()[-1], code_root)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="main")
    parser.add_argument("--rows", type=int, default=600, help="training (and test) rows used")
    parser.add_argument("--cache-dir", type=Path, default=CACHE, help="cached first-stage scores (made if absent)")
    args = parser.parse_args()
    load_run("cellcycle_FUN", "joint", args.cache_dir, DATA)  # the first stage's scores, made once
    scores = args.cache_dir / "cellcycle_FUN.joint.npz"
    import numpy as np

    commit, folder = export_baseline(args.baseline)
    print(f"cellcycle_FUN, {args.rows} rows; baseline {args.baseline} = {commit[:12]}, current {ROOT}")
    with tempfile.TemporaryDirectory() as tmp:
        got = {}
        for name, code in (("baseline", folder), ("current", ROOT)):
            run(code, scores, args.rows, Path(tmp) / f"{name}.npz")
            got[name] = dict(np.load(Path(tmp) / f"{name}.npz"))
    base, cur = got["baseline"], got["current"]
    same = 0
    for key in sorted(set(base) | set(cur)):
        if key not in base or key not in cur:
            print(f"{key:<28} only in the {'current' if key in cur else 'baseline'} run")
            continue
        if np.array_equal(base[key], cur[key]):
            same += 1
            print(f"{key:<28} bit-identical")
        else:
            print(f"{key:<28} DIFFERS: max |difference| {float(np.abs(base[key] - cur[key]).max()):.3g}")
    print(json.dumps({"arrays": len(base), "bit_identical": same}))


if __name__ == "__main__":
    main()
