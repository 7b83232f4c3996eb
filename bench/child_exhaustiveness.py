"""How often a positive class has no positive child: in the data, and under the label network.

In the label network the children of a class are independent given their parents:
a positive class has no positive child with probability ``prod_c (1 - theta_c)``
over its children ``c`` (on a tree; on a DAG a child also needs its other
parents). In many benchmarks the annotations are closed downward from the most
specific classes, so a positive internal class almost always has a positive
child (single-path data such as ImCLEF07A always has exactly one). The network
then puts too much prior mass on "positive here, nothing below", which weakens
what the children's scores say about their parents.

For each data set the script fits ``LabelNetwork.from_labels`` on the training
labels (pseudo-count 0.5, the second stage's default) and, over the classes with
children and at least ``--min-positives`` training positives, prints the
fraction of their positive rows with no positive child (observed) beside the
network's probability of the same event (exact on forests, from ``--samples``
forward samples of the network on DAGs); both averaged over the classes,
weighted by their positives, and their medians.

Usage (from the repository root)::

    python bench/child_exhaustiveness.py
    python bench/child_exhaustiveness.py --datasets Enron_corr,cellcycle_GO --data-dir ../shared/data/hmc
"""

import argparse
import sys
from pathlib import Path

import numpy as np
from _paths import HMC_DATA  # bench/ is on sys.path when a script runs

ROOT = Path(__file__).resolve().parents[1]
DATA = HMC_DATA
DATASETS = "cellcycle_FUN,eisen_FUN,gasch1_FUN,ImCLEF07A,Enron_corr,cellcycle_GO,eisen_GO,gasch1_GO"


def no_child_rates(labels, hierarchy, *, min_positives=5, samples=50_000, seed=0, pseudo_count=0.5):
    """Per class with children: (positives, observed rate of no positive child, the network's rate)."""
    from hmcpgm import LabelNetwork

    y = np.asarray(labels).astype(bool)
    net = LabelNetwork.from_labels(y, hierarchy, pseudo_count=pseudo_count)
    drawn = None if hierarchy.is_forest else net.sample(samples, rng=seed).astype(bool)
    rows = []
    for k in range(hierarchy.n_classes):
        children = hierarchy.child_indices[k]
        n_pos = int(y[:, k].sum())
        if not len(children) or n_pos < min_positives:
            continue
        observed = float(np.mean(~y[y[:, k]][:, children].any(axis=1)))
        if drawn is None:  # forest: the children depend on k alone
            model = float(np.prod(1.0 - net.theta[children]))
        else:
            on = drawn[:, k]
            model = float(np.mean(~drawn[on][:, children].any(axis=1))) if on.any() else np.nan
        rows.append((n_pos, observed, model))
    return np.array(rows, dtype=float).reshape(-1, 3)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default=DATASETS)
    parser.add_argument("--data-dir", type=Path, default=DATA)
    parser.add_argument("--min-positives", type=int, default=5)
    parser.add_argument("--samples", type=int, default=50_000)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from hmcpgm.datasets import load_hmc_split

    print("P(no positive child | class positive), classes with children and >= "
          f"{args.min_positives} training positives")
    print(f"{'data set':<16} {'kind':<6} {'classes':>7} {'observed':>9} {'network':>8} "
          f"{'median obs':>10} {'median net':>10}")
    for name in [d for d in args.datasets.split(",") if d]:
        try:
            data = load_hmc_split(name, args.data_dir).train
        except (FileNotFoundError, ValueError) as err:
            print(f"{name}: skipped ({err})")
            continue
        r = no_child_rates(data.labels, data.hierarchy, min_positives=args.min_positives, samples=args.samples)
        kept = ~np.isnan(r[:, 2])
        w, obs, net = r[kept, 0], r[kept, 1], r[kept, 2]
        print(f"{name:<16} {data.hierarchy.kind:<6} {len(w):>7} {np.average(obs, weights=w):>9.3f} "
              f"{np.average(net, weights=w):>8.3f} {np.median(obs):>10.3f} {np.median(net):>10.3f}", flush=True)


if __name__ == "__main__":
    main()
