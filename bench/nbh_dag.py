"""The nbh version on cellcycle_GO (a DAG): this code against a baseline commit, in the same run.

Run from the repository root::

    python bench/nbh_dag.py [--rows 20,200] [--repeats 3] [--rounds 2] [--baseline REV]
    python bench/nbh_dag.py --baseline c577257   # on main: the code before the grouped nbh kernels

The baseline's ``hmcpgm`` package is exported with ``git archive REV`` (default:
``git merge-base HEAD main``, where this branch started) into a temporary folder,
and the two versions run alternately in fresh subprocesses (baseline, current,
baseline, current, ...), each with its own ``PYTHONPATH``: the machine's load
falls on both alike. Each subprocess loads the cached first-stage scores
(``<cache-dir>/cellcycle_GO.joint.npz``: ``s_train``, ``y_train``, ``classes``,
``edges``; 4,125 classes; without them, the labels and hierarchy of
``<data-dir>/cellcycle_GO.train.arff`` with seeded synthetic scores), fits the isotonic score model and theta on the
training rows, and calls ``mlpr_from_likelihoods(..., version="nbh",
engine=E)`` with ``E`` the engine the default fit screens nbh with on this DAG
(``hmcpgm.selection.resolve_engine(h, "nbh")``). One untimed call on 2 rows pays
the hierarchy's cached reduction, the junction trees' compilation and numba's
loads; then, for each row count, the best of ``--repeats`` calls on the first
rows of the training set. This is the default fit's use: it screens the nbh
version with a few calls on about 20 rows each, so the fixed cost per call matters.

Printed: seconds per call of each version and row count (best of the rounds),
the ratio baseline / current, and the largest absolute difference between the
two versions' posteriors.
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
    git,
    run_child,
)
from _paths import HMC_DATA

ROOT = Path(__file__).resolve().parents[1]
CACHE = Path("/work/cache")

CHILD = r"""
import json, sys, time
import numpy as np
import hmcpgm
from hmcpgm import Hierarchy, LabelNetwork, mlpr_from_likelihoods
from hmcpgm.likelihood import fit_score_model
from hmcpgm.selection import resolve_engine

path, rows, repeats, out = sys.argv[1], [int(r) for r in sys.argv[2].split(",")], int(sys.argv[3]), sys.argv[4]
z = np.load(path, allow_pickle=True)
h = Hierarchy.from_edges([tuple(e) for e in z["edges"]], classes=list(z["classes"]))
s, y = np.asarray(z["s_train"], float), np.asarray(z["y_train"])
lik = fit_score_model(s, y, h, kind="isotonic", allow_empty=True).likelihoods(s[:max(rows)])
net = LabelNetwork(h, LabelNetwork.from_labels(y, h).theta)
engine = resolve_engine(h, "nbh")
t = time.perf_counter()
mlpr_from_likelihoods(net, lik[:2], version="nbh", engine=engine)
setup = time.perf_counter() - t
seconds, answers = {}, {}
for m in rows:
    best = np.inf
    for _ in range(repeats):
        t = time.perf_counter()
        answers[str(m)] = mlpr_from_likelihoods(net, lik[:m], version="nbh", engine=engine)
        best = min(best, time.perf_counter() - t)
    seconds[m] = best
np.savez(out, **answers)
print(json.dumps({"seconds": seconds, "setup": setup, "engine": engine, "package": hmcpgm.__file__}))
"""


def run(code_root, path, rows, repeats, out):
    result = json.loads(run_child(code_root, CHILD, path, rows, repeats, out).strip().splitlines()[-1])
    check_package(result["package"], code_root)
    return result



def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="20,200", help="comma-separated row counts (default 20,200)")
    parser.add_argument("--repeats", type=int, default=3, help="calls per row count in each subprocess (best kept)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--baseline", default=None,
                        help="git revision of the baseline (default: git merge-base HEAD main)")
    parser.add_argument("--cache-dir", type=Path, default=CACHE)
    parser.add_argument("--data-dir", type=Path, default=HMC_DATA)
    args = parser.parse_args()
    import numpy as np

    path = args.cache_dir / "cellcycle_GO.joint.npz"
    scratch = tempfile.TemporaryDirectory()
    if not path.exists():  # the real hierarchy and labels, with seeded synthetic scores instead
        from hmcpgm.datasets import load_hmc_arff

        arff = args.data_dir / "cellcycle_GO.train.arff"
        if not arff.is_file():
            print(f"neither {path} nor {arff}: nothing to measure (pass --cache-dir or --data-dir)")
            return
        data = load_hmc_arff(arff)
        y = np.asarray(data.labels)
        s = y + np.random.default_rng(0).normal(0.0, 1.0, y.shape)
        path = Path(scratch.name) / "cellcycle_GO.synthetic.npz"
        np.savez(path, s_train=s, y_train=y, classes=np.array(data.hierarchy.classes, dtype=object),
                 edges=np.array(data.hierarchy.edges, dtype=object))
        print(f"no cached scores: labels and hierarchy of {arff}, scores = labels + N(0, 1) noise (seed 0)")

    rows = [int(r) for r in args.rows.split(",") if r]
    commit, folder = export_baseline(args.baseline or git("merge-base", "HEAD", "main"))
    print(f"cellcycle_GO, nbh version; baseline {commit[:12]} (git archive in {folder}), current "
          f"{describe_checkout()} ({ROOT}); "
          f"load average {os.getloadavg()[0]:.1f}")
    times = {name: {m: [] for m in rows} for name in ("baseline", "current")}
    with tempfile.TemporaryDirectory() as tmp:
        outs = {}
        for r in range(args.rounds):
            for name, code in (("baseline", folder), ("current", ROOT)):
                out = Path(tmp) / f"{name}.npz"
                res = run(code, path, ",".join(map(str, rows)), args.repeats, out)
                outs[name] = dict(np.load(out))
                for m in rows:
                    times[name][m].append(res["seconds"][str(m)])
                print(f"round {r + 1} {name:<8} (engine {res['engine']}): "
                      + ", ".join(f"{m} rows {res['seconds'][str(m)]:.3f} s" for m in rows)
                      + f" per call (best of {args.repeats}); first call on 2 rows {res['setup']:.2f} s", flush=True)
        diff = {m: float(np.abs(outs["current"][str(m)] - outs["baseline"][str(m)]).max()) for m in rows}
    for m in rows:
        b, c = min(times["baseline"][m]), min(times["current"][m])
        print(f"{m} rows: baseline {b:.3f} s per call, current {c:.3f} s; speed-up {b / c:.1f}x; "
              f"max |current - baseline| {diff[m]:.2e} ({'within' if diff[m] <= 1e-12 else 'NOT within'} 1e-12)")


if __name__ == "__main__":
    main()
