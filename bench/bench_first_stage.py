"""Timings for the data sets and the first stage (printed, never asserted).

Run: python bench/bench_first_stage.py [path/to/shared/data/hmc]

Measures: the paper's synthetic generator at 50,000 + 10,000 objects; reading
every benchmark (train/valid/test); out-of-fold scores on cellcycle_GO with the
default joint ridge, against per-class logistic regression timed on a sample of
classes and extrapolated to all classes; the class-wise default
(``LogisticColumns``: every class's logistic regression in one vectorised call)
on all classes, with the ratio to the extrapolated per-class time and how far its
scores are from the per-class ones on the sample.
"""

import sys
import time
from pathlib import Path

import numpy as np
from _paths import HMC_DATA  # bench/ is on sys.path when a script runs

from hmcpgm.datasets import load_hmc_split, make_paper_synthetic
from hmcpgm.first_stage import default_classwise_classifier, fit_first_stage, out_of_fold_scores, predict_scores

BENCHMARKS = ["cellcycle_FUN", "eisen_FUN", "gasch1_FUN", "cellcycle_GO", "eisen_GO",
              "gasch1_GO", "ImCLEF07A", "Enron_corr"]


def main(data_dir):
    t = time.perf_counter()
    data = make_paper_synthetic(50_000, 10_000, seed=0)
    print(f"make_paper_synthetic(50_000, 10_000): {time.perf_counter() - t:.3f} s "
          f"({data.n_draws} theta draws)")

    for name in BENCHMARKS:
        t = time.perf_counter()
        split = load_hmc_split(name, data_dir)
        print(f"load_hmc_split({name!r}): {time.perf_counter() - t:.2f} s  {split.summary()}")

    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import average_precision_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    split = load_hmc_split("cellcycle_GO", data_dir)
    X, y = split.train.features, split.train.labels
    t = time.perf_counter()
    oof = out_of_fold_scores(X, y, n_splits=5, progress=False)
    joint = time.perf_counter() - t
    print(f"cellcycle_GO out_of_fold_scores, default joint ridge, 5 folds, {y.shape[1]} classes: "
          f"{joint:.1f} s")
    t = time.perf_counter()
    model = fit_first_stage(X, y, progress=False)
    test = predict_scores(model, split.test.features)
    print(f"cellcycle_GO fit_first_stage + predict_scores(test): {time.perf_counter() - t:.1f} s")
    ev = split.evaluated
    print("  micro AU(PRC), non-root classes: out-of-fold train "
          f"{average_precision_score(y[:, ev], oof[:, ev], average='micro'):.3f}, test "
          f"{average_precision_score(split.test.labels[:, ev], test[:, ev], average='micro'):.3f}")

    # per-class logistic regression on a sample of fittable classes, extrapolated
    clf = make_pipeline(SimpleImputer(), StandardScaler(), LogisticRegression(max_iter=500))
    counts = y.sum(axis=0)
    fittable = np.flatnonzero((counts >= 1) & (counts < len(y)))  # what a class-wise first stage fits
    sample = np.random.default_rng(0).choice(fittable, size=40, replace=False)
    t = time.perf_counter()
    slow = out_of_fold_scores(X, y[:, sample], clf, n_splits=5, progress=False)
    per = (time.perf_counter() - t) / len(sample)
    print(f"per-class logistic regression, 5 folds: {per:.3f} s per class -> "
          f"~{per * len(fittable):.0f} s for the {len(fittable)} classes with positives and negatives "
          f"({per * len(fittable) / joint:.0f}x the joint ridge)")
    t = time.perf_counter()
    fast = out_of_fold_scores(X, y, default_classwise_classifier(), n_splits=5, progress=False)
    columns = time.perf_counter() - t
    diff = np.abs(fast[:, sample] - slow)
    print(f"class-wise default (LogisticColumns, all {y.shape[1]} classes in one call), 5 folds: "
          f"{columns:.1f} s, {per * len(fittable) / columns:.0f}x faster than per-class logistic regression "
          f"extrapolated from the sample; its log-odds differ from theirs on the sample by "
          f"median {np.median(diff):.2g}, max {diff.max():.2g} (LogisticRegression stops at tol=1e-4, "
          f"LogisticColumns at a gradient of 1e-8 C n)")


if __name__ == "__main__":
    default = HMC_DATA
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else default)
