"""Calibration of mLPRs on real data: why mLPR-full ranks worse than indpt there.

The network assumes the class scores are independent given the labels. First-stage
scores from one linear model over shared features are not, so the full version
counts correlated evidence many times over and its posteriors become overconfident.
This script prints reliability tables (mean mLPR per bin against the observed rate
of positives) of the indpt and full versions on the test rows of a FunCat data set,
and the median absolute correlation of first-stage scores across classes.

Run from the repository root:  python bench/calibration_real.py [NAME [DATA_DIR]]
(default cellcycle_FUN in shared/data/hmc beside the repository)
"""

import sys
import warnings
from pathlib import Path

import numpy as np
from _paths import HMC_DATA  # bench/ is on sys.path when a script runs

from hmcpgm import MLPR
from hmcpgm.datasets import load_hmc_split
from hmcpgm.first_stage import fit_first_stage, out_of_fold_scores, predict_scores

DATA = HMC_DATA


def reliability(p, y, n_bins=10):
    edges = np.linspace(0, 1, n_bins + 1)
    bins = np.clip(np.digitize(p.ravel(), edges[1:-1]), 0, n_bins - 1)
    rows = []
    for b in range(n_bins):
        mask = bins == b
        if mask.any():
            rows.append((edges[b], edges[b + 1], int(mask.sum()), p.ravel()[mask].mean(), y.ravel()[mask].mean()))
    return rows


def main(name="cellcycle_FUN", data_dir=DATA):
    warnings.simplefilter("ignore")
    split = load_hmc_split(name, Path(data_dir))
    h = split.hierarchy
    s_train = out_of_fold_scores(split.train.features, split.train.labels, progress=False)
    first = fit_first_stage(split.train.features, split.train.labels, progress=False)
    s_test = predict_scores(first, split.test.features)
    y = split.test.labels
    corr = np.corrcoef(s_train.T)
    upper = corr[np.triu_indices_from(corr, 1)]
    print(f"{name}: {h.n_classes} classes; median |correlation| of first-stage scores between classes: "
          f"{np.nanmedian(np.abs(upper)):.3f}")
    for version in ("indpt", "full"):
        model = MLPR(hierarchy=h, version=version, allow_empty=True).fit(s_train, split.train.labels)
        p = model.predict_proba(s_test)
        print(f"\nmLPR-{version}: mean mLPR {p.mean():.4f}, observed rate of positives {y.mean():.4f}")
        print("  bin            events   mean mLPR   observed")
        for lo, hi, n, mean_p, rate in reliability(p, y):
            print(f"  [{lo:.1f}, {hi:.1f})  {n:>9}   {mean_p:9.3f}   {rate:8.3f}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
