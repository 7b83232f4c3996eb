"""The benchmark's mLPR-indpt before and after it became the estimator's indpt (issue 24).

Before, ``paper_mlprs`` took the score model's LPR (``model.lpr``) for indpt while
``MLPR(version="indpt")`` computes ``tempered_lpr`` of the likelihoods at the
training prevalence (the same LPR through likelihood ratios, up to rounding);
now both run :class:`hmcpgm.second_stage.SecondStage`. On cellcycle_FUN and
cellcycle_GO's cached out-of-fold joint scores (``<cache-dir>/<name>.joint.npz``,
made by the benchmark's first stage when absent: ``version_transfer.load_run``)
this fits the paper's model, computes both matrices on the validation and test rows, and prints their largest difference
and every benchmark metric (``evaluate_methods``) that differs between them.

Usage (from the repository root)::

    python bench/indpt_unified.py [--cache-dir /work/cache]
"""

import argparse
import json
import warnings
from pathlib import Path

import numpy as np
from version_transfer import CACHE, DATA, load_run  # bench/ is on sys.path when a script runs


def main():
    from hmcpgm import MLPR
    from hmcpgm.applications import evaluate_methods, paper_mlprs

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache-dir", type=Path, default=CACHE, help="cached first-stage scores (made if absent)")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    for name in ("cellcycle_FUN", "cellcycle_GO"):
        z, h = load_run(name, "joint", args.cache_dir, DATA)  # the first stage's scores, made once
        model = MLPR(hierarchy=h, version="full", score_model="lpr", tempering=None, recalibrate=False,
                     allow_empty=True).fit(z["s_train"], z["y_train"])
        before = tuple(model.lpr(s) for s in (z["s_valid"], z["s_test"]))
        after = paper_mlprs(model, "indpt", (z["s_valid"], z["s_test"]))
        evaluated = [c for c, e in zip(h.classes, z["evaluated"]) if e]
        options = dict(classes=evaluated, kappas=(0.01, 0.05), bayes_alphas=(0.05, 0.1, 0.2), auprc=True,
                       recalls=(0.1, 0.2), fdr_alphas=(0.1,))
        a = evaluate_methods({"mLPR-indpt": before}, h, z["y_valid"], z["y_test"], **options)
        b = evaluate_methods({"mLPR-indpt": after}, h, z["y_valid"], z["y_test"], **options)
        differ = {m: {k: [a[m][k], b[m][k]] for k in a[m] if a[m][k] != b[m][k]} for m in a}
        print(name, "largest |after - before|:", float(max(np.abs(x - y).max() for x, y in zip(before, after))))
        print("  metrics that differ [before, after]:", json.dumps(differ))


if __name__ == "__main__":
    main()
