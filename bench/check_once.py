"""Fit time of ``MLPR`` when inputs are checked once at the door, against a baseline that checks at every level.

The baseline's ``hmcpgm`` package is exported with ``git archive REV`` (default
``main``) into a temporary folder; each round fits, in a fresh subprocess (the
baseline's, then this checkout's), ``MLPR(hierarchy=h, allow_empty=True)`` (the
default, cross-fitted) and the paper's fixed model (``version="indpt",
tempering=None, recalibrate=False``) on cellcycle_FUN's cached out-of-fold joint
scores of the training rows (``<cache-dir>/cellcycle_FUN.joint.npz``, made by
the benchmark's first stage when absent: ``version_transfer.load_run``), after
one untimed warm-up fit that pays the imports and numba's loads. Printed: per
round and model the wall and CPU seconds of each, the best of each, and the
calls and seconds of the input checks (``label_matrix``, ``class_matrix``,
``aligned_matrices``, ``finite_array``, ``binary_matrix``,
``likelihood_array``; nested ones overlap) in one default fit of each, counted
with cProfile in a separate, untimed run. Timings vary with the machine's load;
CPU seconds are the steadier figure on a shared machine.

Usage (from the repository root)::

    python bench/check_once.py [--baseline main] [--rounds 2] [--cache-dir /work/cache]
"""

import argparse
import json
import os
from pathlib import Path

from _baseline import check_package, export_baseline, run_child  # bench/ is on sys.path when a script runs
from version_transfer import CACHE, DATA, load_run

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, sys, time, warnings
import numpy as np
import hmcpgm
from hmcpgm import Hierarchy, MLPR

warnings.simplefilter("ignore")
z = np.load(sys.argv[1], allow_pickle=True)
h = Hierarchy.from_edges([tuple(e) for e in z["edges"]], classes=list(z["classes"]))
s, y = z["s_train"], z["y_train"]
models = {
    "default": dict(allow_empty=True),
    "paper indpt": dict(version="indpt", tempering=None, recalibrate=False, allow_empty=True),
}
MLPR(hierarchy=h, **models["paper indpt"]).fit(s[:200], y[:200])  # warm-up: imports, numba
if sys.argv[2] == "profile":
    import cProfile, pstats
    prof = cProfile.Profile()
    prof.enable()
    MLPR(hierarchy=h, **models["default"]).fit(s, y)
    prof.disable()
    stats = pstats.Stats(prof).stats
    out = {}
    checks = ("label_matrix", "class_matrix", "aligned_matrices", "finite_array", "binary_matrix", "likelihood_array")
    for (file, _, name), (_, calls, _, cum, _) in stats.items():
        if "hmcpgm" in file and name in checks:
            out[name] = {"calls": out.get(name, {}).get("calls", 0) + calls,
                         "seconds": out.get(name, {}).get("seconds", 0.0) + cum}
    print(json.dumps({"checks": out, "package": hmcpgm.__file__}))
    sys.exit()
out = {}
for name, params in models.items():
    t, c = time.perf_counter(), time.process_time()
    MLPR(hierarchy=h, **params).fit(s, y)
    out[name] = {"wall": time.perf_counter() - t, "cpu": time.process_time() - c}
print(json.dumps({"fits": out, "package": hmcpgm.__file__}))
"""


def run(code_root, scores, what):
    result = json.loads(run_child(code_root, CHILD, scores, what).strip().splitlines()[-1])
    check_package(result["package"], code_root)
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="main")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--cache-dir", type=Path, default=CACHE, help="cached first-stage scores (made if absent)")
    args = parser.parse_args()
    load_run("cellcycle_FUN", "joint", args.cache_dir, DATA)  # the first stage's scores, made once
    scores = args.cache_dir / "cellcycle_FUN.joint.npz"
    commit, folder = export_baseline(args.baseline)
    print(f"cellcycle_FUN training rows, {os.cpu_count()} cores; baseline {args.baseline} = {commit[:12]}, "
          f"current {ROOT}")
    for name, code in (("baseline", folder), ("current", ROOT)):
        checks = run(code, scores, "profile")["checks"]
        print(f"{name}'s input checks in one default fit (cProfile, cumulative): "
              + ", ".join(f"{n} {c['calls']} calls {c['seconds']:.3f} s" for n, c in sorted(checks.items())))
    best = {}
    for r in range(args.rounds):
        for name, code in (("baseline", folder), ("current", ROOT)):
            fits = run(code, scores, "time")["fits"]
            for model, t in fits.items():
                key = (model, name)
                best[key] = {k: min(best.get(key, {}).get(k, float("inf")), v) for k, v in t.items()}
                print(f"round {r + 1} {model:<12} {name:<8}: {t['wall']:.2f} s wall, {t['cpu']:.2f} s CPU", flush=True)
    for model in ("default", "paper indpt"):
        b, c = best[model, "baseline"], best[model, "current"]
        print(f"best {model:<12}: baseline {b['wall']:.2f} s wall / {b['cpu']:.2f} s CPU, current {c['wall']:.2f} s "
              f"wall / {c['cpu']:.2f} s CPU; saved {b['wall'] - c['wall']:.2f} s wall, {b['cpu'] - c['cpu']:.2f} s CPU")


if __name__ == "__main__":
    main()
