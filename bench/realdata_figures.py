"""Figures of the real-data study: estimated against realised FDR, and reliability on test rows.

Reads the JSON that ``python bench/realdata_study.py table`` writes (default
``bench/out/realdata_one_log_loss_auto.json``) and saves

* ``docs/img/fdr_real.png``: for each data set and first stage, the Bayesian
  estimate of the false discovery rate of the top r events of the auto second
  stage's HierRank ranking (mean of 1 - mLPR over them, before and after the
  shared recalibration map) against the false discovery proportion realised on
  the test labels; an honest estimate lies on the diagonal;
* ``docs/img/reliability_real.png``: mean predicted probability against the
  observed rate of positives on the test rows, by bin, pooled over data sets
  per first stage, before and after recalibration (the bins of
  ``hmcpgm.plot.reliability_table``; JSON files written before it replaced
  ``hmcpgm.calibration.reliability_table`` are read too).

Usage (from the repository root)::

    python bench/realdata_figures.py [bench/out/realdata_one_log_loss_auto.json]
"""

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ROOT / "bench" / "out" / "realdata_one_log_loss_auto.json"
IMG = ROOT / "docs" / "img"


def _reliability_bins(t):
    """(n_bins, bin index, events, mean predicted, observed rate) of one reliability table from the JSON."""
    if "bin" in t:  # hmcpgm.plot.reliability_table: non-empty bins only, with their indices
        n_bins = int(t.get("n_bins", 10))
        return (n_bins, np.asarray(t["bin"], int), np.asarray(t["counts"], float),
                np.asarray(t["mean_predicted"], float), np.asarray(t["observed_rate"], float))
    # older JSON (hmcpgm.calibration.reliability_table): ten bins [lo, hi) with lo, events, mean_p, observed
    b = np.minimum((np.asarray(t["lo"]) * 10).round().astype(int), 9)
    return 10, b, np.asarray(t["events"], float), np.asarray(t["mean_p"], float), np.asarray(t["observed"], float)


def main(path=DEFAULT):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    data = json.loads(Path(path).read_text())
    results = [r for r in data["results"] if "curves" in r]
    names = list(dict.fromkeys(r["dataset"] for r in results))
    stages = list(dict.fromkeys(r["first_stage"] for r in results))
    fig, axes = plt.subplots(len(stages), len(names), figsize=(2.3 * len(names), 2.5 * len(stages)),
                             squeeze=False, sharex=True, sharey=True)
    for r in results:
        ax = axes[stages.index(r["first_stage"]), names.index(r["dataset"])]
        c = r["curves"]
        ax.plot(c["realised"], c["estimated_raw"], color="tab:red", lw=1.2, label="mLPR as is")
        ax.plot(c["realised"], c["estimated"], color="tab:blue", lw=1.5, label="recalibrated")
        ax.plot([0, 0.6], [0, 0.6], color="0.6", lw=0.8, ls="--")
        ax.set_xlim(0, 0.6)
        ax.set_ylim(0, 0.6)
        ax.set_title(f"{r['dataset']}\n{r['first_stage']}, {r['chosen']}", fontsize=8)
        ax.tick_params(labelsize=7)
    for ax in axes[-1]:
        ax.set_xlabel("realised FDP (test)", fontsize=8)
    for ax in axes[:, 0]:
        ax.set_ylabel("estimated FDR", fontsize=8)
    axes[0, 0].legend(fontsize=7, loc="upper left")
    fig.suptitle("Bayesian FDR estimate of each prefix of the auto second stage's HierRank ranking "
                 "against the realised FDP on the test rows", fontsize=9)
    fig.tight_layout()
    IMG.mkdir(parents=True, exist_ok=True)
    fig.savefig(IMG / "fdr_real.png", dpi=130)
    plt.close(fig)

    fig, axes = plt.subplots(1, len(stages), figsize=(4 * len(stages), 3.6), squeeze=False)
    for j, stage in enumerate(stages):
        ax = axes[0, j]
        for key, color, label in (("test_raw", "tab:red", "mLPR as is"), ("test", "tab:blue", "recalibrated")):
            tables = [_reliability_bins(r["reliability"][key]) for r in results if r["first_stage"] == stage]
            n_bins = max(t[0] for t in tables)
            events = np.zeros(n_bins)
            mean_p = np.zeros(n_bins)
            observed = np.zeros(n_bins)
            for _, b, n, mp, obs in tables:
                np.add.at(events, b, n)
                np.add.at(mean_p, b, n * mp)
                np.add.at(observed, b, n * obs)
            ok = events > 0
            ax.plot(mean_p[ok] / events[ok], observed[ok] / events[ok], "o-", color=color, label=label, ms=4)
        ax.plot([0, 1], [0, 1], color="0.6", lw=0.8, ls="--")
        ax.set_title(f"{stage} first stage, all data sets pooled", fontsize=9)
        ax.set_xlabel("mean predicted probability (bin)", fontsize=8)
        ax.set_ylabel("observed rate of positives", fontsize=8)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(IMG / "reliability_real.png", dpi=130)
    plt.close(fig)
    print(f"wrote {IMG / 'fdr_real.png'} and {IMG / 'reliability_real.png'}")


if __name__ == "__main__":
    main(*sys.argv[1:])
