"""Peak memory of the label metrics on Gene Ontology labels: information_accretion, fmax, average_precision.

The eisen_GO test labels (835 targets x 3,573 terms, int8) are repeated ``--copies``
times (default 20: 16,700 targets, a CAFA-sized ground truth); scores are the labels
plus Gaussian noise. Each call's peak of Python-allocated memory is measured with
``tracemalloc`` (numpy's arrays included), in a fresh process per package. With
``--base REV`` (a git revision) the same calls are measured on that revision's
package, exported with ``git archive``, in the same run; a label matrix aligned by
class name used to become a float copy, eight times its size.

Usage (from the repository root; needs ../shared/data/hmc/eisen_GO.test.arff)::

    python bench/label_memory.py
    python bench/label_memory.py --base 0fee445
"""

import argparse
import json

from _baseline import ROOT, describe_checkout, export_baseline, run_child  # bench/ is on sys.path
from _paths import HMC_DATA

CHILD = r"""
import json, sys, tracemalloc
import numpy as np
from hmcpgm.datasets import load_hmc_arff
from hmcpgm.metrics import average_precision, fmax, information_accretion

data = load_hmc_arff(sys.argv[1])
y = np.tile(data.labels, (int(sys.argv[2]), 1))
h = data.hierarchy
s = np.clip(0.5 * y + np.random.default_rng(0).normal(0.2, 0.2, y.shape), 0, 1)
peaks = {"labels (int8) MB": y.nbytes / 1e6}
for name, call in [("information_accretion", lambda: information_accretion(y, h)),
                   ("fmax", lambda: fmax(s, y, h)), ("average_precision", lambda: average_precision(s, y, h))]:
    tracemalloc.start()
    call()
    peaks[name] = tracemalloc.get_traced_memory()[1] / 1e6
    tracemalloc.stop()
print(json.dumps(peaks))
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=20, help="copies of the eisen_GO test labels (default 20)")
    parser.add_argument("--base", help="a git revision to measure beside this checkout")
    args = parser.parse_args()
    path = HMC_DATA / "eisen_GO.test.arff"
    runs = [(describe_checkout(), ROOT)]
    if args.base:
        commit, folder = export_baseline(args.base)
        runs.append((commit[:7], folder))
    results = {name: json.loads(run_child(root, CHILD, path, args.copies)) for name, root in runs}
    names = list(results)
    print(f"peak MB (tracemalloc), eisen_GO test labels x {args.copies}: "
          f"{results[names[0]]['labels (int8) MB']:.0f} MB of int8 labels")
    print(f"{'call':<24}" + "".join(f"{n:>28}" for n in names) + ("   base / this" if args.base else ""))
    for call in ("information_accretion", "fmax", "average_precision"):
        row = [results[n][call] for n in names]
        ratio = f"   {row[1] / row[0]:.1f}x" if args.base else ""
        print(f"{call:<24}" + "".join(f"{v:>28.0f}" for v in row) + ratio)


if __name__ == "__main__":
    main()
