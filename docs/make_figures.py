"""Make the figures in docs/img/ (run from anywhere: python docs/make_figures.py [FOLDER]).

Data: the paper's synthetic benchmark (25 classes in three trees), drawn with a
fixed seed at a reduced size (8,000 training and 4,000 test objects) so the
script runs in well under a minute. The figures:

- hierarchy_mlpr.png  the 25-class forest coloured by one test object's mLPRs
- hit_curves.png      hit curves and PR curves of four methods on the test half
- lpr_curve.png       the fitted LPR of an inverted class over its score histogram
- reliability.png     reliability diagram of the full mLPRs on the test half
"""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from hmcpgm import MLPR, hier_rank, make_paper_synthetic, naive_sort  # noqa: E402
from hmcpgm.plot import plot_hierarchy, plot_hit_curves, plot_lpr, plot_pr_curves, plot_reliability  # noqa: E402

OUT = Path(__file__).resolve().parent / "img"
DPI = 110


def main(out=OUT):
    out = Path(out)
    out.mkdir(exist_ok=True)
    data = make_paper_synthetic(n_train=8_000, n_test=4_000, seed=0)
    h = data.hierarchy
    scores_valid, labels_valid, scores_test, labels_test = data.split_test()
    paper = dict(hierarchy=h, score_model="lpr", tempering=None, recalibrate=False)  # the paper's fixed model
    model = MLPR(version="full", **paper).fit(data.train_scores, data.train_labels)
    mlpr_full = model.predict_proba(scores_test)
    mlpr_indpt = MLPR(version="indpt", **paper).fit(data.train_scores, data.train_labels).predict_proba(scores_test)

    # the first test object with at least 8 positive classes, on the hierarchy
    m = int(np.flatnonzero(labels_test.sum(axis=1) >= 8)[0])
    ax = plot_hierarchy(h, mlpr_full[m], marked=labels_test[m],
                        title=f"Paper forest, test object {m}: mLPR (red ring: true label 1)")
    _save(ax, out / "hierarchy_mlpr.png")

    curves = {
        "Raw scores, NaiveSort": (naive_sort(scores_test, h), labels_test),
        "mLPR-indpt, NaiveSort": (naive_sort(mlpr_indpt, h), labels_test),
        "mLPR-indpt, HierRank": (hier_rank(mlpr_indpt, h), labels_test),
        "mLPR-full, HierRank": (hier_rank(mlpr_full, h), labels_test),
    }
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.3), layout="constrained")
    plot_hit_curves(curves, ax=axes[0], max_rank=labels_test.size // 2,
                    title=f"Hit curves (top half of {labels_test.size:,} test events)")
    plot_pr_curves(curves, ax=axes[1])
    _save(axes[0], out / "hit_curves.png")

    inverted = int(np.flatnonzero(data.eta == 5.5)[0])
    ax = plot_lpr(scores_test, labels_test, model, inverted,
                  title=f"Class {h.classes[inverted]} (inverted: positives score lower)")
    _save(ax, out / "lpr_curve.png")

    ax = plot_reliability(mlpr_full, labels_test, n_bins=10, label="mLPR-full (test events)")
    _save(ax, out / "reliability.png")


def _save(ax, path):
    ax.figure.savefig(path, dpi=DPI)
    plt.close(ax.figure)
    print("wrote", path)


if __name__ == "__main__":
    import sys

    main(*sys.argv[1:2])
