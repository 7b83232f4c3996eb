"""The default ``MLPR().fit``, this checkout against a baseline commit: same choices, same predictions, time ratio.

The baseline's ``hmcpgm`` package is exported with ``git archive REV`` (default
``main``) into a cache folder (:func:`_baseline.export_baseline`); the same child
script then runs in a subprocess on the baseline and on this checkout, one after
the other (one process at a time). For each cached run
(``<cache-dir>/<data set>.<joint|classwise>.npz``: arrays ``s_train``,
``y_train``, ``s_test``, ``classes``, ``edges``) the child fits
``MLPR(hierarchy=h, allow_empty=True)`` on the training rows ``--repeats`` times
(after one untimed warm-up fit on 300 rows, which pays the imports and numba's
cache loads) and records the best wall time, the per-step ``seconds`` of the
fitted second stage, its version, exponents (``a``, ``own``), consistency
choice, the cross-validation table's z column, and ``predict_proba`` /
``calibrated_proba`` of the test rows.

It prints, per run, whether the version, exponents and consistency choice are
the same, the largest difference of the predictions (equal to 1e-10 is the
bar), the z statistics of both, and the two fit times with their ratio.

Usage (from the repository root)::

    python bench/fit_identity.py --baseline df213cb
    python bench/fit_identity.py --runs cellcycle_FUN.joint,eisen_FUN.classwise,ImCLEF07A.joint --repeats 2
"""

import argparse
import json
import os
import tempfile
from pathlib import Path

from _baseline import check_package, export_baseline, run_child  # bench/ is on sys.path when a script runs

ROOT = Path(__file__).resolve().parents[1]
CACHE = Path("/work/cache")

CHILD = r"""
import json, sys, time, warnings
import numpy as np
import hmcpgm
from hmcpgm import Hierarchy, MLPR

warnings.simplefilter("ignore")
path, repeats, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
z = np.load(path, allow_pickle=True)
h = Hierarchy.from_edges([tuple(e) for e in z["edges"]], classes=list(z["classes"]))
s, y, t = np.asarray(z["s_train"], float), np.asarray(z["y_train"]), np.asarray(z["s_test"], float)
MLPR(hierarchy=h, allow_empty=True).fit(s[:300], y[:300])  # imports, numba cache loads
times = []
for _ in range(repeats):
    t0 = time.perf_counter()
    model = MLPR(hierarchy=h, allow_empty=True).fit(s, y)
    times.append(time.perf_counter() - t0)
stage = model.second_stage_
table = model.cv_results_
np.savez(out + ".npz", proba=np.asarray(model.predict_proba(t)), calibrated=np.asarray(model.calibrated_proba(t)),
         a=stage.a, own=np.full(h.n_classes, np.nan) if stage.own is None else stage.own)
json.dump({"version": stage.version, "consistency": stage.consistency,
           "consistency_z": float(table.attrs["consistency"]["z"]),
           "z": {v: float(x) for v, x in zip(table["version"], table["z"])},
           "seconds": stage.seconds, "best": min(times), "package": hmcpgm.__file__}, open(out + ".json", "w"))
"""


def run(code_root, path, repeats, out):
    """Run the child on the package under ``code_root``; its json and arrays."""
    import numpy as np

    run_child(code_root, CHILD, path, repeats, out)
    info = json.loads(Path(f"{out}.json").read_text())
    check_package(info["package"], code_root)
    return info, dict(np.load(f"{out}.npz"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="main")
    parser.add_argument("--runs", default="cellcycle_FUN.joint,eisen_FUN.classwise,ImCLEF07A.joint")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--cache-dir", type=Path, default=CACHE)
    args = parser.parse_args()
    import numpy as np

    commit, folder = export_baseline(args.baseline)
    print(f"baseline {args.baseline} = {commit[:12]}; current {ROOT}; load average {os.getloadavg()[0]:.1f}")
    all_same = True
    for name in [r for r in args.runs.split(",") if r]:
        path = args.cache_dir / f"{name}.npz"
        if not path.exists():
            print(f"{name}: {path} absent, skipped")
            continue
        with tempfile.TemporaryDirectory() as tmp:
            base, b_arr = run(folder, path, args.repeats, Path(tmp) / "baseline")
            cur, c_arr = run(ROOT, path, args.repeats, Path(tmp) / "current")
        same = {
            "version": base["version"] == cur["version"],
            "consistency": base["consistency"] == cur["consistency"],
            "a": np.array_equal(b_arr["a"], c_arr["a"]),
            "own": np.array_equal(b_arr["own"], c_arr["own"], equal_nan=True),
        }
        diff = max(float(np.abs(b_arr[k] - c_arr[k]).max()) for k in ("proba", "calibrated"))
        ok = all(same.values()) and diff <= 1e-10
        all_same &= ok
        print(f"\n{name}: {'SAME' if ok else 'DIFFERENT'} (version {cur['version']}, consistency "
              f"{cur['consistency']}; {', '.join(f'{k} {v}' for k, v in same.items())}; "
              f"max |prediction difference| {diff:.3g})")
        print(f"  z        baseline {base['z']} consistency {base['consistency_z']:.4g}")
        print(f"           current  {cur['z']} consistency {cur['consistency_z']:.4g}")
        print(f"  seconds  baseline {base['seconds']}")
        print(f"           current  {cur['seconds']}")
        print(f"  fit (best of {args.repeats})  baseline {base['best']:.2f} s  current {cur['best']:.2f} s  "
              f"speed-up {base['best'] / cur['best']:.2f}x", flush=True)
    print(json.dumps({"all_same": bool(all_same)}))


if __name__ == "__main__":
    main()
