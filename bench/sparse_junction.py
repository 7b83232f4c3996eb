"""The sparse junction tree on cellcycle_GO: this code against a baseline commit, in the same run.

Run from the repository root::

    python bench/sparse_junction.py [--objects 100] [--rounds 2] [--baseline REV]

The baseline's ``hmcpgm`` package is exported with ``git archive REV`` (default:
``BASELINE``, main before the speed-up of issue 22) into a folder under ``~/.cache/hmcpgm/`` (kept, so
its numba cache is reused), and the two versions run alternately in fresh
subprocesses (baseline, current, baseline, current, ...) on the same objects, each
with its own ``PYTHONPATH``: the machine's load (2 shared cores) falls on both alike.
Each subprocess loads cellcycle_GO (4,125 classes), compiles the sparse junction
tree, warms up on 2 objects (numba), then times full mLPRs of ``--objects`` objects
through ``mlpr_from_likelihoods(engine="sparse")`` on every core. Printed: each
run's wall-clock seconds per object and the process's CPU seconds per object (all
threads; less sensitive to other jobs taking the cores), the best of each version,
their ratios, and the largest
absolute difference between the two versions' answers (they must agree to 1e-10).
Each subprocess calls the engine once on fresh memory: with few objects, writing
the message arrays for the first time is a visible part of the time (later calls
in the same process reuse that memory and run faster). The engine calibrates up to
64 objects per batch and core (as the memory budget allows, about 53 on
cellcycle_GO): 100 objects are one batch of 50 per core, as in a long run; with
fewer objects the batches are smaller and each state's bookkeeping is shared by
fewer objects.
Evidence: likelihood ratios exp(N(1.5 (2y - 1), 1)) from the first training labels.
"""

import argparse
import json
import os
import tempfile
from pathlib import Path

from _baseline import (  # bench/ is on sys.path when a script runs
    check_package,
    describe_checkout,
    export_baseline,
    run_child,
)
from _paths import HMC_DATA  # bench/ is on sys.path when a script runs

ROOT = Path(__file__).resolve().parents[1]
HMC = HMC_DATA
GO_FILE = HMC / "cellcycle_GO.train.arff"
BASELINE = "ba333c3c2a64"  # main before the sparse junction tree's speed-up (issue 22)

CHILD = r"""
import json, sys, time
import numpy as np
import hmcpgm
from hmcpgm import LabelNetwork, mlpr_from_likelihoods
from hmcpgm.datasets import load_hmc_arff

path, m, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
data = load_hmc_arff(path)
h = data.hierarchy
theta = LabelNetwork.from_labels(data.labels, h).theta
y = data.labels[:m].astype(float)
ratio = np.exp(np.random.default_rng(11).normal(1.5 * (2 * y - 1), 1.0))
lik = np.stack([np.ones_like(ratio), ratio], axis=2)
net = LabelNetwork(h, theta)
t = time.perf_counter()
mlpr_from_likelihoods(net, lik[:2], engine="sparse")
setup = time.perf_counter() - t
t, cpu = time.perf_counter(), time.process_time()
mlpr = mlpr_from_likelihoods(net, lik, engine="sparse")
seconds, cpu = time.perf_counter() - t, time.process_time() - cpu
np.save(out, mlpr)
print(json.dumps({"seconds": seconds, "cpu": cpu, "setup": setup, "package": hmcpgm.__file__}))
"""


def run(code_root, m, out):
    result = json.loads(run_child(code_root, CHILD, GO_FILE, m, out).strip().splitlines()[-1])
    check_package(result["package"], code_root)
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--baseline", default=BASELINE,
                        help=f"git revision of the baseline (default {BASELINE}: main before the speed-up)")
    args = parser.parse_args()
    if not GO_FILE.exists():
        print(f"{GO_FILE} absent: nothing to measure")
        return
    import numpy as np

    commit, folder = export_baseline(args.baseline)
    print(f"cellcycle_GO, {args.objects} objects, {os.cpu_count()} cores; baseline {commit[:12]} "
          f"(git archive in {folder}), current {describe_checkout()} ({ROOT})")
    times = {"baseline": [], "current": []}
    cpu = {"baseline": [], "current": []}
    with tempfile.TemporaryDirectory() as tmp:
        outs = {}
        for r in range(args.rounds):
            for name, code in (("baseline", folder), ("current", ROOT)):
                out = Path(tmp) / f"{name}.npy"
                res = run(code, args.objects, out)
                outs[name] = np.load(out)
                times[name].append(res["seconds"] / args.objects)
                cpu[name].append(res["cpu"] / args.objects)
                print(f"round {r + 1} {name:<8}: {res['seconds'] / args.objects:.3f} s per object "
                      f"({res['seconds']:.1f} s for {args.objects}; CPU time of the process "
                      f"{res['cpu'] / args.objects:.3f} s per object; compile and warm-up {res['setup']:.1f} s)",
                      flush=True)
        diff = float(np.abs(outs["current"] - outs["baseline"]).max())
    best = {n: min(t) for n, t in times.items()}
    ratios = [b / c for b, c in zip(times["baseline"], times["current"])]
    print(f"best: baseline {best['baseline']:.3f} s/object, current {best['current']:.3f} s/object; "
          f"speed-up {best['baseline'] / best['current']:.2f}x (best against best), per round "
          + ", ".join(f"{x:.2f}x" for x in ratios))
    print(f"CPU time per object (all threads), best: baseline {min(cpu['baseline']):.3f} s, current "
          f"{min(cpu['current']):.3f} s; ratio {min(cpu['baseline']) / min(cpu['current']):.2f}x")
    print(f"max |current - baseline| over {args.objects} x 4125 mLPRs: {diff:.2e} "
          f"({'within' if diff <= 1e-10 else 'NOT within'} 1e-10)")


if __name__ == "__main__":
    main()
