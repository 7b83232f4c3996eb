"""Reading a Clus-HMC ARFF file of nominal features: ``load_hmc_arff``'s seconds on a struc_FUN-shaped file.

struc_FUN, one of the Clus-HMC benchmarks that C-HMCNN redistributes, holds 19,628
binary nominal features (``{0,1}``) per row. This script writes such a file:
``--rows`` rows (default 1,600, about its training file) of ``--features`` binary
nominal features, 5% of them 1, plus ``--multi`` nominal features of four values
and a FunCat-style class attribute. It times ``load_hmc_arff`` on it (codes, then
``nominal="one-hot"``), best of ``--repeat`` runs.

With ``--base REV`` (a git revision) the same file is read by that revision's package
(exported by ``bench/_baseline.py``) in a subprocess, after this checkout's, and the
script prints both times, their ratio, and whether the two read the same codes and
labels.

Usage (from the repository root)::

    python bench/arff_reading.py
    python bench/arff_reading.py --base HEAD~1 --repeat 1
"""

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
from _baseline import describe_checkout, export_baseline, run_child  # bench/ is on sys.path when a script runs

ROOT = Path(__file__).resolve().parents[1]

# run on one package (PYTHONPATH): times load_hmc_arff (codes, and one-hot where the package has it)
CHILD = """
import inspect, sys, time
import numpy as np
from hmcpgm.datasets import load_hmc_arff
path, out, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3])
times = []
for options in ({}, {"nominal": "one-hot"}):
    if options and "nominal" not in inspect.signature(load_hmc_arff).parameters:
        break
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        data = load_hmc_arff(path, **options)
        best = min(best, time.perf_counter() - start)
    times.append(best)
    if not options:
        np.savez(out, features=data.features, labels=data.labels)
print(" ".join(map(str, times)))
"""


def write_arff(path, rows, features, multi, seed=0):
    """An ARFF file of binary and four-valued nominal features and a small FunCat class attribute."""
    rng = np.random.default_rng(seed)
    lines = ["@RELATION struc_like"]
    lines += [f"@ATTRIBUTE b{j} {{0,1}}" for j in range(features)]
    lines += [f"@ATTRIBUTE m{j} {{A,C,G,T}}" for j in range(multi)]
    lines += ["@ATTRIBUTE class hierarchical 01,01/01,01/02,02,02/01", "@DATA"]
    binary = np.where(rng.random((rows, features)) < 0.05, "1", "0")
    bases = np.array(list("ACGT"))[rng.integers(4, size=(rows, multi))]
    bases[rng.random((rows, multi)) < 0.02] = "?"
    classes = ["01/01", "01/02@02", "02/01", "01"]
    for i in range(rows):
        lines.append(",".join([*binary[i], *bases[i], classes[i % len(classes)]]))
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


def timed(code_root, path, out, repeat):
    return [float(t) for t in run_child(code_root, CHILD, path, out, repeat).split()]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_600)
    parser.add_argument("--features", type=int, default=19_628)
    parser.add_argument("--multi", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--base", help="a git revision whose package reads the same file, in the same run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "struc_like.arff"
        write_arff(path, args.rows, args.features, args.multi)
        print(f"{args.rows} rows x {args.features} binary + {args.multi} four-valued nominal features, "
              f"{path.stat().st_size / 1e6:.1f} MB")
        mine = timed(ROOT, path, Path(tmp) / "mine.npz", args.repeat)
        print(f"this checkout ({describe_checkout()}): load_hmc_arff {mine[0]:.2f} s, "
              f"with nominal='one-hot' {mine[1]:.2f} s")
        if args.base:
            commit, folder = export_baseline(args.base)
            base = timed(folder, path, Path(tmp) / "base.npz", args.repeat)
            with np.load(Path(tmp) / "mine.npz") as a, np.load(Path(tmp) / "base.npz") as b:
                same = all(np.array_equal(a[k], b[k], equal_nan=True) for k in ("features", "labels"))
            print(f"base {commit[:7]}: load_hmc_arff {base[0]:.2f} s; ratio base / this checkout "
                  f"{base[0] / mine[0]:.2f}x; same codes and labels read: {same}")
            if not same:
                sys.exit(1)


if __name__ == "__main__":
    main()
