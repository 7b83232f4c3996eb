"""Reading Clus-HMC ARFF files: ``load_hmc_arff``'s seconds and peak memory on files of struc_FUN's and hom_FUN's width.

struc_FUN, one of the Clus-HMC benchmarks that C-HMCNN redistributes, holds 19,628
binary nominal features (``{0,1}``) per row; hom_FUN 47,034 numbers. This script
writes two such files: ``--rows`` rows (default 1,600, about struc_FUN's training
file) of ``--features`` binary nominal features, 5% of them 1, plus ``--multi``
nominal features of four values; and ``--hom-rows`` rows (default 400) of
``--hom-features`` numbers with six decimals. Each has a FunCat-style class
attribute. It times ``load_hmc_arff`` on each (best of ``--repeat``, and for the
first also with ``nominal="one-hot"``) in a new process, and prints that process's
peak resident memory.

With ``--base REV`` (a git revision) the same files are read by that revision's package
(exported by ``bench/_baseline.py``) in a subprocess, after this checkout's, and the
script prints both times and memories, their ratios, and whether the two read the same
numbers and labels.

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
import inspect, resource, sys, time
import numpy as np
from hmcpgm.datasets import load_hmc_arff
path, out, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3])
times = []
for options in ({}, {"nominal": "one-hot"}):
    if options and ("nominal" not in inspect.signature(load_hmc_arff).parameters or "hom" in path):
        break
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        data = load_hmc_arff(path, **options)
        best = min(best, time.perf_counter() - start)
    times.append(best)
    if not options:
        np.savez(out, features=data.features, labels=data.labels)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # MB, before one-hot's copy
print(peak, " ".join(map(str, times)))
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


def write_hom(path, rows, features, seed=0):
    """An ARFF file of numbers with six decimals, some missing, and a small FunCat class attribute."""
    rng = np.random.default_rng(seed)
    lines = ["@RELATION hom_like", *(f"@ATTRIBUTE f{j} numeric" for j in range(features)),
             "@ATTRIBUTE class hierarchical 01,01/01,02", "@DATA"]
    classes = ["01/01", "02", "01"]
    for i in range(rows):
        cells = [f"{v:.6f}" for v in rng.random(features)]
        cells[i % features] = "?"
        lines.append(",".join([*cells, classes[i % len(classes)]]))
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


def timed(code_root, path, out, repeat):
    """(peak MB, [seconds, seconds one-hot]) of one new process reading ``path``."""
    peak, *times = (float(t) for t in run_child(code_root, CHILD, path, out, repeat).split())
    return peak, times


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_600)
    parser.add_argument("--features", type=int, default=19_628)
    parser.add_argument("--multi", type=int, default=20)
    parser.add_argument("--hom-rows", type=int, default=400)
    parser.add_argument("--hom-features", type=int, default=47_034)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--base", help="a git revision whose package reads the same files, in the same run")
    args = parser.parse_args()
    base = export_baseline(args.base) if args.base else None
    same = True
    with tempfile.TemporaryDirectory() as tmp:
        struc, hom = Path(tmp) / "struc_like.arff", Path(tmp) / "hom_like.arff"
        write_arff(struc, args.rows, args.features, args.multi)
        write_hom(hom, args.hom_rows, args.hom_features)
        for path, what in ((struc, f"{args.rows} rows x {args.features} binary + {args.multi} four-valued nominal "
                                   "features"),
                           (hom, f"{args.hom_rows} rows x {args.hom_features} numbers")):
            print(f"{what}, {path.stat().st_size / 1e6:.1f} MB")
            peak, mine = timed(ROOT, path, Path(tmp) / "mine.npz", args.repeat)
            hot = f", with nominal='one-hot' {mine[1]:.2f} s" if len(mine) > 1 else ""
            print(f"  this checkout ({describe_checkout()}): load_hmc_arff {mine[0]:.2f} s{hot}; peak {peak:.0f} MB")
            if base:
                commit, folder = base
                base_peak, theirs = timed(folder, path, Path(tmp) / "base.npz", args.repeat)
                with np.load(Path(tmp) / "mine.npz") as a, np.load(Path(tmp) / "base.npz") as b:
                    equal = all(np.array_equal(a[k], b[k], equal_nan=True) for k in ("features", "labels"))
                same = same and equal
                print(f"  base {commit[:7]}: load_hmc_arff {theirs[0]:.2f} s; peak {base_peak:.0f} MB; "
                      f"ratios base / this checkout: time {theirs[0] / mine[0]:.2f}x, memory {base_peak / peak:.2f}x; "
                      f"same numbers and labels read: {equal}")
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
