"""How far the label network's prior marginals are from the classes' prevalences, by depth.

The network gives each class ``P(Y_k = 1 | all parents positive) = theta_k`` and
so ``P(Y_k = 1)`` = the product of theta over ``k`` and all its ancestors
(``LabelNetwork.log_prior_marginals``). On a tree that telescopes back to the
prevalence (up to the pseudo-count). On a DAG it treats a class's parents as
independent given their own parents; when real annotations make them positive
together (the true path rule puts a gene annotated to a deep GO term on every
path above it), the product is far smaller than the prevalence. The nbh and full
versions then start every deep class from too small a prior, while indpt uses the
prevalence itself.

For each data set the script fits ``LabelNetwork.from_labels`` on the training
labels (pseudo-count 0.5, the second stage's default) and prints, per depth (the
longest path from a root), the number of classes and the median and 10% quantile
of model marginal / prevalence (the prevalence with the same pseudo-count,
``(n_k + 0.5) / (M + 1)``).

Usage (from the repository root)::

    python bench/dag_prior_marginals.py
    python bench/dag_prior_marginals.py --datasets cellcycle_GO,cellcycle_FUN --data-dir ../shared/data/hmc
"""

import argparse
import sys
from pathlib import Path

import numpy as np
from _paths import HMC_DATA  # bench/ is on sys.path when a script runs

ROOT = Path(__file__).resolve().parents[1]
DATA = HMC_DATA


def ratios(labels, hierarchy, pseudo_count=0.5):
    """Model prior marginal over prevalence per class, and each class's depth."""
    from hmcpgm import LabelNetwork

    y = np.asarray(labels)
    net = LabelNetwork.from_labels(y, hierarchy, pseudo_count=pseudo_count)
    prevalence = (y.sum(axis=0) + pseudo_count) / (len(y) + 2 * pseudo_count)
    return np.exp(net.log_prior_marginals) / prevalence, np.asarray(hierarchy.depth)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="cellcycle_GO,cellcycle_FUN")
    parser.add_argument("--data-dir", type=Path, default=DATA)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from hmcpgm.datasets import load_hmc_arff

    for name in [d for d in args.datasets.split(",") if d]:
        path = args.data_dir / f"{name}.train.arff"
        if not path.is_file():
            print(f"{name}: {path} not found, skipped")
            continue
        data = load_hmc_arff(path)
        r, depth = ratios(data.labels, data.hierarchy)
        print(f"{name} ({data.hierarchy.kind}, {data.hierarchy.n_classes} classes, {data.n_objects} training rows): "
              "model prior marginal / prevalence")
        print(f"{'depth':>7}{'classes':>9}{'median':>10}{'10%':>10}")
        for d in range(depth.max() + 1):
            sel = depth == d
            if sel.any():
                print(f"{d:>7}{sel.sum():>9}{np.median(r[sel]):>10.3g}{np.quantile(r[sel], 0.1):>10.3g}")


if __name__ == "__main__":
    main()
